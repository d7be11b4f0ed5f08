"""The float32 sweep decides the cheap special cases without its branchy kernel (sweep_kernel.specials, after the
fast pass): an exact value that is NaN (an input outside the domain, a NaN input) with a NaN output, and an exact
value that rounds to an infinity (an overflow, or beyond the largest double) with that infinity as the output.
block, the slower kernel, took them before: Log's 2^31 negative inputs, the half of Asin's, Acos' and Acosh's inputs
outside their domains, the overflows of Sinh, Cosh and Exp. The counts must be block's own: checked here on balls
built for these cases (direct and mirrored), and on real blocks of the sweep, where no input of those regions may
be left to block."""

import numpy as np
import pytest

import opcert
import opcert.workers
from opcert.spec.attrs import resolve
from opcert.targets import load_target
from opcert.verify.accuracy import sweep, sweep_kernel
from opcert.verify.accuracy.sweep_kernel import (
    TOP,
    AtInf,
    Block,
    Floor,
    Mirror,
    block,
    block_state,
    easy,
    easy_pass,
    sampled_floor,
    specials,
    take_easy,
    take_specials,
)

MAX32 = float(np.finfo(np.float32).max)
HALF_ULP_MAX = 2.0**103  # half the spacing of the binary32 values at the top of the range


def _special_balls(rng, n, mags):
    """Balls and outputs built for the special cases, on inputs of magnitudes mags (some NaN and infinite):
    NaN balls of radius 0 (outside the domain) and of NaN radius (undecided); balls beyond MAX32 (rounding to
    an infinity), across the rounding boundary to infinity (undecided or rounding to MAX32), infinite midpoints
    of radius 0 (beyond the largest double); ordinary balls in between. Outputs: the right value, NaN, either
    infinity, MAX32, the wrong sign."""
    x = mags.view(np.float32).astype(np.float64)
    kind = rng.integers(0, 8, n)
    v = np.tanh(np.nan_to_num(x)) * 3.0
    rad = np.abs(v) * 2.0**-40
    boundary = MAX32 + HALF_ULP_MAX
    # 0: NaN, radius 0 (decided NaN); 1: NaN, NaN radius (undecided)
    v[kind == 0], rad[kind == 0] = np.nan, 0.0
    v[kind == 1], rad[kind == 1] = np.nan, np.nan
    # 2: far beyond MAX32 (rounds to inf); 3: around the boundary to inf (some undecided, some rounding to
    # MAX32 or inf); 4: an infinite midpoint of radius 0
    big = kind == 2
    v[big] = rng.choice([1e39, 3e300, 4e38], big.sum())
    rad[big] = v[big] * rng.choice([0.0, 2.0**-50, 2.0**-30], big.sum())
    near = kind == 3
    v[near] = boundary * (
        1.0 + rng.choice([-1.0, 1.0], near.sum()) * rng.choice([2.0**-60, 2.0**-40, 2.0**-26], near.sum())
    )
    rad[near] = boundary * rng.choice([0.0, 2.0**-52, 2.0**-45], near.sum())
    v[kind == 4], rad[kind == 4] = np.inf, 0.0
    flip = rng.random(n) < 0.5
    v[flip & (kind >= 2) & (kind <= 4)] *= -1.0
    sg = np.sign(np.nan_to_num(v)).astype(np.int8)
    with np.errstate(all="ignore"):
        y = v.astype(np.float32)
        pick = rng.random(n)
        y[pick < 0.15] = np.nan
        y[(pick > 0.15) & (pick < 0.25)] = np.inf
        y[(pick > 0.25) & (pick < 0.3)] = -np.inf
        y[(pick > 0.3) & (pick < 0.35)] = np.float32(MAX32)
        y[(pick > 0.35) & (pick < 0.4)] = -y[(pick > 0.35) & (pick < 0.4)]
    return v, rad, sg, y


def _inputs(rng, n):
    mags = np.sort(rng.integers(0, 1 << 31, n, dtype=np.uint64).astype(np.uint32))
    pick = rng.random(n)
    mags[pick > 0.9] |= np.uint32(0x7F800000)  # infinities, NaNs
    return np.sort(mags)


AT_INF = AtInf(np.uint32(0xFF800000), np.uint32(0x7F800000), -np.inf, np.inf)


