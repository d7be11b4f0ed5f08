"""The compiled inner loop of the exhaustive binary32 sweep (numba).

For each input of a block: the correctly rounded reference from the binary64
fast path (decided when the enclosing interval rounds to one binary32 value,
else handed back as undecided), then the same classification and statistics as
stats.float_stats, accumulated in place. tests/test_sweep.py checks the two
agree on the same inputs.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from opcert.jit import numba
from opcert.verify.ulp import HISTOGRAM_EDGES

TOP = 8
MAX32 = 3.4028234663852886e38  # the largest finite binary32, exactly
TWO128 = 2.0**128
TINY32 = 2.0**-126
EDGES = np.array(HISTOGRAM_EDGES)  # the bins of stats.histogram_counts
# easy() writes these edges out (its loop vectorises with one counter per bin)
assert HISTOGRAM_EDGES == (0.0, 0.5, 1.0, 2.0, 4.0, 16.0, 256.0, 65536.0), "update easy() with the new bins"


@numba.njit(cache=True, nogil=True, inline="always")
def next_down(x):
    """np.nextafter(x, -inf) on the bits: numba's nextafter calls libm, which
    was most of this kernel's time (two calls per input; bench/README.md,
    'Figures behind choices in the code')."""
    if x != x or x == -np.inf:
        return x
    if x == 0.0:
        return -5e-324
    b = np.float64(x).view(np.uint64)
    return np.uint64(b - np.uint64(1) if x > 0.0 else b + np.uint64(1)).view(np.float64)


@numba.njit(cache=True, nogil=True, inline="always")
def next_up(x):
    return -next_down(-x)


@numba.njit(cache=True, nogil=True)
def progression(out, start):
    """out[i] = start + i (binary32 bits): a block's inputs, written into a buffer of the target's own."""
    for i in range(out.size):
        out[i] = start + np.uint32(i)


@numba.njit(cache=True, nogil=True)
def signed_zeros(z, out):
    """out[i] = -0.0 where z[i] is -0 (its bits), else +0.0: reference.zero_signs' np.where(np.signbit(z) &
    (z == 0), -0.0, 0.0) in one pass, into out (sweep.zero_signs)."""
    for i in range(z.size):
        out[i] = -0.0 if np.float64(z[i]).view(np.uint64) == np.uint64(0x8000000000000000) else 0.0
    return out


@numba.njit(cache=True, nogil=True)
def is_progression(a, start):
    """Whether a[i] == start + i still, for every i (no early exit: the loop vectorises)."""
    d = np.uint32(0)
    for i in range(a.size):
        d |= a[i] ^ (start + np.uint32(i))
    return d == 0


@numba.njit(cache=True, nogil=True)
def prepare(v, rad, ok):
    """In place, one pass: a radius where the ball is not ok becomes NaN (block and easy
    read it as undecided); returns how many balls are an exact zero (ok, v == 0,
    radius 0), whose sign the caller takes from the standard's formula. (NumPy took
    five passes and two temporaries for this, about 5% of a Tanh chunk.)"""
    zeros = 0
    for i in range(v.size):
        if not ok[i]:
            rad[i] = np.nan
        elif v[i] == 0.0 and rad[i] == 0.0:
            zeros += 1
    return zeros


@numba.njit(cache=True, nogil=True, inline="always")
def _ordinal(b):
    m = np.int64(b & np.uint32(0x7FFFFFFF))
    return -m if (b >> np.uint32(31)) else m


@numba.njit(cache=True, nogil=True)
def _insert(err_arr, bits_arr, e, b):
    k = err_arr.size - 1
    if e < err_arr[k] or (e == err_arr[k] and b >= bits_arr[k]):
        return
    j = k
    while j > 0 and (e > err_arr[j - 1] or (e == err_arr[j - 1] and b < bits_arr[j - 1])):
        err_arr[j] = err_arr[j - 1]
        bits_arr[j] = bits_arr[j - 1]
        j -= 1
    err_arr[j] = e
    bits_arr[j] = b


NOT_KEPT = np.uint32(0xFFFFFFFF)  # in `keep`: no reference kept for the mirrored input (a NaN's bits)


# The kernels' records: a block (the inputs' bits, the target's outputs as binary32 values and bits, the
# reference's ball: midpoint, radius (NaN where undecided), the exact value's sign where known); the references
# at -inf and +inf (bits) and the exact limits there; the worst cases easy() counts below (the 8th error of
# each list, every output and the wrong ones, with its bits); the pass at -m of an odd (scale -1, flip the sign
# bit) or even (1, 0) reference from what the pass at +m kept (easy's keep), with the ball at +m; block's
# accumulators (block_state: counts of n, correctly rounded, NaN, infinity, signed-zero mismatches, flushes; the
# histogram; the worst cases' errors and bits, largest first, and the wrong outputs'; the first input bits of
# each mismatch kind, 2**32 for none; the largest distance in binary32 values, -1 for none).
Block = namedtuple("Block", "xbits yvals ybits v rad sgn")
# the references at -inf and +inf (binary32 bits) with their exact values; r_nan: the reference at a NaN input (NaN,
# or ConstantPow's 1 at exponent 0: Operator.nan_results)
AtInf = namedtuple("AtInf", "r_neg r_pos v_neg v_pos r_nan", defaults=(np.nan,))
Floor = namedtuple("Floor", "top_min top_min_bits topw_min topw_min_bits")
Mirror = namedtuple("Mirror", "kept scale flip")
Tally = namedtuple("Tally", "counts hist top_err top_bits topw_err topw_bits first maxdist")


@numba.njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _ulp_err(vv, e, y):
    """|y - vv| in binary32 ULPs of vv (the binade below for a power of two with a radius), for block and
    easy: 1/ulp is a power of two from vv's exponent field, so multiplying by it is exact."""
    avb = np.float64(abs(vv)).view(np.uint64)
    ex = np.int64((avb >> np.uint64(52)) & np.uint64(0x7FF)) - 1023
    ex = ex - 1 if (e > 0.0) & ((avb & np.uint64(0xFFFFFFFFFFFFF)) == 0) else ex
    inv_u = np.uint64(np.uint64(1023 - (max(ex, -126) - 23)) << np.uint64(52)).view(np.float64)
    return abs(y - vv) * inv_u


