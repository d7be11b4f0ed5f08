"""Mish: ONNX Mish-18/22, x * tanh(softplus(x)). No DirectML activation."""

from fractions import Fraction

from opcert.expr import exp, log, log1p, select, tanh
from opcert.spec.declarations import (
    ANY_RANK,
    FLOATS_ONNX,
    FLOATS_ONNX_OLD,
    LIMITS,
    NAN_PROPAGATION,
    ONNX_DOC,
    Property,
    Support,
    const,
    limits,
    softplus_monotone,
    x,
)
from opcert.spec.model import Operator, RuntimeMap, Standard

FORMULA = x * tanh(log(1 + exp(x)))
SOFTPLUS = select(x > 0, x + log1p(exp(-x)), log1p(exp(x)))  # exactly ln(1 + e^x), for the reference
E = exp(x)
N = E * (E + 2)

OPERATOR = Operator(
    name="Mish",
    family="exponential",
    summary="x * tanh(ln(1 + exp(x))), element-wise",
    attributes=(),
    standards=(
        Standard(
            key="onnx",
            op_name="Mish",
            document=ONNX_DOC.format("Mish"),
            formula_text="mish(x) = x * tanh(softplus(x)) = x * tanh(ln(1 + e^{x}))",
            formula=FORMULA,
            defaults={},
            attribute_names={},
            support=(Support("18", FLOATS_ONNX_OLD, ANY_RANK), Support("22", FLOATS_ONNX, ANY_RANK)),
            reference_form=x * tanh(SOFTPLUS),
        ),
    ),
    primary="onnx",
    # Below 0, tanh(ln(1 + e)) = e (e + 2) / (e (e + 2) + 2) with e = e^x, accurate where it is tiny;
    # below -40 that is e^x to 2^-57, and x e^x is (x e^(x/2)) e^(x/2), whose factors stay normal
    # where e^x alone would be a binary64 subnormal.
    implementation=select(
        x < -1000,
        -const(0),
        select(
            x < -40, (x * exp(x / 2)) * exp(x / 2), select(x <= 0, x * (N / (N + 2)), x * tanh(softplus_monotone(x)))
        ),
    ),
    limits=limits("inf", const(0), zero_sign_neg=-1),
    properties=(
        Property(
            "lower_bound",
            "range",
            "Mish(x) >= -1 (proved from tanh(s) <= s, ln(1 + t) <= t and e^x (1 - x) <= 1)",
            lower=const(-1),
        ),
        Property(
            "minimum",
            "range",
            "Mish(x) >= -0.30885 (its minimum is -0.308843... at x = -1.19243...)",
            lower=const("-0.30885"),
        ),
        Property(
            "monotonic", "monotonic", "Mish is not monotone: it has a global minimum near x = -1.192", holds=False
        ),
        Property("monotonic_positive", "monotonic", "non-decreasing for x >= 0", domain=(const(0), None)),
        Property("zero", "exact_point", "Mish(0) = 0", points=((const(0), const(0)),)),
        NAN_PROPAGATION,
        LIMITS,
    ),
    hard_points=lambda a: [Fraction("-1.19243121451550"), Fraction(-40)],
    budget64=8.0,
    runtimes={"torch": RuntimeMap("torch.nn.functional.mish")},
)
