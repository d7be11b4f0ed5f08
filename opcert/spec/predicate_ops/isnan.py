"""IsNaN: which elements of the input are NaN. ONNX's IsNaN-9 (float16, float, double), IsNaN-13 (bfloat16 added),
IsNaN-20 (the float8 types added), output tensor(bool); DirectML's DML_ELEMENT_WISE_IS_NAN, introduced at feature
level 2.0 (FLOAT32 and FLOAT16 in, UINT32 or UINT8 out, 4 dimensions; 1 to 8 from level 3.0): "returns 1 if the
input is NaN (as defined by IEEE-754), and 0 otherwise".

IEEE 754 makes every pattern whose exponent field is all ones and whose significand is not zero a NaN: quiet (the
significand's top bit set) and signalling alike, of either sign, with any payload. Neither standard leaves a
pattern out, so the operator is exact or wrong on each input: there is no rounding to measure."""

import numpy as np

from opcert.formats import format_of
from opcert.spec.declarations import ONNX_DOC
from opcert.spec.elementwise import DML_ELEMENT_WISE_DOC
from opcert.spec.model import Support
from opcert.spec.predicate import FLOAT8_ONNX, PredicateOperator, PredicateProperty, PredicateStandard, nan_bits


def reference(x, attrs: dict, standard: str) -> np.ndarray:
    """IEEE 754's isNaN, as NumPy computes it on the input's own dtype (ml_dtypes' for bfloat16)."""
    with np.errstate(invalid="ignore"):  # ml_dtypes' NaNs raise NumPy's invalid flag
        return np.asarray(np.isnan(x), dtype=bool)


def implementation(x, attrs: dict, standard: str) -> np.ndarray:
    """opcert's own: the exponent field all ones and the significand not zero (the bits, no float arithmetic)."""
    return nan_bits(x, format_of(np.asarray(x)))


def library_function(attrs: dict, standard: str) -> str | None:
    return "isnan"


OPERATOR = PredicateOperator(
    name="IsNaN",
    family="classification",
    summary="which elements of the input are NaN (IEEE 754's isNaN: quiet and signalling, either sign, any "
    "payload); ONNX: bool; DirectML: 1 or 0",
    inputs=("X",),
    attributes=(),
    standards=(
        PredicateStandard(
            key="onnx",
            op_name="IsNaN",
            document=ONNX_DOC.format("IsNaN"),
            formula_text="Y = isnan(X): true where X is NaN, false elsewhere",
            support=(
                Support("9", ("float16", "float32", "float64")),
                Support("13", ("float16", "bfloat16", "float32", "float64")),
                Support("20", ("float16", "bfloat16", "float32", "float64") + FLOAT8_ONNX),
            ),
            attribute_names={},
            output_type="bool",
            output_types=("bool",),
            notes="T2 is tensor(bool). IsNaN-13 adds bfloat16, IsNaN-20 the float8 types (which opcert does not "
            "check: it has no format for them).",
        ),
        PredicateStandard(
            key="directml",
            op_name="DML_ELEMENT_WISE_IS_NAN",
            document=DML_ELEMENT_WISE_DOC.format("is_nan"),
            formula_text="f(x) = 1 if x is NaN (as defined by IEEE-754), 0 otherwise",
            support=(Support("2.0", ("float16", "float32"), (4, 4)), Support("3.0", ("float16", "float32"), (1, 8))),
            attribute_names={},
            output_type="uint8",
            output_types=("uint8", "uint32"),
            notes="Introduced at DML_FEATURE_LEVEL_2_0. The output tensor is UINT32 or UINT8 (opcert's implementation "
            "writes UINT8); it holds 1 or 0.",
        ),
    ),
    primary="onnx",
    properties=(
        PredicateProperty(
            "exact",
            "exact",
            "the output is true (1) exactly where the input is a NaN: every pattern whose exponent field is all "
            "ones and whose significand is not zero, quiet or signalling, either sign, any payload",
        ),
        PredicateProperty(
            "output_type",
            "output_type",
            "the output is of the standard's type (ONNX: bool; DirectML: UINT8 or "
            "UINT32 holding only 0 and 1) and of the input's shape",
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
