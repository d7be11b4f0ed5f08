"""Two paths of one Tanh for the path matrix's tests: NumPy's tanh, and the same with every output for x in
[0.25, 0.75) moved one representable value up (what a second code path of a kernel can do)."""

import numpy as np


def tanh(x):
    return np.tanh(x)


def tanh_moved(x):
    y = np.tanh(x)
    inside = (x >= 0.25) & (x < 0.75)
    return np.where(inside, np.nextafter(y, y.dtype.type(np.inf)), y).astype(x.dtype)
