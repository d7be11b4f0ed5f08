"""ConstantPow: DirectML's DML_ELEMENT_WISE_CONSTANT_POW (level 1.0), pow(x * scale + bias, Exponent).

Its document: "f(x) = pow(x, Exponent). Negative bases are supported for integral exponents, otherwise this
operator returns NaN." opcert reads pow as the real power where it is defined (expr.pow_record): u^e for u > 0; 0^e
= 0 for e > 0 and 1 for e = 0; (-1)^e |u|^e for u < 0 and an integer e; the pole at u = 0 for e < 0 is C's
+-inf (-inf at -0 for an odd e). A negative base with a non-integer exponent is NaN, -inf included (C's pow gives
+inf there; the document's sentence covers every negative base). NaN gives NaN, for every exponent, as every
operator of opcert's catalog (C's pow(NaN, 0) is 1; DirectML's document does not say). Exponent has no default (a
required member): opcert checks 2 unless told.

opcert's implementation raises s, the scale-bias rounded once in binary64, with the platform's pow (a negative s
to an integer power as +-pow(-s, e): NumPy's pow is not odd bit for bit), and
corrects for the rounding's error lo (its two-sum): (s + lo)^e = s^e (1 + lo / s)^e, the factor's excess
expm1(e log1p(lo / s)) added by one fused multiply-add. The platform's binary64 pow is NumPy's: SVML's where
NumPy has its AVX-512 loops, the C library's elsewhere; both under pow's contract (expr.pow_record)."""

from dataclasses import replace
from fractions import Fraction

from opcert.expr import attr, both, either, eq, expm1, floor, fma, isnan, log1p, negate, power, select
from opcert.spec.declarations import LIMITS, NAN_PROPAGATION, Limit, Property, const, x
from opcert.spec.elementwise import SCALE_BIAS, bias, dml_element_wise, scale, scale_bias_parts, scaled
from opcert.spec.model import Attribute, Operator, RuntimeMap

exponent = attr("exponent")
INTEGER = eq(floor(exponent), exponent)
EVEN = eq(floor(exponent * const(0.5)) * 2, exponent)
ODD = both(INTEGER, negate(EVEN))
PLAIN = both(eq(scale, 1), eq(bias, 0))
MAX64 = const(1.7976931348623157e308)
TINY = const(Fraction(1, 2**1074))


def _pow(t):
    return power(t, exponent)


def _parity_by_construction(s):
    """pow(s, e), a negative s with an integer e taken as +-pow(-s, e): NumPy's binary64 pow is not odd bit for bit
    (its AVX-512 loop gives pow(-a, 3) and -pow(a, 3) an ULP apart on 5% of a), so that the parity of C's pow, which
    the provers do not assume of the platform, holds of opcert's code by its form. Zeros stay C's (pow(-0, 3) = -0)."""
    negative = select(ODD, -power(-s, exponent), power(-s, exponent))
    return select(INTEGER, select(s < 0, negative, power(s, exponent)), power(s, exponent))


def _pow_scaled():
    _, s, lo = scale_bias_parts()
    y = _parity_by_construction(s)
    # lo is 0 where the sum is exact (always at bias 0), NaN at x = +-inf
    # at bias 0 the sum is exact (x * scale: binary32 operands): the provers then see pow(x * scale, e) itself
    y = select(eq(bias, 0), y, select(either(eq(lo, 0), isnan(lo)), y, fma(y, expm1(exponent * log1p(lo / s)), y)))
    # where C's pow is not the definition: NaN to the power 0 is 1 in C (NaN here), and -inf to a non-integer
    # power is +inf or +0 in C (the document's NaN: s * 0 is IEEE's NaN at s = -inf; no real value is below -MAX)
    y = select(both(s < -MAX64, negate(INTEGER)), s * const(0), y)
    return select(isnan(x), x, y)


def _at(side: int, toward: int, condition) -> tuple:
    """The limits at x -> side * inf where x * scale + bias -> toward * inf (under `condition`)."""

    def lim(value, where, zero_sign=1):
        return Limit(side, value, zero_sign=zero_sign, condition=both(condition, where))

    zero = eq(exponent, 0)
    if toward > 0:
        return (lim(const(1), zero), lim("inf", exponent > 0), lim(const(0), exponent < 0))
    return (
        lim(const(1), zero),
        lim("nan", negate(INTEGER)),  # a negative base, a non-integer exponent: the document's NaN
        lim("-inf", both(ODD, exponent > 0)),
        lim("inf", exponent > 0),
        lim(const(0), ODD, zero_sign=-1),
        lim(const(0), exponent < 0),
    )


