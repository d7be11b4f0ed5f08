"""The reference of Pow (spec/binary_ops/pow.py): pow(g, y) correctly rounded to a format, g = x * scale + bias
the exact real (with the defaults, g = x itself), element by element over arrays.

Semantics. ONNX's Pow is IEEE 754's pow (its section 9.2.1; C99's Annex F): pow(x, +-0) = 1 for every x, NaN
too; pow(+1, y) = 1 for every y, NaN too; otherwise NaN in, NaN out; at a zero base +-inf or +-0 (the sign
kept for an odd integer exponent), +inf at -inf, +0 at +inf; pow(-1, +-inf) = 1, and pow(x, +-inf) is +0 or
+inf by |x| against 1; pow(+-inf, y) is +-0 or +-inf (the sign of -inf kept for an odd integer y); NaN for a
finite negative base and a finite non-integer exponent. Elsewhere the real power (a negative base with an
integer exponent: (-1)^y |x|^y), rounded to nearest, ties to even, with subnormals and overflow to +-inf; a
result that rounds to zero keeps its sign (pow(-tiny, 3) = -0).
DirectML's POW is the same function of g, except that -inf to a non-integer (finite) power is NaN. Its g is the
exact real x * scale + bias: a zero g is +0 (IEEE's x * 1 + 0 at x = -0, and the exact real zero has no sign),
g = +-inf * sign(scale) at x = +-inf (scale 0: g = bias), NaN at NaN. With ONNX the scale-bias is the same real
where it is not the default (ONNX has none; the default leaves x, -0 included, alone).

How. Three tiers, each rigorous.
1. Special cases (a zero, infinity or NaN among g and y, g = 1, y = 0, a negative base with a non-integer
   exponent) by explicit rules, compiled (_classify): NumPy's own special values are not trusted. Powers surely
   beyond 2^(emax + 2) or below 2^(emin - p - 2) (bounds of y log2|g| from a table) are +-inf and +-0 before any
   pow: NumPy's SIMD pow falls back to its slow scalar loop on an element whose binary64 result overflows or
   underflows (bench/README.md, Pow).
2. The fast path (compiled kernels, packed arrays): binary64 pow of |g| (NumPy's, SIMD where the base is positive;
   pow_record's contract: within pow_record.ULPS binary64 ULPs where the power is finite and normal), the sign put
   back for an odd exponent, rounded to the format by integer operations on its bits (_round_packed: NumPy's
   float64 to float16 cast is a slow scalar loop, and ml_dtypes' float64 to bfloat16 rounds twice, through
   float32). An element is decided where the binary64 value is more than MARGIN_ULPS binary64 ULPs away from the
   format's nearest rounding midpoint, or is a zero, a subnormal or an infinity (for binary32 and narrower the real
   value is then far below half the least subnormal, or above the largest finite value). Exact forms, whose ties
   are decided in the kernel: y = 1 (g itself) and y = 2 (g^2 = hi + lo, Dekker's product). A scale-bias whose sum
   binary64 does not hold (the product of a binary32 scale and a value of a binary32-or-narrower format is exact)
   is g = s + lo (TwoSum), g = s (1 + t): pow(|s|, y) pow(2, y t / ln 2), within (5 + 3.2 |y t / ln 2|) ULPs,
   decided outside twice that (and y = 1: g itself, exactly). float64: x87 long double pow (powl,
   pow_record.LONG_DOUBLE_ULPS), decided where the value widened by LONG_MARGIN_ULPS long double ULPs on both sides
   rounds to one binary64 value; where long double is binary64 itself, and where g is no binary64 value, float64
   takes the exact tier.
3. The exact tier, per element in Python (the undecided: mostly exact powers on rounding midpoints, 13^3 in
   float16, and about 2% of float64's): the rational value where there is one (pow_record.exact_power, rounded by
   formats.round_fraction), else Arb balls at 64 (float64: 128), 128, ..., ARB_MAX_PREC bits until both ends round
   to one value; RuntimeError naming the pair beyond that (an irrational power is no midpoint: it does not happen).
"""

from __future__ import annotations

import math
import threading
from fractions import Fraction

import numpy as np
from flint import arb, ctx

from opcert.errors import UsageError, choices
from opcert.expr import pow_record
from opcert.formats import FloatFormat, get_format, round_fraction, to_format
from opcert.jit import numba
from opcert.numerics.errorfree import product_exact, sum_exact
from opcert.numerics.exact import Undecided, arb_to_fractions

STANDARDS = ("onnx", "directml")
# the fast path's margin: binary64 ULPs of the computed pow within which a rounding midpoint leaves the element
# to the exact tier (the contract says pow_record.ULPS)
MARGIN_ULPS = int(math.ceil(4 * pow_record.ULPS))
# float64's: long double ULPs (the contract: pow_record.LONG_DOUBLE_ULPS)
LONG_MARGIN_ULPS = 2 * pow_record.LONG_DOUBLE_ULPS
ARB_MAX_PREC = 4096
CHUNK = 1 << 16  # elements the fast path takes at a time

