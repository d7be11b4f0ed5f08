"""Pieces several operator declarations (spec/ops/*.py) share: their vocabulary of types, levels, documents and common properties."""

from opcert.expr import attr, const, eq, exp, log1p, select, var
from opcert.spec.model import Limit, Property, Support

x = var("x")
SEEDS = "../shared/seeds/"
DML_DOC = "https://learn.microsoft.com/windows/win32/api/directml/ns-directml-dml_activation_{}_operator_desc"
ONNX_DOC = "https://onnx.ai/onnx/operators/onnx__{}.html"

DML_FLOATS = ("float16", "float32")
# The DirectML tables of the operators introduced at feature level 1.0.
DML_LEVELS_1_0 = (
    Support("1.0", DML_FLOATS, (4, 4)),
    Support("2.0", DML_FLOATS, (4, 5)),
    Support("3.0", DML_FLOATS, (1, 8)),
)
DML_INTS_5_1 = ("int32", "int16", "int8")
FLOATS_ONNX = ("float16", "bfloat16", "float32", "float64")
FLOATS_ONNX_OLD = ("float16", "float32", "float64")
ANY_RANK = None

NAN_PROPAGATION = Property("nan", "nan_propagation", "a NaN input gives a NaN output")
LIMITS = Property("limits", "limit", "f(+-inf) is the limit of f at +-inf (the sign of a zero limit included)")


def dml_levels_1_0(ints_at_5_1: bool = False) -> tuple:
    extra = (Support("5.1", DML_FLOATS + DML_INTS_5_1, (1, 8)),) if ints_at_5_1 else ()
    return DML_LEVELS_1_0 + extra


def limits(pos, neg, zero_sign_neg: int = 1, zero_sign_pos: int = 1) -> tuple:
    return (Limit(1, pos, zero_sign_pos), Limit(-1, neg, zero_sign_neg))


def finite_where_zero(c, t):
    """t, or where the coefficient c is 0, t clamped to [-1, 1] (its sign and a NaN kept). c times it
    is c * t for every finite t, the zero's sign included, and at t = +-inf the zero the real product
    is (IEEE's 0 * inf is NaN; the operators' limits there are 0 or the other terms)."""
    return select(eq(c, 0), select(t < -1, -1, select(t > 1, 1, t)), t)


def sigmoid_stable(t):
    """1 / (1 + exp(-t)) exactly, in a form whose ball evaluation neither overflows nor cancels
    (a reference form)."""
    return select(t < 0, exp(t) / (1 + exp(t)), 1 / (1 + exp(-t)))


def sigmoid_monotone(t):
    """1 / (1 + exp(-t)) as opcert computes it in binary64: every step monotone, so the
    result is monotone with rounding (exp(t) / (1 + exp(t)) is not: it decreases between
    adjacent binary64 inputs in (-2, 0)). Below -700, exp(-t) overflows; there
    sigmoid(t) = e^t (1 - e^t + ...) and e^t < 2^-1000 is far below its half-ULP."""
    return select(t < -700, exp(t), 1 / (1 + exp(-t)))


def softplus_monotone(t):
    """ln(1 + exp(t)) as opcert computes it: log1p(exp(t)) is monotone step by step
    (t + log1p(exp(-t)) is not: it decreases between adjacent binary64 inputs in
    (0, 0.5)); above 37, ln(1 + e^t) - t < e^-37 is below a quarter-ULP of t."""
    return select(t > 37, t, log1p(exp(t)))


__all__ = [
    "ANY_RANK",
    "DML_DOC",
    "DML_FLOATS",
    "DML_INTS_5_1",
    "DML_LEVELS_1_0",
    "FLOATS_ONNX",
    "FLOATS_ONNX_OLD",
    "LIMITS",
    "NAN_PROPAGATION",
    "ONNX_DOC",
    "SEEDS",
    "Limit",
    "Property",
    "Support",
    "attr",
    "const",
    "dml_levels_1_0",
    "finite_where_zero",
    "limits",
    "sigmoid_monotone",
    "sigmoid_stable",
    "softplus_monotone",
    "x",
]
