"""LayerNormalization and RMSNormalization kernels with the bugs runtimes have had (issue 53), as
`module:function` targets f(x, axis, epsilon) -> y over the trailing axes from `axis`, and a careful one.
Each computes what its name says, nothing more."""

import numpy as np


def _rows(x, axis):
    """x as 2-D rows over the trailing axes from axis (an int, or the tuple of those axes), and the shape to
    put them back in."""
    a = (axis[0] if isinstance(axis, tuple) else axis) % x.ndim
    n = int(np.prod(x.shape[a:], dtype=np.int64))
    return x.reshape(-1, n), x.shape


def ln_careful(x, axis=-1, epsilon=1e-5):
    """binary64 throughout, the mean by the corrected two-pass algorithm, one rounding into x's format."""
    if x.size == 0:
        return x.copy()
    r, shape = _rows(x, axis)
    v = r.astype(np.float64)
    m = v.mean(axis=1, keepdims=True)
    c = v - m
    c = c - c.mean(axis=1, keepdims=True)
    y = c / np.sqrt((c * c).mean(axis=1, keepdims=True) + np.float64(epsilon))
    return y.astype(x.dtype).reshape(shape)


def ln_naive_variance(x, axis=-1, epsilon=1e-5):
    """The variance as E[x^2] - E[x]^2 in float32 (NaN where it cancels below -epsilon)."""
    if x.size == 0:
        return x.copy()
    r, shape = _rows(x, axis)
    v = r.astype(np.float32)
    m = v.mean(axis=1, keepdims=True, dtype=np.float32)
    var = (v * v).mean(axis=1, keepdims=True, dtype=np.float32) - m * m
    y = (v - m) / np.sqrt(var + np.float32(epsilon))
    return y.astype(x.dtype).reshape(shape)


def ln_float16_accumulation(x, axis=-1, epsilon=1e-5):
    """Sums accumulated one term at a time in float16 (a running sum of 4,096 values near 1.5 stalls at
    2,048), the rest in float32."""
    if x.size == 0:
        return x.copy()
    r, shape = _rows(x, axis)
    n = np.float32(r.shape[1])
    v = r.astype(np.float32)
    m = np.cumsum(r.astype(np.float16), axis=1, dtype=np.float16)[:, -1:].astype(np.float32) / n
    d = v - m
    dd = (d * d).astype(np.float16)
    var = np.cumsum(dd, axis=1, dtype=np.float16)[:, -1:].astype(np.float32) / n
    y = d / np.sqrt(var + np.float32(epsilon))
    return y.astype(x.dtype).reshape(shape)


def ln_stash_ignored(x, axis=-1, epsilon=1e-5):
    """stash_type ignored: the mean and the variance in the input's own format (float16's), not float32."""
    if x.size == 0:
        return x.copy()
    r, shape = _rows(x, axis)
    t = r.dtype
    m = r.mean(axis=1, keepdims=True, dtype=t)
    d = r - m
    var = (d * d).mean(axis=1, keepdims=True, dtype=t)
    y = d / np.sqrt(var + t.type(epsilon))
    return y.astype(x.dtype).reshape(shape)


def ln_epsilon_after_sqrt(x, axis=-1, epsilon=1e-5):
    """epsilon added after the square root: (x - mean) / (sqrt(var) + epsilon), binary64, rounded once."""
    if x.size == 0:
        return x.copy()
    r, shape = _rows(x, axis)
    v = r.astype(np.float64)
    c = v - v.mean(axis=1, keepdims=True)
    y = c / (np.sqrt((c * c).mean(axis=1, keepdims=True)) + np.float64(epsilon))
    return y.astype(x.dtype).reshape(shape)


def _rms64(x, axis, epsilon):
    """RMSNormalization's rows in binary64 (the row scaled by a power of two first: no square overflows), and the
    shape to put them back in."""
    r, shape = _rows(x, axis)
    v = r.astype(np.float64)
    with np.errstate(all="ignore"):
        top = np.max(np.abs(v), axis=1, keepdims=True)
        k = np.where(np.isfinite(top) & (top > 0), np.frexp(top)[1], 0).astype(np.float64)
        s = np.ldexp(1.0, -k.astype(int))
        u = v * s
        return u / np.sqrt((u * u).mean(axis=1, keepdims=True) + np.float64(epsilon) * s * s), shape


def rms_careful(x, axis=-1, epsilon=1e-5):
    """binary64 throughout, rounded once."""
    if x.size == 0:
        return x.copy()
    y, shape = _rms64(x, axis, epsilon)
    return y.astype(x.dtype).reshape(shape)


def rms_in_format(x, axis=-1, epsilon=1e-5):
    """Everything in the input's own format: squares of float16 values from 256 on overflow to inf."""
    if x.size == 0:
        return x.copy()
    r, shape = _rows(x, axis)
    t = r.dtype
    with np.errstate(all="ignore"):
        y = r / np.sqrt((r * r).mean(axis=1, keepdims=True, dtype=t) + t.type(epsilon))
    return y.astype(x.dtype).reshape(shape)


