"""opcert's implementation of each operator: the declared expression, executed with NumPy."""

from opcert.impl.descriptor import TensorDesc, validate
from opcert.impl.run import run

__all__ = ["TensorDesc", "run", "validate"]
