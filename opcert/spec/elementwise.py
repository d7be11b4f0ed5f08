"""DirectML's element-wise math descriptors (DML_ELEMENT_WISE_*), the pieces their declarations share.

Most of them take an optional DML_SCALE_BIAS: "g(x) = x * scale + bias to each input element prior to
computing this operator". opcert reads it as the exact real x * scale + bias (scale and bias binary32
attributes, as every FLOAT attribute): what the descriptor defines, with no intermediate type named. Without a
ScaleBias (the descriptor's null pointer) scale = 1 and bias = 0, the plain function. opcert's implementation
computes the scale-bias as one fused multiply-add in binary64 (x * scale is exact there for binary32 operands),
f of that sum, and where f would lose its value to the sum's rounding (next to 1 for log, acosh, atanh; beyond
2^53 for the periodic functions; at an integer for floor and ceil) a form over the sum's exact parts
(scale_bias_parts, scaled_minus), for acos and asin next to +-1 where the sum's rounding reaches a rounding
boundary (Standard.slope). A float64 tensor's product is not exact in binary64: there impl.run takes the
reference's value at every finite input when the scale-bias is not 1, 0. The reference is exact."""

import math

import numpy as np

from opcert.expr import absolute, asin, attr, both, const, cos, either, eq, floor, fma, isnan, select, sin, sqrt
from opcert.spec.declarations import ANY_RANK, DML_FLOATS, FLOATS_ONNX, FLOATS_ONNX_OLD, ONNX_DOC, finite_where_zero, x
from opcert.spec.model import Attribute, Limit, Property, Standard, Support

DML_ELEMENT_WISE_DOC = (
    "https://learn.microsoft.com/windows/win32/api/directml/ns-directml-dml_element_wise_{}_operator_desc"
)
# The element-wise descriptors' tables: 4 dimensions at level 1.0, 1 to 8 from level 3.0; the descriptors
# introduced at level 2.0 (ERF, SINH, COSH, ASINH, ACOSH, ATANH) from there
DML_ELEMENT_WISE_LEVELS = (Support("1.0", DML_FLOATS, (4, 4)), Support("3.0", DML_FLOATS, (1, 8)))
DML_ELEMENT_WISE_LEVELS_2_0 = (Support("2.0", DML_FLOATS, (4, 4)), Support("3.0", DML_FLOATS, (1, 8)))

STANDARD_NOTE = (
    "The scale-bias is the exact real x * scale + bias. opcert's implementation computes it as one binary64 fused "
    "multiply-add, with forms over the sum's exact parts where f would lose its value to that rounding; in float64, "
    "where x * scale + bias is no binary64 value, it takes the reference's value."
)
scale, bias = attr("scale"), attr("bias")
# every finite x of every format: the domain of a property that +-inf breaks by IEEE 754 (sin(+-inf) is NaN)
FINITE = (const(-1.7976931348623157e308), const(1.7976931348623157e308))
SCALE_BIAS = (
    Attribute("scale", "DirectML ScaleBias: the input's scale, g(x) = x * scale + bias", aliases=("Scale",)),
    Attribute("bias", "DirectML ScaleBias: the input's bias, g(x) = x * scale + bias", aliases=("Bias",)),
)


def scaled(t=x):
    """The exact scale-bias of t, as the definition reads."""
    return t * scale + bias


def scaled_once(t=x):
    """The scale-bias as opcert computes it, t * scale + bias, one rounding (binary32 x and scale: their product
    is exact). At a zero scale, t * scale is 0 for every t, +-inf included, where IEEE's 0 * inf would be NaN (the
    limits there are f(bias)): t is clamped first (declarations.finite_where_zero)."""
    return fma(finite_where_zero(scale, t), scale, bias)


