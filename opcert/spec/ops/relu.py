"""Relu: ONNX Relu-6/13/14 (integers from 14), DirectML DML_ACTIVATION_RELU (integers from level 5.1)."""

from opcert.expr import maximum
from opcert.spec.declarations import (
    ANY_RANK,
    DML_DOC,
    FLOATS_ONNX,
    FLOATS_ONNX_OLD,
    LIMITS,
    NAN_PROPAGATION,
    ONNX_DOC,
    Property,
    Support,
    const,
    dml_levels_1_0,
    limits,
    x,
)
from opcert.spec.model import IntegerSemantics, Operator, RuntimeMap, Standard

OPERATOR = Operator(
    name="Relu",
    family="piecewise-linear",
    summary="max(0, x), element-wise",
    attributes=(),
    standards=(
        Standard(
            key="onnx",
            op_name="Relu",
            document=ONNX_DOC.format("Relu"),
            formula_text="y = max(0, x)",
            formula=maximum(0, x),
            defaults={},
            attribute_names={},
            support=(
                Support("6", FLOATS_ONNX_OLD, ANY_RANK),
                Support("13", FLOATS_ONNX, ANY_RANK),
                Support("14", FLOATS_ONNX + ("int8", "int16", "int32", "int64"), ANY_RANK),
            ),
        ),
        Standard(
            key="directml",
            op_name="DML_ACTIVATION_RELU",
            document=DML_DOC.format("relu"),
            formula_text="f(x) = max(0, x)",
            formula=maximum(0, x),
            defaults={},
            attribute_names={},
            support=dml_levels_1_0(ints_at_5_1=True),
        ),
    ),
    primary="onnx",
    implementation=maximum(0, x),
    limits=limits("inf", const(0)),
    properties=(
        Property("range", "range", "Relu(x) >= 0", lower=const(0)),
        Property("monotonic", "monotonic", "Relu is non-decreasing"),
        Property("zero", "exact_point", "Relu(0) = 0", points=((const(0), const(0)),)),
        Property("dead_zone", "constant", "Relu(x) = 0 for every x <= 0", domain=(None, const(0)), value=const(0)),
        NAN_PROPAGATION,
        LIMITS,
    ),
    integer=IntegerSemantics("Integer tensors: max(0, x), exact (ONNX Relu-14 and DirectML level 5.1 allow them)."),
    notes="max is IEEE 754-2019 maximum: Relu(-0) = +0 (a runtime that returns -0 is counted as a signed-zero "
    "mismatch, which the gate's signed_zero policy judges).",
    budget64=0.5,
    runtimes={"torch": RuntimeMap("torch.relu"), "jax": RuntimeMap("jax.nn.relu")},
)
