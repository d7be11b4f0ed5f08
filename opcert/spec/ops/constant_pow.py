"""ConstantPow: x to a constant power. ONNX's Pow-7 (bfloat16 from 13) with a one-element exponent Y, C's pow; DirectML's
DML_ELEMENT_WISE_CONSTANT_POW (level 1.0), pow(x * scale + bias, Exponent). (ONNX's Pow with an exponent tensor of
its own, every pair of inputs, is another operator.)

DirectML's document: "f(x) = pow(x, Exponent). Negative bases are supported for integral exponents, otherwise this
operator returns NaN." opcert reads pow as the real power where it is defined (expr.pow_record): u^e for u > 0;
0^e = 0 for e > 0 and 1 for e = 0; (-1)^e |u|^e for u < 0 and an integer e; the pole at u = 0 for e < 0 is C's
+-inf (-inf at -0 for an odd e). A negative base with a non-integer exponent is NaN. At -inf the standards differ:
DirectML's sentence covers every negative base (NaN), ONNX's Pow is C's (+inf or +0). NaN gives NaN, except to the
power 0: pow(NaN, 0) is 1 in IEEE 754 and C (ONNX's reference operator np.power, ONNX Runtime and torch give 1;
neither document says), as in opcert's Pow, for both standards. Neither standard
gives a default exponent (DirectML's is a required member, ONNX's an input): opcert checks 2 unless told.

opcert's implementation raises s (x, or DirectML's scale-bias rounded once in binary64) with the platform's pow (a
negative s to an integer power as +-pow(-s, e): NumPy's pow is not odd bit for bit), and for DirectML corrects for
the rounding's error lo (its two-sum): (s + lo)^e = s^e (1 + lo / s)^e, the factor's excess
expm1(e log1p(lo / s)) added by one fused multiply-add. The platform's binary64 pow is NumPy's: SVML's where
NumPy has its AVX-512 loops, the C library's elsewhere; both under pow's contract (expr.pow_record)."""

from dataclasses import replace
from fractions import Fraction

from opcert.expr import absolute, attr, both, either, eq, expm1, floor, fma, isnan, log1p, negate, power, select
from opcert.spec.declarations import (
    ANY_RANK,
    FLOATS_ONNX,
    FLOATS_ONNX_OLD,
    LIMITS,
    NAN_PROPAGATION,
    ONNX_DOC,
    Limit,
    Property,
    Support,
    const,
    x,
)
from opcert.spec.elementwise import SCALE_BIAS, bias, dml_element_wise, scale, scale_bias_parts, scaled
from opcert.spec.model import Attribute, Operator, RuntimeMap, Standard

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
    the provers do not assume of the platform, holds of opcert's code by its form. Zeros stay C's (pow(-0, 3) = -0),
    and -inf to a non-integer power is C's too."""
    even = power(absolute(s), exponent)  # C's pow(-0, e) too: +0, or +inf for e < 0
    odd = select(s < 0, -power(-s, exponent), power(s, exponent))
    # C's pow(-inf, e) for a non-integer e is pow(+inf, e); NumPy's AVX-512 loop gives NaN
    non_integer = select(s < -MAX64, power(-s, exponent), power(s, exponent))
    return select(INTEGER, select(ODD, odd, even), non_integer)


ZERO_POWER = eq(exponent, 0)
NAN_IN = select(ZERO_POWER, const(1), x)  # a NaN base: NaN, and 1 to the power 0 (IEEE 754's pow(NaN, 0))
POW_OF_X = select(isnan(x), NAN_IN, _parity_by_construction(x))