@numba.njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _judge(decidable, rb, err, xbit, yb, floor):
    """(correctly rounded, wrong, distance or -1) of an output yb against the reference rb where the
    ball is decidable, below the worst cases kept so far (floor)."""
    top_min, top_min_bits, topw_min, topw_min_bits = floor
    xb = np.int64(xbit)
    mr = np.int64(rb & np.uint32(0x7FFFFFFF))
    my = np.int64(yb & np.uint32(0x7FFFFFFF))
    decided = decidable & ((err < top_min) | ((err == top_min) & (xb >= top_min_bits)))
    same = yb == rb
    # err <= 0.5 follows from the decision; tested so that the count lands in the (0, 0.5] bin by construction
    cr = decided & same & (err <= 0.5)
    # a wrong finite nonzero output (a zero may be a flush, which block counts apart)
    wrong = (
        decided
        & ~same
        & (my > 0)
        & (my < 0x7F800000)
        & (err > 0.5)
        & ((err < topw_min) | ((err == topw_min) & (xb >= topw_min_bits)))
    )
    oy = -my if yb >> np.uint32(31) else my
    orr = -mr if rb >> np.uint32(31) else mr
    d = abs(oy - orr) if wrong else -1
    return cr, wrong, d


@numba.njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _easy_one(xbit, yval, ybit, vv, e, sg, floor):
    """easy()'s test of one input: (correctly rounded, wrong, err, distance or -1, the reference
    kept for the mirrored input or NOT_KEPT); neither is set for an input block must take. Inlined
    into easy() and easy_near()."""
    t = vv - e
    lo = t - (abs(t) * 2.0**-52 + 5e-324)
    t = vv + e
    hi = t + (abs(t) * 2.0**-52 + 5e-324)
    vb = np.float64(vv).view(np.uint64)
    zero = (vv == 0.0) & (e == 0.0)  # an exact zero: block takes it with its sign, as here
    # a ball below half the smallest binary32 subnormal with a known sign: a zero of that sign
    # (the negative tails of Sigmoid, Swish, Softplus, Gelu, Mish), as in block
    tiny = ~zero & (lo >= -(2.0**-150)) & (hi <= 2.0**-150) & (sg != 0)
    r32 = np.float32(lo)
    rb = np.uint32(vb >> np.uint64(32)) & np.uint32(0x80000000) if zero else r32.view(np.uint32)
    rb = (np.uint32(0x80000000) if sg < 0 else np.uint32(0)) if tiny else rb
    mr = rb & np.uint32(0x7FFFFFFF)
    # bitwise & and |: no short-circuit branches, so the loop vectorises. A ball on one side of
    # zero that rounds to a zero is a zero of that sign, as in block.
    decidable = (
        ((xbit & np.uint32(0x7FFFFFFF)) < np.uint32(0x7F800000))
        & (e == e)
        & (zero | tiny | (((lo > 0.0) | (hi < 0.0)) & (r32 == np.float32(hi)) & (mr < np.uint32(0x7F800000))))
    )
    err = _ulp_err(vv, e, np.float64(yval))
    cr, wrong, d = _judge(decidable, rb, err, xbit, ybit, floor)
    # the ball at -x of an odd (or even) reference is this one negated (or the same): the same
    # decision with the sign of r flipped (or not). An exact zero's sign comes from the standard's
    # formula at each sign (run_chunk): block takes it there.
    kept = rb if decidable & ~zero else NOT_KEPT
    return cr, wrong, err, d, kept


