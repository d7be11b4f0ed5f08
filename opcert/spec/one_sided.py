"""One-sided decisions for results that sit exactly on a rounding midpoint.

ScaledTanh at beta = 0.5 sends every binary32 subnormal x to tanh(x / 2), and
x / 2 is a binary32 midpoint: tanh(t) differs from t by t^3/3, far below any
fixed precision, so no ball around t decides the rounding (it used to send
~2^24 inputs, one by one, to the exact path: a 28-minute sweep). What decides
it is the side: 0 < t - tanh(t) < t^3/3 for t > 0 (odd for t < 0).

`evaluate` describes an expression as (m, r, side): the exact value is m
(side 0, r 0), or lies strictly on `side` of m within r. It knows what keeps
that description exact: inputs and binary32 attributes, negation, products
whose binary64 result is exact (checked with an error-free product), and
tanh of a tiny exact argument. Everything else is `ok = False` (the exact
path decides it). `decide` rounds: where m is a midpoint of the target format
and every binary64 value in (m, m + side r] rounds to one value, that value is
the correctly rounded result.
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np

from ..expr import Expr

SPLIT = 134217729.0          # 2^27 + 1: Veltkamp's splitter for binary64
TANH_TINY = 2.0 ** -26       # below it, tanh(t) = t - t^3/3 + ..., t^3/3 <= |t| 2^-53
SUPPORTED = frozenset({"var", "attr", "const", "neg", "mul", "tanh"})


def supported(e: Expr) -> bool:
    return e.op in SUPPORTED and all(supported(a) for a in e.args)


def _product_exact(a, b):
    """a * b and whether binary64 holds it exactly (Dekker's error-free product)."""
    p = a * b
    with np.errstate(all="ignore"):
        c = SPLIT * a
        ah = c - (c - a)
        al = a - ah
        c = SPLIT * b
        bh = c - (c - b)
        bl = b - bh
        err = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    safe = (np.abs(a) < 2.0 ** 990) & (np.abs(b) < 2.0 ** 990) & ((p == 0) | (np.abs(p) > 2.0 ** -960))
    return p, safe & (err == 0)


def evaluate(e: Expr, x: np.ndarray, attrs: dict[str, float]):
    """(m, r, side, ok) over the binary64 array x."""
    with np.errstate(all="ignore"):
        m, r, s, ok = _ev(e, x, attrs)
        shape = x.shape
        return (np.broadcast_to(m, shape), np.broadcast_to(r, shape), np.broadcast_to(s, shape),
                np.broadcast_to(ok, shape) & np.isfinite(np.broadcast_to(m, shape)))


def _ev(e: Expr, x, attrs):
    zero = np.zeros(x.shape)
    if e.op == "var":
        return x, zero, zero, np.ones(x.shape, dtype=bool)
    if e.op == "attr":
        return np.float64(attrs[e.name]), 0.0, 0.0, True
    if e.op == "const":
        exact = e.name is None and Fraction(float(e.value)) == e.value
        return np.float64(float(e.value) if exact else 0.0), 0.0, 0.0, exact
    if e.op == "neg":
        m, r, s, ok = _ev(e.args[0], x, attrs)
        return -m, r, -s, ok
    if e.op == "mul":
        (ma, ra, sa, oka), (mb, rb, sb, okb) = _ev(e.args[0], x, attrs), _ev(e.args[1], x, attrs)
        exact_a = (sa == 0) & (ra == 0)
        exact_b = (sb == 0) & (rb == 0)
        p, exact = _product_exact(np.asarray(ma, dtype=np.float64), np.asarray(mb, dtype=np.float64))
        # one exact factor c times a one-sided value: c m, on side sign(c) s, within |c| r
        r = np.where(exact_a, np.abs(ma) * rb, np.abs(mb) * ra) * (1 + 2.0 ** -50)
        s = np.where(exact_a, np.sign(ma) * sb, np.sign(mb) * sa)
        zero = (exact_a & (ma == 0)) | (exact_b & (mb == 0))
        ok = oka & okb & (exact_a | exact_b) & (exact | zero)
        return p, np.where(zero, 0.0, r), np.where(zero, 0.0, s), ok
    if e.op == "tanh":
        m, r, s, ok = _ev(e.args[0], x, attrs)
        t = np.asarray(m, dtype=np.float64)
        ok = ok & (s == 0) & (r == 0) & (np.abs(t) < TANH_TINY)
        # t - tanh(t) is in (0, t^3/3) for t > 0; |t|^3/3 <= |t| t^2, never below the smallest double
        gap = np.maximum(np.abs(t) * (t * t), 2.0 ** -1074)
        return t, np.where(t == 0, 0.0, gap), -np.sign(t), ok
    return np.float64(0.0), 0.0, 0.0, False


def decide(m, r, side, ok, fmt):
    """(decided mask, rounded values, a binary64 value strictly on the decided side of m
    that rounds the same: two binary64 steps past m). Formats of at most 24 bits."""
    from ..formats import round_float64
    with np.errstate(all="ignore"):
        d = np.where(side > 0, np.inf, -np.inf)
        q1 = np.nextafter(m, d)
        q2 = np.nextafter(q1, d)
        q3 = np.nextafter(q2, d)
        far = np.nextafter(m + side * r, d)
        below, above = round_float64(np.nextafter(m, -np.inf), fmt), round_float64(np.nextafter(m, np.inf), fmt)
        midpoint = (below != above) | (np.signbit(below) != np.signbit(above))
        val = round_float64(q1, fmt)
        same = ((round_float64(q3, fmt) == val) & (round_float64(far, fmt) == val)
                & (np.signbit(round_float64(far, fmt)) == np.signbit(val)))
        # binary64 steps near m are far finer than fmt's midpoints: none lies in (m, q1)
        good = ok & (side != 0) & midpoint & same & (np.abs(m) >= 2.0 ** -1000) & (r <= np.abs(m) * 2.0 ** -40)
        good &= (m - m == 0)
    return good, val, q2
