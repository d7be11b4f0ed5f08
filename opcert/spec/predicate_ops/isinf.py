"""IsInf: which elements of the input are infinite, of the signs asked for. ONNX's IsInf-10 (float, double),
IsInf-20 (float16, bfloat16 and the float8 types added), with detect_positive and detect_negative (INT, default 1:
"whether map positive (negative) infinity to true"), output tensor(bool); DirectML's
DML_ELEMENT_WISE_IS_INFINITY, introduced at feature level 2.1 (FLOAT32 and FLOAT16 in, UINT8 out, 4 dimensions; 1
to 8 from level 3.0), with InfinityMode (DML_IS_INFINITY_MODE_EITHER = 0, POSITIVE = 1, NEGATIVE = 2):
f(x) = isinf(x) && ((x > 0 && POSITIVE) || (x < 0 && NEGATIVE) || EITHER).

ONNX's detect_positive = detect_negative = 0 is a valid model: every output false. ONNX's text names 0 and 1;
opcert takes those two values (its checks refuse another integer rather than guess a runtime's reading of it)."""

import numpy as np

from opcert.formats import format_of
from opcert.spec.declarations import ONNX_DOC
from opcert.spec.elementwise import DML_ELEMENT_WISE_DOC
from opcert.spec.model import Support
from opcert.spec.predicate import (
    FLOAT8_ONNX,
    PredicateAttribute,
    PredicateOperator,
    PredicateProperty,
    PredicateStandard,
    inf_bits,
)

EITHER, POSITIVE, NEGATIVE = 0, 1, 2  # DML_IS_INFINITY_MODE


def detects(attrs: dict, standard: str) -> tuple[bool, bool]:
    """(+inf is true, -inf is true) under the standard's attributes (their defaults where absent)."""
    if standard == "directml":
        mode = int(attrs.get("infinity_mode", EITHER))
        return mode in (EITHER, POSITIVE), mode in (EITHER, NEGATIVE)
    return bool(int(attrs.get("detect_positive", 1))), bool(int(attrs.get("detect_negative", 1)))


def reference(x, attrs: dict, standard: str) -> np.ndarray:
    """IEEE 754's isInfinite and the sign rule, as NumPy computes them on the input's own dtype."""
    pos, neg = detects(attrs, standard)
    with np.errstate(invalid="ignore"):  # ml_dtypes' NaNs raise NumPy's invalid flag
        inf = np.asarray(np.isinf(x), dtype=bool)
        return inf & ((np.asarray(x > 0) & pos) | (np.asarray(x < 0) & neg))


def implementation(x, attrs: dict, standard: str) -> np.ndarray:
    """opcert's own: the exponent field all ones, the significand zero, and the sign bit (no float arithmetic)."""
    pos, neg = detects(attrs, standard)
    return inf_bits(x, format_of(np.asarray(x)), pos, neg)


def library_function(attrs: dict, standard: str) -> str | None:
    """torch's and jax.numpy's function for these attributes (None: neither sign, which no function is)."""
    return {(True, True): "isinf", (True, False): "isposinf", (False, True): "isneginf"}.get(detects(attrs, standard))


_FLOATS = ("float16", "bfloat16", "float32", "float64")

OPERATOR = PredicateOperator(
    name="IsInf",
    family="classification",
    summary="which elements of the input are +inf or -inf, of the signs asked for (ONNX's detect_positive and "
    "detect_negative; DirectML's InfinityMode); ONNX: bool; DirectML: 1 or 0",
    inputs=("X",),
    attributes=(
        PredicateAttribute(
            "detect_positive", "ONNX: whether +inf maps to true (1, the default) or to false (0)", "onnx", (0, 1)
        ),
        PredicateAttribute(
            "detect_negative", "ONNX: whether -inf maps to true (1, the default) or to false (0)", "onnx", (0, 1)
        ),
        PredicateAttribute(
            "infinity_mode",
            "DirectML's InfinityMode: which infinities give 1 (EITHER = 0, the default here; POSITIVE = 1; NEGATIVE "
            "= 2)",
            "directml",
            (EITHER, POSITIVE, NEGATIVE),
            value_names={"EITHER": EITHER, "POSITIVE": POSITIVE, "NEGATIVE": NEGATIVE},
            aliases=("InfinityMode",),
        ),
    ),
    standards=(
        PredicateStandard(
            key="onnx",
            op_name="IsInf",
            document=ONNX_DOC.format("IsInf"),
            formula_text="Y = (X == +inf and detect_positive) or (X == -inf and detect_negative)",
            support=(Support("10", ("float32", "float64")), Support("20", _FLOATS + FLOAT8_ONNX)),
            attribute_names={"detect_positive": "detect_positive", "detect_negative": "detect_negative"},
            output_type="bool",
            output_types=("bool",),
            defaults={"detect_positive": 1, "detect_negative": 1},
            notes="T2 is tensor(bool). IsInf-20 adds float16, bfloat16 and the float8 types (opcert checks float16 "
            "and bfloat16; it has no format for the float8 types). detect_positive = detect_negative = 0 is valid: "
            "every output false.",
        ),
        PredicateStandard(
            key="directml",
            op_name="DML_ELEMENT_WISE_IS_INFINITY",
            document=DML_ELEMENT_WISE_DOC.format("is_infinity"),
            formula_text="f(x) = isinf(x) && ((x > 0 && InfinityMode == POSITIVE) || (x < 0 && InfinityMode == "
            "NEGATIVE) || InfinityMode == EITHER), 1 for true, 0 for false",
            support=(Support("2.1", ("float16", "float32"), (4, 4)), Support("3.0", ("float16", "float32"), (1, 8))),
            attribute_names={"infinity_mode": "InfinityMode"},
            output_type="uint8",
            output_types=("uint8",),
            defaults={"infinity_mode": EITHER},
            notes="Introduced at DML_FEATURE_LEVEL_2_1. The output tensor is UINT8. InfinityMode has no default in "
            "the descriptor; opcert's is EITHER (0), ONNX's default reading.",
        ),
    ),
    primary="onnx",
    properties=(
        PredicateProperty(
            "exact",
            "exact",
            "the output is true (1) exactly where the input is an infinity of a sign asked for: +inf where "
            "detect_positive (POSITIVE, EITHER), -inf where detect_negative (NEGATIVE, EITHER); false at every NaN",
        ),
        PredicateProperty(
            "output_type",
            "output_type",
            "the output is of the standard's type (ONNX: bool; DirectML: UINT8 holding "
            "only 0 and 1) and of the input's shape",
        ),  # fmt: skip
        PredicateProperty(
            "layout",
            "layout",
            "the same outputs for the inputs as one flat array, reversed, as strided and "
            "negatively strided views, and in a 2-D shape",
        ),  # fmt: skip
    ),
    reference_fn=reference,
    implementation_fn=implementation,
    library_function=library_function,
)
