"""One-sided decisions for results that sit exactly on a rounding midpoint.

ScaledTanh at beta = 0.5 sends every binary32 subnormal x to tanh(x / 2), and
x / 2 is a binary32 midpoint: tanh(t) differs from t by t^3/3, far below any
fixed precision, so no ball around t decides the rounding (it used to send
~2^24 inputs, one by one, to the exact path: a 28-minute sweep). What decides
it is the side: 0 < t - tanh(t) < t^3/3 for t > 0 (odd for t < 0).

`evaluate` describes an expression as (m, r, side): the exact value is m
(side 0, r 0), or lies strictly on `side` of m within r. It knows what keeps
that description exact: inputs and binary32 attributes, negation, products
whose binary64 result is exact (checked with an error-free product), tanh of
a tiny exact argument, expm1 of one (above it: Selu at gamma = 3, alpha = 2
puts 6x on a midpoint), erfc of a tiny product of inputs and constants (Gelu:
0.5 x erfc(-x/sqrt 2) is above 0.5 x by less than 0.4 x^2), an exact value
plus such a tiny product, min and max with an exact bound the value is
strictly inside of (HardSwish: x max(0, min(1, x/6 + 1/2)) = x/2 + x^2/6),
sigmoid of a tiny argument in its two stable forms (Swish: x sigmoid(alpha x)
is on the side of alpha of 0.5 x; Gelu's tanh form, x sigmoid(2 sqrt(2/pi) (x +
0.044715 x^3)), on the side of x, the sum's terms having one sign), and selects whose condition is on
attributes alone or on the sign of such a product. Everything else is
`ok = False` (the exact path decides it). `decide` rounds: where m is a midpoint of the target format
and every binary64 value in (m, m + side r] rounds to one value, that value is
the correctly rounded result.
"""

from __future__ import annotations

import operator
from fractions import Fraction

import numpy as np

from opcert.expr import NAMED, PRIMITIVES, Expr
from opcert.expr.fold import Domain, element_wise_only, fold
from opcert.formats import round_float64

# the primitives' own rules are in their records (expr.primitives: `one_sided`)
SUPPORTED = frozenset({"var", "attr", "const", "neg", "mul", "add", "min", "max", "div"}) | frozenset(
    n for n, p in PRIMITIVES.items() if p.one_sided is not None
)
SIGMOID_TINY = 2.0**-30  # below it, sigmoid(u) - 1/2 has the sign of u and is below |u|/4
_COMPARE = {"eq": operator.eq, "lt": operator.lt, "le": operator.le, "gt": operator.gt, "ge": operator.ge}


def supported(e: Expr) -> bool:
    """Whether any part of the domain may be decided: a select counts when one
    of its branches does; a division when it is a sigmoid (see _sigmoid_arg)."""
    return fold(e, _Supported())


class _Supported(Domain):
    """supported() as a fold: a node counts where its kind is one OneSided decides and its operands count;
    a division where it is a sigmoid (whatever its operands), a select where a branch counts (whatever its
    condition). Conditions, NaN tests and reductions do not count."""

    def var(self, e):
        return True

    attr = const = var

    def arithmetic(self, op, args, node=None):
        if op == "div":
            return _sigmoid_arg(node) is not None
        return op in SUPPORTED and all(args)

    def compare(self, op, a, b):
        return False

    def connective(self, op, args):
        return False

    def isnan(self, e, walk):
        return False

    def select(self, e, walk):
        return walk(e.args[1]) or walk(e.args[2])

    def primitive(self, p, a, node=None):
        return p.name in SUPPORTED and a

    def power(self, a, b, node=None):
        return False  # pow has no one-sided rule: the ball and the exact path decide it

    def reduction(self, e, walk):
        return False


def _is_one(e: Expr) -> bool:
    return e.op == "const" and e.name is None and e.value == 1


def _sigmoid_arg(e: Expr):
    """u where e is 1 / (1 + exp(-u)) or exp(u) / (1 + exp(u)), the two stable forms of sigmoid(u)."""
    if e.op != "div":
        return None
    num, den = e.args
    if den.op != "add" or not _is_one(den.args[0]) or den.args[1].op != "exp":
        return None
    t = den.args[1].args[0]
    if _is_one(num) and t.op == "neg":
        return t.args[0]
    if num.op == "exp" and num.args[0] == t:
        return t
    return None


