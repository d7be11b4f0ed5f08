"""erf and erfc over arrays: the platform's libm functions (glibc's erf and
erfc, the same ones Python's math module calls), vectorised with numba, since
NumPy has none. Their contract (bounds, monotonicity, ULP error) is the one
stated in expr.primitives and checked by tests/test_contracts.py."""
import math

from ..jit import numba
import numpy as np


@numba.vectorize(["float64(float64)"], cache=True)
def _erf(x):
    return math.erf(x)


@numba.vectorize(["float64(float64)"], cache=True)
def _erfc(x):
    return math.erfc(x)


def erf(x):
    return _erf(np.asarray(x, dtype=np.float64))


def erfc(x):
    return _erfc(np.asarray(x, dtype=np.float64))
