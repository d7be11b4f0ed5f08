"""The pair sweep's check of one block, compiled (numba, one thread per value of b).

verify.tensor.pairs states what is checked; this is the same check over 4 million rows of two without a
binary64 temporary per row: in NumPy it took 3.5 s a block, 60 minutes for the 2^32 pairs of a 16-bit
format, twenty times what the call of a runtime costs. The rounded reference of each output comes from
the steps of its rounding as a function of d = a - b (verify.tensor.pairs._thresholds), walked as a rises:
no transcendental function where the target's output is the reference's. Where it is not, the ULP error
takes the binary64 value of the exact output (one exp, and a log1p for LogSoftmax). An exact difference is
always placed; a rounded one (bfloat16 values far apart) within a step's wide enclosure leaves its row to
verify.tensor.pairs (Arb), flagged in `undecided`. Every property is checked here on every row, as none of
them needs more than the binary64 value of the exact output.
"""
from __future__ import annotations

import math

from opcert.jit import numba
import numpy as np

from opcert.verify.ulp import ulp_inline as _ulp

# counters, one row per value of b
CORRECT, SPECIAL_WRONG, FLUSHES, ZERO_SIGN, RANGE_CHECKED, RANGE_BAD, SUM_CHECKED, SUM_BAD, MONO_BAD, \
    NAN_CHECKED, NAN_BAD, INF_CHECKED, INF_BAD, HOT_CHECKED, HOT_BAD, UNDECIDED = range(16)
N_COUNTS = 16
# the first row (index of a) where each kind went wrong, -1 for none; for monotonicity the step a_i -> a_i+1
FIRST_SPECIAL, FIRST_RANGE, FIRST_SUM, FIRST_MONO, FIRST_NAN, FIRST_INF, FIRST_HOT = range(7)
N_FIRSTS = 7
# which operator (the shape of its pair as a function of d = a - b) and which properties are declared
SOFTMAX, LOG_SOFTMAX, HARDMAX = range(3)
DEV_NAN = 1 << 40      # the distance recorded for a NaN output where a number is due
P_RANGE, P_SUM, P_MONO, P_NAN, P_INF, P_HOT = (1 << k for k in range(6))


def exact_difference(a, b):
    """(d, d_lo): a - b rounded, and what the rounding left out (TwoSum: d + d_lo = a - b exactly; not 0 only
    for bfloat16 values far apart). Plain arithmetic: NumPy arrays in verify.tensor.pairs, compiled here."""
    d = a - b
    z = d - a
    return d, (a - (d - z)) - (b + z)


_exact_difference = numba.njit(inline="always")(exact_difference)


@numba.njit(inline="always", error_model="numpy")
def _exact(op, d):
    """The binary64 values of both outputs of a finite pair at d = a - b, from one e^-|d| (their relative
    error is within verify.tensor.pairs._fast's: what the ULP error of a wrong output is measured against), and
    Softmax's two values (for LogSoftmax, e^m0 and e^m1: its row sum)."""
    if op == HARDMAX:
        v = 1.0 if d >= 0 else 0.0
        return v, 1.0 - v, v, 1.0 - v
    e = math.exp(-abs(d))
    s_near, s_far = 1 / (1 + e), e / (1 + e)              # sigmoid(|d|), sigmoid(-|d|)
    if op == SOFTMAX:
        near, far = s_near, s_far
    else:
        near = -math.log1p(e)                             # -softplus(-|d|), -|d| - softplus(-|d|)
        far = -abs(d) + near
    if d >= 0:
        return near, far, s_near, s_far
    return far, near, s_far, s_near


@numba.njit(inline="always")
def _above(d, d_lo, k, floor, above_wide):
    """Whether the exact difference d + d_lo lies above step k: exactly where d is exact (d_lo = 0), and
    outside the step's wide enclosure where d is rounded (verify.tensor.pairs._thresholds)."""
    return d > floor[k] if d_lo == 0 else d > above_wide[k]


@numba.njit(inline="always")
def _below(d, d_lo, k, floor, below_wide):
    return d <= floor[k] if d_lo == 0 else d < below_wide[k]


@numba.njit(inline="always")
def _ordinal(bits, inf_bits):
    s = np.int64(bits)
    mag = s & 0x7FFF
    if mag > inf_bits:
        return np.iinfo(np.int64).max
    return -mag if s & 0x8000 else mag


@numba.njit(inline="always")
def _same(y, w):
    return (y == w and math.copysign(1.0, y) == math.copysign(1.0, w)) or (y != y and w != w)


