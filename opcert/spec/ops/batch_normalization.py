"""BatchNormalization in inference form: ONNX BatchNormalization-9/14/15 (training_mode 0), DirectML
DML_BATCH_NORMALIZATION_OPERATOR_DESC (Spatial TRUE, no fused activation).

Per channel, y = scale * (x - mean) / sqrt(var + epsilon) + B with the channel's mean, variance, scale and B given
(the running statistics of training): nothing is reduced, so each channel is an element-wise function of x, and
opcert checks it one channel at a time, its four tensors as one binary32 value each (attributes with
`input`). The runtimes see X as one channel of shape (1, 1, n) (targets: the ONNX models' `channel` inputs, torch's
wrapper), their parameters in binary32 (binary64 for a float64 X: ONNX-15's T1 and T2 allow it), so a float16
check does not round the parameters before the kernel does.

opcert's binary64 value is fma(x - mean, k, B) with k = scale / sqrt(var + epsilon): the rounding of x - mean, of k
and of the fma are each relative to their own value, so the error is absolute, up to 8 binary64 ULPs of |y| + |B|
(bench/README.md): next to y = 0, where (x - mean) k cancels B, it is many ULPs of y. impl.run holds that bound
against the narrow format's rounding boundaries and takes the exact value where it reaches one
(Standard.absolute_error). A float64 tensor has no such format above it: its values come from an evaluation with
x - mean and the product exact and k as a double-double, correctly rounded wherever its error bound stays clear of
a rounding boundary, the exact value elsewhere (Standard.float64_rounded, numerics.affine64)."""

import numpy as np

from opcert.expr import attr, both, eq, fma, sqrt
from opcert.spec.declarations import (
    FLOATS_ONNX,
    FLOATS_ONNX_OLD,
    LIMITS,
    NAN_PROPAGATION,
    ONNX_DOC,
    Limit,
    Property,
    Support,
    dml_levels_1_0,
    finite_where_zero,
    x,
)
from opcert.spec.model import Attribute, AttributeDomain, Operator, RuntimeMap, Standard

scale, bias, mean, var, eps = attr("scale"), attr("B"), attr("input_mean"), attr("input_var"), attr("epsilon")
k = scale / sqrt(var + eps)
FORMULA = scale * (x - mean) / sqrt(var + eps) + bias
NAMES_ONNX = {"scale": "scale", "B": "B", "input_mean": "input_mean", "input_var": "input_var", "epsilon": "epsilon"}
NAMES_DML = {
    "scale": "ScaleTensor",
    "B": "BiasTensor",
    "input_mean": "MeanTensor",
    "input_var": "VarianceTensor",
    "epsilon": "Epsilon",
}
ONE_CHANNEL = (
    "Checked one channel at a time: scale, B, mean and variance are one binary32 value each (a channel's entries of "
    "the tensors), given to the runtimes as one-element tensors in binary32 (binary64 for a float64 X) beside X "
    "viewed as (1, 1, n)."
)


def absolute_error(y: np.ndarray, attrs: dict) -> np.ndarray:
    """The binary64 value's error bound in its own ULPs: fma(x - mean, k, B) is within (5 |y| + 4 |B|) 2^-53 of the
    exact value plus k's rounding (its three operations, 3 2^-53 relative) times |(x - mean) k| <= |y| + |B|: within
    8 (|y| + |B|) 2^-53, at most 16 (1 + |B| / |y|) ULPs of y (an ULP is at least 2^-53 |y|); doubled for margin."""
    out = np.abs(y)
    with np.errstate(divide="ignore", invalid="ignore"):
        np.divide(32.0 * abs(attrs["B"]), out, out=out)
    out += 32.0
    return out


def _standard(key, op_name, document, formula_text, names, support, notes):
    return Standard(
        key=key,
        op_name=op_name,
        document=document,
        formula_text=formula_text,
        formula=FORMULA,
        defaults={"epsilon": 1e-5},
        attribute_names=names,
        support=support,
        notes=ONE_CHANNEL + " " + notes,
        absolute_error=absolute_error,
        float64_rounded="opcert.numerics.affine64:batch_normalization",
        tensor_inputs="channel",
    )


