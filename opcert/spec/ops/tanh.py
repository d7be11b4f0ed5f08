"""Tanh: ONNX Tanh-6/13, and the SONNX informal specification (seed 003)."""

from opcert.expr import tanh
from opcert.spec.declarations import (
    ANY_RANK,
    FLOATS_ONNX,
    FLOATS_ONNX_OLD,
    LIMITS,
    NAN_PROPAGATION,
    ONNX_DOC,
    SEEDS,
    Property,
    Support,
    const,
    limits,
    x,
)
from opcert.spec.model import Operator, RuntimeMap, Standard

OPERATOR = Operator(
    name="Tanh",
    family="tanh",
    summary="hyperbolic tangent, element-wise",
    attributes=(),
    standards=(
        Standard(
            key="onnx",
            op_name="Tanh",
            document=ONNX_DOC.format("Tanh"),
            formula_text="y = tanh(x)",
            formula=tanh(x),
            defaults={},
            attribute_names={},
            support=(Support("6", FLOATS_ONNX_OLD, ANY_RANK), Support("13", FLOATS_ONNX, ANY_RANK)),
        ),
        Standard(
            key="sonnx",
            op_name="Tanh",
            document=SEEDS + "003_0e2c6b4168ad4b96.txt",
            formula_text="Y[i] = tanh(X[i]) = (e^X - e^-X) / (e^X + e^-X)",
            formula=tanh(x),
            defaults={},
            attribute_names={},
            support=(Support("13", FLOATS_ONNX_OLD, ANY_RANK),),
            notes="SONNX informal specification based on ONNX Tanh-13: tanh(+inf) = 1, tanh(-inf) = -1, "
            "NaN propagates.",
        ),
    ),
    primary="onnx",
    implementation=tanh(x),
    limits=limits(const(1), const(-1)),
    properties=(
        Property("range", "range", "-1 <= Tanh(x) <= 1", lower=const(-1), upper=const(1)),
        Property("monotonic", "monotonic", "Tanh is non-decreasing"),
        Property("odd", "odd", "Tanh(-x) = -Tanh(x)"),
        Property("zero", "exact_point", "Tanh(0) = 0", points=((const(0), const(0)),)),
        NAN_PROPAGATION,
        LIMITS,
    ),
    # libm's tanh under its contract (2 ULP, the primitive's record): 1.0 held on 10^4 samples, and
    # 10^6 found 1.104 ULP at x = 0.5089993968964391
    budget64=2.0,
    runtimes={"torch": RuntimeMap("torch.tanh"), "jax": RuntimeMap("jax.numpy.tanh")},
)
