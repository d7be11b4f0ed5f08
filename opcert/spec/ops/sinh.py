"""Sinh: ONNX Sinh-9 (bfloat16 from 22); DirectML DML_ELEMENT_WISE_SINH (level 2.0), sinh(x * scale + bias)."""

from opcert.expr import both, eq, negate, sinh
from opcert.spec.declarations import DML_FLOATS, LIMITS, NAN_PROPAGATION, Property, Support, const, x
from opcert.spec.elementwise import (
    SCALE_BIAS,
    bias,
    dml_element_wise,
    onnx_unary,
    scale,
    scale_bias_limits,
    scale_bias_properties,
)
from opcert.spec.model import Operator, RuntimeMap

OPERATOR = Operator(
    name="Sinh",
    family="hyperbolic",
    summary="hyperbolic sine, element-wise (DirectML: sinh(x * scale + bias))",
    attributes=SCALE_BIAS,
    standards=(
        onnx_unary("Sinh", sinh(x), "y = sinh(x)", since=("9", "22")),
        dml_element_wise(
            "SINH",
            "f(x) = sinh(x)",
            sinh,
            support=(Support("2.0", DML_FLOATS, (4, 4)), Support("3.0", DML_FLOATS, (1, 8))),
        ),
    ),
    primary="onnx",
    implementation=sinh(x),
    standards_differ_where=negate(both(eq(scale, 1), eq(bias, 0))),
    limits=scale_bias_limits("inf", "-inf", sinh(bias)),
    properties=(
        Property("monotonic", "monotonic", "Sinh is non-decreasing", standards=("onnx",)),
        Property("odd", "odd", "Sinh(-x) = -Sinh(x)", standards=("onnx",)),
        Property("zero", "exact_point", "Sinh(0) = 0", points=((const(0), const(0)),), standards=("onnx",)),
        *scale_bias_properties("sinh", odd=True),
        NAN_PROPAGATION,
        LIMITS,
    ),
    budget64=1.0,
    runtimes={"torch": RuntimeMap("torch.sinh"), "jax": RuntimeMap("jax.numpy.sinh")},
)
