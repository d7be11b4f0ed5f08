"""The reference's fast path: an expression evaluated in binary64 ball arithmetic.

Every intermediate value is a midpoint m (binary64) and a radius r with
|exact - m| <= r. Arithmetic propagates the radius from the operands' radii and
adds the rounding error of the operation (at most |m| 2^-53, and 2^-1075 where
a result underflows); a primitive adds its platform error contract (k ULPs,
expr.primitives) and propagates its operand's radius through a bound on its
derivative over [m - r, m + r]. Radii are computed with a margin (1 + 2^-50)
so that their own rounding cannot make them too small, and the ends m - r and
m + r are taken one binary64 step outward.

The same arithmetic runs in a wider precision for binary64 results (WIDE:
NumPy's long double where it has at least 64 significand bits, the x87
extended format on x86-64 Linux, binary128 on aarch64): unit roundoff 2^-64,
and the platform's long double functions (glibc's expl, expm1l, tanhl, log1pl,
logl) under contracts in ULPs of that format (WIDE.ulps). erf and erfc have no
long double function in NumPy: an expression that uses them is undecided there
and goes to the exact path. Where long double is binary64 (Windows, macOS on
arm64) WIDE is None and binary64 results all take the exact path.

An element is decided when both ends round to the same value of the target
format: then that value is the correctly rounded result, with no assumption
beyond the stated contracts. A comparison whose balls overlap, a primitive
whose ball leaves its domain, or a non-finite midpoint leaves the element
undecided, for the exact path (spec.exact). The expression is the operator's
`reference_form`: the definition rewritten to be well conditioned in floating
point, and proved equal to it over the reals (tests/test_catalog.py).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ..expr import NAMED, PRIMITIVES, Expr

U = 2.0 ** -53             # unit roundoff of binary64
ETA = 2.0 ** -1074         # the smallest subnormal: bounds underflow
MARGIN = 1.0 + 2.0 ** -50  # radius computed with rounding: enlarge it


@dataclass(frozen=True)
class Precision:
    dtype: type
    u: float                 # unit roundoff
    eta: float               # the smallest subnormal: bounds underflow
    ulps: dict | None        # primitive contracts in ULPs of this format (None: the binary64 ones)


BINARY64 = Precision(np.float64, U, ETA, None)


def _wide() -> Precision | None:
    fi = np.finfo(np.longdouble)
    if fi.nmant < 63:
        return None
    # glibc's libm-test-ulps list at most 4 ULPs (round to nearest) for these long double
    # functions on x86-64; the contract doubles that. tests/test_reference_wide.py checks
    # each against Arb, and every decision of this path against the exact path.
    return Precision(np.longdouble, float(fi.eps) / 2, fi.smallest_subnormal,
                     {n: p.long_double_ulps for n, p in PRIMITIVES.items() if p.long_double_ulps is not None})


WIDE = _wide()


def without_fast_path(e: Expr, precision: Precision | None) -> set[str]:
    """The primitives of e that have no function in `precision` (every input of
    an expression that uses one takes the exact path)."""
    if precision is None:
        return {"long double"}
    out = set()
    if e.op in PRIMITIVES and precision.ulps is not None and precision.ulps.get(e.op) is None:
        out.add(e.op)
    for a in e.args:
        out |= without_fast_path(a, precision)
    return out


def _up(q: Fraction) -> float:
    """A binary64 value >= q."""
    f = float(q)
    return f if Fraction(f) >= q else float(np.nextafter(f, math.inf))


def ball_constant(e: Expr, P: Precision):
    if e.name is not None:
        lo, hi = NAMED[e.name].enclosure(120)
        m = NAMED[e.name].value64() if P is BINARY64 else _nearest(Fraction(lo + hi) / 2, P)
    else:
        lo = hi = e.value
        m = float(e.value) if P is BINARY64 else _nearest(e.value, P)
    q = Fraction(*m.as_integer_ratio()) if P is not BINARY64 else Fraction(m)
    return P.dtype(m), P.dtype(_up(max(abs(q - lo), abs(hi - q))))


def _nearest(q: Fraction, P: Precision):
    """q in P's format, to within a few of its ULPs (the radius covers the rest)."""
    h = float(q)
    return P.dtype(h) + P.dtype(float(q - Fraction(h)))


