"""Sigmoid: ONNX Sigmoid-6/13, DirectML DML_ACTIVATION_SIGMOID."""

from opcert.expr import exp
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
    sigmoid_monotone,
    sigmoid_stable,
    x,
)
from opcert.spec.model import Operator, RuntimeMap, Standard

FORMULA = 1 / (1 + exp(-x))

OPERATOR = Operator(
    name="Sigmoid",
    family="exponential",
    summary="1 / (1 + exp(-x)), element-wise",
    attributes=(),
    standards=(
        Standard(
            key="onnx",
            op_name="Sigmoid",
            document=ONNX_DOC.format("Sigmoid"),
            formula_text="y = 1 / (1 + exp(-x))",
            formula=FORMULA,
            defaults={},
            attribute_names={},
            support=(Support("6", FLOATS_ONNX_OLD, ANY_RANK), Support("13", FLOATS_ONNX, ANY_RANK)),
            reference_form=sigmoid_stable(x),
        ),
        Standard(
            key="directml",
            op_name="DML_ACTIVATION_SIGMOID",
            document=DML_DOC.format("sigmoid"),
            formula_text="f(x) = 1 / (1 + exp(-x))",
            formula=FORMULA,
            defaults={},
            attribute_names={},
            support=dml_levels_1_0(),
            reference_form=sigmoid_stable(x),
        ),
    ),
    primary="onnx",
    implementation=sigmoid_monotone(x),
    limits=limits(const(1), const(0)),
    properties=(
        Property("range", "range", "0 <= Sigmoid(x) <= 1", lower=const(0), upper=const(1)),
        Property("monotonic", "monotonic", "Sigmoid is non-decreasing"),
        Property("symmetry", "point_symmetry", "Sigmoid(-x) = 1 - Sigmoid(x)", center=const(1)),
        Property("half", "exact_point", "Sigmoid(0) = 1/2", points=((const(0), const("0.5")),)),
        NAN_PROPAGATION,
        LIMITS,
    ),
    budget64=2.5,
    runtimes={"torch": RuntimeMap("torch.sigmoid"), "jax": RuntimeMap("jax.nn.sigmoid")},
    own_exceptions={
        ("symmetry", "float32"): "no prover here decides point symmetry of the code in float32 short of running it "
        "on every input: `opcert prove Sigmoid --dtype float32 --property symmetry "
        "--enumerate` does, and proves it (18-22 s on 2 cores; 60 s on a slower host without "
        "AVX-512: bench/README; too long for the gate)",
        ("symmetry", "float64"): "opcert's binary64 code breaks it: at x = 5.774490589033502e-16 it returns "
        "0.5 + 2^-53 (correctly rounded) but at -x 0.5 - 2^-52, one ULP below the "
        "correctly rounded 0.5 - 3 2^-54 (1 / (1 + e^x) rounds twice), so f(x) + f(-x) "
        "misses 1 by more than half an ULP of each (`opcert prove Sigmoid --dtype float64` "
        "refutes it by search; in float16, bfloat16 and float32 it is proved)",
    },
)
