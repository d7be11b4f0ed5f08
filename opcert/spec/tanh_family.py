"""Tanh (ONNX Tanh-13, SONNX) and ScaledTanh (DirectML)."""
from fractions import Fraction

import mpmath

from ..expr import absolute, attr, const, select, tanh, var
from .exact import mpf_to_fraction
from .model import Attribute, Operator, Property, Standard, Support
from .common import DML_LEVELS_1_0, FLOATS_ONNX, LIMITS, NAN_PROPAGATION, ONNX_ANY_RANK, SEEDS

x = var("x")
alpha, beta = attr("alpha"), attr("beta")


def tanh_saturation(fmt) -> list[Fraction]:
    """The x where tanh(x) reaches the midpoint between 1 and its predecessor
    in `fmt`: beyond it, the correctly rounded result is 1."""
    with mpmath.workprec(fmt.p + 80):
        t = mpmath.atanh(1 - mpmath.mpf(2) ** (-(fmt.p + 1)))
        return [mpf_to_fraction(t._mpf_)]


TANH = Operator(
    name="Tanh",
    family="tanh",
    summary="hyperbolic tangent, element-wise",
    attributes=(),
    standards=(
        Standard(
            key="onnx", op_name="Tanh", document="https://onnx.ai/onnx/operators/onnx__Tanh.html",
            formula_text="y = tanh(x)", formula=tanh(x), defaults={}, attribute_names={},
            support=(Support("6", ("float16", "float32", "float64"), ONNX_ANY_RANK),
                     Support("13", FLOATS_ONNX, ONNX_ANY_RANK))),
        Standard(
            key="sonnx", op_name="Tanh", document=SEEDS + "003_0e2c6b4168ad4b96.txt",
            formula_text="Y[i] = tanh(X[i]) = (e^X - e^-X) / (e^X + e^-X)",
            formula=tanh(x), defaults={}, attribute_names={},
            support=(Support("13", ("float16", "float32", "float64"), ONNX_ANY_RANK),),
            notes="SONNX informal specification based on ONNX Tanh-13: tanh(+inf) = 1, "
                  "tanh(-inf) = -1, NaN propagates."),
    ),
    primary="onnx",
    implementation=tanh(x),
    fast_reference=tanh(x),
    fast_reference_rel_error=Fraction(1, 2 ** 44),
    limits=lambda sign, a: Fraction(sign),
    special_points=lambda a, fmt: [Fraction(0)] + tanh_saturation(fmt),
    properties=(
        Property("range", "range", "-1 <= Tanh(x) <= 1", lower=const(-1), upper=const(1)),
        Property("monotonic", "monotonic", "Tanh is non-decreasing"),
        Property("odd", "odd", "Tanh(-x) = -Tanh(x)"),
        Property("zero", "exact_point", "Tanh(0) = 0", points=((const(0), const(0)),)),
        NAN_PROPAGATION,
        LIMITS,
    ),
)

SCALED_TANH = Operator(
    name="ScaledTanh",
    family="tanh",
    summary="alpha * tanh(beta * x), element-wise",
    attributes=(
        Attribute("alpha", "output scale", aliases=("Alpha",)),
        Attribute("beta", "input scale", aliases=("Beta",)),
    ),
    standards=(
        Standard(
            key="directml", op_name="DML_ACTIVATION_SCALED_TANH",
            document=SEEDS + "000_77872c7b68f5d332.txt",
            formula_text="f(x) = Alpha * tanh(Beta * x)", formula=alpha * tanh(beta * x),
            defaults={"alpha": 1.0, "beta": 0.5},
            attribute_names={"alpha": "Alpha", "beta": "Beta"},
            support=DML_LEVELS_1_0,
            notes="Defaults are the document's 'typical default' values. ONNX had an "
                  "experimental ScaledTanh and removed it; no ONNX definition is kept."),
    ),
    primary="directml",
    # Where beta * x is a binary64 subnormal it has lost bits; there
    # tanh(t) = t (1 - t*t/3 + ...) and alpha * beta is exact in binary64.
    implementation=select(absolute(beta * x) < const(Fraction(2) ** -1022), (alpha * beta) * x,
                          alpha * tanh(beta * x)),
    fast_reference=alpha * tanh(beta * x),
    fast_reference_rel_error=Fraction(1, 2 ** 44),
    limits=lambda sign, a: sign * a["alpha"] * ((a["beta"] > 0) - (a["beta"] < 0)),
    special_points=lambda a, fmt: [Fraction(0)] + (
        [t / a["beta"] for t in tanh_saturation(fmt)] if a["beta"] != 0 else []),
    properties=(
        Property("range", "range", "-|alpha| <= ScaledTanh(x) <= |alpha|",
                 lower=-absolute(alpha), upper=absolute(alpha)),
        Property("monotonic", "monotonic", "non-decreasing when alpha * beta >= 0",
                 condition=alpha * beta >= 0),
        Property("odd", "odd", "ScaledTanh(-x) = -ScaledTanh(x)"),
        Property("zero", "exact_point", "ScaledTanh(0) = 0", points=((const(0), const(0)),)),
        NAN_PROPAGATION,
        LIMITS,
    ),
)

OPERATORS = (TANH, SCALED_TANH)
