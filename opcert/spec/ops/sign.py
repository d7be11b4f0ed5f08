"""Sign: ONNX Sign-9/13 (its float types): 1 above 0, -1 below, 0 at 0. ONNX leaves the sign of the zero
result unsaid; opcert takes +0 at both zeros, as ONNX's reference operator (NumPy's sign) and torch.sign
give. NaN propagates."""

from opcert.expr import isnan, select
from opcert.spec.declarations import (
    LIMITS,
    NAN_PROPAGATION,
    Property,
    const,
    limits,
    x,
)
from opcert.spec.elementwise import onnx_unary
from opcert.spec.model import Operator, RuntimeMap

SIGN = select(x > 0, const(1), select(x < 0, const(-1), select(isnan(x), x, const(0))))

OPERATOR = Operator(
    name="Sign",
    family="sign",
    summary="the sign of x (1, -1 or 0), element-wise",
    attributes=(),
    standards=(
        onnx_unary(
            "Sign",
            SIGN,
            "y = 1 if x > 0, -1 if x < 0, 0 if x == 0",
            since=("9", "13"),
            notes="ONNX Sign also takes the integer types; opcert checks its float types. The zero result is +0 "
            "at both zeros (ONNX's reference, NumPy's sign).",
        ),
    ),
    primary="onnx",
    implementation=SIGN,
    limits=limits(const(1), const(-1)),
    properties=(
        Property("range", "range", "-1 <= Sign(x) <= 1", lower=const(-1), upper=const(1)),
        Property("monotonic", "monotonic", "Sign is non-decreasing"),
        Property("odd", "odd", "Sign(-x) = -Sign(x), as values (both zeros give +0)", zero_sign=False),
        Property("zero", "exact_point", "Sign(0) = 0", points=((const(0), const(0)),)),
        NAN_PROPAGATION,
        LIMITS,
    ),
    budget64=0.0,
    runtimes={"torch": RuntimeMap("torch.sign"), "jax": RuntimeMap("jax.numpy.sign")},
)
