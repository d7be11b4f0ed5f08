"""Clip: ONNX Clip-13 (min and max inputs; Clip-11 before bfloat16), ONNX Clip-6 (min and max attributes);
DirectML DML_ELEMENT_WISE_CLIP (level 1.0) and CLIP1 (level 5.0), each with a ScaleBias.

The standards differ where min > max: ONNX 13 says every output is max (Min(max, Max(input, min))); DirectML
writes f(x) = max(Min, min(x, Max)), which is Min there; ONNX 6 and 11 do not say, and ONNX's reference operator
(np.clip) gives max. min and max are binary32 values as every attribute: ONNX 11 and 13 leave out an absent input
(numeric_limits' lowest() and max() of the tensor's type: opcert checks given values, min = 0 and max = 6 unless
told, ReLU6's); Clip-6 defaults to -+3.40282347e38. DirectML converts Min and Max to the tensor's type first,
rounded to nearest: clamping by the rounded bound rounds as clamping by the exact one does. NaN propagates (IEEE
754's minimum and maximum; np.clip's)."""

from opcert.expr import attr, both, either, eq, maximum, minimum, negate
from opcert.spec.declarations import (
    ANY_RANK,
    DML_FLOATS,
    FLOATS_ONNX,
    FLOATS_ONNX_OLD,
    LIMITS,
    NAN_PROPAGATION,
    ONNX_DOC,
    Limit,
    Property,
    Support,
    x,
)
from opcert.spec.elementwise import (
    DML_ELEMENT_WISE_DOC,
    DML_ELEMENT_WISE_LEVELS,
    SCALE_BIAS,
    STANDARD_NOTE,
    bias,
    scale,
    scaled,
    scaled_once,
)
from opcert.spec.model import Attribute, Operator, RuntimeMap, Standard

lo, hi = attr("min"), attr("max")
FLT_MAX = 3.4028234663852886e38


def onnx_clip(t):
    """Min(max, Max(t, min)): max everywhere where min > max (ONNX 13's words)."""
    return minimum(hi, maximum(t, lo))


def dml_clip(t):
    """max(Min, min(t, Max)): Min everywhere where Min > Max (DirectML's formula)."""
    return maximum(lo, minimum(t, hi))


def _dml(key, name, level_support, notes):
    return Standard(
        key=key,
        op_name=f"DML_ELEMENT_WISE_{name}",
        document=DML_ELEMENT_WISE_DOC.format(name.lower()),
        formula_text="f(x) = max(Min, min(x, Max)), of g(x) = x * scale + bias (ScaleBias; absent: scale = 1, bias = 0)",
        formula=dml_clip(scaled()),
        defaults={"scale": 1.0, "bias": 0.0},
        attribute_names={"scale": "ScaleBias.Scale", "bias": "ScaleBias.Bias", "min": "Min", "max": "Max"},
        support=level_support,
        implementation=dml_clip(scaled_once()),
        notes=STANDARD_NOTE + " Min and Max have no default: opcert checks 0 and 6 unless told. " + notes,
    )


ORDERED = lo <= hi