@numba.njit(parallel=True, cache=True, nogil=True, error_model="numpy")
def check_block(a, bs, ybits, values, exp_of, op, props, p, emin, floor, below_wide, above_wide, stepped,
                stepped_ord, table, table_bits, lower, upper, sum_of_y, max_ulp, inf_tol, nkeep, inf_bits, counts,
                firsts, worst_err, worst_at, undecided, dev_at, dev_val, dev_n):
    """One block: every a (increasing, NaNs last; the first nkeep are numbers) against every b in bs.
    ybits[j, i, k]: output k of the row [a[i], bs[j]] as the format's bits; values: each bit pattern's
    binary64 value, exp_of its exponential (binary64, within 1 ULP). floor, below_wide, above_wide and
    stepped: verify.tensor.pairs._thresholds, stepped_ord the ordinals of stepped (output 1 is output 0 at -d;
    Hardmax's output 1 is 1 - output 0). table[ka + 1, kb + 1, k]: the declared output k of a row with
    infinite entries (kind -1, 0, +1 for -inf, finite, +inf), table_bits the same as the format's bits.
    Writes counts[j], firsts[j], worst_err[j] / worst_at[j] (2 i + k: the worst output that is not the
    reference's, -1 where every one is), undecided[j, i] and the outputs off the reference (_run)."""
    for j in numba.prange(bs.size):
        _run(a, bs[j], ybits[j], values, exp_of, op, props, p, emin, floor, below_wide, above_wide, stepped,
             stepped_ord, table, table_bits, lower, upper, sum_of_y, max_ulp, inf_tol, nkeep, inf_bits, counts[j],
             firsts[j], worst_err[j:j + 1], worst_at[j:j + 1], undecided[j], dev_at[j], dev_val[j], dev_n[j:j + 1])


