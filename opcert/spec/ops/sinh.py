"""Sinh: ONNX Sinh-9 (bfloat16 from 22); DirectML DML_ELEMENT_WISE_SINH (level 2.0), sinh(x * scale + bias)."""

from opcert.expr import both, eq, negate, sinh
from opcert.spec.declarations import LIMITS, NAN_PROPAGATION, x
from opcert.spec.elementwise import (
    DML_ELEMENT_WISE_LEVELS_2_0,
    SCALE_BIAS,
    bias,
    dml_element_wise,
    odd_increasing_properties,
    onnx_unary,
    scale,
    scale_bias_limits,
)
from opcert.spec.model import Operator, RuntimeMap

OPERATOR = Operator(
    name="Sinh",
    family="hyperbolic",
    summary="hyperbolic sine, element-wise (DirectML: sinh(x * scale + bias))",
    attributes=SCALE_BIAS,
    standards=(
        onnx_unary("Sinh", sinh(x), "y = sinh(x)", since=("9", "22")),
        dml_element_wise("SINH", "f(x) = sinh(x)", sinh, support=DML_ELEMENT_WISE_LEVELS_2_0),
    ),
    primary="onnx",
    implementation=sinh(x),
    standards_differ_where=negate(both(eq(scale, 1), eq(bias, 0))),
    limits=scale_bias_limits("inf", "-inf", sinh(bias)),
    properties=(*odd_increasing_properties("Sinh", "sinh"), NAN_PROPAGATION, LIMITS),
    budget64=1.0,
    runtimes={"torch": RuntimeMap("torch.sinh"), "jax": RuntimeMap("jax.numpy.sinh")},
)
