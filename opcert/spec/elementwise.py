"""DirectML's element-wise math descriptors (DML_ELEMENT_WISE_*), the pieces their declarations share.

Most of them take an optional DML_SCALE_BIAS: "g(x) = x * scale + bias to each input element prior to
computing this operator". opcert reads it as the exact real x * scale + bias (scale and bias binary32
attributes, as every FLOAT attribute): what the descriptor defines, with no intermediate type named. Without a
ScaleBias (the descriptor's null pointer) scale = 1 and bias = 0, the plain function. opcert's implementation
computes the scale-bias as one fused multiply-add in binary64 (x * scale is exact there); where |x * scale|
exceeds |bias| by more than about 2^29, that sum can land on a binary32 tie and be rounded a second time, so
its results with a nonzero bias are not always correctly rounded (1 ULP off at such ties for Identity and Abs;
STANDARD_NOTE says so in each standard). The reference is exact."""

from opcert.expr import attr, both, const, eq, fma
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
    "multiply-add: with a nonzero bias much smaller than x * scale, a result can be rounded twice (1 ULP off)."
)
scale, bias = attr("scale"), attr("bias")
SCALE_BIAS = (
    Attribute("scale", "DirectML ScaleBias: the input's scale, g(x) = x * scale + bias", aliases=("Scale",)),
    Attribute("bias", "DirectML ScaleBias: the input's bias, g(x) = x * scale + bias", aliases=("Bias",)),
)


def scaled(t=x):
    """The exact scale-bias of t, as the definition reads."""
    return t * scale + bias


def scaled_once(t=x, plus=None):
    """The scale-bias as opcert computes it, t * scale + bias (or + `plus`: log's bias - 1), one rounding
    (binary32 x and scale: their product is exact). At a zero scale, t * scale is 0 for every t, +-inf
    included, where IEEE's 0 * inf would be NaN (the limits there are f(bias)): t is clamped first
    (declarations.finite_where_zero)."""
    return fma(finite_where_zero(scale, t), scale, bias if plus is None else plus)


def dml_element_wise(
    name: str,
    text: str,
    f,
    implementation=None,
    reference_form=None,
    notes: str = "",
    support=DML_ELEMENT_WISE_LEVELS,
    key: str = "directml",
) -> Standard:
    """The standard of DML_ELEMENT_WISE_<name> with a ScaleBias: f(x * scale + bias). `f` maps an expression to
    the operator's expression of it; `implementation` and `reference_form` likewise, when they differ from f.
    `key`: another where the operator's "directml" is its activation descriptor (Identity)."""
    return Standard(
        key=key,
        op_name=f"DML_ELEMENT_WISE_{name}",
        document=DML_ELEMENT_WISE_DOC.format(name.lower()),
        formula_text=f"{text}, of g(x) = x * scale + bias (ScaleBias; absent: scale = 1, bias = 0)",
        formula=f(scaled()),
        defaults={"scale": 1.0, "bias": 0.0},
        attribute_names={"scale": "ScaleBias.Scale", "bias": "ScaleBias.Bias"},
        support=support,
        implementation=(implementation or f)(scaled_once()),
        reference_form=reference_form(scaled()) if reference_form else None,
        notes=(STANDARD_NOTE + " " + notes).strip(),
    )


def onnx_unary(name: str, formula, formula_text: str, since=("6", "13"), notes: str = "") -> Standard:
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
    )


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


def scale_bias_properties(f: str, key: str = "directml", odd: bool = False) -> tuple:
    """What f(x * scale + bias) keeps of f's properties, each under its condition, for the standard `key`:
    non-decreasing where scale >= 0 (f non-decreasing), and with odd, odd where bias = 0. `f` is the function's
    name as the statements write it ("erf", "e^"; "" for the identity)."""

    def of(a):
        return f"{f}({a})" if f else a

    out = (
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
