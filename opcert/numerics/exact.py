"""Exact evaluation of an expression at one point.

Three tiers, each rigorous:
1. rational arithmetic (`fractions.Fraction`): decides every piecewise-linear
   and rational result exactly, midpoints included, and every primitive at a
   point where its value is rational (exp(0) = 1, log(1) = 0);
2. Taylor enclosures in rational arithmetic where every primitive's argument
   is tiny (|t| <= 2^-10): they decide the inputs whose value sits next to a
   rounding midpoint (ScaledTanh(x) = 0.5 x - ..., for subnormal x);
3. ball arithmetic (Arb, through python-flint) at increasing precision until
   the enclosure rounds to a single value of the target format (Ziv's
   strategy). A primitive at a nonzero rational point where its value is
   irrational is never a rounding midpoint, so the loop ends; a cap turns a
   bug into an error.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
from flint import arb, ctx, fmpq

from opcert.expr import NAMED, Expr, pow_record
from opcert.expr.fold import OVERLOADED, Domain, by_operators, fold
from opcert.expr.primitives import REGISTRY as PRIMITIVES
from opcert.expr.primitives import TINY
from opcert.formats import FloatFormat, round_fraction

MAX_PREC = 1 << 15


class NotRational(Exception):
    """The value at this point is not rational (or not known to be)."""


class Undecided(Exception):
    """A comparison of enclosures could not be decided at this precision."""


class Undefined(Exception):
    """A primitive was applied outside its domain (log of a negative number). `limit`: where the argument is the
    domain's open end itself and the function tends to an infinity there (log at 0: -inf), that infinity, which is
    IEEE 754's value at the pole (log(0) = -inf, a divide-by-zero, not an invalid operation); None elsewhere."""

    def __init__(self, text: str, limit: float | None = None):
        super().__init__(text)
        self.limit = limit


# the primitives whose open domain end is a pole, and the infinity they tend to there (IEEE 754's value at it)
POLES = {"log": float("-inf"), "log1p": float("-inf")}


def _pole(p, at_end: bool) -> float | None:
    return POLES.get(p.name) if at_end else None


_RATIONAL = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "div": lambda a, b: a / b,
    "neg": lambda a: -a,
    "abs": abs,
    "fma": lambda a, b, c: a * b + c,
    "min": min,
    "max": max,
    "lt": lambda a, b: a < b,
    "le": lambda a, b: a <= b,
    "gt": lambda a, b: a > b,
    "ge": lambda a, b: a >= b,
    "eq": lambda a, b: a == b,
    "and": lambda a, b: a and b,
    "or": lambda a, b: a or b,
    "not": lambda a: not a,
}


class Row:
    """The row an element sits in, for the reductions of a tensor operator's expression: the exact
    values of the row, the element's position, and what has been reduced over the row so far (a
    reduction's value is the same for every element of the row: computed once per row and domain)."""

    def __init__(self, values: list[Fraction], index: int = 0, cache: dict | None = None):
        self.values, self.index = values, index
        self.cache = {} if cache is None else cache

    def at(self, j: int) -> Row:
        return Row(self.values, j, self.cache)


def _no_row(e):
    return NotRational(f"{e.op} without a row: the element's row was not given")


def reduce_exact(e: Expr, row: Row, key, each, maximum, first_of):
    """rowsum, rowmax or rowfirstmax at row.index: each(j) is the argument's value at element j in the
    domain, maximum(values) and first_of(values) its maximum and first maximum's position there."""
    k = (key, e)
    if k not in row.cache:
        vals = [each(j) for j in range(len(row.values))]
        if e.op == "rowsum":
            total = vals[0] if vals else 0
            for v in vals[1:]:
                total = total + v
            row.cache[k] = total
        elif e.op == "rowmax":
            row.cache[k] = maximum(vals)
        else:
            row.cache[k] = first_of(vals)
    v = row.cache[k]
    return row.index == v if e.op == "rowfirstmax" else v


def _first_max(vals, greater) -> int:
    best = 0
    for j in range(1, len(vals)):
        if greater(vals[j], vals[best]):
            best = j
    return best