@numba.njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _mirror_one(xbit, yval, ybit, vv, e, kept, flip, floor):
    """_easy_one at -x from what it kept at +x: r's sign flipped by flip, the same ball negated (vv)."""
    err = _ulp_err(vv, e, np.float64(yval))
    cr, wrong, d = _judge(kept != NOT_KEPT, kept ^ flip, err, xbit, ybit, floor)
    return cr, wrong, err, d


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _fast_pass(blk, floor, hard, keep, mirror, every_bin):
    """easy()'s loop (every_bin True) and easy_near()'s (every_bin None): (what easy() returns, how many
    wrong outputs are above 2 ULPs). `is None` on an argument is decided when numba compiles: each form
    has one path and no branch (the same branches in a function inlined into the loop kept LLVM from
    vectorising it with keep: bench/README.md, 'Figures behind choices in the code')."""
    xbits, yvals, ybits, v, rad, sgn = blk
    if mirror is not None:
        kept, scale, flip = mirror
    n_cr = 0
    n_exact = 0
    n_wrong = 0
    # wrong outputs above 1, 2, 4, 16, 256 and 65536 ULPs: the histogram's bins are their differences
    # (one compare and add per bin where computing the bin's index first took twice that)
    a1 = a2 = a4 = a16 = a256 = a65536 = 0
    maxd = -1
    for i in range(xbits.size):
        if mirror is None:
            cr, wrong, err, d, k = _easy_one(xbits[i], yvals[i], ybits[i], v[i], rad[i], sgn[i], floor)
            if keep is not None:
                keep[i] = k
        else:
            cr, wrong, err, d = _mirror_one(xbits[i], yvals[i], ybits[i], scale * v[i], rad[i], kept[i], flip, floor)
        hard[i] = not (cr | wrong)
        n_cr += cr
        n_exact += cr & (err == 0.0)
        n_wrong += wrong
        a1 += wrong & (err > 1.0)
        a2 += wrong & (err > 2.0)
        if every_bin is not None:
            a4 += wrong & (err > 4.0)
            a16 += wrong & (err > 16.0)
            a256 += wrong & (err > 256.0)
            a65536 += wrong & (err > 65536.0)
        maxd = max(maxd, d)
    if every_bin is None:
        return (n_cr, n_exact, n_wrong, n_wrong - a1, a1 - a2, 0, 0, 0, 0, 0, maxd), a2
    return (
        n_cr,
        n_exact,
        n_wrong,
        n_wrong - a1,
        a1 - a2,
        a2 - a4,
        a4 - a16,
        a16 - a256,
        a256 - a65536,
        a65536,
        maxd,
    ), a2


