"""The reference's fast path: an expression evaluated in binary64 ball arithmetic.

Every intermediate value is a midpoint m (binary64) and a radius r with
|exact - m| <= r. Arithmetic propagates the radius from the operands' radii and
adds the rounding error of the operation (at most |m| 2^-53, and 2^-1075 where
a result underflows); a primitive adds its platform error contract (k ULPs,
expr.primitives) and propagates its operand's radius through a bound on its
derivative over [m - r, m + r] (its record's radius rule). Radii are computed
with a margin (1 + 2^-50) so that their own rounding cannot make them too
small, and the ends m - r and m + r are taken one binary64 step outward.

Those rules are numerics.ball_rules', written once: this module runs them over
NumPy arrays (`Balls`, a fold domain), numerics.ball_compiled over scalars in
generated code; tests/test_ball_compiled.py checks that the two compute the
same balls bit for bit where they are given the same primitive values.

The same arithmetic runs in a wider precision for binary64 results (WIDE:
NumPy's long double where it has at least 64 significand bits, the x87
extended format on x86-64 Linux, binary128 on aarch64): unit roundoff 2^-64,
and the platform's long double functions (glibc's expl, expm1l, tanhl, log1pl,
logl) under contracts in ULPs of that format (WIDE.ulps). NumPy has no erf or
erfc: glibc's erfl and erfcl come through expr.libm_arrays where it can be
built; where not, an expression that uses them is undecided there and goes to
the exact path. Where long double is binary64 (Windows, macOS on arm64) WIDE is
None and binary64 results all take the exact path. The binary64 balls take a
primitive's values from expr.primitives.binary64_array (glibc's vector
functions where the host has them, under their 4-ULP contract; else NumPy's).

An element is decided when both ends round to the same value of the target
format: then that value is the correctly rounded result, with no assumption
beyond the stated contracts. A comparison whose balls overlap, a primitive
whose ball leaves its domain, or a non-finite midpoint leaves the element
undecided, for the exact path (numerics.exact). The expression is the operator's
`reference_form`: the definition rewritten to be well conditioned in floating
point, and proved equal to it over the reals (tests/test_catalog.py).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from opcert.expr import NAMED, PRIMITIVES, Expr, pow_record
from opcert.expr.fold import Domain, fold
from opcert.expr.numpy_eval import depth, pairwise_sum, row_first_max, row_maximum
from opcert.expr.primitives import binary64_array, long_double_array
from opcert.formats import round_float64
from opcert.numerics.ball_rules import COMPARISONS, CONNECTIVES, SIGN_RULES, numpy_rules

U = 2.0**-53  # unit roundoff of binary64
ETA = 2.0**-1074  # the smallest subnormal: bounds underflow


@dataclass(frozen=True)
class Precision:
    dtype: type
    u: float  # unit roundoff
    eta: float  # the smallest subnormal: bounds underflow
    ulps: dict | None  # primitive contracts in ULPs of this format (None: the binary64 ones)


BINARY64 = Precision(np.float64, U, ETA, None)


def _wide() -> Precision | None:
    fi = np.finfo(np.longdouble)
    if fi.nmant < 63:
        return None
    # glibc's libm-test-ulps list at most 4 ULPs (round to nearest) for these long double
    # functions on x86-64; the contract doubles that. tests/test_reference_wide.py checks
    # each against Arb, and every decision of this path against the exact path.
    return Precision(
        np.longdouble,
        float(fi.eps) / 2,
        fi.smallest_subnormal,
        {n: p.long_double_ulps for n, p in PRIMITIVES.items() if p.long_double_ulps is not None}
        | {"pow": pow_record.LONG_DOUBLE_ULPS},
    )


WIDE = _wide()


def without_fast_path(e: Expr, precision: Precision | None) -> set[str]:
    """The primitives of e that have no function in `precision` (every input of
    an expression that uses one takes the exact path)."""
    if precision is None:
        return {"long double"}
    if precision.ulps is None:
        return set()
    return {
        n.op
        for n in e.nodes()
        if (n.op in PRIMITIVES and (precision.ulps.get(n.op) is None or long_double_array(n.op) is None))
        or (n.op == "pow" and precision.ulps.get("pow") is None)
    }


def _up(q: Fraction) -> float:
    """A binary64 value >= q."""
    f = float(q)
    return f if Fraction(f) >= q else float(np.nextafter(f, math.inf))


def ball_constant(e: Expr, P: Precision):
    if e.name is not None:
        lo, hi = NAMED[e.name].enclosure(120)
        m = NAMED[e.name].value64() if P.dtype == np.float64 else _nearest(Fraction(lo + hi) / 2, P)
    else:
        lo = hi = e.value
        m = float(e.value) if P.dtype == np.float64 else _nearest(e.value, P)
    q = Fraction(*m.as_integer_ratio()) if P.dtype != np.float64 else Fraction(m)
    return P.dtype(m), P.dtype(_up(max(abs(q - lo), abs(hi - q))))


def _nearest(q: Fraction, P: Precision):
    """q in P's format, to within a few of its ULPs (the radius covers the rest)."""
    h = float(q)
    return P.dtype(h) + P.dtype(float(q - Fraction(h)))


