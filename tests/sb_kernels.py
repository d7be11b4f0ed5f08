"""Exp kernels with a scale-bias, for the +rounded variant's tests (tests/test_scale_bias_rounded.py): f(x * scale +
bias) with the scale-bias applied in float16 before e^, or exactly (binary64: x * scale + bias is exact there for
16-bit x and binary32 scale and bias of these sizes), each rounded once at the end."""

import numpy as np


def _exp_rounded(g: np.ndarray, dtype) -> np.ndarray:
    """NumPy's binary64 exp (within an ULP of binary64) rounded once to float16: correctly rounded unless e^g lies
    within 2^-52 of a float16 midpoint, which no argument of these tests does (each test says what it measured)."""
    with np.errstate(over="ignore"):
        return np.exp(g).astype(dtype)


def exp_scale_bias_in_float16(x, scale=1.0, bias=0.0):
    """e^(RN16(x * scale + bias)): the multiply-add in float16 arithmetic, fused (one rounding), exp of it rounded
    once."""
    g = (x.astype(np.float64) * scale + bias).astype(np.float16).astype(np.float64)
    return _exp_rounded(g, x.dtype)


def exp_scale_bias_exact(x, scale=1.0, bias=0.0):
    """e^(x * scale + bias) with the scale-bias exact (binary64), rounded once."""
    return _exp_rounded(x.astype(np.float64) * scale + bias, x.dtype)
