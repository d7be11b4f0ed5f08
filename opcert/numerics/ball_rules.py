"""The ball's arithmetic, written once: what each kind of node does to midpoints, radii and signs.

A ball is a midpoint m, a radius r with |exact - m| <= r, and a sign s (+1 / -1 where the exact value
is known to be > 0 / < 0 from the expression's structure, whatever its magnitude; 0 unknown). Each rule
here takes its operands' balls and returns the node's; the rounding error of the operation is |m| u
(plus eta where the result can underflow), and every radius is computed with the margin (1 + 2^-50) so
that its own rounding cannot make it too small. A primitive's propagation rule is its record's
`ball_radius` (expr.primitives); `primitive` here adds what is common to all of them.

A rule calls no other rule (the compiled one would not find it): each is whole.
The rules are written in expr.ball_ops' vocabulary, so that the same text is the NumPy ball
(numerics.ball, over arrays of binary64 or long double) and the compiled one (numerics.ball_compiled, over
scalars in generated numba code). The evaluators decide only how to walk (subsets per branch, code per
branch, memoisation, which platform function gives a midpoint) and supply what the rules take as
arguments: whether a sum or a product is exact (errorfree's tests), the function's values at the ends
of a wide ball.
"""

from __future__ import annotations

import functools
import math

from opcert.expr import PRIMITIVES
from opcert.expr.ball_ops import NUMPY, compiled, over_arrays

INF = math.inf

B = NUMPY  # the vocabulary's meaning as written; ball_ops.instantiate rebinds it
MARGIN = 1.0 + 2.0**-50  # radius computed with rounding: enlarge it


def settle(m, r):
    """An infinite midpoint stands for "beyond the largest double": a comparison can still discard it
    (min(0, expm1(1000))), and it leaves the result undecided if it reaches it."""
    return B.where(B.isinf(m), 0.0, r)


def neg(ma, ra, sa):
    return -ma, ra, -sa


def absolute(ma, ra, sa):
    return B.fabs(ma), ra, B.fabs(sa)


def add(ma, ra, sa, mb, rb, sb, exact, u):
    """ma + mb; exact: the sum is the real one (TwoSum), so it adds no rounding error (an exact
    midpoint, Linear's 0.5 x + 0.25, then rounds as it is, as the exact path would). Sums are exact in
    the subnormal range: no eta. A difference is the sum with b negated."""
    m = ma + mb
    r = B.where(exact, (ra + rb) * MARGIN, (ra + rb + B.fabs(m) * u) * MARGIN)
    s = B.where(
        B.both(sa == sb, sa != 0),
        sa,
        B.where(
            B.both(B.both(sa != 0, sb == 0), B.both(mb == 0, rb == 0)),
            sa,
            B.where(B.both(B.both(sb != 0, sa == 0), B.both(ma == 0, ra == 0)), sb, B.ball_sign(m, r)),
        ),
    )
    return m, r, s


def mul(ma, ra, sa, mb, rb, sb, exact, u, eta):
    """exact: the product is the real one (Dekker's error-free product); a factor that is exactly
    zero makes the product exactly zero. Where a radius is not 0, its products may underflow (|mb| ra
    to 0 below the subnormals): 2 eta more, whether the midpoint's product is exact or not."""
    m = ma * mb
    rounding = B.where(exact, 0.0, B.fabs(m) * u + eta) + B.where(ra + rb > 0, 2.0 * eta, 0.0)
    zero = B.either(B.both(ma == 0, ra == 0), B.both(mb == 0, rb == 0))
    r = B.where(zero, 0.0, (B.fabs(ma) * rb + B.fabs(mb) * ra + ra * rb + rounding) * MARGIN)
    return m, r, sa * sb


def div(ma, ra, sa, mb, rb, sb, u, eta):
    """ok only where the divisor's ball keeps away from zero."""
    den = B.fabs(mb) - rb
    m = ma / mb
    r = B.where(B.both(ma == 0, ra == 0), 0.0, ((ra + B.fabs(m) * rb) / den + (B.fabs(m) * u + eta)) * MARGIN)
    return m, r, den > 0, sa * sb


def maximum(ma, ra, sa, mb, rb, sb):
    """Disjoint balls: the result is one of them, with its own radius; else a ball covering both."""
    a_wins = ma - ra > mb + rb
    b_wins = mb - rb > ma + ra
    s = B.where(B.either(sa > 0, sb > 0), 1, B.where(B.both(sa < 0, sb < 0), -1, 0))
    m = B.where(a_wins, ma, B.where(b_wins, mb, B.nmax(ma, mb)))
    r = B.where(a_wins, ra, B.where(b_wins, rb, B.nmax(ra, rb) + B.fabs(ma - mb)))
    return m, r, B.where(a_wins, sa, B.where(b_wins, sb, s))