class RationalDomain(Domain):
    """Exact rational values; NotRational where a value is irrational (or not known to be rational)."""

    def __init__(self, x: Fraction, attrs: dict[str, Fraction], row: Row | None = None):
        self.x, self.attrs, self.row = x, attrs, row

    def reduction(self, e, walk):
        row = self.row
        if row is None:
            raise _no_row(e)
        return reduce_exact(
            e,
            row,
            "rational",
            lambda j: fold(e.args[0], RationalDomain(row.values[j], self.attrs, row.at(j))),
            max,
            lambda vals: _first_max(vals, lambda a, b: a > b),
        )

    def var(self, e):
        return self.x

    def attr(self, e):
        return self.attrs[e.name]

    def const(self, e):
        if e.name is not None:
            raise NotRational(e.name)
        return e.value

    def arithmetic(self, op, args, node=None):
        return _RATIONAL[op](*args)

    def compare(self, op, a, b):
        return _RATIONAL[op](a, b)

    def primitive(self, p, a, node=None):
        if not p.in_domain(a):
            lo = p.domain[0]
            raise Undefined(f"{p.name}({a})", _pole(p, lo is not None and a == Fraction(lo)))
        v = p.exact(a)
        if v is None:
            raise NotRational(p.name)
        return v

    def power(self, a, b, node=None):
        try:
            v = pow_record.exact_power(a, b)
        except pow_record.OutsideDomain as exc:
            raise Undefined(str(exc)) from None
        if v is None:
            raise NotRational("pow")
        return v


def outside_domain(e: Expr, x: Fraction, attrs: dict[str, Fraction]) -> float | None:
    """IEEE's value of e at x where e's root is a primitive applied outside its real domain, its argument
    rational there (log(x * scale + bias) at x * scale + bias <= 0): NaN below the domain, the platform's
    value at an open end (log(0) = -inf, the pole's infinity); None where the root is no primitive, its
    argument is not rational, or it is inside the domain."""
    if e.op == "pow":
        return _pow_outside_domain(e, x, attrs)
    p = PRIMITIVES.get(e.op)
    if p is None:
        return None
    try:
        t = eval_rational(e.args[0], x, attrs)
    except (NotRational, ZeroDivisionError):
        return None
    if p.in_domain(t):
        return None
    lo, lo_open, hi, hi_open = p.domain
    for end, is_open in ((lo, lo_open), (hi, hi_open)):
        if is_open and t == end:
            with np.errstate(divide="ignore", invalid="ignore"):
                return float(p.numpy(np.array([float(end)]))[0])
    return float("nan")


def _pow_outside_domain(e: Expr, x: Fraction, attrs) -> float | None:
    """pow(a, b) at a < 0 with b no integer: NaN (the pole at a = 0, b < 0 is the reference's pole_value: C's pow
    there, whose infinity keeps -0's sign for an odd b)."""
    try:
        a, b = eval_rational(e.args[0], x, attrs), eval_rational(e.args[1], x, attrs)
    except (NotRational, ZeroDivisionError, Undefined):
        return None
    return float("nan") if a < 0 and not pow_record.is_integer(b) else None


def eval_rational(e: Expr, x: Fraction, attrs: dict[str, Fraction], row: Row | None = None):
    return fold(e, RationalDomain(x, attrs, row))


# ---- tiny arguments: Taylor enclosures in rational arithmetic ----------------------


class NotTiny(Exception):
    pass


class TinyDomain(Domain):
    """Exact rational enclosures (lo, hi), or booleans; NotTiny where a primitive's argument is not tiny (or
    not a point)."""

    def __init__(self, x: Fraction, attrs: dict[str, Fraction]):
        self.x, self.attrs = x, attrs

    def var(self, e):
        return (self.x, self.x)

    def attr(self, e):
        return (self.attrs[e.name],) * 2

    def const(self, e):
        if e.name is not None:
            raise NotTiny(e.name)
        return (e.value, e.value)

    def reduction(self, e, walk):
        raise NotTiny(e.op)  # a row's terms are not all tiny: the ball tier reduces rows

    def compare(self, op, a, b):
        (alo, ahi), (blo, bhi) = a, b
        if alo != ahi or blo != bhi:
            raise NotTiny(op)  # comparisons of enclosures: leave them to the ball tier
        return _RATIONAL[op](alo, blo)

    def primitive(self, p, a, node=None):
        lo, hi = a
        if lo != hi or abs(lo) > TINY:
            raise NotTiny(p.name)
        v = p.exact(lo)
        if v is not None:
            return (v, v)
        if p.tiny is None:
            raise NotTiny(p.name)
        return p.tiny(lo)

    def power(self, a, b, node=None):
        (alo, ahi), (blo, bhi) = a, b
        if alo != ahi or blo != bhi:
            raise NotTiny("pow")
        try:
            v = pow_record.exact_power(alo, blo)
        except (pow_record.OutsideDomain, ZeroDivisionError):
            raise NotTiny("pow") from None
        if v is None:  # irrational: the ball tier encloses it (a tiny a to a power is no rounding midpoint)
            raise NotTiny("pow")
        return (v, v)

    def arithmetic(self, op, a, node=None):
        if op == "neg":
            lo, hi = a[0]
            return (-hi, -lo)
        if op == "abs":
            lo, hi = a[0]
            if lo >= 0:
                return (lo, hi)
            if hi <= 0:
                return (-hi, -lo)
            return (Fraction(0), max(-lo, hi))
        if op in ("add", "sub"):
            (alo, ahi), (blo, bhi) = a
            return (alo + blo, ahi + bhi) if op == "add" else (alo - bhi, ahi - blo)
        if op in ("mul", "fma", "div"):
            (alo, ahi), (blo, bhi) = a[0], a[1]
            if op == "div":
                if blo <= 0 <= bhi:
                    raise NotTiny("div")
                blo, bhi = 1 / bhi, 1 / blo
            p = [alo * blo, alo * bhi, ahi * blo, ahi * bhi]
            lo, hi = min(p), max(p)
            if op == "fma":
                lo, hi = lo + a[2][0], hi + a[2][1]
            return (lo, hi)
        f = min if op == "min" else max
        return (f(a[0][0], a[1][0]), f(a[0][1], a[1][1]))


