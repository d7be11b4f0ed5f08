"""The compiled binary64 ball (numerics.ball_compiled), which the float32 sweep uses
for every input: where it decides a value, that value is MPFR's correctly
rounded one (tests/oracle.py, no opcert code), and it decides as much as the
NumPy ball (numerics.ball). Also: the primitive functions both balls call (NumPy's
and the C library's through numba) are within the contract the balls assume
(expr.primitives, k binary64 ULPs), against Arb."""

import math
import sys
from fractions import Fraction

import flint
import gmpy2
import numba
import numpy as np
import pytest
from conftest import first_of_each_kind, node_kinds
from oracle import catalog_oracle, catalog_scalar
from test_catalog_oracle import CASES, IDS, SCALE_BIAS_SECOND

import opcert
from opcert.expr import PRIMITIVES, libm_arrays
from opcert.expr.fold import fold
from opcert.expr.primitives import binary64_array, exp_blockwise
from opcert.formats import FLOAT_FORMATS
from opcert.numerics import ball, ball_compiled
from opcert.spec.attrs import resolve

F32 = FLOAT_FORMATS["float32"]
SEEDS = [
    ("Tanh", None, {}),
    ("ScaledTanh", None, {}),
    ("ScaledTanh", None, {"alpha": 1.0, "beta": 0.5}),
    ("HardSigmoid", None, {}),
    ("Shrink", None, {"lambd": 0.5, "bias": 0.25}),
    ("Celu", None, {}),
    ("Celu", None, {"alpha": 0.3}),
]
SEED_IDS = [f"{n}-" + (",".join(f"{k}={v}" for k, v in a.items()) or "default") for n, _, a in SEEDS]
# A second set of constants in the same expression compiles a kernel of its own (attributes are literals
# in the generated source): 2-14 s each on a cold kernel cache. These second sets, whose kernels differ from another
# one only in the constants, run with the slow tests; of the rest CI keeps CI_CASES below
SECOND_SETS = {
    "Elu-primary-alpha=0.1",
    "LeakyRelu-primary-alpha=5.5",
    "PRelu-primary-slope=-2.0",
    "ThresholdedRelu-primary-alpha=0.75",
    "Selu-primary-alpha=1.0,gamma=0.5",
    "Swish-primary-alpha=0.5",
    "Linear-primary-alpha=-0.25,beta=3.0",
    "HardSwish-directml-alpha=0.125,beta=0.25",
    "Softplus-directml-steepness=7.5",
    *SCALE_BIAS_SECOND,
    # the first ScaleBias set of the math operators whose DirectML form is f(fma(x, scale, bias)) with f alone
    # (each set's kernel compiles on its own, as above); CI keeps those of Exp, and of
    # Log, Acosh and Atanh, whose forms are their own
    "Abs-directml-scale=-0.75,bias=2.5",
    "Erf-directml-scale=0.5,bias=1.0",
    "Identity-directml-element-wise-scale=3.0,bias=0.1",
    "Sqrt-directml-scale=2.0,bias=-0.5",
    # of the forms with a reference of their own (the addition formula, the integral part past 2^52), CI keeps Sin's,
    # Tan's, Floor's and Round's halves away from zero
    "Cos-directml-scale=0.5,bias=1.0",
    "Cosh-directml-scale=0.5,bias=1.0",
    "Ceil-directml-scale=-3.5,bias=0.1",
    "Round-directml-rounding_mode=toward_zero",
    "Sinh-directml-scale=0.5,bias=1.0",
    "Asinh-directml-scale=0.5,bias=1.0",
    "Atan-directml-scale=0.5,bias=1.0",
    "Asin-directml-scale=0.5,bias=0.5",
    "Acos-directml-scale=0.5,bias=-0.5",
    "Threshold-directml-scale=3.0,bias=0.1,min=-0.3",
}


# every kind of node compiled and checked against MPFR in CI (conftest.first_of_each_kind); the primitives' own rules
# one by one in tests/test_primitive_table.py
CI_CASES = first_of_each_kind(
    [(i, node_kinds(c[0], c[1])) for c, i in zip(CASES + SEEDS, IDS + SEED_IDS) if i not in SECOND_SETS]
)
COMPILED_CASES = [
    pytest.param(*c, id=i, marks=[pytest.mark.slow] if i in SECOND_SETS or i not in CI_CASES else [])
    for c, i in zip(CASES + SEEDS, IDS + SEED_IDS)
]


