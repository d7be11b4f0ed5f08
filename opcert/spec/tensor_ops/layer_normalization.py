"""LayerNormalization: ONNX LayerNormalization-17, each row normalized to mean 0 and variance 1, then scaled by
Scale and shifted by B (each one binary32 value over the row: 1 and 0 where none is given)."""

from opcert.spec.declarations import FLOATS_ONNX, ONNX_DOC
from opcert.spec.model import Support
from opcert.spec.tensor import TensorOperator, TensorStandard
from opcert.spec.tensor_declarations import (
    AFFINE_IDENTITY,
    BIAS,
    ONNX_TRAILING,
    SCALE,
    affine,
    deviations,
    epsilon_attribute,
    ort_skip_standard,
    standardized,
    standardized_operator,
)

# the standards' x - mean (opcert's and the reference's forms: standardized_operator)
_, d, _, _ = deviations()


OPERATOR = TensorOperator(
    name="LayerNormalization",
    summary="scale (x_i - mean) / sqrt(variance + epsilon) + B over a row (the trailing axes from axis)",
    family="normalization",
    standards=(
        TensorStandard(
            "onnx",
            "LayerNormalization",
            ONNX_DOC.format("LayerNormalization"),
            "Mean = ReduceMean<axes=normalized_axes>(X); D = Sub(X, Mean); DD = Mul(D, D); "
            "Var = ReduceMean<axes=normalized_axes>(DD); VarEps = Add(Var, epsilon); StdDev = Sqrt(VarEps); "
            "Normalized = Div(D, StdDev); Y = Mul(Normalized, Scale) + B",
            affine(standardized(d)),
            ONNX_TRAILING,
            (Support("17", FLOATS_ONNX),),
            versions=("17",),
            defaults={"epsilon": 1e-5, **AFFINE_IDENTITY},
            attribute_names={"epsilon": "epsilon", "scale": "Scale", "B": "B"},
            notes="Scale and B are checked as one binary32 value each, every element of the tensors (the "
            "normalized shape) that value: 1 and 0 (B absent) where none is given. stash_type is the "
            "standard's default, 1 (Mean and InvStdDev in float32): the exact reference does not depend on it; "
            "a kernel that computes in a narrower type shows it in its errors",
        ),
        ort_skip_standard(
            "ort-skip",
            "SkipLayerNormalization",
            "output = LayerNormalization(input + skip + bias) * gamma + beta over the last axis (ONNX Runtime's "
            "fused kernel); here skip = 0 and no bias, gamma = scale and beta = B",
            affine(standardized(d)),
            "a LayerNormalization",
            {"scale": "gamma", "B": "beta"},
        ),
    ),
    primary="onnx",
    attributes=(epsilon_attribute("the variance"), SCALE, BIAS),
    **standardized_operator(),
)