def _round_err(m, P: Precision):
    return np.abs(m) * P.u + P.eta


def evaluate(e: Expr, x: np.ndarray, attrs: dict[str, float], precision: Precision = BINARY64):
    """(midpoints, radii, ok, sign) for the binary64 array x; ok is False where
    undecided; sign is +1 / -1 where the exact value is known to be > 0 / < 0
    (from the expression's structure, whatever its magnitude), 0 where unknown.
    Midpoints and radii are in `precision`'s format."""
    with np.errstate(all="ignore"):
        m, r, ok, sg = _ev(e, np.asarray(x).astype(precision.dtype), attrs, precision)
        m = np.broadcast_to(m, x.shape)
        r = np.broadcast_to(r, x.shape)
        sg = np.broadcast_to(sg, x.shape)
        ok = np.broadcast_to(ok, x.shape) & np.isfinite(m) & np.isfinite(r)
    return m, r, ok, sg


def _ball_sign(m, r):
    """The sign the ball itself proves (0 where it touches zero)."""
    return np.where(m - r > 0, 1, np.where(m + r < 0, -1, 0))


def _ev(e: Expr, x, attrs, P):
    m, r, ok, sg = _ev1(e, x, attrs, P)
    # an infinite midpoint stands for "beyond the largest double" (see _primitive)
    return m, np.where(np.isinf(m), 0.0, r), ok, sg


def _select(e: Expr, x, attrs, P):
    """Each branch on the elements that take it (Gelu's choice of form is one
    branch for every element: the other is not evaluated at all)."""
    c, cok = ball_condition(e.args[0], x, attrs, P)
    c, cok = np.broadcast_to(c, x.shape), np.broadcast_to(cok, x.shape)
    if x.ndim != 1:
        ma, ra, oka, sa = _ev(e.args[1], x, attrs, P)
        mb, rb, okb, sb = _ev(e.args[2], x, attrs, P)
        return np.where(c, ma, mb), np.where(c, ra, rb), cok & np.where(c, oka, okb), np.where(c, sa, sb)
    m, r = np.zeros(x.shape, dtype=P.dtype), np.zeros(x.shape, dtype=P.dtype)
    ok, sg = cok.copy(), np.zeros(x.shape, dtype=np.int8)
    for idx, branch in ((np.nonzero(c)[0], e.args[1]), (np.nonzero(~c)[0], e.args[2])):
        if not idx.size:
            continue
        whole = idx.size == x.size
        mm, rr, oo, ss = _ev(branch, x if whole else x[idx], attrs, P)
        m[idx], r[idx], sg[idx] = mm, rr, ss
        ok[idx] &= oo
    return m, r, ok, sg


