"""Kernels wrong in a known way on the monotone pieces of Sin and Cos: targets `piece_kernels:NAME`."""

import numpy as np

STEP_AT = np.float16(1.0)  # inside Sin's piece [-1.5707963, 1.5707963] and Cos's [0, 3.1415926]


def sin_stepping_back_at_1(x):
    """sin, one float16 value low at x = 1: below its neighbour under it (sin(1) - sin(1 - 2^-11) is 2^-12 of a
    float16 ULP 2^-11 off: the next value down at 1 is smaller than the value at its lower neighbour)."""
    y = np.sin(x.astype(np.float64)).astype(x.dtype)
    at = x == STEP_AT
    y[at] = np.nextafter(np.sin(np.float64(STEP_AT) - 2.0**-11).astype(x.dtype), np.array(-1, x.dtype))
    return y


def cos_stepping_up_at_1(x):
    """cos, raised at x = 1 above its lower neighbour's value: a rise on the piece where Cos decreases."""
    y = np.cos(x.astype(np.float64)).astype(x.dtype)
    at = np.abs(x) == STEP_AT
    y[at] = np.nextafter(np.cos(np.float64(STEP_AT) - 2.0**-11).astype(x.dtype), np.array(2, x.dtype))
    return y
