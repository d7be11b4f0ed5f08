"""Asinh: ONNX Asinh-9 (bfloat16 from 22); DirectML DML_ELEMENT_WISE_ASINH (level 2.0), asinh(x * scale + bias)
(its document writes ln(x + sqrt(x * x + 1)), the same real function)."""

from opcert.expr import asinh, both, eq, negate
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
    name="Asinh",
    family="hyperbolic",
    summary="inverse hyperbolic sine, element-wise (DirectML: asinh(x * scale + bias))",
    attributes=SCALE_BIAS,
    standards=(
        onnx_unary("Asinh", asinh(x), "y = asinh(x)", since=("9", "22")),
        dml_element_wise("ASINH", "f(x) = asinh(x)", asinh, support=DML_ELEMENT_WISE_LEVELS_2_0),
    ),
    primary="onnx",
    implementation=asinh(x),
    standards_differ_where=negate(both(eq(scale, 1), eq(bias, 0))),
    limits=scale_bias_limits("inf", "-inf", asinh(bias)),
    properties=(*odd_increasing_properties("Asinh", "asinh"), NAN_PROPAGATION, LIMITS),
    budget64=1.0,
    runtimes={"torch": RuntimeMap("torch.asinh"), "jax": RuntimeMap("jax.numpy.asinh")},
)
