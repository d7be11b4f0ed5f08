"""Each operator's formula written the obvious way in NumPy, in the input's dtype.

These are what people write first; opcert audits them as `module:function`
targets, e.g. `--target opcert.targets.numpy_formulas:celu`. They are not
opcert's implementation (that is the catalog's expression, in binary64).
"""

import numpy as np


def tanh(x):
    return np.tanh(x)


def scaled_tanh(x, alpha=1.0, beta=0.5):
    a, b = x.dtype.type(alpha), x.dtype.type(beta)
    return a * np.tanh(b * x)


def hard_sigmoid(x, alpha=0.2, beta=0.5):
    a, b = x.dtype.type(alpha), x.dtype.type(beta)
    return np.clip(a * x + b, x.dtype.type(0), x.dtype.type(1))


def shrink(x, bias=0.0, lambd=0.5):
    b, lam = x.dtype.type(bias), x.dtype.type(lambd)
    return np.where(x < -lam, x + b, np.where(x > lam, x - b, x.dtype.type(0))).astype(x.dtype)


def celu(x, alpha=1.0):
    a = x.dtype.type(alpha)
    zero = x.dtype.type(0)
    return np.maximum(zero, x) + np.minimum(zero, a * (np.exp(x / a) - x.dtype.type(1)))