@numba.njit(cache=True, nogil=True, error_model="numpy")
def easy(blk, floor, hard, keep=None, mirror=None):
    """The common cases of `block`, without its branches (LLVM vectorises this
    loop, not block's: bench/README.md, 'Figures behind choices in the code'): an
    input whose ball lies strictly on one side of zero and rounds to one finite
    binary32 value r, or is an exact zero r (a radius of 0: its sign is the
    midpoint's, as in block), or lies below half the smallest subnormal with a
    known sign (r is the zero of that sign), where the target's output is either r (the same bits)
    or a finite nonzero value other than r, and whose error is below the worst
    cases kept so far (floor: the 8th of each list, with its bits). Those are
    counted here, as block would count them; hard[i] is set for every other
    input, which block then takes. keep (optional): the reference bits of each
    input for -x, or NOT_KEPT.

    mirror (optional): at -x of an odd or even reference, what the pass at +x
    kept, with blk's ball the one at +x (its sgn is not read): the same counts
    and hard[i] as on the mirrored ball, without rounding the ball again (a
    third of the pass's time at -x).

    Returns (correctly rounded, of which exact, wrong, the histogram's bins 2..8
    for the wrong ones, the largest distance in binary32 values among them).

    The ball is widened by arithmetic, not by stepping on the bits: t - (|t|
    2^-52 + 2^-1074) is at most next_down(t) (it subtracts at least one ULP of
    t, and rounding to nearest is monotone), so a ball decided here is decided
    by block's own test too, with the same value; one it is not sure of goes to
    block. The worst cases: an input below the 8th at the start of the block
    (ties broken by smaller bits, as _insert does) stays below it, as the 8th
    only rises; the kept worst cases are the 8 largest of a total order,
    whatever order the inputs come in."""
    return _fast_pass(blk, floor, hard, keep, mirror, True)[0]


@numba.njit(cache=True, nogil=True, error_model="numpy")
def easy_near(blk, floor, hard, keep=None, mirror=None):
    """easy() with two of the histogram's bins, (0.5, 1] and (1, 2] ULPs, for the
    wrong outputs it takes, and how many of those are above 2 ULPs: where none
    is, the other bins are empty and this is easy()'s answer (the caller runs
    easy() where it is not). A good target's wrong outputs are within 2 ULPs and
    the four counts saved are a fifth of easy()'s time (bench/README.md). (A
    running maximum of the errors instead kept LLVM from vectorising the loop.)"""
    return _fast_pass(blk, floor, hard, keep, mirror, None)


def easy_pass(near: bool, *args) -> tuple[tuple, bool]:
    """easy_near() while near (every wrong output so far within 2 ULPs), easy() from the
    first block where one is not: (what easy() returns, near for the next block)."""
    if near:
        got, beyond = easy_near(*args)
        if not beyond:
            return got, True
    return easy(*args), False


def block_state() -> Tally:
    """block's accumulators as a chunk starts them."""
    return Tally(
        np.zeros(6, np.int64),
        np.zeros(EDGES.size + 1, np.int64),
        np.full(TOP, -1.0),
        np.full(TOP, -1, np.int64),
        np.full(TOP, -1.0),
        np.full(TOP, -1, np.int64),
        np.full(4, 1 << 32, np.int64),
        np.full(1, -1, np.int64),
    )


