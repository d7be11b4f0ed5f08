"""Log: ONNX Log-6/13; DirectML DML_ELEMENT_WISE_LOG (level 1.0), ln(x * scale + bias).

Outside the real domain both follow IEEE 754 (C's log), which ONNX's reference operator (np.log) gives:
log(+-0) = -inf, log(x < 0) = NaN, log(+inf) = +inf."""

import dataclasses

from opcert.expr import both, eq, log, log1p, negate, select
from opcert.spec.declarations import (
    LIMITS,
    NAN_PROPAGATION,
    Property,
    const,
    x,
)
from opcert.spec.elementwise import (
    SCALE_BIAS,
    bias,
    dml_element_wise,
    onnx_unary,
    scale,
    scale_bias_limits,
    scaled_minus,
    scaled_once,
    where_inexact,
)
from opcert.spec.model import Operator, RuntimeMap

OPERATOR = Operator(
    name="Log",
    family="logarithm",
    summary="natural logarithm, element-wise (DirectML: ln(x * scale + bias)); NaN below 0, -inf at 0",
    attributes=SCALE_BIAS,
    standards=(
        onnx_unary(
            "Log", log(x), "y = log(x)", notes="Outside the real domain, IEEE 754's log: -inf at +-0, NaN below 0."
        ),
        # where the sum is inexact and at least 1/2, ln(x * scale + bias) = ln(1 + (x * scale + bias - 1)):
        # next to 1 the sum's rounding would lose the logarithm's leading bits; x * scale + bias - 1 rounds once
        # (scaled_minus). Below 1/2 (log1p of a value near -1 would lose a tiny sum: ln(1e-33) came out -inf)
        # and where the sum is exact, ln of the sum itself
        dataclasses.replace(
            dml_element_wise("LOG", "f(x) = log(x)", log),
            implementation=where_inexact(
                select(scaled_once() >= 0.5, log1p(scaled_minus(1)), log(scaled_once())), log(scaled_once())
            ),
            # the reference likewise: log1p of a ball next to -1 is never decided at binary64's precision (every
            # input below 2^-54 at the defaults took the multi-precision path: bench/README.md, eighteenth stop)
            reference_form=select(x * scale + bias < 0.5, log(x * scale + bias), log1p(x * scale + (bias - 1))),
        ),
    ),
    primary="onnx",
    implementation=log(x),
    standards_differ_where=negate(both(eq(scale, 1), eq(bias, 0))),
    limits=scale_bias_limits("inf", "nan", log(bias), bias > 0, ends=((eq(bias, 0), "-inf"),)),
    properties=(
        Property(
            "monotonic", "monotonic", "Log is non-decreasing on [0, inf)", domain=(const(0), None), standards=("onnx",)
        ),
        Property("one", "exact_point", "Log(1) = 0", points=((const(1), const(0)),), standards=("onnx",)),
        NAN_PROPAGATION,
        LIMITS,
    ),
    budget64=1.0,
    runtimes={"torch": RuntimeMap("torch.log"), "jax": RuntimeMap("jax.numpy.log")},
)
