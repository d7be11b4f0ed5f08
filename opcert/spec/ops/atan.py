"""Atan: ONNX Atan-7 (bfloat16 from 22); DirectML DML_ELEMENT_WISE_ATAN (level 1.0), atan(x * scale + bias).

Its range is (-pi/2, pi/2); the range property states it with a decimal just above pi/2 that rounds as pi/2 does
in every format (expr.primitives.HALF_PI_ABOVE): a rounded output may equal pi/2 rounded up (1.5707964 in
binary32), never more."""

from opcert.expr import atan, both, eq, named, negate
from opcert.expr.primitives import HALF_PI_ABOVE
from opcert.spec.declarations import LIMITS, NAN_PROPAGATION, Property, const, x
from opcert.spec.elementwise import (
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
    name="Atan",
    family="trigonometric",
    summary="inverse tangent, element-wise, in (-pi/2, pi/2) (DirectML: atan(x * scale + bias))",
    attributes=SCALE_BIAS,
    standards=(
        onnx_unary("Atan", atan(x), "y = atan(x)", since=("7", "22")),
        dml_element_wise("ATAN", "f(x) = atan(x)", atan),
    ),
    primary="onnx",
    implementation=atan(x),
    standards_differ_where=negate(both(eq(scale, 1), eq(bias, 0))),
    limits=scale_bias_limits(named("pi/2"), -named("pi/2"), atan(bias)),
    properties=(
        Property(
            "range",
            "range",
            "-pi/2 <= Atan(x) <= pi/2",
            lower=const(-HALF_PI_ABOVE),
            upper=const(HALF_PI_ABOVE),
        ),
        *odd_increasing_properties("Atan", "atan"),
        NAN_PROPAGATION,
        LIMITS,
    ),
    budget64=1.0,
    runtimes={"torch": RuntimeMap("torch.atan"), "jax": RuntimeMap("jax.numpy.arctan")},
)
