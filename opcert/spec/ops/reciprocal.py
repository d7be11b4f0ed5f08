"""Reciprocal: ONNX Reciprocal-6/13 (bfloat16 from 13); DirectML DML_ELEMENT_WISE_RECIP (level 1.0),
1 / (x * scale + bias).

1/x has a pole at 0, outside the real function's domain: there both standards give IEEE 754's quotient, the
infinity of the zero's sign (1 / -0 = -inf), which is the reference's value (spec.reference.pole_value); the
properties of the definition are claimed where it is defined (verify.proofs.real_model). opcert's implementation
divides in binary64, correctly rounded, then rounds to the format: a second rounding that cannot change a
quotient of two binary32 values (53 >= 2 * 24 + 2 bits). DirectML's 1 / s, s the once-rounded sum: with its
two-sum error lo, 1 / (s + lo) = r - r (r lo) to second order, r = 1 / s. DirectML's form is not odd where bias =
0, as the other ScaleBias forms are: IEEE's x * scale + 0 is +0 at both zeros, so the pole is +inf at x = -0 too."""

from fractions import Fraction

from opcert.expr import both, either, eq, fma, isnan, negate, select
from opcert.spec.declarations import LIMITS, NAN_PROPAGATION, Limit, Property, const, x
from opcert.spec.elementwise import (
    SCALE_BIAS,
    bias,
    dml_element_wise,
    onnx_unary,
    scale,
    scale_bias_parts,
)
from opcert.spec.model import Operator, RuntimeMap


def _recip(t):
    return 1 / t


def _recip_scaled():
    _, s, lo = scale_bias_parts()
    r = 1 / s
    # lo is NaN at x = +-inf (s infinite): 1 / s, +-0, there
    return select(either(eq(lo, 0), isnan(lo)), r, fma(-r, r * lo, r))


ZERO_SCALE = eq(scale, 0)

# 1/x is non-increasing on (0, inf) and on (-inf, 0), not across the pole: 1/-1 = -1 < 1 = 1/1. A property's
# domain is closed, so each side ends at the smallest positive binary64 value, 2^-1074 (a subnormal), and its
# negation: every format's nonzero values lie at or beyond it, so each side's domain holds all of that sign's
# nonzero inputs of every format, and no zero. Zero is left out of both: its signs are IEEE's two ends of the pole
# (1/+0 = +inf, 1/-0 = -inf), where -0 and +0, one point for monotonicity, would have to give one value.
TINY = const(Fraction(1, 2**1074))
# DirectML's 1 / (x * scale + bias) is not declared monotone: opcert's float64 form of it is not (scale 2.5, bias
# 0.25: 10.66666666666666 at x = -0.06249999999999999, below 10.666666666666664 at the next input up, 2.2 ULPs
# off): its two-sum correction takes x * scale as exact, which it is for inputs of at most 29 bits, not binary64's.

OPERATOR = Operator(
    name="Reciprocal",
    family="arithmetic",
    summary="1 / x, element-wise; +-inf at +-0 (DirectML: 1 / (x * scale + bias))",
    attributes=SCALE_BIAS,
    standards=(
        onnx_unary("Reciprocal", _recip(x), "y = 1 / x", notes="At +-0, IEEE 754's quotient: +-inf."),
        dml_element_wise("RECIP", "f(x) = 1 / x", _recip, implementation_of_x=_recip_scaled()),
    ),
    primary="onnx",
    implementation=_recip(x),
    standards_differ_where=negate(both(eq(scale, 1), eq(bias, 0))),
    limits=(
        Limit(1, const(0), zero_sign=-1, condition=scale < 0),
        Limit(-1, const(0), zero_sign=1, condition=scale < 0),
        Limit(1, "inf", condition=both(ZERO_SCALE, eq(bias, 0))),  # 1 / (x * 0 + 0): IEEE's 1 / +0
        Limit(-1, "inf", condition=both(ZERO_SCALE, eq(bias, 0))),
        Limit(1, _recip(bias), condition=ZERO_SCALE),
        Limit(-1, _recip(bias), condition=ZERO_SCALE),
        Limit(1, const(0), zero_sign=1),
        Limit(-1, const(0), zero_sign=-1),
    ),
    properties=(
        Property("odd", "odd", "Reciprocal(-x) = -Reciprocal(x), zeros' signs included", standards=("onnx",)),
        Property(
            "points",
            "exact_point",
            "Reciprocal(1) = 1, Reciprocal(2) = 0.5, Reciprocal(-4) = -0.25, Reciprocal(0.5) = 2",
            points=tuple((const(a), const(b)) for a, b in ((1, 1), (2, 0.5), (-4, -0.25), (0.5, 2))),
            standards=("onnx",),
        ),
        Property(
            "monotonic_positive",
            "monotonic",
            "Reciprocal is non-increasing on (0, inf): x in [2^-1074, inf)",
            domain=(TINY, None),
            decreasing=True,
            standards=("onnx",),
        ),
        Property(
            "monotonic_negative",
            "monotonic",
            "Reciprocal is non-increasing on (-inf, 0): x in (-inf, -2^-1074]",
            domain=(None, -TINY),
            decreasing=True,
            standards=("onnx",),
        ),
        NAN_PROPAGATION,
        LIMITS,
    ),
    budget64=0.5,
    runtimes={"torch": RuntimeMap("torch.reciprocal"), "jax": RuntimeMap("jax.numpy.reciprocal")},
)