def ln_fixed_epsilon(x, axis=-1, epsilon=1e-5):
    """Takes epsilon and ignores it: the careful kernel at 1e-5 whatever the check gives."""
    return ln_careful(x, axis)


def rms_nan_rows(x, axis=-1, epsilon=1e-5):
    """The careful kernel, but NaN throughout a row holding NaN or +-inf (where x / inf is +-0 at its finite
    entries)."""
    y = rms_careful(x, axis, epsilon)
    if x.size == 0:
        return y
    r, shape = _rows(x, axis)
    out = y.reshape(r.shape).copy()
    out[~np.isfinite(r.astype(np.float64)).all(axis=1)] = np.nan
    return out.reshape(shape)


def _along(x, axis):
    """x with `axis` moved last, as 2-D rows, and how to put the rows back."""
    a = axis % x.ndim
    moved = np.moveaxis(x, a, -1)
    return moved.reshape(-1, moved.shape[-1]), lambda r: np.moveaxis(r.reshape(moved.shape), -1, a)


def lp_careful(x, axis=-1, p="2"):
    """LpNormalization in binary64, each row scaled by its largest magnitude first (no square underflows or
    overflows), one rounding into x's format; 0 where the norm is 0."""
    if x.size == 0:
        return x.copy()
    r, back = _along(x, axis)
    v = r.astype(np.float64)
    with np.errstate(all="ignore"):
        big = np.abs(v).max(axis=1, keepdims=True, initial=0.0)
        finite = np.isfinite(big) & (big > 0)
        s = v / np.where(finite, big, 1.0)  # rows with NaN or +-inf entries: the formula as it stands
        norm = np.abs(s).sum(axis=1, keepdims=True) if str(p) == "1" else np.sqrt((s * s).sum(axis=1, keepdims=True))
        y = np.where(norm == 0, 0.0, s / norm)
    return back(y.astype(x.dtype))


def lp_squares_in_format(x, axis=-1, p="2"):
    """The L2 norm as sqrt(sum(x * x)) in x's own format: the squares of tiny rows underflow to 0, of large
    rows overflow to inf."""
    if x.size == 0:
        return x.copy()
    r, back = _along(x, axis)
    with np.errstate(all="ignore"):
        norm = np.abs(r).sum(axis=1, keepdims=True) if str(p) == "1" else np.sqrt((r * r).sum(axis=1, keepdims=True))
        y = np.where(norm == 0, np.zeros_like(r), r / norm)
    return back(y.astype(x.dtype))


def _reduced(x, axis):
    """x with the reduced axes (an int or a tuple) moved last and flattened, as 2-D rows, and how to put one
    value per row back with the reduced axes kept (keepdims)."""
    axes = tuple(a % x.ndim for a in ((axis,) if isinstance(axis, int) else axis))
    rest = [a for a in range(x.ndim) if a not in axes]
    moved = np.transpose(x, rest + list(axes))
    rows = moved.reshape(int(np.prod([x.shape[a] for a in rest], dtype=np.int64)), -1)
    kept = tuple(1 if a in axes else d for a, d in enumerate(x.shape))
    return rows, lambda v: v.reshape(kept)


def lse_without_max(x, axis=-1):
    """ReduceLogSumExp as log(sum(exp(x))) in x's own format, without the row maximum: exp overflows to inf
    (float32 from x = 89), and rows far below 0 underflow to log(0) = -inf."""
    r, back = _reduced(x, axis)
    with np.errstate(all="ignore"):
        return back(np.log(np.sum(np.exp(r), axis=1)).astype(x.dtype))


def lse_careful(x, axis=-1):
    """ReduceLogSumExp in binary64, the row maximum subtracted, one rounding into x's format; a row with +inf
    gives +inf, a row of -inf only -inf, a NaN NaN (IEEE arithmetic on the formula)."""
    r, back = _reduced(x, axis)
    v = r.astype(np.float64)
    with np.errstate(all="ignore"):
        m = np.max(v, axis=1, keepdims=True, initial=-np.inf)
        safe = np.where(np.isfinite(m), m, 0.0)
        y = np.log(np.sum(np.exp(v - safe), axis=1)) + safe[:, 0]
        y = np.where(np.isposinf(m[:, 0]), np.inf, y)
        y = np.where(np.isnan(v).any(axis=1), np.nan, y)
    return back(y.astype(x.dtype))


def _groups(x, num_groups):
    """GroupNormalization's rows: each sample's channels split into num_groups groups (a choice's name, "2")."""
    g = int(num_groups)
    return x.reshape(x.shape[0] * g, -1)


def gn_careful(x, axis=(1,), epsilon=1e-5, num_groups="2"):
    """ln_careful over each sample's groups of channels."""
    if x.size == 0:
        return x.copy()
    return ln_careful(_groups(x, num_groups), -1, epsilon).reshape(x.shape)


