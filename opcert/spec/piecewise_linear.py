"""HardSigmoid and Shrink (DirectML and ONNX): rational operators, whose
reference is computed exactly in rational arithmetic."""
from fractions import Fraction

from ..expr import attr, both, const, either, fma, isnan, maximum, minimum, select, var
from .common import DML_FLOATS, DML_LEVELS_1_0, LIMITS, NAN_PROPAGATION, ONNX_ANY_RANK, SEEDS
from .model import Attribute, Operator, Property, Standard, Support

x = var("x")
alpha, beta = attr("alpha"), attr("beta")
bias, lambd = attr("bias"), attr("lambd")


def _hard_sigmoid_limit(sign, a):
    if a["alpha"] == 0:
        return min(max(a["beta"], Fraction(0)), Fraction(1))
    return Fraction(1) if sign * a["alpha"] > 0 else Fraction(0)


HARD_SIGMOID = Operator(
    name="HardSigmoid",
    family="piecewise-linear",
    summary="max(0, min(alpha * x + beta, 1)), element-wise",
    attributes=(
        Attribute("alpha", "slope", aliases=("Alpha",)),
        Attribute("beta", "offset", aliases=("Beta",)),
    ),
    standards=(
        Standard(
            key="onnx", op_name="HardSigmoid",
            document="https://onnx.ai/onnx/operators/onnx__HardSigmoid.html",
            formula_text="y = max(0, min(1, alpha * x + beta))",
            formula=maximum(0, minimum(1, alpha * x + beta)),
            defaults={"alpha": 0.2, "beta": 0.5}, attribute_names={"alpha": "alpha", "beta": "beta"},
            support=(Support("6", ("float16", "float32", "float64"), ONNX_ANY_RANK),
                     Support("22", ("float16", "bfloat16", "float32", "float64"), ONNX_ANY_RANK))),
        Standard(
            key="directml", op_name="DML_ACTIVATION_HARD_SIGMOID",
            document=SEEDS + "001_9472a8d145e8eeab.txt",
            formula_text="f(x) = max(0, min(Alpha * x + Beta, 1))",
            formula=maximum(0, minimum(alpha * x + beta, 1)),
            defaults={"alpha": 0.2, "beta": 0.5}, attribute_names={"alpha": "Alpha", "beta": "Beta"},
            support=DML_LEVELS_1_0),
    ),
    primary="onnx",
    # alpha * x + beta rounded once: the product of a binary32 attribute and an
    # input of at most 24 significant bits is exact in binary64.
    implementation=maximum(0, minimum(fma(alpha, x, beta), 1)),
    fast_reference=maximum(0, minimum(fma(alpha, x, beta), 1)),
    fast_reference_rel_error=Fraction(1, 2 ** 50),
    limits=_hard_sigmoid_limit,
    special_points=lambda a, fmt: ([-a["beta"] / a["alpha"], (1 - a["beta"]) / a["alpha"]]
                                   if a["alpha"] != 0 else []) + [Fraction(0)],
    properties=(
        Property("range", "range", "0 <= HardSigmoid(x) <= 1", lower=const(0), upper=const(1)),
        Property("monotonic", "monotonic", "non-decreasing when alpha >= 0", condition=alpha >= 0),
        Property("saturated_low", "constant", "HardSigmoid(x) = 0 for every x <= -beta/alpha when alpha > 0",
                 condition=alpha > 0, domain=(None, -beta / alpha), value=const(0)),
        Property("saturated_high", "constant", "HardSigmoid(x) = 1 for every x >= (1-beta)/alpha when alpha > 0",
                 condition=alpha > 0, domain=((1 - beta) / alpha, None), value=const(1)),
        Property("continuity", "continuity", "continuous at the saturation points when alpha != 0",
                 condition=either(alpha > 0, alpha < 0), at=(-beta / alpha, (1 - beta) / alpha)),
        NAN_PROPAGATION,
        LIMITS,
    ),
)


def _shrink_formula_onnx():
    return select(x < -lambd, x + bias, select(x > lambd, x - bias, 0))


