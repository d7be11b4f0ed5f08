"""What the tensor operators' declarations share: axis rules per standard version, support tables, documents."""

import numpy as np

from opcert.expr import attr, eq, exp, fma, lift, rowmax, rowsum, select, sqrt, var
from opcert.expr.numpy_eval import depth
from opcert.spec.declarations import DML_DOC, DML_FLOATS, DML_LEVELS_1_0, FLOATS_ONNX, FLOATS_ONNX_OLD, ONNX_DOC
from opcert.spec.model import Attribute, AttributeDomain, Support
from opcert.spec.tensor import AxisRule, RowProperty, TensorStandard

x = var("x")


def shifted():
    """(t, e): x - rowmax(x) as t + e exactly in binary64 (Knuth's TwoSum; e = 0 over the reals, where the
    expressions are the definition), and exp(x - rowmax(x)) as exp(t) (1 + e) with one fused rounding. The
    rounding of x - max cost binary64 Softmax |x - max| / 2 ULPs (512 ULPs at |x| ~ 300), measured."""
    m = rowmax(x)
    t = x - m
    back = t - x
    e = (x - (t - back)) + (-m - back)
    et = exp(t)
    return t, e, fma(et, e, et)


ONNX_1 = AxisRule(
    "coerce-2d",
    default=1,
    negative=False,
    text="coerced to 2-D at axis (default 1): the row is every axis from axis on, flattened; the "
    "opset 1 document gives no range for axis: opcert takes 0 to rank - 1",
)
ONNX_11 = AxisRule(
    "coerce-2d",
    default=1,
    negative=True,
    text="coerced to 2-D at axis (default 1): the row is every axis from axis on, flattened; axis in -rank to rank - 1",
)
ONNX_13 = AxisRule("single", default=-1, negative=True, text="the one axis `axis` (default -1), in -rank to rank - 1")
DML_LAST = AxisRule(
    "last",
    text="the last dimension; the tensor's effective rank (its dimension count without "
    "leading sizes of 1) is at most 2",
)
DML_AXES = AxisRule(
    "list",
    negative=False,
    text="the Axes array (AxisCount of them, distinct, in 0 to DimensionCount - 1), flattened in increasing order",
)
DML_5_1 = (Support("5.1", DML_FLOATS, (1, 8)),)


def standards(onnx_name: str, dml_name: str, formula_text: str, formula, dml_text: str) -> tuple:
    """ONNX opsets 1, 11 and 13, DirectML's plain descriptor and its `1` form, of one formula over a row."""
    doc = ONNX_DOC.format(onnx_name)
    dml = dml_name.lower()
    return (
        TensorStandard(
            "onnx-1", onnx_name, doc, formula_text, formula, ONNX_1, (Support("1", FLOATS_ONNX_OLD),), versions=("1",)
        ),
        TensorStandard(
            "onnx-11",
            onnx_name,
            doc,
            formula_text,
            formula,
            ONNX_11,
            (Support("11", FLOATS_ONNX_OLD),),
            versions=("11",),
        ),
        TensorStandard(
            "onnx", onnx_name, doc, formula_text, formula, ONNX_13, (Support("13", FLOATS_ONNX),), versions=("13",)
        ),
        TensorStandard(
            "directml", f"DML_ACTIVATION_{dml_name}", DML_DOC.format(dml), dml_text, formula, DML_LAST, DML_LEVELS_1_0
        ),
        TensorStandard(
            "directml-1",
            f"DML_ACTIVATION_{dml_name}1",
            f"https://learn.microsoft.com/windows/ai/directml/api/ns-directml-dml_activation_{dml}1_operator_desc",
            dml_text,
            formula,
            DML_AXES,
            DML_5_1,
        ),
    )


NAN_ROW = RowProperty("nan", "nan_row", "a row holding a NaN gives NaN at every element of the row")
NONFINITE = RowProperty(
    "nonfinite",
    "nonfinite_row",
    "a row holding a NaN or an infinite entry gives, bit for bit, what the standard's formula gives in IEEE "
    "arithmetic (NaN where it is NaN, +-0 where it is +-0)",
)
INFINITE = RowProperty(
    "infinite",
    "infinite_entries",
    "an entry of +-inf is +-M for one M, in the limit M -> inf: -inf entries drop out, +inf "
    "entries share the row, a row of -inf only is a row of equal entries",
)
PERMUTATION = RowProperty(
    "permutation", "permutation", "permuting a row permutes its outputs the same way (Hardmax: on rows without ties)"
)
SHIFT = RowProperty(
    "shift",
    "shift_invariance",
    "adding one constant to every element of a row leaves the "
    "outputs unchanged (exactly in the reals; a kernel within its "
    "stated bound)",
)
SCALING = RowProperty(
    "scaling",
    "scale_invariance",
    "multiplying a row by a constant c > 0 leaves the outputs unchanged where epsilon = 0 (exactly in the reals; a "
    "kernel within its stated bound)",
    requires=(("epsilon", 0.0),),
)
LAYOUT = RowProperty(
    "layout",
    "row_layout",
    "a row's outputs depend on that row alone: not on the number of rows in the call, the row's "
    "place among them, the reduction axis's place in the shape, or the thread count",
)