def _inputs(n=1500, seed=5):
    """float32 inputs over every binade that matters: tiny, subnormal, around 1, large, and
    the boundaries (zeros, 1, the largest finite)."""
    rng = np.random.default_rng(seed)
    mag = np.exp2(rng.uniform(-149, 128, n)).astype(np.float32)
    near = np.exp2(rng.uniform(-12, 7, n)).astype(np.float32)
    x = np.concatenate([mag, near]) * rng.choice(np.float32([-1, 1]), 2 * n)
    edge = np.float32([0.0, -0.0, 1.0, -1.0, 3.0, -3.0, 2.0**-149, -(2.0**-149), 3.4028235e38, -3.4028235e38])
    return np.concatenate([x, edge]).astype(np.float32)


def _decided(ev, x64, attrs=None, form=None):
    m, r, ok, s = ev(x64) if form is None else ball.evaluate(form, x64, attrs)
    return ball.decide(np.asarray(m, dtype=np.float64), r, ok, F32, s)


@pytest.mark.parametrize("name,standard,attrs", COMPILED_CASES)
def test_decides_mpfrs_value_and_as_much_as_numpy(name, standard, attrs):
    op = opcert.get_operator(name)
    a = {k: float(v) for k, v in resolve(op, attrs, standard).items()}
    form = op.reference_form(standard)
    ev = ball_compiled.compiled(form, a)
    assert ev is not None, f"{name}: the generator has no code for some node of {form}"
    x = _inputs()
    x64 = x.astype(np.float64)
    val, dec = _decided(ev, x64)
    nval, ndec = _decided(None, x64, a, form)
    want = catalog_oracle(name, x, a)
    nonzero = val != 0  # a zero's sign comes from the standard's formula, not the ball (spec.reference)
    bad = dec & nonzero & ~((val == want) | (np.isnan(val) & np.isnan(want)))
    assert not bad.any(), f"{name}: x={x[bad][:4]} compiled ball {val[bad][:4]}, MPFR {want[bad][:4]}"
    zero_bad = dec & ~nonzero & (want != 0)
    assert not zero_bad.any(), f"{name}: x={x[zero_bad][:4]} decided zero, MPFR {want[zero_bad][:4]}"
    both = dec & ndec
    assert (val[both] == nval[both]).all() or np.array_equal(val[both], nval[both], equal_nan=True)
    # the two may differ where a primitive's two platform functions differ by an ULP; not more
    assert dec.sum() >= ndec.sum() - max(3, ndec.sum() // 1000), (int(dec.sum()), int(ndec.sum()))
    assert dec.mean() > 0.9, f"{name}: decides only {dec.mean():.1%}"


def _balls(evaluator, form, a, x64):
    """(m, r, ok) over x64 from one evaluator. compiled-one-sign: the positive and the negative inputs in
    separate calls, as the sweep's blocks are (a select on the sign then has NumPy compute one branch only)."""
    if evaluator == "compiled":
        m, r, ok, _ = ball_compiled.compiled(form, a)(x64)
    elif evaluator == "compiled-one-sign":
        neg = np.signbit(x64)
        order = np.concatenate([np.flatnonzero(~neg), np.flatnonzero(neg)])
        parts = [ball_compiled.compiled(form, a)(x64[order[: int((~neg).sum())]])]
        parts.append(ball_compiled.compiled(form, a)(x64[order[int((~neg).sum()) :]]))
        m, r, ok = (np.empty_like(x64), np.empty_like(x64), np.empty(x64.shape, bool))
        for dst, i in ((m, 0), (r, 1), (ok, 2)):
            dst[order] = np.concatenate([np.broadcast_to(p[i], (len(p[0]),)) for p in parts])
    else:
        m, r, ok, _ = ball.evaluate(form, x64, a)
    return np.asarray(m, dtype=np.float64), np.broadcast_to(r, x64.shape), np.asarray(ok)


@pytest.mark.parametrize("evaluator", ["compiled", "numpy"])
def test_an_fma_whose_radius_products_underflow_still_holds_the_exact_value(evaluator):
    """fma(x / 3, s, B) at x = 5e-324, s = 2^-149 and B = 1 + 2^-24 (a float32 tie): x / 3's ball has midpoint 0 and
    a radius whose product with s underflows to 0, so a product taken as exact had radius 0 and the ball B alone,
    which rounds to 1 where the exact value, above the tie, rounds to 1 + 2^-23 (a review's case). Exact: rationals."""
    from opcert.expr import attr, fma, var

    x = var("x")
    form = fma(x / 3, attr("s"), attr("B"))
    a = {"s": 2.0**-149, "B": 1 + 2.0**-24}
    x64 = np.array([5e-324, 3e-300, 1.0, -7.5])
    m, r, ok = _balls(evaluator, form, a, x64)
    for i, xi in enumerate(x64.tolist()):
        exact = Fraction(xi) / 3 * Fraction(a["s"]) + Fraction(a["B"])
        assert not ok[i] or abs(exact - Fraction(float(m[i]))) <= Fraction(float(r[i])), (xi, m[i], r[i])
    assert r[0] > 0


@pytest.mark.parametrize("name,standard,attrs", COMPILED_CASES)
def test_every_ball_holds_the_exact_value(name, standard, attrs):
    """The invariant itself, stronger than the rounded values (a radius too small by a factor
    of two almost never changes a rounding, but it misses the exact value of many inputs):
    wherever the ball is ok, m - r <= exact <= m + r, the exact value from MPFR to 200 bits, for each
    evaluator: the compiled ball over the whole call, over one sign at a time, and NumPy's. MPFR's value
    is computed once per input for the three."""
    op = opcert.get_operator(name)
    a = {k: float(v) for k, v in resolve(op, attrs, standard).items()}
    form = op.reference_form(standard)
    x = _inputs(300, seed=8)
    x64 = x.astype(np.float64)
    balls = {ev: _balls(ev, form, a, x64) for ev in ("compiled", "compiled-one-sign", "numpy")}
    exact = {}
    missed = []
    with gmpy2.context(gmpy2.context(precision=400)):
        for ev, (m, r, ok) in balls.items():
            for i in np.flatnonzero(ok).tolist():
                xi, mi, ri = float(x64[i]), float(m[i]), float(r[i])
                if i not in exact:
                    exact[i] = catalog_scalar(name, xi, a, "mpfr200")
                v = exact[i]
                if math.isinf(mi):  # an infinite midpoint of radius 0: beyond the largest double, with its sign
                    if ri != 0 or not v * math.copysign(1, mi) > gmpy2.mpfr(sys.float_info.max):
                        missed.append((ev, xi, mi, ri, float(v)))
                elif abs(v - gmpy2.mpfr(mi)) > gmpy2.mpfr(ri):
                    missed.append((ev, xi, mi, ri, float(v - gmpy2.mpfr(mi))))
            assert ok.mean() > 0.9, f"{name} {ev}: decides only {ok.mean():.1%}"
    assert not missed, (
        f"{name}: {len(missed)} balls miss the exact value, e.g. (evaluator, x, m, r, exact - m) {missed[:3]}"
    )


def test_every_primitive_has_compiled_code():
    assert set(ball_compiled.LIBM) == set(PRIMITIVES)


def _libm(name):
    f = getattr(math, name)
    return numba.vectorize(["float64(float64)"])(lambda t: f(t))


def _ulp64(y: float) -> float:
    if y == 0 or not math.isfinite(y):
        return 2.0**-1074
    return max(math.ulp(y), 2.0**-1074)


@pytest.mark.parametrize("impl", ["numpy", "libm", "libmvec"])
@pytest.mark.parametrize("name", sorted(PRIMITIVES))
def test_primitive_within_its_binary64_contract(name, impl):
    """Every function a ball may call (NumPy's, the C library's per input, glibc's vector one),
    against Arb at 200 bits, on arguments over the binades the catalog reaches (an empirical check
    of the stated contract, as for the long double ones)."""
    p = PRIMITIVES[name]
    bound = p.ulps
    if impl == "libmvec":
        f, bound, _ = binary64_array(name)
        if name == "sqrt" or libm_arrays.vector(name) is None:
            pytest.skip(f"{name}: the balls take no vector function of it here ({libm_arrays.status()})")
    rng = np.random.default_rng(11)
    t = np.exp2(rng.uniform(-60, 9.4, 2500)) * rng.choice([-1, 1], 2500)
    if name in ("log", "sqrt"):
        t = np.abs(t)
    if name == "log1p":
        t = np.where(t < -1, -np.abs(t) / (1 + np.abs(t)), t)
    if name in ("exp", "expm1"):
        t = np.clip(t, -745, 709)
    if name in ("erf", "erfc"):
        t = np.clip(t, -27, 27)
    if name in ("asin", "acos", "atanh"):  # into (-1, 1), the tiny kept
        t = t / (1 + np.abs(t))
    if name == "acosh":
        t = 1 + np.abs(t)
    if name == "sinh":
        t = np.clip(t, -710, 710)
    got = p.numpy(t) if impl == "numpy" else _libm(name)(t) if impl == "libm" else f(t)
    flint.ctx.prec = 200
    try:
        worst = 0.0
        for ti, gi in zip(t.tolist(), got.tolist()):
            n, d = Fraction(ti).as_integer_ratio()
            v = _arb(name, flint.arb(n) / flint.arb(d))
            err = abs(flint.arb(Fraction(gi).numerator) / flint.arb(Fraction(gi).denominator) - v)
            worst = max(worst, float((err / flint.arb(_ulp64(gi))).upper()))
    finally:
        flint.ctx.prec = 53
    assert worst <= bound, f"{impl} {name}: {worst:.3f} ULPs, contract {bound}"


def _arb(name, v):
    if name == "erfc":
        return v.erfc()
    return getattr(v, name)()


def test_without_a_writable_cache_it_compiles_in_process(tmp_path, monkeypatch):
    """A cache path that cannot be a directory (a file is in the way): the ball is compiled in
    this process only, and computes the same balls."""
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("OPCERT_KERNEL_CACHE", str(blocker / "kernels"))
    monkeypatch.setattr(ball_compiled, "_LOADED", {})
    op = opcert.get_operator("Softsign")
    ev = ball_compiled.compiled(op.reference_form(None), {})
    x64 = _inputs(200).astype(np.float64)
    m, r, ok, s = ev(x64)
    nm, nr, nok, ns = ball.evaluate(op.reference_form(None), x64, {})
    assert (
        np.array_equal(ok, nok)
        and np.array_equal(m[ok], np.asarray(nm)[ok])
        and np.array_equal(r[ok], np.asarray(nr)[ok])
    )
    assert not (tmp_path / "file" / "kernels").exists()


def test_a_kernel_that_does_not_compile_falls_back_with_a_warning(monkeypatch, tmp_path):
    monkeypatch.setenv("OPCERT_KERNEL_CACHE", str(tmp_path))
    monkeypatch.setattr(ball_compiled, "_LOADED", {})
    real = ball_compiled.source

    def broken(e, a, precompute=True):
        src, pre = real(e, a, precompute)
        return src.replace("sgn(x)", "undefined_name(x)"), pre

    monkeypatch.setattr(ball_compiled, "source", broken)
    op = opcert.get_operator("Softsign")
    with pytest.warns(RuntimeWarning, match="did not compile"):
        assert ball_compiled.compiled(op.reference_form(None), {}) is None


def test_a_changed_cache_file_is_rewritten(monkeypatch, tmp_path):
    monkeypatch.setenv("OPCERT_KERNEL_CACHE", str(tmp_path))
    monkeypatch.setattr(ball_compiled, "_LOADED", {})
    op = opcert.get_operator("Softsign")
    src, _ = ball_compiled.source(op.reference_form(None), {})
    path = tmp_path / f"opcert_ball_{__import__('hashlib').sha256(src.encode()).hexdigest()[:24]}.py"
    path.write_text(src.replace("sgn(x)", "0"))  # someone edited it
    ev = ball_compiled.compiled(op.reference_form(None), {})
    assert path.read_text() == src
    m, r, ok, s = ev(np.array([-2.0, 3.0]))
    assert s.tolist() == [-1, 1]


def test_kernels_unused_for_30_days_are_removed_when_another_is_written(monkeypatch, tmp_path):
    import os
    import time

    monkeypatch.setenv("OPCERT_KERNEL_CACHE", str(tmp_path))
    monkeypatch.setattr(ball_compiled, "_LOADED", {})
    (tmp_path / "__pycache__").mkdir()
    old, recent = tmp_path / "opcert_ball_old.py", tmp_path / "opcert_ball_recent.py"
    old_nbc, recent_nbc = (tmp_path / "__pycache__" / f"{p.stem}.evaluate-9.py311.1.nbc" for p in (old, recent))
    for f in (old, recent, old_nbc, recent_nbc):
        f.write_text("")
    long_ago = time.time() - 31 * 86400
    os.utime(old, (long_ago, long_ago))
    os.utime(recent, (time.time() - 29 * 86400,) * 2)
    op = opcert.get_operator("Softsign")
    assert ball_compiled.compiled(op.reference_form(None), {}) is not None  # writes a new kernel
    assert not old.exists() and not old_nbc.exists()
    assert recent.exists() and recent_nbc.exists()
    # a kernel in use is touched: it stays
    (kept,) = [p for p in tmp_path.glob("opcert_ball_*.py") if p not in (recent,)]
    os.utime(kept, (long_ago, long_ago))
    monkeypatch.setattr(ball_compiled, "_LOADED", {})
    ball_compiled.compiled(op.reference_form(None), {})
    assert kept.stat().st_mtime > time.time() - 3600


@pytest.mark.parametrize(
    "lo,hi",
    [
        (-746.0, -745.2),
        (-1e300, -745.2),
        (709.79, 710.0),
        (709.79, 1e300),
        (-745.2, -700.0),
        (-745.13, -745.01),
        (-1.0, 1.0),
        (700.0, 709.79),
        (709.71, 709.78),
    ],
)
def test_exp_of_a_block_has_numpys_bits(lo, hi):
    """exp_blockwise (the exp primitive's binary64 function, read by opcert's implementation and
    by the ball's precomputation) skips NumPy's underflow and overflow path for a block wholly
    beyond it: the values are
    still np.exp's (and the exact exponential's: 0 below -745.2 rounds from below 2^-1075, the
    half of the smallest subnormal; above 709.79 it overflows), up to the blocks' very ends."""
    x = np.concatenate(
        [
            np.nextafter(np.float64(lo), np.inf) * np.ones(3),
            np.linspace(lo, hi, 2000)[1:-1],
            np.nextafter(np.float64(hi), -np.inf) * np.ones(3),
        ]
    )
    out = np.empty_like(x)
    with np.errstate(all="ignore"):
        want = np.exp(x)
        got = exp_blockwise(x)
        exp_blockwise(x, out=out)
    assert np.array_equal(out.view(np.uint64), want.view(np.uint64))
    assert np.array_equal(got.view(np.uint64), want.view(np.uint64))
    with gmpy2.context(gmpy2.context(precision=200)):
        assert gmpy2.exp(gmpy2.mpfr(-745.2)) < gmpy2.mpfr(2) ** -1075
        assert gmpy2.exp(gmpy2.mpfr(709.79)) > gmpy2.mpfr(np.finfo(np.float64).max)


@pytest.mark.parametrize("name", ["Mish", "Gelu", "Selu"])
def test_the_midpoints_are_the_same_from_kept_scratch_and_from_fresh_arrays(name, monkeypatch):
    """Midpoints (a fold domain) writes a block's values into this thread's scratch, kept from one call to the
    next: the rows a call gives are those of arrays of its own (SCRATCH_KEPT 0), whatever ran before it
    (another expression, a longer block), and each row's argument is numpy_eval's plain arithmetic of it, with
    the primitives' values from the functions the ball takes them from (binary64_array: glibc's vector
    functions where NumPy has no AVX-512 loops, so that NumPy's exp would differ by an ULP there)."""
    from opcert.expr.numpy_eval import PlainDomain

    class BallPrimitives(PlainDomain):
        def primitive(self, p, a, node=None):
            return binary64_array(p.name)[0](np.asarray(a, dtype=np.float64))

    op = opcert.get_operator(name)
    a = {k: float(v) for k, v in resolve(op).items()}
    form = op.reference_form(None)
    pre = ball_compiled.source(form, a)[1]
    rng = np.random.default_rng(5)
    blocks = [np.linspace(-3.0, 3.0, 5000), -np.geomspace(1e-30, 30.0, 3000), rng.standard_normal(7000) * 40]
    kept = []
    for x in blocks:
        ball_compiled._midpoints(
            ball_compiled.source(opcert.get_operator("Swish").reference_form(None), {"alpha": 1.0})[1],
            np.ones(9000),
            {"alpha": 1.0},
        )
        kept.append(tuple(v.copy() for v in ball_compiled._midpoints(pre, x, a, form)))
    monkeypatch.setattr(ball_compiled, "SCRATCH_KEPT", 0)
    for x, (pa, pv) in zip(blocks, kept):
        fresh_pa, fresh_pv = ball_compiled._midpoints(pre, x, a, form)
        for k, node in enumerate(pre):
            if pa[k][0] == ball_compiled._UNREACHED:
                continue
            assert np.array_equal(pv[k].view(np.uint64), fresh_pv[k].view(np.uint64)), (name, node)
            if node.args[0].op != "var":
                assert np.array_equal(pa[k], fresh_pa[k]), (name, node)
                with np.errstate(all="ignore"):
                    plain = np.broadcast_to(fold(node.args[0], BallPrimitives(x, a)), x.shape)
                assert np.array_equal(pa[k], plain.view(np.uint64)), (name, node)


@pytest.mark.parametrize("approximate", [0, 1])
def test_a_block_reaches_only_the_branch_the_attributes_choose(approximate):
    """Gelu's form is a select on the attribute `approximate`: the generated code takes that branch alone, so a
    block reaches the nodes of that branch and none of the other's (whose condition on x was folded over every
    block, the whole sweep long, for a branch the code never takes)."""
    op = opcert.get_operator("Gelu")
    a = {k: float(v) for k, v in resolve(op, {"approximate": ["none", "tanh"][approximate]}).items()}
    form = op.reference_form(None)
    assert form.op == "select" and not form.args[0].uses("var")
    taken, other = (form.args[2], form.args[1]) if approximate else (form.args[1], form.args[2])
    reach = ball_compiled._Reached(ball_compiled.Midpoints(np.linspace(-3.0, 3.0, 2000), a))
    fold(form, reach)
    only_other = set(other.nodes()) - set(taken.nodes()) - set(form.args[0].nodes())
    assert only_other and not only_other & set(reach.memo)
    assert set(taken.nodes()) <= set(reach.memo)


def test_the_bound_of_e_to_the_minus_y_holds_it_within_a_factor_of_two_in_both_meanings():
    """ball_ops.exp_neg_above (the erf and erfc radius rule's e^(-t^2), without an exp call): a power of two p with
    e^-y <= p <= 2 e^-y (1 + 2^-40: at a whole y log2(e) the margin below it can take the next power), checked against MPFR (gmpy2) on a grid, at the binary64 values around each y = n ln 2
    (where y log2(e) is nearest a whole number, and a rounding up would cross it), in long double too; the
    compiled meaning gives the NumPy one's bits; NaN gives NaN."""
    from opcert.expr import ball_ops

    bound = ball_ops.numba_ops().exp_neg_above
    comp = numba.njit(lambda y: bound(y))
    grid = [np.linspace(0.0, 676.0, 20001), [0.0, 5e-324, 2.0**-60, 0.5, 1.0, 700.0, 708.5, 1e4]]
    for n in range(1, 976):
        c = float(gmpy2.mpfr(n) * gmpy2.log(2))
        grid.append([np.nextafter(c, 0.0), c, np.nextafter(c, np.inf)])
    ys = np.concatenate([np.asarray(g, dtype=np.float64) for g in grid])
    got = ball_ops.NUMPY.exp_neg_above(ys)
    assert np.array_equal(got.view(np.uint64), np.array([comp(y) for y in ys]).view(np.uint64))
    with gmpy2.context(gmpy2.context(precision=200, emin=-40000)):
        for y, p in zip(ys.tolist(), got.tolist()):
            e = gmpy2.exp(-gmpy2.mpfr(y))
            assert math.frexp(p)[0] == 0.5 and e <= p and (p <= 2 * e * (1 + 2.0**-40) or p == 2.0**-1022), y
        wide = np.array([0.0, 1.0, 3000.0, 11025.0], dtype=np.longdouble)
        for y, p in zip(wide, ball_ops.NUMPY.exp_neg_above(wide)):
            e = gmpy2.exp(-gmpy2.mpfr(float(y)))
            lo = gmpy2.mpfr(int(np.frexp(p)[1]) - 1)
            assert np.frexp(p)[0] == 0.5 and e <= gmpy2.exp2(lo) <= 2 * e * (1 + 2.0**-40), float(y)
    assert np.isnan(ball_ops.NUMPY.exp_neg_above(np.array([np.nan]))[0]) and np.isnan(comp(np.nan))


def test_comparisons_and_domains_decide_only_what_the_exact_ends_decide():
    """The ball rules' comparisons and a primitive's closed domain compare rounded ends: a strict comparison
    of them implies the exact one, a non-strict one does not. fl(pi) against the ball of pi (fl(pi) with
    radius pi - fl(pi) < half an ULP: its upper end rounds to fl(pi)) is neither decided less nor decided not
    less; a ball whose exact lower end is below -1 but rounds to -1 is not inside asin's [-1, 1]; balls of
    radius 0 compare exactly. Both meanings of the rules (NumPy's and compiled)."""
    from opcert.numerics import ball_rules

    below = float(gmpy2.const_pi(precision=200) - gmpy2.mpfr(math.pi))  # pi - fl(pi), about 1.2246e-16
    assert 0 < below < math.ulp(math.pi) / 2 and math.pi + below == math.pi
    numpy_rules, compiled_rules = ball_rules.numpy_rules(), ball_rules.compiled_rules()

    def both(name, *args):
        got = compiled_rules[name](*args)
        with np.errstate(all="ignore"):  # as numerics.ball runs them: an end may overflow
            arrays = numpy_rules[name](*(np.array([a]) for a in args))
        assert tuple(bool(np.asarray(v).reshape(-1)[0]) for v in arrays) == tuple(bool(v) for v in got), name
        return tuple(bool(v) for v in got)

    pi = math.pi
    assert both("less", pi, 0.0, pi, below) == (False, False)  # fl(pi) < pi: not decided either way
    assert both("less_equal", pi, below, pi, 0.0) == (False, False)  # pi <= fl(pi) is false: not decided yes
    assert both("less", pi, 0.0, pi, 0.0) == (False, True) and both("less_equal", pi, 0.0, pi, 0.0) == (True, False)
    assert both("less", 1.0, 0.5, 2.0, 0.25) == (True, False) and both("less", 3.0, 0.5, 1.0, 0.25) == (False, True)
    # asin's domain [-1, 1], closed: the ball (-1 + 2^-54, 2^-53) reaches -1 - 2^-54, its rounded end -1
    tiny = 2.0**-54
    assert -1.0 + tiny - 2 * tiny == -1.0
    args = (0.0, -1.0 + tiny, 2 * tiny, True, 0.0, True, 0.0, False, False, -1.0, False, 1.0, False)
    assert not both("primitive", *args)[1]  # not ok: the ball leaves the domain
    at_end = (0.0, -1.0, 0.0, True, 0.0, True, 0.0, False, False, -1.0, False, 1.0, False)
    assert both("primitive", *at_end)[1]  # -1 itself, radius 0: inside
    # no bound (exp's domain): a ball whose end overflows is inside all the same
    huge = (math.inf, 1e308, 1e308, True, 0.0, True, 0.0, True, False, -math.inf, False, math.inf, False)
    assert both("primitive", *huge)[1]


def _run_kernel(src, pre, x64, a, form):
    k = ball_compiled._load(src)
    n = x64.size
    out = (np.empty(n), np.empty(n), np.empty(n, np.bool_), np.empty(n, np.int8), np.empty(n, np.bool_))
    pa, pv = ball_compiled._midpoints(pre, x64, a, form)
    n_miss = k(x64, pa.copy(), pv.copy(), *out)
    missed = np.flatnonzero(out[4])
    assert missed.size == n_miss
    return out[:4], missed


# Mish (nested primitives, repeated subexpressions) and Selu (a select, attributes) every run; Sigmoid and
# Swish take the same generator paths and cost 16-31 s more of compiling on a cold kernel cache (2 cores)
@pytest.mark.parametrize(
    "name",
    [
        pytest.param("Sigmoid", marks=pytest.mark.slow),
        pytest.param("Swish", marks=pytest.mark.slow),
        "Mish",
        pytest.param("Selu", marks=pytest.mark.slow),
    ],
)
def test_the_tuned_kernel_gives_the_same_balls(name):
    """tune=True keeps the fastest of four generated kernels (the ball inlined into the loop or
    called; repeated subexpressions computed once or each time): each gives bit for bit the
    default kernel's balls and misses."""
    op = opcert.get_operator(name)
    a = {k: float(v) for k, v in resolve(op).items()}
    form = op.reference_form(None)
    default, pre = ball_compiled.source(form, a)
    variants = [
        ball_compiled.source(form, a, inline=i, cse=c)[0] for i, c in ((False, True), (True, False), (False, False))
    ]
    assert len({default, *variants}) == 4
    x64 = _inputs(400, seed=12).astype(np.float64)
    for part in (x64[x64 > 0], x64[x64 < 0]):
        want = ball_compiled.compiled(form, a)(part)
        got = ball_compiled.compiled(form, a, tune=True)(part)
        for g, w in zip(got, want):
            assert np.array_equal(np.asarray(g).view(np.uint8), np.asarray(w).view(np.uint8)), name
        (ref, ref_miss) = _run_kernel(default, pre, part, a, form)
        for src in variants:
            out, miss = _run_kernel(src, pre, part, a, form)
            for g, w in zip(out, ref):
                assert np.array_equal(g.view(np.uint8), w.view(np.uint8)), name
            assert np.array_equal(miss, ref_miss)


def test_unshared_variants_are_tuned_only_where_their_source_stays_close_to_the_shared_one():
    """compiled(tune=True) times the unshared kernels only where their source is at most
    UNSHARED_MAX times the shared one's: Gelu's tanh form (2.35 times; 18 s to compile, twice
    as slow) is tuned between the shared ones, Shrink (whose unshared kernel can be the
    fastest) between all four."""
    from opcert.spec.attrs import resolve

    for name, given, unshared in (("Gelu", {"approximate": "tanh"}, False), ("Shrink", None, True)):
        op = opcert.get_operator(name)
        attrs = {k: float(v) for k, v in resolve(op, given).items()}
        form = op.reference_form(None)
        src, _, alts = ball_compiled.variants(form, attrs, tune=True)
        shared = [ball_compiled.source(form, attrs, inline=False)[0]]
        free = [ball_compiled.source(form, attrs, inline=i, cse=False)[0] for i in (True, False)]
        assert [a for a in alts if a in shared] == shared, name
        assert all((a in alts) == unshared for a in free), name
        assert ball_compiled.variants(form, attrs, tune=False)[2] == []


def test_the_c_library_kernel_is_compiled_at_the_first_input_that_needs_it(monkeypatch, tmp_path):
    """The kernel with the C library's functions takes the inputs whose argument differs from
    NumPy's; it is compiled at the first such input (a sweep rarely has one), once, and where it
    does not compile numerics.ball gives those inputs' balls. The difference is forced here by
    changing NumPy's argument bits for three positive inputs of Sigmoid's exp(-x)."""
    monkeypatch.setenv("OPCERT_KERNEL_CACHE", str(tmp_path))
    monkeypatch.setattr(ball_compiled, "_LOADED", {})
    op = opcert.get_operator("Sigmoid")
    form = op.reference_form(None)
    plain = ball_compiled.source(form, {}, False)[0]
    x = np.linspace(-30.0, 30.0, 64)
    want = ball_compiled.compiled(form, {}, precompute=False)(x[[40, 45, 50]])  # the C library's balls
    loads = []
    real_load, real_mid = ball_compiled._load, ball_compiled._midpoints
    monkeypatch.setattr(ball_compiled, "_load", lambda src: loads.append(src == plain) or real_load(src))
    evaluate = ball_compiled.compiled(form, {})
    assert loads and not any(loads)  # compiled and warmed without the C library's kernel
    expect = [np.asarray(a).copy() for a in evaluate(x)]
    assert not any(loads)  # no input needed it

    def differing(pre, x64, attrs, root=None):
        pa, pv = real_mid(pre, x64, attrs, root)
        if pre and x64.size == x.size:  # exp(-x), taken where x > 0 (exp(x) is not compared)
            k = next(i for i, p in enumerate(pre) if not ball_compiled._direct(p))
            pa[k, [40, 45, 50]] ^= np.uint64(1)
        return pa, pv

    monkeypatch.setattr(ball_compiled, "_midpoints", differing)
    for _ in range(2):
        got = evaluate(x)
        for g, w, e in zip(got, want, expect):
            assert np.array_equal(g[[40, 45, 50]], w) and np.array_equal(
                np.delete(g, [40, 45, 50]), np.delete(e, [40, 45, 50])
            )
    assert loads.count(True) == 1  # compiled once

    monkeypatch.setattr(ball_compiled, "_LOADED", {})

    def broken(src):
        if src == plain:
            raise RuntimeError("no compiler today")
        return real_load(src)

    monkeypatch.setattr(ball_compiled, "_load", broken)
    evaluate = ball_compiled.compiled(form, {})
    with pytest.warns(RuntimeWarning, match="did not compile"):
        got = evaluate(x)
    m, r, ok, s = (np.broadcast_to(a, (3,)) for a in ball.evaluate(form, x[[40, 45, 50]], {}))
    assert np.array_equal(got[0][[40, 45, 50]], m) and np.array_equal(got[1][[40, 45, 50]], r)
    assert np.array_equal(got[2][[40, 45, 50]], ok) and np.array_equal(got[3][[40, 45, 50]], s)


def _all_vector(form) -> bool:
    return all(n.op not in PRIMITIVES or binary64_array(n.op)[2] for n in form.nodes())


NAMES = sorted(op.name for op in opcert.operators())
CI_NAMES = first_of_each_kind([(n, node_kinds(n)) for n in NAMES])


@pytest.mark.parametrize("name", [pytest.param(n, marks=[] if n in CI_NAMES else [pytest.mark.slow]) for n in NAMES])
def test_numpy_and_compiled_balls_are_one_semantics(name, monkeypatch):
    """The two evaluators run the same rules (numerics.ball_rules and the records' radius rules): given
    the same primitive values (the compiled ball takes NumPy's for the vectorised primitives) and the
    same underflow bound, they compute the same balls, bit for bit, not merely balls that both hold
    the exact value. Moderate inputs: no ball there is wide enough to need its ends (which the compiled
    kernel takes from the C library). The vocabulary's own `exp` (erf's radius rule bounds erf' by
    1.1285 e^(-t^2)) is each meaning's platform exp: NumPy's, whose AVX-512 loop differs from the C
    library's by an ULP here and there, and the C library's in compiled code; the rules' margin covers
    either. Here both take the C library's, so that the comparison stays bit for bit on every host."""
    from opcert.expr import ball_ops

    monkeypatch.setattr(ball_ops.NUMPY, "exp", numba.vectorize(["float64(float64)"])(lambda a: math.exp(a)))
    op = opcert.get_operator(name)
    form = op.reference_form(None)
    if not _all_vector(form):
        pytest.skip(
            f"{name}: a primitive of its form ({', '.join(sorted(n.op for n in form.nodes() if n.op in PRIMITIVES and not binary64_array(n.op)[2]))}) "
            "has no NumPy loop; the compiled ball takes the C library's value"
        )
    a = {k: float(v) for k, v in resolve(op, None).items()}
    same_balls(name, form, a)


def same_balls(name, form, a):
    """The NumPy ball and the compiled one of `form` at moderate inputs, bit for bit: (x64, the compiled balls)."""
    x64 = np.concatenate(
        [np.linspace(-40, 40, 4001), np.exp2(np.linspace(-60, 60, 1001)), -np.exp2(np.linspace(-60, 60, 1001))]
    )
    same_eta = ball.Precision(np.float64, ball.U, ball_compiled.ETA_BINARY32, None)
    want = ball.evaluate(form, x64, a, same_eta)
    got = ball_compiled.compiled(form, a)(x64)
    for part, w, g in zip(("midpoint", "radius", "ok", "sign"), want, got):
        w, g = np.broadcast_to(w, x64.shape), np.asarray(g)
        differ = ~((w == g) | (np.isnan(w) & np.isnan(g))) if part in ("midpoint", "radius") else w != g
        assert not differ.any(), (
            f"{name}: {part} differs at x = {x64[differ][:4]}: NumPy {w[differ][:4]}, compiled {g[differ][:4]}"
        )
    return x64, got