def constant(e: Expr, P: Precision):
    """A constant's ball and its sign (known where the ball keeps away from zero)."""
    m, r = ball_constant(e, P)
    return m, r, int(np.sign(m)) if r < abs(m) else 0


def _at_root(e: Expr, leaf) -> bool:
    """leaf(n) for the node n that gives e its value through negations, absolute values and selects (every
    branch of a select)."""
    if e.op in ("neg", "abs"):
        return _at_root(e.args[0], leaf)
    if e.op == "select":
        return _at_root(e.args[1], leaf) and _at_root(e.args[2], leaf)
    return leaf(e)


def may_be_beyond(e: Expr) -> bool:
    """Whether an infinite midpoint of e's ball (radius 0) can only mean a value beyond the largest finite
    value: e is a primitive (its platform value overflowed: exp(1000)), or a negation, absolute value or
    select of such. After other arithmetic it need not (beyond + -1e308 may be finite; 1 / beyond is not 0),
    so there an infinite midpoint leaves the element undecided, as before."""
    return _at_root(e, lambda n: n.op in PRIMITIVES or n.op in ("pow", "var", "const"))


def may_be_outside(e: Expr) -> bool:
    """Whether a NaN midpoint of e's ball (radius 0) can only be IEEE's value of a primitive outside its real
    domain (log(-1), sqrt(-1): ball_rules.primitive): e is a primitive, or a negation, absolute value or
    select of such (pow: a negative base to a non-integer power)."""
    return _at_root(e, lambda n: n.op in PRIMITIVES or n.op == "pow")


def evaluate(e: Expr, x: np.ndarray, attrs: dict[str, float], precision: Precision = BINARY64):
    """(midpoints, radii, ok, sign) for the binary64 array x; ok is False where
    undecided; sign is +1 / -1 where the exact value is known to be > 0 / < 0
    (from the expression's structure, whatever its magnitude), 0 where unknown.
    Midpoints and radii are in `precision`'s format. An infinite midpoint with
    radius 0 (ok) is a value beyond the largest finite value of that format (a
    primitive's overflow at the root, may_be_beyond): it decides a narrower
    format's result (an infinity), not a result of the ball's own format (decide).
    A NaN midpoint with radius 0 (ok) is IEEE's value of the root's primitive
    outside its real domain (may_be_outside): a NaN result, in every format."""
    with np.errstate(all="ignore"):
        m, r, ok, sg = fold(e, Balls(np.asarray(x).astype(precision.dtype), attrs, precision))
        m = np.broadcast_to(m, x.shape)
        r = np.broadcast_to(r, x.shape)
        sg = np.broadcast_to(sg, x.shape)
        beyond = (r == 0) & ~np.isnan(m) if may_be_beyond(e) else False
        outside = (r == 0) & np.isnan(m) if may_be_outside(e) else False
        ok = np.broadcast_to(ok, x.shape) & (np.isfinite(m) | beyond | outside) & np.isfinite(r)
    return m, r, ok, sg


def ball_condition(e: Expr, x, attrs, P):
    """(value, decided) of a boolean expression over balls."""
    with np.errstate(all="ignore"):
        return fold(e, Balls(np.asarray(x).astype(P.dtype), attrs, P))


def _errorfree():
    from opcert.numerics import errorfree  # lazy: numba loads with the first array, not with opcert

    return errorfree


def _sum_exact(a, b, P: Precision):
    """a + b is the real sum (TwoSum)."""
    if P.dtype == np.float64:
        return _errorfree().sum_is_exact(a, b)
    s = a + b
    bb = s - a
    return (a - (s - bb)) + (b - bb) == 0