# the normalizations' (ONNX LayerNormalization-17, RMSNormalization-23): the trailing axes from `axis`
ONNX_TRAILING = AxisRule(
    "coerce-2d",
    default=-1,
    negative=True,
    text="normalized over the axes from axis (default -1) to the last, flattened; axis in -rank to rank - 1",
)
# InstanceNormalization's: the spatial axes of an (N, C, D1, ..., Dk) tensor
SPATIAL = AxisRule(
    "spatial",
    negative=False,
    text="the spatial axes 2 to rank - 1 of an (N, C, D1, ..., Dk) tensor (rank 3 or more), flattened: one row per "
    "sample and channel",
)
# ONNX Runtime's own kernels for the normalizations (its contrib operators: not ONNX's standard, defined by its docs)
ORT_CONTRIB_DOC = "https://github.com/microsoft/onnxruntime/blob/main/docs/ContribOperators.md#{}"
ORT_LAST = AxisRule(
    "last",
    text="the last dimension (ONNX Runtime's (batch_size, sequence_length, hidden_size) input: other shapes are "
    "given to it as (1, rows, hidden_size))",
)
# |y_i| <= sqrt(n - 1): a row's deviations from its mean, normalized (LayerNormalization, MeanVarianceNormalization)
DEVIATION_BOUND = RowProperty(
    "bound",
    "row_bound",
    "|y_i - B| <= |scale| sqrt(n - 1) in a row of n (Cauchy-Schwarz: the deviations sum to 0; scale 1 and B 0 "
    "where the standard has none)",
    bound_less=1,
)


# a row standardized to mean 0 and variance var / (var + epsilon) (LayerNormalization, InstanceNormalization)
STANDARDIZED_MOMENTS = RowProperty(
    "moments",
    "moments",
    "the outputs of a row have mean B and mean square about B of scale^2 var / (var + epsilon) <= scale^2 (scale 1 "
    "and B 0 where the standard has none; a kernel's outputs, each within e ULPs: within e 2^(1-p) of it, relative "
    "to the row's magnitudes)",
    mean_zero=True,
)


def deviations():
    """(n, d, corrected, shifted): a row's length and each element's deviation from the row's mean in three forms,
    equal over the reals. d is the standards' x - mean. corrected is opcert's implementation in binary64, the
    mean by the corrected two-pass algorithm (Chan, Golub and LeVeque): m_hi, then the mean of x - m_hi, which is
    0 over the reals and corrects m_hi's rounding; a deviation next to the mean is then x - m_hi exactly
    (Sterbenz) less a small correction, a few binary64 ULPs of itself (without the correction an element next
    to the mean of a row of 4,096 was 7,767 binary64 ULPs off; with the row maximum subtracted first, 776 in a
    row of 8: x - max rounds at the scale of the row). shifted is the reference's fast path in balls: the row
    maximum subtracted first, exact where the row's values are within a factor 2 of it (Sterbenz), where the
    mean cancels: [40000, 40001, 40002, 40003] as [-3, -2, -1, 0], each ball of radius 0."""
    n = rowsum(lift(1))
    m_hi = rowsum(x) / n
    c = x - m_hi
    t = x - rowmax(x)
    return n, x - rowsum(x) / n, c - rowsum(c) / n, t - rowsum(t) / n


def per_row(e):
    """A reduction's expression (TensorOperator.reduces): e, a value of the whole row, at every element of the
    row. x == x selects it at a NaN entry too (both branches are e), and gives the value the row's shape in every
    interpreter, as an element-wise term does."""
    return select(eq(x, x), e, e)


