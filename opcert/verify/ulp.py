"""ULP arithmetic, one definition for the whole project (DESIGN.md).

For a format of precision p and minimum normal exponent emin, and an exact
real v: ulp(v) = 2**(max(floor(log2|v|), emin) - p + 1); ulp(0) is the
smallest subnormal. The error of a computed y is |y - v| / ulp(v): y is
correctly rounded exactly when its error is at most 0.5 (and, at a tie, even).
An infinite y where v is finite enters the formula as +-2**(emax + 1).
Besides it: the integer distance, in representable values, from the correctly
rounded result r (what numpy.testing.assert_array_max_ulp counts).
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction

import numpy as np

from opcert.formats import FloatFormat, bits_of, format_of, ordinal
from opcert.jit import numba


def ulp_of(v: np.ndarray, fmt: FloatFormat) -> np.ndarray:
    """ulp(v) in fmt for each binary64 v (0 and NaN: the smallest subnormal; +-inf:
    2^(max(-1, emin) - p + 1), as NumPy's frexp(inf) gives exponent 0: callers treat
    infinities apart). Compiled: in NumPy it was five temporaries per call, a quarter
    of the float32 symmetry enumeration's time; tests/test_formats_ulp.py checks it
    against the definition in rational arithmetic."""
    return np.asarray(_ulp_ufunc()(np.asarray(v, dtype=np.float64), fmt.emin, fmt.p))


@functools.cache
def _ulp_ufunc():
    # built at the first call: a vectorize with a signature compiles (or loads its cache) when
    # it is applied, which cost every import of this module, every worker's start included
    # (bench/README.md, 'Figures behind choices in the code')
    return numba.vectorize(["float64(float64, int64, int64)"], cache=True, nopython=True)(ulp_scalar)


def ulp_scalar(v, emin, p):
    """ulp(v) for one binary64 v, as ulp_of; plain Python that numba compiles (ulp_of's ufunc, the pair
    sweep's kernel)."""
    # on the bits: frexp and ldexp are C library calls in compiled code, slower than NumPy's loops
    a = abs(v)
    if a != a or a == 0.0:  # NaN or zero (quiet comparisons: no invalid flag for NaN)
        k = emin - p + 1
    elif a == math.inf:  # as frexp(inf) = (inf, 0)
        k = max(-1, emin) - p + 1
    else:
        field = np.int64((np.float64(a).view(np.uint64) >> np.uint64(52)) & np.uint64(0x7FF))
        # floor(log2 a) is field - 1023 for a normal binary64; a subnormal one is below every emin
        k = (max(field - 1023, emin) if field > 0 else emin) - p + 1
    if k >= -1022:
        return np.uint64(np.uint64(k + 1023) << np.uint64(52)).view(np.float64)
    return np.uint64(np.uint64(1) << np.uint64(k + 1074)).view(np.float64)


# ulp_scalar for compiled kernels, inlined where they call it (the pair sweep's, the symmetry pass)
ulp_inline = numba.njit(inline="always")(ulp_scalar)


def ulp_error(y: np.ndarray, v_hi: np.ndarray, v_lo: np.ndarray, fmt: FloatFormat) -> np.ndarray:
    """|y - v| / ulp(v), with v = v_hi + v_lo exactly enough (see Reference).

    Elements where y or v is NaN, or v is infinite, give NaN: those are
    special-value cases, counted apart from the ULP figure."""
    y = np.asarray(y, dtype=np.float64)
    # binary64 values of 2**1020 or more are scaled by 1/4 so that 2**1024 and
    # the differences stay finite; scaling by a power of two is exact and
    # leaves the ratio alone (and tiny values keep their ulp unscaled).
    big = np.ldexp(1.0, fmt.emax + 1 - 2) if fmt.name == "float64" else np.ldexp(1.0, fmt.emax + 1)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        if fmt.name == "float64":
            large = (np.abs(y) >= 2.0**1020) | (np.abs(v_hi) >= 2.0**1020)
            scale = np.where(large, 4.0, 1.0)
            yy = np.where(np.isinf(y), np.copysign(big, y), y / scale)
        else:
            scale = 1.0
            yy = np.where(np.isinf(y), np.copysign(big, y), y)
        d = np.abs((yy - v_hi / scale) - v_lo / scale)
        # v = v_hi + v_lo lies one binade lower where v_hi is a power of two and v_lo points below it
        below = (np.frexp(np.abs(v_hi))[0] == 0.5) & (v_lo * v_hi < 0)
        err = d / (np.where(below, np.maximum(ulp_of(v_hi, fmt) / 2, ulp_of(0.0, fmt)), ulp_of(v_hi, fmt)) / scale)
    bad = np.isnan(y) | np.isnan(v_hi) | np.isinf(v_hi)
    return np.where(bad, np.nan, err)


def ulp_of_exact(v: Fraction, fmt: FloatFormat) -> Fraction:
    if v == 0:
        return Fraction(2) ** (fmt.emin - fmt.p + 1)
    a = abs(v)
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if Fraction(2) ** e > a:
        e -= 1
    return Fraction(2) ** (max(e, fmt.emin) - fmt.p + 1)


def ulp_error_exact(y: float, v: Fraction, fmt: FloatFormat) -> Fraction:
    """The same error, in rational arithmetic, for one finite exact value v."""
    if math.isinf(y):
        yq = Fraction(2) ** (fmt.emax + 1) * (1 if y > 0 else -1)
    else:
        yq = Fraction(y)
    return abs(yq - v) / ulp_of_exact(v, fmt)


def ulp_distance(y: np.ndarray, r: np.ndarray) -> np.ndarray:
    """Representable values between y and the correctly rounded r (same
    format; finite values and infinities, which sit one step past the largest
    finite). Returns an int64 array, or a uint64 array for 64-bit formats
    (two magnitudes below 2^63 sum to less than 2^64)."""
    fmt = format_of(y)
    if fmt.bits < 64:
        return np.abs(ordinal(y) - ordinal(r))
    sign = np.uint64(1) << np.uint64(63)
    a, b = bits_of(y).astype(np.uint64), bits_of(r).astype(np.uint64)
    ma, mb = a & ~sign, b & ~sign
    same = (a & sign) == (b & sign)
    return np.where(same, np.maximum(ma, mb) - np.minimum(ma, mb), ma + mb)


HISTOGRAM_EDGES = (0.0, 0.5, 1.0, 2.0, 4.0, 16.0, 256.0, 65536.0)


def round_up(q: Fraction) -> float:
    """The smallest double >= q (inf beyond the largest): a reported error is
    never smaller than the true one."""
    try:
        f = float(q)
    except OverflowError:
        return math.inf
    return f if Fraction(f) >= q else float(np.nextafter(f, math.inf))


NAN_ORDINAL = np.iinfo(np.int64).max


def ordinals(y, fmt) -> np.ndarray:
    """Values as ordinals (adjacent values one apart, -0 = +0; NaN: NAN_ORDINAL), for every width up to 64."""
    s = np.ascontiguousarray(y).view(f"int{fmt.bits}").astype(np.int64)
    mag = s & np.int64((1 << (fmt.bits - 1)) - 1)
    inf = int(np.array([np.inf]).astype(fmt.dtype).view(f"int{fmt.bits}")[0])
    return np.where(mag > inf, NAN_ORDINAL, np.where(s < 0, -mag, mag))


def ordinal_distance(a, b, fmt) -> np.ndarray:
    """ULPs between a and b (0 for two NaNs, huge for a NaN against a number), as floats: no overflow."""
    oa, ob = ordinals(a, fmt), ordinals(b, fmt)
    nan = (oa == NAN_ORDINAL) | (ob == NAN_ORDINAL)
    same_sign = (oa >= 0) == (ob >= 0)
    with np.errstate(over="ignore"):
        exact = np.abs(np.where(same_sign & ~nan, oa - ob, 0)).astype(np.float64)  # no overflow: one sign
    apart = np.abs(oa.astype(np.float64)) + np.abs(ob.astype(np.float64))  # across zero
    return np.where(nan & (oa == ob), 0.0, np.where(nan, np.inf, np.where(same_sign, exact, apart)))


def same_bits(a, b, fmt) -> np.ndarray:
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return ((a == b) & (np.signbit(a) == np.signbit(b))) | (np.isnan(a) & np.isnan(b))