# what _classify says of an element
ORD_POS, ORD_NEG, ONE, NAN, PZERO, NZERO, PINF, NINF, SLOW = range(9)
_SPECIAL_VALUES = {ONE: 1.0, NAN: math.nan, PZERO: 0.0, NZERO: -0.0, PINF: math.inf, NINF: -math.inf}


# ---- compiled kernels ------------------------------------------------------------------------------------------


@numba.njit(cache=True, nogil=True, inline="always")
def _is_integer(y):
    return np.floor(y) == y  # finite y (math.floor is an int64 in numba: wrong beyond 2^63)


@numba.njit(cache=True, nogil=True, inline="always")
def _is_odd(y):
    h = y * 0.5  # an integer y: exact (|y| >= 2^53 is even, and so is h's floor)
    return np.floor(h) != h


@numba.njit(cache=True, nogil=True, inline="always")
def _scaled(x, scale, bias, plain, directml):
    """(g, lo, inexact): g = x * scale + bias, the exact real where not `inexact`; where inexact, g is the rounded
    sum, finite and nonzero with the real's sign, and the real is g + lo exactly (lo NaN where the product rounds
    too, or the sum overflows: then only the exact tier knows it). `bias` is +0 where it is zero."""
    if plain:
        if directml and x == 0.0:
            return 0.0, 0.0, False
        return x, 0.0, False
    if x != x:
        return x, 0.0, False
    if math.isinf(x):
        if scale == 0.0:
            return bias, 0.0, False
        return (x if scale > 0.0 else -x), 0.0, False
    p = x * scale
    s = p + bias
    if not product_exact(x, scale):
        return s, math.nan, True
    if sum_exact(p, bias):
        return (0.0 if s == 0.0 else s), 0.0, False
    if math.isinf(s):
        return s, math.nan, True
    bb = s - p  # Knuth's TwoSum: s + lo = p + bias exactly
    return s, (p - (s - bb)) + (bias - bb), True


@numba.njit(cache=True, nogil=True, inline="always")
def _classify(g, y, directml, inexact):
    """IEEE 754's pow's special cases (DirectML's NaN at -inf to a non-integer power), or ORD_POS / ORD_NEG
    (finite nonzero g and y: the real power, negative for a negative g and an odd y), or SLOW (an inexact g that
    needs g itself: an infinite y, the sum's overflow)."""
    if y == 0.0:
        return ONE
    if y != y:
        return ONE if (g == 1.0 and not inexact) else NAN
    if g != g:
        return NAN
    if inexact:  # g is a finite nonzero real of s's sign, not 1 (nor -1)
        if math.isinf(y) or math.isinf(g):
            return SLOW
        if g < 0.0:
            if not _is_integer(y):
                return NAN
            return ORD_NEG if _is_odd(y) else ORD_POS
        return ORD_POS
    if g == 1.0:
        return ONE
    if g == 0.0:
        odd = (not math.isinf(y)) and _is_integer(y) and _is_odd(y)
        neg = odd and math.copysign(1.0, g) < 0.0
        if y < 0.0:
            return NINF if neg else PINF
        return NZERO if neg else PZERO
    if math.isinf(y):
        a = abs(g)
        if a == 1.0:
            return ONE
        return PINF if (a < 1.0) == (y < 0.0) else PZERO
    if math.isinf(g):
        if g > 0.0:
            return PZERO if y < 0.0 else PINF
        if not _is_integer(y):
            if directml:
                return NAN
            return PZERO if y < 0.0 else PINF
        if y < 0.0:
            return NZERO if _is_odd(y) else PZERO
        return NINF if _is_odd(y) else PINF
    if g < 0.0:
        if not _is_integer(y):
            return NAN
        return ORD_NEG if _is_odd(y) else ORD_POS
    return ORD_POS


# log2(1 + j / 256) rounded down and up (by far more than log2's error): the bounds of log2(m) for a significand m
# in [1 + j / 256, 1 + (j + 1) / 256)
_LOG2_LO = np.array([math.log2(1 + j / 256) - 1e-12 for j in range(256)])
_LOG2_HI = np.array([math.log2(1 + (j + 1) / 256) + 1e-12 for j in range(256)])