SAMPLE_STRIDE = 64  # sampled_floor's: a block of 65,536 inputs whose errors only rise sends about 8 x 64 to block


def sampled_floor(blk: Block, at_inf: AtInf, tally: Tally, flush_ok, stride, scale=None) -> Floor:
    """The worst-case thresholds for easy() on this block, raised by a sample of it: the 8th of each of
    tally's lists after block has taken every stride-th input into a copy of them. Every input after
    that 8th in the lists' order (larger error first, then smaller bits) has 8 ahead of it, so it is not
    among the 8 worst: easy() may count it. The 8th's bits are returned plus one, so that a sampled 8th
    itself goes to block, which puts it in the lists (an input the lists already hold is in another
    block: the + 1 passes nobody here). scale (-1 or 1): blk's ball is the one at +m, this block is at
    -m of an odd or even reference (run_chunk's mirror); its exact zeros, whose sign comes from the
    formula, are left out of the sample.

    Why: where the errors rise with the input, as in tanh's binades below 2^-12, each input is a new
    worst case at the time it is seen, and easy() sent every one to block, the slower kernel (Tanh's sweep
    sent 103.8 million inputs to block, 19.8 million with this; bench/README.md, 'Figures behind choices
    in the code'). The lists block then keeps are the same: the 8 largest of a total order, whatever the
    thresholds (easy's docstring). block itself decides the sample, with the arguments of the block's own
    call: no kernel of its own to compile (a first sweep compiles its kernels in every worker)."""
    s = Block(*(a[::stride].copy() for a in blk))
    if scale is not None:
        if scale < 0:
            s = s._replace(v=-s.v, sgn=-s.sgn)  # the signs' own dtype (int8): block's call has it
        s.rad[(s.v == 0.0) & (s.rad == 0.0)] = np.nan  # undecided for block: not in the lists
    lists = block_state()  # scratch, the worst-case lists copied: only those are read back
    for mine, theirs in zip(lists[2:6], tally[2:6]):
        mine[:] = theirs
    block(s, at_inf, lists, np.empty(s.v.size, np.int64), flush_ok, np.arange(s.v.size))
    return Floor(
        lists.top_err[TOP - 1], lists.top_bits[TOP - 1] + 1, lists.topw_err[TOP - 1], lists.topw_bits[TOP - 1] + 1
    )


def take_easy(got, tally: Tally) -> None:
    """Add what easy() counted to block's accumulators."""
    n_cr, n_exact, n_wrong, *bins, maxd = got
    tally.counts[0] += n_cr + n_wrong
    tally.counts[1] += n_cr
    tally.hist[0] += n_exact
    tally.hist[1] += n_cr - n_exact
    tally.hist[2:] += bins
    if n_cr and tally.maxdist[0] < 0:
        tally.maxdist[0] = 0
    tally.maxdist[0] = max(tally.maxdist[0], maxd)


