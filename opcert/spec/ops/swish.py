"""Swish: ONNX Swish-24 (alpha), DirectML DML_ACTIVATION_SWISH (level 6.2, SigmoidInputScale).
torch's SiLU is alpha = 1."""

from fractions import Fraction

from opcert.expr import eq, exp, select
from opcert.spec.declarations import (
    ANY_RANK,
    DML_DOC,
    DML_FLOATS,
    FLOATS_ONNX,
    LIMITS,
    NAN_PROPAGATION,
    ONNX_DOC,
    Limit,
    Property,
    Support,
    attr,
    const,
    finite_where_zero,
    sigmoid_monotone,
    sigmoid_stable,
    x,
)
from opcert.spec.model import Attribute, Operator, RuntimeMap, Standard

alpha = attr("alpha")
T = alpha * x
T_IMPL = alpha * finite_where_zero(alpha, x)  # T, but 0 at x = +-inf where alpha = 0 (IEEE: 0 * inf = NaN)
FORMULA = x * (1 / (1 + exp(-T)))

OPERATOR = Operator(
    name="Swish",
    family="exponential",
    summary="x * sigmoid(alpha * x), element-wise",
    attributes=(Attribute("alpha", "the sigmoid's input scale", aliases=("SigmoidInputScale",)),),
    standards=(
        Standard(
            key="onnx",
            op_name="Swish",
            document=ONNX_DOC.format("Swish"),
            formula_text="y = x * sigmoid(alpha * x)",
            formula=FORMULA,
            defaults={"alpha": 1.0},
            attribute_names={"alpha": "alpha"},
            support=(Support("24", FLOATS_ONNX, ANY_RANK),),
            reference_form=x * sigmoid_stable(T),
        ),
        Standard(
            key="directml",
            op_name="DML_ACTIVATION_SWISH",
            document=DML_DOC.format("swish"),
            formula_text="f(x) = x * Sigmoid(SigmoidInputScale * x)",
            formula=FORMULA,
            defaults={"alpha": 1.0},
            attribute_names={"alpha": "SigmoidInputScale"},
            support=(Support("6.2", DML_FLOATS, (1, 8)),),
            reference_form=x * sigmoid_stable(T),
        ),
    ),
    primary="onnx",
    # alpha * x is exact for inputs of at most 29 bits; below alpha x = -40, x e^t / (1 + e^t) is
    # (x e^(t/2)) e^(t/2) to 2^-57, and its factors stay normal where e^t would be a binary64 subnormal.
    implementation=select(
        T_IMPL < -2000,
        select(x < 0, -const(0), const(0)),
        select(T_IMPL < -40, (x * exp(T_IMPL / 2)) * exp(T_IMPL / 2), x * sigmoid_monotone(T_IMPL)),
    ),
    limits=(
        Limit(1, "inf", condition=alpha >= 0),
        Limit(1, const(0), condition=alpha < 0),
        Limit(-1, const(0), zero_sign=-1, condition=alpha > 0),
        Limit(-1, "-inf"),
    ),
    properties=(
        Property(
            "lower_bound",
            "range",
            "Swish(x) >= -1/(3 alpha) when alpha > 0 (proved from e^v >= 1 + v + v^2/2)",
            condition=alpha > 0,
            lower=-1 / (3 * alpha),
        ),
        Property(
            "minimum",
            "range",
            "Swish(x) >= -0.27847 at alpha = 1 (SiLU's minimum is -0.278464... at x = -1.27846...)",
            condition=eq(alpha, 1),
            lower=const("-0.27847"),
        ),
        Property(
            "monotonic",
            "monotonic",
            "Swish is not monotone when alpha > 0: it has a global minimum",
            condition=alpha > 0,
            holds=False,
        ),
        Property(
            "monotonic_positive",
            "monotonic",
            "non-decreasing for x >= 0 when alpha >= 0",
            condition=alpha >= 0,
            domain=(const(0), None),
        ),
        Property("zero", "exact_point", "Swish(0) = 0", points=((const(0), const(0)),)),
        NAN_PROPAGATION,
        LIMITS,
    ),
    hard_points=lambda a: (
        [Fraction("-1.27846454276107") / a["alpha"], Fraction(-40) / a["alpha"]] if a.get("alpha") else []
    ),
    budget64=4.0,
    runtimes={
        "torch": RuntimeMap(
            "torch.nn.functional.silu",
            condition=eq(alpha, 1),
            why_not="torch.nn.functional.silu is Swish with alpha = 1 only",
        ),
        "jax": RuntimeMap("jax.nn.silu", condition=eq(alpha, 1), why_not="jax.nn.silu is Swish with alpha = 1 only"),
    },
)