def pow_scaled():
    _, s, lo = scale_bias_parts()
    y = _parity_by_construction(s)
    # lo is 0 where the sum is exact (always at bias 0), NaN at x = +-inf
    # at bias 0 the sum is exact (x * scale: binary32 operands): the provers then see pow(x * scale, e) itself
    # an overflowed s^e stays +-inf: past binary64's range the corrected value rounds to inf in DirectML's formats
    # too, and inf times the factor's excess plus inf is NaN where that excess is negative
    corrected = select(absolute(y) > MAX64, y, fma(y, expm1(exponent * log1p(lo / s)), y))
    # an infinite exponent (Pow's, never ConstantPow's finite attribute): pow(g, +-inf) is decided by |g| against 1,
    # which s keeps unless |s| = 1 with lo != 0: then s moved by 2^-52 toward g stands for it (the correction's
    # factor would be 0 or inf)
    toward = s + select(lo > 0, const(2.0**-52), const(-(2.0**-52)))
    infinite = select(both(eq(absolute(s), 1), negate(eq(lo, 0))), _parity_by_construction(toward), y)
    y = select(
        eq(bias, 0),
        y,
        select(either(eq(lo, 0), isnan(lo)), y, select(absolute(exponent) > MAX64, infinite, corrected)),
    )
    # where C's pow is not the definition: -inf to a non-integer power is +inf or +0 in C (the document's NaN: s * 0
    # is IEEE's NaN at s = -inf; no real value is below -MAX)
    y = select(both(s < -MAX64, negate(INTEGER)), s * const(0), y)
    return select(isnan(x), NAN_IN, y)


def _at(side: int, toward: int, condition) -> tuple:
    """The limits at x -> side * inf where x * scale + bias -> toward * inf (under `condition`)."""

    def lim(value, where, zero_sign=1):
        return Limit(side, value, zero_sign=zero_sign, condition=where if condition is None else both(condition, where))

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
    onnx_at_neg_inf = (  # ONNX's Pow is C's: -inf to a non-integer power is +inf or +0
        Limit(-1, const(1), condition=eq(exponent, 0)),
        Limit(-1, "-inf", condition=both(ODD, exponent > 0)),
        Limit(-1, "inf", condition=exponent > 0),
        Limit(-1, const(0), zero_sign=-1, condition=ODD),
        Limit(-1, const(0)),
    )
    return (
        *at_bias,
        *_at(1, -1, scale < 0),
        *_at(-1, 1, scale < 0),
        *_at(1, 1, scale > 0),
        *_at(-1, -1, scale > 0),
        *_at(1, 1, None),  # ONNX's Pow: no scale (a DirectML limit above always applies first)
        *onnx_at_neg_inf,
    )


def _with_exponent(standard):
    return replace(standard, attribute_names={**standard.attribute_names, "exponent": "Exponent"})


def _properties(key: str, plain) -> tuple:
    """The properties of `key`'s definition; `plain`: the attribute condition under which its x is the power's base
    (DirectML's scale 1, bias 0; None: always, ONNX's Pow)."""

    def where(c):
        return c if plain is None else both(plain, c)

    dml = plain is not None
    at = " (scale 1, bias 0)" if dml else ""
    odd_zero = (  # DirectML: x * scale + 0 is +0 at both zeros, so -0 gives +0's value (and a negative odd e +inf)
        dict(condition=both(both(ODD, exponent > 0), eq(bias, 0)), zero_sign=False) if dml else dict(condition=ODD)
    )
    return (
        Property(
            "nonnegative",
            "range",
            f"pow({'x * scale + bias' if dml else 'x'}, e) >= 0 where e is an even integer",
            lower=const(0),
            condition=EVEN,
        ),
        Property(
            "monotonic",
            "monotonic",
            f"pow(x, e) is non-decreasing on [0, inf) where e > 0{at}",
            domain=(const(0), None),
            condition=where(exponent > 0),
        ),
        Property(
            "decreasing",
            "monotonic",
            f"pow(x, e) is non-increasing on (0, inf) where e < 0{at}: x in [2^-1074, inf)",
            domain=(TINY, None),  # the pole at 0 (+inf, or -inf at -0 for an odd e): left out, as Reciprocal's
            decreasing=True,
            condition=where(exponent < 0),
        ),
        Property(
            "monotonic_odd",
            "monotonic",
            "pow(x * scale + bias, e) is non-decreasing where e is a positive odd integer and scale >= 0"
            if dml
            else "pow(x, e) is non-decreasing where e is a positive odd integer",
            condition=both(both(ODD, exponent > 0), scale >= 0) if dml else both(ODD, exponent > 0),
        ),
        Property(
            "odd",
            "odd",
            "pow(-x * scale, e) = -pow(x * scale, e) where e is a positive odd integer and bias = 0"
            if dml
            else "pow(-x, e) = -pow(x, e) where e is an odd integer, zeros' signs included",
            **odd_zero,
        ),
        Property(
            "even",
            "even",
            "pow(-x * scale, e) = pow(x * scale, e) where e is an even integer and bias = 0"
            if dml
            else "pow(-x, e) = pow(x, e) where e is an even integer",
            condition=both(EVEN, eq(bias, 0)) if dml else EVEN,
        ),
        Property("one", "exact_point", f"pow(1, e) = 1{at}", points=((const(1), const(1)),), condition=plain),
        Property(
            "zero",
            "exact_point",
            f"pow(0, e) = 0 where e > 0{at}",
            points=((const(0), const(0)),),
            condition=where(exponent > 0),
        ),
        Property(
            "identity",
            "exact_point",
            f"pow(x, 1) = x at 2.5, -3 and 0.375{at}",
            points=tuple((const(v), const(v)) for v in (2.5, -3, 0.375)),
            condition=where(eq(exponent, 1)),
        ),
        Property(
            "square",
            "exact_point",
            f"pow(3, 2) = 9, pow(-1.5, 2) = 2.25{at}",
            points=((const(3), const(9)), (const(-1.5), const(2.25))),
            condition=where(eq(exponent, 2)),
        ),
    )


