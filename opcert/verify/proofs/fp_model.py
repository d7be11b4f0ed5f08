"""Expressions as bit-precise z3 floating-point terms (the implementation, exactly).

The input x is a value of the I/O format (float16: FPSort(5, 11), bfloat16:
FPSort(8, 8)), widened exactly to binary64; attributes and constants are binary64
values; every operation is IEEE binary64 with rounding to nearest even, as NumPy
executes it; the result is rounded once to the I/O format. min/max are IEEE
754-2019 minimum/maximum. The platform's exp/expm1/tanh are uninterpreted
binary64 functions with contracts.PLATFORM_CONTRACT, instantiated on the terms
that occur; pow, C's special cases around an uninterpreted function of |a| (FPModel.power).
"""

from __future__ import annotations

from collections import defaultdict
from fractions import Fraction

import z3

from opcert.expr import NAMED, Expr
from opcert.expr.fold import Domain, element_wise_only, fold
from opcert.expr.primitives import AT_INF, REGISTRY, SIGN_PRESERVING
from opcert.formats import FloatFormat

F64 = z3.Float64()
RNE = z3.RNE()


def fp_sort(fmt: FloatFormat) -> z3.FPSortRef:
    ebits = fmt.bits - fmt.p
    return z3.FPSort(ebits, fmt.p)


def val64(v) -> z3.FPRef:
    return z3.FPVal(float(Fraction(v)), F64)


