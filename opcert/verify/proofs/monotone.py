"""Monotonicity of the implementation in a float format, by structure.

Every binary64 operation returns round(exact result), and rounding is a
non-decreasing function; the primitives are monotone by their platform
contract (tests/test_contracts.py). So a composition of non-decreasing and
non-increasing steps is monotone in binary64 exactly as it is over the reals,
rounding included, provided the sign facts the composition rules need (a
product of two increasing factors increases when both are non-negative) hold
for every value the computation can take. Those facts come from rounding-aware
interval enclosures (interval.eval_rounded).

The inputs are split into ranges of consecutive values of the format (pieces
share their end values, so every pair of adjacent inputs lies in one piece). A
piece where a branch condition or a sign is undecided is split; a piece of at
most SMALL values is evaluated on the code, every adjacent pair compared. A
piece where every condition is decided and the rules still cannot conclude
(x / (1 + x): a quotient of two increasing terms) ends the attempt: `unknown`.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
from flint import arb, ctx

from opcert.expr.fold import Domain, element_wise_only, fold
from opcert.expr.pow_record import is_odd_integer
from opcert.formats import ordinal
from opcert.numerics.exact import Undecided, Undefined, arb_to_fractions
from opcert.verify.accuracy.inputs import from_ordinal
from opcert.verify.proofs.common import record
from opcert.verify.proofs.interval import RoundedDomain, arb_interval

SMALL = 64


class Split(Exception):
    """A condition or a sign is undecided on this piece: smaller pieces may decide it."""


class Stuck(Exception):
    """The rules cannot conclude although everything is decided (the piece and why)."""


def _comb(a, b):
    """Direction of a sum of two terms with directions a and b (0: constant)."""
    if a == 0:
        return b
    if b == 0 or a == b:
        return a
    raise Stuck("a sum of an increasing and a decreasing term")


def _sign(v) -> int:
    if v >= 0:
        return 1
    if v <= 0:
        return -1
    raise Split("sign")


def _mul(va, da, vb, db):
    """Direction of a*b from the factors' enclosures and directions."""
    if da == 0 and db == 0:
        return 0
    sa, sb = _sign(va), _sign(vb)
    # |a| moves in direction sa*da; the product is sa*sb*|a||b|
    return sa * sb * _comb_mag(sa * da, sb * db)


def _point(v) -> Fraction | None:
    """The value of an enclosure that is one point (an Arb ball of radius 0, a real_monotone.Span), else None."""
    if isinstance(v, arb):
        return arb_to_fractions(v)[0] if v.is_exact() and v.is_finite() else None
    return v.lo if v.lo == v.hi and isinstance(v.lo, Fraction) else None


def _ends(v) -> tuple:
    """The ends of an enclosure (an Arb ball or a real_monotone.Span) as rationals (or +-inf)."""
    if isinstance(v, arb):
        if not v.is_finite():
            return -float("inf"), float("inf")
        return arb_to_fractions(v)
    return v.lo, v.hi


def _pieces(p) -> str:
    return ", ".join(f"[{float(a)}, {float(b)}] {'increasing' if d > 0 else 'decreasing'}" for a, b, d in p.pieces)


def _comb_mag(a, b):
    if a == 0:
        return b
    if b == 0 or a == b:
        return a
    raise Stuck("a product (or quotient) of a growing and a shrinking magnitude")


class DirectionDomain(Domain):
    """(enclosure, direction) of each node over the input piece: +1 non-decreasing, -1 non-increasing, 0
    independent of x. The enclosures are `inner`'s (a domain of enclosures over the piece: RoundedDomain for
    the code, real_monotone.SpanDomain for the exact definition), computed once per node from the
    children's. Split where a sign or a branch is undecided on the piece; Stuck where the rules cannot
    conclude."""

    def __init__(self, inner: Domain):
        self.inner = inner

    def var(self, e):
        return self.inner.var(e), 1

    def attr(self, e):
        return self.inner.attr(e), 0

    def const(self, e):
        return self.inner.const(e), 0

    def select(self, e, walk):
        try:
            c = fold(e.args[0], self.inner)
        except Undecided:
            raise Split("a branch condition") from None
        return walk(e.args[1] if c else e.args[2])

    def isnan(self, e, walk):
        raise Stuck("no rule for isnan")

    def compare(self, op, a, b):
        raise Stuck(f"no rule for {op}")

    def connective(self, op, args):
        raise Stuck(f"no rule for {op}")

    reduction = element_wise_only

    def primitive(self, p, a, node=None):
        if p.increasing is None:
            v = self.inner.primitive(p, a[0])
            if a[1] == 0:
                return v, 0
            lo, hi = _ends(a[0])
            d = p.piece_direction(lo, hi)
            if d is not None:
                return v, d * a[1]
            if any(lo <= b and a_ <= hi for a_, b, _ in p.pieces):
                raise Split(f"{p.name}'s argument across the end of a monotone piece")
            raise Stuck(f"{p.name} is monotone nowhere here (its monotone pieces: {_pieces(p)})")
        v = self.inner.primitive(p, a[0])
        return v, a[1] if p.increasing else -a[1]

    def power(self, a, b, node=None):
        (va, da), (vb, db) = a, b
        if db != 0:
            raise Stuck("pow with an exponent that depends on x")
        v = self.inner.power(va, vb, node)  # Split or Undecided outside pow's domain, at the pole
        q = _point(vb)
        if q is None:
            raise Stuck("pow with an exponent that is not one value")
        if da == 0 or q == 0:
            return v, 0
        # |a|^q grows with |a| for q > 0, shrinks for q < 0; on a <= 0 (an integer q) |a| moves against a, and an
        # odd power's sign turns that back
        d = 1 if q > 0 else -1
        if _sign(va) < 0 and not is_odd_integer(q):
            d = -d
        return v, d * da

    def arithmetic(self, op, args, node=None):
        v = self.inner.arithmetic(op, [a[0] for a in args])
        if op == "neg":
            return v, -args[0][1]
        if op == "abs":
            return v, _sign(args[0][0]) * args[0][1]
        if op in ("add", "min", "max"):
            return v, _comb(args[0][1], args[1][1])
        if op == "sub":
            return v, _comb(args[0][1], -args[1][1])
        if op == "mul":
            return v, _mul(args[0][0], args[0][1], args[1][0], args[1][1])
        if op == "div":
            (va, da), (vb, db) = args
            _sign(vb)
            if 0 in vb:
                raise Split("a divisor")
            return v, _mul(va, da, 1 / vb, -db)
        (va, da), (vb, db), (vc, dc) = args  # fma
        return v, _comb(_mul(va, da, vb, db), dc)


