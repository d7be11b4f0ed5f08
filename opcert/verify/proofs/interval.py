"""Verified numerics for the specification: what z3 cannot settle with its axioms.

- `bound_on_interval`: f(x) >= lower (and/or <= upper) for every x in [a, b],
  proved by interval arithmetic (Arb): the interval is split until the
  enclosure of f over each piece clears the bound. An enclosure is a rigorous
  superset of f's values, so every piece cleared is proved; a piece whose
  midpoint breaks the bound (evaluated exactly) is a counterexample.
- `find_decrease`: a pair x1 < x2 with f(x1) > f(x2), both values enclosed
  and separated (a refutation of monotonicity: one witness suffices).
"""

from __future__ import annotations

import math
import time
from fractions import Fraction

import numpy as np
from flint import arb, ctx, fmpq

from opcert.expr import NAMED, pow_record
from opcert.expr.fold import element_wise_only, fold
from opcert.formats import FLOAT_FORMATS, ordinal, round_fraction
from opcert.numerics.exact import (
    ArbDomain,
    Undecided,
    Undefined,
    arb_of,
    arb_to_fractions,
    eval_ball,
    evaluate,
    in_domain,
)
from opcert.verify.accuracy.inputs import from_ordinal
from opcert.verify.proofs.common import record

F64 = FLOAT_FORMATS["float64"]


def arb_interval(a: Fraction, b: Fraction):
    """A ball containing [a, b], no wider where the radius is a short dyadic (bisection pieces)."""
    mid = (a + b) / 2
    rad = (b - a) / 2
    r = float(rad)
    if Fraction(r) != rad:
        r = float(r) * (1 + 2**-40)
    return arb(fmpq(mid.numerator, mid.denominator), r)


def bound_on_interval(
    e,
    attrs,
    a: Fraction,
    b: Fraction,
    bounds: tuple[Fraction | None, Fraction | None],
    min_width: Fraction = Fraction(1, 2**32),
    budget: int = 400_000,
    prec: int = 80,
):
    """bounds: (lower, upper), None where unbounded. ('proved', pieces) or ('refuted', x) or ('unknown', why)."""
    lower, upper = bounds
    saved = ctx.prec
    ctx.prec = prec
    try:
        stack = [(a, b)]
        pieces = 0
        t0 = time.perf_counter()
        while stack:
            lo, hi = stack.pop()
            pieces += 1
            if pieces > budget:
                return "unknown", f"{budget:,} pieces were not enough ({time.perf_counter() - t0:.1f} s)"
            try:
                v = eval_ball(e, arb_interval(lo, hi), attrs, prec)
                vlo, vhi = arb_to_fractions(v) if v.is_finite() else (None, None)
            except (Undecided, Undefined, ZeroDivisionError):
                vlo = vhi = None
            ok = vlo is not None and (lower is None or vlo >= lower) and (upper is None or vhi <= upper)
            if ok:
                continue
            mid = (lo + hi) / 2
            try:
                m = evaluate(e, mid, attrs, F64, min_prec=60)
                if (lower is not None and m.hi < lower) or (upper is not None and m.lo > upper):
                    return "refuted", mid
            except (RuntimeError, Undefined):
                pass
            if hi - lo < min_width:
                return "unknown", f"could not separate f from the bound near x = {float(mid)!r}"
            stack += [(lo, mid), (mid, hi)]
        return "proved", pieces
    finally:
        ctx.prec = saved


def find_decrease(e, attrs, a: Fraction = Fraction(-8), b: Fraction = Fraction(8), step: Fraction = Fraction(1, 16)):
    """x1 < x2 with f(x1) > f(x2) provably, scanning [a, b]; or None."""
    prev = None
    x = a
    while x <= b:
        try:
            v = evaluate(e, x, attrs, F64, min_prec=60)
        except (RuntimeError, Undefined):
            prev, x = None, x + step
            continue
        if prev is not None and prev[1].lo > v.hi:
            return prev[0], x, prev[1], v
        prev, x = (x, v), x + step
    return None


# ---- the implementation, in rounding-aware interval arithmetic ---------------------------------

U64 = Fraction(1, 2**53)


OVERFLOW = Fraction(2) ** 1024 - Fraction(2) ** 970  # binary64 results at or beyond round to +-inf


