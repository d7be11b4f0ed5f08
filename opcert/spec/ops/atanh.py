"""Atanh: ONNX Atanh-9 (bfloat16 from 22); DirectML DML_ELEMENT_WISE_ATANH (level 2.0), atanh(x * scale + bias).

Outside (-1, 1) both follow IEEE 754 (C's atanh), which ONNX's reference operator (np.arctanh) gives: +-inf at +-1,
NaN beyond.

DirectML's argument u = x * scale + bias near +-1 (bias = 1, tiny x): rounded, it would be +-1, and atanh(+-1) is
infinite where the real value is finite. opcert computes atanh(u) as 0.5 log1p(2u / (1 - u)) for u >= 0 and by
oddness below, with 1 - |u| from x * scale + (bias -+ 1) in one rounding; its reference is the exact atanh."""

import dataclasses

from opcert.expr import atanh, both, eq, log1p, negate, select
from opcert.spec.declarations import LIMITS, NAN_PROPAGATION, Property, const, x
from opcert.spec.elementwise import (
    DML_ELEMENT_WISE_LEVELS_2_0,
    SCALE_BIAS,
    bias,
    dml_element_wise,
    minus_scaled,
    onnx_unary,
    scale,
    scale_bias_limits,
    scaled_minus,
    scaled_once,
)
from opcert.spec.model import Operator, RuntimeMap

OPERATOR = Operator(
    name="Atanh",
    family="hyperbolic",
    summary="inverse hyperbolic tangent, element-wise; +-inf at +-1, NaN beyond (DirectML: atanh(x * scale + bias))",
    attributes=SCALE_BIAS,
    standards=(
        onnx_unary(
            "Atanh",
            atanh(x),
            "y = atanh(x)",
            since=("9", "22"),
            notes="Outside (-1, 1), IEEE 754's: +-inf at +-1, NaN beyond.",
        ),
        dataclasses.replace(
            dml_element_wise(
                "ATANH",
                "f(x) = atanh(x)",
                atanh,
                support=DML_ELEMENT_WISE_LEVELS_2_0,
            ),
            implementation=select(
                scaled_once() >= 0,
                0.5 * log1p(2 * scaled_once() / minus_scaled(1)),
                -0.5 * log1p(-2 * scaled_once() / scaled_minus(-1)),
            ),
        ),
    ),
    primary="onnx",
    implementation=atanh(x),
    standards_differ_where=negate(both(eq(scale, 1), eq(bias, 0))),
    limits=scale_bias_limits(
        "nan", "nan", atanh(bias), both(bias > -1, bias < 1), ends=((eq(bias, 1), "inf"), (eq(bias, -1), "-inf"))
    ),
    properties=(
        Property(
            "monotonic",
            "monotonic",
            "Atanh is non-decreasing on [-1, 1]",
            domain=(const(-1), const(1)),
            standards=("onnx",),
        ),
        Property("odd", "odd", "Atanh(-x) = -Atanh(x)", standards=("onnx",)),
        Property("zero", "exact_point", "Atanh(0) = 0", points=((const(0), const(0)),), standards=("onnx",)),
        NAN_PROPAGATION,
        LIMITS,
    ),
    budget64=1.0,
    runtimes={"torch": RuntimeMap("torch.atanh"), "jax": RuntimeMap("jax.numpy.arctanh")},
)
