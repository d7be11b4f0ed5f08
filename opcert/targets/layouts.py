"""How a target can be given the layouts users give it (verify.paths.layout checks them).

A kernel has more code paths than its vector body: the remainder of the vector
loop, a path for short calls, a loop that peels elements up to an aligned
address, strided loops, per-thread chunks. Which of them a caller can reach
depends on the target: a NumPy callable or torch gets any strided view as it
is; ONNX Runtime's Python API copies a non-contiguous input into a contiguous
buffer (the kernel never sees strides) but reads a contiguous one where it
lies; a C kernel gets whatever pointers its caller passes. `LayoutSupport`
says, per target, which layouts reach its kernel, how to give them, and why
the others cannot be given: the layout verdict states what it covered.

`calls` runs many calls of one length in one request (compiled code for C, a
graph of independent nodes for ONNX Runtime): every input at every position of
every short call costs 65,536 x 129 calls for a 16-bit format, which Python
cannot make one by one.
"""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np


@dataclass
class LayoutSupport:
    views: bool = False  # strided, transposed and N-d arrays reach the kernel as they are
    rows: bool = False  # each row of a strided 2-D view runs the kernel's inner loop at the row's length
    rows_are_calls: bool = False  # ... the same code a call of that length runs (no branch on the call's size)
    offsets: bool = False  # the kernel reads the caller's buffer where it lies (alignment reaches it)
    calls: Callable | None = None  # calls(op, X (m, n) rows, attrs, offset_bytes, in_place) -> Y: m calls of n
    # count_calls(op, values, base, m, n, attrs, offset_bytes, in_place, nan_bits) -> the number of outputs that
    # differ from base: the calls of `calls` over the m windows values[r:r + n], each compared as it is made (the
    # layout check's common case, nothing differing, without its arrays of 10^8 elements: verify.paths.layout)
    count_calls: Callable | None = None
    threads: Callable | None = None  # threads(n): a context in which the target runs on n threads
    in_place: Callable | None = None  # in_place(op, x, attrs) -> y: the kernel writing over its input
    in_place_for: Callable | None = None  # (op, attrs) -> whether the in-place form exists for this operator
    calls_in_place: bool = False  # calls(..., in_place=True) gives the kernel x == y
    concurrent: bool = False  # the call may be made from other threads, and from several at once
    compiles_per_shape: bool = False  # a call of a new shape runs code compiled for it (XLA): one-element calls
    cannot: dict = field(default_factory=dict)  # layout family -> why it cannot be given to this target


PYTHON = dict(
    views=True,
    rows=True,
    rows_are_calls=False,
    offsets=True,
    concurrent=True,
    cannot={
        "threads": "a callable's threads are its own: opcert has no switch for them",
        "in place": "a callable has no in-place form opcert can call",
    },
)


def copy_with_layout(x: np.ndarray) -> np.ndarray:
    """A fresh copy of x with x's shape, strides and address modulo 64 (the kernel meets the same
    alignment and the same strides; the caller's array is never handed out). Non-negative strides."""
    if x.size == 0 or x.ndim == 0:
        return np.array(x, copy=True)
    if any(s < 0 for s in x.strides):
        return np.array(x, copy=True)
    span = sum((d - 1) * s for d, s in zip(x.shape, x.strides)) + x.itemsize
    misalign = x.ctypes.data % 64
    raw = np.empty(span + misalign + 64, dtype=np.uint8)
    start = (-raw.ctypes.data) % 64 + misalign
    out = np.ndarray(x.shape, dtype=x.dtype, buffer=raw, offset=start, strides=x.strides)
    out[...] = x
    return out


def aligned_empty(nbytes: int, offset: int = 0) -> tuple[np.ndarray, int]:
    """(a byte buffer, the index in it of an address that is `offset` bytes past a 64-byte boundary)."""
    raw = np.empty(nbytes + offset + 64, dtype=np.uint8)
    return raw, (-raw.ctypes.data) % 64 + offset


def row_buffer(m: int, n: int, dtype, row_stride: int, offset: int = 0) -> np.ndarray:
    """An (m, n) view of a fresh buffer: rows `row_stride` elements apart, the first at `offset` bytes past a
    64-byte boundary."""
    dt = np.dtype(dtype)
    raw, start = aligned_empty(((m - 1) * row_stride + n) * dt.itemsize, offset)
    return np.ndarray((m, n), dtype=dt, buffer=raw, offset=start, strides=(row_stride * dt.itemsize, dt.itemsize))