def eval_tiny(e: Expr, x: Fraction, attrs: dict[str, Fraction]):
    """Exact rational enclosure (lo, hi), or booleans; raises NotTiny where a
    primitive's argument is not tiny (or not a point)."""
    return fold(e, TinyDomain(x, attrs))


# ---- ball arithmetic (Arb) -----------------------------------------------------------


def arb_of(q: Fraction):
    return arb(fmpq(q.numerator, q.denominator))


def compare_balls(op, a, b):
    """A comparison of two balls, decided or Undecided."""
    if op == "lt":
        if a < b:
            return True
        if a >= b:
            return False
    elif op == "le":
        if a <= b:
            return True
        if a > b:
            return False
    elif op == "gt":
        return compare_balls("lt", b, a)
    elif op == "ge":
        return compare_balls("le", b, a)
    elif op == "eq":
        if a.is_exact() and b.is_exact() and a == b:
            return True
        if a < b or a > b:
            return False
    raise Undecided(op)


def in_domain(p, a) -> bool:
    lo, lo_open, hi, hi_open = p.domain
    if lo is not None:
        bound = arb_of(Fraction(lo))
        ok = a > bound if lo_open else a >= bound
        if not ok:
            if (a <= bound) if lo_open else (a < bound):
                raise Undefined(p.name, _pole(p, bool(lo_open and a == bound)))
            raise Undecided(p.name)
    if hi is not None:
        bound = arb_of(Fraction(hi))
        ok = a < bound if hi_open else a <= bound
        if not ok:
            if (a >= bound) if hi_open else (a > bound):
                raise Undefined(p.name)
            raise Undecided(p.name)
    return True


class ArbDomain(Domain):
    """Arb balls at `prec` bits: rigorous enclosures of the exact real values. x is a point (a Fraction) or
    a ball itself (verified numerics over an interval). Undecided where a comparison or a division by a
    ball holding 0 cannot be decided at this precision; Undefined outside a primitive's domain."""

    def __init__(self, x, attrs: dict[str, Fraction], prec: int, row: Row | None = None):
        self.x, self.attrs, self.prec, self.row = x, attrs, prec, row

    def reduction(self, e, walk):
        row = self.row
        if row is None:
            raise Undecided(f"{e.op} without a row: the element's row was not given")
        cls = type(self)

        def maximum(vals):
            best = vals[0]
            for v in vals[1:]:
                best = self.arithmetic("max", [best, v])
            return best

        return reduce_exact(
            e,
            row,
            ("arb", cls, self.prec),
            lambda j: fold(e.args[0], cls(row.values[j], self.attrs, self.prec, row.at(j))),
            maximum,
            lambda vals: _first_max(vals, lambda a, b: compare_balls("gt", a, b)),
        )

    def var(self, e):
        return arb_of(self.x) if isinstance(self.x, Fraction) else self.x

    def attr(self, e):
        return arb_of(self.attrs[e.name])

    def const(self, e):
        return NAMED[e.name].ball(self.prec) if e.name is not None else arb_of(e.value)

    def select(self, e, walk):
        try:
            c = walk(e.args[0])
        except Undecided:
            if isinstance(self.x, Fraction):
                raise  # a point: more precision decides it
            # an interval on both sides of the condition's boundary: either branch
            return walk(e.args[1]).union(walk(e.args[2]))
        return walk(e.args[1]) if c else walk(e.args[2])

    def compare(self, op, a, b):
        return compare_balls(op, a, b)

    def arithmetic(self, op, a, node=None):
        if op in OVERLOADED:
            return by_operators(op, a)
        if op == "div":
            if 0 in a[1]:
                raise Undecided("div")
            return a[0] / a[1]
        if op == "abs":
            return abs(a[0])
        # min, max: one side wholly below the other: that side exactly (Arb's min of 0 and a ball of
        # e^(7e76) is not 0 but a ball whose ends are rationals of 10^76 bits)
        lo_first = a[0] <= a[1]
        hi_first = a[0] >= a[1]
        if lo_first or hi_first:
            return a[0] if (lo_first == (op == "min")) else a[1]
        return a[0].min(a[1]) if op == "min" else a[0].max(a[1])

    def primitive(self, p, a, node=None):
        in_domain(p, a)
        return p.arb(a)

    def power(self, a, b, node=None):
        try:
            return pow_record.arb_power(a, b)
        except pow_record.OutsideDomain as exc:
            raise Undefined(str(exc)) from None
        except ValueError as exc:
            raise Undecided(str(exc)) from None