def _ev1(e: Expr, x, attrs, P):
    op = e.op
    true = np.ones(x.shape, dtype=bool)
    if op == "var":
        return x, np.zeros(x.shape, dtype=P.dtype), true, np.sign(x).astype(np.int8)
    if op == "attr":
        v = P.dtype(attrs[e.name])
        return v, P.dtype(0.0), true, np.int8(np.sign(v))
    if op == "const":
        m, r = ball_constant(e, P)
        return m, r, true, np.int8(np.sign(m) if r < abs(m) else 0)
    if op == "select":
        return _select(e, x, attrs, P)
    a = [_ev(n, x, attrs, P) for n in e.args]
    ok = true
    for _, _, o, _ in a:
        ok = ok & o
    if op == "neg":
        return -a[0][0], a[0][1], ok, -a[0][3]
    if op == "abs":
        return np.abs(a[0][0]), a[0][1], ok, np.abs(a[0][3])
    if op in ("add", "sub"):
        (ma, ra, _, sa), (mb, rb, _, sb) = a
        if op == "sub":
            sb = -sb
        m = ma + mb if op == "add" else ma - mb
        r = (ra + rb + np.abs(m) * P.u) * MARGIN          # sums are exact in the subnormal range: no ETA
        # an exact sum adds no rounding error (TwoSum: m + err = ma +- mb exactly): an exact
        # midpoint (Linear's 0.5 x + 0.25) then rounds as it is, as the exact path would
        b = mb if op == "add" else -mb
        if P.dtype == np.float64:
            from .errorfree import sum_is_exact
            exact = sum_is_exact(ma, b)
        else:
            bb = m - ma
            exact = (ma - (m - bb)) + (b - bb) == 0
        r = np.where(exact, (ra + rb) * MARGIN, r)
        sg = np.where((sa == sb) & (sa != 0), sa, np.where((sa != 0) & (sb == 0) & (mb == 0) & (rb == 0), sa,
                                                           np.where((sb != 0) & (sa == 0) & (ma == 0) & (ra == 0),
                                                                    sb, _ball_sign(m, r))))
        return m, r, ok, sg.astype(np.int8)
    if op == "mul":
        (ma, ra, _, sa), (mb, rb, _, sb) = a
        m = ma * mb
        exact_zero = ((ma == 0) & (ra == 0)) | ((mb == 0) & (rb == 0))
        rounding = _round_err(m, P)
        if P.dtype == np.float64:   # an exact product (Dekker's error-free product) adds no rounding error
            from .errorfree import product_is_exact
            rounding = np.where(product_is_exact(ma, mb), 0.0, rounding)
        r = np.where(exact_zero, 0.0, (np.abs(ma) * rb + np.abs(mb) * ra + ra * rb + rounding) * MARGIN)
        return m, r, ok, (sa * sb).astype(np.int8)
    if op == "div":
        (ma, ra, _, sa), (mb, rb, _, sb) = a
        den = np.abs(mb) - rb
        m = ma / mb
        r = ((ra + np.abs(m) * rb) / den + _round_err(m, P)) * MARGIN
        r = np.where((ma == 0) & (ra == 0), 0.0, r)
        return m, r, ok & (den > 0), (sa * sb).astype(np.int8)
    if op == "fma":
        (ma, ra, _, sa), (mb, rb, _, sb), (mc, rc, _, sc) = a
        p = ma * mb
        rp = (np.abs(ma) * rb + np.abs(mb) * ra + ra * rb + _round_err(p, P)) * MARGIN
        m = p + mc
        r = (rp + rc + np.abs(m) * P.u) * MARGIN
        sp = sa * sb
        sg = np.where((sp == sc) & (sp != 0), sp, _ball_sign(m, r))
        return m, r, ok, sg.astype(np.int8)
    if op in ("min", "max"):
        # disjoint balls: the result is one of them, with its own radius; else a ball covering both
        (ma, ra, _, sa), (mb, rb, _, sb) = a
        a_wins = (ma - ra > mb + rb) if op == "max" else (ma + ra < mb - rb)
        b_wins = (mb - rb > ma + ra) if op == "max" else (mb + rb < ma - ra)
        m = np.minimum(ma, mb) if op == "min" else np.maximum(ma, mb)
        r = np.where(a_wins, ra, np.where(b_wins, rb, np.maximum(ra, rb) + np.abs(ma - mb)))
        mm = np.where(a_wins, ma, np.where(b_wins, mb, m))
        if op == "max":
            sg = np.where((sa > 0) | (sb > 0), 1, np.where((sa < 0) & (sb < 0), -1, 0))
        else:
            sg = np.where((sa < 0) | (sb < 0), -1, np.where((sa > 0) & (sb > 0), 1, 0))
        sg = np.where(a_wins, sa, np.where(b_wins, sb, sg))
        return mm, r, ok, sg.astype(np.int8)
    if op in PRIMITIVES:
        (ma, ra, _, sa), = a
        m, r, ok2 = _primitive(op, ma, ra, ok, P)
        rule = PRIMITIVES[op].sign
        if rule == "positive":
            sg = np.ones(np.shape(m), dtype=np.int8)
        elif rule == "of_argument":
            sg = sa
        elif rule == "positive_where_argument_positive":
            sg = np.where(sa > 0, 1, 0)
        else:
            sg = _ball_sign(m, r)
        return m, r, ok2, np.asarray(sg, dtype=np.int8)
    raise ValueError(f"no ball semantics for {op}")


