"""The binary64 reference's long double fast path (numerics.ball.WIDE).

Two independent checks: every decision of the fast path equals the exact
path's (Arb at increasing precision), bit for bit, on stratified samples with
hard cases for every operator of the catalog; and each platform long double
function it relies on stays within its stated contract against Arb."""

from fractions import Fraction

import flint
import numpy as np
import pytest
from conftest import first_of_each_kind, node_kinds

import opcert
from opcert.expr import libm_arrays
from opcert.expr.primitives import long_double_array
from opcert.numerics import ball
from opcert.spec.attrs import resolve
from opcert.spec.reference import reference_detailed
from opcert.verify.accuracy.inputs import sample

pytestmark = pytest.mark.skipif(
    ball.WIDE is None,
    reason="long double is binary64 on this platform: binary64 references all take the exact path, nothing to compare",
)

OPS = [op.name for op in opcert.operators()]
ATTRS = {
    "Celu": {"alpha": 0.1},
    "Elu": {"alpha": 2.5},
    "LeakyRelu": {"alpha": -0.3},
    "Swish": {"alpha": 1.702},
    "ScaledTanh": {"alpha": 1.7159, "beta": 0.6666667},
    "Linear": {"alpha": 3.0, "beta": -0.1},
}


def _exact(op, x, attrs, monkeypatch):
    with monkeypatch.context() as m:
        m.setattr(ball, "WIDE", None)
        return reference_detailed(op, x, attrs)


_ALL = [(n, "defaults") for n in OPS] + [(n, "other") for n in OPS if n in ATTRS]
# CI: the cases that bring a kind of node (conftest.first_of_each_kind); every one in the slow run, and each long
# double function the path relies on against Arb below
_CI = first_of_each_kind([(c, node_kinds(c[0])) for c in _ALL])
CASES = [pytest.param(*c, marks=[] if c in _CI else [pytest.mark.slow]) for c in _ALL]


@pytest.mark.parametrize("name,which", CASES)
def test_fast_path_decides_as_the_exact_path(name, which, monkeypatch):
    op = opcert.get_operator(name)
    attrs = resolve(op, ATTRS.get(name, {}) if which == "other" else {})
    x = sample(op, opcert.formats.get_format("float64"), attrs, 240, seed=7)
    fast = reference_detailed(op, x, attrs)
    exact = _exact(op, x, attrs, monkeypatch)
    bad = fast.rounded.view(np.uint64) != exact.rounded.view(np.uint64)
    bad &= ~(np.isnan(fast.rounded) & np.isnan(exact.rounded))
    assert not bad.any(), (
        f"{bad.sum()} differ, first x={x[bad][:3]}: fast {fast.rounded[bad][:3]}, exact {exact.rounded[bad][:3]}"
    )
    if name not in ("Erf", "Gelu") or long_double_array("erf") is not None:  # else erf has none: exact
        assert fast.slow_path < x.size // 4, f"the fast path decided only {x.size - fast.slow_path} of {x.size}"


def test_gelu_below_binary64s_subnormals_is_decided_by_the_fast_path_as_by_the_exact_one(monkeypatch):
    # Gelu(x) for x below about -38.6 lies under half binary64's smallest subnormal (-0 correctly rounded);
    # erfc's ball bounds its spread by e^-t^2 down to t = 105 in long double. With the binary64 bound
    # (2^-975 beyond t = 26) the radius there was near 2^-1030 and every such input took the exact path.
    if long_double_array("erfc") is None:
        pytest.skip(f"no long double erfc on this platform ({libm_arrays.status()}): the exact path decides")
    op = opcert.get_operator("Gelu")
    attrs = resolve(op)
    rng = np.random.default_rng(11)
    x = np.concatenate(
        [
            -rng.uniform(37.7, 160.0, 300),
            -np.exp(rng.uniform(np.log(160.0), np.log(1e308), 60)),
            [-38.5, -38.6, -38.7, -np.finfo(np.float64).max],
        ]
    )
    fast = reference_detailed(op, x, attrs)
    exact = _exact(op, x, attrs, monkeypatch)
    assert np.array_equal(fast.rounded.view(np.uint64), exact.rounded.view(np.uint64))
    assert fast.slow_path == 0, f"{fast.slow_path} of {x.size} took the exact path"
    assert (exact.rounded[x < -38.7] == 0).all() and np.signbit(exact.rounded[x < -38.7]).all()  # -0
    assert (exact.rounded[x > -38.6] < 0).all()  # down to -38.6 a subnormal, not a zero


