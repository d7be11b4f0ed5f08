"""Floating-point and integer formats, and exact rounding into them.

A format is described by its precision p (significand bits, hidden bit
included), its minimum normal exponent emin and maximum exponent emax, as in
IEEE 754. Rounding is always done here, from exact values (Fraction) or from
float64 arrays, never by a library cast: ml_dtypes converts float64 to
bfloat16 through float32, which rounds twice (1 + 2**-8 + 2**-30 becomes 1.0
instead of 1.0078125).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import ml_dtypes
import numpy as np

from opcert.errors import UsageError, choices


@dataclass(frozen=True)
class FloatFormat:
    name: str
    p: int  # precision in bits, hidden bit included
    emin: int  # exponent of the smallest normal number
    emax: int  # exponent of the largest finite number
    dtype: np.dtype
    bits: int  # storage width

    @property
    def kind(self) -> str:
        return "float"

    @property
    def max_finite(self) -> Fraction:
        return Fraction(2**self.p - 1) * Fraction(2) ** (self.emax - self.p + 1)

    @property
    def min_subnormal(self) -> Fraction:
        return Fraction(2) ** (self.emin - self.p + 1)

    @property
    def uint(self) -> np.dtype:
        return _UINT[self.bits]


_UINT = {b: np.dtype(f"uint{b}") for b in (8, 16, 32, 64)}


@dataclass(frozen=True)
class IntFormat:
    name: str
    dtype: np.dtype
    bits: int
    signed: bool

    @property
    def kind(self) -> str:
        return "int"

    @property
    def min(self) -> int:
        return -(2 ** (self.bits - 1)) if self.signed else 0

    @property
    def max(self) -> int:
        return 2 ** (self.bits - 1) - 1 if self.signed else 2**self.bits - 1


FLOAT_FORMATS = {
    "float16": FloatFormat("float16", 11, -14, 15, np.dtype(np.float16), 16),
    "bfloat16": FloatFormat("bfloat16", 8, -126, 127, np.dtype(ml_dtypes.bfloat16), 16),
    "float32": FloatFormat("float32", 24, -126, 127, np.dtype(np.float32), 32),
    "float64": FloatFormat("float64", 53, -1022, 1023, np.dtype(np.float64), 64),
}
INT_FORMATS = {
    f"{'u' if not s else ''}int{b}": IntFormat(
        f"{'u' if not s else ''}int{b}", np.dtype(f"{'u' if not s else ''}int{b}"), b, s
    )
    for b in (8, 16, 32, 64)
    for s in (True, False)
}
FORMATS = {**FLOAT_FORMATS, **INT_FORMATS}
# Spellings people use, mapped to the canonical names.
_ALIASES = {
    "half": "float16",
    "fp16": "float16",
    "f16": "float16",
    "bf16": "bfloat16",
    "float": "float32",
    "single": "float32",
    "fp32": "float32",
    "f32": "float32",
    "double": "float64",
    "fp64": "float64",
    "f64": "float64",
}


def get_format(name) -> FloatFormat | IntFormat:
    """The format called `name` (a dtype name, alias, or a NumPy dtype)."""
    if isinstance(name, (FloatFormat, IntFormat)):
        return name
    if not isinstance(name, str):
        try:
            name = np.dtype(name).name
        except TypeError:
            name = str(name)
    key = _ALIASES.get(name.lower(), name.lower())
    if key not in FORMATS:
        raise UsageError(f"unknown dtype {name!r}; allowed: {choices(FORMATS)}")
    return FORMATS[key]


def not_values_of(values: dict, dtype: str) -> str | None:
    """Why the named values (binary32 attributes: floats or exact Fractions) cannot be given in dtype as they are:
    the first that is no value of it (beyond its range, or between two of its values), or None."""
    np_type = get_format(dtype).dtype
    for k, v in values.items():
        with np.errstate(over="ignore"):
            r = float(np.asarray(float(v)).astype(np_type))
        if not math.isfinite(r) or Fraction(r) != Fraction(v):
            return f"{k}={float(v)!r} is not a {dtype} value"
    return None


def format_of(array: np.ndarray) -> FloatFormat | IntFormat:
    return get_format(array.dtype)


# ---- exact rounding ----------------------------------------------------------


def round_fraction(q: Fraction, fmt: FloatFormat, negative_zero: bool = False, mode: str = "nearest") -> float:
    """Round an exact rational to `fmt`: to nearest with ties to even, or
    (mode "up"/"down") toward +inf/-inf.

    Returns a Python float holding the rounded value exactly (every value of the
    four formats is a binary64 value), or +-inf on overflow. An exact zero is
    returned as -0.0 when `negative_zero`.
    """
    # on the integers of q = num / den: the Fraction arithmetic this replaced was half the time of
    # the exact reference path (tests/test_formats_ulp.py checks it against MPFR, every mode)
    num, den = q.numerator, q.denominator
    if num == 0:
        return -0.0 if negative_zero else 0.0
    sign = -1 if num < 0 else 1
    num = abs(num)
    # floor(log2(num / den)) from the bit lengths, corrected by one comparison
    e = num.bit_length() - den.bit_length()
    if (den << e if e >= 0 else den) > (num if e >= 0 else num << -e):
        e -= 1
    s = max(e, fmt.emin) - fmt.p + 1  # the quantum is 2^s
    d = den << s if s >= 0 else den
    n, rem = divmod(num if s >= 0 else num << -s, d)
    if mode == "nearest":
        if 2 * rem > d or (2 * rem == d and n & 1):
            n += 1
    elif rem and ((mode == "up") == (sign > 0)):
        n += 1  # away from zero: up for positive values, down for negative ones
    # n < 2^(p+1): n * 2^s is exact in binary64 and math.ldexp gives it exactly
    t = fmt.emax - fmt.p + 1  # the largest finite value is (2^p - 1) * 2^t
    top = (1 << fmt.p) - 1
    if (n << (s - t) if s >= t else n) > (top if s >= t else top << (t - s)):
        if mode == "nearest" or (mode == "up") == (sign > 0):
            return sign * math.inf
        return sign * math.ldexp(top, t)
    if n == 0:
        return -0.0 if sign < 0 else 0.0
    return sign * math.ldexp(n, s)


def round_float64(y: np.ndarray, fmt: FloatFormat) -> np.ndarray:
    """Round float64 values to `fmt` (nearest, ties to even); float64 result.

    Exact: dividing by a power of two is exact, and np.rint rounds ties to even.
    NaN and infinities pass through; overflow gives infinity.
    """
    y = np.asarray(y, dtype=np.float64)
    if fmt.name == "float64":
        return y.copy()
    if fmt.name in ("float32", "float16"):
        # the CPU's conversion rounds to nearest even, subnormals, overflow and the sign of
        # zero included (to_format; tests/test_formats_ulp.py checks both against MPFR);
        # a NaN keeps its own bits, as below
        with np.errstate(over="ignore", invalid="ignore"):
            r = y.astype(fmt.dtype).astype(np.float64)
        return np.where(np.isnan(y), y, r)
    with np.errstate(invalid="ignore", over="ignore"):
        finite = np.isfinite(y)
        mag = np.where(finite, np.abs(y), 1.0)
        _, e2 = np.frexp(mag)  # mag = f * 2**e2 with f in [0.5, 1)
        e = np.maximum(e2 - 1, fmt.emin)  # exponent of the quantum's binade
        quantum = np.ldexp(1.0, (e - fmt.p + 1).astype(np.int32))
        r = np.rint(np.where(finite, y, 0.0) / quantum) * quantum
        r = np.where(np.abs(r) > float(fmt.max_finite), np.copysign(np.inf, y), r)
        # Keep the sign of zero results (a tiny negative value rounds to -0).
        r = np.where(r == 0, np.copysign(0.0, y), r)
    return np.where(finite, r, y)


def to_format(y: np.ndarray, fmt: FloatFormat) -> np.ndarray:
    """Round float64 values into an array of fmt's dtype, to nearest even.

    binary32 and binary16 casts round correctly (the CPU's conversion, and
    NumPy's double-to-half, both round to nearest even, subnormals included:
    tests/test_formats_ulp.py checks them against exact rounding); bfloat16
    goes through round_float64 because ml_dtypes' cast rounds twice."""
    if fmt.name in ("float16", "float32", "float64"):
        with np.errstate(over="ignore"):
            return np.asarray(y, dtype=np.float64).astype(fmt.dtype)
    return round_float64(y, fmt).astype(fmt.dtype)