def _sign_cond(e: Expr, x, attrs):
    """A comparison of a product of inputs and constants with 0, decided by its sign (or None)."""
    ops = {"lt": lambda s: s < 0, "le": lambda s: s <= 0, "gt": lambda s: s > 0, "ge": lambda s: s >= 0}
    if e.op not in ops:
        return None
    a, b = e.args
    if b.op == "const" and b.name is None and b.value == 0:
        sb = _sign_bound(a, x, attrs)
        return None if sb is None else ops[e.op](sb[0])
    return None


def _attr_cond(e: Expr, attrs) -> bool | None:
    """The value of a condition on attributes and constants (None: not one)."""
    v = fold(e, _AttrCondition(attrs))
    return v if isinstance(v, bool) else None


class _AttrCondition(Domain):
    """A condition's truth value where it compares attributes and plain constants (and connects such
    comparisons); None where it is not one. An operand of a comparison is an attribute or a constant
    itself (its exact value), anything else leaves it None."""

    def __init__(self, attrs):
        self.attrs = attrs

    def var(self, e):
        return None

    def attr(self, e):
        return Fraction(self.attrs[e.name])

    def const(self, e):
        return Fraction(e.value) if e.name is None else None

    def arithmetic(self, op, args, node=None):
        return None

    def compare(self, op, a, b):
        if not (isinstance(a, Fraction) and isinstance(b, Fraction)):
            return None
        return _COMPARE[op](a, b)

    def connective(self, op, args):
        if not all(isinstance(a, bool) for a in args):
            return None
        return (args[0] and args[1]) if op == "and" else (args[0] or args[1]) if op == "or" else not args[0]

    def select(self, e, walk):
        return None

    def isnan(self, e, walk):
        return None

    def primitive(self, p, a, node=None):
        return None

    def power(self, a, b, node=None):
        return None

    def reduction(self, e, walk):
        return None


def _sign_bound(e: Expr, x, attrs):
    """(sign, bound on |value|) of a product of inputs and constants, or None."""
    return fold(e, _SignBound(x, attrs))


class _SignBound(Domain):
    """(sign, bound on |value|) of a product of inputs and constants, and of a sum of such terms of one sign;
    None for any other node (and anything built on it). Each node once."""

    def __init__(self, x, attrs):
        self.x, self.attrs = x, attrs
        self.memo = {}

    def var(self, e):
        return np.sign(self.x), np.abs(self.x)

    def attr(self, e):
        return self._constant(float(self.attrs[e.name]))

    def const(self, e):
        return self._constant(NAMED[e.name].value64() if e.name else float(e.value))

    @staticmethod
    def _constant(v: float):
        return np.float64(np.sign(v)), abs(v) * (1 + 2.0**-50)  # a named constant: within an ULP

    def arithmetic(self, op, args, node=None):
        if op == "neg":
            (sb,) = args
            return None if sb is None else (-sb[0], sb[1])
        if op not in ("mul", "add") or args[0] is None or args[1] is None:
            return None
        a, b = args
        if op == "mul":
            s = a[0] * b[0]
            return s, np.where(s == 0, 0.0, np.maximum(a[1] * b[1] * (1 + 2.0**-50), 2.0**-1074))
        # a sum of terms of one sign (Gelu's tanh form: x + 0.044715 x^3) has their sign, and at most the sum
        # of their bounds; where the signs differ nothing is known (None)
        if not np.all(a[0] * b[0] >= 0):
            return None
        s = np.where(a[0] == 0, b[0], a[0])
        return s, np.where(s == 0, 0.0, (a[1] + b[1]) * (1 + 2.0**-50))

    def compare(self, op, a, b):
        return None

    def connective(self, op, args):
        return None

    def select(self, e, walk):
        return None

    def isnan(self, e, walk):
        return None

    def primitive(self, p, a, node=None):
        return None

    def power(self, a, b, node=None):
        return None

    def reduction(self, e, walk):
        return None