def _primitive(name, ma, ra, ok, P):
    p = PRIMITIVES[name]
    ulps = p.ulps if P.ulps is None else P.ulps.get(name)
    if ulps is None:     # no function of this precision: undecided here, for the exact path
        return np.zeros(np.shape(ma), dtype=P.dtype), np.zeros(np.shape(ma), dtype=P.dtype), ok & False
    m = p.numpy(ma)
    U = P.u
    contract = ulps * (np.abs(m) * 2 * U + P.eta)     # k ULPs, ULP(m) <= 2 U |m| (+ subnormal)
    if name in ("exp", "expm1"):
        base = np.abs(m) if name == "exp" else np.abs(1 + m)
        prop = base * (1 + 4 * U) * np.expm1(ra)
        # where a wide radius blows the derivative bound up, the ends of the ball still bound
        # it (the function is increasing): a saturated exp(-1e300 +- 1e281) is 0 +- tiny
        wide = np.nonzero(np.broadcast_to(ra, np.shape(m)) > 2.0 ** -20)[0] if np.ndim(m) else []
        if len(wide):
            f, mw, rw = p.numpy, np.asarray(ma)[wide], np.broadcast_to(ra, np.shape(m))[wide]
            hi = f(np.nextafter(mw + rw, np.inf))
            lo = f(np.nextafter(mw - rw, -np.inf))
            hi = hi + ulps * (np.abs(hi) * 2 * U + P.eta)
            lo = lo - ulps * (np.abs(lo) * 2 * U + P.eta)
            prop = np.array(np.broadcast_to(prop, np.shape(m)))
            prop[wide] = np.fmin(prop[wide], np.maximum(hi - m[wide], m[wide] - lo) * (1 + 4 * U))
    elif name in ("tanh",):
        # tanh' = sech^2 <= 4 e^(-2|t|): saturated arguments carry almost none of their radius
        prop = np.array(np.broadcast_to(ra, np.shape(m)), copy=True)
        big = np.nonzero(prop > 0)[0] if np.ndim(m) else []
        if len(big):
            t = np.maximum(np.abs(np.asarray(ma)[big]) - prop[big], 0.0)
            prop[big] = prop[big] * np.minimum(1.0, 4.04 * np.exp(-2 * t))
    elif name in ("erf", "erfc"):
        t = np.maximum(np.abs(ma) - ra, 0.0)
        prop = 1.1285 * np.exp(-t * t) * ra
    elif name == "log1p":
        den = 1 + ma - ra
        ok = ok & (den > 0)
        prop = ra / den
    elif name == "log":
        den = ma - ra
        ok = ok & (den > 0)
        prop = ra / den
    elif name == "sqrt":
        den = ma - ra
        ok = ok & (den > 0)
        prop = ra / (2 * np.sqrt(den))
    else:
        raise ValueError(f"no ball semantics for primitive {name}")
    lo, lo_open, hi = p.domain
    if lo is not None:
        ok = ok & ((ma - ra > lo) if lo_open else (ma - ra >= lo))
    # exp(0) = 1, log(1) = 0 and the like are exact
    exact = (ra == 0) & (((ma == 0) & (p.exact(Fraction(0)) is not None)) |
                         ((ma == 1) & (p.exact(Fraction(1)) is not None)))
    prop = np.where(ra == 0, 0.0, prop)
    r = np.where(exact, 0.0, (prop + contract) * MARGIN * MARGIN)
    # an overflowed midpoint stands for "beyond the largest double": a comparison can still
    # discard it (min(0, expm1(1000))), and it leaves the result undecided if it reaches it
    r = np.where(np.isinf(m), 0.0, r)
    return m, r, ok


