"""ThresholdedRelu: ONNX ThresholdedRelu-10/22, DirectML DML_ACTIVATION_THRESHOLDED_RELU."""

from opcert.expr import isnan, select
from opcert.spec.declarations import (
    ANY_RANK,
    DML_DOC,
    FLOATS_ONNX,
    FLOATS_ONNX_OLD,
    LIMITS,
    NAN_PROPAGATION,
    ONNX_DOC,
    Property,
    Support,
    attr,
    const,
    dml_levels_1_0,
    limits,
    x,
)
from opcert.spec.model import Attribute, Operator, RuntimeMap, Standard

alpha = attr("alpha")

OPERATOR = Operator(
    name="ThresholdedRelu",
    family="piecewise-linear",
    summary="x above alpha, 0 otherwise, element-wise",
    attributes=(Attribute("alpha", "the threshold", aliases=("Alpha",)),),
    standards=(
        Standard(
            key="onnx",
            op_name="ThresholdedRelu",
            document=ONNX_DOC.format("ThresholdedRelu"),
            formula_text="y = x for x > alpha, y = 0 otherwise",
            formula=select(x > alpha, x, 0),
            defaults={"alpha": 1.0},
            attribute_names={"alpha": "alpha"},
            support=(Support("10", FLOATS_ONNX_OLD, ANY_RANK), Support("22", FLOATS_ONNX, ANY_RANK)),
        ),
        Standard(
            key="directml",
            op_name="DML_ACTIVATION_THRESHOLDED_RELU",
            document=DML_DOC.format("thresholded_relu"),
            formula_text="f(x) = x, if x > Alpha; 0, otherwise",
            formula=select(x > alpha, x, 0),
            defaults={"alpha": 1.0},
            attribute_names={"alpha": "Alpha"},
            support=dml_levels_1_0(),
        ),
    ),
    primary="onnx",
    implementation=select(isnan(x), x, select(x > alpha, x, 0)),
    limits=limits("inf", const(0)),
    properties=(
        Property("range", "range", "ThresholdedRelu(x) >= 0 when alpha >= 0", condition=alpha >= 0, lower=const(0)),
        Property("monotonic", "monotonic", "non-decreasing when alpha >= 0", condition=alpha >= 0),
        Property(
            "dead_zone", "constant", "ThresholdedRelu(x) = 0 for every x <= alpha", domain=(None, alpha), value=const(0)
        ),
        NAN_PROPAGATION,
        LIMITS,
    ),
    notes="NaN propagates: x > alpha is false for NaN, so both standards' formulas give 0 there; opcert's "
    "specification propagates NaN (as for Shrink).",
    budget64=0.5,
    runtimes={"torch": RuntimeMap("torch.nn.functional.threshold", {"threshold": "alpha", "value": 0.0})},
)
