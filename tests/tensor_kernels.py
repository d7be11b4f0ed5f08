"""Softmax and Hardmax kernels with the bugs runtimes have had (issue 26), as `module:function` targets
f(x, axis) -> y, and a careful one. Each computes what its name says, nothing more."""
import numpy as np


def _moved(x, axis):
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    return axes


def softmax_no_max(x, axis):
    """exp(x) / sum(exp(x)) in the input's own format: no row maximum subtracted (float16 overflows past 11)."""
    axes = _moved(x, axis)
    e = np.exp(x)
    return (e / np.sum(e, axis=axes, keepdims=True)).astype(x.dtype)


def softmax_float16_sum(x, axis):
    """The maximum subtracted and exp in binary32, but the row summed one term at a time in float16."""
    axes = _moved(x, axis)
    if x.size == 0:
        return x.copy()
    m = np.max(x, axis=axes, keepdims=True).astype(np.float32)
    e = np.exp(x.astype(np.float32) - m).astype(np.float16)
    moved = np.moveaxis(e, axes, tuple(range(-len(axes), 0)))
    flat = moved.reshape(moved.shape[:moved.ndim - len(axes)] + (-1,))
    total = np.cumsum(flat, axis=-1, dtype=np.float16)[..., -1:] if flat.shape[-1] else flat
    total = total.reshape(total.shape[:-1] + (1,) * len(axes))
    total = np.moveaxis(total, tuple(range(-len(axes), 0)), axes)
    return (e.astype(np.float32) / total.astype(np.float32)).astype(x.dtype)


def softmax_careful(x, axis):
    """The maximum subtracted, binary64 throughout, one rounding; the declared rule for +-inf entries."""
    import opcert
    a = axis if isinstance(axis, int) else list(axis)
    return opcert.run("DML_ACTIVATION_SOFTMAX1", x, axes=[a] if isinstance(a, int) else a)


def hardmax_last(x, axis):
    """1 at the LAST maximum of each row (ties go the wrong way), 0 elsewhere; rows along one axis."""
    a = axis if isinstance(axis, int) else axis[0]
    moved = np.moveaxis(x, a, -1)
    last = moved.shape[-1] - 1 - np.argmax(moved[..., ::-1], axis=-1)
    y = (np.arange(moved.shape[-1]) == last[..., None]).astype(x.dtype)
    nan = np.isnan(moved).any(axis=-1, keepdims=True)
    y = np.where(nan, np.nan, y).astype(x.dtype)
    return np.moveaxis(y, -1, a)


def log_softmax_negative_zero(x, axis):
    """opcert's LogSoftmax, but -0 wherever the result is +0 (a row of one element)."""
    import opcert
    a = axis if isinstance(axis, int) else list(axis)
    y = opcert.run("DML_ACTIVATION_LOG_SOFTMAX1", x, axes=[a] if isinstance(a, int) else a)
    return np.where((y == 0) & ~np.signbit(y), -0.0, y).astype(x.dtype)