def _for(key: str, props: tuple) -> tuple:
    return tuple(replace(p, name=f"{p.name}_scaled" if key == "directml" else p.name, standards=(key,)) for p in props)


OPERATOR = Operator(
    name="ConstantPow",
    family="power",
    summary="x to a constant power, element-wise: ONNX's Pow with a one-element exponent; DirectML's CONSTANT_POW, "
    "pow(x * scale + bias, Exponent), NaN for a negative base and a non-integer exponent",
    attributes=(
        *SCALE_BIAS,
        Attribute(
            "exponent",
            "the power every element is raised to: ONNX Pow's one-element Y (broadcast), DirectML CONSTANT_POW's "
            "Exponent",
            aliases=("Exponent", "Y"),
            input=True,
            example=2.0,
        ),
    ),
    standards=(
        Standard(
            key="onnx",
            op_name="Pow",
            document=ONNX_DOC.format("Pow"),
            formula_text="Z = pow(X, Y), Y a one-element exponent (broadcast)",
            formula=_pow(x),
            defaults={},
            attribute_names={"exponent": "Y"},
            support=(Support("7", FLOATS_ONNX_OLD, ANY_RANK), Support("13", FLOATS_ONNX, ANY_RANK)),
            implementation=POW_OF_X,
            notes="Y is an input: opcert checks a one-element one, 2 unless told. C's pow (ONNX's reference operator "
            "is np.power): NaN for a negative base and a non-integer exponent, +inf or +0 at -inf; NaN gives NaN, "
            "and 1 to the power 0 (IEEE 754 and np.power).",
        ),
        _with_exponent(
            dml_element_wise(
                "CONSTANT_POW",
                "f(x) = pow(x, Exponent); negative bases with integral exponents only, else NaN",
                _pow,
                implementation_of_x=pow_scaled(),
                reference_of_x=_pow(scaled()),
                notes="Exponent has no default (a required member): opcert checks 2 unless told. NaN gives NaN, and 1 to "
                "the power 0 (IEEE 754's pow(NaN, 0); the document does not say), as DirectML's POW in opcert's Pow. "
                "-inf is a negative base: NaN for a non-integer exponent, where C's pow gives +inf or +0.",
            )
        ),
    ),
    primary="onnx",
    implementation=POW_OF_X,
    # over the reals; at scale 1 and bias 0 they differ at special values only: -0 (x * 1 + 0 is +0) and -inf to a
    # non-integer power (DirectML's NaN, C's +inf or +0), each the limits' and the references' own
    standards_differ_where=negate(PLAIN),
    limits=_limits(),
    properties=(
        *_for("onnx", _properties("onnx", None)),
        *_for("directml", _properties("directml", PLAIN)),
        replace(
            NAN_PROPAGATION,
            statement="a NaN input gives a NaN output where the exponent is not 0 (pow(NaN, 0) = 1)",
            condition=negate(ZERO_POWER),
        ),
        LIMITS,
    ),
    nan_results=((ZERO_POWER, 1),),
    budget64=1.0,
    runtimes={
        "torch": RuntimeMap("torch.pow", positional=("exponent",)),
        "jax": RuntimeMap("jax.numpy.power", positional=("exponent",)),
    },
)