def minimum(ma, ra, sa, mb, rb, sb):
    a_wins = ma + ra < mb - rb
    b_wins = mb + rb < ma - ra
    s = B.where(B.either(sa < 0, sb < 0), -1, B.where(B.both(sa > 0, sb > 0), 1, 0))
    m = B.where(a_wins, ma, B.where(b_wins, mb, B.nmin(ma, mb)))
    r = B.where(a_wins, ra, B.where(b_wins, rb, B.nmax(ra, rb) + B.fabs(ma - mb)))
    return m, r, B.where(a_wins, sa, B.where(b_wins, sb, s))


# ---- primitives: the record's ball_radius gives the propagated radius; this adds the rest -------------


def contract(m, ulps, u, eta):
    """The platform function's error at its value m: k ULPs, ULP(m) <= 2 u |m| (+ subnormal)."""
    return ulps * (B.fabs(m) * (2 * u) + eta)


def ends(m, f_lo, f_hi, ulps, u, eta):
    """The propagated radius of a monotone function over a wide ball [a - r, a + r], from its values
    at the ends taken one step outward (f_lo = f(a - r), f_hi = f(a + r), either order): every value
    of the ball lies between them, each within its contract."""
    return B.nmax(
        B.fabs(f_hi - m) + ulps * (B.fabs(f_hi) * (2 * u) + eta),
        B.fabs(m - f_lo) + ulps * (B.fabs(f_lo) * (2 * u) + eta),
    ) * (1 + 4 * u)


def primitive(m, ma, ra, ok, prop, prop_ok, contract_m, exact_at_zero, exact_at_one, lo, lo_open, hi, hi_open):
    """The radius of f(a) from the propagated radius and the contract; ok where the ball stays in
    f's domain [lo, hi] (open at lo where lo_open, at hi where hi_open; lo = -inf, hi = inf: no bound).
    f(0) and f(1) are exact where the record says so (exp(0) = 1, log(1) = 0). A ball wholly outside
    the domain, or exactly at an open end (log(0), atanh(1)), is outside the real domain: IEEE's value
    there is exact, the platform's m (NaN; the pole's infinity), radius 0, ok as the argument is
    (ball.evaluate takes it at the root only)."""
    # a closed end is reached by a ball of radius 0 alone: the rounded end of a wider ball (as in less) may be
    # the domain's end where the exact one is beyond it (ma - ra at -1 - 1e-17 rounds to -1); an infinite end
    # (no bound) holds every ball whose end is not NaN, an overflowed end included
    inside = B.both(
        B.both(ok, prop_ok),
        B.both(
            B.either(ma - ra > lo, B.both(B.negated(lo_open), B.both(B.either(ra == 0, lo == -INF), ma - ra >= lo))),
            B.either(ma + ra < hi, B.both(B.negated(hi_open), B.both(B.either(ra == 0, hi == INF), ma + ra <= hi))),
        ),
    )
    outside = B.either(
        B.either(ma + ra < lo, ma - ra > hi),
        B.both(ra == 0, B.either(B.both(lo_open, ma == lo), B.both(hi_open, ma == hi))),
    )
    prop = B.where(ra == 0, 0.0, prop)
    exact = B.both(ra == 0, B.either(B.both(ma == 0, exact_at_zero), B.both(ma == 1, exact_at_one)))
    r = B.where(exact, 0.0, (prop + contract_m) * MARGIN * MARGIN)
    return B.where(B.either(B.isinf(m), outside), 0.0, r), B.where(outside, ok, inside)  # as settle


def power(m, ma, ra, mb, f_lo, f_hi, ok, ulps, u, eta):
    """(r, ok, s) of a^b for an exponent ball of radius 0 (the evaluators leave a varying one undecided), from
    the platform's m = pow(ma, b) and, for a wide ball (ra > 0), its values at the ends one step outward. a^b is
    monotone in a on each side of 0 (every b on a > 0, an integer b on a < 0): the ends bound every value of a
    ball that keeps off 0, each within pow's contract (as `ends`). Exact where IEEE's pow is: b = 0 or a = 1
    (1), a = 0 (0, 1, or the pole's infinity). A ball wholly below 0 with a non-integer b is outside the domain:
    IEEE's NaN, radius 0. The sign is a's for an even or non-integer b, and a's times (-1)^b for an odd one."""
    integer = B.floor(mb) == mb
    odd = B.both(integer, B.floor(mb * 0.5) != mb * 0.5)
    above, below = ma - ra > 0, ma + ra < 0
    at_ends = B.nmax(
        B.fabs(f_hi - m) + ulps * (B.fabs(f_hi) * (2 * u) + eta),
        B.fabs(m - f_lo) + ulps * (B.fabs(f_lo) * (2 * u) + eta),
    ) * (1 + 4 * u)
    prop = B.where(ra > 0, at_ends, 0.0)
    r = (prop + ulps * (B.fabs(m) * (2 * u) + eta)) * MARGIN * MARGIN
    exact = B.both(ra == 0, B.either(B.either(mb == 0, ma == 1), ma == 0))
    outside = B.both(below, B.negated(integer))
    r = B.where(B.either(B.either(exact, outside), B.isinf(m)), 0.0, r)
    off = B.either(above, B.both(below, integer))
    ok = B.both(B.both(ok, B.either(off, B.either(exact, outside))), B.either(outside, m == m))
    s = B.where(above, 1, B.where(B.both(below, integer), B.where(odd, -1, 1), 0))
    return r, ok, B.where(B.both(exact, m == 0), 0, s)


