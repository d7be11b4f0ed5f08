"""The pair sweep's check of one block, compiled (numba, one thread per value of b).

verify.tensor.pairs states what is checked; this is the same check over 4 million rows of two without a
binary64 temporary per row: in NumPy it cost many times what the call of a runtime costs (bench/README.md,
'Figures behind choices in the code'). The rounded reference of each output comes from
the steps of its rounding as a function of d = a - b (numerics.pair_steps), walked as a rises:
no transcendental function where the target's output is the reference's. Where it is not, the ULP error
takes the binary64 value of the exact output (one exp, and a log1p for LogSoftmax: the primitive table's
functions, expr.primitives). An exact difference is always placed; a rounded one (bfloat16 values far apart)
within a step's wide enclosure leaves its row to verify.tensor.pairs (Arb), flagged in `undecided`. Every
property is checked here on every row, as none of them needs more than the binary64 value of the exact output.

Its state travels as records: Reference and Declared (one per sweep), Found (a block's, a row per value of b).
"""

from __future__ import annotations

import math
from collections import namedtuple

import numpy as np

from opcert.expr import PRIMITIVES
from opcert.expr.ball_ops import compiled
from opcert.jit import numba
from opcert.numerics.errorfree import exact_difference_inline
from opcert.verify.ulp import ulp_inline as _ulp

# counters, one row per value of b
(
    CORRECT,
    SPECIAL_WRONG,
    FLUSHES,
    ZERO_SIGN,
    RANGE_CHECKED,
    RANGE_BAD,
    SUM_CHECKED,
    SUM_BAD,
    MONO_BAD,
    NAN_CHECKED,
    NAN_BAD,
    INF_CHECKED,
    INF_BAD,
    HOT_CHECKED,
    HOT_BAD,
    UNDECIDED,
) = range(16)
N_COUNTS = 16
# the first row (index of a) where each kind went wrong, -1 for none; for monotonicity the step a_i -> a_i+1
FIRST_SPECIAL, FIRST_RANGE, FIRST_SUM, FIRST_MONO, FIRST_NAN, FIRST_INF, FIRST_HOT = range(7)
N_FIRSTS = 7
# which operator (the shape of its pair as a function of d = a - b) and which properties are declared
SOFTMAX, LOG_SOFTMAX, HARDMAX = range(3)
DEV_NAN = 1 << 40  # the distance recorded for a NaN output where a number is due
P_RANGE, P_SUM, P_MONO, P_NAN, P_INF, P_HOT = (1 << k for k in range(6))
NOT_A_NUMBER = np.iinfo(np.int64).max  # _ordinal's value for a NaN

# values: each bit pattern's binary64 value, exp_of its exponential; floor ... stepped: numerics.pair_steps,
# stepped_ord their ordinals (output 1 is output 0 at -d; Hardmax's is 1 - output 0); table[ka + 1, kb + 1, k]:
# the declared output k of a row with infinite entries (kind -1, 0, +1: -inf, finite, +inf), table_bits as bits
Reference = namedtuple("Reference", "values exp_of floor below_wide above_wide stepped stepped_ord table table_bits")
# op: SOFTMAX ...; props: the P_ flags declared; lower, upper: the range; sum_of_y: the row sum is of the
# outputs (else of their exponentials), within sum_bound; max_ulp: the per-output error the bounds allow;
# inf_tol: the distance allowed from a row with infinite entries' declared output; nkeep, n_finite: how many
# of a are numbers, finite ones; inf_bits: the format's +inf as bits
Declared = namedtuple(
    "Declared", "op props p emin lower upper sum_of_y max_ulp inf_tol nkeep inf_bits sum_bound n_finite"
)
# per value of b (row j): counts[j], firsts[j], worst_err[j] / worst_at[j] (2 i + k: the worst output off the
# reference, -1 for none), undecided[j, i], the outputs off the reference: dev_at[j] (2 i + k) and dev_val[j]
# (their signed distance in values of the format; NaN: DEV_NAN) while they hold them, dev_n[j] counting all
Found = namedtuple("Found", "counts firsts worst_err worst_at undecided dev_at dev_val dev_n")

_EXP, _LOG1P = PRIMITIVES["exp"].scalar, PRIMITIVES["log1p"].scalar  # the C library's, as compiled code calls
_EXP_MOVED = compiled(PRIMITIVES["exp"].moved)  # |e^y - e^t| for |y - t| <= w: the record's rule, over scalars


