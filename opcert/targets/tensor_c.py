"""`c:PATH:SYMBOL` targets of the tensor operators: a kernel in a shared library with the tensor signature

    void SYMBOL(const T *x, T *y, const int64_t *sizes, size_t rank,
                const uint32_t *axes, size_t axis_count, const float *attrs);

x and y are contiguous, row-major, of `rank` dimensions of `sizes`; `axes` lists the reduced axes
(ascending, distinct, non-negative: the rows the check's standard makes, its axis rule applied already);
`attrs` is NULL (the tensor operators have none). T is as in the element-wise ABI (targets.c_abi): float,
double, or uint16_t holding float16 and bfloat16 bits. The library runs in the measurement's supervised
worker: a crash fails the check with what it was doing, never opcert.
"""
from __future__ import annotations

import ctypes

import numpy as np

from opcert.targets.c_abi import C_TYPES, digest_of, open_symbol


class CTensor:
    """A tensor target (targets.tensor's protocol: name, version, unsupported, call, threads)."""
    no_threads = "a C kernel's threads are its own: the ABI has no thread count"

    def __init__(self, spec: str):
        real, lib, self.fn = open_symbol(spec)
        self.fn.restype = None
        self.fn.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.POINTER(ctypes.c_int64), ctypes.c_size_t,
                            ctypes.POINTER(ctypes.c_uint32), ctypes.c_size_t, ctypes.c_void_p]
        self.name = spec
        self.version = f"sha256:{digest_of(real)[:16]}"
        self._keep = lib

    def unsupported(self, op, std, dtype, reduced, rank):
        if dtype not in C_TYPES:
            return f"the C ABI passes {', '.join(C_TYPES)}; {dtype} has no C type here"
        return None

    def threads(self, n: int):
        return None

    def call(self, op, std, x, reduced):
        x = np.ascontiguousarray(x)
        y = np.empty_like(x)
        sizes = (ctypes.c_int64 * max(1, x.ndim))(*x.shape)
        axes = (ctypes.c_uint32 * max(1, len(reduced)))(*reduced)
        self.fn(x.ctypes.data, y.ctypes.data, sizes, x.ndim, axes, len(reduced), None)
        return y
