"""Two shortcuts of the float32 sweep's reference, each computing the values it replaces:

- the compiled ball's primitive values over a block wholly outside the function's domain are the NaN the function
  gives there, filled without the call (numerics.ball_compiled.primitive_values): NumPy's loops are slow there;
- the sign of an exact zero is taken from the formula's compiled loops (verify.accuracy.sweep.zero_signs), not from
  NumPy's pass per node (spec.reference.zero_signs)."""

import math

import numpy as np
import pytest
from conftest import first_of_each_kind

import opcert
import opcert.workers
from opcert.expr.primitives import binary64_array
from opcert.numerics import ball_compiled
from opcert.spec import reference
from opcert.spec.attrs import resolve
from opcert.targets import load_target
from opcert.verify.accuracy import sweep

# (primitive, arguments wholly outside its domain, arguments that touch its domain's ends)
OUTSIDE = [
    ("log", -np.geomspace(1e-300, 1e300, 4096), np.linspace(-1.0, -0.0, 4096)),
    ("log1p", -np.geomspace(1.0 + 2.0**-52, 1e300, 4096), np.linspace(-3.0, -1.0, 4096)),
    ("sqrt", -np.geomspace(1e-300, 1e300, 4096), np.linspace(-1.0, -0.0, 4096)),
    ("asin", np.geomspace(1.0 + 2.0**-52, 1e300, 4096), np.linspace(1.0, 3.0, 4096)),
    ("acos", -np.geomspace(1.0 + 2.0**-52, 1e300, 4096), np.linspace(-3.0, -1.0, 4096)),
    ("atanh", np.geomspace(1.0 + 2.0**-52, 1e300, 4096), np.linspace(1.0, 3.0, 4096)),
    ("acosh", np.linspace(-1e300, 1.0 - 2.0**-53, 4096), np.linspace(0.0, 1.0, 4096)),
]


@pytest.mark.parametrize("name, outside, edge", OUTSIDE, ids=[c[0] for c in OUTSIDE])
def test_a_block_outside_the_domain_is_filled_with_the_functions_nan(name, outside, edge, monkeypatch):
    f = binary64_array(name)[0]
    with np.errstate(all="ignore"):
        want_out, want_edge = f(outside), f(edge)
        with_inf = np.concatenate([outside, [-np.inf if outside[0] < 0 else np.inf]])
        want_inf = f(with_inf)
    # by the definition (IEEE's invalid operation): NaN outside the domain; not all NaN at its ends
    assert np.isnan(want_out).all() and np.isnan(want_inf).all() and not np.isnan(want_edge).all()
    calls = []

    def counting(a, out=None):
        calls.append(a.size)
        return f(a, out=out)

    monkeypatch.setattr(ball_compiled, "binary64_array", lambda n: (counting, 4, True))
    for a, want, filled in ((outside, want_out, True), (with_inf, want_inf, True), (edge, want_edge, False)):
        calls.clear()
        with np.errstate(all="ignore"):
            got = ball_compiled.primitive_values(name, a, np.empty(a.size))
        assert np.array_equal(got.view(np.uint64), want.view(np.uint64)), name  # NaN's bits too
        assert calls == ([1] if filled else [a.size])
    # a NaN argument: the call takes the block
    calls.clear()
    with np.errstate(all="ignore"):
        a = outside.copy()
        a[7] = np.nan
        ball_compiled.primitive_values(name, a, np.empty(a.size))
    assert calls == [a.size]


@pytest.mark.parametrize("op", ["Log", "Asin", "Acos", "Acosh", "Atanh", "Sqrt", "Softplus"])
def test_the_filled_ball_is_the_computed_one(op, monkeypatch):
    """The compiled ball over sweep blocks outside the domain (and across its ends), with the fill and without:
    the same balls, bit for bit (a NaN midpoint's bits apart)."""
    o = opcert.get_operator(op)
    form = o.reference_form(None)
    a = {k: float(v) for k, v in resolve(o, None).items()}
    ev = ball_compiled.compiled(form, a)
    blocks = []
    for start in (0x3F000000, 0x3F800000, 0x40000000, 0x7F000000):
        for sign in (0, 0x80000000):
            bits = np.arange(start, start + 4096, dtype=np.uint64).astype(np.uint32) | np.uint32(sign)
            blocks.append(bits.view(np.float32).astype(np.float64))
    filled = [[np.array(v, copy=True) for v in ev(x)] for x in blocks]
    monkeypatch.setattr(ball_compiled, "NAN_OUTSIDE", {})
    for x, got in zip(blocks, filled):
        want = ev(x)
        for part, g, w in zip(("midpoint", "radius", "ok", "sign"), got, want):
            w = np.asarray(w)
            same = (g == w) | (np.isnan(g) & np.isnan(w)) if part in ("midpoint", "radius") else g == w
            if part == "radius":
                same &= np.signbit(g) == np.signbit(w)
            assert same.all(), (op, part, x[~same][:3])


