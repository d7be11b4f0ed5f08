"""opcert: formal specification and verification of element-wise activation operators.

Library API (the CLI is a thin layer over it):
    opcert.operators(), opcert.get_operator(name)
    opcert.reference(op, x, **attrs)   correctly rounded reference
    opcert.run(op, x, out=None, **attrs)  opcert's implementation
    opcert.measure(op, target, dtype, inputs=..., **attrs)  ULP accuracy
"""
__version__ = "0.1.0"

from .errors import OpcertError, TargetFailure, UsageError  # noqa: E402
from .spec import get_operator, operators  # noqa: E402
from .spec.reference import reference  # noqa: E402

__all__ = ["OpcertError", "TargetFailure", "UsageError", "__version__", "get_operator",
           "operators", "reference"]
