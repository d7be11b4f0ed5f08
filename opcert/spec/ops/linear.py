"""Linear: DirectML DML_ACTIVATION_LINEAR, Alpha * x + Beta."""

from opcert.expr import eq, fma
from opcert.spec.declarations import (
    DML_DOC,
    LIMITS,
    NAN_PROPAGATION,
    Limit,
    Property,
    attr,
    const,
    dml_levels_1_0,
    finite_where_zero,
    x,
)
from opcert.spec.model import Attribute, Operator, Standard

alpha, beta = attr("alpha"), attr("beta")

OPERATOR = Operator(
    name="Linear",
    family="linear",
    summary="alpha * x + beta, element-wise",
    attributes=(
        Attribute("alpha", "slope", aliases=("Alpha",), example=0.5),
        Attribute("beta", "offset", aliases=("Beta",), example=0.25),
    ),
    standards=(
        Standard(
            key="directml",
            op_name="DML_ACTIVATION_LINEAR",
            document=DML_DOC.format("linear"),
            formula_text="f(x) = Alpha * x + Beta.",
            formula=alpha * x + beta,
            defaults={},
            attribute_names={"alpha": "Alpha", "beta": "Beta"},
            support=dml_levels_1_0(),
            notes="The document gives no typical defaults: opcert checks alpha = 0.5, beta = 0.25 unless told.",
        ),
    ),
    primary="directml",
    # alpha * x + beta rounded once (fma): exact product for inputs of at most 29 bits. With alpha = 0,
    # Linear(+-inf) is the limit beta, not IEEE's 0 * inf + beta = NaN.
    implementation=fma(alpha, finite_where_zero(alpha, x), beta),
    limits=(
        Limit(1, "inf", condition=alpha > 0),
        Limit(1, "-inf", condition=alpha < 0),
        Limit(1, beta),
        Limit(-1, "-inf", condition=alpha > 0),
        Limit(-1, "inf", condition=alpha < 0),
        Limit(-1, beta),
    ),
    properties=(
        Property("monotonic", "monotonic", "non-decreasing when alpha >= 0", condition=alpha >= 0),
        Property("offset", "exact_point", "Linear(0) = beta", points=((const(0), beta),)),
        Property(
            "constant", "constant", "Linear(x) = beta everywhere when alpha = 0", condition=eq(alpha, 0), value=beta
        ),
        NAN_PROPAGATION,
        LIMITS,
    ),
    budget64=0.5,
)
