"""HardSwish: ONNX HardSwish-14/22 (alpha = 1/6 and beta = 1/2, fixed), DirectML
DML_ACTIVATION_HARD_SWISH (level 6.2, Alpha and Beta attributes)."""

from fractions import Fraction

from opcert.expr import both, eq, fma, maximum, minimum, select
from opcert.spec.declarations import (
    ANY_RANK,
    DML_DOC,
    DML_FLOATS,
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
    finite_where_zero,
    x,
)
from opcert.spec.model import Attribute, Operator, RuntimeMap, Standard

alpha, beta = attr("alpha"), attr("beta")
SIXTH = const(Fraction(1, 6))
ONNX_FORMULA = x * maximum(0, minimum(1, SIXTH * x + const("0.5")))
DML_FORMULA = x * maximum(0, minimum(alpha * x + beta, 1))

OPERATOR = Operator(
    name="HardSwish",
    family="piecewise-linear",
    summary="x * max(0, min(1, alpha * x + beta)), element-wise",
    attributes=(
        Attribute("alpha", "slope of the hard sigmoid (DirectML only; ONNX fixes 1/6)", aliases=("Alpha",)),
        Attribute("beta", "offset of the hard sigmoid (DirectML only; ONNX fixes 1/2)", aliases=("Beta",)),
    ),
    standards=(
        Standard(
            key="onnx",
            op_name="HardSwish",
            document=ONNX_DOC.format("HardSwish"),
            formula_text="y = x * max(0, min(1, alpha * x + beta)), where alpha = 1/6 and beta = 0.5",
            formula=ONNX_FORMULA,
            defaults={},
            attribute_names={},
            support=(Support("14", FLOATS_ONNX_OLD, ANY_RANK), Support("22", FLOATS_ONNX, ANY_RANK)),
            notes="alpha = 1/6 is a constant of the formula, not a FLOAT attribute: the exact specification "
            "uses the real 1/6 (HardSwish(-3) = 0, HardSwish(3) = 3 exactly).",
        ),
        Standard(
            key="directml",
            op_name="DML_ACTIVATION_HARD_SWISH",
            document=DML_DOC.format("hard_swish"),
            formula_text="f(x) = x * HardSigmoid(x, Alpha, Beta)",
            formula=DML_FORMULA,
            defaults={"alpha": 1 / 6, "beta": 0.5},
            attribute_names={"alpha": "Alpha", "beta": "Beta"},
            support=(Support("6.2", DML_FLOATS, (1, 8)),),
            # at alpha = 0, alpha * x is beta's 0 for every x, +-inf included (IEEE's 0 * inf is NaN: HardSwish(inf)
            # came out NaN at alpha 0, beta 0.5, where it is inf)
            implementation=select(
                fma(alpha, finite_where_zero(alpha, x), beta) <= 0,
                # x times a hard sigmoid of 0: a zero of x's sign (-0 at x = -0, where beta <= 0 puts it here)
                select(x < 0, -const(0), select(x > 0, const(0), x * const(0))),
                x * maximum(0, minimum(fma(alpha, finite_where_zero(alpha, x), beta), 1)),
            ),
            notes="The document's typical default for Alpha is '0.166667 (1/6)': opcert takes 1/6 rounded to "
            "binary32 (0.1666666716...), which is not 1/6, so the two standards never agree exactly.",
        ),
    ),
    primary="onnx",
    # (x + 3) / 6 = x/6 + 1/2: x + 3 and the division are two roundings in binary64, the product a third
    # x * 0 is NaN at -inf: below -3 the result is -0 directly
    implementation=select(x < -3, -const(0), x * maximum(0, minimum(1, (x + 3) / 6))),
    # DirectML's Alpha and Beta move the limits; ONNX's are those of alpha = 1/6 > 0
    limits=(
        Limit(1, const(0), condition=alpha < 0),
        Limit(-1, "-inf", condition=alpha < 0),
        Limit(1, "inf", condition=both(eq(alpha, 0), beta > 0)),
        Limit(-1, "-inf", condition=both(eq(alpha, 0), beta > 0)),
        Limit(1, const(0), condition=eq(alpha, 0)),
        Limit(-1, const(0), zero_sign=-1, condition=eq(alpha, 0)),
        Limit(1, "inf"),
        Limit(-1, const(0), zero_sign=-1),
    ),
    properties=(
        Property(
            "lower_bound",
            "range",
            "HardSwish(x) >= -3/8 (its minimum, at x = -3/2)",
            lower=const("-0.375"),
            standards=("onnx",),
        ),
        Property(
            "monotonic",
            "monotonic",
            "HardSwish is not monotone: it decreases on [-3, -3/2]",
            holds=False,
            standards=("onnx",),
        ),
        Property(
            "monotonic_above_minimum",
            "monotonic",
            "non-decreasing for x >= -3/2",
            domain=(const("-1.5"), None),
            standards=("onnx",),
        ),
        Property(
            "dead_zone",
            "constant",
            "HardSwish(x) = 0 for every x <= -3",
            domain=(None, const(-3)),
            value=const(0),
            standards=("onnx",),
        ),
        Property(
            "dml_lower_bound",
            "range",
            "x * HardSigmoid(x, Alpha, Beta) >= -Beta^2 / (4 Alpha) when Alpha > 0 and 0 <= Beta <= 1",
            condition=both(alpha > 0, both(beta >= 0, beta <= 1)),
            lower=-(beta * beta) / (4 * alpha),
            standards=("directml",),
        ),
        Property("zero", "exact_point", "HardSwish(0) = 0", points=((const(0), const(0)),)),
        NAN_PROPAGATION,
        LIMITS,
    ),
    standards_differ_where=None,
    # x + 3 and / 6 each round to within u = 2^-53 relative, so the factor is within 2u (+u^2); times
    # x, that is at most 2u * 2^53 = 2 ULP of the product (|y| / ulp(y) < 2^53), and the product's
    # own rounding 0.5 more: 2.5. (1.5 held on 10^4 samples; 10^6 found 1.774 ULP at x = 0.0075806)
    budget64=2.5,
    runtimes={"torch": RuntimeMap("torch.nn.functional.hardswish")},
    own_exceptions={
        ("monotonic_above_minimum", "float64"): (
            "opcert's binary64 code x * R(R(x + 3) / 6) is not monotone on [-1.5, 0): the rounded factor "
            "steps up one ULP while x steps one ULP, e.g. f(-0.9999999999999986) = -0.33333333333333304 > "
            "f(-0.9999999999999984) = -0.33333333333333315 (`opcert prove HardSwish --dtype float64` refutes it); "
            "in float32 it is proved"
        )
    },
    notes="torch's hardswish is x * relu6(x + 3) / 6: the real 1/6, ONNX's definition.",
)
