"""GroupNormalization: ONNX GroupNormalization-21 (and 18), each sample's channels split into num_groups groups,
each group normalized over its channels and spatial axes to mean 0 and variance 1, then scaled and shifted (scale
and bias one binary32 value each: 1 and 0 where none is given)."""

from opcert.spec.declarations import FLOATS_ONNX, ONNX_DOC
from opcert.spec.model import Attribute, Support
from opcert.spec.tensor import GROUP_COUNTS, GROUP_EXAMPLE, AxisRule, TensorOperator, TensorStandard
from opcert.spec.tensor_declarations import (
    AFFINE_IDENTITY,
    BIAS,
    SCALE,
    affine,
    deviations,
    epsilon_attribute,
    standardized,
    standardized_operator,
)

# the standards' x - mean (opcert's and the reference's forms: standardized_operator)
_, d, _, _ = deviations()

GROUPS = AxisRule(
    "groups",
    negative=False,
    text="the channels of an (N, C, D1, ..., Dk) tensor (rank 2 or more) split into num_groups groups of C / "
    "num_groups consecutive channels: one row per sample and group, its channels and spatial axes flattened",
)
FORMULA = (
    "The overall computation has two stages: the first normalizes the elements to have zero mean and unit "
    "variance for each instance in each group, and the second scales and shifts the results: y = scale * (x - "
    "mean) / sqrt(variance + epsilon) + bias, where the mean and variance are computed per instance per group"
)


def _standard(key: str, since: str, per: str) -> TensorStandard:
    return TensorStandard(
        key,
        "GroupNormalization",
        ONNX_DOC.format("GroupNormalization"),
        FORMULA,
        affine(standardized(d)),
        GROUPS,
        (Support(since, FLOATS_ONNX, (2, 8)),),
        versions=(since,),
        defaults={"epsilon": 1e-5, **AFFINE_IDENTITY},
        attribute_names={"epsilon": "epsilon", "num_groups": "num_groups", "scale": "scale", "B": "bias"},
        notes=f"scale and bias (opcert's B) are checked as one binary32 value each (the targets are given tensors of "
        f"that value, one per {per}; ONNX requires both and gives no default: opcert takes 1 and 0 where none is "
        "given); the variance is the "
        "population variance (divided by n). num_groups is required by ONNX, which gives it no default: opcert "
        f"takes {GROUP_EXAMPLE} where none is given (--attr num_groups=N, N in {', '.join(GROUP_COUNTS)}); it must "
        "divide the channel count"
        + (
            ". stash_type is the standard's default, 1 (the statistics in float32): the exact reference does not "
            "depend on it; a kernel that computes in a narrower type shows it in its errors"
            if since == "21"
            else ". Opset 18's scale and bias are per group (deprecated by opset 21, which makes them per channel)"
        ),
    )


OPERATOR = TensorOperator(
    name="GroupNormalization",
    summary="scale (x_i - mean) / sqrt(variance + epsilon) + bias over each group of C / num_groups channels of each "
    "sample",
    family="normalization",
    standards=(_standard("onnx", "21", "channel"), _standard("onnx-18", "18", "group")),
    primary="onnx",
    attributes=(
        epsilon_attribute("the variance"),
        Attribute(
            "num_groups",
            "the number of groups the channels are split into (it divides the channel count)",
            kind="choice",
            choices=GROUP_COUNTS,
            example=GROUP_EXAMPLE,
        ),
        # after num_groups: a C kernel's attrs[] keeps its order (epsilon, num_groups, then scale and B)
        SCALE,
        BIAS,
    ),
    **standardized_operator(),
)