def direction(e, X, attrs, inner: Domain | None = None):
    """(enclosure of the computed values, direction) of e over the input ball X (DirectionDomain), with the
    enclosures of `inner` (default: RoundedDomain, the code's values)."""
    return fold(e, DirectionDomain(inner if inner is not None else RoundedDomain(X, attrs, 80)))


def prove_monotone(impl, attrs, fmt, run_code, lo_ord: int, hi_ord: int, budget: int = 10_000):
    """Is the code non-decreasing on the format's values with ordinals lo_ord..hi_ord?
    ('proved', pieces) / ('refuted', (x1, x2, y1, y2)) / ('unknown', why).
    run_code(xs) runs the implementation on an array of the format. It stops after `budget` pieces,
    never after a time: the verdict does not depend on the host's load."""
    out = _prove_monotone(impl, attrs, fmt, run_code, lo_ord, hi_ord, budget)
    record("monotone", out, budget)
    return out


def _prove_monotone(impl, attrs, fmt, run_code, lo_ord: int, hi_ord: int, budget: int):
    saved = ctx.prec
    ctx.prec = 80
    try:
        stack = [(lo_ord, hi_ord)]
        pieces = 0
        while stack:
            a, b = stack.pop()
            pieces += 1
            if pieces > budget:
                return "unknown", f"its budget of {budget:,} pieces did not cover the inputs"
            if b - a <= SMALL:
                xs = from_ordinal(np.arange(a, b + 1), fmt)
                ys = np.asarray(run_code(xs), dtype=np.float64)
                bad = np.nonzero(~(ys[:-1] <= ys[1:]))[0]
                if bad.size:
                    i = int(bad[0])
                    return "refuted", (float(xs[i]), float(xs[i + 1]), float(ys[i]), float(ys[i + 1]))
                continue
            xa, xb = (Fraction(float(v)) for v in from_ordinal(np.array([a, b]), fmt).astype(np.float64))
            try:
                _, d = direction(impl, arb_interval(xa, xb), attrs)
                if d >= 0:
                    continue
                return "unknown", f"the code decreases structurally on [{float(xa)!r}, {float(xb)!r}]"
            except (Split, Undecided, Undefined, ZeroDivisionError):
                pass
            except Stuck as exc:
                return "unknown", f"on [{float(xa)!r}, {float(xb)!r}] the composition rules do not apply: {exc}"
            m = (a + b) // 2
            stack += [(m, b), (a, m)]
        return "proved", pieces
    finally:
        ctx.prec = saved


def find_decrease_on_code(run_code, fmt, centers=(), lo=None, hi=None):
    """A pair x1 < x2 with code(x1) > code(x2), from a scan of the format's
    values (log-spaced over both signs, and dense around `centers`); or None."""
    grid = [np.geomspace(2.0**-20, 2.0**20, 20001)]
    grid += [-g for g in grid] + [np.zeros(1)]
    for c in centers:
        grid.append(np.linspace(float(c) - 0.25, float(c) + 0.25, 4001))
    # and runs of consecutive values: a one-ULP decrease between neighbours (a rounded
    # factor inside a product) is invisible to a log-spaced grid
    starts = np.concatenate(
        [
            np.geomspace(2.0**-20, 2.0**20, 81),
            -np.geomspace(2.0**-20, 2.0**20, 81),
            np.asarray([float(c) for c in centers], dtype=np.float64),
        ]
    ).astype(fmt.dtype)
    for o in ordinal(starts):
        grid.append(from_ordinal(np.arange(int(o) - 1024, int(o) + 1024), fmt).astype(np.float64))
    xs = np.concatenate(grid).astype(fmt.dtype).astype(np.float64)
    xs = np.unique(xs[np.isfinite(xs)])
    if lo is not None:
        xs = xs[xs >= lo]
    if hi is not None:
        xs = xs[xs <= hi]
    ys = np.asarray(run_code(xs.astype(fmt.dtype)), dtype=np.float64)
    bad = np.nonzero(ys[:-1] > ys[1:])[0]
    if not bad.size:
        return None
    i = int(bad[np.argmax(ys[bad] - ys[bad + 1])])
    return float(xs[i]), float(xs[i + 1]), float(ys[i]), float(ys[i + 1])