# the ONNX reductions' axes (ReduceSum's family, opset 18: an `axes` input): any distinct axes in -rank to rank - 1,
# every axis where none are given (noop_with_empty_axes = 0)
ONNX_REDUCE_AXES = AxisRule(
    "list",
    negative=True,
    default_axes="all",
    text="the axes input (distinct, in -rank to rank - 1), flattened in increasing order; every axis where none "
    "are given (noop_with_empty_axes = 0); the output keeps each reduced axis with size 1 (keepdims = 1)",
)
# DirectML's DML_REDUCE_OPERATOR_DESC: Axes (AxisCount of them), an output tensor with each reduced axis of size 1
DML_REDUCE_AXES = AxisRule(
    "list",
    negative=False,
    text="the Axes array (AxisCount of them, distinct, in 0 to DimensionCount - 1), flattened in increasing "
    "order; the output tensor has each reduced axis of size 1",
)
# the reductions before opset 18 (1, 11, 13): `axes` an attribute, the same values and rule
ONNX_REDUCE_AXES_ATTRIBUTE = AxisRule(
    "list",
    negative=True,
    default_axes="all",
    text="the axes attribute (distinct, in -rank to rank - 1), flattened in increasing order; every axis where none "
    "are given; the output keeps each reduced axis with size 1 (keepdims = 1); the opset 1 document gives no range "
    "for axes: opcert takes -rank to rank - 1, as opsets 11 and 13 say",
)
DML_REDUCE_LEVELS = (Support("1.0", DML_FLOATS, (4, 4)), Support("3.0", DML_FLOATS, (1, 8)))
DML_REDUCE_DOC = "https://learn.microsoft.com/windows/win32/api/directml/ns-directml-dml_reduce_operator_desc"


def reduction_standards(onnx_name: str, dml_function: str, formula_text: str, formula, notes: str = "") -> tuple:
    """An ONNX reduction (opset 18: the axes input, keepdims = 1; opsets 1, 11 and 13: the axes attribute) and
    DirectML's DML_REDUCE_OPERATOR_DESC with that Function, of one formula over the reduced elements."""
    return (
        TensorStandard(
            "onnx",
            onnx_name,
            ONNX_DOC.format(onnx_name),
            formula_text,
            formula,
            ONNX_REDUCE_AXES,
            (Support("18", FLOATS_ONNX),),
            versions=("18",),
            in_place=False,  # one output per row: no tensor of the input's shape to write over
            notes=notes,
        ),
        TensorStandard(
            "onnx-13",
            onnx_name,
            ONNX_DOC.format(onnx_name),
            formula_text,
            formula,
            ONNX_REDUCE_AXES_ATTRIBUTE,
            (Support("1", FLOATS_ONNX_OLD), Support("13", FLOATS_ONNX)),
            versions=("1", "11", "13"),
            in_place=False,
            notes=(notes + "; " if notes else "")
            + "opsets 1, 11 and 13 take axes as an attribute (opset 18 as an input): the same rows; a runtime is "
            "given opset 13's model",
        ),
        TensorStandard(
            "directml",
            f"DML_REDUCE_OPERATOR_DESC (Function {dml_function})",
            DML_REDUCE_DOC,
            formula_text,
            formula,
            DML_REDUCE_AXES,
            DML_REDUCE_LEVELS,
            in_place=False,
        ),
    )


# a reduction's (one output per row): the row in any order gives the same output
PERMUTATION_INVARIANT = RowProperty(
    "permutation", "permutation", "permuting a row leaves its one output unchanged (a reduction)"
)
# the row's maximum and at most log(n) above it (LogSumExp: the sum of the exponentials of x - max is in [1, n])
MAX_LOG_BOUNDS = RowProperty(
    "max_log_bounds",
    "max_log_bounds",
    "max(x) <= y <= max(x) + log(n) for a row of n (the sum of exp(x_j - max) is between 1 and n)",
)


def standardized(dev):
    """A row's deviations from its mean (one of deviations()' forms) divided by sqrt(variance + epsilon):
    LayerNormalization's, InstanceNormalization's and DirectML's MEAN_VARIANCE_NORMALIZATION1's form."""
    return dev / sqrt(rowsum(dev * dev) / rowsum(lift(1)) + attr("epsilon"))


# The normalizations' Scale and B (bias) tensors, each checked as one binary32 value at every element (their
# standards' tensors filled with it): the affine step after the normalization. Attributes with `input`: a runtime
# is given them as its tensors, a Python kernel as keywords, a C kernel after epsilon in attrs[].
SCALE = Attribute(
    "scale",
    "each normalized value is multiplied by it (the standard's Scale tensor, every element this value; 1 where none "
    "is given)",
    aliases=("Scale", "gamma", "ScaleTensor"),
    input=True,
)
BIAS = Attribute(
    "B",
    "added to each scaled value (the standard's B or bias tensor, every element this value; 0 where none is given)",
    aliases=("bias", "beta", "BiasTensor"),
    input=True,
)
# where the standard's tensors are absent: what the formula then is (a kernel without those keywords computes it)
AFFINE_IDENTITY = {"scale": 1.0, "B": 0.0}


def affine(e, bias: bool = True, fused: bool = False):
    """e scaled, and shifted by B (bias=True): the standards' Y = Normalized * Scale + B. fused: as one fma (opcert's
    implementation and the reference's form: one rounding in binary64, an exact ball); the standards' formula is
    the product and the sum."""
    s = attr("scale")
    if not bias:
        return e * s
    return fma(e, s, attr("B")) if fused else e * s + attr("B")


