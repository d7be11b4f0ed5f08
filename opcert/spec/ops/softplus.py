"""Softplus in three forms: ONNX Softplus-1/22 ln(exp(x) + 1); DirectML
DML_ACTIVATION_SOFTPLUS ln(1 + exp(Steepness x)) / Steepness (Steepness >= 1);
DirectML DML_ACTIVATION_PARAMETRIC_SOFTPLUS Alpha ln(1 + exp(Beta x))."""

from opcert.expr import both, eq, exp, log, log1p, select
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
    softplus_monotone,
    x,
)
from opcert.spec.model import Attribute, AttributeDomain, Operator, RuntimeMap, Standard

steepness, alpha, beta = attr("steepness"), attr("alpha"), attr("beta")


def stable(t):
    """ln(1 + e^t) without overflow: t + log1p(e^-t) above 0 (e^t overflows past 709)."""
    return select(t > 0, t + log1p(exp(-t)), log1p(exp(t)))


OPERATOR = Operator(
    name="Softplus",
    family="exponential",
    summary="ln(1 + exp(x)) (ONNX), with a steepness (DirectML SOFTPLUS) or a scale and slope (PARAMETRIC_SOFTPLUS)",
    attributes=(
        Attribute(
            "steepness",
            "DirectML SOFTPLUS: the steepness; it cannot be less than 1",
            domain=AttributeDomain(lower=1.0, description="a finite binary32 value >= 1"),
            aliases=("Steepness",),
        ),
        Attribute("alpha", "DirectML PARAMETRIC_SOFTPLUS: the output scale", aliases=("Alpha",), example=1.0),
        Attribute("beta", "DirectML PARAMETRIC_SOFTPLUS: the input scale", aliases=("Beta",), example=1.0),
    ),
    standards=(
        Standard(
            key="onnx",
            op_name="Softplus",
            document=ONNX_DOC.format("Softplus"),
            formula_text="y = ln(exp(x) + 1)",
            formula=log(exp(x) + 1),
            defaults={},
            attribute_names={},
            support=(Support("1", FLOATS_ONNX_OLD, ANY_RANK), Support("22", FLOATS_ONNX, ANY_RANK)),
            reference_form=stable(x),
        ),
        Standard(
            key="directml",
            op_name="DML_ACTIVATION_SOFTPLUS",
            document=DML_DOC.format("softplus"),
            formula_text="f(x) = ln(1 + exp(Steepness * x)) / Steepness",
            formula=log(1 + exp(steepness * x)) / steepness,
            defaults={"steepness": 1.0},
            attribute_names={"steepness": "Steepness"},
            support=dml_levels_1_0(),
            implementation=softplus_monotone(steepness * x) / steepness,
            reference_form=stable(steepness * x) / steepness,
        ),
        Standard(
            key="directml-parametric",
            op_name="DML_ACTIVATION_PARAMETRIC_SOFTPLUS",
            document=DML_DOC.format("parametric_softplus"),
            formula_text="f(x) = Alpha * ln(1 + exp(Beta * x))",
            formula=alpha * log(1 + exp(beta * x)),
            defaults={},
            attribute_names={"alpha": "Alpha", "beta": "Beta"},
            support=dml_levels_1_0(),
            # at alpha = 0 every value is 0 and at beta = 0 alpha ln 2, +-inf included (IEEE's 0 * inf was NaN there)
            implementation=alpha * softplus_monotone(beta * finite_where_zero(beta, finite_where_zero(alpha, x))),
            reference_form=alpha * stable(beta * x),
            notes="The document gives no typical defaults: opcert checks alpha = beta = 1 unless told.",
        ),
    ),
    primary="onnx",
    implementation=softplus_monotone(x),
    limits=(
        Limit(1, const(0), condition=eq(alpha, 0)),  # alpha * ln(1 + e^(beta x)) is 0 for every x
        Limit(-1, const(0), condition=eq(alpha, 0)),
        Limit(1, "inf", condition=both(alpha > 0, beta > 0)),
        Limit(1, "-inf", condition=both(alpha < 0, beta > 0)),
        Limit(1, const(0), zero_sign=-1, condition=both(alpha < 0, beta < 0)),
        Limit(1, const(0), condition=beta < 0),
        Limit(-1, const(0), zero_sign=-1, condition=both(alpha < 0, beta > 0)),
        Limit(-1, "inf", condition=both(alpha > 0, beta < 0)),
        Limit(-1, "-inf", condition=both(alpha < 0, beta < 0)),
        Limit(1, alpha * log(const(2)), condition=eq(beta, 0)),
        Limit(-1, alpha * log(const(2)), condition=eq(beta, 0)),
        Limit(1, "inf"),
        Limit(-1, const(0)),
    ),
    properties=(
        Property("range", "range", "Softplus(x) >= 0", lower=const(0), standards=("onnx", "directml")),
        Property("monotonic", "monotonic", "Softplus is non-decreasing", standards=("onnx", "directml")),
        Property(
            "above_identity",
            "range",
            "Softplus(x) >= x for x >= 0: positive there",
            domain=(const(0), None),
            lower=const(0),
            standards=("onnx", "directml"),
        ),
        Property(
            "parametric_monotonic",
            "monotonic",
            "non-decreasing when alpha * beta >= 0",
            condition=alpha * beta >= 0,
            standards=("directml-parametric",),
        ),
        NAN_PROPAGATION,
        LIMITS,
    ),
    budget64=2.0,
    runtimes={
        "torch": RuntimeMap(
            "torch.nn.functional.softplus",
            {"beta": "steepness", "threshold": 20.0},
            why_not="torch's softplus is the ONNX and DirectML SOFTPLUS forms (beta = "
            "Steepness); it returns x where beta * x > threshold = 20, which differs "
            "from the definition by under half an ULP up to binary32 and is measured "
            "in binary64",
        ),
        "jax": RuntimeMap("jax.nn.softplus"),
    },
)