def _widen(v, ulps_rel, eta):
    """The values binary64 can return for an exact result in v: v enlarged by a relative
    error ulps_rel and an absolute eta, kept within the finite range where v is (rounding is
    monotone, so a result below the overflow threshold rounds to at most the largest
    finite value), +-inf where all of v overflows."""
    if not v.is_finite():
        if v.is_nan():
            raise Undecided("nan")
        return v
    big = arb_of(OVERFLOW)
    if v >= big:
        return arb("inf")
    if v <= -big:
        return -arb("inf")
    if not abs(v) < big:
        raise Undecided("overflow")
    if ulps_rel or eta:
        v = v * arb(1, ulps_rel) + arb(0, eta)  # relative at each point of v, not at its largest
        top = arb_of(Fraction(F64.max_finite))
        if not abs(v) <= top:
            v = v.intersection(arb(0, top))
    return v


def _round64(v):
    """Every value binary64 rounding (to nearest) gives for an exact result in v: rounding
    to nearest is monotone, so R([lo, hi]) lies in [R(lo), R(hi)]; +-inf where all of v
    overflows. (Directed rounding of the ends would be sound too, but it steps past the
    ball's own outward rounding one binary64 value per operation: 1 * [.., 1] became
    [.., 1 + 2^-52].)"""
    if not v.is_finite():
        if v.is_nan():
            raise Undecided("nan")
        return v
    lo, hi = arb_to_fractions(v)
    n_lo, n_hi = round_fraction(lo, F64), round_fraction(hi, F64)
    if n_lo == math.inf:
        return arb("inf")
    if n_hi == -math.inf:
        return -arb("inf")
    if math.isinf(n_lo) or math.isinf(n_hi):
        raise Undecided("overflow")
    return arb(n_lo) if n_lo == n_hi else arb(n_lo).union(arb(n_hi))


def _clip(v, lo, hi):
    """v within [lo, hi] (a primitive's range: its contract keeps the platform's values there)."""
    if not v.is_finite() or ((lo is None or v >= lo) and (hi is None or v <= hi)):
        return v
    a, b = arb_to_fractions(v)
    a = max(a, Fraction(lo)) if lo is not None else a
    b = min(b, Fraction(hi)) if hi is not None else b
    if a > b:
        raise Undecided("empty")
    return arb_interval(a, b)