def found(nb: int, na: int, cap: int) -> Found:
    """A block's Found, zeroed: nb values of b, na of a, cap outputs off the reference kept per value of b."""
    return Found(
        np.zeros((nb, N_COUNTS), np.int64),
        np.zeros((nb, N_FIRSTS), np.int64),
        np.zeros(nb),
        np.zeros(nb, np.int64),
        np.zeros((nb, na), np.bool_),
        np.zeros((nb, cap), np.int64),
        np.zeros((nb, cap), np.int64),
        np.zeros(nb, np.int64),
    )


@numba.njit(inline="always", error_model="numpy")
def _exact(op, d):
    """The binary64 values of both outputs of a finite pair at d = a - b, from one e^-|d| (their relative
    error is within verify.tensor.pairs._fast's: what the ULP error of a wrong output is measured against), and
    Softmax's two values (for LogSoftmax, e^m0 and e^m1: its row sum)."""
    if op == HARDMAX:
        v = 1.0 if d >= 0 else 0.0
        return v, 1.0 - v, v, 1.0 - v
    e = _EXP(-abs(d))
    s_near, s_far = 1 / (1 + e), e / (1 + e)  # sigmoid(|d|), sigmoid(-|d|)
    if op == SOFTMAX:
        near, far = s_near, s_far
    else:
        near = -_LOG1P(e)  # -softplus(-|d|), -|d| - softplus(-|d|)
        far = -abs(d) + near
    if d >= 0:
        return near, far, s_near, s_far
    return far, near, s_far, s_near


@numba.njit(inline="always")
def _above(d, d_lo, k, floor, above_wide):
    """Whether the exact difference d + d_lo lies above step k: exactly where d is exact (d_lo = 0), and
    outside the step's wide enclosure where d is rounded (numerics.pair_steps)."""
    return d > floor[k] if d_lo == 0 else d > above_wide[k]


@numba.njit(inline="always")
def _below(d, d_lo, k, floor, below_wide):
    return d <= floor[k] if d_lo == 0 else d < below_wide[k]


@numba.njit(inline="always")
def _kind(v):
    return 1 if v == math.inf else (-1 if v == -math.inf else 0)


@numba.njit(inline="always")
def _ordinal(bits, inf_bits):
    s = np.int64(bits)
    mag = s & 0x7FFF
    if mag > inf_bits:
        return NOT_A_NUMBER
    return -mag if s & 0x8000 else mag


@numba.njit(inline="always")
def _same(y, w):
    return (y == w and math.copysign(1.0, y) == math.copysign(1.0, w)) or (y != y and w != w)


@numba.njit(inline="always", error_model="numpy")
def _errors(i, y, w, same, m, decl):
    """A decided finite row, its outputs finite and not both the reference's, against the exact m: how many
    outputs are correct (the reference's, or within 0.5 ULP), flushed (0 for a subnormal), of the wrong zero's
    sign; the larger ULP error and its output (2 i + k), (-1, -1) where none is measured."""
    correct = flushes = zero_sign = 0
    worst, at = -1.0, -1
    for k in range(2):
        if same[k]:
            correct += 1
            continue
        if y[k] == 0 and w[k] != 0 and abs(w[k]) < 2.0**decl.emin:
            flushes += 1
            continue
        zero_sign += y[k] == 0 and w[k] == 0
        err = abs(y[k] - m[k]) / _ulp(m[k], decl.emin, decl.p)
        correct += err <= 0.5
        if err > worst:
            worst, at = err, 2 * i + k
    return correct, flushes, zero_sign, worst, at


@numba.njit(inline="always")
def _specials(counts, firsts, i, same):
    """A decided row with a special value (in the row, the output or the reference): bit for bit."""
    for k in range(2):
        if same[k]:
            counts[CORRECT] += 1
        else:
            counts[SPECIAL_WRONG] += 1
            if firsts[FIRST_SPECIAL] < 0:
                firsts[FIRST_SPECIAL] = 2 * i + k


@numba.njit(inline="always")
def _deviations(dev_at, dev_val, n_dev, i, bits, o, same, inf_bits):
    """The outputs of a decided finite row off the reference: their signed distance from it in values of the
    format (-0 for +0 is none: zero_sign counts it) into dev_at and dev_val while they hold them. Returns the
    count so far."""
    for k in range(2):
        if same[k]:
            continue
        oy = _ordinal(bits[k], inf_bits)
        dev = DEV_NAN if oy == NOT_A_NUMBER else oy - o[k]
        if dev != 0:
            if n_dev < dev_at.size:
                dev_at[n_dev], dev_val[n_dev] = 2 * i + k, dev
            n_dev += 1
    return n_dev


