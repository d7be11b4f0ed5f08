"""Exact evaluation of an expression at one point.

First in rational arithmetic (`fractions.Fraction`): this decides every
piecewise-linear result exactly, midpoints included, and every transcendental
operation applied to 0 (exp(0) = 1, expm1(0) = tanh(0) = log1p(0) = 0). A
transcendental operation at a nonzero rational argument has an irrational value
(Lindemann-Weierstrass), so it is evaluated instead in interval arithmetic
(mpmath.iv, outward rounded) at increasing precision until the interval rounds
to a single value of the target format (Ziv's strategy). An irrational result is
never a rounding midpoint, so the loop ends; a cap turns a bug into an error.
"""
from __future__ import annotations

from fractions import Fraction

import mpmath

from ..expr import Expr
from ..formats import FloatFormat, round_fraction

MAX_PREC = 1 << 15


class NotRational(Exception):
    """The value at this point involves a transcendental function of a nonzero argument."""


class Undecided(Exception):
    """An interval comparison could not be decided at this precision."""


def eval_rational(e: Expr, x: Fraction, attrs: dict[str, Fraction]):
    ev = lambda n: eval_rational(n, x, attrs)  # noqa: E731
    op = e.op
    if op == "var":
        return x
    if op == "attr":
        return attrs[e.name]
    if op == "const":
        return e.value
    if op == "select":
        return ev(e.args[1]) if ev(e.args[0]) else ev(e.args[2])
    if op == "isnan":
        return False
    a = [ev(n) for n in e.args]
    if op in ("exp", "expm1", "tanh", "log1p"):
        if a[0] != 0:
            raise NotRational(op)
        return Fraction(1) if op == "exp" else Fraction(0)
    return _RATIONAL[op](*a)


_RATIONAL = {
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
    "div": lambda a, b: a / b, "neg": lambda a: -a, "fma": lambda a, b, c: a * b + c,
    "min": min, "max": max, "lt": lambda a, b: a < b, "le": lambda a, b: a <= b,
    "gt": lambda a, b: a > b, "ge": lambda a, b: a >= b, "eq": lambda a, b: a == b,
    "and": lambda a, b: a and b, "or": lambda a, b: a or b, "not": lambda a: not a,
}


# ---- tiny arguments: Taylor enclosures in rational arithmetic ----------------------
#
# Where a transcendental function's argument is tiny its value is decided by a
# few Taylor terms, whose remainders bound it rigorously: the series of tanh,
# and of expm1 for t < 0, alternate with decreasing terms for |t| <= 2**-10;
# expm1's remainder for t >= 0 is at most e**t t**4/24 <= 2 t**4/24. This tier
# settles, without the interval loop, the inputs whose binary64 value lands on
# a rounding midpoint (ScaledTanh(x) = 0.5 x for odd subnormal binary32 x),
# where the loop must climb past 300 bits.

TINY = Fraction(1, 2 ** 10)


class NotTiny(Exception):
    pass


def _tanh_enclosure(t: Fraction):
    if t < 0:
        lo, hi = _tanh_enclosure(-t)
        return -hi, -lo
    t3 = t * t * t
    return t - t3 / 3, t - t3 / 3 + 2 * t3 * t * t / 15


def _expm1_enclosure(t: Fraction):
    t2 = t * t
    three = t + t2 / 2 + t2 * t / 6
    four = t2 * t2 / 24
    return (three, three + 2 * four) if t >= 0 else (three, three + four)


def eval_tiny(e: Expr, x: Fraction, attrs: dict[str, Fraction]):
    """Exact rational enclosure (lo, hi), or booleans; raises NotTiny where a
    transcendental argument is not tiny (or not a point)."""
    ev = lambda n: eval_tiny(n, x, attrs)  # noqa: E731
    op = e.op
    if op == "var":
        return (x, x)
    if op == "attr":
        return (attrs[e.name],) * 2
    if op == "const":
        return (e.value, e.value)
    if op == "select":
        return ev(e.args[1]) if ev(e.args[0]) else ev(e.args[2])
    if op == "isnan":
        return False
    a = [ev(n) for n in e.args]
    if op in ("lt", "le", "gt", "ge", "eq"):
        (alo, ahi), (blo, bhi) = a
        if alo != ahi or blo != bhi:
            raise NotTiny(op)  # comparisons of enclosures: leave them to the interval loop
        return _RATIONAL[op](alo, blo)
    if op in ("and", "or", "not"):
        return _RATIONAL[op](*a)
    if op in ("exp", "expm1", "tanh"):
        lo, hi = a[0]
        if lo != hi or abs(lo) > TINY:
            raise NotTiny(op)
        if lo == 0:
            return (Fraction(1),) * 2 if op == "exp" else (Fraction(0),) * 2
        if op == "tanh":
            return _tanh_enclosure(lo)
        l, h = _expm1_enclosure(lo)
        return (l + 1, h + 1) if op == "exp" else (l, h)
    if op == "log1p":
        raise NotTiny(op)
    if op == "neg":
        lo, hi = a[0]
        return (-hi, -lo)
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
    if op in ("min", "max"):
        f = min if op == "min" else max
        return (f(a[0][0], a[1][0]), f(a[0][1], a[1][1]))
    raise NotTiny(op)


# ---- interval evaluation --------------------------------------------------------

iv = mpmath.iv


