"""Erf: ONNX Erf-9/13 (integer types in Erf-9 only). DirectML has it as an element-wise operator, not an activation."""

from opcert.expr import erf
from opcert.spec.declarations import (
    ANY_RANK,
    FLOATS_ONNX,
    FLOATS_ONNX_OLD,
    LIMITS,
    NAN_PROPAGATION,
    ONNX_DOC,
    Property,
    Support,
    const,
    limits,
    x,
)
from opcert.spec.model import IntegerSemantics, Operator, RuntimeMap, Standard

INTS = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")

OPERATOR = Operator(
    name="Erf",
    family="error-function",
    summary="the error function, element-wise",
    attributes=(),
    standards=(
        Standard(
            key="onnx",
            op_name="Erf",
            document=ONNX_DOC.format("Erf"),
            formula_text="y = erf(x)",
            formula=erf(x),
            defaults={},
            attribute_names={},
            support=(Support("9", FLOATS_ONNX_OLD + INTS, ANY_RANK), Support("13", FLOATS_ONNX, ANY_RANK)),
        ),
    ),
    primary="onnx",
    implementation=erf(x),
    limits=limits(const(1), const(-1)),
    properties=(
        Property("range", "range", "-1 <= Erf(x) <= 1", lower=const(-1), upper=const(1)),
        Property("monotonic", "monotonic", "Erf is non-decreasing"),
        Property("odd", "odd", "Erf(-x) = -Erf(x)"),
        Property("zero", "exact_point", "Erf(0) = 0", points=((const(0), const(0)),)),
        NAN_PROPAGATION,
        LIMITS,
    ),
    integer=IntegerSemantics(
        "Integer tensors (ONNX Erf-9 only; Erf-13 dropped them): erf of the integer, rounded "
        "to the nearest integer: 0 at 0, +-1 elsewhere. ONNX does not say: opcert's choice."
    ),
    budget64=1.0,
    runtimes={"torch": RuntimeMap("torch.erf"), "jax": RuntimeMap("jax.scipy.special.erf")},
)
