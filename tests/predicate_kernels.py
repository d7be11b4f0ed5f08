"""Python kernels of the predicate operators with known faults (tests/test_predicates.py): each refuted with the
input that shows it. Each is a target `predicate_kernels:NAME` (tests/ is on the path)."""

import numpy as np


def isnan_true_for_infinities(x):
    """Not finite: True at +-inf too."""
    with np.errstate(invalid="ignore"):
        return ~np.isfinite(x)


def isnan_quiet_only(x):
    """The exponent field all ones and the quiet bit set: every signalling NaN missed."""
    bits, exp, quiet = {2: (np.uint16, 0x7C00, 0x0200), 4: (np.uint32, 0x7F800000, 0x00400000),
                        8: (np.uint64, 0x7FF0000000000000, 0x0008000000000000)}[x.dtype.itemsize]  # fmt: skip
    if x.dtype.name == "bfloat16":
        exp, quiet = 0x7F80, 0x0040
    u = x.view(bits)
    return ((u & bits(exp)) == bits(exp)) & ((u & bits(quiet)) != 0)


def isnan_as_uint8(x):
    """The right truth values as uint8 0/1, where ONNX's output is tensor(bool)."""
    with np.errstate(invalid="ignore"):
        return np.isnan(x).astype(np.uint8)


def isnan_as_twos(x):
    """2 for a NaN: no truth value at all."""
    with np.errstate(invalid="ignore"):
        return np.isnan(x).astype(np.uint8) * np.uint8(2)


def isinf_ignores_detect_negative(x, detect_positive=1, detect_negative=1):
    """detect_negative is taken and ignored: -inf is True whenever +inf is."""
    with np.errstate(invalid="ignore"):
        return np.isinf(x) if detect_positive else np.zeros(x.shape, bool)


def isinf_through_float16(x):
    """isinf of the input cast to float16: True for every finite value from 65520 up."""
    with np.errstate(invalid="ignore", over="ignore"):
        return np.isinf(x.astype(np.float16))


def isnan_column_major(x):
    """Reads the input in column-major order: right for 1-D inputs, transposed for 2-D ones."""
    with np.errstate(invalid="ignore"):
        return np.isnan(x.ravel(order="F")).reshape(x.shape, order="C")


def isnan_contiguous_only(x):
    """Refuses views: raises on a strided input."""
    if not x.flags.c_contiguous:
        raise ValueError("isnan_contiguous_only takes contiguous arrays only")
    with np.errstate(invalid="ignore"):
        return np.isnan(x)


def isnan_raises(x):
    raise RuntimeError("isnan_raises always raises")


def isnan_one_short(x):
    """One output too few."""
    with np.errstate(invalid="ignore"):
        return np.isnan(x).reshape(-1)[:-1]
