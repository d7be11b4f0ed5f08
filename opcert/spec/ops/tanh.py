"""Tanh: ONNX Tanh-6/13, the SONNX informal specification (seed 003), and DirectML DML_ELEMENT_WISE_TANH
(level 1.0), tanh(x * scale + bias)."""

from opcert.expr import both, eq, negate, tanh
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
    x,
)
from opcert.spec.elementwise import SCALE_BIAS, bias, dml_element_wise, scale, scale_bias_limits, scale_bias_properties
from opcert.spec.model import Operator, RuntimeMap, Standard

PLAIN = ("onnx", "sonnx")

OPERATOR = Operator(
    name="Tanh",
    family="tanh",
    summary="hyperbolic tangent, element-wise (DirectML: tanh(x * scale + bias))",
    attributes=SCALE_BIAS,
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
        dml_element_wise("TANH", "f(x) = tanh(x)", tanh),
    ),
    primary="onnx",
    implementation=tanh(x),
    standards_differ_where=negate(both(eq(scale, 1), eq(bias, 0))),
    limits=scale_bias_limits(const(1), const(-1), tanh(bias)),
    properties=(
        Property("range", "range", "-1 <= Tanh(x) <= 1", lower=const(-1), upper=const(1)),
        Property("monotonic", "monotonic", "Tanh is non-decreasing", standards=PLAIN),
        Property("odd", "odd", "Tanh(-x) = -Tanh(x)", standards=PLAIN),
        Property("zero", "exact_point", "Tanh(0) = 0", points=((const(0), const(0)),), standards=PLAIN),
        *scale_bias_properties("tanh", odd=True),
        NAN_PROPAGATION,
        LIMITS,
    ),
    # libm's tanh under its contract (2 ULP, the primitive's record): 1.0 held on 10^4 samples, and
    # 10^6 found 1.104 ULP at x = 0.5089993968964391
    budget64=2.0,
    runtimes={"torch": RuntimeMap("torch.tanh"), "jax": RuntimeMap("jax.numpy.tanh")},
)