def _product_exact(a, b):
    """a * b and whether binary64 holds it exactly (Dekker's error-free product)."""
    with np.errstate(all="ignore"):
        from opcert.numerics import errorfree  # lazy: numba loads with the first array, not with opcert

        return a * b, errorfree.product_is_exact(a, b)


def evaluate(e: Expr, x: np.ndarray, attrs: dict[str, float]):
    """(m, r, side, ok) over the binary64 array x."""
    with np.errstate(all="ignore"):
        m, r, s, ok = fold(e, OneSided(x, attrs))
        shape = x.shape
        return (
            np.broadcast_to(m, shape),
            np.broadcast_to(r, shape),
            np.broadcast_to(s, shape),
            np.broadcast_to(ok, shape) & np.isfinite(np.broadcast_to(m, shape)),
        )


def _tiny_exact(e: Expr, x, attrs, tiny: float):
    """e's binary64 value t, and where it is exact and below tiny in magnitude."""
    m, r, s, ok = fold(e, OneSided(x, attrs))
    t = np.asarray(m, dtype=np.float64)
    return t, ok & (s == 0) & (r == 0) & (np.abs(t) < tiny)


class _Analyses:
    """What a primitive's one-sided rule may ask of its argument's expression."""

    def __init__(self, x, attrs):
        self.x, self.attrs = x, attrs

    def tiny_exact(self, e: Expr, tiny: float):
        return _tiny_exact(e, self.x, self.attrs, tiny)

    def sign_bound(self, e: Expr):
        return _sign_bound(e, self.x, self.attrs)

    def one_sided(self, e: Expr):
        return fold(e, OneSided(self.x, self.attrs))


NONE = (np.float64(0.0), 0.0, 0.0, False)  # nothing known: the exact path decides


