"""Deliberately wrong implementations, for `--target bad_targets:NAME`."""

import numpy as np


def tanh_nan_is_one(x):
    y = np.tanh(x)
    y[np.isnan(x)] = 1
    return y


def shrink_ge(x, bias=0.0, lambd=0.5):
    # >= instead of > at the threshold: wrong exactly at x = +-lambd.
    return np.where(x <= -lambd, x + bias, np.where(x >= lambd, x - bias, 0)).astype(x.dtype)


def crashes(x, **attrs):
    raise RuntimeError("kernel exploded")


def wrong_dtype(x, **attrs):
    return np.tanh(x.astype(np.float64))


def wrong_shape(x, **attrs):
    return np.tanh(x)[:-1]


def exact_tanh(x):
    """The exact reference itself, per input (no fast path): a perfect Tanh. Each distinct value once: the
    layout check's long calls repeat a few hundred values a million times."""
    import opcert
    from opcert.spec.attrs import resolve
    from opcert.spec.reference import reference_detailed

    bits = np.ascontiguousarray(x).reshape(-1).view(f"uint{8 * x.itemsize}")
    uniq, inverse = np.unique(bits, return_inverse=True)
    y = reference_detailed("Tanh", uniq.view(x.dtype), resolve(opcert.get_operator("Tanh")), exact_bits=64).rounded
    return np.asarray(y)[inverse].reshape(x.shape)


def exact_tanh_plus_one(x):
    """The exact reference moved one representable value up (NaN and inf kept)."""
    y = exact_tanh(x)
    finite = np.isfinite(y)
    y[finite] = np.nextafter(y[finite], np.float32(np.inf))
    return y


def negated(x, **attrs):
    """-x for any operator: wrong almost everywhere."""
    return -x


def flush_tiny(x, **attrs):
    """tanh with subnormal outputs flushed to zero, and -0 returned as +0."""
    y = np.tanh(x)
    tiny = np.abs(y.astype(np.float64)) < _finfo(x.dtype).tiny
    y[tiny] = 0
    return y


def negated_inf(x, **attrs):
    """+inf for every input."""
    return np.full_like(x, np.inf)


def tanh_off_in_blocks(x):
    """Correct for small arrays, one value off (upwards) for large ones."""
    y = np.tanh(x)
    if x.size > 1000:
        finite = np.isfinite(y) & (y != 0)
        y[finite] = np.nextafter(y[finite], np.float32(np.inf))
    return y


# ---- kernels that try to end, crash or fool opcert (tests/test_wrong_kernels.py) ----


def exits_0(x, **attrs):
    import sys

    sys.exit(0)


def raises_systemexit(x, **attrs):
    raise SystemExit


def os_exit_0(x, **attrs):
    import os

    os._exit(0)


def segfault(x, **attrs):
    import ctypes

    ctypes.string_at(0)  # reads address 0: SIGSEGV
    return x


def hangs(x, **attrs):
    import time

    time.sleep(3600)
    return x


def zeroes_its_input(x, **attrs):
    """Writes zeros into its input and returns them: measured on what it was given, it is wrong."""
    x[...] = 0
    return x


def tanh_in_place(x):
    """np.tanh(x, out=x): correctly rounded in float16, and works in place."""
    return np.tanh(x, out=x)


def tanh_out_of_range(x):
    """tanh, but one input maps outside [-1, 1] (0x3c00 = 1.0 -> -1.0009765625)."""
    y = np.tanh(x)
    if x.dtype == np.float16:
        y[x.view(np.uint16) == 0x3C00] = np.float16(-1.0009765625)
    return y


def tanh_not_monotone(x):
    """Within 3 ULP of tanh, but one value steps backwards: tanh(0.5) one ULP up, tanh of its successor 2 down."""
    y = np.tanh(x)
    if x.dtype == np.float16:
        b = x.view(np.uint16)
        y[b == 0x3800] = np.nextafter(y[b == 0x3800], np.float16(2))
        nxt = b == 0x3801
        y[nxt] = np.nextafter(np.nextafter(y[nxt], np.float16(-2)), np.float16(-2))
    return y


def hard_sigmoid_no_upper_clamp(x, alpha=0.2, beta=0.5):
    """Forgets min(., 1): wrong from x = 2.5 up, and +inf at +inf."""
    a, b = x.dtype.type(alpha), x.dtype.type(beta)
    with np.errstate(all="ignore"):
        return np.maximum(a * x.astype(np.float64) + b, 0).astype(x.dtype)


