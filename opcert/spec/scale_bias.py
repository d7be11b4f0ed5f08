"""DirectML's ScaleBias, rounded in the tensor's type: the declared variant of the element-wise descriptors' g(x) =
x * scale + bias (the `+rounded` variant of a standard: `--standard directml+rounded`).

The document defines g as "applying the function g(x) = x * scale + bias to each input element prior to computing
this operator", and names no intermediate type: opcert's default reading is the exact real (spec.elementwise). In
the variant, g(x) is first rounded to the nearest value of the tensor's type (ties to even, overflowing to +-inf),
then f is applied to that value exactly: f(RN_T(x * scale + bias)), one rounding of the exact sum, as a fused
multiply-add in the tensor's type gives it.

Which one a DirectML implementation follows is not published (DirectML's shaders are not open). What is known: the
element-wise descriptors run as GPU shaders, whose arithmetic on a float32 tensor is float32 arithmetic, the
multiply-add fused or not (HLSL's mad may be either); so for float32 tensors opcert expects the rounded variant
(within the unfused form's second rounding), and a kernel that meets the exact reading is more accurate than
DirectML's own can be. For float16 tensors DirectML documents that float16 math may be carried out at a higher
precision (min16float: the driver's choice), so a float16 tensor's g may be rounded in float32 or in float16: the
variant rounded in float16 is the lower bound of what such a driver does, the exact reading the upper. Both are
measurable here against any kernel, and they tell apart a kernel that applies the scale-bias in the tensor's type
from one that applies it exactly (tests/test_scale_bias_rounded.py).

The variant's properties are the standard's own (a rounding to nearest is non-decreasing and odd, so f's
monotonicity, oddness and evenness under the standard's conditions carry over): they are decided on a target's
outputs. opcert's z3 provers model the exact reading, so `opcert prove` skips the variant for opcert's code, saying
so."""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from opcert.expr.numpy_eval import fma
from opcert.formats import to_format

PLAIN = {"scale": Fraction(1), "bias": Fraction(0)}
WHY_NOT_PROVED = (
    "the {name} variant rounds x * scale + bias in the tensor's type, which opcert's z3 models (the exact reading) "
    "do not: its properties are decided on outputs (opcert accuracy {op} --standard {name} --target opcert)"
)


def rounded_argument(x: np.ndarray, attrs: dict, fmt) -> np.ndarray:
    """RN_fmt(x * scale + bias) for every element of x (an array of fmt's dtype): one rounding of the exact value.
    x * scale is 0 at a zero scale for every x, +-inf included (the exact reading's clamp, spec.declarations
    .finite_where_zero); NaN stays NaN."""
    scale, bias = float(attrs["scale"]), float(attrs["bias"])
    with np.errstate(invalid="ignore"):
        x64 = np.asarray(x).astype(np.float64)
    if scale == 0:
        return np.where(np.isnan(x64), x64, to_format(np.full(x64.shape, bias), fmt)).astype(fmt.dtype)
    if fmt.name == "float64":
        return fma(x64, np.float64(scale), np.float64(bias)).astype(np.float64)
    s, lo = sum_parts(x64, scale, bias)
    with np.errstate(invalid="ignore", over="ignore"):
        r = to_format(s, fmt)
        # the sum rounds as s does (|lo| is at most half s's binary64 ULP: no midpoint of fmt lies strictly between
        # them) but where s is itself a midpoint of fmt, halfway between the values its two binary64 neighbours
        # round to (past the largest finite value, 2^(emax + 1) stands for the infinity: the overflow threshold is
        # such a midpoint): then as the sum's side of it, lo's
        below = to_format(np.nextafter(s, -np.inf), fmt).astype(np.float64)
        above = to_format(np.nextafter(s, np.inf), fmt).astype(np.float64)
        edge = 2.0 ** (fmt.emax + 1)
        b2 = np.where(np.isinf(below), np.copysign(edge, below), below)
        a2 = np.where(np.isinf(above), np.copysign(edge, above), above)
        midpoint = np.isfinite(lo) & (lo != 0) & (below != above) & (s == (b2 + a2) / 2)
    return np.where(midpoint, np.where(lo > 0, above, below), r.astype(np.float64)).astype(fmt.dtype)


def sum_parts(x64: np.ndarray, scale: float, bias: float) -> tuple[np.ndarray, np.ndarray]:
    """(s, lo) for binary32 (or narrower) x given in binary64: s = x * scale + bias rounded once in binary64, and lo
    its error (Knuth's two-sum: x * scale is exact, 48 bits at most), s + lo the exact sum; lo is NaN at +-inf."""
    with np.errstate(invalid="ignore", over="ignore"):
        p = x64 * scale
        s = p + bias
        bb = s - p
        return s, (p - (s - bb)) + (bias - bb)


def is_plain(attrs: dict) -> bool:
    """Whether the scale-bias is 1, 0 (the plain function)."""
    return attrs["scale"] == 1 and attrs["bias"] == 0


def has_scale_bias(standard) -> bool:
    """Whether the standard is a DirectML element-wise descriptor's with a ScaleBias (spec.elementwise)."""
    return standard.attribute_names.get("scale") == "ScaleBias.Scale"


def plain_attributes(attrs: dict) -> dict:
    """The attributes with the scale-bias taken out (scale 1, bias 0): f alone, at the rounded argument."""
    return {**attrs, **PLAIN}
