"""One record per primitive (opcert.expr.primitives.REGISTRY), and every interpreter of the expression
language handles every primitive of the table: a primitive added to the table that some interpreter does
not know fails here, naming the interpreter. Each interpreter is run on f(x) at a point of f's domain; an
interpreter that may decline (the one-sided decision, the long double ball) declines exactly where the
record says so.

The values are checked against an independent source where the interpreter computes one: mpmath at 60
digits."""

from fractions import Fraction

import mpmath
import numpy as np
import pytest
import z3

from opcert.expr import Expr, var
from opcert.expr.primitives import AT_INF, REGISTRY, SIGN_PRESERVING, check_registry, long_double_array

NAMES = sorted(REGISTRY)
X = var("x")
POINT = Fraction(3, 8)  # inside every primitive's domain but acosh's (log's, sqrt's, asin's included)


def _point(name) -> Fraction:
    """POINT, or POINT + 1 where f's domain starts at 1 (acosh)."""
    return POINT if REGISTRY[name].in_domain(POINT) else POINT + 1


MP = {
    "exp": mpmath.exp,
    "expm1": mpmath.expm1,
    "tanh": mpmath.tanh,
    "log1p": mpmath.log1p,
    "log": mpmath.log,
    "erf": mpmath.erf,
    "erfc": mpmath.erfc,
    "sqrt": mpmath.sqrt,
    "sinh": mpmath.sinh,
    "asinh": mpmath.asinh,
    "atan": mpmath.atan,
    "asin": mpmath.asin,
    "acos": mpmath.acos,
    "atanh": mpmath.atanh,
    "acosh": mpmath.acosh,
    "sin": mpmath.sin,
    "cos": mpmath.cos,
    "tan": mpmath.tan,
    "cosh": mpmath.cosh,
    "floor": mpmath.floor,
}


def _f(name):
    return Expr(name, (X,))


def _true(name, q=None) -> float:
    q = _point(name) if q is None else q
    with mpmath.workdps(60):
        return float(MP[name](mpmath.mpf(q.numerator) / q.denominator))


def test_every_primitive_has_an_independent_value_here():
    """This file's oracle covers the table: a new primitive needs its mpmath function above."""
    assert set(MP) == set(REGISTRY)


def test_every_record_is_complete():
    check_registry()
    for p in REGISTRY.values():
        assert p.libm and (p.long_double_ulps is None or p.long_double_ulps > 0 or p.ulps == 0)


@pytest.mark.parametrize("name", NAMES)
def test_numpy_interpreters(name):
    from opcert.expr.numpy_eval import eval_numpy, eval_plain

    x = np.array([float(_point(name))])
    for got in (eval_numpy(_f(name), x, {}), eval_plain(_f(name), x, {})):
        assert abs(float(got[0]) - _true(name)) <= 8e-16 * max(1.0, abs(_true(name)))


@pytest.mark.parametrize("name", NAMES)
def test_exact_interpreters(name):
    from opcert.formats import FLOAT_FORMATS
    from opcert.numerics import exact

    b = exact.eval_ball(_f(name), _point(name), {}, 120)
    lo, hi = exact.arb_to_fractions(b)
    assert lo <= Fraction(_true(name)) + Fraction(1, 10**15) and hi >= Fraction(_true(name)) - Fraction(1, 10**15)
    at = Fraction(0) if REGISTRY[name].exact(Fraction(0)) is not None else Fraction(1)  # log, acos: f(1) = 0
    try:
        q = exact.eval_rational(_f(name), at, {})
    except exact.NotRational:
        q = None
    assert q is not None and q == REGISTRY[name].exact(at) == Fraction(_true(name, at))
    tiny = Fraction(1, 2**40)
    if REGISTRY[name].tiny is not None and REGISTRY[name].in_domain(tiny):
        lo, hi = exact.eval_tiny(_f(name), tiny, {})
        assert lo <= Fraction(_true(name, tiny)) * (1 + Fraction(1, 10**12)) + Fraction(1, 10**30)
    v = exact.evaluate(_f(name), _point(name), {}, FLOAT_FORMATS["float32"])
    assert abs(float(v.lo) - _true(name)) < 1e-12