def gn_naive_variance(x, axis=(1,), epsilon=1e-5, num_groups="2"):
    """ln_naive_variance (E[x^2] - E[x]^2 in float32) over each sample's groups of channels."""
    if x.size == 0:
        return x.copy()
    return ln_naive_variance(_groups(x, num_groups), -1, epsilon).reshape(x.shape)


def gn_one_group(x, axis=(1,), epsilon=1e-5, num_groups="2"):
    """Careful, but over each sample's channels together, whatever num_groups says (LayerNormalization from axis 1)."""
    if x.size == 0:
        return x.copy()
    return ln_careful(x.reshape(x.shape[0], -1), -1, epsilon).reshape(x.shape)


# BatchNormalization in inference form, one channel: y = scale (x - input_mean) / sqrt(input_var + epsilon) + B
def bn_careful(x, scale=1.0, B=0.0, input_mean=0.0, input_var=1.0, epsilon=1e-5):
    """binary64 throughout, one rounding into x's format: within 2^-50 of the value, so correctly rounded but
    where B cancels the rest."""
    v = x.astype(np.float64)
    with np.errstate(all="ignore"):
        y = np.float64(scale) * (v - np.float64(input_mean)) / np.sqrt(np.float64(input_var) + np.float64(epsilon))
        return (y + np.float64(B)).astype(x.dtype)


def bn_in_format(x, scale=1.0, B=0.0, input_mean=0.0, input_var=1.0, epsilon=1e-5):
    """Every parameter and step in x's own format (float16 arithmetic for a float16 x)."""
    t = x.dtype.type
    with np.errstate(all="ignore"):
        return (t(scale) * (x - t(input_mean)) / np.sqrt(t(input_var) + t(epsilon)) + t(B)).astype(x.dtype)


def bn_folded_float32(x, scale=1.0, B=0.0, input_mean=0.0, input_var=1.0, epsilon=1e-5):
    """The usual inference folding, in float32: k = scale / sqrt(var + eps), c = B - mean k, y = x k + c. Where
    x k cancels c the rounding of k and c is many ULPs of y."""
    f = np.float32
    k = f(scale) / np.sqrt(f(input_var) + f(epsilon))
    c = f(B) - f(input_mean) * k
    with np.errstate(all="ignore"):
        return (x.astype(f) * k + c).astype(x.dtype)


def bn_epsilon_after_sqrt(x, scale=1.0, B=0.0, input_mean=0.0, input_var=1.0, epsilon=1e-5):
    """binary64, but epsilon added to the standard deviation instead of the variance."""
    v = x.astype(np.float64)
    with np.errstate(all="ignore"):
        y = np.float64(scale) * (v - np.float64(input_mean)) / (np.sqrt(np.float64(input_var)) + np.float64(epsilon))
        return (y + np.float64(B)).astype(x.dtype)


# The affine step after the normalization (Scale and B, each one value over the row): y = scale z + B
def _careful_z(x, axis, epsilon):
    """ln_careful's normalized rows in binary64, before any rounding, and the shape to put them back in."""
    r, shape = _rows(x, axis)
    v = r.astype(np.float64)
    c = v - v.mean(axis=1, keepdims=True)
    c = c - c.mean(axis=1, keepdims=True)
    return c / np.sqrt((c * c).mean(axis=1, keepdims=True) + np.float64(epsilon)), shape


def ln_affine_careful(x, axis=-1, epsilon=1e-5, scale=1.0, B=0.0):
    """binary64 throughout, scale and B applied in binary64, one rounding into x's format."""
    if x.size == 0:
        return x.copy()
    z, shape = _careful_z(x, axis, epsilon)
    return (z * np.float64(scale) + np.float64(B)).astype(x.dtype).reshape(shape)


def ln_affine_in_format(x, axis=-1, epsilon=1e-5, scale=1.0, B=0.0):
    """The normalization careful and rounded into x's format, then scale and B applied in x's format (two more
    roundings: where scale z cancels B the first one's error is many ULPs of y)."""
    if x.size == 0:
        return x.copy()
    z, shape = _careful_z(x, axis, epsilon)
    t = x.dtype.type
    zf = z.astype(x.dtype)
    return (zf * t(scale) + t(B)).astype(x.dtype).reshape(shape)


def ln_bias_ignored(x, axis=-1, epsilon=1e-5, scale=1.0, B=0.0):
    """Takes B and ignores it: scale z, carefully."""
    return ln_affine_careful(x, axis, epsilon, scale, 0.0)


def rms_affine_careful(x, axis=-1, epsilon=1e-5, scale=1.0):
    """rms_careful's binary64 value times scale in binary64, one rounding."""
    if x.size == 0:
        return x.copy()
    y, shape = _rms64(x, axis, epsilon)
    with np.errstate(all="ignore"):
        return (y * np.float64(scale)).astype(x.dtype).reshape(shape)


def gn_affine_careful(x, axis=(1,), epsilon=1e-5, num_groups="2", scale=1.0, B=0.0):
    """ln_affine_careful over each sample's groups of channels."""
    if x.size == 0:
        return x.copy()
    return ln_affine_careful(_groups(x, num_groups), -1, epsilon, scale, B).reshape(x.shape)