# the flags of a packed element (_round_packed): negative; exact (its value is a + aux exactly, |aux| at most half
# an ULP of a: no pow, and a tie is decided); wide (g = s (1 + t) is no binary64 value: its value is
# pow(a, b) * pow(2, aux), aux = u = y t / ln 2, within (5 + 3.2 |u|) binary64 ULPs, _round_packed's wide margin)
NEG, EXACT, WIDE = 1, 2, 4
# u's error: 4.5 roundings (t = lo / s, y t, 1 / ln 2 and its product; log2(1 + t) = t / ln 2 to 2^-54), so that
# 2^u is within |u| ln 2 * 4.5 * 2^-53 of its value; and an ULP of each pow, half of the product: in ULPs of the
# result, 5 + 3.2 |u|. The margin: twice that, and pow's own margin.
WIDE_MARGIN_ULPS = MARGIN_ULPS + 10
WIDE_MARGIN_PER_U = 7.0
# beyond it the exact tier: pow(|s|, y) is then within 2^(150 + 800) of a power in the format's range, so that
# neither pow overflows binary64 where the power is in range
WIDE_MAX_U = 800.0
INV_LN2 = 1 / math.log(2)  # rounded: within 2^-53 of 1 / ln 2
_SPLIT = 134217729.0  # 2^27 + 1: Veltkamp's splitter
SQUARE_MIN, SQUARE_MAX = 2.0**-400, 2.0**400  # where _square is exact
NEAR_ONE = 1 / 256  # |g| - 1 below which log2|g|'s bounds are d / ((1 + d) ln 2) and d / ln 2


@numba.njit(cache=True, nogil=True, inline="always")
def _log2_bounds(ag, r):
    """Bounds of log2(ag + r) for ag > 0 finite and |r| at most half an ULP of ag (the part of |g| binary64 does not
    hold): from ag's exponent and its significand's first 8 bits (_LOG2_LO, _LOG2_HI: r moves log2 by 2^-52 at
    most), or near 1 from ln(1 + d) in [d / (1 + d), d] (d = ag - 1 + r: ag - 1 exact by Sterbenz's lemma), tight
    to |d| relatively, widened by 2^-45 for the roundings."""
    if 1.0 - NEAR_ONE < ag < 1.0 + NEAR_ONE:
        d = (ag - 1.0) + r
        h = d * INV_LN2
        lo = d / (1.0 + d) * INV_LN2
        w = abs(h) * 2.0**-45
        return min(lo, h) - w, max(lo, h) + w
    mant, ex = math.frexp(ag)  # ag = mant * 2^ex, mant in [0.5, 1)
    j = int(mant * 512.0) - 256
    return (ex - 1) + _LOG2_LO[j], (ex - 1) + _LOG2_HI[j]


@numba.njit(cache=True, nogil=True, inline="always")
def _range_code(c, lo, hi, top, bottom):
    """c (ORD_POS or ORD_NEG) where [lo, hi], bounds of y log2|g|, meets [bottom, top]; else the infinity (the
    power surely above 2^top) or zero (surely below 2^bottom) of c's sign. An element whose binary64 result
    overflows or underflows sends NumPy's SIMD pow to its slow scalar fallback: those do not reach it."""
    if lo > top:
        return PINF if c == ORD_POS else NINF
    if hi < bottom:
        return PZERO if c == ORD_POS else NZERO
    return c


@numba.njit(cache=True, nogil=True, inline="always")
def _square(a):
    """(hi, lo): a^2 = hi + lo exactly (Dekker's product; a in [2^-400, 2^400])."""
    hi = a * a
    c = _SPLIT * a
    ah = c - (c - a)
    al = a - ah
    return hi, ((ah * ah - hi) + 2.0 * ah * al) + al * al


@numba.njit(cache=True, nogil=True, inline="always")
def _packed_one(c, ag, r, t, yv, narrow, top, bottom, i, idx, a, b, aux, flags, k):
    """An element whose g is finite and nonzero, y finite and nonzero (c: ORD_POS or ORD_NEG): its special value's
    code where its power is surely beyond the format's range; SLOW where only the exact tier can take it; else
    packed at slot k (returns ORD_POS). ag: |g| or its rounding |s|, |g| = ag + r, and g = s (1 + t / INV_LN2) where
    r is nonzero (r NaN: unknown)."""
    if r != 0.0 and (not narrow or r != r):  # g is no binary64 value: float64, or its lo is unknown
        return SLOW
    l2lo, l2hi = _log2_bounds(ag, r)
    c = (
        _range_code(c, yv * l2lo, yv * l2hi, top, bottom)
        if yv > 0.0
        else _range_code(c, yv * l2hi, yv * l2lo, top, bottom)
    )
    if c > ORD_NEG:
        return c
    f = NEG if c == ORD_NEG else 0
    if r != 0.0:  # g is no binary64 value
        if yv == 1.0:
            f |= EXACT
            aux[k] = r
        else:
            u = yv * t
            if not abs(u) <= WIDE_MAX_U:
                return SLOW
            f |= WIDE
            aux[k] = u
    elif narrow and yv == 1.0:
        f |= EXACT
        aux[k] = 0.0
    elif narrow and yv == 2.0 and SQUARE_MIN < ag < SQUARE_MAX:  # the ties among squares decided here
        f |= EXACT
        ag, aux[k] = _square(ag)
    idx[k] = i
    a[k] = ag
    b[k] = yv
    flags[k] = f
    return ORD_POS