@numba.njit(nogil=True, error_model="numpy")
def _run(a, b, ybits, values, exp_of, op, props, p, emin, floor, below_wide, above_wide, r, r_ord, table,
         table_bits, lower, upper, sum_of_y, max_ulp, inf_tol, nkeep, inf_bits, counts, firsts, worst_err, worst_at,
         undecided, dev_at, dev_val, dev_n):
    """One value of b against every a. The counters are locals (through the arrays they were not kept in
    registers), and a row whose outputs are the reference's takes no transcendental function. Every output of a
    finite row that is not the reference's goes to dev_at (2 i + k) and dev_val (its signed distance in
    values of the format from the reference's; NaN: DEV_NAN) while they hold it; dev_n counts them all."""
    na = a.size
    n_steps = floor.size
    sum_bound = max_ulp * 2.0 ** (1 - p) + 2 * max_ulp * 2.0 ** (emin - p + 1)
    smallest_normal = 2.0 ** emin
    correct = special_wrong = flushes = zero_sign = n_undecided = 0
    range_checked = range_bad = sum_checked = sum_bad = nan_checked = nan_bad = 0
    inf_checked = inf_bad = hot_checked = hot_bad = mono_bad = 0
    f_special = f_range = f_sum = f_nan = f_inf = f_hot = f_mono = -1
    worst, worst_i = -1.0, -1
    b_finite = math.isfinite(b)
    b_nan = b != b
    kb = 1 if b == math.inf else (-1 if b == -math.inf else 0)
    n_dev = 0
    cap = dev_at.size
    k0 = 0               # output 0: the first step not below d (d rises with a)
    k1 = n_steps         # output 1 at -d, which falls: the steps below -d are 0 .. k1 - 1
    for i in range(na):
        x0 = a[i]
        y0 = values[ybits[i, 0]]
        y1 = values[ybits[i, 1]]
        ka = 0
        o0 = o1 = 0
        finite = b_finite and math.isfinite(x0)
        nan = b_nan or x0 != x0
        decided = True
        if finite:
            d, d_lo = _exact_difference(x0, b)
            while k0 < n_steps and _above(d, d_lo, k0, floor, above_wide):
                k0 += 1
            decided = k0 == n_steps or _below(d, d_lo, k0, floor, below_wide)
            w0 = r[k0]
            o0 = r_ord[k0]
            if op == HARDMAX:
                w1 = 1.0 - w0
                o1 = r_ord[1 - k0]
            else:
                while k1 > 0 and not _above(-d, -d_lo, k1 - 1, floor, above_wide):
                    k1 -= 1
                decided = decided and (k1 == n_steps or _below(-d, -d_lo, k1, floor, below_wide))
                w1 = r[k1]
                o1 = r_ord[k1]
        elif nan:
            w0 = w1 = math.nan
        else:
            ka = 1 if x0 == math.inf else (-1 if x0 == -math.inf else 0)
            w0, w1 = table[ka + 1, kb + 1, 0], table[ka + 1, kb + 1, 1]
        same0, same1 = _same(y0, w0), _same(y1, w1)
        undecided[i] = not decided
        m0 = m1 = s0 = s1 = 0.0
        have_m = False
        if not decided:
            n_undecided += 1
        elif same0 and same1:
            correct += 2
        elif finite and math.isfinite(y0) and math.isfinite(y1) and math.isfinite(w0) and math.isfinite(w1):
            m0, m1, s0, s1 = _exact(op, d)
            have_m = True
            for k in range(2):
                y, w, m, same = (y0, w0, m0, same0) if k == 0 else (y1, w1, m1, same1)
                if same:
                    correct += 1
                    continue
                if y == 0:
                    if w != 0 and abs(w) < smallest_normal:
                        flushes += 1
                        continue
                    if w == 0:
                        zero_sign += 1
                err = abs(y - m) / _ulp(m, emin, p)
                if err <= 0.5:
                    correct += 1
                if err > worst:
                    worst, worst_i = err, 2 * i + k
        else:                       # a special value in the row, the output or the reference: bit for bit
            for k in range(2):
                if same0 if k == 0 else same1:
                    correct += 1
                else:
                    special_wrong += 1
                    if f_special < 0:
                        f_special = 2 * i + k
        if finite and decided and not (same0 and same1):
            for k in range(2):
                if same0 if k == 0 else same1:
                    continue
                oy = _ordinal(ybits[i, k], inf_bits)
                dev = DEV_NAN if oy == np.iinfo(np.int64).max else oy - (o0 if k == 0 else o1)
                if dev != 0:                 # -0 for +0 is no distance (counted apart: zero_sign)
                    if n_dev < cap:
                        dev_at[n_dev], dev_val[n_dev] = 2 * i + k, dev
                    n_dev += 1
        if props & P_RANGE and finite:
            range_checked += 2
            if (y0 != y0 or y0 < lower or y0 > upper) or (y1 != y1 or y1 < lower or y1 > upper):
                range_bad += 1
                if f_range < 0:
                    f_range = i
        if props & P_SUM and finite:
            sum_checked += 1
            if sum_of_y:
                ok = abs(y0 + y1 - 1) <= sum_bound
            else:
                if not have_m:
                    m0, m1, s0, s1 = _exact(op, d)
                e0, e1 = exp_of[ybits[i, 0]], exp_of[ybits[i, 1]]
                # the binary64 sum is within 4 ULPs of its own of e^y0 + e^y1 - 1: refuted only beyond
                gap = abs(e0 + e1 - 1) - 4 * 2.0 ** -53 * (e0 + e1 + 1)
                bound = 2.0 ** -61
                for k in range(2):        # |e^y - e^m| <= e^m expm1(w) for |y - m| <= w: e^m is Softmax's
                    m, em = (m0, s0) if k == 0 else (m1, s1)
                    w = max_ulp * _ulp(m, emin, p)
                    g = math.expm1(w)
                    bound += 1.001 * (em * g if math.isfinite(g) else math.exp(m + w))
                ok = gap <= bound
            if not ok:
                sum_bad += 1
                if f_sum < 0:
                    f_sum = i
        if props & P_NAN and nan:
            nan_checked += 1
            if not (y0 != y0 and y1 != y1):
                nan_bad += 1
                if f_nan < 0:
                    f_nan = i
        if props & P_INF and not finite and not nan:
            inf_checked += 1
            bad = False
            for k in range(2):
                if same0 if k == 0 else same1:
                    continue
                oy = _ordinal(ybits[i, k], inf_bits)
                ow = _ordinal(table_bits[ka + 1, kb + 1, k], inf_bits)
                nan_y, nan_w = oy == np.iinfo(np.int64).max, ow == np.iinfo(np.int64).max
                if nan_y or nan_w or abs(oy - ow) > inf_tol:     # two NaNs are the same
                    bad = True
            if bad:
                inf_bad += 1
                if f_inf < 0:
                    f_inf = i
        if props & P_HOT and not nan:
            hot_checked += 1
            if not (same0 and same1):
                hot_bad += 1
                if f_hot < 0:
                    f_hot = i
    if props & P_MONO:
        prev0, prev1 = _ordinal(ybits[0, 0], inf_bits), _ordinal(ybits[0, 1], inf_bits)
        for i in range(nkeep - 1):
            o0, o1 = _ordinal(ybits[i + 1, 0], inf_bits), _ordinal(ybits[i + 1, 1], inf_bits)
            if prev0 > o0 or prev1 < o1:          # y_0 fell or y_1 rose as a rose
                mono_bad += 1
                if f_mono < 0:
                    f_mono = i
            prev0, prev1 = o0, o1
    counts[CORRECT], counts[SPECIAL_WRONG], counts[FLUSHES], counts[ZERO_SIGN] = correct, special_wrong, flushes, \
        zero_sign
    counts[RANGE_CHECKED], counts[RANGE_BAD], counts[SUM_CHECKED], counts[SUM_BAD] = range_checked, range_bad, \
        sum_checked, sum_bad
    counts[MONO_BAD], counts[NAN_CHECKED], counts[NAN_BAD], counts[INF_CHECKED] = mono_bad, nan_checked, nan_bad, \
        inf_checked
    counts[INF_BAD], counts[HOT_CHECKED], counts[HOT_BAD], counts[UNDECIDED] = inf_bad, hot_checked, hot_bad, \
        n_undecided
    firsts[FIRST_SPECIAL], firsts[FIRST_RANGE], firsts[FIRST_SUM], firsts[FIRST_MONO] = f_special, f_range, f_sum, \
        f_mono
    firsts[FIRST_NAN], firsts[FIRST_INF], firsts[FIRST_HOT] = f_nan, f_inf, f_hot
    worst_err[0], worst_at[0] = worst, worst_i
    dev_n[0] = n_dev
