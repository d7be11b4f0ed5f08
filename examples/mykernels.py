"""Two kernels a project might ship, gated with opcert by examples/opcert.toml (the README's example).

`sigmoid` is the textbook formula evaluated in the input's own format; `sigmoid_wide` evaluates the
form that cannot overflow in float32 and rounds once to the input's format. Both take and return NumPy
arrays of one float dtype, with the operator's attributes as keywords (Sigmoid has none).
"""

import numpy as np


def sigmoid(x):
    with np.errstate(over="ignore"):
        return (1 / (1 + np.exp(-x))).astype(x.dtype)


def sigmoid_wide(x):
    t = x.astype(np.float32)
    with np.errstate(over="ignore", invalid="ignore"):
        e = np.exp(-np.abs(t))
        y = np.where(t >= 0, 1 / (1 + e), e / (1 + e))
    return y.astype(x.dtype)
