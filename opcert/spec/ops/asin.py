"""Asin: ONNX Asin-7 (bfloat16 from 22); DirectML DML_ELEMENT_WISE_ASIN (level 1.0), asin(x * scale + bias).

Outside [-1, 1] both follow IEEE 754 (C's asin), which ONNX's reference operator (np.arcsin) gives: NaN."""

from opcert.expr import asin, both, eq, negate
from opcert.expr.primitives import HALF_PI_ABOVE
from opcert.spec.declarations import LIMITS, NAN_PROPAGATION, Property, const, x
from opcert.spec.elementwise import (
    SCALE_BIAS,
    arc_slope,
    asin_steep,
    bias,
    dml_element_wise,
    onnx_unary,
    scale,
    scale_bias_limits,
)
from opcert.spec.model import Operator, RuntimeMap

UNIT = (const(-1), const(1))

OPERATOR = Operator(
    name="Asin",
    family="trigonometric",
    summary="inverse sine, element-wise, in [-pi/2, pi/2]; NaN outside [-1, 1] (DirectML: asin(x * scale + bias))",
    attributes=SCALE_BIAS,
    standards=(
        onnx_unary("Asin", asin(x), "y = asin(x)", since=("7", "22"), notes="Outside [-1, 1], IEEE 754's NaN."),
        dml_element_wise("ASIN", "f(x) = asin(x)", asin, slope=arc_slope, steep_form=asin_steep()),
    ),
    primary="onnx",
    implementation=asin(x),
    standards_differ_where=negate(both(eq(scale, 1), eq(bias, 0))),
    limits=scale_bias_limits("nan", "nan", asin(bias), both(bias >= -1, bias <= 1)),
    properties=(
        Property(
            "range",
            "range",
            "-pi/2 <= Asin(x) <= pi/2 on [-1, 1]",
            lower=const(-HALF_PI_ABOVE),
            upper=const(HALF_PI_ABOVE),
            domain=UNIT,
            standards=("onnx",),
        ),
        Property("monotonic", "monotonic", "Asin is non-decreasing on [-1, 1]", domain=UNIT, standards=("onnx",)),
        Property("odd", "odd", "Asin(-x) = -Asin(x)", standards=("onnx",)),
        Property(
            "exact",
            "exact_point",
            "Asin(0) = 0",
            points=((const(0), const(0)),),
            standards=("onnx",),
        ),
        NAN_PROPAGATION,
        LIMITS,
    ),
    budget64=1.0,
    runtimes={"torch": RuntimeMap("torch.asin"), "jax": RuntimeMap("jax.numpy.arcsin")},
)
