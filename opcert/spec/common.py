"""Pieces several operator declarations share."""
from .model import Property, Support

DML_FLOATS = ("float16", "float32")
# The DirectML seed documents' tables for operators introduced at level 1.0.
DML_LEVELS_1_0 = (
    Support("1.0", DML_FLOATS, (4, 4)),
    Support("2.0", DML_FLOATS, (4, 5)),
    Support("3.0", DML_FLOATS, (1, 8)),
)
# ONNX puts no bound on the rank.
ONNX_ANY_RANK = None
FLOATS_ONNX = ("float16", "bfloat16", "float32", "float64")
SEEDS = "../shared/seeds/"

NAN_PROPAGATION = Property("nan", "nan_propagation", "a NaN input gives a NaN output")
LIMITS = Property("limits", "limit", "f(+-inf) is the limit of f at +-inf (the sign of a zero limit included)")
