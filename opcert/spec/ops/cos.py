"""Cos: ONNX Cos-7 (bfloat16 from 22); DirectML DML_ELEMENT_WISE_COS (level 1.0), cos(x * scale + bias).

The exact cosine of the input's exact value, at every magnitude (the reference reduces the argument with Arb's
pi). At +-inf both standards follow IEEE 754 (C's cos): NaN."""

from opcert.expr import both, cos, eq, negate
from opcert.expr.primitives import PI_INSIDE
from opcert.spec.declarations import LIMITS, NAN_PROPAGATION, Property, const, x
from opcert.spec.elementwise import (
    FINITE,
    SCALE_BIAS,
    bias,
    cos_of_sum,
    periodic_standards,
    scale,
    scale_bias_limits,
    scale_bias_properties,
)
from opcert.spec.model import Operator, RuntimeMap

OPERATOR = Operator(
    name="Cos",
    family="trigonometric",
    summary="cosine, element-wise, in [-1, 1]; NaN at +-inf (DirectML: cos(x * scale + bias))",
    attributes=SCALE_BIAS,
    standards=periodic_standards("Cos", cos, cos_of_sum),
    primary="onnx",
    implementation=cos(x),
    standards_differ_where=negate(both(eq(scale, 1), eq(bias, 0))),
    limits=scale_bias_limits("nan", "nan", cos(bias)),
    properties=(
        Property(
            "range",
            "range",
            "-1 <= Cos(x) <= 1 for every finite x",
            lower=const(-1),
            upper=const(1),
            domain=FINITE,
            standards=("onnx",),
        ),
        Property("even", "even", "Cos(-x) = Cos(x)", standards=("onnx",)),
        Property("one", "exact_point", "Cos(0) = 1", points=((const(0), const(1)),), standards=("onnx",)),
        Property(
            "monotonic",
            "monotonic",
            "Cos is non-increasing on [0, 3.1415926] (inside [0, pi])",
            domain=(const(0), const(PI_INSIDE)),
            decreasing=True,
            standards=("onnx",),
        ),
        Property(
            "monotonic_negative",
            "monotonic",
            "Cos is non-decreasing on [-3.1415926, 0] (inside [-pi, 0])",
            domain=(const(-PI_INSIDE), const(0)),
            standards=("onnx",),
        ),
        *scale_bias_properties("cos", even=True, monotonic=False),
        NAN_PROPAGATION,
        LIMITS,
    ),
    budget64=1.0,
    runtimes={"torch": RuntimeMap("torch.cos"), "jax": RuntimeMap("jax.numpy.cos")},
)
