"""Floor: ONNX Floor-6/13 (bfloat16 from 13); DirectML DML_ELEMENT_WISE_FLOOR (level 1.0), floor(x * scale + bias).

Exact: the greatest integer at most x, which every format represents (a value past 2^p is an integer), -0 at -0,
+-inf and NaN as they are (IEEE 754's roundToIntegralTowardNegative)."""

from opcert.expr import both, eq, floor, negate
from opcert.spec.declarations import LIMITS, NAN_PROPAGATION, Property, const, x
from opcert.spec.elementwise import (
    SCALE_BIAS,
    bias,
    dml_element_wise,
    floor_scaled,
    integral_scaled,
    onnx_unary,
    scale,
    scale_bias_limits,
    scale_bias_properties,
)
from opcert.spec.model import Operator, RuntimeMap

OPERATOR = Operator(
    name="Floor",
    family="rounding",
    summary="the greatest integer at most x, element-wise (DirectML: floor(x * scale + bias))",
    attributes=SCALE_BIAS,
    standards=(
        onnx_unary("Floor", floor(x), "y = floor(x)"),
        dml_element_wise(
            "FLOOR",
            "f(x) = floor(x)",
            floor,
            implementation_of_x=floor_scaled(),
            reference_of_x=integral_scaled(floor),
        ),
    ),
    primary="onnx",
    implementation=floor(x),
    standards_differ_where=negate(both(eq(scale, 1), eq(bias, 0))),
    limits=scale_bias_limits("inf", "-inf", floor(bias)),
    properties=(
        Property("monotonic", "monotonic", "Floor is non-decreasing", standards=("onnx",)),
        Property(
            "points",
            "exact_point",
            "Floor(0) = 0, Floor(0.5) = 0, Floor(-0.5) = -1, Floor(2.5) = 2",
            points=((const(0), const(0)), (const(0.5), const(0)), (const(-0.5), const(-1)), (const(2.5), const(2))),
            standards=("onnx",),
        ),
        *scale_bias_properties("floor"),
        NAN_PROPAGATION,
        LIMITS,
    ),
    budget64=0.0,
    runtimes={"torch": RuntimeMap("torch.floor"), "jax": RuntimeMap("jax.numpy.floor")},
)