class RoundedDomain(ArbDomain):
    """Every value binary64 evaluation can give for an input in the ball x: each arithmetic result its exact
    value rounded (the enclosure's ends rounded to nearest binary64), each primitive within its contract's
    ULPs of the true function and within its range, constants at their binary64 values, overflow to +-inf.
    The exact domain (numerics.exact.ArbDomain) with rounding after each operation."""

    def const(self, e):
        return arb(NAMED[e.name].value64()) if e.name is not None else arb_of(Fraction(float(e.value)))

    def arithmetic(self, op, a, node=None):
        if op == "neg":
            return -a[0]
        if op in ("min", "max"):
            return a[0].min(a[1]) if op == "min" else a[0].max(a[1])
        if op == "abs":
            return abs(a[0])
        return _round64(super().arithmetic(op, a))  # add, sub, mul, div, fma: the exact result, rounded

    reduction = element_wise_only

    def primitive(self, p, a, node=None):
        in_domain(p, a)
        if not a.is_finite():
            v = p.arb(a)
        elif p.increasing is None:  # sin, tan: Arb's enclosure over the whole interval (a pole in it: unbounded)
            v = p.arb(a)
            if not v.is_finite():
                raise Undecided(f"{p.name} unbounded over the interval")
        else:
            # the function is monotone: its values at the ends enclose it (a wide ball's own
            # enclosure can be far wider: exp over [3600, 16400] has a lower bound of 0)
            lo, hi = (p.arb(a.lower()), p.arb(a.upper()))
            if not p.increasing:
                lo, hi = hi, lo
            big = arb_of(OVERFLOW)
            if lo.is_finite() and lo > big:  # all of it overflows
                return arb("inf")
            if not lo.is_finite() and not lo.is_nan() and p.increasing and a.lower() > 0:
                return arb("inf")  # past Arb's exponent range: exp(2^160)
            if hi.is_finite() and hi < -big:
                return -arb("inf")
            if not hi.is_finite() and not hi.is_nan():
                raise Undecided("overflow")  # Arb gives up past its exponent range (exp(1e308))
            v = lo.union(hi)
        return _clip(_round64(_widen(v, p.ulps * 2.0**-52, p.ulps * 2.0**-1074)), *p.bounds)

    def power(self, a, b, node=None):
        """The platform's pow within its contract of a^b, for an exponent that is one value (an attribute, a
        constant). a^b is monotone in a on each side of 0 (the negative side for an integer b only, where it is
        +-|a|^b): its values at the ends of each side enclose it."""
        if not b.is_exact() or (node is not None and any(n.op == "var" for n in node.args[1].nodes())):
            raise Undecided("pow: an exponent that depends on x (no monotone pieces to take the ends of)")
        q = arb_to_fractions(b)[0]
        if q == 0 or q == 1:  # the contract: pow(a, 0) = 1, pow(a, 1) = a, exactly
            return arb(1) if q == 0 else a
        if not a.is_finite():
            raise Undecided("pow of an unbounded base")
        lo, hi = arb_to_fractions(a)
        integer = pow_record.is_integer(q)
        if lo < 0 and not integer:
            if hi < 0:
                raise Undefined(f"pow: a negative base to the non-integer power {q}")
            raise Undecided(f"pow: a base on both sides of 0 to the non-integer power {q}")
        if q < 0 and lo <= 0 <= hi:
            raise Undecided("pow: a base holding 0 to a negative power (the pole)")
        sides = [(max(lo, Fraction(0)), hi, 1)] if hi >= 0 else []
        if lo < 0:
            sides.append((max(-hi, Fraction(0)), -lo, -1 if pow_record.is_odd_integer(q) else 1))
        v = None
        for m0, m1, sign in sides:
            ends = _power_at(m0, q).union(_power_at(m1, q))  # monotone in m: the ends' values, either order
            w = ends if sign > 0 else -ends
            v = w if v is None else v.union(w)
        v = _round64(_widen(v, pow_record.ULPS * 2.0**-52, pow_record.ULPS * 2.0**-1074))
        # the platform's pow keeps the sign of a^b (non-negative where every side is)
        return _clip(v, 0, None) if all(sign > 0 for _, _, sign in sides) else v


def _power_at(m: Fraction, q: Fraction):
    """An enclosure of m^q, m >= 0 (not the pole)."""
    if m == 0:
        return arb(0)
    if pow_record.is_integer(q):
        return arb_of(m) ** int(q)
    return arb_of(m) ** arb_of(q)


def eval_rounded(e, x, attrs, prec: int = 80):
    """An enclosure of every value the binary64 evaluation of e can take for any input in the ball x
    (RoundedDomain)."""
    return fold(e, RoundedDomain(x, attrs, prec))


def ordinal_of(v: float, fmt) -> int:
    """The ordinal (formats.ordinal) of one value of fmt."""
    return int(ordinal(np.array([v]).astype(fmt.dtype))[0])


def first_outside(run_code, a: int, b: int, fmt, r_lo, r_hi, chunk: int = 1 << 20) -> float | None:
    """Run the values of fmt with ordinals a..b on the code (run_code(xs) -> outputs), `chunk`
    at a time: the first input whose output is NaN or outside [r_lo, r_hi] (None: unbounded),
    or None when every output is inside."""
    for c0 in range(a, b + 1, chunk):
        xs = from_ordinal(np.arange(c0, min(b, c0 + chunk - 1) + 1, dtype=np.int64), fmt)
        ys = np.asarray(run_code(xs), dtype=np.float64)
        bad = np.isnan(ys) | ((ys < r_lo) if r_lo is not None else False) | ((ys > r_hi) if r_hi is not None else False)
        if bad.any():
            return float(xs[int(np.argmax(bad))])
    return None


def implementation_bound(
    impl,
    attrs,
    fmt,
    bounds: tuple[Fraction | None, Fraction | None],
    domain: tuple = (None, None),
    run_code=None,
    budget: int = 50_000,
    enumerate_below: int = 1 << 22,
):
    """Every finite input of fmt in domain = (lo, hi): the code's value lies within
    bounds = (lower, upper) (rounded to fmt; None: unbounded on that side). Pieces are ranges of
    consecutive values of fmt; a piece whose enclosure does not clear the bounds is split, and one of
    at most `enumerate_below` values is run on the code (run_code(xs) -> outputs), every value
    compared. It stops after `budget` pieces, never after a time: the verdict does not depend on the
    host's load. ('proved', pieces) / ('refuted', x) / ('unknown', why)."""
    out = _implementation_bound(impl, attrs, fmt, bounds, domain, run_code, budget, enumerate_below)
    record("intervals", out, budget)
    return out