def _product_exact(a, b, P: Precision):
    """a * b is the real product (Dekker's); binary64 only (a wider product: taken as rounded)."""
    if P.dtype == np.float64:
        return _errorfree().product_is_exact(a, b)
    return False


class Balls(Domain):
    """The ball over NumPy arrays of x's format: the rules of numerics.ball_rules, each node once (Mish's
    exp(x), four times in its form), a select's branches each on the elements that take it (Gelu's
    choice of form is one branch for every element: the other is not evaluated at all)."""

    def __init__(self, x, attrs, P: Precision):
        self.x, self.attrs, self.P = x, attrs, P
        self.memo = {}
        self.true = np.ones(x.shape, dtype=bool)
        self.R = numpy_rules()

    def _node(self, m, r, ok, s):
        return m, self.R["settle"](m, r), ok, np.asarray(s, dtype=np.int8)

    def var(self, e):
        x = self.x
        return x, np.zeros(x.shape, dtype=self.P.dtype), self.true, np.sign(x).astype(np.int8)

    def attr(self, e):
        v = self.P.dtype(self.attrs[e.name])
        return v, self.P.dtype(0.0), self.true, np.int8(np.sign(v))

    def const(self, e):
        m, r, s = constant(e, self.P)
        return m, r, self.true, np.int8(s)

    def arithmetic(self, op, args, node=None):
        R, u, eta = self.R, self.P.u, self.P.eta
        ok = self.true
        for a in args:
            ok = ok & a[2]
        if op in ("neg", "abs"):
            ((ma, ra, _, sa),) = args
            m, r, s = R["neg" if op == "neg" else "absolute"](ma, ra, sa)
        elif op in ("add", "sub"):
            (ma, ra, _, sa), (mb, rb, _, sb) = args
            if op == "sub":
                mb, sb = -mb, -sb
            m, r, s = R["add"](ma, ra, sa, mb, rb, sb, _sum_exact(ma, mb, self.P), u)
        elif op == "mul":
            (ma, ra, _, sa), (mb, rb, _, sb) = args
            m, r, s = R["mul"](ma, ra, sa, mb, rb, sb, _product_exact(ma, mb, self.P), u, eta)
        elif op == "div":
            (ma, ra, _, sa), (mb, rb, _, sb) = args
            m, r, dok, s = R["div"](ma, ra, sa, mb, rb, sb, u, eta)
            ok = ok & dok
        elif op == "fma":
            # the product's ball, then the sum's: each exact where its midpoint operation is (a scale of 1 and a B
            # of 0 leave z's ball as it was, and its sign: one rule for both roundings lost both, and sent most of
            # a normalization's elements at the identity to the exact path)
            (ma, ra, _, sa), (mb, rb, _, sb), (mc, rc, _, sc) = args
            mp, rp, sp = R["mul"](ma, ra, sa, mb, rb, sb, _product_exact(ma, mb, self.P), u, eta)
            m, r, s = R["add"](mp, rp, sp, mc, rc, sc, _sum_exact(mp, mc, self.P), u)
        elif op in ("min", "max"):
            (ma, ra, _, sa), (mb, rb, _, sb) = args
            m, r, s = R["minimum" if op == "min" else "maximum"](ma, ra, sa, mb, rb, sb)
        else:
            raise ValueError(f"no ball semantics for {op}")
        return self._node(m, r, ok, s)

    def compare(self, op, a, b):
        rule, swapped = COMPARISONS[op]
        (ma, ra, oka, _), (mb, rb, okb, _) = (b, a) if swapped else (a, b)
        yes, no = self.R[rule.__name__](ma, ra, mb, rb)
        v, d = self.R["decision"](yes, no, oka, okb)
        return np.broadcast_to(v, self.x.shape), np.broadcast_to(d, self.x.shape)

    def connective(self, op, args):
        return self.R[CONNECTIVES[op].__name__](*(part for a in args for part in a))

    def isnan(self, e, walk):
        return np.zeros(self.x.shape, dtype=bool), np.ones(self.x.shape, dtype=bool)

    def select(self, e, walk):
        x, P = self.x, self.P
        c, cok = walk(e.args[0])
        c, cok = np.broadcast_to(c, x.shape), np.broadcast_to(cok, x.shape)
        if x.ndim != 1:
            ma, ra, oka, sa = walk(e.args[1])
            mb, rb, okb, sb = walk(e.args[2])
            return np.where(c, ma, mb), np.where(c, ra, rb), cok & np.where(c, oka, okb), np.where(c, sa, sb)
        m, r = np.zeros(x.shape, dtype=P.dtype), np.zeros(x.shape, dtype=P.dtype)
        ok, sg = cok.copy(), np.zeros(x.shape, dtype=np.int8)
        for idx, branch in ((np.nonzero(c)[0], e.args[1]), (np.nonzero(~c)[0], e.args[2])):
            if not idx.size:
                continue
            whole = idx.size == x.size
            mm, rr, oo, ss = walk(branch) if whole else fold(branch, Balls(x[idx], self.attrs, P))
            m[idx], r[idx], sg[idx] = mm, rr, ss
            ok[idx] &= oo
        return m, r, ok, sg

    def reduction(self, e, walk):
        """Over rows along x's last axis. rowsum: pairwise_sum of the midpoints, whose rounding error is
        at most gamma_d * sum |m_j| (d = depth(n), expr.numpy_eval), plus the sum of the radii; rowmax: the
        largest midpoint, within the largest radius (the maximum is 1-Lipschitz in each argument);
        rowfirstmax: decided where every ball of the row is a point (then the comparisons are exact)."""
        P, shape = self.P, self.x.shape
        m, r, ok, s = (np.broadcast_to(v, shape) for v in walk(e.args[0]))
        row_ok = np.all(ok, axis=-1, keepdims=True)
        if e.op == "rowfirstmax":
            exact = row_ok & np.all(r == 0, axis=-1, keepdims=True)
            return row_first_max(m), np.broadcast_to(exact, shape)
        if e.op == "rowmax":
            mm = row_maximum(m)
            rr = np.max(r, axis=-1, keepdims=True) if shape[-1] else np.zeros_like(mm)
            sg = np.where(
                np.any(s > 0, axis=-1, keepdims=True), 1, np.where(np.all(s < 0, axis=-1, keepdims=True), -1, 0)
            )
            return self._node(mm, rr, row_ok & np.isfinite(mm), sg)
        d = depth(shape[-1])
        gamma = P.dtype(d * P.u / (1 - d * P.u))
        # each computed sum of non-negative terms is within gamma of the real one: divide by (1 - gamma)
        total = (pairwise_sum(r) + gamma * pairwise_sum(np.abs(m))) / (1 - gamma) * (1 + 4 * P.u)
        sg = (
            np.where(np.all(s > 0, axis=-1, keepdims=True), 1, np.where(np.all(s < 0, axis=-1, keepdims=True), -1, 0))
            if shape[-1]
            else 0
        )
        return self._node(pairwise_sum(m), total, row_ok, sg)

    def primitive(self, p, a, node=None):
        P, R = self.P, self.R
        ma, ra, ok, sa = a
        if P.ulps is None:
            f, ulps, _ = binary64_array(p.name)
        else:
            fu = long_double_array(p.name) if P.ulps.get(p.name) is not None else None
            if fu is None:  # no function of this precision: undecided here, for the exact path
                zero = np.zeros(np.shape(ma), dtype=P.dtype)
                return zero, zero, ok & False, np.zeros(np.shape(ma), dtype=np.int8)
            f, ulps = fu
        m = f(ma)
        contract = R["contract"](m, ulps, P.u, P.eta)
        prop, prop_ok, wide = R[f"radius_{p.name}"](m, ma, ra, contract, P.u)
        if np.any(wide):  # the ends of the wide balls (few: only those are computed)
            shape = np.broadcast(m, ma, ra, prop).shape
            w = np.broadcast_to(wide, shape)
            mw, aw, rw = (np.broadcast_to(v, shape)[w] for v in (m, ma, ra))
            prop = np.array(np.broadcast_to(prop, shape))
            prop[w] = R["ends"](
                mw, f(np.nextafter(aw - rw, -np.inf)), f(np.nextafter(aw + rw, np.inf)), ulps, P.u, P.eta
            )
        lo, lo_open, hi, hi_open = p.domain
        r, ok = R["primitive"](
            m,
            ma,
            ra,
            ok,
            prop,
            prop_ok,
            contract,
            p.exact(Fraction(0)) is not None,
            p.exact(Fraction(1)) is not None,
            -np.inf if lo is None else float(lo),
            lo_open,
            np.inf if hi is None else float(hi),
            hi_open,
        )
        return self._node(m, r, ok, R[SIGN_RULES[p.sign].__name__](m, r, sa))

    def power(self, a, b, node=None):
        """ball_rules.power with the platform's pow (pow_record.signed_power: NumPy's, an integer power of a negative
        base from |a|'s); b = 1 is a itself and b = 2 the product's rule, whose exactness test decides the squares
        that land on a format's midpoint."""
        P, R = self.P, self.R
        (ma, ra, oka, sa), (mb, rb, okb, _) = a, b
        ok = oka & okb & (rb == 0)
        if np.ndim(mb) == 0 and mb in (1, 2):
            if mb == 1:
                return ma, ra, ok, sa
            m, r, s = R["mul"](ma, ra, sa, ma, ra, sa, _product_exact(ma, ma, P), P.u, P.eta)
            return self._node(m, r, ok, s)
        ulps = pow_record.ULPS if P.ulps is None else P.ulps.get("pow")
        if ulps is None:  # no pow of this precision: undecided, for the exact path
            zero = np.zeros(np.broadcast(ma, mb).shape, dtype=P.dtype)
            return zero, zero, zero != zero, zero.astype(np.int8)
        f = pow_record.signed_power
        with np.errstate(all="ignore"):
            m = f(ma, mb)
            wide = np.broadcast_to(ra > 0, np.shape(m))
            f_lo = f_hi = m
            if wide.any():
                f_lo, f_hi = f(np.nextafter(ma - ra, -np.inf), mb), f(np.nextafter(ma + ra, np.inf), mb)
            r, ok, s = R["power"](m, ma, ra, mb, f_lo, f_hi, ok, ulps, P.u, P.eta)
        return self._node(m, r, ok, s)