class FPModel:
    def __init__(self):
        self.funcs = {}
        self.apps = defaultdict(list)
        self.pows: list = []  # (m, b, M(m, b)): the magnitudes of power()
        self.negative_pows: list = []  # (the platform's pow at a negative base a, whether b is odd, a, b)

    def apply(self, name, arg):
        f = self.funcs.get(name)
        if f is None:
            f = self.funcs[name] = z3.Function(name + "64", F64, F64)
        app = f(arg)
        self.apps[name].append((arg, app))
        return app

    def eval(self, e: Expr, x, attrs: dict):
        return fold(e, _FPDomain(self, x, attrs))

    def function(self, name, *sorts):
        f = self.funcs.get(name)
        if f is None:
            f = self.funcs[name] = z3.Function(name, *sorts, F64)
        return f

    def power(self, a, b):
        """The platform's pow(a, b): C's special cases (C99 Annex F) around M(|a|, b), an uninterpreted binary64
        function under pow's contract (expr.pow_record); at a negative a a value of its own, of the sign an odd or
        even integer b gives (no parity: NumPy's pow is not odd bit for bit). pow(-inf, b) for a finite non-integer b is left free: C's pow gives
        +inf, NumPy's SIMD loops NaN."""
        one, nan = val64(1), z3.fpNaN(F64)
        m = z3.fpAbs(a)
        p = self.function("pow64", F64, F64)(m, b)
        self.pows.append((m, b, p))
        finite_b = z3.Not(z3.Or(z3.fpIsInf(b), z3.fpIsNaN(b)))
        integral = z3.And(finite_b, z3.fpEQ(z3.fpRoundToIntegral(RNE, b), b))
        half = z3.fpDiv(RNE, b, val64(2))  # exact for an integer b
        odd = z3.And(integral, z3.Not(z3.fpEQ(z3.fpRoundToIntegral(RNE, half), half)))
        negative = z3.And(z3.fpIsNegative(a), z3.Not(z3.fpIsZero(a)))
        return z3.If(
            z3.Or(z3.fpIsNaN(a), z3.fpIsNaN(b)),
            z3.If(z3.Or(z3.fpEQ(a, one), z3.fpIsZero(b)), one, nan),  # pow(1, NaN) = pow(NaN, 0) = 1
            z3.If(
                z3.And(negative, finite_b, z3.Not(integral)),
                z3.If(z3.fpIsInf(a), self.function("pow64_neg_inf", F64)(b), nan),
                # a negative base: a value of its own (NumPy's pow is not odd bit for bit: its AVX-512 loop gives
                # pow(-a, 3) and -pow(a, 3) an ULP apart), of the sign the parity gives
                z3.If(
                    negative, self._negative_base(a, m, b, odd), z3.If(z3.And(z3.fpIsNegative(a), odd), z3.fpNeg(p), p)
                ),
            ),
        )

    def _negative_base(self, a, m, b, odd):
        q = self.function("pow64_negative_base", F64, F64)(m, b)
        self.negative_pows.append((q, odd, a, b))
        return q

    def _power_axioms(self) -> list:
        """pow's contract on M(m, b), m = |a| not NaN, b not NaN: C's values at 0, 1 and +inf, non-negative,
        monotone in m for a fixed b (non-decreasing for b > 0, non-increasing for b < 0)."""
        ax = []
        zero, one, inf = val64(0), val64(1), z3.fpPlusInfinity(F64)
        for q, odd, a, b in self.negative_pows:  # a < 0: its sign (negative exactly for an odd b), pow(a, 0), pow(a, 1)
            below = z3.And(z3.fpLT(a, zero), z3.Not(z3.fpIsNaN(b)))
            ax += [
                z3.Implies(below, z3.Not(z3.fpIsNaN(q))),
                z3.Implies(below, z3.fpIsNegative(q) == odd),
                z3.Implies(z3.And(below, z3.fpIsZero(b)), q == one),
                z3.Implies(z3.And(below, z3.fpEQ(b, one)), q == a),
            ]
        for m, b, p in self.pows:
            num = z3.Not(z3.Or(z3.fpIsNaN(m), z3.fpIsNaN(b)))
            ax += [
                z3.Implies(num, z3.And(z3.Not(z3.fpIsNaN(p)), z3.Not(z3.fpIsNegative(p)))),
                z3.Implies(z3.fpIsZero(b), p == one),
                z3.Implies(z3.fpEQ(m, one), p == one),
                z3.Implies(z3.fpEQ(b, one), p == m),
                z3.Implies(z3.And(z3.fpIsZero(m), z3.fpGT(b, zero)), p == zero),
                z3.Implies(z3.And(z3.fpIsZero(m), z3.fpLT(b, zero)), p == inf),
                z3.Implies(z3.And(z3.fpIsInf(m), z3.fpGT(b, zero)), p == inf),
                z3.Implies(z3.And(z3.fpIsInf(m), z3.fpLT(b, zero)), p == zero),
            ]
        for i, (m1, b1, p1) in enumerate(self.pows):
            for m2, b2, p2 in self.pows[i + 1 :]:
                for (u, pu), (v, pv) in (((m1, p1), (m2, p2)), ((m2, p2), (m1, p1))):
                    ax += [
                        z3.Implies(z3.And(b1 == b2, z3.fpGT(b1, zero), z3.fpLEQ(u, v)), z3.fpLEQ(pu, pv)),
                        z3.Implies(z3.And(b1 == b2, z3.fpLT(b1, zero), z3.fpLEQ(u, v)), z3.fpGEQ(pu, pv)),
                    ]
        return ax

    def implementation(self, e: Expr, x, attrs, fmt: FloatFormat):
        """The implementation on an input x of fmt's sort: widen, evaluate, round once."""
        wide = z3.fpToFP(RNE, x, F64)
        return z3.fpToFP(RNE, self.eval(e, wide, attrs), fp_sort(fmt))

    def axioms(self) -> list:
        """The platform contract of each primitive (expr.primitives), as binary64 facts."""
        ax = self._power_axioms()
        for name, apps in self.apps.items():
            p = REGISTRY[name]
            lo_dom, lo_open, hi_dom, hi_open = p.domain
            neg_inf, pos_inf = AT_INF[name]
            for t, ft in apps:
                ax.append(z3.Implies(z3.fpIsNaN(t), z3.fpIsNaN(ft)))
                in_dom = z3.Not(z3.fpIsNaN(t))
                if lo_dom is not None:
                    in_dom = z3.And(in_dom, z3.fpGT(t, val64(lo_dom)) if lo_open else z3.fpGEQ(t, val64(lo_dom)))
                if hi_dom is not None:
                    in_dom = z3.And(in_dom, z3.fpLT(t, val64(hi_dom)) if hi_open else z3.fpLEQ(t, val64(hi_dom)))
                ax.append(z3.Implies(in_dom, z3.Not(z3.fpIsNaN(ft))))
                lo, hi = p.bounds
                if lo is not None:
                    ax.append(z3.Implies(in_dom, z3.fpGEQ(ft, val64(lo))))
                if hi is not None:
                    ax.append(z3.Implies(in_dom, z3.fpLEQ(ft, val64(hi))))
                v0 = p.exact(Fraction(0))
                if v0 is not None:
                    ax.append(z3.Implies(z3.fpIsZero(t), ft == (t if v0 == 0 else val64(v0))))
                if name in SIGN_PRESERVING:
                    ax += [
                        z3.Implies(z3.fpGT(t, val64(0)), z3.fpGEQ(ft, val64(0))),
                        z3.Implies(z3.fpLT(t, val64(0)), z3.fpLEQ(ft, val64(0))),
                    ]
                for v, sign in ((pos_inf, 1), (neg_inf, -1)):
                    is_inf = z3.And(z3.fpIsInf(t), z3.fpIsPositive(t) if sign > 0 else z3.fpIsNegative(t))
                    if v is not None:
                        ax.append(z3.Implies(is_inf, ft == val64(v)))
            for i, (t1, f1) in enumerate(apps):
                for t2, f2 in apps[i + 1 :]:
                    if p.increasing is not None:  # None: monotone nowhere on its domain (sin)
                        a, b = (f1, f2) if p.increasing else (f2, f1)
                        ax += [
                            z3.Implies(z3.fpLEQ(t1, t2), z3.fpLEQ(a, b)),
                            z3.Implies(z3.fpLEQ(t2, t1), z3.fpLEQ(b, a)),
                        ]
                    if p.odd:
                        ax.append(z3.Implies(t1 == z3.fpNeg(t2), f1 == z3.fpNeg(f2)))
                    if p.even:  # the record's `even`: the platform's function gives the same bits at t and -t
                        ax.append(z3.Implies(t1 == z3.fpNeg(t2), f1 == f2))
        return ax