OPERATOR = Operator(
    name="Clip",
    family="clamp",
    summary="x clamped to [min, max], element-wise (DirectML: x * scale + bias clamped to [Min, Max])",
    attributes=(
        *SCALE_BIAS,
        Attribute("min", "the lower bound", aliases=("Min",), input=True, example=0.0),
        Attribute("max", "the upper bound", aliases=("Max",), input=True, example=6.0),
    ),
    standards=(
        Standard(
            key="onnx",
            op_name="Clip",
            document=ONNX_DOC.format("Clip"),
            formula_text="y = Min(max, Max(input, min)); where min > max, every output is max",
            formula=onnx_clip(x),
            defaults={},
            attribute_names={"min": "min", "max": "max"},
            support=(Support("11", FLOATS_ONNX_OLD, ANY_RANK), Support("13", FLOATS_ONNX, ANY_RANK)),
            notes="min and max are inputs; absent, numeric_limits' lowest() and max() of the type: opcert checks "
            "given values (0 and 6 unless told). Clip-11 and 12 do not say what min > max gives; 13 says max.",
        ),
        Standard(
            key="onnx-6",
            op_name="Clip",
            document=ONNX_DOC.format("Clip"),
            formula_text="y = x limited to [min, max] (attributes, defaults -+3.40282347e38)",
            formula=onnx_clip(x),
            defaults={"min": -FLT_MAX, "max": FLT_MAX},
            attribute_names={"min": "min", "max": "max"},
            support=(Support("6", FLOATS_ONNX_OLD, ANY_RANK),),
            notes="min > max: not said; ONNX's reference operator (np.clip) gives max, as Clip-13 says.",
        ),
        _dml("directml", "CLIP", DML_ELEMENT_WISE_LEVELS, ""),
        _dml(
            "directml-1",
            "CLIP1",
            (Support("5.0", DML_FLOATS, (1, 8)),),
            "CLIP1's Min and Max are of the tensor's type (MinMaxDataType); opcert's are binary32 values, rounded "
            "to the type where it is narrower, as CLIP converts its FLOAT ones.",
        ),
    ),
    primary="onnx",
    implementation=onnx_clip(x),
    # ONNX's max and DirectML's Min where min > max; elsewhere the ScaleBias, unless min = max (one value either way)
    standards_differ_where=either(lo > hi, both(lo < hi, negate(both(eq(scale, 1), eq(bias, 0))))),
    # DirectML's first (their conditions name the scale, which ONNX's definitions lack: those go to the last two):
    # f(+inf) = max(Min, Max), f(-inf) = Min; ONNX's Min(max, Max(x, min)): max at +inf, min(min, max) at -inf
    limits=(
        Limit(1, maximum(lo, hi), condition=scale > 0),
        Limit(-1, lo, condition=scale > 0),
        Limit(1, lo, condition=scale < 0),
        Limit(-1, maximum(lo, hi), condition=scale < 0),
        Limit(1, dml_clip(bias), condition=eq(scale, 0)),
        Limit(-1, dml_clip(bias), condition=eq(scale, 0)),
        Limit(1, hi),
        Limit(-1, minimum(lo, hi)),
    ),
    properties=(
        Property("range", "range", "min <= Clip(x) <= max where min <= max", lower=lo, upper=hi, condition=ORDERED),
        Property("monotonic", "monotonic", "Clip is non-decreasing", standards=("onnx", "onnx-6")),
        Property(
            "monotonic_scaled",
            "monotonic",
            "max(Min, min(x * scale + bias, Max)) is non-decreasing where scale >= 0",
            condition=scale >= 0,
            standards=("directml", "directml-1"),
        ),
        Property(
            "max_where_crossed",
            "constant",
            "Clip(x) = max everywhere where min > max (ONNX 13)",
            condition=negate(ORDERED),
            value=hi,
            standards=("onnx", "onnx-6"),
        ),
        Property(
            "min_where_crossed",
            "constant",
            "f(x) = Min everywhere where Min > Max (DirectML's max(Min, min(x, Max)))",
            condition=negate(ORDERED),
            value=lo,
            standards=("directml", "directml-1"),
        ),
        Property(
            "bounds",
            "exact_point",
            "Clip(min) = min and Clip(max) = max where min <= max",
            points=((lo, lo), (hi, hi)),
            condition=ORDERED,
            standards=("onnx", "onnx-6"),
        ),
        NAN_PROPAGATION,
        LIMITS,
    ),
    budget64=0.0,
    runtimes={
        "torch": RuntimeMap("torch.clamp", kwargs={"min": "min", "max": "max"}),
        "jax": RuntimeMap("jax.numpy.clip", kwargs={"min": "min", "max": "max"}),
    },
)