@pytest.mark.parametrize("name", NAMES)
def test_ball_interpreters(name):
    from opcert.numerics import ball
    from opcert.numerics.ball_compiled import LIBM, VECTOR, source

    x = np.array([float(_point(name))])
    m, r, ok, sg = ball.evaluate(_f(name), x, {}, ball.BINARY64)
    assert ok[0] and abs(m[0] - _true(name)) <= r[0] + 1e-300
    p = REGISTRY[name]
    if ball.WIDE is not None:
        m, r, ok, _ = ball.evaluate(_f(name), x, {}, ball.WIDE)
        assert bool(ok[0]) == (long_double_array(name) is not None)
    # precomputed per block: NumPy's SIMD loops (the record says which), and glibc's vector functions where
    # this host has them (every primitive but sqrt, which is NumPy's everywhere)
    from opcert.expr import libm_arrays

    expected = p.vector or (name != "sqrt" and libm_arrays.vector(name) is not None)
    assert LIBM[name] == p.libm and (name in VECTOR) == expected
    text, _ = source(_f(name), {})  # raises NoBallCode for a primitive the generator does not know
    assert p.libm in text or name in VECTOR


@pytest.mark.parametrize("name", NAMES)
def test_the_records_ball_radius_rule_holds_the_exact_value(name):
    """The record's radius rule, on arguments that carry a radius (f(x / 10): the constant and the
    product are inexact) over f's domain, from 2^-40 to 2^12 and beyond, both signs: wherever a ball is
    ok, NumPy's (binary64, long double) and the compiled one hold mpmath's value of f(x / 10)."""
    from opcert.expr import const
    from opcert.numerics import ball, ball_compiled

    p = REGISTRY[name]
    e = Expr(name, (Expr("mul", (const(Fraction(1, 10)), X)),))
    mags = np.exp2(np.linspace(-40, 12, 161))
    x = np.concatenate([mags, -mags, [0.0, 10.0, 1e4, -1e4, 1e300, -1e300]])
    x = x[[p.in_domain(Fraction(v) / 10) for v in x]]
    evaluators = {
        "numpy": lambda: ball.evaluate(e, x, {}, ball.BINARY64),
        "compiled": lambda: ball_compiled.compiled(e, {})(x),
    }
    if ball.WIDE is not None and long_double_array(name) is not None:
        evaluators["long double"] = lambda: ball.evaluate(e, x, {}, ball.WIDE)
    for label, run in evaluators.items():
        m, r, ok, _ = run()
        assert np.mean(ok[np.abs(x) < 1e4]) > 0.9, f"{name} {label}: decides too little"
        with mpmath.workdps(80):
            for xi, mi, ri in zip(x[ok], np.asarray(m)[ok], np.broadcast_to(r, x.shape)[ok]):
                exact = MP[name](mpmath.mpf(float(xi)) / 10)
                if np.isinf(mi):  # beyond the largest finite value of the ball's format, with its sign
                    assert ri == 0 and exact * np.sign(mi) > _mp(np.finfo(mi.dtype).max), (name, label, float(xi))
                    continue
                assert abs(exact - _mp(mi)) <= _mp(ri), (name, label, float(xi), float(mi), float(ri))


def _mp(v):
    """A binary64 or long double value, exactly."""
    n, d = v.as_integer_ratio()
    return mpmath.mpf(n) / d


@pytest.mark.parametrize("name", NAMES)
def test_one_sided_declines_exactly_where_the_record_says(name):
    from opcert.numerics import one_sided

    assert one_sided.supported(_f(name)) == (REGISTRY[name].one_sided is not None)
    if REGISTRY[name].one_sided is not None:
        m, r, side, ok = one_sided.evaluate(_f(name), np.array([2.0**-40, -(2.0**-40)]), {})
        assert np.all(np.isfinite(m))


