"""`c:PATH:SYMBOL` targets: a kernel in a shared library, called through ctypes.

The symbol has this C signature:

    void SYMBOL(const T *x, T *y, size_t n, const float *attrs);

T is `float` for float32, `double` for float64, and `uint16_t` holding the
bits of float16 and bfloat16 (other dtypes are skipped with that reason).
`attrs` holds the operator's attributes as binary32 values in the catalog's
declared order (`opcert ops OP` lists it; a choice attribute such as Gelu's
`approximate` is its index in the list of choices), or NULL when the operator
has none. The kernel writes y[0..n-1] and must not keep the pointers; it is
also called with x == y (in place), with x and y at every offset from a 64-byte
boundary, and with every n from 1 up (verify.paths.layout: every path of the kernel).

The tensor operators' kernels have their own signature (`CTensorTarget`):

    void SYMBOL(const T *x, T *y, const int64_t *sizes, size_t rank,
                const uint32_t *axes, size_t axis_count, const float *attrs);

x and y are contiguous, row-major, of `rank` dimensions of `sizes` (a reduction's y, ReduceLogSumExp's: the same
rank, each reduced axis of size 1, one value per row); `axes` lists the reduced axes
(ascending, distinct, non-negative: the rows the check's standard makes, its axis rule applied already;
GroupNormalization's are 1 to rank - 1, its rows each sample's groups of consecutive channels, attrs[1] groups);
`attrs` holds the operator's attributes in its declaration's order as binary32 values (LayerNormalization's
epsilon; a choice named by a number as that number: LpNormalization's p), NULL for an operator without any
(Softmax's family); T is as above.

Like every target but `opcert`, the library is loaded and called in a
supervised worker process: a kernel that dereferences NULL or aborts fails its
check with the block of inputs it was given, and opcert goes on. The
fingerprint that keys sweep checkpoints is the SHA-256 of the library's bytes.
"""

from __future__ import annotations

import ctypes
import hashlib
import os

import numpy as np

from opcert.errors import UsageError
from opcert.spec.attrs import choice_number
from opcert.targets.base import Target, TargetInfo
from opcert.targets.layouts import LayoutSupport, c_calls, c_count_calls
from opcert.targets.protocol import TensorTarget

PREFIX = "c:"
C_TYPES = {"float32": "float", "float64": "double", "float16": "uint16_t", "bfloat16": "uint16_t"}


def split(spec: str) -> tuple[str, str]:
    body = spec[len(PREFIX) :]
    path, sep, symbol = body.rpartition(":")
    if not sep or not path or not symbol.isidentifier():
        raise UsageError(
            f"target {spec!r} is not of the form c:PATH:SYMBOL (a shared library, a colon, a C "
            "function name), e.g. c:./libkernels.so:my_tanh"
        )
    return path, symbol


def digest_of(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def open_symbol(spec: str):
    """(the library's real path, the library, the function) of a c:PATH:SYMBOL target; UsageError naming what
    is missing. The element-wise ABI and the tensor one (CTensorTarget) share it."""
    path, symbol = split(spec)
    real = os.path.realpath(path)
    if not os.path.isfile(real):
        raise UsageError(f"target {spec!r}: no shared library at {path!r}")
    try:
        lib = ctypes.CDLL(real)
    except OSError as exc:
        raise UsageError(f"target {spec!r}: cannot load {path!r} as a shared library: {exc}") from None
    try:
        return real, lib, getattr(lib, symbol)
    except AttributeError:
        raise UsageError(f"target {spec!r}: {path!r} exports no symbol {symbol!r}") from None


def load(spec: str, timeout: float | None = None) -> Target:
    path, symbol = split(spec)
    real, lib, func = open_symbol(spec)
    func.restype = None
    func.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p]
    digest = digest_of(real)

    def unsupported(op, dtype, attrs):
        if dtype not in C_TYPES:
            return (
                f"the C ABI passes {', '.join(C_TYPES)} ({', '.join(sorted(set(C_TYPES.values())))}); "
                f"{dtype} has no C type here"
            )
        return None

    def call(op, x, attrs):
        x = np.ascontiguousarray(x)
        y = np.empty_like(x)
        # the catalog's declared order, whatever order the resolved dict has
        values = [float(attrs[a.name]) for a in op.attributes if a.name in attrs]
        a32 = np.array(values, dtype=np.float32) if values else None
        func(x.ctypes.data, y.ctypes.data, x.size, None if a32 is None else a32.ctypes.data)
        return y

    info = TargetInfo(spec, "c", f"sha256:{digest[:16]}", digest[:32], {"library": real, "symbol": symbol})
    tgt = Target(info, call, unsupported=unsupported, timeout=timeout)
    many = c_calls(func)
    tgt.layouts = LayoutSupport(
        views=False,
        offsets=True,
        calls=many,
        count_calls=c_count_calls(func),
        calls_in_place=True,
        concurrent=True,
        cannot={
            "strides": "the C ABI passes contiguous arrays (a strided view is copied into one before the call)",
            "threads": "a C kernel's threads are its own: the ABI has no thread count",
        },
    )
    return tgt


class CTensorTarget(TensorTarget):
    """A kernel of the tensor operators in a shared library, with the tensor signature (above)."""

    no_threads = "a C kernel's threads are its own: the ABI has no thread count"

    def __init__(self, spec: str):
        real, lib, self.fn = open_symbol(spec)
        self.fn.restype = None
        self.fn.argtypes = [
            ctypes.c_void_p,
            ctypes.c_void_p,
            ctypes.POINTER(ctypes.c_int64),
            ctypes.c_size_t,
            ctypes.POINTER(ctypes.c_uint32),
            ctypes.c_size_t,
            ctypes.c_void_p,
        ]
        self.name = spec
        self.version = f"sha256:{digest_of(real)[:16]}"
        self._keep = lib

    def unsupported(self, op, std, dtype, reduced, rank):
        if dtype not in C_TYPES:
            return f"the C ABI passes {', '.join(C_TYPES)}; {dtype} has no C type here"
        return None

    def call(self, op, std, x, reduced):
        x = np.ascontiguousarray(x)
        y = np.empty(op.output_shape(x.shape, reduced), dtype=x.dtype)
        sizes = (ctypes.c_int64 * max(1, x.ndim))(*x.shape)
        axes = (ctypes.c_uint32 * max(1, len(reduced)))(*reduced)
        # the operator's attributes in its declaration's order (LayerNormalization: epsilon), each binary32
        # exactly, a choice named by a number as that number (LpNormalization's p), another by its index; NULL
        # for an operator without any
        values, index = op.given(std), std.values()
        given = [_c_value(values[a.name], index[a.name]) for a in op.attributes if a.name in values]
        attrs = (ctypes.c_float * len(given))(*given) if given else None
        self.fn(x.ctypes.data, y.ctypes.data, sizes, x.ndim, axes, len(reduced), attrs)
        return y


def _c_value(value, index: float) -> float:
    """A binary32 value as itself; a choice as the number it names (p = "2": 2.0), another choice as its index."""
    if isinstance(value, str):
        n = choice_number(value)
        return float(n) if n is not None else index
    return value