@numba.njit(cache=True, nogil=True, error_model="numpy")
def specials(blk, hard, nan_is_nan):
    """Of the inputs the fast pass left (hard[i] set), those block counts without an error figure, taken
    here and cleared from hard: an output that is the infinity a finite exact value rounds to (the ball's
    ends do: an overflow, as sinh's beyond 89.4), which block counts as correctly rounded and exact (the
    histogram's 0 bin, a distance of 0); and an output that is correct and not measured, which block
    counts as correctly rounded alone: NaN where the exact value is NaN (a NaN midpoint of radius 0: the
    input is outside the domain, as Log's 2^31 negative inputs, the half of Asin's and Acos' and three
    quarters of Acosh's) or the input is NaN, and the infinity of an exact value beyond the largest double
    (an infinite midpoint of radius 0). Neither is a mismatch or a worst case in block, so the order in
    which they are counted does not matter. Returns (how many of the first, of the second). nan_is_nan: a NaN
    input's reference is NaN (else block takes NaN inputs: AtInf.r_nan).

    block took these slowly (its branches); this loop has none and LLVM vectorises it. It runs over the
    whole block (the caller runs it where the fast pass left many inputs): in the fast pass itself, the same
    tests cost every operator's every input a fifth more (bench/fast_pass_block.py; bench/README.md, 'Figures behind choices in the code'). The ball is widened as in easy(): an infinity decided here is block's."""
    xbits, yvals, ybits, v, rad, sgn = blk
    n_inf = 0
    n_unmeasured = 0
    for i in range(xbits.size):
        xbit, ybit, vv, e = xbits[i], ybits[i], v[i], rad[i]
        t = vv - e
        lo = t - (abs(t) * 2.0**-52 + 5e-324)
        t = vv + e
        hi = t + (abs(t) * 2.0**-52 + 5e-324)
        r32 = np.float32(lo)
        finite = (xbit & np.uint32(0x7FFFFFFF)) < np.uint32(0x7F800000)
        xnan = (xbit & np.uint32(0x7FFFFFFF)) > np.uint32(0x7F800000)
        ynan = (ybit & np.uint32(0x7FFFFFFF)) > np.uint32(0x7F800000)
        # a finite midpoint (block leaves an infinite one of radius > 0 undecided), the ends on one side of
        # zero, rounding to one binary32 value, an infinity (of the midpoint's sign)
        ovf = (
            finite
            & (vv - vv == 0.0)
            & ((lo > 0.0) | (hi < 0.0))
            & (r32 == np.float32(hi))
            & ((r32.view(np.uint32) & np.uint32(0x7FFFFFFF)) == np.uint32(0x7F800000))
        )
        exact_inf = finite & (e == 0.0) & (abs(vv) == np.inf)
        nan_ball = finite & (vv != vv) & (e == 0.0)
        inf_bits = np.uint32(np.float64(vv).view(np.uint64) >> np.uint64(32)) & np.uint32(0x80000000)
        same_inf = (ovf | exact_inf) & (ybit == (inf_bits | np.uint32(0x7F800000)))
        h = hard[i]
        inf = h & same_inf & ~exact_inf
        unmeasured = h & ((same_inf & exact_inf) | ((nan_ball | (xnan & nan_is_nan)) & ynan))
        hard[i] = h & ~(inf | unmeasured)
        n_inf += inf
        n_unmeasured += unmeasured
    return n_inf, n_unmeasured


def take_specials(got, tally: Tally) -> None:
    """Add what specials() counted to block's accumulators, as block counts them."""
    n_inf, n_unmeasured = got
    tally.counts[0] += n_inf + n_unmeasured
    tally.counts[1] += n_inf + n_unmeasured
    tally.hist[0] += n_inf
    if n_inf and tally.maxdist[0] < 0:
        tally.maxdist[0] = 0


@numba.njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _round_ball(vv, e, sgn, i):
    """block's reference from a finite input's ball (midpoint vv, radius e; sgn[i]: the exact value's sign
    where known): (r, r's sign), r NaN where the ball does not decide it."""
    if vv == 0.0 and e == 0.0:
        return vv, 1.0 / vv < 0.0  # an exact zero, with its sign
    if e == 0.0 and (vv == np.inf or vv == -np.inf):  # beyond the largest double: that infinity
        return vv, vv < 0.0
    if not (e == e) or not (vv - vv == 0.0):  # undecided, or vv not finite
        return np.nan, False
    # decided when both ends of the ball round to one binary32 value of one sign
    if e > 0.0:
        lo = next_down(vv - e)
        hi = next_up(vv + e)
    else:  # an exact value (a midpoint too): it rounds as it is
        lo = vv
        hi = vv
    r32 = np.float32(lo)
    if lo >= -(2.0**-150) and hi <= 2.0**-150 and sgn[i] != 0:
        r = 0.0  # below half the smallest subnormal: a zero of the known sign
        rneg = sgn[i] < 0
        if rneg:
            r = -0.0
    elif r32 != np.float32(hi) or not (lo > 0.0 or hi < 0.0):
        return np.nan, False
    else:
        r = np.float64(r32)
        rneg = vv < 0.0
        if r == 0.0 and rneg:
            r = -0.0
    return r, rneg