def wrong_at_inf(x, **attrs):
    y = np.tanh(x)
    y[np.isinf(x)] = 0
    return y


def wrong_at_negative_zero(x, **attrs):
    y = np.tanh(x)
    y[(x == 0) & np.signbit(x)] = x.dtype.type(0.0)
    return y


def round_unsigned_zeros(x, **attrs):
    """np.round, but every zero it gives is +0 (Round(-0.3) is -0) and 0.25's neighbours above round to 1:
    wrong zero signs and wrong values among exact zeros."""
    y = np.round(x)
    y[y == 0] = x.dtype.type(0.0)
    b = np.abs(x).view(np.uint32 if x.dtype == np.float32 else np.uint16)
    y[(b > np.float32(0.25).view(np.uint32)) & (b < np.float32(0.25).view(np.uint32) + 64)] = x.dtype.type(1.0)
    return y


def wrong_at_subnormals(x, **attrs):
    y = np.tanh(x)
    tiny = (x != 0) & (np.abs(x.astype(np.float64)) < _finfo(x.dtype).tiny)
    y[tiny] = -y[tiny]
    return y


def wrong_at_nan(x, **attrs):
    y = np.tanh(x)
    y[np.isnan(x)] = np.inf
    return y


def wrong_at_largest(x, **attrs):
    y = np.tanh(x)
    big = np.abs(x.astype(np.float64)) == float(_finfo(x.dtype).max)
    y[big] = np.nan
    return y


def returns_list(x, **attrs):
    return [0.0] * x.size


def returns_nan_payloads(x, **attrs):
    y = np.asarray(np.tanh(x))  # a 0-d input gives a NumPy scalar, which has no items to assign
    bits = y.view(np.uint16) if y.dtype == np.float16 else None
    if bits is not None:
        bits[np.isnan(x)] = 0xFE01  # a negative NaN with another payload: still NaN
    return y


def flush_and_flip(x):
    """float16 tanh with subnormal outputs flushed, and -0 returned as +0."""
    y = np.tanh(x)
    y[np.abs(y.astype(np.float64)) < 6.2e-5] = 0
    return y


def tanh_step_back_at_chunk_edge(x):
    """float32 tanh that steps backwards across the magnitude 0x3f008000 (a chunk edge in the tests)."""
    y = np.tanh(x)
    if x.dtype == np.float32:
        b = x.view(np.uint32)
        y[b == 0x3F007FFF] = np.float32(0.47)
    return y


def tanh_not_odd_at_one_point(x):
    y = np.tanh(x)
    if x.dtype == np.float32:
        b = x.view(np.uint32)
        y[b == (0x3F004000 | 0x80000000)] = np.nextafter(y[b == (0x3F004000 | 0x80000000)], np.float32(-1))
    return y


def opcert_tanh(x):
    """opcert's own implementation, as a black box."""
    import opcert

    return opcert.run("Tanh", x)


def _finfo(dtype):
    import ml_dtypes

    return ml_dtypes.finfo(dtype)


_ELU_TABLES: dict = {}  # 16-bit dtype -> elu_ignores_alpha's output at every bit pattern


def elu_ignores_alpha(x, alpha=1.0):
    """Elu that always uses alpha = 1: right at the default, wrong at every other alpha. A 16-bit input is
    looked up in a table of the formula's outputs at every bit pattern (the same outputs, bit for bit): an
    attribute sweep's layout checks give it tens of millions of elements per set, on which computing the
    formula was much of the sweep's work."""
    if x.itemsize != 2:
        return _elu_alpha_one(x)
    table = _ELU_TABLES.get(x.dtype)
    if table is None:
        table = _ELU_TABLES[x.dtype] = _elu_alpha_one(np.arange(1 << 16, dtype=np.uint16).view(x.dtype))
    return table[x.view(np.uint16).reshape(-1)].reshape(x.shape)


def _elu_alpha_one(x):
    with np.errstate(all="ignore"):
        y = np.where(x > 0, x.astype(np.float64), np.expm1(x.astype(np.float64)))
    return y.astype(x.dtype)


def relu_max_to_inf(x, **attrs):
    """Relu that overflows at the largest finite value (65504 in float16) to +inf."""
    y = np.maximum(x, 0).astype(x.dtype)
    y[y == np.finfo(x.dtype).max] = np.inf
    return y
