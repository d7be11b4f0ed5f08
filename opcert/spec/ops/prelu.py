"""PRelu: ONNX PRelu-7/9/16 (slope is an input, broadcast to X), DirectML DML_ACTIVATION_PARAMETERIZED_RELU."""

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
from opcert.spec.model import Attribute, IntegerSemantics, Operator, RuntimeMap, Standard

slope = attr("slope")

OPERATOR = Operator(
    name="PRelu",
    family="piecewise-linear",
    summary="x for x >= 0, slope * x below (slope: a tensor input), element-wise",
    attributes=(
        Attribute(
            "slope",
            "the slope below 0: a tensor input in both standards, checked here one scalar value at a time",
            aliases=("Slope", "SlopeTensor"),
            input=True,
            example=0.25,
        ),
    ),
    standards=(
        Standard(
            key="onnx",
            op_name="PRelu",
            document=ONNX_DOC.format("PRelu"),
            formula_text="f(x) = slope * x for x < 0, f(x) = x for x >= 0",
            formula=select(x < 0, slope * x, x),
            defaults={},
            attribute_names={"slope": "slope"},
            support=(
                Support("7", FLOATS_ONNX_OLD, ANY_RANK),
                Support("9", FLOATS_ONNX_OLD + ("int32", "int64", "uint32", "uint64"), ANY_RANK),
                Support("16", FLOATS_ONNX + ("int32", "int64", "uint32", "uint64"), ANY_RANK),
            ),
        ),
        Standard(
            key="directml",
            op_name="DML_ACTIVATION_PARAMETERIZED_RELU",
            document=DML_DOC.format("parameterized_relu"),
            formula_text="f(x, slope) = x, if x >= 0; slope * x, otherwise",
            formula=select(x >= 0, x, slope * x),
            defaults={},
            attribute_names={"slope": "SlopeTensor"},
            support=dml_levels_1_0(ints_at_5_1=True),
        ),
    ),
    primary="onnx",
    # with slope = 0, PRelu(-inf) is the limit -0, not IEEE's 0 * -inf = NaN
    implementation=select(x < 0, slope * finite_where_zero(slope, x), x),
    limits=(
        Limit(1, "inf"),
        Limit(-1, "-inf", condition=slope > 0),
        Limit(-1, "inf", condition=slope < 0),
        Limit(-1, const(0), zero_sign=-1),
    ),
    properties=(
        Property("monotonic", "monotonic", "non-decreasing when slope >= 0", condition=slope >= 0),
        Property("zero", "exact_point", "PRelu(0) = 0", points=((const(0), const(0)),)),
        NAN_PROPAGATION,
        LIMITS,
    ),
    integer=IntegerSemantics(
        "Integer tensors (ONNX PRelu-9 and DirectML level 5.1): slope * x exactly, rounded to "
        "the nearest integer with ties to even and saturated to the type's range; the standards "
        "leave overflow open: opcert's choice."
    ),
    notes="A slope tensor applies element by element after broadcasting (ONNX: unidirectional broadcast to X; "
    "DirectML: same sizes, broadcast by strides): each output depends only on its input and its slope, so "
    "every element is the scalar case checked here. opcert checks one slope value per check (default 0.25, "
    "opcert's example: neither standard has a default); attribute sweeps cover a grid of slopes.",
    budget64=0.5,
    runtimes={"torch": RuntimeMap("torch.nn.functional.prelu", {"weight": ("tensor", "slope")})},
)
