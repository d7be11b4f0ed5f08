"""Pow kernels written to be right or wrong in known ways: targets `pow_kernels:NAME` of the binary operator tests
(tests/test_binary_pow.py). Each is f(x, y) -> an array of x's dtype."""

import numpy as np


def _in(x, z):
    return z.astype(x.dtype)


def in_binary64(x, y):
    """C's pow in binary64 (Python's math.pow, element by element), rounded once to the format: correctly rounded
    but where a binary64 result lands next to a midpoint of the format."""
    import math

    def one(a, b):
        try:
            return math.pow(a, b)
        except ZeroDivisionError:  # math.pow raises where C returns the pole's infinity
            return math.copysign(math.inf, a) if float(b).is_integer() and int(b) % 2 else math.inf
        except (OverflowError, ValueError):
            return np.power(np.float64(a), np.float64(b))

    x64, y64 = np.broadcast_arrays(x.astype(np.float64), y.astype(np.float64))
    with np.errstate(all="ignore"):
        z = np.array([one(a, b) for a, b in zip(x64.ravel(), y64.ravel())]).reshape(x64.shape)
    return _in(x, z)


def exp_of_log_float32(x, y):
    """exp(y * log(x)) in float32: no negative bases (NaN), and the error of log(x) times y."""
    with np.errstate(all="ignore"):
        z = np.exp(y.astype(np.float32) * np.log(x.astype(np.float32)))
    return _in(x, z)


def nan_to_the_zero_is_nan(x, y):
    """Right, but NaN to the power 0 gives NaN (IEEE 754: 1)."""
    z = in_binary64(x, y)
    x64, y64 = np.broadcast_arrays(x.astype(np.float64), y.astype(np.float64))
    return np.where(np.isnan(x64) & (y64 == 0), np.asarray(np.nan, dtype=z.dtype), z).astype(z.dtype)


def absolute_base(x, y):
    """pow(|x|, y): right for x >= 0, wrong sign for a negative base to an odd power, no NaN for non-integers."""
    return in_binary64(np.abs(x), y)


def one_step_back(x, y):
    """Right, but pow(2.5, 2) one value of the format below the exact 6.25: an error of 1 ULP there."""
    z = in_binary64(x, y)
    x64, y64 = np.broadcast_arrays(x.astype(np.float64), y.astype(np.float64))
    at = (x64 == 2.5) & (y64 == 2)
    below = np.nextafter(np.asarray(6.25, dtype=z.dtype), np.asarray(0, dtype=z.dtype))
    return np.where(at, below, z).astype(z.dtype)


def other_bits_broadcast(x, y):
    """Right for inputs of one shape; given a row against a column, every result one value of the format up."""
    z = in_binary64(x, y)
    if x.shape != y.shape:
        z = np.nextafter(z, np.asarray(np.inf, dtype=z.dtype))
    return z


def flushes_subnormals(x, y):
    """Right, but subnormal results are flushed to zero (their sign kept)."""
    import ml_dtypes

    z = in_binary64(x, y)
    tiny = ml_dtypes.finfo(z.dtype).tiny
    return np.where(np.abs(z.astype(np.float64)) < float(tiny), np.copysign(0.0, z.astype(np.float64)), z).astype(
        z.dtype
    )


def returns_float64(x, y):
    """Right values, the wrong dtype."""
    return in_binary64(x, y).astype(np.float64)


def scaled_in_binary64(x, y, scale=1.0, bias=0.0):
    """DirectML's pow(x * scale + bias, y): the scale-bias and the power in binary64 (NumPy's), rounded once; a
    negative base to a non-integer power and -inf to any non-integer power NaN."""
    g, y64 = np.broadcast_arrays(x.astype(np.float64) * scale + bias, y.astype(np.float64))
    with np.errstate(all="ignore"):
        z = np.power(np.abs(g), y64)
        odd = (np.floor(y64) == y64) & (np.floor(y64 / 2) * 2 != y64)
        z = np.where((g < 0) & odd, -z, z)
        z = np.where((g < 0) & (np.floor(y64) != y64), np.nan, z)
    return z.astype(x.dtype)