def _block_alone_and_split(bits, y, v, rad, sg, order, mirror=None, v_plus=None, sg_plus=None):
    """The state after block alone, after the fast pass then block on what it left, and after the fast pass,
    specials() then block (thresholds as they stand, or raised by a sample), blocks of 1,024 in the given order.
    With mirror (scale, flip): the fast pass at -m from what it kept at +m (balls v_plus, sg_plus; v, sg are
    the mirrored ones, which specials() and block take, as the sweep gives them). Returns the state, how many
    inputs the fast pass took, and how many specials() took."""
    yb = y.view(np.uint32)
    states, taken, special = [], 0, 0
    keep = None
    if mirror is not None:
        keep = np.empty(bits.size, np.uint32)
        with np.errstate(all="ignore"):
            yp = v_plus.astype(np.float32)
        easy(
            Block(bits & np.uint32(0x7FFFFFFF), yp, yp.view(np.uint32), v_plus, rad, sg_plus),
            Floor(-1.0, -1, -1.0, -1),
            np.empty(bits.size, np.bool_),
            keep,
        )
    for split in (False, True, "specials", "sampled specials"):
        st = block_state()
        undecided = []
        near = True
        for k in order:
            s = slice(1024 * k, 1024 * k + 1024)
            und = np.empty(1024, np.int64)
            args = (Block(bits[s], y[s], yb[s], v[s], rad[s], sg[s]), AT_INF, st, und, False)
            if split:
                hard = np.empty(1024, np.bool_)
                tops = Floor(st[2][TOP - 1], st[3][TOP - 1], st[4][TOP - 1], st[5][TOP - 1])
                if mirror is None:
                    fast = (args[0], tops, hard, np.empty(1024, np.uint32))  # keep: as the sweep calls it
                    scale = None
                else:
                    at_plus = Block(bits[s], y[s], yb[s], v_plus[s], rad[s], sg_plus[s])
                    fast = (at_plus, tops, hard, None, Mirror(keep[s], *mirror))
                    scale = mirror[0]
                if split == "sampled specials":
                    tops = sampled_floor(fast[0], AT_INF, st, False, 5, scale)
                    fast = (fast[0], tops, *fast[2:])
                got, near = easy_pass(near, *fast)
                take_easy(got, st)
                left = int(hard.sum())
                assert left == 1024 - got[0] - got[2]
                if split is True:
                    taken += got[0] + got[2]
                else:
                    sp = specials(args[0], hard, True)
                    take_specials(sp, st)
                    assert int(hard.sum()) == left - sp[0] - sp[1]
                    if split == "specials":
                        special += sp[0] + sp[1]
                n_und = block(*args, np.flatnonzero(hard))
            else:
                n_und = block(*args, np.arange(1024))
            undecided += (und[:n_und] + 1024 * k).tolist()
        states.append(([a.tolist() for a in st], sorted(undecided)))
    assert states[0] == states[1] == states[2] == states[3]
    return states[0], taken, special


