"""pow(a, b) in the provers' domains: z3 over the reals (the spec level, a symbolic exponent), the bit-precise
floating-point model, the rounded intervals and the monotonicity directions. Expected values come from
mathematics (x^2 >= 0, |a|^b increasing in |a| for b > 0, odd powers odd), from MPFR through gmpy2 and from the C
library's pow (IEEE 754 / C99 Annex F special cases), never from the code under test."""

import ctypes
import ctypes.util
import math
from fractions import Fraction

import gmpy2
import numpy as np
import pytest
import z3
from flint import ctx

from opcert.expr import attr, const, power, var
from opcert.verify.proofs.common import model_value, solve
from opcert.verify.proofs.fp_model import F64, FPModel, val64
from opcert.verify.proofs.impl_level import R64
from opcert.verify.proofs.interval import arb_interval, arb_to_fractions, eval_rounded
from opcert.verify.proofs.monotone import Split, Stuck, direction
from opcert.verify.proofs.real_model import RealModel
from opcert.verify.proofs.real_monotone import Span, prove_nondecreasing
from opcert.verify.proofs.real_monotone import direction as span_direction

x, e = var("x"), attr("e")
ODD = [z3.IsInt(z3.Real("e")), z3.Not(z3.IsInt(z3.Real("e") / 2))]
EVEN = [z3.IsInt(z3.Real("e") / 2)]


def _query(build, condition=()):
    """(status, model, terms): whether the violation build(model, e) -> (constraints, terms) is satisfiable over
    the reals, the exponent a symbolic real under the condition."""
    m = RealModel(exact=True)
    E = z3.Real("e")
    viol, terms = build(m, E)
    status, model, _, reason = solve(list(condition) + viol + m.axioms(), "spec")
    assert status != "unknown", reason
    return status, model, terms


def _range_below_zero(f):
    def build(m, E):
        X = z3.Real("x")
        return [m.eval(f, X, {"e": E}) < 0], {"x": X}

    return build


def _decrease(f, lo=None, increase=False):
    def build(m, E):
        x1, x2 = z3.Reals("x1 x2")
        y1, y2 = m.eval(f, x1, {"e": E}), m.eval(f, x2, {"e": E})
        where = [x1 >= lo] if lo is not None else []
        return where + [x1 <= x2, y1 < y2 if increase else y1 > y2], {"x1": x1, "x2": x2}

    return build


# ---- z3 over the reals (spec level) ---------------------------------------------------------------


def test_a_square_is_never_negative():
    assert _query(_range_below_zero(power(x, 2)))[0] == "unsat"
    assert _query(_range_below_zero(power(x, e)), EVEN)[0] == "unsat"  # every even integer e, negative ones too


def test_a_power_of_a_non_negative_base_is_non_negative_for_every_exponent():
    def build(m, E):
        X = z3.Real("x")
        return [X >= 0, m.eval(power(x, e), X, {"e": E}) < 0], {}

    assert _query(build)[0] == "unsat"


def test_x_to_a_positive_e_is_non_decreasing_on_the_half_line_and_to_a_negative_e_non_increasing():
    assert _query(_decrease(power(x, e), lo=0), [z3.Real("e") > 0])[0] == "unsat"
    # on (0, inf): x = 0 is the pole, where the definition is not claimed
    assert _query(_decrease(power(x, e), lo=0, increase=True), [z3.Real("e") < 0])[0] == "unsat"
    # an odd positive integer: on the whole line
    assert _query(_decrease(power(x, e)), ODD + [z3.Real("e") > 0])[0] == "unsat"


def test_odd_and_even_powers():
    def mirror(sign, f):
        def build(m, E):
            X = z3.Real("x")
            return [m.eval(f, -X, {"e": E}) != sign * m.eval(f, X, {"e": E})], {"x": X}

        return build

    assert _query(mirror(-1, power(x, 3)))[0] == "unsat"
    assert _query(mirror(-1, power(x, e)), ODD)[0] == "unsat"
    assert _query(mirror(1, power(x, e)), EVEN)[0] == "unsat"
    assert _query(mirror(1, power(x, -4)))[0] == "unsat"


def test_exact_points():
    def at(point, value):
        def build(m, E):
            return [m.eval(power(x, e), z3.RealVal(point), {"e": E}) != value], {}

        return build

    E = z3.Real("e")
    assert _query(at(1, 1))[0] == "unsat"  # 1^e = 1 for every e
    assert _query(at(0, 0), [E > 0])[0] == "unsat"
    assert _query(at(2, 4), [E == 2])[0] == "unsat"
    assert _query(at(-3, -3), [E == 1])[0] == "unsat"
    assert _query(at("5/2", "5/2"), [E == 1])[0] == "unsat"


