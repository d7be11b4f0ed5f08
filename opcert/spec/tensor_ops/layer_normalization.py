"""LayerNormalization: ONNX LayerNormalization-17, each row normalized to mean 0 and variance 1 (Scale 1, B 0)."""

from opcert.expr import attr, lift, rowmax, rowsum, sqrt
from opcert.spec.declarations import FLOATS_ONNX, ONNX_DOC
from opcert.spec.model import Support
from opcert.spec.tensor import TensorOperator, TensorStandard
from opcert.spec.tensor_declarations import (
    DEVIATION_BOUND,
    LAYOUT,
    NONFINITE,
    ONNX_TRAILING,
    PERMUTATION,
    SHIFT,
    RowProperty,
    deviation_bound,
    epsilon_attribute,
    x,
)

epsilon = attr("epsilon")
n = rowsum(lift(1))  # the row's length
d = x - rowsum(x) / n

# opcert's implementation (binary64): the mean by the corrected two-pass algorithm (Chan, Golub and LeVeque),
# m_hi and then the mean of x - m_hi, which is 0 over the reals and corrects m_hi's rounding in binary64. A
# deviation next to the mean is then x - m_hi exactly (Sterbenz) less a small correction: a few binary64
# ULPs of itself. (Without the correction an element next to the mean of a row of 4,096 was 7,767 binary64
# ULPs off; with the row maximum subtracted first, 776 in a row of 8: x - max rounds at the scale of the row.)
m_hi = rowsum(x) / n
c = x - m_hi
dc = c - rowsum(c) / n
CORRECTED = dc / sqrt(rowsum(dc * dc) / n + epsilon)
# The reference's fast path (balls): the row maximum subtracted first, exact where the row's values are within
# a factor 2 of it (Sterbenz), where the mean cancels: [40000, 40001, 40002, 40003] as [-3, -2, -1, 0], each
# ball of radius 0. Over the reals all three forms are the standard's formula.
t = x - rowmax(x)
dt = t - rowsum(t) / n
SHIFTED = dt / sqrt(rowsum(dt * dt) / n + epsilon)


OPERATOR = TensorOperator(
    name="LayerNormalization",
    summary="(x_i - mean) / sqrt(variance + epsilon) over a row (the trailing axes from axis)",
    family="normalization",
    standards=(
        TensorStandard(
            "onnx",
            "LayerNormalization",
            ONNX_DOC.format("LayerNormalization"),
            "Mean = ReduceMean<axes=normalized_axes>(X); D = Sub(X, Mean); DD = Mul(D, D); "
            "Var = ReduceMean<axes=normalized_axes>(DD); VarEps = Add(Var, epsilon); StdDev = Sqrt(VarEps); "
            "Normalized = Div(D, StdDev); Y = Mul(Normalized, Scale) + B",
            d / sqrt(rowsum(d * d) / n + epsilon),
            ONNX_TRAILING,
            (Support("17", FLOATS_ONNX),),
            versions=("17",),
            defaults={"epsilon": 1e-5},
            attribute_names={"epsilon": "epsilon"},
            notes="Scale is 1 and B is absent (0): the targets are given a Scale of ones. stash_type is the "
            "standard's default, 1 (Mean and InvStdDev in float32): the exact reference does not depend on it; "
            "a kernel that computes in a narrower type shows it in its errors",
        ),
    ),
    primary="onnx",
    implementation=CORRECTED,
    reference_form=SHIFTED,
    absent=0,
    attributes=(epsilon_attribute("the variance"),),
    nonfinite="formula",
    hard_cases="moments",
    error_bound=deviation_bound,
    reference_in_binary64=True,
    properties=(
        SHIFT,
        PERMUTATION,
        DEVIATION_BOUND,
        RowProperty(
            "moments",
            "moments",
            "the outputs of a row have mean 0 and mean square var / (var + epsilon) <= 1 (a kernel's outputs, "
            "each within e ULPs: within e 2^(1-p) of it, relative to the row's magnitudes)",
            mean_zero=True,
        ),
        NONFINITE,
        LAYOUT,
    ),
    budget64=lambda n: 0.5,  # the reference (reference_in_binary64)
)