def test_erfc_long_double_where_it_is_tiny():
    """glibc's erfcl where its value is far below binary64's range (t from 20 to 110, where the ball of
    erfc now relies on it: Gelu's tail), against Arb, within the long double contract."""
    fu = long_double_array("erfc")
    if fu is None:
        pytest.skip(f"no long double erfc on this platform ({libm_arrays.status()})")
    flint.ctx.prec = 200
    try:
        rng = np.random.default_rng(5)
        t = np.concatenate([rng.uniform(20, 110, 400), np.linspace(100, 110, 41)]).astype(np.longdouble)
        got = fu[0](t)
        worst = 0.0
        for ti, gi in zip(t, got):
            v = _arb_value(ti).erfc()
            err = abs(_arb_value(gi) - v) / _arb_value(_ulp(gi))
            worst = max(worst, float(err.upper()))
        assert worst <= ball.WIDE.ulps["erfc"], f"erfcl: {worst} ULPs, contract {ball.WIDE.ulps['erfc']}"
    finally:
        flint.ctx.prec = 53


def test_fast_path_exact_value_is_close(monkeypatch):
    # the (hi, lo) pair of a decided element is the long double midpoint: within 2^-7 ULP of binary64
    op = opcert.get_operator("Tanh")
    x = np.array([0.3, -1.7, 2.0**-30, 7.5, -0.011])
    fast = reference_detailed(op, x, resolve(op))
    assert fast.slow_path == 0
    flint.ctx.prec = 200
    try:
        for xi, h, lo in zip(x, fast.exact_hi, fast.exact_lo):
            v = flint.arb(Fraction(float(xi)).numerator) / flint.arb(Fraction(float(xi)).denominator)
            err = abs(flint.arb(h) + flint.arb(lo) - v.tanh())
            assert float(err.upper()) < abs(h) * 2.0**-59, (xi, h, lo)
    finally:
        flint.ctx.prec = 53


def _ulp(y):
    fi = np.finfo(np.longdouble)
    if y == 0:
        return fi.smallest_subnormal
    _, e = np.frexp(abs(y))
    return max(np.ldexp(np.longdouble(1), int(e) - 1 - fi.nmant), fi.smallest_subnormal)


def _arb_value(x):
    n, d = x.as_integer_ratio()
    return flint.arb(n) / flint.arb(d)


# the primitives' (pow's, a function of two arguments, in tests/test_pow.py)
@pytest.mark.parametrize("name", sorted(n for n in ball.WIDE.ulps if n != "pow") if ball.WIDE else [])
def test_long_double_function_within_its_contract(name):
    """The platform long double function against Arb at 200 bits, on arguments
    spread over the binades where the catalog uses it, with the tiny and the huge."""
    flint.ctx.prec = 200
    try:
        rng = np.random.default_rng(3)
        mag = np.exp2(rng.uniform(-60, 9, 3000).astype(np.longdouble))
        t = mag * rng.choice([-1, 1], mag.size)
        if name in ("log", "sqrt"):
            t = np.abs(t)
        if name == "log1p":
            t = np.where(t < -1, -np.abs(t) / (1 + np.abs(t)), t)
        if name in ("exp", "expm1"):
            t = np.clip(t, -11000, 11000)
        if name in ("erf", "erfc"):
            t = np.clip(t, -110, 110)
        if name in ("asin", "acos", "atanh"):  # into (-1, 1), the tiny kept
            t = t / (1 + np.abs(t))
        if name == "acosh":
            t = 1 + np.abs(t)
        if name == "sinh":
            t = np.clip(t, -11350, 11350)
        fu = long_double_array(name)
        if fu is None:
            pytest.skip(
                f"no long double {name} on this platform ({libm_arrays.status()}): its inputs take the exact path"
            )
        got = fu[0](t)
        worst = 0.0
        for ti, gi in zip(t, got):
            v = getattr(_arb_value(ti), name)()
            err = abs(_arb_value(gi) - v) / _arb_value(_ulp(gi))  # in ULPs of the result
            worst = max(worst, float(err.upper()))
        assert worst <= ball.WIDE.ulps[name], f"{name}: {worst} ULPs, contract {ball.WIDE.ulps[name]}"
    finally:
        flint.ctx.prec = 53