def _limits() -> tuple:
    zero_scale = eq(scale, 0)
    at_bias = (  # x * 0 + bias is the bias at both ends
        Limit(1, const(1), condition=both(zero_scale, eq(exponent, 0))),
        Limit(-1, const(1), condition=both(zero_scale, eq(exponent, 0))),
        Limit(1, "nan", condition=both(zero_scale, both(bias < 0, negate(INTEGER)))),
        Limit(-1, "nan", condition=both(zero_scale, both(bias < 0, negate(INTEGER)))),
        Limit(1, "inf", condition=both(zero_scale, both(eq(bias, 0), exponent < 0))),  # IEEE's pow(+0, e < 0)
        Limit(-1, "inf", condition=both(zero_scale, both(eq(bias, 0), exponent < 0))),
        Limit(1, _pow(bias), condition=zero_scale),
        Limit(-1, _pow(bias), condition=zero_scale),
    )
    return (
        *at_bias,
        *_at(1, -1, scale < 0),
        *_at(-1, 1, scale < 0),
        *_at(1, 1, scale > 0),
        *_at(-1, -1, scale > 0),
    )


def _with_exponent(standard):
    return replace(standard, attribute_names={**standard.attribute_names, "exponent": "Exponent"})


OPERATOR = Operator(
    name="ConstantPow",
    family="power",
    summary="x to a constant power, element-wise (DirectML: pow(x * scale + bias, Exponent)); NaN for a negative "
    "base and a non-integer exponent",
    attributes=(
        *SCALE_BIAS,
        Attribute(
            "exponent",
            "DirectML CONSTANT_POW Exponent: the power every element is raised to",
            aliases=("Exponent",),
            example=2.0,
        ),
    ),
    standards=(
        _with_exponent(
            dml_element_wise(
                "CONSTANT_POW",
                "f(x) = pow(x, Exponent); negative bases with integral exponents only, else NaN",
                _pow,
                implementation_of_x=_pow_scaled(),
                reference_of_x=_pow(scaled()),
                notes="Exponent has no default (a required member): opcert checks 2 unless told. NaN gives NaN for "
                "every exponent (C's pow(NaN, 0) is 1; the document does not say).",
            )
        ),
    ),
    primary="directml",
    implementation=_pow_scaled(),
    limits=_limits(),
    properties=(
        Property("nonnegative", "range", "pow(u, e) >= 0 where e is an even integer", lower=const(0), condition=EVEN),
        Property(
            "monotonic",
            "monotonic",
            "pow(x, e) is non-decreasing on [0, inf) where e > 0 (scale 1, bias 0)",
            domain=(const(0), None),
            condition=both(PLAIN, exponent > 0),
        ),
        Property(
            "decreasing",
            "monotonic",
            "pow(x, e) is non-increasing on (0, inf) where e < 0 (scale 1, bias 0): x in [2^-1074, inf)",
            domain=(TINY, None),  # the pole at 0 is +inf at both zeros (x * 1 + 0 is +0): left out, as Reciprocal's
            decreasing=True,
            condition=both(PLAIN, exponent < 0),
        ),
        Property(
            "monotonic_odd",
            "monotonic",
            "pow(x * scale + bias, e) is non-decreasing where e is a positive odd integer and scale >= 0",
            condition=both(both(ODD, exponent > 0), scale >= 0),
        ),
        Property(
            "odd",
            "odd",
            "pow(-x * scale, e) = -pow(x * scale, e) where e is a positive odd integer and bias = 0",
            # a negative odd e: x * scale + 0 is +0 at both zeros, so both give the pole's +inf
            condition=both(both(ODD, exponent > 0), eq(bias, 0)),
            zero_sign=False,  # x * scale + 0 is +0 at both zeros (scale_bias_properties' odd_scaled)
        ),
        Property(
            "even",
            "even",
            "pow(-x * scale, e) = pow(x * scale, e) where e is an even integer and bias = 0",
            condition=both(EVEN, eq(bias, 0)),
        ),
        Property(
            "one", "exact_point", "pow(1, e) = 1 (scale 1, bias 0)", points=((const(1), const(1)),), condition=PLAIN
        ),
        Property(
            "zero",
            "exact_point",
            "pow(0, e) = 0 where e > 0 (scale 1, bias 0)",
            points=((const(0), const(0)),),
            condition=both(PLAIN, exponent > 0),
        ),
        Property(
            "identity",
            "exact_point",
            "pow(x, 1) = x at 2.5, -3 and 0.375 (scale 1, bias 0)",
            points=tuple((const(v), const(v)) for v in (2.5, -3, 0.375)),
            condition=both(PLAIN, eq(exponent, 1)),
        ),
        Property(
            "square",
            "exact_point",
            "pow(3, 2) = 9, pow(-1.5, 2) = 2.25 (scale 1, bias 0)",
            points=((const(3), const(9)), (const(-1.5), const(2.25))),
            condition=both(PLAIN, eq(exponent, 2)),
        ),
        NAN_PROPAGATION,
        LIMITS,
    ),
    budget64=1.0,
    runtimes={
        "torch": RuntimeMap(
            "torch.pow", positional=("exponent",), condition=PLAIN, why_not="torch.pow has no scale and bias"
        ),
        "jax": RuntimeMap(
            "jax.numpy.power",
            positional=("exponent",),
            condition=PLAIN,
            why_not="jax.numpy.power has no scale and bias",
        ),
    },
)
