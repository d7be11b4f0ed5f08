"""RMSNormalization: ONNX RMSNormalization-23, each row divided by its root mean square, then scaled (scale one
binary32 value over the row: 1 where none is given)."""

from opcert.expr import attr, lift, rowsum, sqrt
from opcert.expr.numpy_eval import depth
from opcert.spec.declarations import FLOATS_ONNX, ONNX_DOC
from opcert.spec.model import Support
from opcert.spec.tensor import TensorOperator, TensorStandard
from opcert.spec.tensor_declarations import (
    LAYOUT,
    NONFINITE,
    ONNX_TRAILING,
    ORT_CONTRIB_DOC,
    PERMUTATION,
    SCALE,
    SCALING,
    RowProperty,
    affine,
    epsilon_attribute,
    ort_skip_standard,
    x,
)

epsilon = attr("epsilon")
n = rowsum(lift(1))  # the row's length
# the standards' Normalized * Scale; opcert's implementation and the reference's form alike (one rounding of the
# product in binary64: no cancellation, so the relative bound below holds)
RMS = affine(x / sqrt(rowsum(x * x) / n + epsilon), bias=False)

OPERATOR = TensorOperator(
    name="RMSNormalization",
    summary="scale x_i / sqrt(mean(x^2) + epsilon) over a row (the trailing axes from axis)",
    family="normalization",
    standards=(
        TensorStandard(
            "onnx",
            "RMSNormalization",
            ONNX_DOC.format("RMSNormalization"),
            "XSquared = Mul(X, X); XSquaredMean = ReduceMean<axes=normalized_axes>(XSquared); "
            "MeanSquareEpsilon = Add(XSquaredMean, epsilon); RMS = Sqrt(MeanSquareEpsilon); "
            "Normalized = Div(X, RMS); Y = Mul(Normalized, Scale)",
            RMS,
            ONNX_TRAILING,
            (Support("23", FLOATS_ONNX),),
            versions=("23",),
            defaults={"epsilon": 1e-5, "scale": 1.0},
            attribute_names={"epsilon": "epsilon", "scale": "scale"},
            notes="scale is checked as one binary32 value, every element of the tensor (the normalized shape) that "
            "value: 1 where none is given (ONNX requires it). stash_type is the standard's default, 1 "
            "(float32): the exact reference does not depend on it",
        ),
        TensorStandard(
            "ort-simplified",
            "SimplifiedLayerNormalization",
            ORT_CONTRIB_DOC.format("SimplifiedLayerNormalization"),
            "Y = X / sqrt(mean(X^2 over the axes from axis) + epsilon) * scale (ONNX Runtime's kernel, in the ONNX "
            "domain at version 1); its scale tensor every element opcert's scale",
            RMS,
            ONNX_TRAILING,
            (Support("1", FLOATS_ONNX),),
            versions=("1",),
            defaults={"epsilon": 1e-5, "scale": 1.0},
            attribute_names={"epsilon": "epsilon", "scale": "scale"},
            notes="ONNX Runtime's own operator (registered in the ONNX domain at version 1, not an ONNX standard): "
            "the kernel its transformer optimizer fuses RMSNorm subgraphs into. Only ONNX "
            "Runtime runs it",
        ),
        ort_skip_standard(
            "ort-skip-simplified",
            "SkipSimplifiedLayerNormalization",
            "output = SimplifiedLayerNormalization(input + skip + bias) * gamma over the last axis (ONNX Runtime's "
            "fused kernel); here skip = 0 and no bias, gamma = scale",
            RMS,
            "an RMSNorm",
            {"scale": "gamma"},
        ),
    ),
    primary="onnx",
    implementation=RMS,
    reference_form=RMS,
    absent=0,
    attributes=(epsilon_attribute("the mean square"), SCALE),
    nonfinite="formula",
    hard_cases="moments",
    # no cancellation: the sum of squares, the division, the square root and the scale's product, (depth + 9) binary64
    # ULPs at most
    error_bound=lambda rows: 2.0 * (depth(rows.shape[1]) + 9),
    properties=(
        SCALING,
        PERMUTATION,
        RowProperty("bound", "row_bound", "|y_i| <= |scale| sqrt(n) in a row of n", bound_less=0),
        RowProperty(
            "moments",
            "moments",
            "the outputs of a row have mean square scale^2 mean(x^2) / (mean(x^2) + epsilon) <= scale^2 (a kernel's "
            "outputs, each within e ULPs: within e 2^(1-p) of it)",
        ),
        NONFINITE,
        LAYOUT,
    ),
    budget64=lambda n: 5 + depth(n),
)