def _implementation_bound(impl, attrs, fmt, bounds, domain, run_code, budget, enumerate_below):
    lower, upper = bounds
    lo, hi = domain
    # the values whose rounding (to binary64, then to fmt) stays within the bounds' roundings
    t_lo = _threshold(lower, fmt, -1) if lower is not None else None
    t_hi = _threshold(upper, fmt, 1) if upper is not None else None
    r_lo = round_fraction(lower, fmt) if lower is not None else None
    r_hi = round_fraction(upper, fmt) if upper is not None else None

    big = float(fmt.max_finite)
    first = max(-big, round_fraction(lo, fmt, mode="up")) if lo is not None else -big
    last = min(big, round_fraction(hi, fmt, mode="down")) if hi is not None else big
    if first > last:  # no finite input in [lo, hi] (a domain beyond the format: HardSigmoid at alpha = 1e-45)
        return "proved", 0
    o0, o1 = ordinal_of(first, fmt), ordinal_of(last, fmt)
    # start from the binades: relative widths small from the outset
    cuts = {o0, o1, 0} | {
        ordinal_of(sg * 2.0**k, fmt) for k in range(fmt.emin - fmt.p + 1, fmt.emax + 1) for sg in (1, -1)
    }
    edges = sorted(c for c in cuts if o0 <= c <= o1)
    saved = ctx.prec
    ctx.prec = 80
    try:
        stack = [(p, q) for p, q in zip(edges, edges[1:])] or [(o0, o1)]
        pieces = 0
        while stack:
            a, b = stack.pop()
            pieces += 1
            if pieces > budget:
                return "unknown", f"its budget of {budget:,} pieces did not cover the inputs"
            xa, xb = (Fraction(float(v)) for v in from_ordinal(np.array([a, b]), fmt).astype(np.float64))
            try:
                v = eval_rounded(impl, arb_interval(xa, xb), attrs)
                ok = _within(v, t_lo, t_hi)
            except (Undecided, Undefined, ZeroDivisionError):
                ok = False
            if ok:
                continue
            if run_code is not None and b - a < enumerate_below:
                x = first_outside(run_code, a, b, fmt, r_lo, r_hi)
                if x is not None:
                    return "refuted", Fraction(x)
                continue
            if b - a <= 1:
                return "unknown", f"could not separate the code's values from the bound near x = {float(xa)!r}"
            m = (a + b) // 2
            stack += [(a, m), (m, b)]
        return "proved", pieces
    finally:
        ctx.prec = saved


def _within(v, t_lo, t_hi) -> bool:
    """Does every value of the enclosure v (+-inf included) lie strictly between the thresholds?"""
    if v.is_finite():
        vlo, vhi = arb_to_fractions(v)
        return (t_lo is None or vlo > t_lo) and (t_hi is None or vhi < t_hi)
    if v.is_nan() or not (v > 0 or v < 0):
        return False
    return (t_hi is None) if v > 0 else (t_lo is None)


def _threshold(bound: Fraction, fmt, side: int) -> Fraction | None:
    """The midpoint between the bound rounded to fmt and its neighbour outside: every value
    strictly inside it rounds (through binary64, then fmt) to the bound's rounding or beyond.
    Beyond the largest finite value the neighbour is 2^(emax+1), where rounding turns to
    infinity (a bound at +-max: Celu's -alpha at alpha = 3.4e38); a bound that rounds to an
    infinity bounds nothing (None)."""
    r = round_fraction(bound, fmt)
    if math.isinf(r):
        return None
    with np.errstate(over="ignore"):  # the neighbour of +-max is +-inf
        outside = float(
            np.nextafter(np.array([r]).astype(fmt.dtype), np.array([side * np.inf]).astype(fmt.dtype)).astype(
                np.float64
            )[0]
        )
    beyond = side * Fraction(2) ** (fmt.emax + 1)
    return (Fraction(r) + (beyond if math.isinf(outside) else Fraction(outside))) / 2
