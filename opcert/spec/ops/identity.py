"""Identity: DirectML DML_ACTIVATION_IDENTITY, and DML_ELEMENT_WISE_IDENTITY (level 1.0), x * scale + bias
rounded once (ONNX's Identity is not an activation; not kept)."""

from opcert.spec.declarations import DML_DOC, LIMITS, NAN_PROPAGATION, Property, const, dml_levels_1_0, x
from opcert.spec.elementwise import SCALE_BIAS, bias, dml_element_wise, scale_bias_limits, scale_bias_properties
from opcert.spec.model import Operator, Standard

OPERATOR = Operator(
    name="Identity",
    family="linear",
    summary="f(x) = x, element-wise",
    attributes=SCALE_BIAS,
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
        dml_element_wise("IDENTITY", "f(x) = x", lambda t: t, key="directml-element-wise"),
    ),
    primary="directml",
    implementation=x,
    limits=scale_bias_limits("inf", "-inf", bias),
    properties=(
        Property("monotonic", "monotonic", "Identity is non-decreasing", standards=("directml",)),
        Property("odd", "odd", "Identity(-x) = -Identity(x)", standards=("directml",)),
        Property("zero", "exact_point", "Identity(0) = 0", points=((const(0), const(0)),), standards=("directml",)),
        *scale_bias_properties("", key="directml-element-wise", odd=True),
        NAN_PROPAGATION,
        LIMITS,
    ),
    budget64=0.0,
)