def _float32_sample():
    rng = np.random.default_rng(11)
    bits = rng.integers(0, 1 << 32, 3000, dtype=np.uint64).astype(np.uint32)
    small = (rng.integers(0, 1 << 31, 1000, dtype=np.uint64).astype(np.uint32) % np.uint32(0x3F800000)) | (
        rng.integers(0, 2, 1000, dtype=np.uint64).astype(np.uint32) << np.uint32(31)
    )
    special = np.array([0, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0x3F000000, 0xBF000000], np.uint32)
    with np.errstate(invalid="ignore"):
        return np.concatenate([bits, small, special]).view(np.float32).astype(np.float64)


CASES = [(op.name, std.key) for op in opcert.operators() for std in op.standards]


def _formula_kinds(case) -> frozenset:
    return frozenset(n.op for n in opcert.get_operator(case[0]).standard(case[1]).formula.nodes())


# CI: the formulas that bring a kind of node (conftest.first_of_each_kind: the compiled formula's zero sign is
# IEEE arithmetic node by node); every operator and standard in the slow run
_CI_CASES = first_of_each_kind([(c, _formula_kinds(c)) for c in CASES])


@pytest.mark.parametrize(
    "name, standard",
    [pytest.param(*c, marks=() if c in _CI_CASES else [pytest.mark.slow]) for c in CASES],
    ids=[f"{n}-{s}" for n, s in CASES],
)
def test_zero_signs_from_the_compiled_formula_are_the_references(name, standard):
    """sweep.zero_signs against spec.reference.zero_signs, bit for bit, on every operator and standard (their
    default attributes), on inputs of every magnitude, small ones (Round's zeros) and special values."""
    op = opcert.get_operator(name)
    formula = op.standard(standard).formula
    a64 = {k: float(v) for k, v in resolve(op, None, standard=standard).items()}
    x = _float32_sample()
    want = reference.zero_signs(formula, x, a64)
    got = sweep.zero_signs(formula, x, a64)
    assert np.array_equal(got.view(np.uint64), want.view(np.uint64)), name
    out = np.full(x.size, 5.0)
    assert sweep.zero_signs(formula, x, a64, out) is out
    assert np.array_equal(out.view(np.uint64), want.view(np.uint64)), name


@pytest.mark.slow  # CI's 8 minutes: every operator's zero signs are compared in CI by the test above
def test_round_takes_its_zero_signs_from_the_compiled_formula_in_the_sweep(monkeypatch):
    """Round's blocks below 0.5 are exact zeros: the sweep's chunk there asks sweep.zero_signs, and NumPy's
    reference.zero_signs is not called; the chunk is the one computed with reference.zero_signs."""
    monkeypatch.setattr(opcert.workers, "_IN_WORKER", True)
    tgt = load_target("opcert")
    cfg = sweep.SweepConfig(
        "Round", "opcert", (), None, 0x3E000000, 0x3E020000, 1 << 17, target_fingerprint=tgt.info.fingerprint
    )
    calls = []
    real = reference.zero_signs

    def spy(*args):
        calls.append(args[1].size)
        return real(*args)

    monkeypatch.setattr(reference, "zero_signs", spy)
    fast = sweep.run_chunk(cfg, 0)
    assert calls == []
    monkeypatch.setattr(sweep, "ZERO_SIGNS_COMPILED", math.inf)
    sweep._CACHE.clear()
    slow = sweep.run_chunk(cfg, 0)
    assert calls and sum(calls) == 2 * (cfg.stop - cfg.start)  # every input is an exact zero, at both signs
    for k in ("sha256", "elapsed_s"):
        fast.pop(k)
        slow.pop(k)
    assert fast == slow


def _blocks(starts, n=4096):
    out = []
    for start in starts:
        for sign in (0, 0x80000000):
            bits = np.arange(start, start + n, dtype=np.uint64).astype(np.uint32) | np.uint32(sign)
            with np.errstate(invalid="ignore"):
                out.append(bits.view(np.float32).astype(np.float64))
    return out


# Round's regions: zeros and subnormals, below 2^-29 (x + 1/2 not exact: a radius), across 2^-29, to 1/2, its ties
# from 1/2 to 2^23, integers to 2^52 and beyond, the largest values, infinities and NaNs; a block across 2^-29
# (0x30ffe000: half its inputs take the default code in the radius-0 kernel's second loop)
STARTS = (0, 0x00400000, 0x30000000, 0x30FFE000, 0x31000000, 0x3E000000, 0x3F000000, 0x4AFFF000, 0x5A000000, 0x7F7FF000)


