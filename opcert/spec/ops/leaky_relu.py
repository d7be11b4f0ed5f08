"""LeakyRelu: ONNX LeakyRelu-6/16, DirectML DML_ACTIVATION_LEAKY_RELU."""

from opcert.expr import select
from opcert.spec.declarations import (
    ANY_RANK,
    DML_DOC,
    FLOATS_ONNX,
    FLOATS_ONNX_OLD,
    LIMITS,
    NAN_PROPAGATION,
    ONNX_DOC,
    Limit,
    Property,
    Support,
    attr,
    const,
    dml_levels_1_0,
    finite_where_zero,
    x,
)
from opcert.spec.model import Attribute, Operator, RuntimeMap, Standard

alpha = attr("alpha")

OPERATOR = Operator(
    name="LeakyRelu",
    family="piecewise-linear",
    summary="x for x >= 0, alpha * x below, element-wise",
    attributes=(Attribute("alpha", "slope below 0", aliases=("Alpha",)),),
    standards=(
        Standard(
            key="onnx",
            op_name="LeakyRelu",
            document=ONNX_DOC.format("LeakyRelu"),
            formula_text="f(x) = alpha * x for x < 0, f(x) = x for x >= 0",
            formula=select(x < 0, alpha * x, x),
            defaults={"alpha": 0.01},
            attribute_names={"alpha": "alpha"},
            support=(Support("6", FLOATS_ONNX_OLD, ANY_RANK), Support("16", FLOATS_ONNX, ANY_RANK)),
        ),
        Standard(
            key="directml",
            op_name="DML_ACTIVATION_LEAKY_RELU",
            document=DML_DOC.format("leaky_relu"),
            formula_text="f(x) = x, if x >= 0; Alpha * x, otherwise",
            formula=select(x >= 0, x, alpha * x),
            defaults={"alpha": 0.01},
            attribute_names={"alpha": "Alpha"},
            support=dml_levels_1_0(),
        ),
    ),
    primary="onnx",
    # alpha * x is exact in binary64 for inputs of at most 29 bits: one rounding, to the output format.
    # With alpha = 0, LeakyRelu(-inf) is the limit -0, not IEEE's 0 * -inf = NaN.
    implementation=select(x < 0, alpha * finite_where_zero(alpha, x), x),
    limits=(
        Limit(1, "inf"),
        Limit(-1, "-inf", condition=alpha > 0),
        Limit(-1, "inf", condition=alpha < 0),
        Limit(-1, const(0), zero_sign=-1),
    ),
    properties=(
        Property("monotonic", "monotonic", "non-decreasing when alpha >= 0", condition=alpha >= 0),
        Property("zero", "exact_point", "LeakyRelu(0) = 0", points=((const(0), const(0)),)),
        Property(
            "identity_above_0",
            "range",
            "LeakyRelu(x) = x >= 0 for x >= 0: non-negative there",
            domain=(const(0), None),
            lower=const(0),
        ),
        NAN_PROPAGATION,
        LIMITS,
    ),
    budget64=0.5,
    runtimes={
        "torch": RuntimeMap("torch.nn.functional.leaky_relu", {"negative_slope": "alpha"}),
        "jax": RuntimeMap("jax.nn.leaky_relu", {"negative_slope": "alpha"}),
    },
    notes="The standards write the branches in opposite orders (ONNX: x < 0 first; DirectML: x >= 0 first); "
    "they agree everywhere, -0 and NaN included.",
)