def epsilon_attribute(under: str):
    """A normalization's epsilon: a binary32 value >= 0, added to `under` under the square root."""
    return Attribute(
        "epsilon",
        f"added to {under} under the square root",
        AttributeDomain(lower=0.0, description="a finite binary32 value >= 0"),
    )


def deviation_bound(rows: np.ndarray) -> np.ndarray:
    """The binary64 implementation's error at each element, in binary64 ULPs of its value: the correction's
    error is (depth + 3) u max|c| in absolute terms (depth: of the pairwise sum), so relative to a deviation
    c_i it is (depth + 3) max|c| / |c_i| ULPs, with the division, square root and variance's (depth / 2 + 4)
    besides; 4x that for the margin, the bound being estimated from binary64's own deviations."""
    k = depth(rows.shape[1]) + 4
    if rows.shape[1] == 0:
        return np.zeros(rows.shape)
    with np.errstate(all="ignore"):
        c = np.abs(rows - rows.mean(axis=1, keepdims=True))
        ratio = np.where(c > 0, c.max(axis=1, keepdims=True, initial=0.0) / c, np.inf)
    return 4 * (k * np.minimum(ratio, 2.0**40) + k)


# the properties of such a row: shift, scaling (epsilon 0) and permutation, the bound sqrt(n - 1), its moments, the
# rule for NaN and infinite entries, layout
STANDARDIZED = (SHIFT, SCALING, PERMUTATION, DEVIATION_BOUND, STANDARDIZED_MOMENTS, NONFINITE, LAYOUT)


def standardized_operator() -> dict:
    """A TensorOperator's fields for a row standardized with epsilon under the square root, then scaled and shifted
    (LayerNormalization, InstanceNormalization, GroupNormalization): opcert's implementation (the corrected
    two-pass deviations), the reference's form (the row maximum out), the rule for NaN and infinite entries, the
    hard rows, the error bound and the properties; in binary64 the implementation is the reference."""
    _, _, corrected, shifted = deviations()
    return {
        "implementation": affine(standardized(corrected), fused=True),
        "reference_form": affine(standardized(shifted), fused=True),
        "absent": 0,
        "nonfinite": "formula",
        "hard_cases": "moments",
        "error_bound": deviation_bound,
        "reference_in_binary64": True,
        "properties": STANDARDIZED,
        "budget64": lambda n: 0.5,  # the reference (reference_in_binary64)
    }


def ort_skip_standard(
    key: str, kernel: str, formula_text: str, formula, fused: str, affine_names=None
) -> TensorStandard:
    """ONNX Runtime's com.microsoft Skip(Simplified)LayerNormalization as a standard of the operator it fuses: the
    last axis, a skip of zeros given, its schema's epsilon default (1e-12); affine_names: opcert's scale and B as
    its gamma and beta."""
    affine_names = affine_names or {}
    return TensorStandard(
        key,
        f"com.microsoft {kernel}",
        ORT_CONTRIB_DOC.format(f"com.microsoft.{kernel}"),
        formula_text,
        formula,
        ORT_LAST,
        (Support("1", ("float16", "bfloat16", "float32")),),
        versions=("1",),
        defaults={"epsilon": 1e-12, **{k: AFFINE_IDENTITY[k] for k in affine_names}},
        attribute_names={"epsilon": "epsilon", **affine_names},
        in_place=False,
        notes="ONNX Runtime's own operator (domain com.microsoft, version 1; its schema's epsilon default is "
        f"1e-12): the kernel its transformer optimizer fuses a residual Add and {fused} into. Only ONNX Runtime runs "
        "it",
    )


__all__ = [
    "DML_AXES",
    "DML_REDUCE_AXES",
    "MAX_LOG_BOUNDS",
    "ONNX_REDUCE_AXES",
    "ONNX_REDUCE_AXES_ATTRIBUTE",
    "per_row",
    "reduction_standards",
    "DML_LAST",
    "INFINITE",
    "LAYOUT",
    "NAN_ROW",
    "NONFINITE",
    "ONNX_1",
    "ONNX_11",
    "ONNX_13",
    "PERMUTATION",
    "PERMUTATION_INVARIANT",
    "SHIFT",
    "SCALING",
    "STANDARDIZED",
    "STANDARDIZED_MOMENTS",
    "SPATIAL",
    "RowProperty",
    "DEVIATION_BOUND",
    "ONNX_TRAILING",
    "ORT_CONTRIB_DOC",
    "ORT_LAST",
    "deviation_bound",
    "deviations",
    "epsilon_attribute",
    "shifted",
    "standardized",
    "standardized_operator",
    "ort_skip_standard",
    "standards",
    "x",
    "AFFINE_IDENTITY",
    "BIAS",
    "SCALE",
    "affine",
]
