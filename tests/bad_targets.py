"""Deliberately wrong implementations, for `--target bad_targets:NAME`."""
import numpy as np


def tanh_nan_is_one(x):
    y = np.tanh(x)
    y[np.isnan(x)] = 1
    return y


def shrink_ge(x, bias=0.0, lambd=0.5):
    # >= instead of > at the threshold: wrong exactly at x = +-lambd.
    return np.where(x <= -lambd, x + bias, np.where(x >= lambd, x - bias, 0)).astype(x.dtype)


def crashes(x, **attrs):
    raise RuntimeError("kernel exploded")


def wrong_dtype(x, **attrs):
    return np.tanh(x.astype(np.float64))


def wrong_shape(x, **attrs):
    return np.tanh(x)[:-1]


def exact_tanh(x):
    """The exact reference itself, per input (no fast path): a perfect Tanh."""
    from opcert.spec.attrs import resolve
    from opcert.spec.reference import reference_detailed
    import opcert
    return reference_detailed("Tanh", x, resolve(opcert.get_operator("Tanh")), exact_bits=64).rounded


def exact_tanh_plus_one(x):
    """The exact reference moved one representable value up (NaN and inf kept)."""
    y = exact_tanh(x)
    finite = np.isfinite(y)
    y[finite] = np.nextafter(y[finite], np.float32(np.inf))
    return y


def negated(x, **attrs):
    """-x for any operator: wrong almost everywhere."""
    return -x


def flush_tiny(x, **attrs):
    """tanh with subnormal outputs flushed to zero, and -0 returned as +0."""
    y = np.tanh(x)
    tiny = np.abs(y.astype(np.float64)) < np.finfo(x.dtype).tiny
    y[tiny] = 0
    return y


def negated_inf(x, **attrs):
    """+inf for every input."""
    return np.full_like(x, np.inf)


def tanh_off_in_blocks(x):
    """Correct for small arrays, one value off (upwards) for large ones."""
    y = np.tanh(x)
    if x.size > 1000:
        finite = np.isfinite(y) & (y != 0)
        y[finite] = np.nextafter(y[finite], np.float32(np.inf))
    return y
