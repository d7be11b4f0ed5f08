"""InstanceNormalization: ONNX InstanceNormalization-6 (and 22), DirectML's DML_MEAN_VARIANCE_NORMALIZATION
with CrossChannel FALSE; each sample's channel normalized over its spatial axes to mean 0 and variance 1, then scaled
and shifted (scale and B one binary32 value each: 1 and 0 where none is given)."""

from opcert.spec.declarations import DML_FLOATS, FLOATS_ONNX, FLOATS_ONNX_OLD, ONNX_DOC
from opcert.spec.model import Support
from opcert.spec.tensor import TensorOperator, TensorStandard
from opcert.spec.tensor_declarations import (
    AFFINE_IDENTITY,
    BIAS,
    SCALE,
    SPATIAL,
    affine,
    deviations,
    epsilon_attribute,
    standardized,
    standardized_operator,
)

# the standards' x - mean (opcert's and the reference's forms: standardized_operator)
_, d, _, _ = deviations()


OPERATOR = TensorOperator(
    name="InstanceNormalization",
    summary="scale (x_i - mean) / sqrt(variance + epsilon) + B over the spatial axes of each sample's channel",
    family="normalization",
    standards=(
        TensorStandard(
            "onnx",
            "InstanceNormalization",
            ONNX_DOC.format("InstanceNormalization"),
            "y = scale * (x - mean) / sqrt(variance + epsilon) + B, where mean and variance are computed per "
            "instance per channel",
            affine(standardized(d)),
            SPATIAL,
            (Support("6", FLOATS_ONNX_OLD), Support("22", FLOATS_ONNX)),
            versions=("6", "22"),
            defaults={"epsilon": 1e-5, **AFFINE_IDENTITY},
            attribute_names={"epsilon": "epsilon", "scale": "scale", "B": "B"},
            notes="scale and B are checked as one binary32 value each (the targets are given a scale and a B of "
            "that value, one per channel; ONNX requires both and gives no default: opcert takes 1 and 0 where none "
            "is given); the variance is the population variance (divided by n), as ONNX's reference computes it",
        ),
        TensorStandard(
            "directml",
            "DML_MEAN_VARIANCE_NORMALIZATION_OPERATOR_DESC (CrossChannel FALSE, NormalizeVariance TRUE)",
            "https://learn.microsoft.com/windows/win32/api/directml/ns-directml-dml_mean_variance_normalization_"
            "operator_desc",
            "Output = FusedActivation(Scale * ((Input - Mean) / sqrt(Variance + Epsilon)) + Bias); CrossChannel "
            "FALSE: the mean and variance over the axes {Height, Width}, each channel on its own",
            affine(standardized(d)),
            SPATIAL,
            (Support("1.0", DML_FLOATS, (4, 4)),),
            defaults={"epsilon": 1e-5, **AFFINE_IDENTITY},
            attribute_names={"epsilon": "Epsilon", "scale": "ScaleTensor", "B": "BiasTensor"},
            notes="DirectML's plain mean-variance normalization (feature level 1.0, tensors { BatchCount, "
            "ChannelCount, Height, Width }) with CrossChannel FALSE is InstanceNormalization's formula over the same "
            "rows; its optional ScaleTensor and BiasTensor are scale and B (absent: 1 and 0), no fused activation. Epsilon has no default in DirectML: "
            "opcert takes ONNX's 1e-5 where none is given. CrossChannel TRUE is LayerNormalization from axis 1 "
            "(--standard onnx --axis 1), NormalizeVariance FALSE a centering, not measured",
        ),
    ),
    primary="onnx",
    attributes=(epsilon_attribute("the variance"), SCALE, BIAS),
    **standardized_operator(),
)
