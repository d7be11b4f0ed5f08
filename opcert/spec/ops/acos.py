"""Acos: ONNX Acos-7 (bfloat16 from 22); DirectML DML_ELEMENT_WISE_ACOS (level 1.0), acos(x * scale + bias).

Outside [-1, 1] both follow IEEE 754 (C's acos), which ONNX's reference operator (np.arccos) gives: NaN. Acos is
non-increasing on [-1, 1]: a monotonic property with `decreasing`."""

from opcert.expr import acos, both, eq, negate
from opcert.expr.primitives import PI_ABOVE
from opcert.spec.declarations import LIMITS, NAN_PROPAGATION, Property, const, x
from opcert.spec.elementwise import (
    SCALE_BIAS,
    acos_steep,
    arc_slope,
    bias,
    dml_element_wise,
    onnx_unary,
    scale,
    scale_bias_limits,
)
from opcert.spec.model import Operator, RuntimeMap

OPERATOR = Operator(
    name="Acos",
    family="trigonometric",
    summary="inverse cosine, element-wise, in [0, pi]; NaN outside [-1, 1] (DirectML: acos(x * scale + bias))",
    attributes=SCALE_BIAS,
    standards=(
        onnx_unary("Acos", acos(x), "y = acos(x)", since=("7", "22"), notes="Outside [-1, 1], IEEE 754's NaN."),
        dml_element_wise("ACOS", "f(x) = acos(x)", acos, slope=arc_slope, steep_form=acos_steep()),
    ),
    primary="onnx",
    implementation=acos(x),
    standards_differ_where=negate(both(eq(scale, 1), eq(bias, 0))),
    limits=scale_bias_limits("nan", "nan", acos(bias), both(bias >= -1, bias <= 1)),
    properties=(
        Property(
            "range",
            "range",
            "0 <= Acos(x) <= pi on [-1, 1]",
            lower=const(0),
            upper=const(PI_ABOVE),
            domain=(const(-1), const(1)),
            standards=("onnx",),
        ),
        Property(
            "monotonic",
            "monotonic",
            "Acos is non-increasing on [-1, 1]",
            domain=(const(-1), const(1)),
            decreasing=True,
            standards=("onnx",),
        ),
        # DirectML's acos(x * scale + bias): monotone in x where x * scale + bias is in [-1, 1] (NaN elsewhere), an
        # interval of x only where scale != 0: non-increasing where scale > 0, non-decreasing where scale < 0
        Property(
            "monotonic_scaled",
            "monotonic",
            "acos(x * scale + bias) is non-increasing where scale > 0, for x in [(-1 - bias) / scale, (1 - bias) / scale]",
            condition=scale > 0,
            domain=((-1 - bias) / scale, (1 - bias) / scale),
            decreasing=True,
            standards=("directml",),
        ),
        Property(
            "monotonic_negative_scale",
            "monotonic",
            "acos(x * scale + bias) is non-decreasing where scale < 0, for x in [(1 - bias) / scale, (-1 - bias) / scale]",
            condition=scale < 0,
            domain=((1 - bias) / scale, (-1 - bias) / scale),
            standards=("directml",),
        ),
        Property("one", "exact_point", "Acos(1) = 0", points=((const(1), const(0)),), standards=("onnx",)),
        NAN_PROPAGATION,
        LIMITS,
    ),
    budget64=1.0,
    runtimes={"torch": RuntimeMap("torch.acos"), "jax": RuntimeMap("jax.numpy.arccos")},
)
