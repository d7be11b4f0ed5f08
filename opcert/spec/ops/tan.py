"""Tan: ONNX Tan-7 (bfloat16 from 22); DirectML DML_ELEMENT_WISE_TAN (level 1.0), tan(x * scale + bias).

The exact tangent of the input's exact value, at every magnitude (the reference reduces the argument with Arb's
pi). Its poles, the odd multiples of pi/2, are irrational: no input meets one, and every output is finite in the
reals (it may round to an infinity). At +-inf both standards follow IEEE 754 (C's tan): NaN."""

from opcert.expr import both, eq, negate, tan
from opcert.expr.primitives import HALF_PI_INSIDE
from opcert.spec.declarations import LIMITS, NAN_PROPAGATION, Property, const, x
from opcert.spec.elementwise import (
    SCALE_BIAS,
    bias,
    periodic_standards,
    scale,
    scale_bias_limits,
    scale_bias_properties,
    tan_of_sum,
)
from opcert.spec.model import Operator, RuntimeMap

OPERATOR = Operator(
    name="Tan",
    family="trigonometric",
    summary="tangent, element-wise; NaN at +-inf (DirectML: tan(x * scale + bias))",
    attributes=SCALE_BIAS,
    standards=periodic_standards("Tan", tan, tan_of_sum),
    primary="onnx",
    implementation=tan(x),
    standards_differ_where=negate(both(eq(scale, 1), eq(bias, 0))),
    limits=scale_bias_limits("nan", "nan", tan(bias)),
    properties=(
        Property("odd", "odd", "Tan(-x) = -Tan(x)", standards=("onnx",)),
        Property("zero", "exact_point", "Tan(0) = 0", points=((const(0), const(0)),), standards=("onnx",)),
        Property(
            "monotonic",
            "monotonic",
            "Tan is non-decreasing on [-1.5707963, 1.5707963] (inside (-pi/2, pi/2), between its poles)",
            domain=(const(-HALF_PI_INSIDE), const(HALF_PI_INSIDE)),
            standards=("onnx",),
        ),
        *scale_bias_properties("tan", odd=True, monotonic=False),
        NAN_PROPAGATION,
        LIMITS,
    ),
    budget64=1.0,
    runtimes={"torch": RuntimeMap("torch.tan"), "jax": RuntimeMap("jax.numpy.tan")},
)