def _shrink_formula_directml():
    return select(x > lambd, x - bias, select(x < -lambd, x + bias, 0))


SHRINK = Operator(
    name="Shrink",
    family="piecewise-linear",
    summary="x - bias above lambd, x + bias below -lambd, 0 between",
    attributes=(
        Attribute("bias", "shift applied outside the dead zone", aliases=("Bias",)),
        Attribute("lambd", "half-width of the dead zone", aliases=("Threshold", "lambda")),
    ),
    standards=(
        Standard(
            key="onnx", op_name="Shrink", document="https://onnx.ai/onnx/operators/onnx__Shrink.html",
            formula_text="y = x + bias if x < -lambd; x - bias if x > lambd; 0 otherwise",
            formula=_shrink_formula_onnx(),
            defaults={"bias": 0.0, "lambd": 0.5}, attribute_names={"bias": "bias", "lambd": "lambd"},
            support=(Support("9", ("float16", "float32", "float64", "int8", "int16", "int32", "int64",
                                   "uint8", "uint16", "uint32", "uint64"), ONNX_ANY_RANK),)),
        Standard(
            key="directml", op_name="DML_ACTIVATION_SHRINK",
            document=SEEDS + "002_b8697d6f1709852a.txt",
            formula_text="f(x) = x - Bias if x > Threshold; x + Bias if x < -Threshold; 0 otherwise",
            formula=_shrink_formula_directml(),
            defaults={"bias": 0.0, "lambd": 0.5}, attribute_names={"bias": "Bias", "lambd": "Threshold"},
            support=(Support("2.0", DML_FLOATS, (4, 5)),
                     Support("3.0", DML_FLOATS, (1, 8)),
                     Support("5.1", DML_FLOATS + ("int32", "int16", "int8", "uint32", "uint16", "uint8"),
                             (1, 8)))),
    ),
    primary="onnx",
    # The standards' formulas map NaN to 0 (no comparison holds); opcert's
    # specification propagates NaN, so the implementation tests for it first.
    implementation=select(isnan(x), x, _shrink_formula_onnx()),
    fast_reference=_shrink_formula_onnx(),
    fast_reference_rel_error=Fraction(1, 2 ** 50),
    limits=lambda sign, a: sign * float("inf"),
    special_points=lambda a, fmt: [a["lambd"], -a["lambd"], a["bias"], -a["bias"], Fraction(0)],
    properties=(
        Property("monotonic", "monotonic", "non-decreasing when bias <= max(lambd, 0)",
                 condition=bias <= maximum(lambd, 0)),
        Property("odd", "odd", "Shrink(-x) = -Shrink(x) when lambd >= 0 (as values: Shrink(+-0) = +0)",
                 condition=lambd >= 0, zero_sign=False),
        Property("zero", "exact_point", "Shrink(0) = 0 when lambd >= 0", condition=lambd >= 0,
                 points=((const(0), const(0)),)),
        Property("dead_zone", "constant", "Shrink(x) = 0 for every x in [-lambd, lambd] when lambd >= 0",
                 condition=lambd >= 0, domain=(-lambd, lambd), value=const(0)),
        Property("continuity", "continuity", "continuous at +-lambd when bias = lambd >= 0",
                 condition=both(bias <= lambd, both(bias >= lambd, lambd >= 0)), at=(lambd, -lambd)),
        NAN_PROPAGATION,
        LIMITS,
    ),
    standards_differ_where=both(lambd < 0, either(bias < 0, bias > 0)),
    integer_semantics=(
        "Integer tensors: the comparisons are exact (the integer against the binary32 lambd); "
        "x - bias and x + bias are computed exactly, rounded to the nearest integer with ties "
        "to even, and saturated to the type's range. DirectML (level 5.1) and ONNX allow "
        "integer inputs but say nothing of rounding or overflow: this is opcert's choice."),
    notes="With lambd < 0 the two standards differ: ONNX tests x < -lambd first, DirectML "
          "x > Threshold first. The standards' formulas give 0 for a NaN input; opcert's "
          "specification propagates NaN.",
)

OPERATORS = (HARD_SIGMOID, SHRINK)