# the sign of f(a) from the record's sign rule (expr.primitives.SIGNS)
def sign_positive(m, r, sa):
    return 1


def sign_of_argument(m, r, sa):
    return sa


def sign_positive_where_argument_positive(m, r, sa):
    return B.where(sa > 0, 1, 0)


def sign_of_ball(m, r, sa):
    return B.ball_sign(m, r)


SIGN_RULES = {
    "positive": sign_positive,
    "of_argument": sign_of_argument,
    "positive_where_argument_positive": sign_positive_where_argument_positive,
    "": sign_of_ball,
}


# ---- comparisons and connectives: (value, decided) ------------------------------------------------


def less(ma, ra, mb, rb):
    """(yes, no) of a < b over the balls; exact balls compare their midpoints. The ends are rounded sums: only
    a strict comparison of them implies the exact one (rounding is monotone); ends that round to one value
    leave the comparison undecided (a >= b decided there called fl(pi) < pi false: its ball's end fl(pi) +
    1.2e-16 rounds to fl(pi))."""
    exact = B.both(ra == 0, rb == 0)
    t = ma < mb
    return (B.either(ma + ra < mb - rb, B.both(exact, t)), B.either(ma - ra > mb + rb, B.both(exact, B.negated(t))))


def less_equal(ma, ra, mb, rb):
    """(yes, no) of a <= b over the balls, as less: strict comparisons of the rounded ends."""
    exact = B.both(ra == 0, rb == 0)
    t = ma <= mb
    return (B.either(ma + ra < mb - rb, B.both(exact, t)), B.either(ma - ra > mb + rb, B.both(exact, B.negated(t))))


def equal(ma, ra, mb, rb):
    exact = B.both(ra == 0, rb == 0)
    return (B.both(exact, ma == mb), B.either(B.either(ma + ra < mb - rb, mb + rb < ma - ra), B.both(exact, ma != mb)))


def decision(yes, no, ok_a, ok_b):
    return yes, B.both(B.either(yes, no), B.both(ok_a, ok_b))


def conj(va, da, vb, db):
    """a and b is decided where both are, or where either is decided false."""
    return (B.both(va, vb), B.either(B.either(B.both(da, db), B.both(da, B.negated(va))), B.both(db, B.negated(vb))))


def disj(va, da, vb, db):
    return (B.either(va, vb), B.either(B.either(B.both(da, db), B.both(da, va)), B.both(db, vb)))


def negation(v, d):
    return B.negated(v), d


# comparison -> (rule, operands swapped): a > b is b < a
COMPARISONS = {
    "lt": (less, False),
    "gt": (less, True),
    "le": (less_equal, False),
    "ge": (less_equal, True),
    "eq": (equal, False),
}
CONNECTIVES = {"and": conj, "or": disj, "not": negation}

RULES = (
    settle,
    neg,
    absolute,
    add,
    mul,
    div,
    maximum,
    minimum,
    contract,
    ends,
    primitive,
    power,
    *SIGN_RULES.values(),
    less,
    less_equal,
    equal,
    decision,
    conj,
    disj,
    negation,
)


@functools.cache
def numpy_rules() -> dict:
    """Every rule over arrays, by name (the primitives' radius rules as radius_<name>)."""
    out = {f.__name__: over_arrays(f) for f in RULES}
    out.update({f"radius_{n}": over_arrays(p.ball_radius) for n, p in PRIMITIVES.items() if p.ball_radius})
    return out


@functools.cache
def compiled_rules() -> dict:
    """Every rule over scalars, numba functions, by name (as numpy_rules)."""
    out = {f.__name__: compiled(f) for f in RULES}
    out.update({f"radius_{n}": compiled(p.ball_radius) for n, p in PRIMITIVES.items() if p.ball_radius})
    return out