def _ivq(q: Fraction):
    return iv.mpf(q.numerator) / iv.mpf(q.denominator)


def _endpoints(v):
    return v.a, v.b


def _hull(lo, hi):
    return iv.mpf([lo.a, hi.b])


def _tanh_point(t):
    # tanh(t) = -u / (u + 2) with u = expm1(-2t), for t >= 0; tanh is odd.
    if t >= 0:
        u = iv.expm1(-2 * t)
        return -u / (u + 2)
    u = iv.expm1(2 * t)
    return u / (u + 2)


def _tanh(v):
    # tanh is increasing: the image of [a, b] is [tanh(a), tanh(b)].
    a, b = _endpoints(v)
    return _hull(_tanh_point(iv.mpf(a)), _tanh_point(iv.mpf(b)))


def _cmp(op, a, b):
    a_lo, a_hi = _endpoints(a)
    b_lo, b_hi = _endpoints(b)
    if op == "lt":
        if a_hi < b_lo: return True
        if a_lo >= b_hi: return False
    elif op == "le":
        if a_hi <= b_lo: return True
        if a_lo > b_hi: return False
    elif op == "gt":
        return _cmp("lt", b, a)
    elif op == "ge":
        return _cmp("le", b, a)
    elif op == "eq":
        if a_lo == a_hi == b_lo == b_hi: return True
        if a_hi < b_lo or b_hi < a_lo: return False
    raise Undecided(op)


def _min(a, b):
    return iv.mpf([min(a.a, b.a), min(a.b, b.b)])


def _max(a, b):
    return iv.mpf([max(a.a, b.a), max(a.b, b.b)])


def eval_interval(e: Expr, x: Fraction, attrs: dict[str, Fraction]):
    ev = lambda n: eval_interval(n, x, attrs)  # noqa: E731
    op = e.op
    if op == "var":
        return _ivq(x)
    if op == "attr":
        return _ivq(attrs[e.name])
    if op == "const":
        return _ivq(e.value)
    if op == "select":
        return ev(e.args[1]) if ev(e.args[0]) else ev(e.args[2])
    if op == "isnan":
        return False
    a = [ev(n) for n in e.args]
    if op in ("lt", "le", "gt", "ge", "eq"):
        return _cmp(op, *a)
    if op == "and": return a[0] and a[1]
    if op == "or": return a[0] or a[1]
    if op == "not": return not a[0]
    if op == "add": return a[0] + a[1]
    if op == "sub": return a[0] - a[1]
    if op == "mul": return a[0] * a[1]
    if op == "div": return a[0] / a[1]
    if op == "neg": return -a[0]
    if op == "fma": return a[0] * a[1] + a[2]
    if op == "min": return _min(*a)
    if op == "max": return _max(*a)
    if op == "exp": return iv.exp(a[0])
    if op == "expm1": return iv.expm1(a[0])
    if op == "log1p": return iv.log1p(a[0])
    if op == "tanh": return _tanh(a[0])
    raise ValueError(f"no interval semantics for {op}")


def mpf_to_fraction(raw) -> Fraction:
    """A raw mpmath mpf tuple (sign, man, exp, bc) as an exact Fraction."""
    sign, man, exp, _ = raw
    if not man:
        if exp:  # inf or nan
            raise ValueError("non-finite interval endpoint")
        return Fraction(0)
    q = Fraction(int(man)) * (Fraction(2) ** exp)
    return -q if sign else q


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


def evaluate(e: Expr, x: Fraction, attrs: dict[str, Fraction], fmt: FloatFormat,
             min_prec: int = 0) -> Exact:
    """Exact value of `e` at x, decided for rounding to `fmt` (and, with
    `min_prec`, enclosed to at least that many bits)."""
    try:
        q = eval_rational(e, x, attrs)
        return Exact(q, q)
    except NotRational:
        pass
    try:
        lo, hi = eval_tiny(e, x, attrs)
        narrow = min_prec == 0 or (hi - lo) <= abs(lo) * Fraction(2) ** (-min_prec)
        if lo != 0 and hi != 0 and (lo > 0) == (hi > 0) and narrow and \
                round_fraction(lo, fmt, negative_zero=lo < 0) == round_fraction(hi, fmt, negative_zero=hi < 0):
            return Exact(lo, hi)
    except (NotTiny, ZeroDivisionError):
        pass
    prec = max(fmt.p + 40, min_prec + 10, 64)
    while prec <= MAX_PREC:
        saved = iv.prec
        try:
            iv.prec = prec
            v = eval_interval(e, x, attrs)
            a, b = v._mpi_
            lo, hi = mpf_to_fraction(a), mpf_to_fraction(b)
        except Undecided:
            prec *= 2
            continue
        finally:
            iv.prec = saved
        if lo == hi:
            return Exact(lo, hi)
        rlo = round_fraction(lo, fmt, negative_zero=lo < 0)
        rhi = round_fraction(hi, fmt, negative_zero=hi <= 0)
        same_sign = (lo > 0) == (hi > 0) and lo != 0 and hi != 0
        narrow = min_prec == 0 or (hi - lo) <= abs(lo) * Fraction(2) ** (-min_prec)
        if rlo == rhi and same_sign and narrow:
            return Exact(lo, hi)
        prec *= 2
    raise RuntimeError(f"exact evaluation undecided at {MAX_PREC} bits for x={x}")
