"""Abs: ONNX Abs-6/13 (its float types; the integer types are not checked here); DirectML
DML_ELEMENT_WISE_ABS (level 1.0), |x * scale + bias|. Exact: the correctly rounded result is |x| itself."""

from opcert.expr import absolute, both, eq, negate
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
    name="Abs",
    family="sign",
    summary="|x|, element-wise (DirectML: |x * scale + bias|)",
    attributes=SCALE_BIAS,
    standards=(
        onnx_unary(
            "Abs",
            absolute(x),
            "y = abs(x)",
            notes="ONNX Abs also takes the integer types; opcert checks its float types.",
        ),
        dml_element_wise("ABS", "f(x) = |x|", absolute),
    ),
    primary="onnx",
    implementation=absolute(x),
    standards_differ_where=negate(both(eq(scale, 1), eq(bias, 0))),
    limits=scale_bias_limits("inf", "inf", absolute(bias)),
    properties=(
        Property("range", "range", "Abs(x) >= 0", lower=const(0)),
        Property(
            "monotonic", "monotonic", "Abs is non-decreasing on [0, inf)", domain=(const(0), None), standards=("onnx",)
        ),
        # |x * scale + bias| is not even where bias != 0: ONNX's definition only
        Property("even", "even", "Abs(-x) = Abs(x)", standards=("onnx",)),
        Property("zero", "exact_point", "Abs(0) = 0", points=((const(0), const(0)),), standards=("onnx",)),
        NAN_PROPAGATION,
        LIMITS,
    ),
    budget64=0.0,
    runtimes={"torch": RuntimeMap("torch.abs"), "jax": RuntimeMap("jax.numpy.abs")},
)