def scaled_minus(c: float):
    """x * scale + bias - c, one rounding of the exact value for binary32 x and scale (c = 1 or -1: log's, acosh's,
    atanh's and the arcs' distance to 1 and -1). From the sum's two-sum s + lo (scale_bias_parts): s - c is
    exact wherever it cancels (Sterbenz: s within a factor 2 of c), and adding lo rounds once. Computing bias - c
    first would not do: it is inexact for |bias| below 2^-29 (1 - 3 x 2^-60 needs 61 bits), and next to x * scale
    = c - bias the lost bits of bias are the result's leading ones. +-inf: s - c (lo is NaN there)."""
    _, s, lo = scale_bias_parts()
    d = s - const(c)
    return select(isnan(lo), d, d + lo)


def minus_scaled(c: float):
    """c - (x * scale + bias), as scaled_minus: +0 where the sum is c (negating scaled_minus would give -0 there,
    and atanh's 2 / (1 - g) -inf instead of +inf)."""
    _, s, lo = scale_bias_parts()
    d = const(c) - s
    return select(isnan(lo), d, d - lo)


def where_inexact(corrected, plain):
    """`plain` where x * scale + bias is exact in binary64 (s is the sum itself) or x is +-inf (lo is NaN), else
    `corrected`: a form over the exact sum's parts where f of the once-rounded sum loses the value (next to a
    pole or an end point of f's domain, where rounding the sum moves f by many of the narrow format's ULPs)."""
    _, _, lo = scale_bias_parts()
    return select(either(eq(lo, 0), isnan(lo)), plain, corrected)


def arc_slope(s: np.ndarray) -> np.ndarray:
    """|acos'(s)| = |asin'(s)| = 1 / sqrt(1 - s^2): inf at +-1 and beyond (Standard.slope)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        d = 1.0 - s * s
        return np.where(d > 0, 1.0 / np.sqrt(np.where(d > 0, d, 1.0)), np.inf)


def acos_of_distance(d):
    """acos(1 - d) = 2 asin(sqrt(d / 2)), for d in [0, 1] well conditioned where acos(1 - d) is not; NaN below 0
    (1 - d beyond 1), as IEEE's acos there."""
    return 2 * asin(sqrt(d * 0.5))


PI, HALF_PI = const(math.pi), const(math.pi / 2)


def acos_steep():
    """acos(x * scale + bias) from the sum's distance to +-1, rounded once (minus_scaled, scaled_minus): acos of
    the once-rounded sum next to 1 loses the value (acos(1 - 3 x 8.8e-24) came out 0, 1.68e7 float32 ULPs from
    7.3e-12), and next to -1 its domain (pi for a sum just below -1, where the value is NaN)."""
    return select(scaled_once() >= 0, acos_of_distance(minus_scaled(1)), PI - acos_of_distance(scaled_minus(-1)))


def asin_steep():
    """asin(x * scale + bias) beyond +-1/2 as pi/2 - acos of the sum's distance to +-1 (acos_steep: asin of the
    once-rounded sum next to 1 was a float32 ULP off); within, asin of the sum."""
    s = scaled_once()
    return select(
        s >= 0.5,
        HALF_PI - acos_of_distance(minus_scaled(1)),
        select(s <= -0.5, acos_of_distance(scaled_minus(-1)) - HALF_PI, asin(s)),
    )