# CI: Round, whose form has every arithmetic node of the other candidates' (LeakyRelu's product, Shrink's sum,
# difference and negation) and every kind of block, and Sign, which has none; the slow run takes the other two
# (each radius-0 kernel compiles on its own on a fresh clone, for nothing Round's does not already exercise)
@pytest.mark.parametrize(
    "name",
    [
        "Round",
        pytest.param("LeakyRelu", marks=pytest.mark.slow),
        "Sign",
        pytest.param("Shrink", marks=pytest.mark.slow),
    ],
)
def test_the_radius_zero_kernel_gives_the_default_kernels_balls(name):
    """source(zero=True): the radius-0 code where every radius is +0, the default code elsewhere; the same
    balls and misses as the default kernel, bit for bit, on every kind of block (Round's radius-0 code takes
    all of some blocks, none of others, part of one)."""
    op = opcert.get_operator(name)
    form = op.reference_form(None)
    a = {k: float(v) for k, v in resolve(op, None).items()}
    default, pre = ball_compiled.source(form, a)
    zero, zpre = ball_compiled.source(form, a, zero=True)
    # Sign's form has no arithmetic node: nothing to check (its radius-0 code is the default code)
    assert zpre == pre and "def ball_full(" in zero and ("zz = zz & " in zero) == (name != "Sign")
    kd, kz = ball_compiled._load(default), ball_compiled._load(zero)
    again_seen = set()
    for x in _blocks(STARTS):
        n = x.size
        outs = []
        for k in (kd, kz):
            pa, pv = ball_compiled._midpoints(pre, x, a, form)
            o = (np.empty(n), np.empty(n), np.empty(n, np.bool_), np.empty(n, np.int8), np.empty(n, np.bool_))
            got = int(k(x, pa.copy(), pv.copy(), *o))
            outs.append((got, o))
        (n_miss, want), (packed, got) = outs
        assert packed & 0xFFFFFFFF == n_miss
        again_seen.add(0 if packed >> 32 == 0 else 2 if packed >> 32 == n else 1)
        for g, w in zip(got, want):
            assert np.array_equal(g.view(np.uint8), w.view(np.uint8)), (name, x[0])
    if name == "Round":
        assert again_seen == {0, 1, 2}  # blocks wholly of radius 0, wholly not, and mixed


@pytest.mark.slow  # CI's 8 minutes: the radius-0 kernel's balls are compared in CI by test_the_radius_zero_kernel_gives_the_default_kernels_balls
def test_the_radius_zero_kernel_is_taken_block_by_block_with_the_same_balls(monkeypatch):
    """compiled() with the radius-0 kernel kept (here whatever it saves): blocks in a sweep's order give the
    balls of the default kernel; the blocks below 2^-29 send it to the default kernel for a while (_ZeroState)."""
    op = opcert.get_operator("Round")
    form = op.reference_form(None)
    real = ball_compiled.variants
    monkeypatch.setattr(ball_compiled, "variants", lambda e, a, p=True, tune=False: real(e, a, p, False))
    monkeypatch.setattr(ball_compiled, "ZERO_WORTH", 0.0)
    monkeypatch.setattr(ball_compiled, "_zero_pays", lambda *args: True)
    ev = ball_compiled.compiled(form, {}, tune=True)
    cells = dict(zip(ev.__code__.co_freevars, (c.cell_contents for c in ev.__closure__)))
    assert cells["zero"] is not None
    ref = ball_compiled.compiled(form, {})
    skipped = []
    for x in _blocks((0x30000000, 0x3E000000, 0x00400000) + tuple(range(0x30000000, 0x30000000 + 40 * 4096, 4096))):
        for g, w in zip(ev(x), ref(x)):
            assert np.array_equal(np.asarray(g).view(np.uint8), np.asarray(w).view(np.uint8))
        skipped.append(cells["state"].skip)
    # the first block below 2^-29 sends it to the default kernel for 16 blocks, each retry that fails for twice
    # as many (86 blocks here)
    rises = [v for i, v in enumerate(skipped) if i == 0 or v > skipped[i - 1]]
    assert rises == [16, 32, 64]


def test_the_radius_zero_kernel_state_backs_off_and_resets():
    st = ball_compiled._ZeroState()
    assert st.take()
    st.took(1000, 1000)  # every input had a radius: the default kernel for 16 blocks
    assert [st.take() for _ in range(17)] == [False] * 16 + [True]
    st.took(1000, 1000)
    assert st.skip == 32 and st.wait == 64
    while not st.take():
        pass
    st.took(10, 1000)  # it paid: the next failure waits 16 again
    st.took(1000, 1000)
    assert st.skip == 16
