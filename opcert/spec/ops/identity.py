"""Identity: DirectML DML_ACTIVATION_IDENTITY (ONNX's Identity is not an activation; not kept)."""

from opcert.spec.declarations import DML_DOC, LIMITS, NAN_PROPAGATION, Property, const, dml_levels_1_0, limits, x
from opcert.spec.model import Operator, Standard

OPERATOR = Operator(
    name="Identity",
    family="linear",
    summary="f(x) = x, element-wise",
    attributes=(),
    standards=(
        Standard(
            key="directml",
            op_name="DML_ACTIVATION_IDENTITY",
            document=DML_DOC.format("identity"),
            formula_text="f(x) = x",
            formula=x,
            defaults={},
            attribute_names={},
            support=dml_levels_1_0(),
        ),
    ),
    primary="directml",
    implementation=x,
    limits=limits("inf", "-inf"),
    properties=(
        Property("monotonic", "monotonic", "Identity is non-decreasing"),
        Property("odd", "odd", "Identity(-x) = -Identity(x)"),
        Property("zero", "exact_point", "Identity(0) = 0", points=((const(0), const(0)),)),
        NAN_PROPAGATION,
        LIMITS,
    ),
    budget64=0.0,
)