@numba.njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _special(xb, at_inf):
    """block's reference at a NaN or infinite input: (r, r's sign, the exact value, whether it is infinite)."""
    if (xb & np.uint32(0x7FFFFFFF)) > np.uint32(0x7F800000):
        return at_inf.r_nan, False, at_inf.r_nan, False
    rb, lim = (at_inf.r_neg, at_inf.v_neg) if xb >> np.uint32(31) else (at_inf.r_pos, at_inf.v_pos)
    r = np.float64(np.uint32(rb).view(np.float32))
    return r, (rb >> np.uint32(31)) == 1, lim, lim == np.inf or lim == -np.inf


@numba.njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _mismatches(y, yneg, r, rneg, exact_inf, finite):
    """One decided input's special-value mismatches: (the kinds, bit k for block's counts[2 + k]; whether its
    error is not measured). finite: the exact value is within the finite range (an infinite output is a
    mismatch there: classify.classify's rule)."""
    ynan = y != y
    rnan = r != r
    nan_mm = ynan != rnan
    inf_mm = (exact_inf and not rnan and not ynan and y != r) or (
        (y == np.inf or y == -np.inf) and not exact_inf and not rnan and finite
    )
    kinds = (
        nan_mm
        | inf_mm << 1
        | (y == 0.0 and r == 0.0 and yneg != rneg) << 2
        | (y == 0.0 and r != 0.0 and abs(r) < TINY32) << 3
    )
    return kinds, nan_mm or inf_mm or rnan or exact_inf or ynan


@numba.njit(cache=True, nogil=True, inline="always")
def _count(counts, first, kinds, xb):
    """block's counts of the mismatch kinds set in `kinds` (_mismatches), with the first input of each."""
    for k in range(4):
        if kinds >> k & 1:
            counts[2 + k] += 1
            first[k] = min(first[k], np.int64(xb))