def eval_ball(e: Expr, x: Fraction, attrs: dict[str, Fraction], prec: int, row: Row | None = None):
    return fold(e, ArbDomain(x, attrs, prec, row))


WIDEST = 1 << 14  # bits: a ball's ends as rationals at most this far below its midpoint


def arb_to_fractions(b) -> tuple[Fraction, Fraction]:
    """The ends of the ball as exact rationals. A radius far below the midpoint
    (Celu(-1.4e227) = -alpha + about 2^(-9e226)) is first widened to 2^-WIDEST of
    the midpoint: still an enclosure, with ends of bounded size."""
    mid, rad = b.mid(), b.rad()
    if rad != 0 and mid != 0:
        m_exp = int(mid.man_exp()[1]) + int(mid.man_exp()[0]).bit_length()
        r_exp = int(rad.man_exp()[1]) + int(rad.man_exp()[0]).bit_length()
        if r_exp < m_exp - WIDEST:
            b = arb(mid, arb(2) ** (m_exp - WIDEST))
    lo, hi = b.lower().man_exp(), b.upper().man_exp()
    if max(abs(int(lo[1])), abs(int(hi[1]))) > 1 << 20:
        # an end beyond 2^(2^20) or below 2^-(2^20): Arb's bound on e^(7e76); as a rational it would
        # take 10^76 bits. Undecided: the caller refines, or takes the reference form.
        raise Undecided("an end of the enclosure beyond 2^(2^20)")
    return (Fraction(int(lo[0])) * Fraction(2) ** int(lo[1]), Fraction(int(hi[0])) * Fraction(2) ** int(hi[1]))


class Exact:
    """The exact value at one point: either a rational, or an enclosing interval
    narrow enough to decide the rounding to the format it was computed for."""

    __slots__ = ("lo", "hi")

    def __init__(self, lo: Fraction, hi: Fraction):
        self.lo, self.hi = lo, hi

    @property
    def is_rational(self) -> bool:
        return self.lo == self.hi

    @property
    def mid(self) -> Fraction:
        return (self.lo + self.hi) / 2


def _narrow(lo, hi, min_prec) -> bool:
    return min_prec == 0 or (hi - lo) <= abs(lo) * Fraction(2) ** (-min_prec)


FAR = 64  # bits below the smallest subnormal's half where a value is taken as "rounds to zero"


def _far_below(v, fmt) -> Exact | None:
    """A ball of one sign entirely below 2^(emin - p - FAR) in magnitude (Mish(-1e300)
    is about 2^(-1.4e300): its exact ends would be rationals of 10^300 bits). It rounds
    to a zero of its sign in every format; it is represented by the enclosure
    +-[2^-(FAR+1), 2^-FAR] * 2^(emin - p), so an error figure against it is off by
    under 2^-FAR ULP, and the rounding is the same."""
    k = fmt.emin - fmt.p - FAR
    small = arb(2) ** k
    if v.is_zero() or not (abs(v) < small):
        return None
    q = Fraction(2) ** k
    if v > 0:
        return Exact(q / 2, q)
    if v < 0:
        return Exact(-q, -q / 2)
    raise Undecided("a tiny ball of undecided sign")  # more precision, not a rational of 10^300 bits