@numba.njit(inline="always", error_model="numpy")
def _sum_holds(y, bits, exp_of, m, decl):
    """A finite row's sum: of the outputs y within decl.sum_bound of 1, or of their exponentials (exp_of their
    bits) within what max_ulp ULPs from the exact m allow (the exp record's `moved`; e^m is Softmax's)."""
    if decl.sum_of_y:
        return abs(y[0] + y[1] - 1) <= decl.sum_bound
    e = (exp_of[bits[0]], exp_of[bits[1]])
    # the binary64 sum is within 4 ULPs of its own of e^y0 + e^y1 - 1: refuted only beyond
    gap = abs(e[0] + e[1] - 1) - 4 * 2.0**-53 * (e[0] + e[1] + 1)
    bound = 2.0**-61
    for k in range(2):
        w = decl.max_ulp * _ulp(m[k], decl.emin, decl.p)
        bound += 1.001 * _EXP_MOVED(m[2 + k], m[k], w)
    return gap <= bound


@numba.njit(inline="always")
def _infinite_off(bits, declared_bits, same, inf_tol, inf_bits):
    """A row with infinite entries whose output is more than inf_tol values from the declared one (two NaNs
    are the same)."""
    for k in range(2):
        if same[k]:
            continue
        oy, ow = _ordinal(bits[k], inf_bits), _ordinal(declared_bits[k], inf_bits)
        if oy == NOT_A_NUMBER or ow == NOT_A_NUMBER or abs(oy - ow) > inf_tol:
            return True
    return False


@numba.njit(inline="always")
def _falls(ybits, nkeep, inf_bits):
    """Monotonicity in a over the numbers: the steps a_i -> a_i+1 where y_0 fell or y_1 rose, and the first."""
    bad, first = 0, -1
    prev0, prev1 = _ordinal(ybits[0, 0], inf_bits), _ordinal(ybits[0, 1], inf_bits)
    for i in range(nkeep - 1):
        o0, o1 = _ordinal(ybits[i + 1, 0], inf_bits), _ordinal(ybits[i + 1, 1], inf_bits)
        if prev0 > o0 or prev1 < o1:
            bad += 1
            if first < 0:
                first = i
        prev0, prev1 = o0, o1
    return bad, first


@numba.njit(inline="always")
def _failed(counts, firsts, bad, i):
    """A row that breaks the properties of the flags `bad`: counted, and the first such row kept."""
    for flag, col, first in (
        (P_RANGE, RANGE_BAD, FIRST_RANGE),
        (P_SUM, SUM_BAD, FIRST_SUM),
        (P_NAN, NAN_BAD, FIRST_NAN),
        (P_INF, INF_BAD, FIRST_INF),
        (P_HOT, HOT_BAD, FIRST_HOT),
    ):
        if bad & flag:
            counts[col] += 1
            if firsts[first] < 0:
                firsts[first] = i


@numba.njit(inline="always")
def _store(found, j, counts, firsts, rows, decl):
    """The run's counts into found's row j; rows: (all, finite, NaN) rows, which the checked counts follow."""
    n, n_finite, n_nan = rows
    props = decl.props
    counts[RANGE_CHECKED] = 2 * n_finite if props & P_RANGE else 0
    counts[SUM_CHECKED] = n_finite if props & P_SUM else 0
    counts[NAN_CHECKED] = n_nan if props & P_NAN else 0
    counts[INF_CHECKED] = n - n_finite - n_nan if props & P_INF else 0
    counts[HOT_CHECKED] = n - n_nan if props & P_HOT else 0
    found.counts[j, :] = counts
    found.firsts[j, :] = firsts


@numba.njit(cache=True, nogil=True, error_model="numpy")
def check_block(a, bs, ybits, ref, decl, found, j0, j1):
    """Part of one block: every a (increasing, NaNs last; the first decl.nkeep are numbers) against bs[j0:j1].
    ybits[j, i, k]: output k of the row [a[i], bs[j]] as the format's bits. Writes found's row j for bs[j].
    Serial and without the GIL: the caller runs parts in Python threads (verify.tensor.pairs), not in numba's
    threading layer, whose GNU OpenMP pool would make every later worker process a spawn (opcert.workers)."""
    for j in range(j0, j1):
        _run(a, bs[j], ybits[j], ref, decl, found, j)


