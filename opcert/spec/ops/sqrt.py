"""Sqrt: ONNX Sqrt-6/13; DirectML DML_ELEMENT_WISE_SQRT (level 1.0), sqrt(x * scale + bias).

Outside the real domain both follow IEEE 754 (C's sqrt), which ONNX's reference operator (np.sqrt) gives:
sqrt(x < 0) = NaN, sqrt(-0) = -0, sqrt(+inf) = +inf."""

from opcert.expr import both, eq, negate, sqrt
from opcert.spec.declarations import (
    LIMITS,
    NAN_PROPAGATION,
    Property,
    const,
    x,
)
from opcert.spec.elementwise import SCALE_BIAS, bias, dml_element_wise, onnx_unary, scale, scale_bias_limits
from opcert.spec.model import Operator, RuntimeMap

OPERATOR = Operator(
    name="Sqrt",
    family="power",
    summary="square root, element-wise (DirectML: sqrt(x * scale + bias)); NaN below 0",
    attributes=SCALE_BIAS,
    standards=(
        onnx_unary(
            "Sqrt", sqrt(x), "y = sqrt(x)", notes="Outside the real domain, IEEE 754's sqrt: NaN below 0, -0 at -0."
        ),
        dml_element_wise("SQRT", "f(x) = sqrt(x)", sqrt),
    ),
    primary="onnx",
    implementation=sqrt(x),
    standards_differ_where=negate(both(eq(scale, 1), eq(bias, 0))),
    limits=scale_bias_limits("inf", "nan", sqrt(bias), bias >= 0),
    properties=(
        Property(
            "range", "range", "Sqrt(x) >= 0 on [0, inf)", lower=const(0), domain=(const(0), None), standards=("onnx",)
        ),
        Property(
            "monotonic", "monotonic", "Sqrt is non-decreasing on [0, inf)", domain=(const(0), None), standards=("onnx",)
        ),
        Property(
            "exact",
            "exact_point",
            "Sqrt(0) = 0, Sqrt(1) = 1, Sqrt(4) = 2",
            points=((const(0), const(0)), (const(1), const(1)), (const(4), const(2))),
            standards=("onnx",),
        ),
        NAN_PROPAGATION,
        LIMITS,
    ),
    budget64=0.5,
    runtimes={"torch": RuntimeMap("torch.sqrt"), "jax": RuntimeMap("jax.numpy.sqrt")},
)
