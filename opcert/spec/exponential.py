"""Celu (ONNX Celu-12/28, DirectML)."""
from fractions import Fraction

import mpmath

from ..expr import absolute, attr, const, exp, expm1, maximum, minimum, select, var
from .common import DML_FLOATS, FLOATS_ONNX, LIMITS, NAN_PROPAGATION, ONNX_ANY_RANK, SEEDS
from .exact import mpf_to_fraction
from .model import Attribute, Domain, Operator, Property, Standard, Support

x = var("x")
alpha = attr("alpha")
TINY64 = Fraction(2) ** -1022  # the smallest normal binary64 value


def _celu_points(a, fmt):
    # 0 (the branch point), and where alpha * expm1(x / alpha) reaches the
    # rounding midpoint next to -alpha (the negative saturation).
    with mpmath.workprec(fmt.p + 80):
        t = mpmath.log(mpmath.mpf(2) ** (-(fmt.p + 1)))
        sat = mpf_to_fraction(t._mpf_) * a["alpha"]
    return [Fraction(0), sat]


CELU = Operator(
    name="Celu",
    family="exponential",
    summary="max(0, x) + min(0, alpha * (exp(x / alpha) - 1)), element-wise",
    attributes=(
        Attribute("alpha", "scale of the negative part",
                  domain=Domain(lower=0.0, lower_open=True, description="a finite binary32 value > 0"),
                  aliases=("Alpha",)),
    ),
    standards=(
        Standard(
            key="onnx", op_name="Celu", document="https://onnx.ai/onnx/operators/onnx__Celu.html",
            formula_text="y = max(0, x) + min(0, alpha * (exp(x / alpha) - 1))",
            formula=maximum(0, x) + minimum(0, alpha * (exp(x / alpha) - 1)),
            defaults={"alpha": 1.0}, attribute_names={"alpha": "alpha"},
            support=(Support("12", ("float32",), ONNX_ANY_RANK),
                     Support("28", FLOATS_ONNX, ONNX_ANY_RANK))),
        Standard(
            key="directml", op_name="DML_ACTIVATION_CELU", document=SEEDS + "004_2ee12ca1c74b08db.txt",
            formula_text="f(x) = max(0, x) + min(0, Alpha * (exp(x / Alpha) - 1))",
            formula=maximum(0, x) + minimum(0, alpha * (exp(x / alpha) - 1)),
            defaults={"alpha": 1.0}, attribute_names={"alpha": "Alpha"},
            support=(Support("3.0", DML_FLOATS, (1, 8)),)),
    ),
    primary="onnx",
    # expm1 instead of exp(.) - 1: no cancellation near 0-. Where x / alpha is
    # a binary64 subnormal it has lost bits, and Celu(x) = x (1 + x/(2 alpha) + ...)
    # rounds to x itself.
    implementation=maximum(0, x) + minimum(0, select(absolute(x / alpha) < const(TINY64), x,
                                                     alpha * expm1(x / alpha))),
    fast_reference=maximum(0, x) + minimum(0, alpha * expm1(x / alpha)),
    fast_reference_rel_error=Fraction(1, 2 ** 44),
    limits=lambda sign, a: float("inf") if sign > 0 else -a["alpha"],
    special_points=_celu_points,
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
)

OPERATORS = (CELU,)
