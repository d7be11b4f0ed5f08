"""The rounding test of opcert's narrow results: binary64 values too near a midpoint of the narrow format.

opcert's implementation computes in binary64 and rounds once into float16, bfloat16 or float32. Rounding the
binary64 value y is rounding the exact value v wherever no midpoint of the narrow format lies between them. The
platform's functions keep |y - v| within a few binary64 ULPs (expr.primitives' contracts: 4 for libm's, 12 for
expr.quarter_turns' sin and cos, 32 for its tan), far below NEAR = 2^-22 of the narrow format's ULP (2^7 binary64
ULPs in float32), so where y is farther than that from every midpoint, rounding y is correctly rounding v. Where it is nearer (about one input
in two million, and every binary64 value exactly on a midpoint: sin(9830.3984375) in float32, which rounded by
ties-to-even was 0.5000000007 ULP off), impl.run takes the exact value's rounding where it is one of y's two
neighbours (decide), as a correctly rounded float32 library takes its accurate path when its rounding test fails.

A standard whose binary64 value carries an absolute error instead (Standard.absolute_error: DirectML's periodic
forms, an addition formula whose terms cancel next to a zero) is held to that bound as well: impl.run takes the
exact value's rounding wherever the bound reaches a rounding boundary of the narrow format.

The properties proved of the code hold for these results too: each is one of the two neighbours of y, on the side
the exact value lies. Two inputs x1 < x2 whose binary64 values are in order and between the same two neighbours
keep their order: where one is near the midpoint and the other not, the other lies farther out, on its own side,
and gets that side's neighbour; two near it follow the exact values, in order wherever the function is
non-decreasing. So monotonicity, oddness, evenness and bounds between
representable values hold as for the rounding to nearest this replaces; and opcert's float16, bfloat16 and float32
results are checked on every input by enumeration.

In bits: y (finite, nonzero) of exponent e has s bits of its 53-bit significand below the narrow quantum,
s = 53 - p + max(emin - e, 0); it is near a midpoint when those bits are within 2^(s - 22) of 2^(s - 1). Every
binary64 subnormal is far below half of every narrow format's smallest subnormal."""

from __future__ import annotations

import numpy as np

from opcert.formats import to_format
from opcert.jit import numba  # impl.run's compiled loops load numba already

NEAR_BITS = 22  # the test's width: 2^-NEAR_BITS of the narrow format's ULP
MIN_COMPILED = 1 << 12  # impl.run's MIN_SIZE: below it NumPy's passes (a compiled call's start costs more)
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
def _count(bits, p, emin, near_bits):
    """How many of the binary64 values whose bits are `bits` (int64) are near a midpoint of the format."""
    n = 0
    for i in range(bits.size):
        n += _near(bits[i], p, emin, near_bits)
    return n


@numba.njit(cache=True, nogil=True)
def _where_loop(bits, p, emin, near_bits, out):
    """Their indices, into out (as long as count's answer)."""
    k = 0
    for i in range(bits.size):
        if _near(bits[i], p, emin, near_bits):
            out[k] = i
            k += 1
    return k


@numba.njit(cache=True, nogil=True)
def _to_float32(y, out, near_bits):
    """out = y rounded to binary32 (the CPU's conversion: nearest even), counting as count does, in one pass."""
    bits = y.view(np.int64)
    n = 0
    for i in range(y.size):
        out[i] = np.float32(y[i])
        n += _near(bits[i], 24, -126, near_bits)
    return n


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
    if n == 0:
        return np.zeros(0, np.int64)
    out = np.empty(n, np.int64)
    _where_loop(flat.view(np.int64), p, emin, NEAR_BITS, out)
    return out


def near_indices(y: np.ndarray, p: int, emin: int) -> np.ndarray:
    """The flat indices of near_mask's elements."""
    flat = np.ascontiguousarray(y, dtype=np.float64).reshape(-1)
    if flat.size < MIN_COMPILED:
        return np.flatnonzero(near_mask(flat, p, emin))
    return _where(flat, p, emin, _count(flat.view(np.int64), p, emin, NEAR_BITS))


def to_float32(y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """y (binary64) rounded to binary32 (the CPU's conversion), and near_indices' answer for binary32, in one
    pass over y where it is large."""
    flat = np.ascontiguousarray(y, dtype=np.float64).reshape(-1)
    if flat.size < MIN_COMPILED:
        with np.errstate(over="ignore"):
            return flat.astype(np.float32).reshape(np.shape(y)), np.flatnonzero(near_mask(flat, 24, -126))
    out = np.empty(flat.size, np.float32)
    n = _to_float32(flat, out, NEAR_BITS)
    return out.reshape(np.shape(y)), _where(flat, 24, -126, n)


def decide(y: np.ndarray, rounded: np.ndarray, exact: np.ndarray, fmt) -> np.ndarray:
    """The results at binary64 values y near a midpoint: the exact value's rounding where it is one of y's two
    neighbours in the narrow format, else y's own rounding. Where the code is as accurate as its contracts say,
    it always is; where it is not (an expression that is not the operator's function: a test's bent copy), the
    exact value is no neighbour, and the code's own rounding stays, so that this test never moves a result
    further than to y's other neighbour, and the order of the code's results is kept (the module's note)."""
    top = 2.0 ** (fmt.emax + 1)  # an infinite neighbour counts as 2^(emax+1): the overflow threshold's side

    def at(v):
        f = np.asarray(v, dtype=np.float64)
        return np.where(np.isinf(f), np.copysign(top, f), f)

    with np.errstate(invalid="ignore"):
        own = np.abs(at(rounded) - y)  # about half the narrow ULP
        neighbour = np.abs(at(exact) - y) <= 2 * own  # the other neighbour is as far; the next ones 3 times
    return np.where(neighbour, exact, rounded)


def width_ulps(fmt) -> float:
    """The rounding test's own width in binary64 ULPs of the value, at its narrowest (a normal result of fmt):
    where a value's error is within it, the test has already found every value it could move across a rounding
    boundary (impl.run holds a standard's absolute_error to near_boundary only beyond it)."""
    return 2.0 ** (53 - fmt.p - NEAR_BITS)


def near_boundary(v: np.ndarray, fmt, nonnegative: bool = False, ulps=16) -> np.ndarray:
    """Where v moved by `ulps` binary64 ULPs (16, or an array of v's shape: a tensor operator's error_bound, a
    standard's absolute_error) either way rounds to another value of fmt (NaN and +-inf: never).
    nonnegative (the operator's outputs are >= 0): a band around a binary64 zero (an exp that underflowed)
    rounds to +0 and -0 only, and +0 is the value: not near (a fifth of Softmax's float16 pairs)."""
    with np.errstate(all="ignore"):
        d = ulps * np.abs(np.spacing(v))
        lo, hi = to_format(v - d, fmt), to_format(v + d, fmt)
    near = np.isfinite(v) & (lo.view(fmt.uint) != hi.view(fmt.uint))
    if nonnegative:
        near &= ~((lo == 0) & (hi == 0))
    return near
