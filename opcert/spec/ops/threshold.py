"""Threshold: DirectML DML_ELEMENT_WISE_THRESHOLD (level 1.0), max(x * scale + bias, Min). ONNX has no such operator
(its ThresholdedRelu is another function).

The document's max(a, b) "returns the larger of the two values" and says nothing of NaN; opcert takes IEEE 754's
maximum (NaN propagates, -0 < +0), as ONNX's Max and NumPy's np.maximum give. Min is a required FLOAT with no
default: opcert checks Min = 0 unless told (Relu's bound)."""

from opcert.expr import attr, both, eq, maximum
from opcert.spec.declarations import LIMITS, NAN_PROPAGATION, Limit, Property, const
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
from opcert.spec.model import Attribute, Operator, Standard

bound = attr("min")

OPERATOR = Operator(
    name="Threshold",
    family="clamp",
    summary="max(x * scale + bias, Min), element-wise (DirectML)",
    attributes=(
        *SCALE_BIAS,
        Attribute("min", "the lower bound: max(x * scale + bias, Min)", aliases=("Min",), example=0.0),
    ),
    standards=(
        Standard(
            key="directml",
            op_name="DML_ELEMENT_WISE_THRESHOLD",
            document=DML_ELEMENT_WISE_DOC.format("threshold"),
            formula_text="f(x) = max(x, Min), of g(x) = x * scale + bias (ScaleBias; absent: scale = 1, bias = 0)",
            formula=maximum(scaled(), bound),
            defaults={"scale": 1.0, "bias": 0.0},
            attribute_names={"scale": "ScaleBias.Scale", "bias": "ScaleBias.Bias", "min": "Min"},
            support=DML_ELEMENT_WISE_LEVELS,
            notes=STANDARD_NOTE + " Min has no default: opcert checks Min = 0 unless told. NaN propagates (IEEE "
            "754's maximum; the document does not say).",
        ),
    ),
    primary="directml",
    implementation=maximum(scaled_once(), bound),
    limits=(
        Limit(1, "inf", condition=scale > 0),
        Limit(-1, bound, condition=scale > 0),
        Limit(1, bound, condition=scale < 0),
        Limit(-1, "inf", condition=scale < 0),
        Limit(1, maximum(bias, bound)),
        Limit(-1, maximum(bias, bound)),
    ),
    properties=(
        Property("range", "range", "Threshold(x) >= Min", lower=bound),
        Property("monotonic", "monotonic", "non-decreasing where scale >= 0", condition=scale >= 0),
        Property(
            "constant",
            "constant",
            "Threshold(x) = max(bias, Min) everywhere where scale = 0",
            condition=eq(scale, 0),
            value=maximum(bias, bound),
        ),
        Property(
            "identity",
            "exact_point",
            "Threshold(x) = x at x = 1 and x = 2 where scale = 1, bias = 0 and Min <= 1",
            points=((const(1), const(1)), (const(2), const(2))),
            condition=both(both(eq(scale, 1), eq(bias, 0)), bound <= 1),
        ),
        NAN_PROPAGATION,
        LIMITS,
    ),
    budget64=0.5,
)
