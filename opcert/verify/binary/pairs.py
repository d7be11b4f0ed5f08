"""Which pairs a binary operator's check runs: the sampled pairs of any format, and the blocks of every pair of a
16-bit format.

Sampled (`sampled_pairs`): every pair of the format's special and landmark values (zeros, infinities, NaN, +-1 and
its neighbours, the least subnormal, the least normal, the largest finite, small integers and halves), then random
pairs in strata where pow's kernels go wrong: bases of every magnitude with exponents in [-8, 8]; integer exponents
with bases of both signs; bases next to 1 with large exponents (the error of log(x) times y); results next to the
format's overflow and underflow thresholds (subnormal results); roots (exponents 1/2, 1/3, 1/4, ...).

Exhaustive (`blocks`): every value of the format in increasing order (-0 before +0, NaNs last) as x, against 64
consecutive values of y per block: 4,194,304 pairs as a (64, 65536) grid, y down the rows, so that the properties
in x read along a row and those in y down a column (and across blocks, the previous block's last row).
"""

from __future__ import annotations

import math

import numpy as np

from opcert.verify.ulp import ordinals

BLOCK_ROWS = 64  # values of y per block of the exhaustive sweep


def all_values(fmt) -> np.ndarray:
    """Every bit pattern of the 16-bit format, numbers in increasing order (-0 before +0), NaNs last."""
    bits = np.arange(1 << 16, dtype=np.uint16)
    v = bits.view(fmt.dtype)
    with np.errstate(invalid="ignore"):
        o = ordinals(v, fmt).astype(np.float64) * 2 + np.signbit(v.astype(np.float64)) * -1
    return v[np.argsort(o, kind="stable")]


def landmarks(fmt) -> np.ndarray:
    """The special and landmark values of fmt, both signs, NaN once."""
    tiny = float(fmt.min_subnormal)
    normal = 2.0**fmt.emin
    big = float(fmt.max_finite)
    eps = 2.0 ** (1 - fmt.p)
    pos = [0.0, math.inf, 1.0, 1 - eps / 2, 1 + eps, 0.5, 2.0, 3.0, 2.5, 0.25, 4.0, 10.0, tiny, normal, big]
    v = np.array([s * p for p in pos for s in (1.0, -1.0)] + [math.nan], dtype=np.float64)
    return v.astype(fmt.dtype)


def sampled_pairs(fmt, samples: int, seed: int) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """(label, x, y) batches of fmt's dtype: the landmark grid, then `samples` random pairs in strata."""
    rng = np.random.default_rng(seed)
    lm = landmarks(fmt)
    gx, gy = np.meshgrid(lm, lm)
    out = [("every pair of special and landmark values", gx.ravel(), gy.ravel())]
    lo, hi = fmt.emin - fmt.p + 1, fmt.emax
    n = max(1, samples // 7)

    def mag(k, a=lo, b=hi):
        return np.exp2(rng.uniform(a, b, k)) * rng.choice([-1.0, 1.0], k)

    def cast(a):
        with np.errstate(all="ignore"):
            return np.asarray(a, dtype=np.float64).astype(fmt.dtype)

    def add(label, x, y):
        out.append((label, cast(x), cast(y)))

    add("bases of every magnitude, exponents in [-8, 8]", np.abs(mag(n)), rng.uniform(-8, 8, n))
    add("integer exponents in [-20, 20], bases of both signs", mag(n, -12, 12), rng.integers(-20, 21, n))
    near = 1 + rng.integers(-64, 65, n) * 2.0 ** (1 - fmt.p)
    add("bases next to 1, large exponents", near, mag(n, 0, min(hi, 30)))
    add("roots: exponents 1/k and -1/k", np.abs(mag(n, -20, 20)), rng.choice([-1.0, 1.0], n) / rng.integers(2, 9, n))
    xb = np.exp2(rng.uniform(-12, 12, n))
    xb = np.where(np.abs(np.log2(xb)) < 2.0**-4, 2.0, xb)
    with np.errstate(all="ignore"):
        over = (hi + 1) / np.log2(xb) * (1 + rng.uniform(-(2.0**-6), 2.0**-6, n))
        under = (lo - 1) / np.log2(xb) * (1 + rng.uniform(-(2.0**-5), 2.0**-5, n))
    add("results next to the overflow threshold", xb, over)
    add("results next to the underflow threshold (subnormal results)", xb, under)
    add("negative bases, exponents in [-8, 8] (NaN unless an integer)", -np.abs(mag(n, -10, 10)), rng.uniform(-8, 8, n))
    return out


def monotone_runs(fmt, seed: int, rows: int = 32, run: int = 512) -> tuple[np.ndarray, np.ndarray]:
    """A grid for the properties in x: `rows` random exponents against a run of `run` consecutive values of the
    format from a random start in each of its binades of interest (x ascending along the row)."""
    rng = np.random.default_rng(seed + 1)
    values = all_values(fmt) if fmt.bits == 16 else None
    if values is not None:
        with np.errstate(invalid="ignore"):
            finite = values[np.isfinite(values.astype(np.float64))]
        start = rng.integers(0, finite.size - run)
        xs = finite[start : start + run]
        xs = np.concatenate([xs, finite[finite.size // 2 - run // 2 : finite.size // 2 + run // 2]])
    else:
        centers = np.exp2(rng.uniform(-20, 20, 2)).astype(fmt.dtype)
        xs = np.concatenate([_run_from(c, run, fmt) for c in centers] + [_run_from(fmt.dtype.type(0), run, fmt)])
    ys = np.concatenate([rng.uniform(-6, 6, rows - 4), [2.0, 3.0, -1.0, 0.5]]).astype(fmt.dtype)
    return _ascending(xs, fmt), _ascending(ys, fmt)


def _ascending(v, fmt) -> np.ndarray:
    """v's distinct values in increasing order: every grid is read along rows and down columns."""
    return np.unique(v.astype(np.float64)).astype(fmt.dtype)


def _run_from(start, run: int, fmt) -> np.ndarray:
    bits = np.array([start], dtype=fmt.dtype).view(fmt.uint)[0]
    return (np.arange(run, dtype=fmt.uint) + bits).view(fmt.dtype)


def exponent_runs(fmt, seed: int, cols: int = 256, run: int = 256) -> tuple[np.ndarray, np.ndarray]:
    """A grid for the properties in y: `cols` bases (half in (0, 1), half above 1) against `run` consecutive values
    of y around 1 (y ascending down the column)."""
    rng = np.random.default_rng(seed + 2)
    xs = np.concatenate([rng.uniform(0.01, 0.99, cols // 2), np.exp2(rng.uniform(0.01, 8, cols // 2))])
    ys = _run_from(fmt.dtype.type(1.0), run, fmt)
    ys = np.concatenate([_run_from(fmt.dtype.type(-1.0), run // 2, fmt)[::-1], ys])
    return _ascending(xs.astype(fmt.dtype), fmt), _ascending(ys, fmt)
