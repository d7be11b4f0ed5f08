"""Sin: ONNX Sin-7 (bfloat16 from 22); DirectML DML_ELEMENT_WISE_SIN (level 1.0), sin(x * scale + bias).

The exact sine of the input's exact value, at every magnitude (the reference reduces the argument with Arb's pi,
as many bits as the argument needs). At +-inf both standards follow IEEE 754 (C's sin): NaN."""

from opcert.expr import both, eq, negate, sin
from opcert.expr.primitives import HALF_PI_INSIDE
from opcert.spec.declarations import LIMITS, NAN_PROPAGATION, Property, const, x
from opcert.spec.elementwise import (
    FINITE,
    SCALE_BIAS,
    bias,
    periodic_standards,
    scale,
    scale_bias_limits,
    scale_bias_properties,
    sin_of_sum,
)
from opcert.spec.model import Operator, RuntimeMap

OPERATOR = Operator(
    name="Sin",
    family="trigonometric",
    summary="sine, element-wise, in [-1, 1]; NaN at +-inf (DirectML: sin(x * scale + bias))",
    attributes=SCALE_BIAS,
    standards=periodic_standards("Sin", sin, sin_of_sum),
    primary="onnx",
    implementation=sin(x),
    standards_differ_where=negate(both(eq(scale, 1), eq(bias, 0))),
    limits=scale_bias_limits("nan", "nan", sin(bias)),
    properties=(
        Property(
            "range",
            "range",
            "-1 <= Sin(x) <= 1 for every finite x",
            lower=const(-1),
            upper=const(1),
            domain=FINITE,
            standards=("onnx",),
        ),
        Property("odd", "odd", "Sin(-x) = -Sin(x)", standards=("onnx",)),
        Property("zero", "exact_point", "Sin(0) = 0", points=((const(0), const(0)),), standards=("onnx",)),
        Property(
            "monotonic",
            "monotonic",
            "Sin is non-decreasing on [-1.5707963, 1.5707963] (inside [-pi/2, pi/2])",
            domain=(const(-HALF_PI_INSIDE), const(HALF_PI_INSIDE)),
            standards=("onnx",),
        ),
        *scale_bias_properties("sin", odd=True, monotonic=False),
        NAN_PROPAGATION,
        LIMITS,
    ),
    budget64=1.0,
    runtimes={"torch": RuntimeMap("torch.sin"), "jax": RuntimeMap("jax.numpy.sin")},
)