# ---- C kernels: many calls from compiled code ------------------------------------------


def c_calls(func) -> Callable:
    """calls() for a C kernel `void f(const T *x, T *y, size_t n, const float *attrs)`: the calls are made by a
    compiled loop (numba), not by Python (what a call costs: bench/README.md, 'Figures behind choices in the code')."""

    def calls(op, X, attrs, offset: int = 0, in_place: bool = False):
        m, n = X.shape
        itemsize = X.dtype.itemsize
        stride = padded_stride(n, itemsize)
        xin = row_buffer(m, n, X.dtype, stride, offset)
        xin[...] = X
        y = xin if in_place else row_buffer(m, n, X.dtype, stride, offset)
        a32, ap = _attrs32(op, attrs)
        _loop()(func, xin.ctypes.data, y.ctypes.data, m, n, stride * itemsize, ap)
        return np.array(y, copy=True)

    return calls


def c_count_calls(func) -> Callable:
    """count_calls() for a C kernel: the calls c_calls makes over the windows of `values` (row r: values[r],
    ..., values[r + n - 1]), one at a time through one buffer at the same alignment (and x == y in place),
    each output compared with base[r:r + n] as it is made, any NaN equal to any NaN (formats.bits_differ's
    rule: magnitude masks the sign off, a NaN's magnitude is above inf)."""

    def count(op, values, base, m, n, attrs, offset: int = 0, in_place: bool = False, nan_bits=(0, 0)):
        uint = np.dtype(f"uint{8 * values.dtype.itemsize}")
        src, want = np.ascontiguousarray(values).view(uint), np.ascontiguousarray(base).view(uint)
        stride = padded_stride(n, uint.itemsize)
        xb = row_buffer(1, n, uint, stride, offset)[0]
        yb = xb if in_place else row_buffer(1, n, uint, stride, offset)[0]
        a32, ap = _attrs32(op, attrs)
        magnitude, inf = (uint.type(v) for v in nan_bits)
        return int(
            _counting()(
                func,
                src,
                want,
                m,
                n,
                xb,
                yb,
                xb.ctypes.data,
                yb.ctypes.data,
                ap,
                magnitude,
                inf,
            )
        )

    return count


def _attrs32(op, attrs) -> tuple:
    """The operator's attributes in its declaration's order as binary32 (the array, kept alive by the caller
    through the call), and the pointer the kernel gets: NULL where it has none."""
    values = [float(attrs[a.name]) for a in op.attributes if a.name in attrs]
    a32 = np.array(values, dtype=np.float32)
    return a32, a32.ctypes.data if values else 0


def _count(f, src, want, m, n, xb, yb, xp, yp, a, magnitude, inf):
    bad = 0
    for r in range(m):
        for c in range(n):
            xb[c] = src[r + c]
        f(xp, yp, n, a)
        for c in range(n):
            g, b = yb[c], want[r + c]
            bad += (g != b) & ~(((g & magnitude) > inf) & ((b & magnitude) > inf))
    return bad


@functools.cache
def _counting():
    import numba

    return numba.njit(nogil=True, cache=True)(_count)


def padded_stride(n: int, itemsize: int) -> int:
    """A row stride (elements) of whole 64-byte lines with room for n elements: each row starts where the
    first did, so a row's offset is the call's."""
    per_line = 64 // itemsize
    return -(-(n + per_line) // per_line) * per_line


def _many(f, xp, yp, m, n, stride_b, a):
    for r in range(m):
        f(xp + r * stride_b, yp + r * stride_b, n, a)
    return 0


@functools.cache
def _loop():
    import numba  # at the first layout check of a C kernel: importing opcert does not import numba

    # cached on disk: every C kernel of one signature shares it (the function pointer is an argument); it
    # inlines nothing of opcert's, and where opcert.jit is loaded (a measurement) it is keyed by opcert's code
    return numba.njit(nogil=True, cache=True)(_many)


def cores() -> int:
    """The cores this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


class ThreadCount:
    """A tensor side whose runtime objects (sessions, compiled models) are made per thread count: `n_threads`
    is part of their key; threads(n) sets it for the calls inside."""

    n_threads = None  # None: the target's default

    @contextlib.contextmanager
    def threads(self, n: int):
        before, self.n_threads = self.n_threads, int(n)
        try:
            yield
        finally:
            self.n_threads = before
