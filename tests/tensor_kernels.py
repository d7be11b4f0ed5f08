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
    flat = moved.reshape(moved.shape[: moved.ndim - len(axes)] + (-1,))
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


def _first_along(y, axis, f):
    """y with f applied to element 0 of every row along `axis` (an int)."""
    moved = np.moveaxis(y.copy(), axis, -1)
    if moved.shape[-1]:
        moved[..., 0] = f(moved[..., 0])
    return np.moveaxis(moved, -1, axis)


def _up(v, steps):
    for _ in range(steps):
        v = np.nextafter(v, np.asarray(np.inf, dtype=v.dtype))
    return v


def softmax_first_output_off(x, axis):
    """The careful kernel, its first output of every row two values up: position matters (permutation)."""
    return _first_along(softmax_careful(x, axis), axis, lambda v: _up(v, 2))


def softmax_high_rows_off(x, axis):
    """The careful kernel, every output two values up in rows whose maximum is above 8: the same row moved
    by a constant is treated apart (shift invariance)."""
    y = softmax_careful(x, axis)
    a = axis if isinstance(axis, int) else tuple(axis)
    high = np.max(x, axis=a, keepdims=True) > 8 if x.size else np.zeros_like(x, dtype=bool)
    return np.where(high, _up(y, 2), y).astype(x.dtype)


def softmax_first_parity(x, axis):
    """The careful kernel, the last bit of each row's first output flipped where the first input's last bit
    is set: raising that input by one value moves its output down as often as up (monotonicity)."""
    y = softmax_careful(x, axis)
    if x.dtype != np.float32 or not x.size:
        return y
    a = axis if isinstance(axis, int) else axis[0]
    odd = (np.moveaxis(x, a, -1)[..., 0].view(np.uint32) & 1).astype(np.uint32)
    return _first_along(y, a, lambda v: (v.view(np.uint32) ^ odd).view(np.float32))


def softmax_nan_as_zero(x, axis):
    """The careful kernel on the row with each NaN read as 0: numbers where the row is NaN."""
    return softmax_careful(np.nan_to_num(x, nan=0.0, posinf=np.inf, neginf=-np.inf), axis)


def softmax_sum_high(x, axis):
    """The careful kernel, every output times 1 + 2^-21 (binary32): rows sum 4 ULPs of 1 above 1."""
    return (softmax_careful(x, axis).astype(np.float64) * (1 + 2.0**-21)).astype(x.dtype)


def _row_count(x, axis) -> int:
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    n = int(np.prod([x.shape[a] for a in axes]))
    return x.size // n if n else 0


def softmax_alone_sloppy(x, axis):
    """The careful kernel, but a call of one row of 16 or fewer takes a short path: exp(x) / sum(exp(x)) in
    binary32, no row maximum subtracted (a few ULPs off, and not the bits the batched rows get)."""
    if _row_count(x, axis) != 1 or x.size > 16 or x.dtype != np.float32:
        return softmax_careful(x, axis)
    e = np.exp(x.astype(np.float32))
    return (e / np.sum(e, axis=axis, keepdims=True)).astype(x.dtype)


def softmax_tail_rows_off(x, axis):
    """The careful kernel, but in a call of 8 rows or more, the rows after the last whole group of 8 (the
    remainder of a loop that takes 8 rows at a time) get every output one value up: position in the call
    matters (shorter calls take another path, right)."""
    y = softmax_careful(x, axis)
    if not isinstance(axis, int) or axis != x.ndim - 1 or x.ndim != 2 or x.shape[0] < 8:
        return y
    m = x.shape[0]
    tail = np.arange(m) >= m - m % 8
    return np.where(tail[:, None], _up(y, 1), y).astype(x.dtype)


def softmax_other_axis_float32(x, axis):
    """The careful kernel along the last axis; along any other axis a strided path in binary32 arithmetic."""
    last = (axis if isinstance(axis, int) else axis[-1]) in (-1, x.ndim - 1)
    if last or x.dtype != np.float32:
        return softmax_careful(x, axis)
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return (e / np.sum(e, axis=axis, keepdims=True, dtype=np.float32)).astype(x.dtype)
