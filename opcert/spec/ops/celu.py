"""Celu: ONNX Celu-12/28, DirectML DML_ACTIVATION_CELU (seed 004)."""

from fractions import Fraction

from opcert.expr import absolute, exp, expm1, maximum, minimum, select
from opcert.spec.declarations import (
    ANY_RANK,
    DML_FLOATS,
    FLOATS_ONNX,
    LIMITS,
    NAN_PROPAGATION,
    ONNX_DOC,
    SEEDS,
    Property,
    Support,
    attr,
    const,
    limits,
    x,
)
from opcert.spec.model import Attribute, AttributeDomain, Operator, RuntimeMap, Standard

alpha = attr("alpha")
TINY64 = Fraction(2) ** -1022  # the smallest normal binary64 value
FORMULA = maximum(0, x) + minimum(0, alpha * (exp(x / alpha) - 1))

# alpha > 0: for x > 0 the min term is 0 and the max term x. Written as a branch, the reference never
# evaluates e^(x/alpha) for large x (Arb gives up on expm1(7e76): a ball of infinite radius).
REFERENCE = select(x > 0, x, alpha * expm1(x / alpha))

OPERATOR = Operator(
    name="Celu",
    family="exponential",
    summary="max(0, x) + min(0, alpha * (exp(x / alpha) - 1)), element-wise",
    attributes=(
        Attribute(
            "alpha",
            "scale of the negative part",
            domain=AttributeDomain(lower=0.0, lower_open=True, description="a finite binary32 value > 0"),
            aliases=("Alpha",),
        ),
    ),
    standards=(
        Standard(
            key="onnx",
            op_name="Celu",
            document=ONNX_DOC.format("Celu"),
            formula_text="y = max(0, x) + min(0, alpha * (exp(x / alpha) - 1))",
            formula=FORMULA,
            defaults={"alpha": 1.0},
            attribute_names={"alpha": "alpha"},
            support=(Support("12", ("float32",), ANY_RANK), Support("28", FLOATS_ONNX, ANY_RANK)),
            reference_form=REFERENCE,
        ),
        Standard(
            key="directml",
            op_name="DML_ACTIVATION_CELU",
            document=SEEDS + "004_2ee12ca1c74b08db.txt",
            formula_text="f(x) = max(0, x) + min(0, Alpha * (exp(x / Alpha) - 1))",
            formula=FORMULA,
            defaults={"alpha": 1.0},
            attribute_names={"alpha": "Alpha"},
            support=(Support("3.0", DML_FLOATS, (1, 8)),),
            reference_form=REFERENCE,
        ),
    ),
    primary="onnx",
    # expm1 instead of exp(.) - 1: no cancellation near 0-. Where x / alpha is
    # a binary64 subnormal it has lost bits, and Celu(x) = x (1 + x/(2 alpha) + ...)
    # rounds to x itself.
    implementation=maximum(0, x) + minimum(0, select(absolute(x / alpha) < const(TINY64), x, alpha * expm1(x / alpha))),
    limits=limits("inf", -alpha),
    properties=(
        Property("range", "range", "Celu(x) >= -alpha", lower=-alpha),
        Property("monotonic", "monotonic", "Celu is non-decreasing (alpha > 0)"),
        Property("zero", "exact_point", "Celu(0) = 0", points=((const(0), const(0)),)),
        Property("continuity", "continuity", "continuous at 0", at=(const(0),)),
        NAN_PROPAGATION,
        LIMITS,
    ),
    notes="alpha must be > 0 (the CELU paper's domain; alpha = 0 divides by zero). "
    "ONNX Celu-12 allows float32 only; Celu-28 adds float16, bfloat16 and float64.",
    budget64=2.0,
    runtimes={
        "torch": RuntimeMap("torch.nn.functional.celu", {"alpha": "alpha"}),
        "jax": RuntimeMap("jax.nn.celu", {"alpha": "alpha"}),
    },
)