@pytest.mark.parametrize("name", NAMES)
def test_proof_interpreters(name):
    from opcert.verify.proofs import monotone, real_monotone
    from opcert.verify.proofs.interval import arb_interval, eval_rounded

    lo, hi = _point(name), _point(name) + Fraction(1, 64)
    v = eval_rounded(_f(name), arb_interval(lo, hi), {})
    assert float(v.lower()) <= _true(name) + 1e-12
    span = real_monotone.enclose(_f(name), real_monotone.Span(lo, hi), {})
    assert span.lo <= Fraction(_true(name)) + Fraction(1, 10**12)
    assert span.hi >= Fraction(_true(name)) - Fraction(1, 10**12)
    p = REGISTRY[name]
    if p.increasing is None:  # sin, cos, tan: a direction only inside one of the record's monotone pieces
        a, b, d = p.pieces[-1]
        inside = (a + (b - a) / 3, a + (b - a) / 2)
        assert monotone.direction(_f(name), arb_interval(*inside), {})[1] == d
        assert real_monotone.direction(_f(name), real_monotone.Span(*inside), {})[1] == d
        with pytest.raises(monotone.Split):  # across the piece's end (short of tan's pole): smaller spans decide
            monotone.direction(_f(name), arb_interval(b - Fraction(1, 64), b + Fraction(1, 10**8)), {})
        outside = (b + 1, b + Fraction(65, 64)) if name != "cos" else (Fraction(-7), Fraction(-6))
        with pytest.raises(monotone.Stuck):
            monotone.direction(_f(name), arb_interval(*outside), {})
        with pytest.raises(monotone.Stuck):
            real_monotone.direction(_f(name), real_monotone.Span(*outside), {})
        return
    want = 1 if REGISTRY[name].increasing else -1
    assert monotone.direction(_f(name), arb_interval(lo, hi), {})[1] == want
    assert real_monotone.direction(_f(name), real_monotone.Span(lo, hi), {})[1] == want


@pytest.mark.parametrize("name", NAMES)
def test_z3_models(name):
    from opcert.verify.proofs.fp_model import F64, FPModel
    from opcert.verify.proofs.real_model import RealModel

    fp = FPModel()
    t = fp.eval(_f(name), z3.FP("x", F64), {})
    assert t is not None
    rm = RealModel()
    term = rm.eval(_f(name), z3.Real("x"), {})
    assert term is not None
    # the facts the provers read from the records
    assert (name in SIGN_PRESERVING) == (REGISTRY[name].sign in ("of_argument", "positive_where_argument_positive"))
    assert AT_INF[name] == REGISTRY[name].at_inf


def test_every_record_is_written_with_keywords():
    """A record names each field it sets (issue 51): Primitive(...) takes no positional argument."""
    import ast
    from pathlib import Path

    from opcert.expr import primitives

    calls = [
        n
        for n in ast.walk(ast.parse(Path(primitives.__file__).read_text()))
        if isinstance(n, ast.Call) and getattr(n.func, "id", None) == "Primitive"
    ]
    assert len(calls) == len(REGISTRY)
    assert [c.args for c in calls] == [[]] * len(calls)


def test_compiled_code_calls_the_function_the_record_names():
    import math

    for p in REGISTRY.values():
        module, name = p.libm.split(".")
        assert p.scalar is getattr({"math": math, "np": np}[module], name)


def test_the_exp_records_moved_rule_bounds_the_move_in_numpy_and_in_numba():
    """|e^y - e^t| <= moved(e^t, t, w) for |y - t| <= w, against mpmath at the ends (where the move is
    largest), over arrays and over scalars, the overflow of expm1(w) included; beside a binary64 underflow,
    which its users' absolute term covers (verify.tensor: n 2^-62)."""
    from opcert.expr.ball_ops import compiled, over_arrays

    moved = REGISTRY["exp"].moved
    t = np.array([-800.0, -30.0, -1.5, -(2.0**-30), 0.0, 0.75, 20.0, -3e38, -700.0])
    w = np.array([1e-3, 2.0**-40, 0.25, 3.0, 1e-300, 1e-6, 0.5, 1e37, 800.0])
    with np.errstate(all="ignore"):
        arrays = over_arrays(moved)(REGISTRY["exp"].numpy(t), t, w)
    scalars = [compiled(moved)(REGISTRY["exp"].scalar(a), a, b) for a, b in zip(t, w)]
    with mpmath.workdps(60):
        for a, b, by_arrays, by_scalars in zip(t, w, arrays, scalars):
            e = mpmath.exp(mpmath.mpf(a))
            worst = max(abs(mpmath.exp(mpmath.mpf(a) + s * mpmath.mpf(b)) - e) for s in (-1, 1))
            for bound in (by_arrays, by_scalars):
                assert worst <= mpmath.mpf(float(bound)) * (1 + mpmath.mpf(2) ** -50) + mpmath.mpf(2) ** -1000, (a, b)
