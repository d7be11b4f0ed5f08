"""The operations of the compiled implementation (expr.compiled_eval) that are not one Python operator:
IEEE 754-2019 minimum and maximum, with numpy_eval's results (a NaN operand gives the default quiet NaN;
-0 < +0), one element at a time. Imported by the generated kernels, which inline them."""

import math

from opcert.jit import numba


@numba.njit(cache=True, nogil=True, inline="always")
def ieee_min(a, b):
    if a != a or b != b:
        return math.nan
    if a == b:  # only +0 and -0 differ in bits: the one with the sign bit
        return a if math.copysign(1.0, a) < 0.0 else b
    return a if a < b else b


@numba.njit(cache=True, nogil=True, inline="always")
def ieee_max(a, b):
    if a != a or b != b:
        return math.nan
    if a == b:
        return b if math.copysign(1.0, a) < 0.0 else a
    return a if a > b else b
