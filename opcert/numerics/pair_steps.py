"""The correctly rounded outputs of a row of two, as steps of their difference (verify.tensor.pairs' sweep of
every pair of 16-bit values walks them, verify.tensor.pairs_kernel compiled).

A pair's exact outputs depend on d = a - b alone and rise with it (Softmax's output 0 is sigmoid(d),
LogSoftmax's ln sigmoid(d), Hardmax's a >= b), so each output's rounding in a format is a step function of d:
`steps` places every step beside binary64 numbers, enclosed in multiple precision (mpmath), once a format.
"""

from __future__ import annotations

import functools
from fractions import Fraction

import mpmath
import numpy as np

from opcert.formats import get_format


@functools.cache
def steps(op_name: str, fmt_name: str):
    """Where the rounded output 0 of a pair changes, as a function of d = a - b: output 0 is f(d) with f
    increasing (Softmax: sigmoid; LogSoftmax: ln sigmoid), so its rounding is a step function of d, stepping
    at tau_k = f^-1(mu_k) for each midpoint mu_k between consecutive values of the format in f's range.
    No tau_k is a binary64 number (each is irrational), so an exact binary64 difference d is below step k
    exactly when d <= F_k, the largest binary64 number below tau_k. A rounded difference (two bfloat16
    values far apart: d within half a binary64 ULP of the exact one) is decided only outside
    [F_k - 2 ULPs, F_k + 3 ULPs]. Returns (F, below_wide, above_wide, r): r_k the rounded output below
    step k (r_K above the last). tau_k at 200 bits (mpmath), more where that cannot place it beside its
    binary64 rounding; where tau_k lies within half a binary64 ULP above mu_k (ln sigmoid far below zero:
    tau = mu - ln(1 - e^mu)), F_k = mu_k. A second or two a format, once a process."""
    fmt = get_format(fmt_name)
    if op_name == "Hardmax":  # 1 where d >= 0 (-0 included: the first maximum wins), exactly
        f = np.array([-np.nextafter(0.0, 1.0)])
        return f, f - 2 * np.nextafter(0.0, 1.0), f + 3 * np.nextafter(0.0, 1.0), np.array([0.0, 1.0])
    with np.errstate(invalid="ignore"):
        v = np.unique(np.arange(1 << 16, dtype=np.uint16).view(fmt.dtype).astype(np.float64))
    if op_name == "Softmax":
        r = np.abs(v[(v >= 0) & (v <= 1)])  # sigmoid > 0 rounds to +0 at the bottom
    else:
        r = np.concatenate([v[(v < 0)], [-0.0]])  # -inf first; ln sigmoid < 0 rounds to -0 at the top
    with np.errstate(invalid="ignore"):
        mu = (r[:-1] + r[1:]) / 2  # exact: p + 1 bits
    if op_name != "Softmax":  # between -inf and the most negative value: the overflow threshold
        mu[0] = -float(fmt.max_finite + Fraction(2) ** (fmt.emax - fmt.p))
    floor = np.empty(mu.size)
    for k, m in enumerate(mu):
        prec = 200
        while True:
            with mpmath.workprec(prec):
                m_ = mpmath.mpf(float(m))
                tau = mpmath.log(m_) - mpmath.log1p(-m_) if op_name == "Softmax" else m_ - mpmath.log1p(-mpmath.exp(m_))
                t = float(tau)
                if mpmath.mpf(t) < tau or (op_name != "Softmax" and t == m):  # tau > mu: e^mu > 0
                    floor[k] = t
                    break
                if mpmath.mpf(t) > tau:
                    floor[k] = np.nextafter(t, -np.inf)
                    break
            prec *= 2
            if prec > 6400:  # tau_k a binary64 number: impossible (it is irrational); say so, not loop
                raise RuntimeError(
                    f"{op_name} {fmt_name}: step {k} (midpoint {m!r}) not separated from its "
                    f"binary64 rounding at 6400 bits"
                )
    below = floor
    for _ in range(2):
        below = np.nextafter(below, -np.inf)
    above = floor
    for _ in range(3):
        above = np.nextafter(above, np.inf)
    return floor, below, above, r
