"""Exp: ONNX Exp-6/13; DirectML DML_ELEMENT_WISE_EXP (level 1.0), e^(x * scale + bias)."""

from opcert.expr import both, eq, exp, negate
from opcert.spec.declarations import (
    ANY_RANK,
    FLOATS_ONNX,
    FLOATS_ONNX_OLD,
    LIMITS,
    NAN_PROPAGATION,
    ONNX_DOC,
    Limit,
    Property,
    Support,
    const,
    x,
)
from opcert.spec.elementwise import SCALE_BIAS, bias, dml_element_wise, scale
from opcert.spec.model import Operator, RuntimeMap, Standard

OPERATOR = Operator(
    name="Exp",
    family="exponential",
    summary="e^x, element-wise (DirectML: e^(x * scale + bias))",
    attributes=SCALE_BIAS,
    standards=(
        Standard(
            key="onnx",
            op_name="Exp",
            document=ONNX_DOC.format("Exp"),
            formula_text="y = exp(x)",
            formula=exp(x),
            defaults={},
            attribute_names={},
            support=(Support("6", FLOATS_ONNX_OLD, ANY_RANK), Support("13", FLOATS_ONNX, ANY_RANK)),
        ),
        dml_element_wise("EXP", "f(x) = exp(x)", exp),
    ),
    primary="onnx",
    implementation=exp(x),
    standards_differ_where=negate(both(eq(scale, 1), eq(bias, 0))),
    limits=(
        Limit(1, const(0), condition=scale < 0),
        Limit(-1, "inf", condition=scale < 0),
        Limit(1, exp(bias), condition=eq(scale, 0)),
        Limit(-1, exp(bias), condition=eq(scale, 0)),
        Limit(1, "inf"),
        Limit(-1, const(0)),
    ),
    properties=(
        Property("range", "range", "Exp(x) >= 0 (e^x > 0 rounds to 0 below the format's least value)", lower=const(0)),
        Property("monotonic", "monotonic", "Exp is non-decreasing", standards=("onnx",)),
        Property(
            "monotonic_scaled",
            "monotonic",
            "e^(x * scale + bias) is non-decreasing where scale >= 0",
            condition=scale >= 0,
            standards=("directml",),
        ),
        Property("one", "exact_point", "Exp(0) = 1", points=((const(0), const(1)),), standards=("onnx",)),
        NAN_PROPAGATION,
        LIMITS,
    ),
    budget64=1.0,
    runtimes={"torch": RuntimeMap("torch.exp"), "jax": RuntimeMap("jax.numpy.exp")},
)