OPERATOR = Operator(
    name="BatchNormalization",
    family="normalization",
    summary="scale * (x - mean) / sqrt(var + epsilon) + B per channel, mean and var given (inference form)",
    attributes=(
        Attribute("scale", "the channel's scale (a tensor input, one value per channel)", input=True, example=1.25),
        Attribute("B", "the channel's bias (a tensor input)", aliases=("bias",), input=True, example=-0.5),
        Attribute(
            "input_mean", "the channel's running mean (a tensor input)", aliases=("mean",), input=True, example=0.75
        ),
        Attribute(
            "input_var",
            "the channel's running variance (a tensor input)",
            AttributeDomain(lower=0.0, description="a finite binary32 value >= 0"),
            aliases=("var", "variance"),
            input=True,
            example=2.0,
        ),
        Attribute(
            "epsilon",
            "added to the variance under the square root",
            AttributeDomain(
                lower=0.0,
                lower_open=True,
                description="a finite binary32 value > 0 (so that var + epsilon > 0 at every variance >= 0)",
            ),
        ),
    ),
    standards=(
        _standard(
            "onnx",
            "BatchNormalization",
            ONNX_DOC.format("BatchNormalization"),
            "Y = (X - input_mean) / sqrt(input_var + epsilon) * scale + B (training_mode = False)",
            NAMES_ONNX,
            (Support("9", FLOATS_ONNX_OLD), Support("14", FLOATS_ONNX), Support("15", FLOATS_ONNX)),
            "Opset 15 lets scale and B (T1), mean and var (T2) differ in type from X; the models are built at 15. "
            "Opset 14 renamed mean and var input_mean and input_var; 9 dropped `spatial` (always 1 here). momentum "
            "plays no part in inference.",
        ),
        _standard(
            "directml",
            "DML_BATCH_NORMALIZATION_OPERATOR_DESC",
            "https://learn.microsoft.com/windows/win32/api/directml/ns-directml-dml_batch_normalization_operator_desc",
            "Output = FusedActivation(Scale * ((Input - Mean) / sqrt(Variance + Epsilon)) + Bias)",
            NAMES_DML,
            dml_levels_1_0(),
            "Spatial TRUE (one mean, variance, scale and bias per channel, as ONNX); no fused activation. Epsilon "
            "has no default in DirectML: opcert takes ONNX's 1e-5 where none is given.",
        ),
    ),
    primary="onnx",
    # (x - mean) k + B rounded once past x - mean's rounding; with scale = 0, +-inf gives B (IEEE's inf * 0 is NaN)
    implementation=fma(finite_where_zero(scale, x - mean), k, bias),
    limits=(
        Limit(1, "inf", condition=scale > 0),
        Limit(-1, "-inf", condition=scale > 0),
        Limit(1, "-inf", condition=scale < 0),
        Limit(-1, "inf", condition=scale < 0),
        Limit(1, bias),
        Limit(-1, bias),
    ),
    properties=(
        Property("monotonic", "monotonic", "non-decreasing where scale >= 0", condition=scale >= 0),
        Property(
            "monotonic_decreasing",
            "monotonic",
            "non-increasing where scale <= 0",
            condition=scale <= 0,
            decreasing=True,
        ),
        Property("constant", "constant", "B everywhere where scale = 0", condition=eq(scale, 0), value=bias),
        Property(
            "odd",
            "odd",
            "odd where input_mean = 0 and B = 0: BatchNormalization(-x) = -BatchNormalization(x) as values (at "
            "x = +-0 the formula's + B, with B = +0, gives +0 at both)",
            condition=both(eq(mean, 0), eq(bias, 0)),
            zero_sign=False,
        ),
        NAN_PROPAGATION,
        LIMITS,
    ),
    # float64 is correctly rounded (float64_rounded, the exact value where it cannot decide)
    budget64=0.5,
    runtimes={
        "torch": RuntimeMap(
            "opcert.targets.runtimes.torch.batch_norm_one_channel",
            kwargs={"mean": "input_mean", "var": "input_var", "weight": "scale", "bias": "B", "eps": "epsilon"},
        )
    },
)