@pytest.mark.parametrize("seed", range(4))
def test_specials_count_nan_and_infinite_references_as_block_does(seed):
    rng = np.random.default_rng(300 + seed)
    n = 1 << 13
    mags = _inputs(rng, n)
    bits = mags | np.uint32(0x80000000) if seed % 2 else mags
    v, rad, sg, y = _special_balls(rng, n, mags)
    state, taken, special = _block_alone_and_split(bits, y, v, rad, sg, rng.permutation(n // 1024).tolist())
    # specials() took many of the cases the fast pass left, and block still had some (mismatches, undecided)
    assert taken > n // 16 and special > n // 8
    counts = state[0][0]
    assert counts[2] > 0 and counts[3] > 0  # NaN and infinity mismatches stay block's, and are counted
    assert state[0][1][0] > 0  # the exact outputs (infinities among them) in the histogram's 0 bin


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("parity", ["odd", "even"])
def test_specials_at_the_mirrored_sign_count_as_block_does(seed, parity):
    rng = np.random.default_rng(400 + seed)
    n = 1 << 13
    mags = _inputs(rng, n)
    v, rad, sg, _ = _special_balls(rng, n, mags)
    odd = parity == "odd"
    vm, sgm = (-v, -sg) if odd else (v.copy(), sg)
    _, _, _, y = _special_balls(np.random.default_rng(500 + seed), n, mags)  # other outputs at -m
    with np.errstate(all="ignore"):
        right = rng.random(n) < 0.5
        y[right] = vm[right].astype(np.float32)  # and half of them right
    bits = mags | np.uint32(0x80000000)
    mirror = (-1.0 if odd else 1.0, np.uint32(0x80000000 if odd else 0))
    _, taken, special = _block_alone_and_split(
        bits, y, vm, rad, sgm, rng.permutation(n // 1024).tolist(), mirror, v, sg
    )
    assert taken > n // 16 and special > n // 8


def test_specials_take_each_kind_and_leave_the_rest():
    """One input of each kind: which specials() takes (and how it counts them), which it leaves to block."""
    big = 1e39
    rows = [
        # (input bits, midpoint, radius, output bits, taken as: "inf" (exact, in the histogram), "unmeasured", None)
        (0x42C00000, big, 1e20, 0x7F800000, "inf"),  # rounds to +inf, output +inf
        (0x42C00000, -big, 0.0, 0xFF800000, "inf"),  # rounds to -inf, output -inf
        (0x42C00000, big, 1e20, 0xFF800000, None),  # the wrong infinity: block's mismatch
        (0x42C00000, big, 1e20, 0x7F7FFFFF, None),  # MAX32 where the result is inf: block's mismatch
        (0x42C00000, 3.4028235677973366e38, 1e20, 0x7F800000, None),  # the ball straddles the rounding boundary
        (0x42C00000, np.inf, 0.0, 0x7F800000, "unmeasured"),  # beyond the largest double, output +inf
        (0x42C00000, -np.inf, 0.0, 0xFF800000, "unmeasured"),
        (0x42C00000, np.inf, 0.0, 0x7F7FFFFF, None),  # a finite output there: block's mismatch
        (0x42C00000, np.inf, 1.0, 0x7F800000, None),  # an infinite midpoint with a radius: block's (undecided)
        (0xBF800000, np.nan, 0.0, 0x7FC00000, "unmeasured"),  # outside the domain, NaN output
        (0xBF800000, np.nan, 0.0, 0xFFC00001, "unmeasured"),  # any NaN
        (0xBF800000, np.nan, 0.0, 0x00000000, None),  # a number where the value is NaN: block's mismatch
        (0xBF800000, np.nan, np.nan, 0x7FC00000, None),  # an undecided ball: block's (then the exact path)
        (0x7FC00000, 0.0, 0.0, 0x7FC00000, "unmeasured"),  # a NaN input, NaN output
        (0xFF800001, 0.0, 0.0, 0x7FC00000, "unmeasured"),
        (0x7FC00000, 0.0, 0.0, 0x3F800000, None),  # a NaN input, a number out: block's mismatch
        (0x7F800000, 0.0, 0.0, 0x7F800000, None),  # an infinite input: block's (the limits)
        (0x3F800000, 1.5, 0.0, 0x3FC00000, None),  # an ordinary ball: the fast pass's or block's
    ]
    n = len(rows)
    bits = np.array([r[0] for r in rows], np.uint32)
    v = np.array([r[1] for r in rows])
    rad = np.array([r[2] for r in rows])
    yb = np.array([r[3] for r in rows], np.uint32)
    blk = Block(bits, yb.view(np.float32), yb, v, rad, np.sign(np.nan_to_num(v)).astype(np.int8))
    hard = np.ones(n, np.bool_)
    hard[-1] = False  # the fast pass took it: specials() leaves it alone
    # where a NaN input's reference is a number (ConstantPow at exponent 0: AtInf.r_nan), its NaN outputs are
    # block's (mismatches there), not taken here
    nan_in = np.array([(r[0] & 0x7FFFFFFF) > 0x7F800000 for r in rows])
    other = hard.copy()
    specials(blk, other, False)
    got = specials(blk, hard, True)
    want_taken = [r[4] is not None for r in rows]
    assert hard[:-1].tolist() == [not t for t in want_taken[:-1]] and not hard[-1]
    assert other[nan_in].all() and (other[~nan_in] == hard[~nan_in]).all()
    assert got == (sum(r[4] == "inf" for r in rows), sum(r[4] == "unmeasured" for r in rows))
    # as block counts them: correctly rounded; the infinities of finite values exact, the rest not measured
    st, alone = block_state(), block_state()
    take_specials(got, st)
    taken = np.flatnonzero(want_taken)
    assert block(blk, AT_INF, alone, np.empty(n, np.int64), False, taken) == 0
    assert [a.tolist() for a in st] == [a.tolist() for a in alone]


def _cfg(op, lo, hi):
    o = opcert.get_operator(op)
    attrs = resolve(o, None)
    tgt = load_target("opcert")
    return sweep.SweepConfig(
        op,
        "opcert",
        tuple((k, f"{v.numerator}/{v.denominator}") for k, v in attrs.items()),
        None,
        lo,
        hi,
        hi - lo,
        target_fingerprint=tgt.info.fingerprint,
    )


# (operator, magnitudes, the signs where every exact value is NaN or rounds to an infinity, by definition)
REGIONS = [
    ("Log", (0x3F800000, 0x3F820000), [True]),  # log(x) is NaN for every x < 0 (-0 apart: log(-0) = -inf)
    ("Log", (0x7FC00000, 0x7FC20000), [False, True]),  # NaN inputs: NaN
    ("Asin", (0x40000000, 0x40020000), [False, True]),  # asin is NaN for |x| > 1
    ("Acosh", (0x3F000000, 0x3F020000), [False, True]),  # acosh is NaN for x < 1 (both signs here: |x| < 1)
    ("Sinh", (0x42C00000, 0x42C20000), [False, True]),  # |sinh(x)| >= sinh(96) > 2^128: rounds to an infinity
    ("Cosh", (0x44800000, 0x44820000), [False, True]),  # cosh(x) >= cosh(1024): beyond the largest double
    ("Exp", (0x42C00000, 0x42C20000), [False]),  # exp(x) >= exp(96) > 2^128
]


@pytest.mark.parametrize("op, rng, signs", REGIONS, ids=[f"{r[0]}-{r[1][0]:08x}" for r in REGIONS])
def test_the_sweep_sends_no_nan_or_overflowing_input_to_block(op, rng, signs, monkeypatch):
    """On the sweep's own blocks (two of 65,536 magnitudes per sign), at the signs where the definition makes
    every exact value NaN or beyond the binary32 range, no input goes to block: opcert's outputs there are NaN or
    that infinity (checked against the definition too), which the fast pass and specials() decide."""
    monkeypatch.setattr(opcert.workers, "_IN_WORKER", True)
    cfg = _cfg(op, *rng)
    left = {False: 0, True: 0}  # the inputs given to block per sign, its calls on the sample of a block apart
    real = sweep_kernel.block

    def counting(blk, at_inf, tally, undecided, flush_ok, only=None):
        if only is not None and blk.xbits.size == cfg.block:
            left[bool(blk.xbits[0] >> 31)] += only.size
        return real(blk, at_inf, tally, undecided, flush_ok, only)

    monkeypatch.setattr(sweep_kernel, "block", counting)
    chunk = sweep._Chunk(cfg, 0)
    ys = {}
    real_call = sweep._call_block

    def keeping(cfg_, tgt, op_, attrs, b0, b1, negative):
        y = real_call(cfg_, tgt, op_, attrs, b0, b1, negative)
        ys.setdefault(negative, []).append(y.copy())
        return y

    monkeypatch.setattr(sweep, "_call_block", keeping)
    for b0 in range(chunk.lo, chunk.hi, cfg.block):
        chunk.run_block(b0, min(b0 + cfg.block, chunk.hi))
    data = chunk.result()
    n = rng[1] - rng[0]
    mags = np.arange(*rng, dtype=np.uint64).astype(np.uint32)
    for negative in signs:
        x = (mags | np.uint32(0x80000000) if negative else mags).view(np.float32).astype(np.float64)
        y = np.concatenate(ys[negative]).astype(np.float64)
        with np.errstate(all="ignore"):
            exact = {
                "Log": np.log,
                "Asin": np.arcsin,
                "Acosh": np.arccosh,
                "Sinh": np.sinh,
                "Cosh": np.cosh,
                "Exp": np.exp,
            }[op](x)
        # the definition: NaN, or beyond the binary32 range (the binary64 value overflows binary32, or binary64)
        assert (np.isnan(exact) | (np.abs(exact) > MAX32 + HALF_ULP_MAX)).all()
        same = (np.isnan(exact) & np.isnan(y)) | (np.isinf(y) & (np.sign(y) == np.sign(exact)))
        assert same.all(), (op, negative)
        assert left[negative] == 0, (op, negative, left)
    assert data["stats"]["n"] == 2 * n