@numba.njit(cache=True, nogil=True, inline="always")
def _generic_one(i, xv, yv, scale, bias, plain, directml, narrow, top, bottom, specials, out, idx, a, b, aux, flags, k,
                 slow, ns):  # fmt: skip
    """One element: its special value into out[i]; or its slot k of the packed arrays (_round_packed's); or its
    index into slow. `narrow`: binary32 and narrower (the exact and wide forms). Returns the counts (k, ns)."""
    g, lo, inexact = _scaled(xv, scale, bias, plain, directml)
    c = _classify(g, yv, directml, inexact)
    if c <= ORD_NEG:
        r = (lo if g > 0.0 else -lo) if inexact else 0.0
        c = _packed_one(c, abs(g), r, (lo / g) * INV_LN2 if inexact else 0.0, yv, narrow, top, bottom, i, idx, a, b,
                        aux, flags, k)  # fmt: skip
        if c == ORD_POS:
            return k + 1, ns
    if c == SLOW:
        out[i] = specials[PZERO]
        slow[ns] = i
        return k, ns + 1
    out[i] = specials[c]
    return k, ns


@numba.njit(cache=True, nogil=True)
def _prepare(x, y, scale, bias, plain, directml, narrow, top, bottom, specials, out, idx, a, b, aux, flags, slow):
    """Each element's special value into out, or its |g| and y packed into a and b at idx (with aux and flags), or
    its index into slow; returns the counts of the last two."""
    k = ns = 0
    for i in range(x.size):
        k, ns = _generic_one(i, x[i], y[i], scale, bias, plain, directml, narrow, top, bottom, specials, out, idx,
                             a, b, aux, flags, k, slow, ns)  # fmt: skip
    return k, ns


@numba.njit(cache=True, nogil=True)
def _scale_all(v, scale, bias, plain, directml, g, lo, inexact, glo, ghi, gt, gres):
    """_scaled of each of a 16-bit format's values, and what _packed_one takes of it (_Tables)."""
    for i in range(v.size):
        gi, li, ie = _scaled(v[i], scale, bias, plain, directml)
        g[i], lo[i], inexact[i] = gi, li, ie
        gres[i] = (li if gi > 0.0 else -li) if ie else 0.0
        gt[i] = (li / gi) * INV_LN2 if ie else 0.0
        glo[i] = ghi[i] = 0.0
        if gi - gi == 0.0 and gi != 0.0:  # finite, nonzero
            glo[i], ghi[i] = _log2_bounds(abs(gi), 0.0 if li != li else gres[i])


@numba.njit(cache=True, nogil=True)
def _prepare16(xb, yb, gclass, yclass, rules, gabs, glo, ghi, gt, gres, yval, top, bottom, specials, out, idx, a, b,
               aux, flags, slow):  # fmt: skip
    """_prepare for 16-bit formats, by tables of x's and y's 65536 values (_Tables): the class of each g and y, the
    rule for each pair of classes (_classify's), |g|, bounds of log2|g|, and for a g binary64 does not hold (g = s
    + lo) lo / s / ln 2 and lo's part of |g|."""
    k = ns = 0
    for i in range(xb.size):
        u = xb[i]
        v = yb[i]
        c = rules[gclass[u], yclass[v]]
        if c <= ORD_NEG:
            y = yval[v]
            r = gres[u]
            if r == 0.0:  # the common case, inline: g a binary64 value
                if y > 0.0:
                    c = _range_code(c, y * glo[u], y * ghi[u], top, bottom)
                else:
                    c = _range_code(c, y * ghi[u], y * glo[u], top, bottom)
                if c <= ORD_NEG:
                    f = NEG if c == ORD_NEG else 0
                    ag = gabs[u]
                    if y == 1.0:  # g itself: a scale-bias's g may be a rounding midpoint
                        f |= EXACT
                        aux[k] = 0.0
                    elif y == 2.0 and SQUARE_MIN < ag < SQUARE_MAX:  # the ties among squares decided here
                        f |= EXACT
                        ag, aux[k] = _square(ag)
                    idx[k] = i
                    a[k] = ag
                    b[k] = y
                    flags[k] = f
                    k += 1
                    continue
            else:
                c = _packed_one(c, gabs[u], r, gt[u], y, True, top, bottom, i, idx, a, b, aux, flags, k)
                if c == ORD_POS:
                    k += 1
                    continue
        if c == SLOW:
            out[i] = specials[PZERO]
            slow[ns] = i
            ns += 1
        else:
            out[i] = specials[c]
    return k, ns


