"""Results exactly on a rounding midpoint (ScaledTanh at beta = 0.5 on binary32
subnormals), decided by the side of the exact value: against MPFR, and the sweep
against the per-input path on the same inputs."""

import gmpy2
import numpy as np
import pytest
from conftest import same_bits
from oracle import oracle

import opcert
from opcert.formats import get_format
from opcert.numerics import one_sided
from opcert.spec.attrs import resolve
from opcert.spec.reference import reference_detailed


def _subnormal_heavy_inputs():
    rng = np.random.default_rng(5)
    b = np.concatenate(
        [
            np.arange(0, 4000, dtype=np.uint32),
            rng.integers(0, 1 << 24, 8000).astype(np.uint32),
            np.arange((1 << 23) - 2000, (1 << 23) + 2000, dtype=np.uint32),
        ]
    )
    return np.concatenate([b, b | np.uint32(0x80000000)]).view(np.float32)


def test_midpoints_are_decided_without_the_exact_path_and_agree_with_mpfr():
    op = opcert.get_operator("ScaledTanh")
    for attrs in ({}, {"alpha": -3.0, "beta": 0.5}, {"alpha": 1.0, "beta": 0.25}):
        a = resolve(op, attrs)
        x = _subnormal_heavy_inputs()
        ref = reference_detailed(op, x, a)
        want = oracle("ScaledTanh", x, {k: float(v) for k, v in a.items()})
        bad = ~same_bits(ref.rounded.astype(np.float64), want)
        assert not bad.any(), (attrs, x[bad][:4], ref.rounded[bad][:4], want[bad][:4])
        assert ref.slow_path < 50, (attrs, ref.slow_path)


def test_a_value_off_the_midpoint_or_of_unknown_side_is_left_undecided():
    f32 = get_format("float32")
    m = np.array([2.0**-150, 1.0 + 2.0**-24, 1.0 + 2.0**-30, 2.0**-150])
    r = np.array([2.0**-300, 2.0**-80, 2.0**-80, 2.0**-300])
    side = np.array([-1.0, 1.0, 1.0, 0.0])
    good, val, _ = one_sided.decide(m, r, side, np.ones(4, dtype=bool), f32)
    # 2^-150 (half the smallest subnormal) approached from below: +0; 1 + 2^-24 from above: 1 + 2^-23
    assert good.tolist() == [True, True, False, False]
    assert val[0] == 0 and not np.signbit(val[0]) and val[1] == 1.0 + 2.0**-23


def test_expressions_outside_the_known_shapes_are_not_described():
    from opcert.expr import Expr

    x = Expr("var", name="x")
    assert one_sided.supported(opcert.get_operator("ScaledTanh").reference_form(None))
    assert not one_sided.supported(Expr("sin", (x,)))


@pytest.mark.parametrize(
    "op, standard, attrs, dtype, x, f",
    [
        # gamma alpha = 1.0507 x 2.5 (DirectML's binary32 gamma) is a float32 midpoint, and below -745
        # expm1(x) = -1 + e^x is above -1 by less than 2^-1074: no ball decides it ("undecided at 32768 bits")
        ("Selu", "directml", {"alpha": 2.5}, np.float32, -5867537 / 512, "selu"),
        # 2.5 (11792 + log1p(e^-11792)): 29480, a float16 midpoint whose even neighbour is the lower, 29472,
        # plus about 2^-17012: 29488 (a tie taken to even would be wrong)
        ("Softplus", "directml-parametric", {"alpha": 2.5, "beta": 1.0}, np.float16, 11792.0, "softplus"),
    ],
)
def test_a_midpoint_plus_a_value_under_the_smallest_double_is_decided_by_its_side(op, standard, attrs, dtype, x, f):
    """exp, expm1 and log1p far below 0 are one-sided (expr.primitives: UNDER_SMALLEST): the reference rounds as
    MPFR does at 40,000 bits, and opcert's code with it."""
    xs = np.array([x], dtype)
    with gmpy2.context(precision=40000):
        t = gmpy2.mpfr(float(xs[0]))
        if f == "selu":
            v = gmpy2.mpfr(float(np.float32(1.0507))) * gmpy2.mpfr(attrs["alpha"]) * gmpy2.expm1(t)
        else:
            v = gmpy2.mpfr(attrs["alpha"]) * (t + gmpy2.log1p(gmpy2.exp(-t)))
    p, emin, emax = (24, -148, 128) if dtype is np.float32 else (11, -23, 16)
    with gmpy2.context(precision=p, emin=emin, emax=emax, subnormalize=True):
        want = float(+v)
    assert float(opcert.reference(op, xs, standard=standard, **attrs)[0]) == want
    assert float(opcert.run(op, xs, standard=standard, **attrs)[0]) == want


def test_the_sweep_decides_midpoints_like_the_per_input_path(tmp_path):
    from opcert.verify.accuracy.measure import measure

    r = measure(
        "ScaledTanh",
        "opcert",
        "float32",
        "exhaustive",
        magnitude_range=(0, 1 << 18),  # subnormals: alpha * tanh(beta * x) of each is near a midpoint
        workers=1,
        checkpoint=tmp_path / "ck",
    )
    assert r.sweep["undecided"] == 0 and r.inputs_checked == 1 << 19
    b = np.arange(0, 1 << 18, dtype=np.uint32)
    x = np.concatenate([b, b | np.uint32(0x80000000)]).view(np.float32)
    g = measure("ScaledTanh", "opcert", "float32", x)
    assert (g.correctly_rounded, g.max_ulp, g.histogram) == (r.correctly_rounded, r.max_ulp, r.histogram)


