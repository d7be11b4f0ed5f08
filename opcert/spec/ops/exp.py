"""Exp: ONNX Exp-6/13; DirectML DML_ELEMENT_WISE_EXP (level 1.0), e^(x * scale + bias)."""

from opcert.expr import both, eq, exp, negate
from opcert.spec.declarations import (
    LIMITS,
    NAN_PROPAGATION,
    Property,
    const,
    x,
)
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
    name="Exp",
    family="exponential",
    summary="e^x, element-wise (DirectML: e^(x * scale + bias))",
    attributes=SCALE_BIAS,
    standards=(
        onnx_unary("Exp", exp(x), "y = exp(x)"),
        dml_element_wise("EXP", "f(x) = exp(x)", exp),
    ),
    primary="onnx",
    implementation=exp(x),
    standards_differ_where=negate(both(eq(scale, 1), eq(bias, 0))),
    limits=scale_bias_limits("inf", const(0), exp(bias)),
    properties=(
        Property("range", "range", "Exp(x) >= 0 (e^x > 0 rounds to 0 below the format's least value)", lower=const(0)),
        Property("monotonic", "monotonic", "Exp is non-decreasing", standards=("onnx",)),
        *scale_bias_properties("e^"),
        Property("one", "exact_point", "Exp(0) = 1", points=((const(0), const(1)),), standards=("onnx",)),
        NAN_PROPAGATION,
        LIMITS,
    ),
    budget64=1.0,
    runtimes={"torch": RuntimeMap("torch.exp"), "jax": RuntimeMap("jax.numpy.exp")},
)
