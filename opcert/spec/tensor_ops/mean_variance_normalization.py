"""MeanVarianceNormalization: ONNX MeanVarianceNormalization-13, each row (the `axes`, default 0, 2, 3) normalized
by its mean and standard deviation, with ONNX's function body's epsilon of 1e-9 added after the square root; and
DirectML's MEAN_VARIANCE_NORMALIZATION1, with its Epsilon under the square root."""

from dataclasses import replace
from fractions import Fraction

import numpy as np

from opcert.expr import lift, rowsum, sqrt
from opcert.spec.declarations import DML_FLOATS, FLOATS_ONNX, ONNX_DOC
from opcert.spec.model import Support
from opcert.spec.tensor import AxisRule, TensorOperator, TensorStandard
from opcert.spec.tensor_declarations import (
    AFFINE_IDENTITY,
    BIAS,
    DEVIATION_BOUND,
    DML_AXES,
    LAYOUT,
    NONFINITE,
    PERMUTATION,
    SCALE,
    SCALING,
    SHIFT,
    RowProperty,
    affine,
    deviation_bound,
    deviations,
    epsilon_attribute,
    standardized,
)

# the function body's Epsilon, a float constant: 1e-9 rounded to binary32, exactly
EPSILON = lift(Fraction(float(np.float32(1e-9))))
# opcert's implementation (corrected) and the reference's fast path (shifted): as LayerNormalization's
n, d, corrected, shifted = deviations()


def normalized(dev):
    return dev / (sqrt(rowsum(dev * dev) / n) + EPSILON)


OPERATOR = TensorOperator(
    name="MeanVarianceNormalization",
    summary="(x_i - mean) / (sqrt(variance) + 1e-9) over the axes `axes` (default 0, 2, 3)",
    family="normalization",
    standards=(
        TensorStandard(
            "onnx",
            "MeanVarianceNormalization",
            ONNX_DOC.format("MeanVarianceNormalization"),
            "X_RM = ReduceMean(X, axes); EX_squared = Pow(X_RM, 2); E_Xsquared = ReduceMean(Pow(X, 2), axes); "
            "Variance = Sub(E_Xsquared, EX_squared); STD = Sqrt(Variance); Processed_STD = Add(STD, Epsilon = "
            "1e-9); Y = Div(Sub(X, X_RM), Processed_STD)",
            normalized(d),
            AxisRule(
                "list",
                negative=True,
                default_axes=(0, 2, 3),
                text="the axes `axes` (default 0, 2, 3: a rank-4 tensor's batch and spatial axes), flattened in "
                "increasing order; each in -rank to rank - 1",
            ),
            (Support("13", FLOATS_ONNX),),
            versions=("13",),
            notes="The document's formula is (X - EX) / sqrt(E(X - EX)^2); its function body, which runtimes "
            "follow, adds 1e-9 after the square root (a row of equal values gives 0, not 0 / 0) and takes the "
            "variance as E[x^2] - E[x]^2, equal over the reals. opcert's reference is the function body's over "
            "the reals",
        ),
        TensorStandard(
            "directml-1",
            "DML_OPERATOR_MEAN_VARIANCE_NORMALIZATION1",
            "https://learn.microsoft.com/windows/win32/api/directml/"
            "ns-directml-dml_mean_variance_normalization1_operator_desc",
            "Output = FusedActivation(Scale * ((Input - Mean) / sqrt(Variance + Epsilon)) + Bias)",
            affine(standardized(d)),
            DML_AXES,
            (Support("2.1", DML_FLOATS, (4, 4)), Support("3.1", DML_FLOATS, (1, 8))),
            defaults={"epsilon": 1e-5, **AFFINE_IDENTITY},
            attribute_names={"epsilon": "Epsilon", "scale": "ScaleTensor", "B": "BiasTensor"},
            notes="NormalizeVariance TRUE (FALSE is Input - Mean, a centering, not measured here); ScaleTensor and "
            "BiasTensor, optional, are scale and B, one binary32 value each (absent: 1 and 0); no fused activation. Epsilon is a required field, 0.00001 recommended: opcert "
            "takes 1e-5 (binary32) where none is given. Introduced in DML_FEATURE_LEVEL_2_1 (4 dimensions), 1 to "
            "8 dimensions from 3_1",
            implementation=affine(standardized(corrected), fused=True),
            reference_form=affine(standardized(shifted), fused=True),
        ),
    ),
    primary="onnx",
    implementation=normalized(corrected),
    reference_form=normalized(shifted),
    absent=0,
    attributes=(
        epsilon_attribute("the variance (DirectML's form only)"),
        # DirectML's form only: ONNX's MeanVarianceNormalization has no Scale or B
        SCALE,
        BIAS,
    ),
    nonfinite="formula",
    hard_cases="moments",
    error_bound=deviation_bound,
    reference_in_binary64=True,
    properties=(
        SHIFT,
        # DirectML's form at Epsilon 0 (ONNX's adds its constant 1e-9 after the square root: not scale invariant)
        SCALING,
        PERMUTATION,
        # epsilon after the square root: z3 spends its whole budget on rows of 4 (`opcert prove
        # MeanVarianceNormalization` with longest 4 is unknown), so rows of 1 to 3, said in the method
        replace(DEVIATION_BOUND, longest=3),
        RowProperty(
            "moments",
            "moments",
            "the outputs of a row have mean 0 and mean square var / (sqrt(var) + 1e-9)^2 <= 1 (a kernel's outputs, "
            "each within e ULPs: within e 2^(1-p) of it)",
            mean_zero=True,
            longest=3,
        ),
        NONFINITE,
        LAYOUT,
    ),
    budget64=lambda n: 0.5,  # the reference (reference_in_binary64)
)
