"""Asinh: ONNX Asinh-9 (bfloat16 from 22); DirectML DML_ELEMENT_WISE_ASINH (level 2.0), asinh(x * scale + bias)
(its document writes ln(x + sqrt(x * x + 1)), the same real function)."""

from opcert.expr import asinh, both, eq, negate
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
    name="Asinh",
    family="hyperbolic",
    summary="inverse hyperbolic sine, element-wise (DirectML: asinh(x * scale + bias))",
    attributes=SCALE_BIAS,
    standards=(
        onnx_unary("Asinh", asinh(x), "y = asinh(x)", since=("9", "22")),
        dml_element_wise(
            "ASINH",
            "f(x) = asinh(x)",
            asinh,
            support=(Support("2.0", DML_FLOATS, (4, 4)), Support("3.0", DML_FLOATS, (1, 8))),
        ),
    ),
    primary="onnx",
    implementation=asinh(x),
    standards_differ_where=negate(both(eq(scale, 1), eq(bias, 0))),
    limits=scale_bias_limits("inf", "-inf", asinh(bias)),
    properties=(
        Property("monotonic", "monotonic", "Asinh is non-decreasing", standards=("onnx",)),
        Property("odd", "odd", "Asinh(-x) = -Asinh(x)", standards=("onnx",)),
        Property("zero", "exact_point", "Asinh(0) = 0", points=((const(0), const(0)),), standards=("onnx",)),
        *scale_bias_properties("asinh", odd=True),
        NAN_PROPAGATION,
        LIMITS,
    ),
    budget64=1.0,
    runtimes={"torch": RuntimeMap("torch.asinh"), "jax": RuntimeMap("jax.numpy.asinh")},
)