@numba.njit(nogil=True, error_model="numpy")
def _run(a, b, ybits, ref, decl, found, j):
    """One value of b against every a. The counters a row on the reference or a finite row off it changes are
    locals, kept in registers (in arrays, even this call's own, the loop ran slower: bench/README.md, 'Figures
    behind choices in the code'); a special value or a property broken counts in this call's arrays; the rows
    each property checked are counted by kind."""
    values, exp_of, floor, below, above, stepped, stepped_ord, table, table_bits = ref
    undecided, dev_at, dev_val = found.undecided[j], found.dev_at[j], found.dev_val[j]
    counts, firsts = np.zeros(N_COUNTS, np.int64), np.full(N_FIRSTS, -1, np.int64)
    correct = flushes = zero_sign = n_undecided = n_dev = 0
    worst, worst_i = -1.0, -1
    b_finite, kb, n_steps = math.isfinite(b), _kind(b), floor.size
    k0, k1 = 0, n_steps  # output 0: the first step not below d (d rises with a); output 1 at -d, which
    for i in range(a.size):  # falls: the steps below -d are 0 .. k1 - 1
        x0 = a[i]
        bits = (ybits[i, 0], ybits[i, 1])
        y = (values[bits[0]], values[bits[1]])
        finite = b_finite and math.isfinite(x0)
        nan = b != b or x0 != x0
        d, decided, o, ka = 0.0, True, (0, 0), 0
        if finite:
            d, d_lo = exact_difference_inline(x0, b)
            while k0 < n_steps and _above(d, d_lo, k0, floor, above):
                k0 += 1
            decided = k0 == n_steps or _below(d, d_lo, k0, floor, below)
            if decl.op == HARDMAX:
                w, o = (stepped[k0], 1.0 - stepped[k0]), (stepped_ord[k0], stepped_ord[1 - k0])
            else:
                while k1 > 0 and not _above(-d, -d_lo, k1 - 1, floor, above):
                    k1 -= 1
                decided = decided and (k1 == n_steps or _below(-d, -d_lo, k1, floor, below))
                w, o = (stepped[k0], stepped[k1]), (stepped_ord[k0], stepped_ord[k1])
        else:
            ka = _kind(x0)
            w = (math.nan, math.nan) if nan else (table[ka + 1, kb + 1, 0], table[ka + 1, kb + 1, 1])
        same = (_same(y[0], w[0]), _same(y[1], w[1]))
        undecided[i] = not decided
        m, have_m = (0.0, 0.0, 0.0, 0.0), False
        if not decided:
            n_undecided += 1
        elif same[0] and same[1]:
            correct += 2
        else:
            if finite and math.isfinite(y[0]) and math.isfinite(y[1]) and math.isfinite(w[0]) and math.isfinite(w[1]):
                m, have_m = _exact(decl.op, d), True
                c, f, z, err, at = _errors(i, y, w, same, m, decl)
                correct, flushes, zero_sign = correct + c, flushes + f, zero_sign + z
                if err > worst:
                    worst, worst_i = err, at
            else:
                _specials(counts, firsts, i, same)
            if finite:
                n_dev = _deviations(dev_at, dev_val, n_dev, i, bits, o, same, decl.inf_bits)
        props, bad = decl.props, 0
        if props & P_RANGE and finite and not (decl.lower <= y[0] <= decl.upper and decl.lower <= y[1] <= decl.upper):
            bad |= P_RANGE
        if props & P_SUM and finite:
            if not (have_m or decl.sum_of_y):
                m = _exact(decl.op, d)
            if not _sum_holds(y, bits, exp_of, m, decl):
                bad |= P_SUM
        if props & P_NAN and nan and not (y[0] != y[0] and y[1] != y[1]):
            bad |= P_NAN
        if (
            props & P_INF
            and not (finite or nan)
            and _infinite_off(bits, table_bits[ka + 1, kb + 1], same, decl.inf_tol, decl.inf_bits)
        ):
            bad |= P_INF
        if props & P_HOT and not nan and not (same[0] and same[1]):
            bad |= P_HOT
        if bad:
            _failed(counts, firsts, bad, i)
    if decl.props & P_MONO:
        counts[MONO_BAD], firsts[FIRST_MONO] = _falls(ybits, decl.nkeep, decl.inf_bits)
    counts[CORRECT] += correct
    counts[FLUSHES], counts[ZERO_SIGN], counts[UNDECIDED] = flushes, zero_sign, n_undecided
    n_finite = decl.n_finite if b_finite else 0
    n_nan = a.size if b != b else a.size - decl.nkeep
    _store(found, j, counts, firsts, (a.size, n_finite, n_nan), decl)
    found.worst_err[j], found.worst_at[j], found.dev_n[j] = worst, worst_i, n_dev
