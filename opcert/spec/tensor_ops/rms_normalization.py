"""RMSNormalization: ONNX RMSNormalization-23, each row divided by its root mean square (Scale 1)."""

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
    RowProperty,
    epsilon_attribute,
    ort_skip_standard,
    x,
)

epsilon = attr("epsilon")
n = rowsum(lift(1))  # the row's length
RMS = x / sqrt(rowsum(x * x) / n + epsilon)

OPERATOR = TensorOperator(
    name="RMSNormalization",
    summary="x_i / sqrt(mean(x^2) + epsilon) over a row (the trailing axes from axis)",
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
            defaults={"epsilon": 1e-5},
            attribute_names={"epsilon": "epsilon"},
            notes="Scale is 1: the targets are given a Scale of ones. stash_type is the standard's default, 1 "
            "(float32): the exact reference does not depend on it",
        ),
        TensorStandard(
            "ort-simplified",
            "SimplifiedLayerNormalization",
            ORT_CONTRIB_DOC.format("SimplifiedLayerNormalization"),
            "Y = X / sqrt(mean(X^2 over the axes from axis) + epsilon) * scale (ONNX Runtime's kernel, in the ONNX "
            "domain at version 1); here scale = 1",
            RMS,
            ONNX_TRAILING,
            (Support("1", FLOATS_ONNX),),
            versions=("1",),
            defaults={"epsilon": 1e-5},
            attribute_names={"epsilon": "epsilon"},
            notes="ONNX Runtime's own operator (registered in the ONNX domain at version 1, not an ONNX standard): "
            "the kernel its transformer optimizer fuses RMSNorm subgraphs into. Only ONNX "
            "Runtime runs it",
        ),
        ort_skip_standard(
            "ort-skip-simplified",
            "SkipSimplifiedLayerNormalization",
            "output = SimplifiedLayerNormalization(input + skip + bias) * gamma over the last axis (ONNX Runtime's "
            "fused kernel); here skip = 0, no bias, gamma = 1",
            RMS,
            "an RMSNorm",
        ),
    ),
    primary="onnx",
    implementation=RMS,
    reference_form=RMS,
    absent=0,
    attributes=(epsilon_attribute("the mean square"),),
    nonfinite="formula",
    hard_cases="moments",
    # no cancellation: the sum of squares, the division and the square root, (depth + 8) binary64 ULPs at most
    error_bound=lambda rows: 2.0 * (depth(rows.shape[1]) + 8),
    properties=(
        PERMUTATION,
        RowProperty("bound", "row_bound", "|y_i| <= sqrt(n) in a row of n", bound_less=0),
        RowProperty(
            "moments",
            "moments",
            "the outputs of a row have mean square mean(x^2) / (mean(x^2) + epsilon) <= 1 (a kernel's outputs, "
            "each within e ULPs: within e 2^(1-p) of it)",
        ),
        NONFINITE,
        LAYOUT,
    ),
    budget64=lambda n: 4 + depth(n),
)
