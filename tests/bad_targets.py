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