def decide(m, r, ok, fmt, sign=None):
    """The correctly rounded values in fmt where the ball decides them, and the mask.

    A ball inside [-s/2, s/2] (s the smallest subnormal of fmt) rounds to a
    zero; its sign is the sign analysis' where that is known."""
    m, r = np.asarray(m), np.asarray(r)
    with np.errstate(all="ignore"):
        rr = np.where(ok, r, 0.0)
        lo = np.where(rr > 0, np.nextafter(m - rr, -np.inf), m)
        hi = np.where(rr > 0, np.nextafter(m + rr, np.inf), m)
        if m.dtype == np.float64:
            rlo, rhi = round_float64(lo, fmt), round_float64(hi, fmt)
        elif fmt.p == 53:  # a wider midpoint: the CPU's conversion rounds to nearest, ties to even
            rlo, rhi = lo.astype(np.float64), hi.astype(np.float64)
        else:
            # a narrower format: each end widened outward to binary64 (a superset of the ball), then rounded
            # once; rounding is monotone, so two ends that round alike decide every value between them
            lo64, hi64 = lo.astype(np.float64), hi.astype(np.float64)
            lo64 = np.where(lo64 > lo, np.nextafter(lo64, -np.inf), lo64)
            hi64 = np.where(hi64 < hi, np.nextafter(hi64, np.inf), hi64)
            rlo, rhi = round_float64(lo64, fmt), round_float64(hi64, fmt)
        # an exact zero is decided (its sign comes from the definition); a ball that
        # straddles zero, or ends on a different sign, is not
        zero = (m == 0) & (rr == 0)
        nan = np.isnan(m) & (rr == 0)  # outside the domain: NaN (evaluate)
        same = (rlo == rhi) & (np.signbit(rlo) == np.signbit(rhi)) & ((lo > 0) | (hi < 0))
        if fmt.emax >= np.finfo(m.dtype).maxexp - 1:  # beyond the ball's largest finite: not beyond fmt's
            same = same & np.isfinite(m)
        val = np.where(zero, m.astype(np.float64), rlo)
        if sign is not None:
            half = np.ldexp(m.dtype.type(1), fmt.emin - fmt.p)  # half the smallest subnormal of fmt
            under = ~zero & ~same & (lo >= -half) & (hi <= half) & (sign != 0)
            val = np.where(under, np.where(sign > 0, 0.0, -0.0), val)
            same = same | under
    return np.where(nan, np.nan, val), ok & (same | zero | nan)