@numba.njit(cache=True, nogil=True, error_model="numpy")
def block(blk, at_inf, tally, undecided, flush_ok, only=None):
    """blk: a Block (its ball: NaN radius where undecided); at_inf: the references at +-inf; tally: the
    accumulators (Tally); only: the indices to classify (all when None: opcert's callers pass them, so that
    numba compiles one form of this loop, not two). Returns the number of undecided inputs written to
    `undecided` (indices)."""
    xbits, yvals, ybits, v, rad, sgn = blk
    counts, hist, top_err, top_bits, topw_err, topw_bits, first, maxdist = tally
    # the counters that change on every input live in locals until the end: kept
    # in the arrays, each increment was a load and a store (the arrays may alias)
    n_und = 0
    n_all = 0
    n_cr = 0
    h_zero = 0
    h_half = 0
    top_min = top_err[TOP - 1]
    topw_min = topw_err[TOP - 1]
    m = xbits.size if only is None else only.size
    for j in range(m):
        i = j if only is None else only[j]
        xb = xbits[i]
        y = np.float64(yvals[i])
        mag = xb & np.uint32(0x7FFFFFFF)
        exact_inf = False
        if mag < np.uint32(0x7F800000):
            vv = v[i]
            r, rneg = _round_ball(vv, rad[i], sgn, i)
            if r != r and not (vv != vv and rad[i] == 0.0):  # a NaN ball of radius 0: NaN, decided
                undecided[n_und] = i
                n_und += 1
                continue
            # beyond the largest double: a finite output is an infinity mismatch (its error is at least
            # 2^23 ULPs), not a figure against the ball's infinite midpoint
            exact_inf = vv == np.inf or vv == -np.inf
        else:
            r, rneg, vv, exact_inf = _special(xb, at_inf)
        n_all += 1
        ynan = y != y
        rnan = r != r
        yneg = (ybits[i] >> np.uint32(31)) == 1
        if ynan or rnan:
            same = ynan and rnan
        else:
            same = y == r and yneg == rneg
        if same:
            n_cr += 1
        if ynan or rnan or exact_inf or y == 0.0 or y == np.inf or y == -np.inf:  # where a mismatch can be
            kinds, unmeasured = _mismatches(
                y, yneg, r, rneg, exact_inf, abs(vv) + (rad[i] if mag < np.uint32(0x7F800000) else 0.0) <= MAX32
            )
            if kinds:
                _count(counts, first, kinds, xb)
            if (kinds & 8 and flush_ok) or unmeasured:
                continue
        if same and (y == np.inf or y == -np.inf):
            h_zero += 1  # the correctly rounded result is this infinity: exact
            if maxdist[0] < 0:
                maxdist[0] = 0
            continue
        # a NaN input's reference is exact (its ball is no enclosure of it)
        e_i = rad[i] if mag <= np.uint32(0x7F800000) else 0.0
        err = _ulp_err(vv, e_i, TWO128 if y == np.inf else -TWO128 if y == -np.inf else y)
        if err == 0.0:
            h_zero += 1
        elif err <= 0.5:  # the common case first
            h_half += 1
        else:
            k = 2
            while k < EDGES.size and err > EDGES[k]:
                k += 1
            hist[k] += 1
        if not same:
            d = abs(_ordinal(ybits[i]) - _ordinal(np.float32(r).view(np.uint32)))
            if d > maxdist[0]:
                maxdist[0] = d
        elif maxdist[0] < 0:
            maxdist[0] = 0
        if err >= top_min:
            _insert(top_err, top_bits, err, np.int64(xb))
            top_min = top_err[TOP - 1]
        if not same and err >= topw_min:
            _insert(topw_err, topw_bits, err, np.int64(xb))
            topw_min = topw_err[TOP - 1]
    counts[0] += n_all
    counts[1] += n_cr
    hist[0] += h_zero
    hist[1] += h_half
    return n_und


# ---- the fingerprint of a block's outputs, kept in a chunk's checkpoint (verify.accuracy.sweep.replay_chunk) ----

FINGERPRINT_SCHEME = "opcert.outputs/1"  # (sum w_i y_i, sum y_i, sum i y_i) mod 2^64 per block and sign


def fingerprint_weights(n: int) -> np.ndarray:
    """w_i, i < n: splitmix64(i), made odd. Fixed (the same in every process and run), so that a
    fingerprint written by one run is checked by another."""
    z = np.arange(n, dtype=np.uint64) + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return (z ^ (z >> np.uint64(31))) | np.uint64(1)


@numba.njit(cache=True, nogil=True)
def output_fingerprint(yb, w):
    """(h, m0, m1) of a block's output bits yb (uint32), mod 2^64: h = sum w_i y_i, m0 = sum y_i,
    m1 = sum i y_i. One changed output always changes h (w_i is odd, |delta| < 2^32) and m0; changes at
    several places cancel in h only where sum w_i delta_i = 0 mod 2^64 for pseudo-random w_i (about
    2^-32 or less, whatever the deltas). m0 and m1 locate a single change: delta = m0' - m0, its index
    (m1' - m1) / delta (verify.accuracy.sweep._one_difference). Vectorised, it costs far less than SHA-256 of
    the same bytes (bench/README.md, 'Figures behind choices in the code')."""
    h = np.uint64(0)
    m0 = np.uint64(0)
    m1 = np.uint64(0)
    for i in range(yb.size):
        y = np.uint64(yb[i])
        h += w[i] * y
        m0 += y
        m1 += np.uint64(i) * y
    return h, m0, m1
