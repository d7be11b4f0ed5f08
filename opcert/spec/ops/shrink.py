"""Shrink: ONNX Shrink-9, DirectML DML_ACTIVATION_SHRINK (seed 002)."""

from opcert.expr import both, either, eq, isnan, maximum, select
from opcert.spec.declarations import (
    ANY_RANK,
    DML_FLOATS,
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
from opcert.spec.model import Attribute, IntegerSemantics, Operator, RuntimeMap, Standard

bias, lambd = attr("bias"), attr("lambd")
ONNX_FORMULA = select(x < -lambd, x + bias, select(x > lambd, x - bias, 0))
DML_FORMULA = select(x > lambd, x - bias, select(x < -lambd, x + bias, 0))

OPERATOR = Operator(
    name="Shrink",
    family="piecewise-linear",
    summary="x - bias above lambd, x + bias below -lambd, 0 between",
    attributes=(
        Attribute("bias", "shift applied outside the dead zone", aliases=("Bias",)),
        Attribute("lambd", "half-width of the dead zone", aliases=("Threshold", "lambda")),
    ),
    standards=(
        Standard(
            key="onnx",
            op_name="Shrink",
            document=ONNX_DOC.format("Shrink"),
            formula_text="y = x + bias if x < -lambd; x - bias if x > lambd; 0 otherwise",
            formula=ONNX_FORMULA,
            defaults={"bias": 0.0, "lambd": 0.5},
            attribute_names={"bias": "bias", "lambd": "lambd"},
            support=(
                Support(
                    "9",
                    (
                        "float16",
                        "float32",
                        "float64",
                        "int8",
                        "int16",
                        "int32",
                        "int64",
                        "uint8",
                        "uint16",
                        "uint32",
                        "uint64",
                    ),
                    ANY_RANK,
                ),
            ),
        ),
        Standard(
            key="directml",
            op_name="DML_ACTIVATION_SHRINK",
            document=SEEDS + "002_b8697d6f1709852a.txt",
            formula_text="f(x) = x - Bias if x > Threshold; x + Bias if x < -Threshold; 0 otherwise",
            formula=DML_FORMULA,
            implementation=select(isnan(x), x, DML_FORMULA),
            defaults={"bias": 0.0, "lambd": 0.5},
            attribute_names={"bias": "Bias", "lambd": "Threshold"},
            support=(
                Support("2.0", DML_FLOATS, (4, 5)),
                Support("3.0", DML_FLOATS, (1, 8)),
                Support("5.1", DML_FLOATS + ("int32", "int16", "int8", "uint32", "uint16", "uint8"), (1, 8)),
            ),
        ),
    ),
    primary="onnx",
    # The standards' formulas map NaN to 0 (no comparison holds); opcert's
    # specification propagates NaN, so the implementation tests for it first.
    implementation=select(isnan(x), x, ONNX_FORMULA),
    limits=limits("inf", "-inf"),
    properties=(
        Property(
            "monotonic", "monotonic", "non-decreasing when bias <= max(lambd, 0)", condition=bias <= maximum(lambd, 0)
        ),
        Property(
            "odd",
            "odd",
            "Shrink(-x) = -Shrink(x) when lambd >= 0 (as values: Shrink(+-0) = +0)",
            condition=lambd >= 0,
            zero_sign=False,
        ),
        Property(
            "zero", "exact_point", "Shrink(0) = 0 when lambd >= 0", condition=lambd >= 0, points=((const(0), const(0)),)
        ),
        Property(
            "dead_zone",
            "constant",
            "Shrink(x) = 0 for every x in [-lambd, lambd] when lambd >= 0",
            condition=lambd >= 0,
            domain=(-lambd, lambd),
            value=const(0),
        ),
        Property(
            "continuity",
            "continuity",
            "continuous at +-lambd when bias = lambd >= 0",
            condition=both(bias <= lambd, both(bias >= lambd, lambd >= 0)),
            at=(lambd, -lambd),
        ),
        NAN_PROPAGATION,
        LIMITS,
    ),
    standards_differ_where=both(lambd < 0, either(bias < 0, bias > 0)),
    integer=IntegerSemantics(
        "Integer tensors: the comparisons are exact (the integer against the binary32 lambd); x - bias and "
        "x + bias are computed exactly, rounded to the nearest integer with ties to even, and saturated to the "
        "type's range. DirectML (level 5.1) and ONNX allow integer inputs but say nothing of rounding or overflow: "
        "this is opcert's choice."
    ),
    notes="With lambd < 0 the two standards differ: ONNX tests x < -lambd first, DirectML x > Threshold first. "
    "The standards' formulas give 0 for a NaN input; opcert's specification propagates NaN.",
    budget64=0.5,
    runtimes={
        "torch": (
            RuntimeMap(
                "torch.nn.functional.hardshrink",
                {"lambd": "lambd"},
                condition=both(lambd >= 0, eq(bias, 0)),
                why_not="",
            ),
            RuntimeMap(
                "torch.nn.functional.softshrink",
                {"lambd": "lambd"},
                condition=both(lambd >= 0, both(bias <= lambd, bias >= lambd)),
                why_not="torch has Shrink only as hardshrink (bias = 0) and softshrink (bias = lambd), lambd >= 0",
            ),
        ),
    },
)
