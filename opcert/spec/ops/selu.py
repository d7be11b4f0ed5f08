"""Selu: ONNX Selu-6/22, DirectML DML_ACTIVATION_SCALED_ELU. The standards' defaults differ."""

from opcert.expr import both, either, eq, exp, expm1, select
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
    finite_where_zero,
    x,
)
from opcert.spec.model import Attribute, Operator, RuntimeMap, Standard

alpha, gamma = attr("alpha"), attr("gamma")
ONNX_ALPHA, ONNX_GAMMA = (
    "1.67326319217681884765625",
    "1.05070102214813232421875",
)  # binary32 values, as ONNX writes them

OPERATOR = Operator(
    name="Selu",
    family="exponential",
    summary="gamma * x for x > 0, gamma * (alpha * exp(x) - alpha) otherwise, element-wise",
    attributes=(
        Attribute("alpha", "scale of the negative part", aliases=("Alpha",)),
        Attribute("gamma", "overall scale", aliases=("Gamma",)),
    ),
    standards=(
        Standard(
            key="onnx",
            op_name="Selu",
            document=ONNX_DOC.format("Selu"),
            formula_text="y = gamma * (alpha * e^x - alpha) for x <= 0, y = gamma * x for x > 0",
            formula=select(x <= 0, gamma * (alpha * exp(x) - alpha), gamma * x),
            defaults={"alpha": ONNX_ALPHA, "gamma": ONNX_GAMMA},
            attribute_names={"alpha": "alpha", "gamma": "gamma"},
            support=(Support("6", FLOATS_ONNX_OLD, ANY_RANK), Support("22", FLOATS_ONNX, ANY_RANK)),
            reference_form=select(x <= 0, gamma * (alpha * expm1(x)), gamma * x),
        ),
        Standard(
            key="directml",
            op_name="DML_ACTIVATION_SCALED_ELU",
            document=DML_DOC.format("scaled_elu"),
            formula_text="f(x) = Gamma * x, if x > 0; Gamma * (Alpha * exp(x) - Alpha), otherwise",
            formula=select(x > 0, gamma * x, gamma * (alpha * exp(x) - alpha)),
            defaults={"alpha": "1.6732", "gamma": "1.0507"},
            attribute_names={"alpha": "Alpha", "gamma": "Gamma"},
            support=dml_levels_1_0(),
            reference_form=select(x > 0, gamma * x, gamma * (alpha * expm1(x))),
            notes="The document's typical defaults are the decimals 1.6732 and 1.0507; ONNX's are "
            "1.67326319... and 1.05070102... (the SELU paper's constants to binary32).",
        ),
    ),
    primary="onnx",
    # The zeros are the formula's, gamma * (alpha * e^x - alpha): Selu(+-0) = gamma * (+0) (x + 0 turns -0
    # into +0), and where alpha or gamma is 0 every value is a zero, computed by the formula itself (+0
    # where e^x rounds to 1: bfloat16's tiny inputs), as the reference takes it. gamma * x is exact in
    # binary64 for inputs of at most 29 bits; with gamma = 0, Selu(+inf) is the limit 0, not IEEE's
    # 0 * inf = NaN.
    implementation=select(
        x < 0,
        gamma * select(either(eq(alpha, 0), eq(gamma, 0)), alpha * exp(x) - alpha, alpha * expm1(x)),
        gamma * finite_where_zero(gamma, x + 0),
    ),
    limits=(
        Limit(1, "inf", condition=gamma > 0),
        Limit(1, "-inf", condition=gamma < 0),
        Limit(1, const(0)),
        Limit(-1, const(0), zero_sign=-1, condition=both(eq(alpha, 0), gamma < 0)),
        Limit(-1, const(0), condition=eq(alpha, 0)),
        Limit(-1, -(alpha * gamma), zero_sign=-1),
    ),
    properties=(
        Property(
            "range",
            "range",
            "Selu(x) >= -alpha * gamma when alpha, gamma >= 0",
            condition=both(alpha >= 0, gamma >= 0),
            lower=-(alpha * gamma),
        ),
        Property(
            "monotonic", "monotonic", "non-decreasing when alpha, gamma >= 0", condition=both(alpha >= 0, gamma >= 0)
        ),
        Property("zero", "exact_point", "Selu(0) = 0", points=((const(0), const(0)),)),
        Property("continuity", "continuity", "continuous at 0", at=(const(0),)),
        NAN_PROPAGATION,
        LIMITS,
    ),
    budget64=3.0,
    runtimes={
        "torch": RuntimeMap(
            "torch.nn.functional.selu",
            condition=both(eq(alpha, const(ONNX_ALPHA)), eq(gamma, const(ONNX_GAMMA))),
            why_not="torch.nn.functional.selu has fixed constants (the SELU paper's, in the tensor's precision): "
            "mapped at ONNX's defaults only, their nearest binary32 values",
        )
    },
)
