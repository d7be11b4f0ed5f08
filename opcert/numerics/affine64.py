"""k (x - m) + b correctly rounded in binary64, for binary64 x and the exact real k given as a double-double
(BatchNormalization's float64 values: k = scale / sqrt(var + epsilon), m its mean, b its B).

x - m is exact as a two-sum (dh + dl), dh kh as a two-product (ph + pl, one fused multiply-add), ph + b as a
two-sum (sh + sl); the small terms sl + pl + dh kl + dl kh are summed in binary64 (t) and sh + t is split once
more into hi + lo exactly. hi is the rounding of hi + lo, and hi + lo is within E = 2^-99 (|ph| + |b|) + 2^-1070 of
the exact value: kh + kl within 2^-106 |k|, each of the three small products and three sums rounded once, each
term at most 2^-51 (|ph| + |b|) (bench/README.md derives it). hi is therefore the exact value's rounding wherever
hi + lo is farther than E from every rounding boundary of binary64: |lo| more than E from half the spacing on its
side (a quarter of hi's spacing below a power of two). The rest is `undecided`, and so is every input where a
transformation may not be exact (|ph| above 2^1020 or, but for an exact zero, below 2^-960) and every exact zero
(its sign is the formula's): the caller takes the exact value there."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
from mpmath import mp, mpf

from opcert.expr.fma_kernel import llvm_fma
from opcert.jit import numba

E_REL = 2.0**-99
E_ABS = 2.0**-1070


def _real(q: Fraction):
    return mpf(q.numerator) / q.denominator  # a binary32 value: exact at the caller's 240 bits


def coefficient(scale: Fraction, var: Fraction, eps: Fraction) -> tuple[float, float]:
    """scale / sqrt(var + eps) as kh + kl within 2^-106 of it (mpmath at 240 bits, each part rounded once)."""
    with mp.workprec(240):
        k = _real(scale) / mp.sqrt(_real(var) + _real(eps))
        kh = float(k)
        kl = float(k - mpf(kh))
    return kh, kl


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _affine(x, m, kh, kl, b, out, undecided):
    for i in range(x.size):
        xi = x[i]
        dh = xi - m
        bb = dh - xi
        dl = (xi - (dh - bb)) + (-m - bb)
        ph = dh * kh
        pl = llvm_fma(dh, kh, -ph)
        sh = ph + b
        bb = sh - ph
        sl = (ph - (sh - bb)) + (b - bb)
        t = sl + (pl + (dh * kl + dl * kh))
        hi = sh + t
        bb = hi - sh
        lo = (sh - (hi - bb)) + (t - bb)
        e = E_REL * (abs(ph) + abs(b)) + E_ABS
        ah = abs(hi)
        bits = np.float64(ah).view(np.uint64)
        expo = np.int64(bits >> np.uint64(52))
        # hi's spacing 2^(expo - 1075), a normal binary64 value from |hi| >= 2^-969 (below: undecided)
        u = np.uint64(max(expo - 52, 1) << 52).view(np.float64)
        side = u * 0.5
        if (bits & np.uint64((1 << 52) - 1)) == 0 and expo > 1 and (lo < 0.0) != (hi < 0.0) and lo != 0.0:
            side = u * 0.25  # below a power of two the spacing halves
        exact_ok = abs(ph) <= 2.0**1020 and (abs(ph) >= 2.0**-960 or dh == 0.0 or kh == 0.0)
        out[i] = hi
        undecided[i] = not (exact_ok and expo > 53 and side - abs(lo) > e)
    return out


def rounded(x: np.ndarray, m: float, kh: float, kl: float, b: float) -> tuple[np.ndarray, np.ndarray]:
    """(values, undecided) for the finite binary64 x (flat): values[i] is the correctly rounded k (x - m) + b
    wherever undecided[i] is False."""
    x = np.ascontiguousarray(x, dtype=np.float64)
    out, undecided = np.empty(x.size), np.empty(x.size, np.bool_)
    _affine(x, float(m), float(kh), float(kl), float(b), out, undecided)
    return out, undecided


def batch_normalization(x64: np.ndarray, attrs: dict):
    """BatchNormalization's float64 values (Standard.float64_rounded names this function: the declaration, imported
    with opcert, loads no numba): k = scale / sqrt(input_var + epsilon), m = input_mean, b = B."""
    kh, kl = coefficient(*(Fraction(attrs[k]) for k in ("scale", "input_var", "epsilon")))
    return rounded(x64, attrs["input_mean"], kh, kl, attrs["B"])