def test_x_squared_is_not_non_decreasing_on_the_whole_line():
    """The counterexample replays in exact rationals: x1 <= x2 and x1^2 > x2^2."""
    status, model, terms = _query(_decrease(power(x, e)), [z3.Real("e") == 2])
    assert status == "sat"
    x1, x2 = (model_value(model, terms[k]) for k in ("x1", "x2"))
    assert x1 <= x2 and x1**2 > x2**2


def test_false_claims_are_refuted_so_the_axioms_are_not_vacuous():
    # an odd power is negative somewhere
    status, model, terms = _query(_range_below_zero(power(x, e)), ODD)
    assert status == "sat" and model_value(model, terms["x"]) < 0
    # a negative power decreases on (0, inf): it is not non-decreasing there
    status, model, terms = _query(_decrease(power(x, e), lo=0), [z3.Real("e") < 0])
    assert status == "sat"
    x1, x2 = (model_value(model, terms[k]) for k in ("x1", "x2"))
    assert 0 < x1 < x2
    # x^3 is not even
    assert (
        _query(lambda m, E: ([m.eval(power(x, 3), -z3.Real("x"), {}) != m.eval(power(x, 3), z3.Real("x"), {})], {}))[0]
        == "sat"
    )


def test_the_definition_is_claimed_only_where_it_is_defined():
    """(-1)^(1/2) and 0^-1 are outside pow's domain: recorded as a divisor is, and excluded by the axioms; a
    negative base to an integer power, and 0^0 = 1, are inside."""

    def at(point, exponent):
        m = RealModel(exact=True)
        m.eval(power(x, exponent), z3.RealVal(point), {})
        return solve(m.axioms(), "spec")[0]

    assert at(-1, Fraction(1, 2)) == "unsat"
    assert at(0, -1) == "unsat"
    assert at(0, Fraction(-3, 2)) == "unsat"
    assert at(-2, -3) == "sat" and at(0, 0) == "sat" and at(0, Fraction(1, 2)) == "sat"

    def symbolic(point, condition):
        m = RealModel(exact=True)
        E = z3.Real("e")
        m.eval(power(x, e), z3.RealVal(point), {"e": E})
        return solve([condition(E)] + m.axioms(), "spec")[0]

    assert symbolic(-2, lambda E: z3.Not(z3.IsInt(E))) == "unsat"
    assert symbolic(-2, lambda E: z3.IsInt(E)) == "sat"


def test_the_rounding_abstraction_models_the_platforms_pow():
    """Implementation level: the platform's pow within its contract; x^2 >= 0 and the sign of x^3 still follow (the
    contract's sign clause), x^3 odd does not (no parity clause: NumPy's AVX-512 pow breaks it, tests/test_pow.py),
    and a non-integer power of a reachable negative base is recorded."""
    X = z3.Real("x")
    m = RealModel(exact=False, inner=R64)
    assert solve([m.eval(power(x, 2), X, {}) < 0] + m.axioms(), "abstraction")[0] == "unsat"
    m = RealModel(exact=False, inner=R64)
    assert solve([X < 0, m.eval(power(x, 3), X, {}) > 0] + m.axioms(), "abstraction")[0] == "unsat"
    m = RealModel(exact=False, inner=R64)
    y1, y2 = m.eval(power(x, 3), -X, {}), m.eval(power(x, 3), X, {})
    assert solve([y1 != -y2] + m.axioms(), "abstraction")[0] == "sat"
    m = RealModel(exact=False, inner=R64)
    m.eval(power(x, 0.5), X, {})
    assert solve([z3.Or(*(z3.And(on, d == 0) for on, d in m.divisors))] + m.axioms(), "abstraction")[0] == "sat"


# ---- the bit-precise model ----------------------------------------------------------------------------


def _fp(build):
    m = FPModel()
    X = z3.FP("x", F64)
    status, model, _, reason = solve(build(m, X) + m.axioms(), "fp")
    assert status != "unknown", reason
    return status, model, X