@numba.njit(cache=True, nogil=True)
def _round_packed(p, a, aux, flags, idx, prec, emin, emax, bits, margin, margin_wide, out, undecided):
    """out[idx[j]]: the packed element j's value, rounded to the format (binary32 and narrower) as its bit pattern,
    to nearest even, with subnormals and overflow. Its value: p[j], binary64 pow(a[j], b[j]) (> 0), times
    pow(2, aux[j]) where flagged WIDE; a[j] + aux[j] exactly where flagged EXACT (a tie is then decided). Where the
    binary64 value lies within `margin` (WIDE: `margin_wide` + WIDE_MARGIN_PER_U |aux[j]|) binary64 ULPs of a
    rounding midpoint, the element's index goes to `undecided` (its out is then a placeholder); returns how many
    did."""
    sign_bit = np.int64(1) << (bits - 1)
    inf_bits = np.int64(((1 << (bits - prec)) - 1) << (prec - 1))
    frac_mask = (np.int64(1) << 52) - 1
    hidden = np.int64(1) << 52
    pbits = p.view(np.int64)
    nu = 0
    for j in range(p.size):
        f = flags[j]
        if f & EXACT:
            p[j] = a[j]
        u = pbits[j]
        ef = u >> 52  # p > 0: no sign bit
        if ef == 0:  # zero or subnormal binary64: far below half the format's least subnormal
            mag = np.int64(0)
        elif ef >= 2047:
            if ef > 2047 or (u & frac_mask) != 0:  # NaN: not from a positive finite base (never seen)
                undecided[nu] = idx[j]
                nu += 1
                mag = np.int64(0)
            else:  # the real value above binary64's largest: above the format's
                mag = inf_bits
        else:
            e = ef - 1023
            if e > emax:
                mag = inf_bits
            else:
                sig = (u & frac_mask) | hidden
                k = 53 - prec + max(emin - e, 0)  # bits below the quantum
                if k > 55:
                    k = 55  # p below a quarter of the quantum: it rounds to 0 (n = 0, t far below half)
                n = sig >> k
                t = sig & ((np.int64(1) << k) - 1)
                d = t - (np.int64(1) << (k - 1))
                if f & EXACT:
                    # the value is p + aux, |aux| <= half p's ULP: on the side of the midpoint p is on, or at p
                    up = d > 0 or (d == 0 and (aux[j] > 0.0 or (aux[j] == 0.0 and (n & 1) == 1)))
                else:
                    if abs(d) <= ((margin_wide + int(WIDE_MARGIN_PER_U * abs(aux[j]))) if f & WIDE else margin):
                        undecided[nu] = idx[j]
                        nu += 1
                    up = d > 0
                # the carry of a rounding up runs into the exponent: to the next binade, or to inf
                mag = (np.int64(max(e - emin, 0)) << (prec - 1)) + n + (1 if up else 0)
        out[idx[j]] = (mag | sign_bit) if f & NEG else mag
    return nu


# ---- the array reference ---------------------------------------------------------------------------------------

_COMPILED: set = set()
_COMPILING = threading.RLock()  # numba's first compilation of a kernel in two threads at once races


def _call(key, kernel, *args):
    if key in _COMPILED:
        return kernel(*args)
    with _COMPILING:
        r = kernel(*args)
        _COMPILED.add(key)
        return r


def _long_double_ok() -> bool:
    return np.finfo(np.longdouble).nmant == 63


def _as_format(v, fmt: FloatFormat) -> np.ndarray:
    v = np.asarray(v)
    if v.dtype == fmt.dtype:
        return v
    if v.dtype.kind not in "iufb" and v.dtype != np.dtype(object):
        raise UsageError(f"pow_reference: inputs of dtype {v.dtype} for the format {fmt.name}")
    return to_format(np.asarray(v, dtype=np.float64), fmt)  # rounded once (ml_dtypes' cast rounds twice)


def _check(fmt, standard: str) -> FloatFormat:
    fmt = get_format(fmt)
    if fmt.kind != "float":
        raise UsageError(f"pow_reference: {fmt.name} is no floating format")
    if standard not in STANDARDS:
        raise UsageError(f"pow_reference: unknown standard {standard!r}; allowed: {choices(STANDARDS)}")
    return fmt


def _specials(fmt: FloatFormat) -> np.ndarray:
    """The special values by code, as bit patterns of fmt: uint16 for the 16-bit formats, uint64 for binary32 and
    binary64 (one type of output for both, so that numba compiles _prepare once for them)."""
    if fmt.bits == 64:
        v = np.zeros(SLOW + 1, dtype=np.float64)
        for c, value in _SPECIAL_VALUES.items():
            v[c] = value
        return v.view(np.uint64)
    sign = 1 << (fmt.bits - 1)
    inf = ((1 << (fmt.bits - fmt.p)) - 1) << (fmt.p - 1)
    bits = {ONE: fmt.emax << (fmt.p - 1), NAN: inf | (1 << (fmt.p - 2)), NZERO: sign, PINF: inf, NINF: inf | sign}
    return np.array([bits.get(c, 0) for c in range(SLOW + 1)], dtype=fmt.uint if fmt.bits == 16 else np.uint64)


