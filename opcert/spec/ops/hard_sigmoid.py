"""HardSigmoid: ONNX HardSigmoid-6/22, DirectML DML_ACTIVATION_HARD_SIGMOID (seed 001)."""

from opcert.expr import both, either, eq, fma, maximum, minimum
from opcert.spec.declarations import (
    ANY_RANK,
    FLOATS_ONNX,
    FLOATS_ONNX_OLD,
    LIMITS,
    NAN_PROPAGATION,
    ONNX_DOC,
    SEEDS,
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

alpha, beta = attr("alpha"), attr("beta")
ONE_SIXTH_32 = 0.1666666716337204  # binary32(1/6): torch's hardsigmoid is alpha = 1/6 exactly

OPERATOR = Operator(
    name="HardSigmoid",
    family="piecewise-linear",
    summary="max(0, min(alpha * x + beta, 1)), element-wise",
    attributes=(Attribute("alpha", "slope", aliases=("Alpha",)), Attribute("beta", "offset", aliases=("Beta",))),
    standards=(
        Standard(
            key="onnx",
            op_name="HardSigmoid",
            document=ONNX_DOC.format("HardSigmoid"),
            formula_text="y = max(0, min(1, alpha * x + beta))",
            formula=maximum(0, minimum(1, alpha * x + beta)),
            defaults={"alpha": 0.2, "beta": 0.5},
            attribute_names={"alpha": "alpha", "beta": "beta"},
            support=(Support("6", FLOATS_ONNX_OLD, ANY_RANK), Support("22", FLOATS_ONNX, ANY_RANK)),
        ),
        Standard(
            key="directml",
            op_name="DML_ACTIVATION_HARD_SIGMOID",
            document=SEEDS + "001_9472a8d145e8eeab.txt",
            formula_text="f(x) = max(0, min(Alpha * x + Beta, 1))",
            formula=maximum(0, minimum(alpha * x + beta, 1)),
            defaults={"alpha": 0.2, "beta": 0.5},
            attribute_names={"alpha": "Alpha", "beta": "Beta"},
            support=dml_levels_1_0(),
        ),
    ),
    primary="onnx",
    # alpha * x + beta rounded once: the product of a binary32 attribute and an
    # input of at most 24 significant bits is exact in binary64. With alpha = 0, HardSigmoid(+-inf) is
    # the limit max(0, min(beta, 1)), not IEEE's 0 * inf = NaN.
    implementation=maximum(0, minimum(fma(alpha, finite_where_zero(alpha, x), beta), 1)),
    limits=(
        Limit(1, const(1), condition=alpha > 0),
        Limit(1, const(0), condition=alpha < 0),
        Limit(1, maximum(0, minimum(beta, 1))),
        Limit(-1, const(0), condition=alpha > 0),
        Limit(-1, const(1), condition=alpha < 0),
        Limit(-1, maximum(0, minimum(beta, 1))),
    ),
    properties=(
        Property("range", "range", "0 <= HardSigmoid(x) <= 1", lower=const(0), upper=const(1)),
        Property("monotonic", "monotonic", "non-decreasing when alpha >= 0", condition=alpha >= 0),
        Property(
            "saturated_low",
            "constant",
            "HardSigmoid(x) = 0 for every x <= -beta/alpha when alpha > 0",
            condition=alpha > 0,
            domain=(None, -beta / alpha),
            value=const(0),
        ),
        Property(
            "saturated_high",
            "constant",
            "HardSigmoid(x) = 1 for every x >= (1-beta)/alpha when alpha > 0",
            condition=alpha > 0,
            domain=((1 - beta) / alpha, None),
            value=const(1),
        ),
        Property(
            "continuity",
            "continuity",
            "continuous at the saturation points when alpha != 0",
            condition=either(alpha > 0, alpha < 0),
            at=(-beta / alpha, (1 - beta) / alpha),
        ),
        NAN_PROPAGATION,
        LIMITS,
    ),
    budget64=0.5,
    runtimes={
        "torch": RuntimeMap(
            "torch.nn.functional.hardsigmoid",
            condition=both(eq(alpha, const(ONE_SIXTH_32)), eq(beta, const("0.5"))),
            why_not="torch.nn.functional.hardsigmoid is HardSigmoid with alpha = 1/6 (binary32 "
            "0.1666666716) and beta = 0.5 only",
        )
    },
)