def test_the_bit_precise_model_proves_sign_but_assumes_no_parity():
    assert (
        _fp(lambda m, X: [z3.Not(z3.fpIsNaN(X)), z3.fpLT(m.eval(power(x, 2), X, {}), val64(0))])[0] == "unsat"
    )  # -0 < 0 is false: a zero of either sign passes
    # pow(-x, 3) = -pow(x, 3) bit for bit is no clause of the contract: NumPy's AVX-512 pow breaks it
    # (tests/test_pow.py), so the model leaves the platform's value at a negative base free but for its sign
    status, model, X = _fp(
        lambda m, X: [
            z3.fpGEQ(X, val64(1)),
            z3.fpLEQ(X, val64(2)),
            z3.Not(z3.fpEQ(m.eval(power(x, 3), z3.fpNeg(X), {}), z3.fpNeg(m.eval(power(x, 3), X, {})))),
        ]
    )
    assert status == "sat"
    assert (
        _fp(
            lambda m, X: [
                z3.fpLT(X, val64(0)),
                z3.Not(z3.fpIsInf(X)),
                z3.Not(z3.fpIsNegative(m.eval(power(x, 3), X, {}))),
            ]
        )[0]
        == "unsat"
    )


SPECIAL = [0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 0.5, -0.5, math.inf, -math.inf, math.nan]
EXPONENTS = [0.0, -0.0, 1.0, 2.0, 3.0, -1.0, -2.0, -3.0, 0.5, -0.5, math.inf, -math.inf, math.nan]
LIBM = ctypes.CDLL(ctypes.util.find_library("m"))
LIBM.pow.restype, LIBM.pow.argtypes = ctypes.c_double, (ctypes.c_double, ctypes.c_double)


def _fp_val(v):
    return z3.fpNaN(F64) if math.isnan(v) else z3.FPVal(v, F64)


@pytest.mark.parametrize("b", EXPONENTS)
def test_the_bit_precise_model_never_contradicts_the_platforms_pow(b):
    """At each special pair the model admits the C library's pow (C99 Annex F) and NumPy's, bit for bit, and
    where its facts decide the value it is theirs (they differ at pow(-inf, 0.5): C's +inf, NumPy's SIMD loops
    NaN; the model leaves that one free)."""
    for a in SPECIAL:
        m = FPModel()
        y = m.power(_fp_val(a), _fp_val(b))
        ax = m.axioms()
        with np.errstate(all="ignore"):
            values = {float(LIBM.pow(a, b)), float(np.power(np.float64(a), np.float64(b)))}
        for want in values:
            assert solve([y == _fp_val(want)] + ax, "fp")[0] == "sat", (a, b, want)


def test_the_bit_precise_model_decides_the_clauses_of_the_contract():
    """pow(a, 0) = 1, pow(1, b) = 1, pow(a, 1) = a, NaN for a finite negative base and a non-integer exponent."""
    m = FPModel()
    a, b = z3.FP("a", F64), z3.FP("b", F64)
    for viol in (
        [z3.fpIsZero(b), m.power(a, b) != val64(1)],
        [a == val64(1), m.power(a, b) != val64(1)],
        [b == val64(1), m.power(a, b) != a],
        [
            z3.fpLT(a, val64(0)),
            z3.Not(z3.fpIsInf(a)),
            z3.Not(z3.fpIsInf(b)),
            z3.Not(z3.fpEQ(z3.fpRoundToIntegral(z3.RNE(), b), b)),
            z3.Not(z3.fpIsNaN(m.power(a, b))),
        ],
    ):
        assert solve(viol + m.axioms(), "fp")[0] == "unsat"


# ---- rounded intervals ----------------------------------------------------------------------------------


def _mpfr_pow(a: Fraction, b: Fraction):
    with gmpy2.context(gmpy2.get_context(), precision=200):
        return gmpy2.mpq(
            gmpy2.mpfr(gmpy2.mpq(a.numerator, a.denominator)) ** gmpy2.mpfr(gmpy2.mpq(b.numerator, b.denominator))
        )