_X_REPS = (math.nan, 0.0, -0.0, math.inf, -math.inf, 1.0, -1.0, 0.5, 2.0, -0.5, -2.0)
_Y_REPS = (math.nan, 0.0, -0.0, math.inf, -math.inf, 0.5, -0.5, 2.0, -2.0, 3.0, -3.0)
# g's classes beyond _X_REPS': a g binary64 does not hold (g = s + lo), positive, negative; one whose lo is unknown
INEXACT_POS, INEXACT_NEG, UNKNOWN = 11, 12, 13


class _Tables:
    """A 16-bit format's tables for _prepare16, for one standard and scale-bias: the class of each x's g and of each
    y (the index of its representative in _X_REPS, _Y_REPS: _classify treats all values of a class alike; or
    INEXACT_POS, INEXACT_NEG, UNKNOWN), _classify's rule for each pair of classes, |g|, bounds of log2|g|, lo / g and
    lo * sign(g) where g + lo is the real, and each y as a float64."""

    def __init__(self, fmt: FloatFormat, directml: bool, scale: float, bias: float):
        with np.errstate(invalid="ignore"):
            v = np.arange(1 << 16, dtype=np.uint16).view(fmt.dtype).astype(np.float64)
        n = v.size
        g, lo, inexact = np.empty(n), np.empty(n), np.empty(n, dtype=np.bool_)
        self.glo, self.ghi, self.gt, self.gres = np.empty(n), np.empty(n), np.empty(n), np.empty(n)
        plain = scale == 1.0 and bias == 0.0
        _scale_all(v, scale, bias, plain, directml, g, lo, inexact, self.glo, self.ghi, self.gt, self.gres)
        a = np.abs(g)
        self.gclass = self._g_classes(g, inexact, lo)
        self.yclass = self._y_classes(v)
        rules = np.empty((UNKNOWN + 1, len(_Y_REPS)), dtype=np.int8)
        for j, y in enumerate(_Y_REPS):
            for i, rep in enumerate(_X_REPS):
                rules[i, j] = _classify(_scaled(rep, 1.0, 0.0, True, directml)[0], y, directml, False)
            rules[INEXACT_POS, j] = _classify(2.0, y, directml, True)
            rules[INEXACT_NEG, j] = _classify(-2.0, y, directml, True)
            rules[UNKNOWN, j] = ONE if y == 0 else NAN if y != y else SLOW
        self.rules = rules
        self.gabs, self.yval = a, v

    @staticmethod
    def _g_classes(g, inexact, lo) -> np.ndarray:
        nan, zero, neg, inf = np.isnan(g), g == 0, np.signbit(g), np.isinf(g)
        finite = ~(nan | zero | inf)
        a = np.abs(g)
        c = np.select(
            [nan, zero & ~neg, zero, inf & ~neg, inf, g == 1, g == -1, finite & ~neg & (a < 1), finite & ~neg, a < 1],
            [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
            10,
        )
        c = np.where(inexact, np.where(np.isnan(lo), UNKNOWN, np.where(g > 0, INEXACT_POS, INEXACT_NEG)), c)
        return c.astype(np.uint8)

    @staticmethod
    def _y_classes(v) -> np.ndarray:
        nan, zero, neg, inf = np.isnan(v), v == 0, np.signbit(v), np.isinf(v)
        finite = ~(nan | zero | inf)
        with np.errstate(invalid="ignore"):
            integer = finite & (np.floor(v) == v)
            odd = integer & (np.floor(v * 0.5) != v * 0.5)
        c = np.select(
            [nan, zero & ~neg, zero, inf & ~neg, inf, ~integer & ~neg, ~integer, ~odd & ~neg, ~odd, ~neg],
            [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
            10,
        )
        return c.astype(np.uint8)


_TABLES: dict = {}


def _tables(fmt: FloatFormat, directml: bool, scale: float, bias: float) -> _Tables:
    key = (fmt.name, directml, scale, bias)
    t = _TABLES.get(key)
    if t is None:
        with _COMPILING:  # _Tables calls the compiled _classify
            t = _TABLES.get(key) or _Tables(fmt, directml, scale, bias)
            if len(_TABLES) >= 16:  # a sweep over scale-bias values: keep the latest few
                _TABLES.pop(next(iter(_TABLES)))
            _TABLES[key] = t
    return t


def pow_reference(
    x: np.ndarray, y: np.ndarray, fmt, standard: str = "onnx", scale: float = 1.0, bias: float = 0.0
) -> np.ndarray:
    """pow(x * scale + bias, y) correctly rounded to `fmt` (a FloatFormat or its name), element by element, under
    `standard` ("onnx": IEEE 754's pow; "directml": DirectML's POW). x and y: arrays of fmt's dtype (others are
    rounded to it), broadcast against each other; the result is an array of fmt's dtype of their shape. NaN
    results are the format's quiet NaN."""
    fmt = _check(fmt, standard)
    x, y = np.broadcast_arrays(_as_format(x, fmt), _as_format(y, fmt))
    shape = x.shape
    x, y = np.ascontiguousarray(x).reshape(-1), np.ascontiguousarray(y).reshape(-1)
    scale, bias = float(scale), float(bias) + 0.0  # a -0 bias is +0: g's zero is +0
    plain = scale == 1.0 and bias == 0.0
    directml = standard == "directml"
    n = x.size
    narrow = fmt.bits < 64
    specials = _specials(fmt)
    out = np.empty(n, dtype=specials.dtype)
    # results surely above 2^(emax + 2) (they round to inf) or below 2^(emin - p - 2) (to 0) are decided before
    # pow; float64's long double pow has no such slow values (and the range's ends are left to it)
    top, bottom = (fmt.emax + 2.0, fmt.emin - fmt.p - 2.0) if narrow else (math.inf, -math.inf)
    if fmt.bits == 16:
        t = _tables(fmt, directml, scale, bias)
        tables = (t.gclass, t.yclass, t.rules, t.gabs, t.glo, t.ghi, t.gt, t.gres, t.yval)
        xv, yv = x.view(fmt.uint), y.view(fmt.uint)
    else:  # binary32 as binary64 (exact): one compiled kernel for both formats
        with np.errstate(invalid="ignore"):  # a signaling NaN's cast
            xv, yv = x.astype(np.float64, copy=False), y.astype(np.float64, copy=False)
    # the packed elements (pow's) of a chunk: their index, base |g| and exponent y, aux and flags (_round_packed);
    # chunks that stay in the cache, and no page faults of fresh block-sized arrays
    m = min(n, CHUNK)
    idx, slow, und = np.empty(m, dtype=np.int64), np.empty(m, dtype=np.int64), np.empty(m, dtype=np.int64)
    a, b, aux = np.empty(m), np.empty(m), np.empty(m)
    flags = np.empty(m, dtype=np.int8)
    exact_tier = []
    for s in range(0, n, CHUNK):
        e = min(s + CHUNK, n)
        packed = (specials, out[s:e], idx, a, b, aux, flags)
        if fmt.bits == 16:
            k, ns = _call(("prep16",), _prepare16, xv[s:e], yv[s:e], *tables, top, bottom, *packed, slow)
        else:
            args = (xv[s:e], yv[s:e], scale, bias, plain, directml, narrow, top, bottom)
            k, ns = _call(("prep", fmt.name), _prepare, *args, *packed, slow)
        if ns:
            exact_tier.append(slow[:ns] + s)
        if not narrow:
            undecided = _fast64(a[:k], b[:k], flags[:k], idx[:k], out[s:e].view(np.float64))
        else:
            with np.errstate(all="ignore"):
                # |g| > 0: NumPy's SIMD loop (a negative base takes the C library's, slowly)
                p = np.power(a[:k], b[:k], out=b[:k])
                if not plain:
                    w = np.flatnonzero(flags[:k] & WIDE)
                    p[w] *= np.power(2.0, aux[w])
            consts = (fmt.p, fmt.emin, fmt.emax, fmt.bits, MARGIN_ULPS, WIDE_MARGIN_ULPS)
            nu = _call(
                ("round", fmt.name), _round_packed, p, a[:k], aux[:k], flags[:k], idx[:k], *consts, out[s:e], und
            )
            undecided = und[:nu]
        if undecided.size:
            exact_tier.append(undecided + s)
    out = out.astype(np.uint32).view(fmt.dtype) if fmt.bits == 32 else out.view(fmt.dtype)
    if exact_tier:
        slow = np.concatenate(exact_tier)
        with np.errstate(invalid="ignore"):
            xs, ys = x[slow].astype(np.float64), y[slow].astype(np.float64)
        values = [_exact_value(float(u), float(v), fmt, standard, scale, bias) for u, v in zip(xs, ys)]
        out[slow] = np.array(values, dtype=np.float64).astype(fmt.dtype)  # values of fmt: the cast is exact
    return out.reshape(shape)


def _fast64(a, b, flags, idx, out) -> np.ndarray:
    """float64: out[idx] from long double pow of a and b, where decided; returns the undecided indices."""
    if not a.size or not _long_double_ok():
        return idx
    m = np.longdouble(LONG_MARGIN_ULPS) * np.longdouble(2.0) ** -63
    with np.errstate(all="ignore"):
        pl = np.power(a.astype(np.longdouble), b.astype(np.longdouble))
        lo = (pl * (1 - m)).astype(np.float64)  # x87's conversion: one rounding, subnormals included
        hi = (pl * (1 + m)).astype(np.float64)
    # pl > 0; a zero (the real value below 2^-16000) or inf (above 2^16384) is decided
    out[idx] = np.where((flags & NEG) != 0, -lo, lo)
    return idx[lo != hi]


# ---- the exact tier --------------------------------------------------------------------------------------------


def _g_exact(x: float, scale: float, bias: float, plain: bool) -> Fraction:
    return Fraction(x) if plain else Fraction(x) * Fraction(scale) + Fraction(bias)


def _special_or_base(x: float, y: float, standard: str, scale: float, bias: float):
    """(code, g): the special value's code, or ORD_*/SLOW with the exact finite nonzero base g."""
    scale, bias = float(scale), float(bias) + 0.0
    plain = scale == 1.0 and bias == 0.0
    g, _, inexact = _call("scaled", _scaled, float(x), scale, bias, plain, standard == "directml")
    c = _call("classify", _classify, g, float(y), standard == "directml", inexact)
    if c in _SPECIAL_VALUES:
        return c, None
    return c, _g_exact(float(x), scale, bias, plain)


def _finite_base(G: Fraction, y: float):
    """pow(G, y) for a finite nonzero exact G and a non-NaN nonzero y, where y is infinite or the power is NaN (a
    float); None where it is the finite real power."""
    if math.isinf(y):
        a = abs(G)
        if a == 1:
            return 1.0
        return math.inf if (a < 1) == (y < 0) else 0.0
    Y = Fraction(y)
    if G < 0 and Y.denominator != 1:
        return math.nan
    return None


def _exact_value(x: float, y: float, fmt: FloatFormat, standard: str, scale: float, bias: float) -> float:
    """One element's correctly rounded value, as a Python float (a value of fmt)."""
    c, G = _special_or_base(x, y, standard, scale, bias)
    if G is None:
        return _SPECIAL_VALUES[c]
    v = _finite_base(G, y)
    if v is not None:
        return v
    Y = Fraction(y)
    negative = G < 0 and Y.numerator % 2 != 0  # Y is an integer where G < 0
    q = pow_record.exact_power(G, Y)
    if q is not None:
        return round_fraction(q, fmt, negative_zero=negative)
    return _arb_round(G, y, fmt, negative, (x, y))


def _arb_round(G: Fraction, y: float, fmt: FloatFormat, negative: bool, pair) -> float:
    """G^y rounded to fmt by Arb balls of increasing precision (Ziv's loop)."""
    tiny = Fraction(2) ** (fmt.emin - fmt.p)  # half the least subnormal: at most this rounds to 0
    huge = Fraction(2) ** (fmt.emax + 1)  # at least this rounds to inf
    prec = 64 if fmt.p < 32 else 128  # undecided binary64 values lie within 2^-59 of a midpoint
    while prec <= ARB_MAX_PREC:
        saved = ctx.prec
        try:
            ctx.prec = prec
            v = pow_record.arb_power(pow_record.arb_of_fraction(G), arb(y))
            m = abs(v)
            if m < pow_record.arb_of_fraction(tiny):
                return -0.0 if negative else 0.0
            if m > pow_record.arb_of_fraction(huge):
                return -math.inf if negative else math.inf
            if v.is_finite():
                lo, hi = arb_to_fractions(v)
                if lo != 0 and hi != 0 and (lo > 0) == (hi > 0):
                    rlo = round_fraction(lo, fmt, negative_zero=lo < 0)
                    rhi = round_fraction(hi, fmt, negative_zero=hi < 0)
                    if rlo == rhi and math.copysign(1.0, rlo) == math.copysign(1.0, rhi):
                        return rlo
        except (Undecided, ValueError):
            pass
        finally:
            ctx.prec = saved
        prec *= 2
    raise RuntimeError(f"pow_reference: pow({pair[0]!r}, {pair[1]!r}) undecided at {ARB_MAX_PREC} bits in {fmt.name}")


def pow_exact(x: float, y: float, standard: str = "onnx", scale: float = 1.0, bias: float = 0.0):
    """The reference value of one pair, for a report: ("special", float) for IEEE's special values (inf, -inf,
    nan, +-0.0, 1.0, NaN for a negative base and a non-integer exponent), ("exact", Fraction) where the real power
    is rational, ("arb", str) an Arb enclosure (at 128 bits) of an irrational one."""
    _check("float64", standard)
    x, y = float(x), float(y)
    c, G = _special_or_base(x, y, standard, scale, bias)
    if G is None:
        return ("special", _SPECIAL_VALUES[c])
    v = _finite_base(G, y)
    if v is not None:
        return ("special", v)
    q = pow_record.exact_power(G, Fraction(y))
    if q is not None:
        return ("exact", q)
    saved = ctx.prec
    try:
        ctx.prec = 128
        return ("arb", pow_record.arb_power(pow_record.arb_of_fraction(G), arb(y)).str(40, radius=True))
    finally:
        ctx.prec = saved
