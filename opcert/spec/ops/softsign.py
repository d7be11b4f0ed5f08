"""Softsign: ONNX Softsign-1/22, DirectML DML_ACTIVATION_SOFTSIGN."""

from fractions import Fraction

from opcert.expr import absolute, select
from opcert.spec.declarations import (
    ANY_RANK,
    DML_DOC,
    FLOATS_ONNX,
    FLOATS_ONNX_OLD,
    LIMITS,
    NAN_PROPAGATION,
    ONNX_DOC,
    Property,
    Support,
    const,
    dml_levels_1_0,
    limits,
    x,
)
from opcert.spec.model import Operator, RuntimeMap, Standard

FORMULA = x / (1 + absolute(x))

OPERATOR = Operator(
    name="Softsign",
    family="rational",
    summary="x / (1 + |x|), element-wise",
    attributes=(),
    standards=(
        Standard(
            key="onnx",
            op_name="Softsign",
            document=ONNX_DOC.format("Softsign"),
            formula_text="y = x / (1 + |x|)",
            formula=FORMULA,
            defaults={},
            attribute_names={},
            support=(Support("1", FLOATS_ONNX_OLD, ANY_RANK), Support("22", FLOATS_ONNX, ANY_RANK)),
        ),
        Standard(
            key="directml",
            op_name="DML_ACTIVATION_SOFTSIGN",
            document=DML_DOC.format("softsign"),
            formula_text="f(x) = x / (1 + abs(x))",
            formula=FORMULA,
            defaults={},
            attribute_names={},
            support=dml_levels_1_0(),
        ),
    ),
    primary="onnx",
    # 1 / (1 + 1/|x|): every step monotone, so the result is monotone with rounding (x / (1 + |x|)
    # is not: it decreases between adjacent binary64 inputs in [1, 2)). Below 2^-60, x / (1 + |x|)
    # rounds to x (and 1/x would overflow); beyond 2^100 the result is +-1 to within 2^-100.
    implementation=select(
        absolute(x) > const(2**100),
        select(x > 0, 1, -1),
        select(absolute(x) < const(Fraction(1, 2**60)), x, select(x < 0, -(1 / (1 + 1 / -x)), 1 / (1 + 1 / x))),
    ),
    limits=limits(const(1), const(-1)),
    properties=(
        Property("range", "range", "-1 <= Softsign(x) <= 1", lower=const(-1), upper=const(1)),
        Property("monotonic", "monotonic", "Softsign is non-decreasing"),
        Property("odd", "odd", "Softsign(-x) = -Softsign(x)"),
        Property("zero", "exact_point", "Softsign(0) = 0", points=((const(0), const(0)),)),
        NAN_PROPAGATION,
        LIMITS,
    ),
    budget64=2.5,
    runtimes={"torch": RuntimeMap("torch.nn.functional.softsign"), "jax": RuntimeMap("jax.nn.soft_sign")},
)
