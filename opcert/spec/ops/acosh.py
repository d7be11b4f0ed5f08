"""Acosh: ONNX Acosh-9 (bfloat16 from 22); DirectML DML_ELEMENT_WISE_ACOSH (level 2.0), acosh(x * scale + bias).

Below 1 both follow IEEE 754 (C's acosh), which ONNX's reference operator (np.arccosh) gives: NaN.

DirectML's argument x * scale + bias near 1 (bias = 1, tiny x): rounded, it would be 1, and acosh(1) = 0 where the
real value is sqrt(2 (u - 1)). opcert computes and references acosh(1 + d) as log1p(d + sqrt(d (2 + d))) there,
with d = x * scale + (bias - 1) in one rounding (NaN for d < 0, as acosh below 1)."""

import dataclasses

from opcert.expr import acosh, both, eq, log1p, negate, select, sqrt
from opcert.spec.declarations import LIMITS, NAN_PROPAGATION, Property, const, x
from opcert.spec.elementwise import (
    DML_ELEMENT_WISE_LEVELS_2_0,
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


def _near_one(d, far):
    """acosh(1 + d): NaN below 0 (as sqrt(d): IEEE's value outside the domain), log1p(d + sqrt(d (2 + d))) for
    0 <= d < 1/2 (no cancellation: both terms >= 0), `far` above."""
    return select(d < 0, sqrt(d), select(d < 0.5, log1p(d + sqrt(d * (2 + d))), far))


OPERATOR = Operator(
    name="Acosh",
    family="hyperbolic",
    summary="inverse hyperbolic cosine, element-wise; NaN below 1 (DirectML: acosh(x * scale + bias))",
    attributes=SCALE_BIAS,
    standards=(
        onnx_unary("Acosh", acosh(x), "y = acosh(x)", since=("9", "22"), notes="Below 1, IEEE 754's NaN."),
        dataclasses.replace(
            dml_element_wise(
                "ACOSH",
                "f(x) = acosh(x)",
                acosh,
                support=DML_ELEMENT_WISE_LEVELS_2_0,
            ),
            # where the sum is exact, acosh of it (the formula's five roundings were 2 binary64 ULPs off at
            # 1.0287, over budget64)
            implementation=where_inexact(_near_one(scaled_minus(1), acosh(scaled_once())), acosh(scaled_once())),
            reference_form=_near_one(x * scale + (bias - 1), acosh(x * scale + bias)),
        ),
    ),
    primary="onnx",
    implementation=acosh(x),
    standards_differ_where=negate(both(eq(scale, 1), eq(bias, 0))),
    limits=scale_bias_limits("inf", "nan", acosh(bias), bias >= 1),
    properties=(
        Property(
            "range", "range", "Acosh(x) >= 0 on [1, inf)", lower=const(0), domain=(const(1), None), standards=("onnx",)
        ),
        Property(
            "monotonic",
            "monotonic",
            "Acosh is non-decreasing on [1, inf)",
            domain=(const(1), None),
            standards=("onnx",),
        ),
        Property("one", "exact_point", "Acosh(1) = 0", points=((const(1), const(0)),), standards=("onnx",)),
        NAN_PROPAGATION,
        LIMITS,
    ),
    budget64=1.0,
    runtimes={"torch": RuntimeMap("torch.acosh"), "jax": RuntimeMap("jax.numpy.arccosh")},
)