def ball_condition(e: Expr, x, attrs, P):
    """(value, decided) of a boolean expression over balls."""
    op = e.op
    if op == "isnan":
        return np.zeros(x.shape, dtype=bool), np.ones(x.shape, dtype=bool)
    if op == "not":
        v, d = ball_condition(e.args[0], x, attrs, P)
        return ~v, d
    if op in ("and", "or"):
        (va, da), (vb, db) = ball_condition(e.args[0], x, attrs, P), ball_condition(e.args[1], x, attrs, P)
        if op == "and":
            v = va & vb
            d = (da & db) | (da & ~va) | (db & ~vb)
        else:
            v = va | vb
            d = (da & db) | (da & va) | (db & vb)
        return v, d
    (ma, ra, oka, _), (mb, rb, okb, _) = _ev(e.args[0], x, attrs, P), _ev(e.args[1], x, attrs, P)
    lo_a, hi_a, lo_b, hi_b = ma - ra, ma + ra, mb - rb, mb + rb
    exact = (ra == 0) & (rb == 0)
    if op in ("lt", "gt"):
        if op == "gt":
            lo_a, hi_a, lo_b, hi_b = lo_b, hi_b, lo_a, hi_a
        yes, no = hi_a < lo_b, lo_a >= hi_b
        yes = yes | (exact & (ma < mb if op == "lt" else mb < ma))
        no = no | (exact & ~(ma < mb if op == "lt" else mb < ma))
    elif op in ("le", "ge"):
        if op == "ge":
            lo_a, hi_a, lo_b, hi_b = lo_b, hi_b, lo_a, hi_a
        yes, no = hi_a <= lo_b, lo_a > hi_b
        yes = yes | (exact & (ma <= mb if op == "le" else mb <= ma))
        no = no | (exact & ~(ma <= mb if op == "le" else mb <= ma))
    elif op == "eq":
        yes = exact & (ma == mb)
        no = (hi_a < lo_b) | (hi_b < lo_a) | (exact & (ma != mb))
    else:
        raise ValueError(f"not a comparison: {op}")
    shape = x.shape
    yes, no = np.broadcast_to(yes, shape), np.broadcast_to(no, shape)
    return yes, (yes | no) & np.broadcast_to(oka & okb, shape)


def decide(m, r, ok, fmt, sign=None):
    """The correctly rounded values in fmt where the ball decides them, and the mask.

    A ball inside [-s/2, s/2] (s the smallest subnormal of fmt) rounds to a
    zero; its sign is the sign analysis' where that is known."""
    from ..formats import round_float64
    m, r = np.asarray(m), np.asarray(r)
    with np.errstate(all="ignore"):
        rr = np.where(ok, r, 0.0)
        lo = np.where(rr > 0, np.nextafter(m - rr, -np.inf), m)
        hi = np.where(rr > 0, np.nextafter(m + rr, np.inf), m)
        if m.dtype == np.float64:
            rlo, rhi = round_float64(lo, fmt), round_float64(hi, fmt)
        elif fmt.p == 53:    # a wider midpoint: the CPU's conversion rounds to nearest, ties to even
            rlo, rhi = lo.astype(np.float64), hi.astype(np.float64)
        else:
            raise ValueError(f"a {m.dtype} ball decides binary64 results only, not {fmt.name}")
        # an exact zero is decided (its sign comes from the definition); a ball that
        # straddles zero, or ends on a different sign, is not
        zero = (m == 0) & (rr == 0)
        same = (rlo == rhi) & (np.signbit(rlo) == np.signbit(rhi)) & ((lo > 0) | (hi < 0))
        val = np.where(zero, m.astype(np.float64), rlo)
        if sign is not None:
            half = np.ldexp(m.dtype.type(1), fmt.emin - fmt.p)   # half the smallest subnormal of fmt
            under = ~zero & ~same & (lo >= -half) & (hi <= half) & (sign != 0)
            val = np.where(under, np.where(sign > 0, 0.0, -0.0), val)
            same = same | under
    return val, ok & (same | zero)