def test_gelu_midpoints_are_decided_by_the_side_and_agree_with_mpfr():
    """Gelu(x) = 0.5 x erfc(-x/sqrt 2) lies just above 0.5 x, a binary32 midpoint
    for every odd subnormal x: decided without the exact path, as MPFR rounds it."""
    from oracle import catalog_oracle

    op = opcert.get_operator("Gelu")
    x = _subnormal_heavy_inputs()
    ref = reference_detailed(op, x, resolve(op, {}))
    want = catalog_oracle("Gelu", x, {"approximate": 0.0})
    bad = ~same_bits(ref.rounded.astype(np.float64), want) & ~((want == 0) & (ref.rounded == 0))
    assert not bad.any(), (x[bad][:4], ref.rounded[bad][:4], want[bad][:4])
    assert ref.slow_path < 50, ref.slow_path


def test_gelu_tanh_form_midpoints_are_decided_by_the_side_and_agree_with_mpfr():
    """Gelu's tanh form, x sigmoid(2 sqrt(2/pi) (x + 0.044715 x^3)), is on the side of x of 0.5 x:
    the sigmoid's argument is a sum of two terms of x's sign (it sent 2^23 inputs per sign of the
    subnormal chunk to the exact path, half an hour of a sweep)."""
    from oracle import catalog_oracle

    op = opcert.get_operator("Gelu")
    x = _subnormal_heavy_inputs()
    a = resolve(op, {"approximate": "tanh"})
    ref = reference_detailed(op, x, a)
    want = catalog_oracle("Gelu", x, {"approximate": 1.0})
    bad = ~same_bits(ref.rounded.astype(np.float64), want) & ~((want == 0) & (ref.rounded == 0))
    assert not bad.any(), (x[bad][:4], ref.rounded[bad][:4], want[bad][:4])
    assert ref.slow_path < 50, ref.slow_path
    m, r, s, ok = one_sided.evaluate(op.reference_form(None), x.astype(np.float64), {"approximate": 1.0})
    assert ok.sum() > x.size // 2


def test_a_sum_of_terms_of_both_signs_has_no_known_sign():
    from opcert.expr import Expr
    from opcert.spec.declarations import x as X

    xs = np.array([1e-40, 2e-40, -3e-40])
    same = one_sided._sign_bound(X + X * X * X, xs, {})
    assert same is not None and list(same[0]) == [1.0, 1.0, -1.0] and (same[1] >= np.abs(xs)).all()
    assert one_sided._sign_bound(X + (-(X * X * X)), xs, {}) is None
    assert isinstance(X, Expr)


def test_hardswish_midpoints_are_decided_by_the_side_and_agree_with_mpfr():
    """HardSwish(x) = x max(0, min(1, x/6 + 1/2)) = x/2 + x^2/6 near 0: just above
    0.5 x, a binary32 midpoint for every odd subnormal x."""
    from oracle import catalog_oracle

    op = opcert.get_operator("HardSwish")
    x = _subnormal_heavy_inputs()
    ref = reference_detailed(op, x, resolve(op, {}))
    want = catalog_oracle("HardSwish", x, {})
    bad = ~same_bits(ref.rounded.astype(np.float64), want) & ~((want == 0) & (ref.rounded == 0))
    assert not bad.any(), (x[bad][:4], ref.rounded[bad][:4], want[bad][:4])
    assert ref.slow_path < 50, ref.slow_path


def test_swish_midpoints_are_decided_by_the_side_and_agree_with_mpfr():
    """Swish(x) = x sigmoid(alpha x) is on alpha's side of 0.5 x for tiny x: both
    stable forms of the sigmoid (chosen by the sign of alpha x), three alphas."""
    from oracle import catalog_oracle

    op = opcert.get_operator("Swish")
    x = _subnormal_heavy_inputs()
    for attrs in ({}, {"alpha": -0.5}, {"alpha": 1.702}):
        a = resolve(op, attrs)
        ref = reference_detailed(op, x, a)
        want = catalog_oracle("Swish", x, {k: float(v) for k, v in a.items()})
        bad = ~same_bits(ref.rounded.astype(np.float64), want) & ~((want == 0) & (ref.rounded == 0))
        assert not bad.any(), (attrs, x[bad][:4], ref.rounded[bad][:4], want[bad][:4])
        assert ref.slow_path < 50, (attrs, ref.slow_path)


def test_selu_midpoints_are_decided_by_the_side_and_agree_with_mpfr():
    """Selu at ONNX's test attributes (alpha = 2, gamma = 3): 3 (2 expm1(x)) for tiny x < 0 lies just
    above 6x, a binary32 midpoint for a quarter of the inputs (each went to the exact path: the
    sweep did not finish in five minutes); expm1(t) > t for t != 0."""
    from oracle import catalog_oracle

    op = opcert.get_operator("Selu")
    x = np.concatenate(
        [
            _subnormal_heavy_inputs(),
            -np.float32(2.0**-40) * (1 + np.arange(4000, dtype=np.float32) * np.float32(2.0**-23)),
        ]
    )
    a = resolve(op, {"alpha": 2.0, "gamma": 3.0})
    ref = reference_detailed(op, x, a)
    want = catalog_oracle("Selu", x, {"alpha": 2.0, "gamma": 3.0})
    bad = ~same_bits(ref.rounded.astype(np.float64), want) & ~((want == 0) & (ref.rounded == 0))
    assert not bad.any(), (x[bad][:4], ref.rounded[bad][:4], want[bad][:4])
    assert ref.slow_path < 50, ref.slow_path
