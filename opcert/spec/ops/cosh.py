"""Cosh: ONNX Cosh-9 (bfloat16 from 22); DirectML DML_ELEMENT_WISE_COSH (level 2.0), cosh(x * scale + bias).

Written cosh(|x|): the same real function (cosh is even), with cosh applied on [0, inf), where it is increasing
(expr.primitives keeps every primitive monotone or declared monotone nowhere)."""

from opcert.expr import absolute, both, cosh, eq, negate
from opcert.spec.declarations import LIMITS, NAN_PROPAGATION, Property, const, x
from opcert.spec.elementwise import (
    DML_ELEMENT_WISE_LEVELS_2_0,
    SCALE_BIAS,
    bias,
    dml_element_wise,
    onnx_unary,
    scale,
    scale_bias_limits,
    scale_bias_properties,
)
from opcert.spec.model import Operator, RuntimeMap


def _cosh(t):
    return cosh(absolute(t))


OPERATOR = Operator(
    name="Cosh",
    family="hyperbolic",
    summary="hyperbolic cosine, element-wise, at least 1 (DirectML: cosh(x * scale + bias))",
    attributes=SCALE_BIAS,
    standards=(
        onnx_unary("Cosh", _cosh(x), "y = cosh(x)", since=("9", "22")),
        dml_element_wise("COSH", "f(x) = cosh(x)", _cosh, support=DML_ELEMENT_WISE_LEVELS_2_0),
    ),
    primary="onnx",
    implementation=_cosh(x),
    standards_differ_where=negate(both(eq(scale, 1), eq(bias, 0))),
    limits=scale_bias_limits("inf", "inf", _cosh(bias)),
    properties=(
        Property("range", "range", "Cosh(x) >= 1", lower=const(1)),
        Property("even", "even", "Cosh(-x) = Cosh(x)", standards=("onnx",)),
        Property(
            "monotonic", "monotonic", "Cosh is non-decreasing on [0, inf)", domain=(const(0), None), standards=("onnx",)
        ),
        Property(
            "monotonic_negative",
            "monotonic",
            "Cosh is non-increasing on (-inf, 0]",
            domain=(None, const(0)),
            decreasing=True,
            standards=("onnx",),
        ),
        Property("one", "exact_point", "Cosh(0) = 1", points=((const(0), const(1)),), standards=("onnx",)),
        *scale_bias_properties("cosh", even=True, monotonic=False),
        NAN_PROPAGATION,
        LIMITS,
    ),
    budget64=1.0,
    runtimes={"torch": RuntimeMap("torch.cosh"), "jax": RuntimeMap("jax.numpy.cosh")},
)
