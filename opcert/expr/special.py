"""erf and erfc over arrays: the platform's libm functions (glibc's erf and
erfc, the same ones Python's math module calls), in compiled loops, since
NumPy has none. Their contract (bounds, monotonicity, ULP error) is the one
stated in expr.primitives and checked by tests/test_contracts.py.

Loops (njit), not numba ufuncs (vectorize): a ufunc's wrapper is compiled in
every process that builds it, whatever numba's cache holds; a loop's machine
code comes from the cache. Importing this module and the first call of each,
in a process where numba is already loaded, cost more as ufuncs than as
loops (bench/README.md, 'Figures behind choices in the code')."""

import math

import numpy as np

from opcert.expr.libm_arrays import apply_flat
from opcert.jit import numba


@numba.njit(cache=True, nogil=True)
def _erf_into(x, out):
    for i in range(x.size):
        out[i] = math.erf(x[i])


@numba.njit(cache=True, nogil=True)
def _erfc_into(x, out):
    for i in range(x.size):
        out[i] = math.erfc(x[i])


# loaded now, while the module is imported (under Python's import lock): the reference's fast path
# calls these from several threads at once
for _loop in (_erf_into, _erfc_into):
    _loop(np.empty(0), np.empty(0))


def erf(x):
    return apply_flat(_erf_into, x, np.float64)


def erfc(x):
    return apply_flat(_erfc_into, x, np.float64)
