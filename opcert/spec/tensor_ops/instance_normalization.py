"""InstanceNormalization: ONNX InstanceNormalization-6 (and 22), DirectML's DML_MEAN_VARIANCE_NORMALIZATION
with CrossChannel FALSE; each sample's channel normalized over its spatial axes to mean 0 and variance 1 (scale
1, B 0)."""

from opcert.spec.declarations import DML_FLOATS, FLOATS_ONNX, FLOATS_ONNX_OLD, ONNX_DOC
from opcert.spec.model import Support
from opcert.spec.tensor import TensorOperator, TensorStandard
from opcert.spec.tensor_declarations import (
    SPATIAL,
    deviations,
    epsilon_attribute,
    standardized,
    standardized_operator,
)

# the standards' x - mean (opcert's and the reference's forms: standardized_operator)
_, d, _, _ = deviations()


OPERATOR = TensorOperator(
    name="InstanceNormalization",
    summary="(x_i - mean) / sqrt(variance + epsilon) over the spatial axes of each sample's channel",
    family="normalization",
    standards=(
        TensorStandard(
            "onnx",
            "InstanceNormalization",
            ONNX_DOC.format("InstanceNormalization"),
            "y = scale * (x - mean) / sqrt(variance + epsilon) + B, where mean and variance are computed per "
            "instance per channel",
            standardized(d),
            SPATIAL,
            (Support("6", FLOATS_ONNX_OLD), Support("22", FLOATS_ONNX)),
            versions=("6", "22"),
            defaults={"epsilon": 1e-5},
            attribute_names={"epsilon": "epsilon"},
            notes="scale is 1 and B is 0 (the targets are given a scale of ones and a B of zeros, one per "
            "channel); the variance is the population variance (divided by n), as ONNX's reference computes it",
        ),
        TensorStandard(
            "directml",
            "DML_MEAN_VARIANCE_NORMALIZATION_OPERATOR_DESC (CrossChannel FALSE, NormalizeVariance TRUE)",
            "https://learn.microsoft.com/windows/win32/api/directml/ns-directml-dml_mean_variance_normalization_"
            "operator_desc",
            "Output = FusedActivation(Scale * ((Input - Mean) / sqrt(Variance + Epsilon)) + Bias); CrossChannel "
            "FALSE: the mean and variance over the axes {Height, Width}, each channel on its own",
            standardized(d),
            SPATIAL,
            (Support("1.0", DML_FLOATS, (4, 4)),),
            defaults={"epsilon": 1e-5},
            attribute_names={"epsilon": "Epsilon"},
            notes="DirectML's plain mean-variance normalization (feature level 1.0, tensors { BatchCount, "
            "ChannelCount, Height, Width }) with CrossChannel FALSE is InstanceNormalization's formula over the same "
            "rows; no Scale or Bias tensor (1 and 0), no fused activation. Epsilon has no default in DirectML: "
            "opcert takes ONNX's 1e-5 where none is given. CrossChannel TRUE is LayerNormalization from axis 1 "
            "(--standard onnx --axis 1), NormalizeVariance FALSE a centering, not measured",
        ),
    ),
    primary="onnx",
    attributes=(epsilon_attribute("the variance"),),
    **standardized_operator(),
)
