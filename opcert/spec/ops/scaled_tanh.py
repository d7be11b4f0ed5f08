"""ScaledTanh: DirectML DML_ACTIVATION_SCALED_TANH (seed 000). ONNX had an
experimental ScaledTanh and removed it; ONNX Runtime still registers it (opset 9)."""

from fractions import Fraction

from opcert.expr import absolute, select, tanh
from opcert.spec.declarations import (
    LIMITS,
    NAN_PROPAGATION,
    SEEDS,
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
X = finite_where_zero(beta, x)  # x, but +-1 at +-inf where beta = 0: beta * x is then 0, not NaN

OPERATOR = Operator(
    name="ScaledTanh",
    family="tanh",
    summary="alpha * tanh(beta * x), element-wise",
    attributes=(
        Attribute("alpha", "output scale", aliases=("Alpha",)),
        Attribute("beta", "input scale", aliases=("Beta",)),
    ),
    standards=(
        Standard(
            key="directml",
            op_name="DML_ACTIVATION_SCALED_TANH",
            document=SEEDS + "000_77872c7b68f5d332.txt",
            formula_text="f(x) = Alpha * tanh(Beta * x)",
            formula=alpha * tanh(beta * x),
            defaults={"alpha": 1.0, "beta": 0.5},
            attribute_names={"alpha": "Alpha", "beta": "Beta"},
            support=dml_levels_1_0(),
            notes="Defaults are the document's 'typical default' values. ONNX had an experimental ScaledTanh "
            "and removed it; no ONNX definition is kept.",
        ),
    ),
    primary="directml",
    # Where beta * x is a binary64 subnormal it has lost bits; there
    # tanh(t) = t (1 - t*t/3 + ...) and alpha * beta is exact in binary64.
    implementation=select(absolute(beta * X) < const(Fraction(2) ** -1022), (alpha * beta) * X, alpha * tanh(beta * X)),
    # A zero limit has the sign the formula gives near it: alpha * tanh(beta * x) is alpha times a value
    # of the sign of beta * x (alpha = 0, or beta = 0 where tanh(beta * x) is a zero of x's sign; both 0:
    # +0 * -0 = -0 at -inf).
    limits=(
        Limit(1, alpha, condition=beta > 0),
        Limit(1, -alpha, zero_sign=-1, condition=beta < 0),
        Limit(1, const(0), zero_sign=-1, condition=alpha < 0),
        Limit(1, const(0)),
        Limit(-1, -alpha, zero_sign=-1, condition=beta > 0),
        Limit(-1, alpha, condition=beta < 0),
        Limit(-1, const(0), zero_sign=-1, condition=alpha >= 0),
        Limit(-1, const(0)),
    ),
    properties=(
        Property(
            "range", "range", "-|alpha| <= ScaledTanh(x) <= |alpha|", lower=-absolute(alpha), upper=absolute(alpha)
        ),
        Property("monotonic", "monotonic", "non-decreasing when alpha * beta >= 0", condition=alpha * beta >= 0),
        Property("odd", "odd", "ScaledTanh(-x) = -ScaledTanh(x)"),
        Property("zero", "exact_point", "ScaledTanh(0) = 0", points=((const(0), const(0)),)),
        NAN_PROPAGATION,
        LIMITS,
    ),
    budget64=2.0,
    onnx_opsets={"float16": 9, "float32": 9, "float64": 9},
)
