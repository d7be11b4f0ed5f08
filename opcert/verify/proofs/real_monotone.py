"""Monotonicity of an exact definition over a half-line or the whole line, by structure.

The same composition rules as monotone.py (a sum of non-decreasing terms is
non-decreasing; a product of two non-negative non-decreasing factors is
non-decreasing; a monotone primitive keeps or reverses a direction), over the
reals: the sign facts come from interval enclosures whose ends may be +-inf
(exact rationals at finite ends; each primitive's value at its argument's
ends, by Arb, and its limits at +-inf). Used where z3's axioms do not reach:
Gelu is non-decreasing for x >= 0 because x and Phi(x) are both non-negative
and non-decreasing there.
"""

from __future__ import annotations

import math
from fractions import Fraction

from flint import arb, ctx

from opcert.expr import NAMED, pow_record
from opcert.expr.fold import OVERLOADED, Domain, by_operators, element_wise_only, fold
from opcert.expr.primitives import AT_INF
from opcert.numerics.exact import Undecided
from opcert.verify.proofs.interval import arb_to_fractions
from opcert.verify.proofs.monotone import Split, Stuck
from opcert.verify.proofs.monotone import direction as _direction

INF = math.inf


def _lo_mul(a, b):
    if a == 0 or b == 0:
        return Fraction(0)
    return a * b


class Span:
    """[lo, hi], ends exact Fractions or +-inf; `>= 0` means every value is."""

    def __init__(self, lo, hi):
        if lo > hi:
            raise Undecided("empty")
        self.lo, self.hi = lo, hi

    def __ge__(self, c):
        return self.lo >= c

    def __le__(self, c):
        return self.hi <= c

    def __contains__(self, c):
        return self.lo <= c <= self.hi

    def __neg__(self):
        return Span(-self.hi, -self.lo)

    def __add__(self, o):
        return Span(self.lo + o.lo, self.hi + o.hi)

    def __sub__(self, o):
        return self + (-o)

    def __mul__(self, o):
        ps = [_lo_mul(a, b) for a in (self.lo, self.hi) for b in (o.lo, o.hi)]
        return Span(min(ps), max(ps))

    def __rtruediv__(self, c):  # c / self, for the sign rules only
        if 0 in self:
            raise Split("a divisor")
        ends = [Fraction(0) if math.isinf(v) else c / v for v in (self.lo, self.hi)]
        return Span(min(ends), max(ends))


def _point(q) -> Span:
    return Span(Fraction(q), Fraction(q))


def _primitive(p, s: Span) -> Span:

    def at(v, side):
        if math.isinf(v):
            lim = AT_INF[p.name][0 if v < 0 else 1]
            return -INF if lim is None and v < 0 and p.increasing else (INF if lim is None else Fraction(lim))
        saved = ctx.prec
        ctx.prec = 80
        try:
            a, b = arb_to_fractions(p.arb(arb(v.numerator) / v.denominator))
        finally:
            ctx.prec = saved
        return a if side < 0 else b

    lo_dom, lo_open, hi_dom, hi_open = p.domain
    if not (lo_dom is None or s.lo > lo_dom or (s.lo == lo_dom and not lo_open)):
        raise Split("outside the primitive's domain")
    if not (hi_dom is None or s.hi < hi_dom or (s.hi == hi_dom and not hi_open)):
        raise Split("outside the primitive's domain")
    blo, bhi = p.bounds
    if p.increasing is None:  # sin, cos, tan: their range, or Arb's enclosure over a finite span
        if math.isinf(s.lo) or math.isinf(s.hi) or s.hi - s.lo > 4:
            if blo is None or bhi is None:
                raise Split(f"{p.name} over an unbounded span")
            return Span(Fraction(blo), Fraction(bhi))
        saved = ctx.prec
        ctx.prec = 80
        try:
            ball = arb(s.lo.numerator) / s.lo.denominator
            ball = ball.union(arb(s.hi.numerator) / s.hi.denominator)
            v = p.arb(ball)
        finally:
            ctx.prec = saved
        if not v.is_finite():
            raise Split(f"{p.name} unbounded over the span")
        lo, hi = arb_to_fractions(v)
        lo = max(lo, Fraction(blo)) if blo is not None else lo
        hi = min(hi, Fraction(bhi)) if bhi is not None else hi
        return Span(lo, hi)
    lo, hi = (at(s.lo, -1), at(s.hi, 1)) if p.increasing else (at(s.hi, -1), at(s.lo, 1))
    lo = max(lo, Fraction(blo)) if blo is not None else lo
    hi = min(hi, Fraction(bhi)) if bhi is not None else hi
    return Span(lo, hi)


