"""opcert's implementation of each operator: the declared expression, executed with NumPy."""
from .descriptor import TensorDesc, validate
from .run import run

__all__ = ["TensorDesc", "run", "validate"]
