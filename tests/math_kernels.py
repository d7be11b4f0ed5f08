"""Kernels of the element-wise math catalog as users write them, right and wrong, for
`--target math_kernels:NAME` (the issue's held-out shapes: a float formula where one rounding is needed)."""

import numpy as np

LOG2E = np.float32(1.4426950408889634)  # log2(e) rounded to binary32


def exp_as_exp2_in_float(x, **attrs):
    """e^x = 2^(x log2 e), the product rounded to binary32: its error grows with |x| (about |x| ULPs)."""
    with np.errstate(over="ignore"):
        return np.exp2(x * LOG2E).astype(x.dtype)


def exp_in_binary64(x, scale=1.0, bias=0.0):
    """The argument x * scale + bias in binary64 (exact for 16-bit x and binary32 scale; one rounding
    else), e^t in binary64, rounded once to x's type."""
    with np.errstate(over="ignore", invalid="ignore"):  # +-inf and NaN inputs
        return np.exp(x.astype(np.float64) * np.float64(scale) + np.float64(bias)).astype(x.dtype)


def exp_scale_bias_in_float16(x, scale=1.0, bias=0.0):
    """DirectML's ScaleBias done in the tensor's type: x * scale + bias rounded to float16 first."""
    with np.errstate(over="ignore", invalid="ignore"):  # +-inf and NaN inputs
        t = (x.astype(np.float16) * np.float16(scale) + np.float16(bias)).astype(np.float16)
        return np.exp(t.astype(np.float64)).astype(x.dtype)


def sign_nan_is_zero(x):
    """np.sign, but 0 at NaN (what torch.sign and ONNX Runtime's CPU Sign give here)."""
    y = np.sign(x)
    y[np.isnan(x)] = 0
    return y


def log_zero_below_domain(x, **attrs):
    """np.log, but 0 where x < 0 (a kernel that clamps its argument instead of giving NaN)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(x < 0, np.zeros_like(x), np.log(x)).astype(x.dtype)


def asinh_by_its_formula_in_float(x, **attrs):
    """asinh as DirectML's document writes it, ln(x + sqrt(x * x + 1)), in the tensor's type: below 0 the
    sum cancels (x + sqrt(x^2 + 1) -> 0), and x * x overflows above sqrt(max)."""
    with np.errstate(all="ignore"):
        return np.log(x + np.sqrt(x * x + x.dtype.type(1))).astype(x.dtype)


def atanh_by_its_formula_in_float(x, **attrs):
    """atanh as 0.5 ln((1 + x) / (1 - x)) in the tensor's type: near 0 the quotient rounds to 1 + O(u) and the
    logarithm keeps only that rounding."""
    with np.errstate(all="ignore"):
        one = x.dtype.type(1)
        return (x.dtype.type(0.5) * np.log((one + x) / (one - x))).astype(x.dtype)


def inverse_in_binary64(name):
    """NumPy's binary64 function `name` of x * scale + bias (binary64), rounded once to x's type."""

    def kernel(x, scale=1.0, bias=0.0):
        with np.errstate(all="ignore"):
            return getattr(np, name)(x.astype(np.float64) * np.float64(scale) + np.float64(bias)).astype(x.dtype)

    kernel.__name__ = kernel.__qualname__ = f"{name}_in_binary64"
    return kernel


arcsinh_in_binary64 = inverse_in_binary64("arcsinh")
arctanh_in_binary64 = inverse_in_binary64("arctanh")
arccosh_in_binary64 = inverse_in_binary64("arccosh")


def sin_in_binary64(x, **attrs):
    """NumPy's binary64 sine of x, rounded once to x's type (no scale-bias: x * 1 + 0 would turn -0 into +0)."""
    with np.errstate(invalid="ignore"):
        return np.sin(x.astype(np.float64)).astype(x.dtype)


PI32 = np.float32(np.pi)  # pi rounded to binary32: 8.7e-8 below pi


def sin_reduced_with_float_pi(x, **attrs):
    """sin of x reduced by a binary32 pi, in float32: k = rint(x / pi), r = x - k pi with PI32, then sin(r). The
    reduction's error k (pi - PI32) grows with |x|: any value at all past 1e7."""
    with np.errstate(all="ignore"):
        k = np.rint(x.astype(np.float32) / PI32)
        r = (x.astype(np.float32) - k * PI32).astype(np.float32)
        s = np.sin(r.astype(np.float64)).astype(np.float32)
        return np.where(np.fmod(k, 2) != 0, -s, s).astype(x.dtype)


def acosh_naive_in_float(x, **attrs):
    """acosh(x) = log(x + sqrt(x^2 - 1)) in the tensor's type: x^2 - 1 cancels next to 1 and overflows past 1.8e19."""
    with np.errstate(all="ignore"):
        t = x.astype(np.float32)
        return np.log(t + np.sqrt(t * t - np.float32(1))).astype(x.dtype)


def asin_nan_clamped(x, **attrs):
    """np.arcsin with its argument clamped to [-1, 1] first: pi/2 instead of NaN beyond 1."""
    return np.arcsin(np.clip(x, -1, 1)).astype(x.dtype)


def threshold_fmax(x, scale=1.0, bias=0.0, min=0.0):
    """DirectML's Threshold with np.fmax: a NaN input gives Min instead of NaN."""
    with np.errstate(invalid="ignore"):
        t = x.astype(np.float64) * np.float64(scale) + np.float64(bias)
        return np.fmax(t, np.float64(min)).astype(x.dtype)


def abs_not_even_at_minus_one(x, **attrs):
    """np.abs, but one ULP above 1 at x = -1: f(-1) != f(1), and every other pair (x, -x) the same bits."""
    one = np.ones((), dtype=x.dtype)
    return np.where(x == -1, np.nextafter(one, one + one), np.abs(x)).astype(x.dtype)


def clip_numpy(x, scale=1.0, bias=0.0, min=0.0, max=6.0):
    """np.clip of x * scale + bias: ONNX's Min(max, Max(x, min)), which is max everywhere where min > max, where
    DirectML's max(Min, min(x, Max)) is Min."""
    t = x.astype(np.float64) * np.float64(scale) + np.float64(bias)
    return np.clip(t, np.float64(min), np.float64(max)).astype(x.dtype)


def acos_in_binary64(x, **attrs):
    """np.arccos in binary64, rounded once to x's type: non-increasing on [-1, 1] (a monotone function, then a
    monotone rounding)."""
    with np.errstate(invalid="ignore"):  # NaN outside [-1, 1]
        return np.arccos(x.astype(np.float64)).astype(x.dtype)


def acos_up_at_half(x, **attrs):
    """acos_in_binary64, but 3 at x = 0.5 (acos(0.5) = pi/3 = 1.047...): above acos of the value just below 0.5, so
    the pair (that value, 0.5) rises, the one pair on [-1, 1] that breaks non-increasing (3 > acos(x) for every x
    above 0.5)."""
    y = acos_in_binary64(x)
    return np.where(x == 0.5, np.asarray(3, dtype=x.dtype), y).astype(x.dtype)


def cube_in_numpy(x, **attrs):
    """np.power(x, 3) in binary64, rounded once to x's type: NumPy's pow, which is not odd bit for bit where NumPy
    has its AVX-512 loop (pow(-a, 3) and -pow(a, 3) an ULP apart on a few percent of a)."""
    return np.power(x.astype(np.float64), 3.0).astype(x.dtype)