@pytest.mark.parametrize(
    "lo, hi, b",
    [
        ("1", "2", "0.5"),
        ("0.25", "3", "2"),
        ("-3", "2", "2"),  # both sides of 0, even: the minimum 0 inside
        ("-2", "-0.5", "3"),
        ("-3", "-2", "-3"),
        ("0.5", "8", "-1.5"),
        ("0.0009765625", "4", "0.75"),
        ("0", "4", "3"),
        ("1e-3", "1e3", "7"),
    ],
)
def test_the_interval_domain_encloses_the_platforms_pow(lo, hi, b):
    """Every value a^b over [lo, hi] (MPFR at the ends and at 0, where the monotone pieces turn) and every
    value of the platform's pow on a grid of binary64 points lies in the enclosure."""
    lo, hi, b = Fraction(lo), Fraction(hi), Fraction(b)
    saved = ctx.prec
    ctx.prec = 80
    try:
        v = eval_rounded(power(x, const(b)), arb_interval(lo, hi), {})
    finally:
        ctx.prec = saved
    vlo, vhi = arb_to_fractions(v)
    points = [lo, hi] + ([Fraction(0)] if lo < 0 < hi else [])
    for t in points:
        exact = _mpfr_pow(abs(t), b) * (-1 if t < 0 and b.denominator == 1 and b.numerator % 2 else 1)
        assert vlo <= exact <= vhi
    for t in np.linspace(float(lo), float(hi), 1001):
        assert vlo <= Fraction(math.pow(t, float(b))) <= vhi
    # and not absurdly wide: within 2^-20 of the exact range, relatively (Arb's radii carry 30 bits)
    exact_vals = [
        _mpfr_pow(abs(t), b) * (-1 if t < 0 and b.numerator % 2 and b.denominator == 1 else 1) for t in points
    ]
    top = max(abs(min(exact_vals)), abs(max(exact_vals)))
    assert vlo >= min(exact_vals) - top * Fraction(1, 2**20)
    assert vhi <= max(exact_vals) + top * Fraction(1, 2**20)


def test_the_interval_domain_says_where_pow_is_undefined():
    from opcert.numerics.exact import Undecided, Undefined

    with pytest.raises(Undefined):  # a negative base, a non-integer power: NaN
        eval_rounded(power(x, 0.5), arb_interval(Fraction(-2), Fraction(-1)), {})
    with pytest.raises(Undecided):  # partly
        eval_rounded(power(x, 0.5), arb_interval(Fraction(-1), Fraction(1)), {})
    with pytest.raises(Undecided):  # the pole
        eval_rounded(power(x, -2), arb_interval(Fraction(-1), Fraction(1)), {})
    with pytest.raises(Undecided):  # an exponent that depends on x
        eval_rounded(power(const(2), x), arb_interval(Fraction(1), Fraction(2)), {})


# ---- monotonicity directions -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "b, positive, negative",
    [  # the direction of a^b in a on a > 0 and on a < 0 (calculus: d/da a^b = b a^(b-1))
        (2, 1, -1),
        (3, 1, 1),
        (-1, -1, -1),
        (-2, -1, 1),
        (Fraction(1, 2), 1, None),
        (Fraction(-3, 2), -1, None),
        (0, 0, 0),
    ],
)
def test_directions(b, positive, negative):
    f = power(x, const(b))
    for (lo, hi), want in (((Fraction(1, 2), Fraction(3)), positive), ((Fraction(-3), Fraction(-1, 2)), negative)):
        if want is None:  # outside the domain: the piece is split, no direction claimed
            with pytest.raises(Split):
                span_direction(f, Span(lo, hi), {})
            continue
        assert span_direction(f, Span(lo, hi), {})[1] == want
        assert direction(f, arb_interval(lo, hi), {})[1] == want
    # through a decreasing argument the direction turns
    if positive:
        assert direction(power(-x, const(b)), arb_interval(Fraction(-3), Fraction(-1, 2)), {})[1] == -positive


def test_an_exponent_that_depends_on_x_is_stuck():
    with pytest.raises(Stuck, match="exponent that depends on x"):
        direction(power(x, x), arb_interval(Fraction(1), Fraction(2)), {})
    with pytest.raises(Stuck, match="exponent"):
        span_direction(power(const(2), x), Span(Fraction(1), Fraction(2)), {})
    status, why = prove_nondecreasing(power(x, x), {}, 1, None)
    assert status == "unknown" and "exponent" in why


def test_structural_monotonicity_over_the_reals():
    assert prove_nondecreasing(power(x, 3), {}, cuts=(0,))[0] == "proved"
    assert prove_nondecreasing(power(x, e), {"e": Fraction(5)}, cuts=(0,))[0] == "proved"
    assert prove_nondecreasing(power(x, Fraction(1, 2)), {}, 0, None, cuts=(0,))[0] == "proved"
    assert prove_nondecreasing(-power(x, -2), {}, Fraction(1, 1024), None, cuts=(0,))[0] == "proved"
    assert prove_nondecreasing(power(x, 2), {}, cuts=(0,))[0] == "unknown"  # x^2 decreases on x < 0