def dml_element_wise(
    name: str,
    text: str,
    f,
    implementation=None,
    reference_form=None,
    notes: str = "",
    support=DML_ELEMENT_WISE_LEVELS,
    key: str = "directml",
    implementation_of_x=None,
    reference_of_x=None,
    absolute_error=None,
    slope=None,
    steep_form=None,
    zero_sign_form=None,
) -> Standard:
    """The standard of DML_ELEMENT_WISE_<name> with a ScaleBias: f(x * scale + bias). `f` maps an expression to
    the operator's expression of it; `implementation` and `reference_form` likewise, when they differ from f.
    `key`: another where the operator's "directml" is its activation descriptor (Identity). `implementation_of_x`:
    an implementation written over x itself, where f of the once-rounded scale-bias would not do (periodic_scaled);
    `reference_of_x` likewise for the reference's form (periodic_reference); `absolute_error` its error bound where
    it is absolute (Standard.absolute_error); `slope` f's slope where its condition is unbounded, `steep_form` the
    form taken there (Standard.slope); `zero_sign_form` what gives an exact zero its sign (Standard.zero_sign_form)."""
    return Standard(
        key=key,
        op_name=f"DML_ELEMENT_WISE_{name}",
        document=DML_ELEMENT_WISE_DOC.format(name.lower()),
        formula_text=f"{text}, of g(x) = x * scale + bias (ScaleBias; absent: scale = 1, bias = 0)",
        formula=f(scaled()),
        defaults={"scale": 1.0, "bias": 0.0},
        attribute_names={"scale": "ScaleBias.Scale", "bias": "ScaleBias.Bias"},
        support=support,
        implementation=implementation_of_x if implementation_of_x is not None else (implementation or f)(scaled_once()),
        reference_form=reference_of_x
        if reference_of_x is not None
        else (reference_form(scaled()) if reference_form else None),
        notes=(STANDARD_NOTE + " " + notes).strip(),
        absolute_error=absolute_error,
        slope=slope,
        steep_form=steep_form,
        zero_sign_form=zero_sign_form,
    )


def onnx_unary(
    name: str, formula, formula_text: str, since=("6", "13"), notes: str = "", reference_form=None
) -> Standard:
    """ONNX's standard of an element-wise operator without attributes: its float types from the first opset,
    bfloat16 from opset 13 (Exp, Log, Sqrt, Abs, Neg, ...; Sign from 9)."""
    first, bf16 = since
    return Standard(
        key="onnx",
        op_name=name,
        document=ONNX_DOC.format(name),
        formula_text=formula_text,
        formula=formula,
        defaults={},
        attribute_names={},
        support=(Support(first, FLOATS_ONNX_OLD, ANY_RANK), Support(bf16, FLOATS_ONNX, ANY_RANK)),
        notes=notes,
        reference_form=reference_form,
    )


def periodic_scaled(f, addition):
    """f(x * scale + bias) for a periodic f (sin, cos; tan as their quotient), as opcert computes it. The scale-bias
    rounded once is off by up to half its binary64 ULP, and past 2^53 that is more than a period: sin of it is any
    value in [-1, 1] (DirectML's Sin at bias 1 was 3.5 million bfloat16 ULPs off). Where that sum is inexact (its
    two-sum error lo is not 0), f(p + bias) comes from the addition formula `addition(p, bias)` on the exact
    product p = x * scale (binary32 operands: 48 bits) and the bias, each reduced by the platform's function; it
    stays within a few binary64 ULPs of the value absolutely (relatively, not next to a zero of f: there impl.run
    takes the exact value wherever that absolute error reaches a rounding boundary, Standard.absolute_error). Bias
    0: f of the exact product, as before. +-inf and NaN give NaN through the formula (lo is NaN there)."""
    p, s, lo = scale_bias_parts()
    return select(eq(bias, 0), f(s), select(eq(lo, 0), f(s), addition(p, bias)))


def scale_bias_parts():
    """(p, s, lo): p = x * scale (exact in binary64 for binary32 operands: 48 bits), s = p + bias rounded once,
    and lo its two-sum error (Knuth's, six operations), s + lo = p + bias exactly; NaN at x = +-inf."""
    t = finite_where_zero(scale, x)
    p = t * scale
    s = fma(t, scale, bias)
    bb = s - p
    return p, s, (p - (s - bb)) + (bias - bb)


# Past 2^53 an integer's neighbour n -+ 1 is no binary64 value; the next binary64 value toward it rounds as it does in
# every format of at most 24 bits: with binary32 operands the sum s carries at most 48 significant bits, and its
# neighbour's lowest bit is its binary64 ULP, below every format's midpoint. fma(n, -2^-53, n) is the neighbour
# toward zero, fma(n, 2^-53 + 2^-80, n) the one away from it (the extra 2^-80 keeps that sum off a tie at powers of 2).
INTEGERS = const(2.0**53)
TOWARD_ZERO, AWAY = const(-(2.0**-53)), const(2.0**-53 + 2.0**-80)