def _power(s: Span, q: Fraction) -> Span:
    """a^q over the span of a: monotone in |a| on each side of 0 (the negative side for an integer q only, where
    it is +-|a|^q), so its values at the ends of each side enclose it."""
    if q == 0 or q == 1:
        return _point(1) if q == 0 else s
    integer = pow_record.is_integer(q)
    if s.lo < 0 and not integer:
        raise Split("a negative base to a non-integer power (outside pow's domain)")
    if q < 0 and 0 in s:
        raise Split("pow's pole at 0")

    def at(m, side):  # m^q, m >= 0, a lower (side < 0) or upper end
        if math.isinf(m):
            return INF if q > 0 else Fraction(0)
        if m == 0:
            return Fraction(0)
        v = pow_record.exact_power(m, q)
        if v is not None:
            return v
        saved = ctx.prec
        ctx.prec = 80
        try:
            lo, hi = arb_to_fractions(pow_record.arb_of_fraction(m) ** pow_record.arb_of_fraction(q))
        finally:
            ctx.prec = saved
        return lo if side < 0 else hi

    def magnitude(m0, m1):
        return Span(at(m0, -1), at(m1, 1)) if q > 0 else Span(at(m1, -1), at(m0, 1))

    out = []
    if s.hi >= 0:
        out.append(magnitude(max(s.lo, Fraction(0)), s.hi))
    if s.lo < 0:
        m = magnitude(max(-s.hi, Fraction(0)), -s.lo)
        out.append(-m if pow_record.is_odd_integer(q) else m)
    return Span(min(v.lo for v in out), max(v.hi for v in out))


class SpanDomain(Domain):
    """Exact real enclosures: Spans with rational (or infinite) ends. Undecided where a comparison of spans
    cannot be decided; Split where a span must be cut (a divisor or a primitive's argument across a
    boundary)."""

    def __init__(self, X: Span, attrs):
        self.X, self.attrs = X, attrs

    def var(self, e):
        return self.X

    def attr(self, e):
        return _point(self.attrs[e.name])

    def const(self, e):
        if e.name is not None:
            return Span(*NAMED[e.name].enclosure(80))
        return _point(e.value)

    def isnan(self, e, walk):
        walk(e.args[0])  # its argument's splits and failures still count
        return False

    def compare(self, op, l, r):
        if op == "eq":
            if l.lo == l.hi == r.lo == r.hi:
                return True
            if l.hi < r.lo or r.hi < l.lo:
                return False
            raise Undecided("eq")
        yes = {"lt": l.hi < r.lo, "le": l.hi <= r.lo, "gt": l.lo > r.hi, "ge": l.lo >= r.hi}[op]
        no = {"lt": l.lo >= r.hi, "le": l.lo > r.hi, "gt": l.hi <= r.lo, "ge": l.hi < r.lo}[op]
        if yes or no:
            return yes
        raise Undecided(op)

    def arithmetic(self, op, a, node=None):
        if op in OVERLOADED:
            return by_operators(op, a)
        if op == "abs":
            s = a[0]
            if s.lo >= 0:
                return s
            if s.hi <= 0:
                return -s
            return Span(Fraction(0), max(-s.lo, s.hi))
        if op == "min":
            return Span(min(a[0].lo, a[1].lo), min(a[0].hi, a[1].hi))
        if op == "max":
            return Span(max(a[0].lo, a[1].lo), max(a[0].hi, a[1].hi))
        r = 1 / a[1]  # div
        return a[0] * Span(min(r.lo, r.hi), max(r.lo, r.hi))

    reduction = element_wise_only

    def primitive(self, p, a, node=None):
        return _primitive(p, a)

    def power(self, a, b, node=None):
        if b.lo != b.hi or math.isinf(b.lo) or (node is not None and any(n.op == "var" for n in node.args[1].nodes())):
            raise Stuck("pow with an exponent that depends on x")
        return _power(a, b.lo)


def enclose(e, X: Span, attrs) -> Span | bool:
    return fold(e, SpanDomain(X, attrs))


def direction(e, X: Span, attrs):
    """(enclosure, direction) of e over X: the rules of monotone.direction, with exact enclosures."""
    return _direction(e, X, attrs, SpanDomain(X, attrs))


def prove_nondecreasing(formula, attrs, lo=None, hi=None, cuts=(), depth: int = 12):
    """('proved', pieces) when formula is non-decreasing on [lo, hi] (None: unbounded),
    by structure on pieces split at `cuts` and halved where a sign or a branch is
    undecided; ('unknown', why) otherwise. Pieces share their ends, and f is
    continuous or not, monotone on each closed piece: so on their union."""
    lo = -INF if lo is None else Fraction(lo)
    hi = INF if hi is None else Fraction(hi)
    pts = sorted({lo, hi} | {Fraction(c) for c in cuts if lo < c < hi})
    stack = [(a, b, depth) for a, b in zip(pts, pts[1:])]
    pieces = 0
    while stack:
        a, b, d = stack.pop()
        pieces += 1
        try:
            _, dr = direction(formula, Span(a, b), attrs)
            if dr < 0:
                return "unknown", f"non-increasing on [{a}, {b}]"
            continue
        except Stuck as exc:
            return "unknown", f"on [{a}, {b}]: {exc}"
        except (Split, Undecided):
            if d == 0:
                return "unknown", f"undecided on [{a}, {b}]"
        if math.isinf(a) or math.isinf(b):
            m = (Fraction(-1) if b <= 0 else b * 2 - 1) if math.isinf(a) else (Fraction(1) if a >= 0 else a * 2 + 1)
            m = m if a < m < b else (Fraction(0) if a < 0 < b else None)
            if m is None:
                return "unknown", f"undecided on [{a}, {b}]"
        else:
            m = (a + b) / 2
        stack += [(a, m, d - 1), (m, b, d - 1)]
    return "proved", pieces