class _FPDomain(Domain):
    """Bit-precise binary64 terms (z3's floating point, round to nearest even); a primitive is an
    uninterpreted function under its platform contract (FPModel.axioms), or z3's own where IEEE 754 requires
    it correctly rounded."""

    def __init__(self, model: FPModel, x, attrs: dict):
        self.model, self.x, self.attrs = model, x, attrs

    def var(self, e):
        return self.x

    def attr(self, e):
        return val64(self.attrs[e.name])

    def const(self, e):
        return z3.FPVal(NAMED[e.name].value64(), F64) if e.name is not None else val64(e.value)

    def select(self, e, walk):
        return z3.If(walk(e.args[0]), walk(e.args[1]), walk(e.args[2]))

    def isnan(self, e, walk):
        return z3.fpIsNaN(walk(e.args[0]))

    reduction = element_wise_only

    def primitive(self, p, a, node=None):
        if p.ieee is not None:  # z3's own operation, bit for bit
            return p.ieee(RNE, a)
        return self.model.apply(p.name, a)

    def power(self, a, b, node=None):
        # sound for an exponent that depends on x too: the contract's facts hold for every b
        return self.model.power(a, b)

    def compare(self, op, a, b):
        return {"lt": z3.fpLT, "le": z3.fpLEQ, "gt": z3.fpGT, "ge": z3.fpGEQ, "eq": z3.fpEQ}[op](a, b)

    def connective(self, op, a):
        return z3.And(a[0], a[1]) if op == "and" else z3.Or(a[0], a[1]) if op == "or" else z3.Not(a[0])

    def arithmetic(self, op, a, node=None):
        if op == "abs":
            return z3.fpAbs(a[0])
        if op == "neg":
            return z3.fpNeg(a[0])
        if op in ("min", "max"):
            return _ieee_minmax(op, a[0], a[1])
        if op == "fma":
            return z3.fpFMA(RNE, a[0], a[1], a[2])
        return {"add": z3.fpAdd, "sub": z3.fpSub, "mul": z3.fpMul, "div": z3.fpDiv}[op](RNE, a[0], a[1])


def _ieee_minmax(op, a, b):
    nan = z3.fpNaN(a.sort())
    either_nan = z3.Or(z3.fpIsNaN(a), z3.fpIsNaN(b))
    if op == "min":
        pick = z3.If(z3.fpLT(a, b), a, z3.If(z3.fpLT(b, a), b, z3.If(z3.fpIsNegative(a), a, b)))
    else:
        pick = z3.If(z3.fpGT(a, b), a, z3.If(z3.fpGT(b, a), b, z3.If(z3.fpIsNegative(a), b, a)))
    return z3.If(either_nan, nan, pick)
