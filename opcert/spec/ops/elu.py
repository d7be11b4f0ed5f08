"""Elu: ONNX Elu-6/22, DirectML DML_ACTIVATION_ELU."""

from opcert.expr import eq, exp, expm1, select
from opcert.spec.declarations import (
    ANY_RANK,
    DML_DOC,
    FLOATS_ONNX,
    FLOATS_ONNX_OLD,
    LIMITS,
    NAN_PROPAGATION,
    ONNX_DOC,
    Limit,
    Property,
    Support,
    attr,
    const,
    dml_levels_1_0,
    x,
)
from opcert.spec.model import Attribute, Operator, RuntimeMap, Standard

alpha = attr("alpha")

OPERATOR = Operator(
    name="Elu",
    family="exponential",
    summary="x for x >= 0, alpha * (exp(x) - 1) below, element-wise",
    attributes=(Attribute("alpha", "scale of the negative part", aliases=("Alpha",)),),
    standards=(
        Standard(
            key="onnx",
            op_name="Elu",
            document=ONNX_DOC.format("Elu"),
            formula_text="f(x) = alpha * (exp(x) - 1.) for x < 0, f(x) = x for x >= 0",
            formula=select(x < 0, alpha * (exp(x) - 1), x),
            defaults={"alpha": 1.0},
            attribute_names={"alpha": "alpha"},
            support=(Support("6", FLOATS_ONNX_OLD, ANY_RANK), Support("22", FLOATS_ONNX, ANY_RANK)),
            reference_form=select(x < 0, alpha * expm1(x), x),
        ),
        Standard(
            key="directml",
            op_name="DML_ACTIVATION_ELU",
            document=DML_DOC.format("elu"),
            formula_text="f(x) = x, if x >= 0; Alpha * (exp(x) - 1), otherwise",
            formula=select(x >= 0, x, alpha * (exp(x) - 1)),
            defaults={"alpha": 1.0},
            attribute_names={"alpha": "Alpha"},
            support=dml_levels_1_0(),
            reference_form=select(x >= 0, x, alpha * expm1(x)),
        ),
    ),
    primary="onnx",
    # expm1: no cancellation near 0-; alpha * expm1(x) is two roundings in binary64
    # With alpha = 0 every value is a zero, of the sign the formula alpha * (exp(x) - 1) gives (+0 where
    # exp(x) rounds to 1, bfloat16's tiny inputs): the formula itself there, as the reference takes it.
    implementation=select(x < 0, alpha * select(eq(alpha, 0), exp(x) - 1, expm1(x)), x),
    limits=(Limit(1, "inf"), Limit(-1, -alpha, zero_sign=-1)),
    properties=(
        Property("range", "range", "Elu(x) >= -alpha when alpha >= 0", condition=alpha >= 0, lower=-alpha),
        Property("monotonic", "monotonic", "non-decreasing when alpha >= 0", condition=alpha >= 0),
        Property("zero", "exact_point", "Elu(0) = 0", points=((const(0), const(0)),)),
        Property("continuity", "continuity", "continuous at 0", at=(const(0),)),
        NAN_PROPAGATION,
        LIMITS,
    ),
    budget64=2.0,
    runtimes={
        "torch": RuntimeMap("torch.nn.functional.elu", {"alpha": "alpha"}),
        "jax": RuntimeMap("jax.nn.elu", {"alpha": "alpha"}),
    },
)