# ---- bits and order -----------------------------------------------------------


def bits_of(x: np.ndarray) -> np.ndarray:
    fmt = format_of(x)
    return np.ascontiguousarray(x).view(fmt.uint) if fmt.kind == "float" else x


def from_bits(bits, fmt: FloatFormat) -> np.ndarray:
    return np.asarray(bits, dtype=fmt.uint).view(fmt.dtype)


def bits_differ(a: np.ndarray, b: np.ndarray, fmt) -> np.ndarray:
    """Where two arrays of one format's values (or their bit patterns) differ bit for bit, any NaN equal to
    any NaN: a NaN's payload is not judged (the replay check and the layout property compare this way)."""
    if fmt.kind != "float":
        return a != b
    ab, bb = a.view(fmt.uint), b.view(fmt.uint)
    out = ab != bb
    if not out.any():
        return out
    if out.ndim == 2:
        # the layout check's (calls, length) arrays of up to 10^7 elements, where NaN payloads often differ
        # in every row that holds a NaN input: only the rows with a difference are looked at
        r = np.flatnonzero(out.any(axis=1))
        with np.errstate(invalid="ignore"):
            both = np.isnan(ab[r].view(fmt.dtype)) & np.isnan(bb[r].view(fmt.dtype))
        out[r] &= ~both
        return out
    i = np.nonzero(out)
    with np.errstate(invalid="ignore"):
        both = np.isnan(ab[i].view(fmt.dtype)) & np.isnan(bb[i].view(fmt.dtype))
    out[tuple(j[both] for j in i)] = False
    return out


def hex_bits(value, fmt) -> str:
    """The bit pattern of one value of `fmt`, as 0x-prefixed hex of its width."""
    fmt = get_format(fmt)
    a = np.asarray([value]).astype(fmt.dtype)
    if fmt.kind == "int":
        return f"0x{int(a.view(f'uint{fmt.bits}')[0]):0{fmt.bits // 4}x}"
    return f"0x{int(a.view(fmt.uint)[0]):0{fmt.bits // 4}x}"


def ordinal(x: np.ndarray) -> np.ndarray:
    """Map finite floats to integers in the order of their values (as int64,
    object for float64): consecutive representable values differ by 1, and +0
    and -0 both map to 0."""
    fmt = format_of(x)
    b = bits_of(x).astype(np.uint64)
    sign_bit = np.uint64(1) << np.uint64(fmt.bits - 1)
    mag = b & (sign_bit - np.uint64(1))
    neg = (b & sign_bit) != 0
    if fmt.bits < 64:
        m = mag.astype(np.int64)
        return np.where(neg, -m, m)
    m = mag.astype(object)
    return np.where(neg, -m, m)
