"""Neg: ONNX Neg-6/13 (its float types); DirectML DML_ELEMENT_WISE_NEGATE (level 5.0, no ScaleBias).
Exact: the correctly rounded result is -x itself, the zero's sign flipped (-(+0) = -0)."""

from opcert.spec.declarations import (
    DML_FLOATS,
    LIMITS,
    NAN_PROPAGATION,
    Property,
    Support,
    limits,
    x,
)
from opcert.spec.elementwise import DML_ELEMENT_WISE_DOC, onnx_unary
from opcert.spec.model import Operator, RuntimeMap, Standard

OPERATOR = Operator(
    name="Neg",
    family="sign",
    summary="-x, element-wise",
    attributes=(),
    standards=(
        onnx_unary(
            "Neg", -x, "y = -x", notes="ONNX Neg also takes the signed integer types; opcert checks its float types."
        ),
        Standard(
            key="directml",
            op_name="DML_ELEMENT_WISE_NEGATE",
            document=DML_ELEMENT_WISE_DOC.format("negate"),
            formula_text="f(x) = -x",
            formula=-x,
            defaults={},
            attribute_names={},
            support=(Support("5.0", DML_FLOATS, (1, 8)),),
            notes="Level 5.0 also takes INT64, INT32, INT16 and INT8; opcert checks the float types.",
        ),
    ),
    primary="onnx",
    implementation=-x,
    limits=limits("-inf", "inf"),
    properties=(
        Property("odd", "odd", "Neg(-x) = -Neg(x), zeros' signs included"),
        NAN_PROPAGATION,
        LIMITS,
    ),
    budget64=0.0,
    runtimes={"torch": RuntimeMap("torch.neg"), "jax": RuntimeMap("jax.numpy.negative")},
)