class OneSided(Domain):
    """(m, r, side, ok) of each node. Its rules read the node's form as well as its operands' values
    (a sum is an exact value plus a tiny term of known sign, a quotient is one of sigmoid's forms, a
    select's condition is on attributes or a sign): they get the node. Each node once (memo)."""

    def __init__(self, x, attrs):
        self.x, self.attrs = x, attrs
        self.memo = {}

    def var(self, e):
        zero = np.zeros(self.x.shape)
        return self.x, zero, zero, np.ones(self.x.shape, dtype=bool)

    def attr(self, e):
        return np.float64(self.attrs[e.name]), 0.0, 0.0, True

    def const(self, e):
        exact = e.name is None and Fraction(float(e.value)) == e.value
        return np.float64(float(e.value) if exact else 0.0), 0.0, 0.0, exact

    def arithmetic(self, op, args, node=None):
        x, attrs = self.x, self.attrs
        if op == "neg":
            ((m, r, s, ok),) = args
            return -m, r, -s, ok
        if op == "mul":
            (ma, ra, sa, oka), (mb, rb, sb, okb) = args
            exact_a = (sa == 0) & (ra == 0)
            exact_b = (sb == 0) & (rb == 0)
            p, exact = _product_exact(np.asarray(ma, dtype=np.float64), np.asarray(mb, dtype=np.float64))
            # one exact factor c times a one-sided value: c m, on side sign(c) s, within |c| r
            r = np.where(exact_a, np.abs(ma) * rb, np.abs(mb) * ra) * (1 + 2.0**-50)
            r = r + np.where(r > 0, 2.0**-1074, 0.0)  # a product in the subnormal range rounds: still a bound
            s = np.where(exact_a, np.sign(ma) * sb, np.sign(mb) * sa)
            zero = (exact_a & (ma == 0)) | (exact_b & (mb == 0))
            ok = oka & okb & (exact_a | exact_b) & (exact | zero)
            return p, np.where(zero, 0.0, r), np.where(zero, 0.0, s), ok
        if op == "add":
            # an exact value plus a tiny term of known sign (HardSwish: 1/2 + x/6, x subnormal)
            for (ma, ra, sa, oka), b in ((args[0], node.args[1]), (args[1], node.args[0])):
                sb = _sign_bound(b, x, attrs)
                if sb is None:
                    continue
                exact = oka & (sa == 0) & (ra == 0)
                sgn, bound = sb
                ok = exact & (np.abs(bound) <= np.abs(ma) * 2.0**-60) & (ma != 0)
                if np.any(ok):
                    return ma, np.where(sgn == 0, 0.0, bound), sgn, ok
            # an exact value plus a one-sided value at 0 (Softplus: t + log1p(e^-t), the second under 2^-1074)
            for (ma, ra, sa, oka), (mb, rb, sb, okb) in ((args[0], args[1]), (args[1], args[0])):
                ok = oka & (sa == 0) & (ra == 0) & okb & (mb == 0) & (sb != 0) & (rb <= np.abs(ma) * 2.0**-60)
                ok = ok & (ma != 0)
                if np.any(ok):
                    return ma, np.where(ok, rb, 0.0), np.where(ok, sb, 0.0), ok
            return NONE
        if op in ("min", "max"):
            # min(c, v) and max(c, v) with an exact c and v's interval strictly on one side: v
            for (ma, ra, sa, oka), (mb, rb, sb, okb) in ((args[0], args[1]), (args[1], args[0])):
                if np.all(np.asarray(sa) == 0) and np.all(np.asarray(ra) == 0) and np.all(oka):
                    lo, hi = np.minimum(mb, mb + sb * rb), np.maximum(mb, mb + sb * rb)
                    b_wins = (hi < ma) if op == "min" else (lo > ma)
                    return mb, rb, sb, okb & b_wins
            return NONE
        if op == "div":
            u = _sigmoid_arg(node)
            sb = None if u is None else _sign_bound(u, x, attrs)
            if sb is None:
                return NONE
            su, bound = sb
            # sigmoid(u) = 1/2 + u/4 - u^3/48 + ...: on the side of u, by less than |u|/4
            return (
                np.float64(0.5),
                np.where(su == 0, 0.0, 0.25 * (1 + 2.0**-20) * bound),
                su,
                np.abs(bound) < SIGMOID_TINY,
            )
        return NONE

    def compare(self, op, a, b):
        return NONE  # conditions are read from their form (select), never evaluated

    def connective(self, op, args):
        return NONE

    def isnan(self, e, walk):
        return NONE

    def select(self, e, walk):
        c = _attr_cond(e.args[0], self.attrs)
        if c is not None:
            return walk(e.args[1] if c else e.args[2])
        c = _sign_cond(e.args[0], self.x, self.attrs)
        if c is None:
            return NONE
        a, b = walk(e.args[1]), walk(e.args[2])
        return tuple(np.where(c, va, vb) for va, vb in zip(a, b))

    reduction = element_wise_only

    def primitive(self, p, a, node=None):
        if p.one_sided is None:
            return NONE
        return p.one_sided(node.args[0], _Analyses(self.x, self.attrs))

    def power(self, a, b, node=None):
        return NONE


def decide(m, r, side, ok, fmt):
    """(decided mask, rounded values, a binary64 value strictly on the decided side of m
    that rounds the same: two binary64 steps past m). Formats of at most 24 bits."""
    with np.errstate(all="ignore"):
        d = np.where(side > 0, np.inf, -np.inf)
        q1 = np.nextafter(m, d)
        q2 = np.nextafter(q1, d)
        q3 = np.nextafter(q2, d)
        far = np.nextafter(m + side * r, d)
        below, above = round_float64(np.nextafter(m, -np.inf), fmt), round_float64(np.nextafter(m, np.inf), fmt)
        midpoint = (below != above) | (np.signbit(below) != np.signbit(above))
        val = round_float64(q1, fmt)
        same = (
            (round_float64(q3, fmt) == val)
            & (round_float64(far, fmt) == val)
            & (np.signbit(round_float64(far, fmt)) == np.signbit(val))
        )
        # binary64 steps near m are far finer than fmt's midpoints: none lies in (m, q1)
        good = ok & (side != 0) & midpoint & same & (np.abs(m) >= 2.0**-1000) & (r <= np.abs(m) * 2.0**-40)
        good &= m - m == 0
    return good, val, q2
