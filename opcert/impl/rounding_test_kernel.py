"""impl.rounding_test's passes as compiled loops (imported for calls of rounding_test.MIN_COMPILED elements or
more)."""

from __future__ import annotations

import numpy as np

from opcert.jit import numba

_MANT = (1 << 52) - 1
_ABS = 0x7FFFFFFFFFFFFFFF


@numba.njit(cache=True, nogil=True, inline="always")
def _near(bits, p, emin, near_bits):
    b = bits & _ABS
    biased = b >> 52
    mant = (b & _MANT) | (1 << 52)
    s = min(53 - p + max(emin - (biased - 1023), 0), 62)
    one = np.int64(1)
    return (
        (biased > 0) & (biased < 2047) & (abs((mant & ((one << s) - 1)) - (one << (s - 1))) <= (one << (s - near_bits)))
    )


@numba.njit(cache=True, nogil=True)
def count(bits, p, emin, near_bits):
    """How many of the binary64 values whose bits are `bits` (int64) are near a midpoint of the format."""
    n = 0
    for i in range(bits.size):
        n += _near(bits[i], p, emin, near_bits)
    return n


@numba.njit(cache=True, nogil=True)
def where(bits, p, emin, near_bits, out):
    """Their indices, into out (as long as count's answer)."""
    k = 0
    for i in range(bits.size):
        if _near(bits[i], p, emin, near_bits):
            out[k] = i
            k += 1
    return k


@numba.njit(cache=True, nogil=True)
def to_float32(y, out, near_bits):
    """out = y rounded to binary32 (the CPU's conversion: nearest even), counting as count does, in one pass."""
    bits = y.view(np.int64)
    n = 0
    for i in range(y.size):
        out[i] = np.float32(y[i])
        n += _near(bits[i], 24, -126, near_bits)
    return n
