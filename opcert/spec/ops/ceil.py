"""Ceil: ONNX Ceil-6/13 (bfloat16 from 13); DirectML DML_ELEMENT_WISE_CEIL (level 1.0), ceil(x * scale + bias).

Exact: the least integer at least x, written -floor(-x) (expr.primitives has floor only), -0 on (-1, 0], +-inf and
NaN as they are (IEEE 754's roundToIntegralTowardPositive)."""

from opcert.expr import both, eq, floor, negate
from opcert.spec.declarations import LIMITS, NAN_PROPAGATION, Property, const, x
from opcert.spec.elementwise import (
    SCALE_BIAS,
    bias,
    ceil_scaled,
    dml_element_wise,
    integral_scaled,
    onnx_unary,
    scale,
    scale_bias_limits,
    scale_bias_properties,
)
from opcert.spec.model import Operator, RuntimeMap


def _ceil(t):
    return -floor(-t)


OPERATOR = Operator(
    name="Ceil",
    family="rounding",
    summary="the least integer at least x, element-wise (DirectML: ceil(x * scale + bias))",
    attributes=SCALE_BIAS,
    standards=(
        onnx_unary("Ceil", _ceil(x), "y = ceil(x)"),
        dml_element_wise(
            "CEIL",
            "f(x) = ceil(x)",
            _ceil,
            implementation_of_x=ceil_scaled(),
            reference_of_x=integral_scaled(_ceil),
            # ceil of a sum in (-1, 0) is -0 (IEEE's ceil there); the formula in binary64 rounds -1 + 1e-20 to -1
            zero_sign_form=ceil_scaled(),
        ),
    ),
    primary="onnx",
    implementation=_ceil(x),
    standards_differ_where=negate(both(eq(scale, 1), eq(bias, 0))),
    limits=scale_bias_limits("inf", "-inf", _ceil(bias)),
    properties=(
        Property("monotonic", "monotonic", "Ceil is non-decreasing", standards=("onnx",)),
        Property(
            "points",
            "exact_point",
            "Ceil(0) = 0, Ceil(0.5) = 1, Ceil(-0.5) = 0, Ceil(2.5) = 3",
            points=((const(0), const(0)), (const(0.5), const(1)), (const(-0.5), const(0)), (const(2.5), const(3))),
            standards=("onnx",),
        ),
        *scale_bias_properties("ceil"),
        NAN_PROPAGATION,
        LIMITS,
    ),
    budget64=0.0,
    runtimes={"torch": RuntimeMap("torch.ceil"), "jax": RuntimeMap("jax.numpy.ceil")},
)
