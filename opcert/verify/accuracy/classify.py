"""The per-element comparison of stats.float_stats, compiled (numba).

For each output y with its correctly rounded reference r and the exact value
v = v_hi + v_lo: the ULP error of DESIGN.md (ulp.ulp_error's arithmetic, in the
same order, so the same binary64 result), the distance in representable values
(ulp.ulp_distance), and the special-value classification. One pass and no
temporaries: the NumPy version made a dozen arrays per call and cost more than
the long double reference it checks (bench/README.md,
'Figures behind choices in the code').
tests/test_accuracy.py compares it with the rational definition
(ulp.ulp_error_exact) on every float16 input.
"""

from __future__ import annotations

import math
from collections import namedtuple

import numpy as np

from opcert.jit import numba

NAN_MM, INF_MM, SIGNED_ZERO_MM, FLUSH, CORRECT, SAME_BITS = 1, 2, 4, 8, 16, 32
INT64_MAX = np.uint64(np.iinfo(np.int64).max)
# classify's records: the outputs and references (binary64 values y, r; the format's bits yb, rb as uint64) with
# the exact values v_hi + v_lo (amb: an ambiguous binade, spec.reference.Reference); the errors computed exactly
# elsewhere (binary64 results of a rational exact value: ascending indices, errors); the format; what it fills.
Compared = namedtuple("Compared", "y r yb rb v_hi v_lo amb")
Overrides = namedtuple("Overrides", "idx err")
Precision = namedtuple("Precision", "emin p emax bits")
Classified = namedtuple("Classified", "err dist flags")


@numba.njit(cache=True, nogil=True, inline="always")
def _ulp(hi, lo, ambiguous, emin, p):
    """ulp(hi + lo): one binade lower where |hi| is a power of two and lo points
    below it, or may (Reference.ambiguous_binade: the smaller ULP, an upper bound)."""
    a = abs(hi)
    if a > 0:
        m, e2 = math.frexp(a)
        e = e2 - 1
        if m == 0.5 and (lo * hi < 0 or ambiguous):
            e -= 1
        return math.ldexp(1.0, max(e, emin) - p + 1)
    return math.ldexp(1.0, emin - p + 1)


@numba.njit(cache=True, nogil=True, error_model="numpy")
def classify(cmp, over, prec, flush_allowed, out):
    """Fills out's err (NaN for special-value cases), dist (-1 there) and flags (the bits above) for each
    output of cmp (a Compared), with over's errors (Overrides) where given, in the format prec."""
    y, r, yb, rb, v_hi, v_lo, amb = cmp
    over_idx, over_err = over
    emin, p, emax, bits = prec
    err, dist, flags = out
    sign = np.uint64(1) << np.uint64(bits - 1)
    big = math.ldexp(1.0, emax + 1 - 2) if bits == 64 else math.ldexp(1.0, emax + 1)
    tiny = math.ldexp(1.0, emin)
    maxf = math.ldexp(2.0 - math.ldexp(1.0, 1 - p), emax)
    k = 0
    for i in range(y.size):
        yi, ri, hi, lo = y[i], r[i], v_hi[i], v_lo[i]
        ynan, rnan = yi != yi, ri != ri
        f = 0
        nan_mm = ynan != rnan
        inf_mm = math.isinf(hi) and not rnan and not ynan and yi != ri
        # an infinite output where the exact value is a finite value of the format's range: no rounding
        # gives it (DESIGN: an infinity must match; beyond the largest finite value the error formula
        # takes it as 2^(emax+1))
        if (
            math.isinf(yi)
            and not math.isinf(hi)
            and hi == hi
            and (abs(hi) < maxf or (abs(hi) == maxf and lo * hi <= 0))
        ):
            inf_mm = True
        same = yb[i] == rb[i]
        if nan_mm:
            f |= NAN_MM
        if inf_mm:
            f |= INF_MM
        if same:
            f |= SAME_BITS
        if same or (ynan and rnan):
            f |= CORRECT
        if yi == 0 and ri == 0 and (yb[i] & sign) != (rb[i] & sign):
            f |= SIGNED_ZERO_MM
        # the ULP error (ulp.ulp_error)
        if ynan or hi != hi or math.isinf(hi):
            e = np.nan
        else:
            scale = 1.0
            if bits == 64 and (abs(yi) >= 2.0**1020 or abs(hi) >= 2.0**1020):
                scale = 4.0
            yy = math.copysign(big, yi) if math.isinf(yi) else yi / scale
            e = abs((yy - hi / scale) - lo / scale) / (_ulp(hi, lo, amb[i], emin, p) / scale)
        if k < over_idx.size and over_idx[k] == i:
            e = over_err[k]
            k += 1
        if yi == 0 and ri != 0 and abs(ri) < tiny and not (e < 0.75):
            f |= FLUSH
        if same and math.isinf(yi):
            e = 0.0
        if nan_mm or inf_mm or (flush_allowed and (f & FLUSH)):
            e = np.nan
        err[i] = e
        flags[i] = f
        if e != e:
            dist[i] = -1
        else:
            ma, mb = yb[i] & ~sign, rb[i] & ~sign
            if (yb[i] & sign) == (rb[i] & sign):
                d = ma - mb if ma >= mb else mb - ma
            else:
                d = ma + mb
            dist[i] = np.int64(min(d, INT64_MAX))
