"""LayerNormalization: ONNX LayerNormalization-17, each row normalized to mean 0 and variance 1 (Scale 1, B 0)."""

from opcert.spec.declarations import FLOATS_ONNX, ONNX_DOC
from opcert.spec.model import Support
from opcert.spec.tensor import TensorOperator, TensorStandard
from opcert.spec.tensor_declarations import (
    ONNX_TRAILING,
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
            standardized(d),
            ONNX_TRAILING,
            (Support("17", FLOATS_ONNX),),
            versions=("17",),
            defaults={"epsilon": 1e-5},
            attribute_names={"epsilon": "epsilon"},
            notes="Scale is 1 and B is absent (0): the targets are given a Scale of ones. stash_type is the "
            "standard's default, 1 (Mean and InvStdDev in float32): the exact reference does not depend on it; "
            "a kernel that computes in a narrower type shows it in its errors",
        ),
        ort_skip_standard(
            "ort-skip",
            "SkipLayerNormalization",
            "output = LayerNormalization(input + skip + bias) * gamma + beta over the last axis (ONNX Runtime's "
            "fused kernel); here skip = 0, no bias, gamma = 1, no beta",
            standardized(d),
            "a LayerNormalization",
        ),
    ),
    primary="onnx",
    attributes=(epsilon_attribute("the variance"),),
    **standardized_operator(),
)