def _one_below(n):
    """n - 1 for an integer n (binary64); past 2^53, the next binary64 value below it."""
    return select(absolute(n) < INTEGERS, n - 1, select(n > 0, fma(n, TOWARD_ZERO, n), fma(n, AWAY, n)))


def integral_scaled(rounding):
    """The reference's form of rounding(x * scale + bias) for floor or ceil: where |x * scale| >= 2^52 the product
    (exact: a ball of radius 0) is an integer, and rounding(p + bias) = p + rounding(bias); the sum's own ball
    would straddle integers there, never decided. Equal to the definition at every binary64 x."""
    p = x * scale
    return select(absolute(p) >= INTEGERS * const(0.5), p + rounding(bias), rounding(p + bias))


def floor_scaled():
    """floor(x * scale + bias) as opcert computes it: floor of the once-rounded sum s is the exact one's unless s
    is an integer that the sum reached by rounding up (lo < 0): then the integer below. (An s that is not an
    integer has no integer between it and the exact sum: that integer would be a binary64 value nearer than s.)"""
    _, s, lo = scale_bias_parts()
    n = floor(s)
    return select(both(eq(n, s), lo < 0), _one_below(s), n)


def ceil_scaled():
    """ceil(x * scale + bias) as opcert computes it: -floor(-s), the integer above where s is an integer the sum
    reached by rounding down (lo > 0), as floor_scaled."""
    _, s, lo = scale_bias_parts()
    c = -floor(-s)
    return select(both(eq(c, s), lo > 0), -_one_below(-s), c)


def periodic_reference(addition):
    """The reference's form of f(x * scale + bias) for a periodic f: the addition formula on x * scale (a ball of
    radius 0: the product is exact) and the bias, equal to f(x * scale + bias) over the reals (a theorem). f of the
    sum itself is a ball as wide as the sum's rounding, more than a period past 2^53: never decided there."""
    return addition(x * scale, bias)


# The addition formula's error (periodic_scaled): each of its two products is within 12 + 4 + 1 binary64 ULPs of
# its value (quarter_turns' or the C library's sin or cos of the exact product, the C library's of the bias, the
# product's rounding), each value at most 1 in magnitude, and the sum adds one rounding: at most 35 x 2^-52 in all,
# whatever the result. Next to a zero of the sum that is many ULPs of the result, so impl.run takes the exact value
# wherever 48 x 2^-52 either way of the binary64 value reaches a rounding boundary of the narrow format: a ULP of
# y64 is at least 2^-53 |y64|, so 96 / |y64| of its ULPs. Tan, the quotient S / C of two such sums: its relative
# error is at most 48 x 2^-52 (1 / |S| + 1 / |C|), and with S^2 + C^2 about 1 (so max(|S|, |C|) >= 0.7) and
# |y| = |S| / |C|, at most 48 x 2^-52 (1 + 1 / |y| + |y|) / 0.7: in ULPs of y64, 2^53 times that.
def _sum_error(y, attrs=None):
    with np.errstate(divide="ignore"):
        return 96.0 / np.abs(y)


def _quotient_error(y, attrs=None):
    with np.errstate(divide="ignore", over="ignore"):
        a = np.abs(y)
        return 96.0 * (1.0 + 1.0 / a + a) / 0.7


def periodic_standards(name: str, f, addition) -> tuple:
    """ONNX's `name`-7 (bfloat16 from 22) and DirectML's DML_ELEMENT_WISE_<NAME> (level 1.0) of a periodic f: its
    implementation and reference by the addition formula where x * scale + bias is inexact (periodic_scaled,
    periodic_reference), with that formula's absolute error bound."""
    return (
        onnx_unary(name, f(x), f"y = {f.__name__}(x)", since=("7", "22"), notes="At +-inf, IEEE 754's NaN."),
        dml_element_wise(
            name.upper(),
            f"f(x) = {f.__name__}(x)",
            f,
            implementation_of_x=periodic_scaled(f, addition),
            reference_of_x=periodic_reference(addition),
            absolute_error=_quotient_error if name == "Tan" else _sum_error,
        ),
    )


