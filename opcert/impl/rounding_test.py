"""The rounding test of opcert's narrow results: binary64 values too near a midpoint of the narrow format.

opcert's implementation computes in binary64 and rounds once into float16, bfloat16 or float32. Rounding the
binary64 value y is rounding the exact value v wherever no midpoint of the narrow format lies between them. The
platform's functions keep |y - v| within a few binary64 ULPs (expr.primitives' contracts: 4 for libm's), far
below NEAR = 2^-22 of the narrow format's ULP (2^7 binary64 ULPs in float32), so where y is farther than that
from every midpoint, rounding y is correctly rounding v. Where it is nearer (a few inputs in 10^6, and every
binary64 value exactly on a midpoint: sin(9830.3984375) in float32, which rounded by ties-to-even was
0.5000000007 ULP off), impl.run takes the exact value's rounding, as a correctly rounded float32 library takes its
accurate path when its rounding test fails.

The properties proved of the code hold for these results too: each is one of the two neighbours of y, on the side
the exact value lies, so an increasing (odd, even, bounded) function keeps its order (symmetry, bounds between
representable values) as the rounding to nearest it replaces; and opcert's float16, bfloat16 and float32 results
are checked on every input by enumeration.

In bits: y (finite, nonzero) of exponent e has s bits of its 53-bit significand below the narrow quantum,
s = 53 - p + max(emin - e, 0); it is near a midpoint when those bits are within 2^(s - 22) of 2^(s - 1). Every
binary64 subnormal is far below half of every narrow format's smallest subnormal."""

from __future__ import annotations

import numpy as np

NEAR_BITS = 22  # the test's width: 2^-NEAR_BITS of the narrow format's ULP
MIN_COMPILED = 1 << 12  # impl.run's MIN_SIZE: below it NumPy's passes, and no numba import
_MANT = (1 << 52) - 1


def near_mask(y: np.ndarray, p: int, emin: int) -> np.ndarray:
    """The elements of the binary64 array y within 2^-NEAR_BITS narrow ULP of a midpoint of the format (p, emin)
    (NumPy: small arrays)."""
    b = np.ascontiguousarray(y, dtype=np.float64).view(np.int64) & 0x7FFFFFFFFFFFFFFF
    biased = b >> 52
    mant = (b & _MANT) | (1 << 52)
    s = np.minimum(53 - p + np.maximum(emin - (biased - 1023), 0), 62)
    low = mant & ((np.int64(1) << s) - 1)
    return (biased > 0) & (biased < 2047) & (np.abs(low - (np.int64(1) << (s - 1))) <= (np.int64(1) << (s - NEAR_BITS)))


def _where(flat, p, emin, n) -> np.ndarray:
    from opcert.impl import rounding_test_kernel as k

    if n == 0:
        return np.zeros(0, np.int64)
    out = np.empty(n, np.int64)
    k.where(flat.view(np.int64), p, emin, NEAR_BITS, out)
    return out


def near_indices(y: np.ndarray, p: int, emin: int) -> np.ndarray:
    """The flat indices of near_mask's elements."""
    flat = np.ascontiguousarray(y, dtype=np.float64).reshape(-1)
    if flat.size < MIN_COMPILED:
        return np.flatnonzero(near_mask(flat, p, emin))
    from opcert.impl import rounding_test_kernel as k

    return _where(flat, p, emin, k.count(flat.view(np.int64), p, emin, NEAR_BITS))


def to_float32(y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """y (binary64) rounded to binary32 (the CPU's conversion), and near_indices' answer for binary32, in one
    pass over y where it is large."""
    flat = np.ascontiguousarray(y, dtype=np.float64).reshape(-1)
    if flat.size < MIN_COMPILED:
        with np.errstate(over="ignore"):
            return flat.astype(np.float32).reshape(np.shape(y)), np.flatnonzero(near_mask(flat, 24, -126))
    from opcert.impl import rounding_test_kernel as k

    out = np.empty(flat.size, np.float32)
    n = k.to_float32(flat, out, NEAR_BITS)
    return out.reshape(np.shape(y)), _where(flat, 24, -126, n)