HUGE_ARGUMENT = 4096  # e^4096 = 2^5909.4: beyond 2^(emax + 1 + FAR) in every format


def _far_above(v, fmt) -> Exact | None:
    """A ball of one sign entirely above 2^(emax + 1 + FAR) in magnitude (e^(3.4e38): its exact ends would be
    rationals of 10^38 bits). It rounds to an infinity of its sign in every format; it is represented by the
    enclosure +-[2^k, 2^(k+1)], k = emax + 1 + FAR, which rounds the same."""
    k = fmt.emax + 1 + FAR
    if not v.is_finite() or not (abs(v) > arb(2) ** k):
        return None
    q = Fraction(2) ** k
    return Exact(q, 2 * q) if v > 0 else Exact(-2 * q, -q)


def _huge_root(e: Expr, x: Fraction, attrs: dict, prec: int, row: Row | None):
    """Where Arb's enclosure of the value is infinite (e^(1e308)), and the root is a primitive whose magnitude
    grows with its argument's beyond HUGE_ARGUMENT, with a constant sign on each side (Primitive.grows):
    f(+-HUGE_ARGUMENT), a finite ball of the value's sign no larger in magnitude; else None."""
    p = PRIMITIVES.get(e.op)
    if p is None or not p.grows:
        return None
    t = eval_ball(e.args[0], x, attrs, prec, row)
    if not t.is_finite():
        return None
    if t > HUGE_ARGUMENT:
        return p.arb(arb(HUGE_ARGUMENT))
    if t < -HUGE_ARGUMENT:
        return p.arb(arb(-HUGE_ARGUMENT))
    return None


def evaluate(
    e: Expr,
    x: Fraction,
    attrs: dict[str, Fraction],
    fmt: FloatFormat,
    min_prec: int = 0,
    max_prec: int = MAX_PREC,
    row: Row | None = None,
) -> Exact:
    """Exact value of `e` at x, decided for rounding to `fmt` (and, with
    `min_prec`, enclosed to at least that many bits). Raises Undefined where
    the definition applies a primitive outside its domain. `row`: the row x
    sits in, for an expression that reduces over it."""
    try:
        q = eval_rational(e, x, attrs, row)
        return Exact(q, q)
    except NotRational:
        pass
    except ZeroDivisionError:  # an exact zero divisor: a pole (Reciprocal at 0), outside the real domain
        raise Undefined("a division by zero") from None
    try:
        lo, hi = eval_tiny(e, x, attrs)
        if (
            lo != 0
            and hi != 0
            and (lo > 0) == (hi > 0)
            and _narrow(lo, hi, min_prec)
            and round_fraction(lo, fmt, negative_zero=lo < 0) == round_fraction(hi, fmt, negative_zero=hi < 0)
        ):
            return Exact(lo, hi)
    except (NotTiny, ZeroDivisionError):
        pass
    prec = max(fmt.p + 40, min_prec + 10, 64)
    while prec <= max_prec:
        saved = ctx.prec
        try:
            ctx.prec = prec
            v = eval_ball(e, x, attrs, prec, row)
            if not v.is_finite():
                v = _huge_root(e, x, attrs, prec, row)
                if v is None:
                    raise Undecided("overflow")
            far = _far_below(v, fmt) or _far_above(v, fmt)
            if far is not None:
                return far
            lo, hi = arb_to_fractions(v)
        except Undecided:
            prec *= 2
            continue
        finally:
            ctx.prec = saved
        if lo == hi:
            return Exact(lo, hi)
        rlo = round_fraction(lo, fmt, negative_zero=lo < 0)
        rhi = round_fraction(hi, fmt, negative_zero=hi <= 0)
        same_sign = (lo > 0) == (hi > 0) and lo != 0 and hi != 0
        if rlo == rhi and same_sign and _narrow(lo, hi, min_prec):
            return Exact(lo, hi)
        prec *= 2
    raise RuntimeError(f"exact evaluation undecided at {max_prec} bits for x={x}")


def mpf_to_fraction(raw) -> Fraction:
    """A raw mpmath mpf tuple (sign, man, exp, bc) as an exact Fraction."""
    sign, man, exp, _ = raw
    if not man:
        if exp:  # inf or nan
            raise ValueError("non-finite endpoint")
        return Fraction(0)
    q = Fraction(int(man)) * (Fraction(2) ** exp)
    return -q if sign else q