def sin_of_sum(a, b):
    return sin(a) * cos(b) + cos(a) * sin(b)


def cos_of_sum(a, b):
    return cos(a) * cos(b) - sin(a) * sin(b)


def tan_of_sum(a, b):
    return sin_of_sum(a, b) / cos_of_sum(a, b)


def scale_bias_limits(at_pos, at_neg, at_bias, bias_inside=None, ends=()) -> tuple:
    """f(x * scale + bias) at x = +-inf, f's own limits at_pos (x -> +inf) and at_neg ("nan" where that side is
    outside f's domain), for a scale of either sign; at a zero scale, at_bias (f(bias)) on both sides. For f with
    a bounded domain (sqrt, log, asin, ...): at a zero scale, f(bias) where `bias_inside` holds, each (condition,
    value) of `ends` where it holds (a pole at an open end: log(0) = -inf), NaN elsewhere. A rule that another
    one already gives (a scale's sign where both limits are NaN) is left out."""
    zero = eq(scale, 0)
    both_nan = at_pos == "nan" and at_neg == "nan"
    out = [] if both_nan else [Limit(1, at_neg, condition=scale < 0), Limit(-1, at_pos, condition=scale < 0)]
    out += [
        Limit(side, at_bias, condition=zero if bias_inside is None else both(zero, bias_inside)) for side in (1, -1)
    ]
    for where, value in ends:
        out += [Limit(side, value, condition=both(zero, where)) for side in (1, -1)]
    if bias_inside is not None and not both_nan:
        out += [Limit(side, "nan", condition=zero) for side in (1, -1)]
    return (*out, Limit(1, at_pos), Limit(-1, at_neg))


def scale_bias_properties(
    f: str, key: str = "directml", odd: bool = False, even: bool = False, monotonic: bool = True
) -> tuple:
    """What f(x * scale + bias) keeps of f's properties, each under its condition, for the standard `key`:
    non-decreasing where scale >= 0 (f non-decreasing; `monotonic`), and with odd (even), odd (even) where bias =
    0. `f` is the function's name as the statements write it ("erf", "e^"; "" for the identity)."""

    def of(a):
        return f"{f}({a})" if f else a

    out = ()
    if monotonic:
        out += (
            Property(
                "monotonic_scaled",
                "monotonic",
                f"{of('x * scale + bias')} is non-decreasing where scale >= 0",
                condition=scale >= 0,
                standards=(key,),
            ),
        )
    if odd:
        out += (
            Property(
                "odd_scaled",
                "odd",
                f"{of('-x * scale')} = -{of('x * scale') if f else '(x * scale)'} where bias = 0",
                condition=eq(bias, 0),
                standards=(key,),
                # as values: IEEE's x * scale + 0 is +0 at both zeros (-0 * 2.5 + 0 = +0), so f(-0) and f(+0) are
                # f(+0), whatever the kernel; the bitwise claim was refuted at x = +-0 with a negative scale
                zero_sign=False,
            ),
        )
    if even:  # bit for bit: an even f gives the same bits at both zeros' +0
        out += (
            Property(
                "even_scaled",
                "even",
                f"{of('-x * scale')} = {of('x * scale')} where bias = 0",
                condition=eq(bias, 0),
                standards=(key,),
            ),
        )
    return out


def odd_increasing_properties(name: str, f: str) -> tuple:
    """The properties of an odd, increasing f with f(0) = 0 (Sinh, Asinh, Atan), declared for ONNX's standard, and
    what DirectML's f(x * scale + bias) keeps of them (scale_bias_properties)."""
    return (
        Property("monotonic", "monotonic", f"{name} is non-decreasing", standards=("onnx",)),
        Property("odd", "odd", f"{name}(-x) = -{name}(x)", standards=("onnx",)),
        Property("zero", "exact_point", f"{name}(0) = 0", points=((const(0), const(0)),), standards=("onnx",)),
        *scale_bias_properties(f, odd=True),
    )
