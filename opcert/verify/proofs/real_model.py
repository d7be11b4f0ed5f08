"""Expressions as z3 real terms.

Exact mode (spec level): arithmetic is exact; exp, expm1 and tanh are
uninterpreted functions with the axioms of contracts.SPEC_AXIOMS, instantiated
on every term that occurs and on every pair of terms (ground instantiation: no
quantifiers, so z3 decides the queries).

Rounding mode (implementation level, binary32/binary64): every rounded
operation is R(exact result), where R is an uninterpreted function with the
properties every rounding to nearest has: monotone, odd, exact on the format's
values (the constants that occur), and within a relative error u plus an
absolute error eta (subnormals). The platform's exp/expm1/tanh are
uninterpreted functions with contracts.PLATFORM_CONTRACT. A counterexample in
this mode may be spurious (the abstraction admits functions that are not
rounding): the prover replays it before calling anything refuted.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from fractions import Fraction

import z3

from ...expr import TRANSCENDENTAL, Expr


def Q(v) -> z3.ArithRef:
    v = Fraction(v)
    return z3.RealVal(f"{v.numerator}/{v.denominator}")


@dataclass(frozen=True)
class Rounding:
    """A rounding function of the abstraction: name, unit roundoff, absolute
    error near zero, and how constants round (a function Fraction -> Fraction)."""
    name: str
    unit: Fraction
    eta: Fraction
    round_const: object


class RealModel:
    def __init__(self, exact: bool = True, inner: Rounding | None = None):
        self.exact = exact
        self.inner = inner            # rounding of each arithmetic operation (None: exact)
        self.funcs: dict[str, z3.FuncDeclRef] = {}
        self.apps: dict[str, list] = defaultdict(list)
        self.anchors: dict[str, set] = defaultdict(set)   # rounding name -> constants
        self.roundings: dict[str, Rounding] = {}

    # -- building terms --------------------------------------------------------
    def apply(self, name: str, arg):
        f = self.funcs.get(name)
        if f is None:
            f = self.funcs[name] = z3.Function(name, z3.RealSort(), z3.RealSort())
        app = f(arg)
        self.apps[name].append((arg, app))
        return app

    def round(self, r: Rounding | None, v):
        if r is None:
            return v
        self.roundings[r.name] = r
        return self.apply(r.name, v)

    def anchor(self, r: Rounding, c: Fraction):
        """Record a constant whose rounding by r the axioms should state."""
        self.roundings[r.name] = r
        self.anchors[r.name].add(Fraction(c))

    def eval(self, e: Expr, x, attrs: dict):
        ev = lambda n: self.eval(n, x, attrs)  # noqa: E731
        op = e.op
        if op == "var":
            return x
        if op == "attr":
            v = attrs[e.name]
            if self.inner is not None and not isinstance(v, z3.ExprRef):
                self.anchor(self.inner, v)
            return Q(v) if not isinstance(v, z3.ExprRef) else v
        if op == "const":
            if self.inner is not None:
                self.anchor(self.inner, e.value)
            return Q(e.value)
        if op == "isnan":
            return z3.BoolVal(False)   # real inputs are never NaN (NaN is proved apart)
        if op == "select":
            return z3.If(ev(e.args[0]), ev(e.args[1]), ev(e.args[2]))
        a = [ev(n) for n in e.args]
        if op in TRANSCENDENTAL:
            return self.apply(op, a[0])
        if op == "neg":
            return -a[0]
        if op == "min":
            return z3.If(a[0] <= a[1], a[0], a[1])
        if op == "max":
            return z3.If(a[0] >= a[1], a[0], a[1])
        if op in ("lt", "le", "gt", "ge", "eq"):
            return {"lt": a[0] < a[1], "le": a[0] <= a[1], "gt": a[0] > a[1], "ge": a[0] >= a[1],
                    "eq": a[0] == a[1]}[op]
        if op == "and":
            return z3.And(a[0], a[1])
        if op == "or":
            return z3.Or(a[0], a[1])
        if op == "not":
            return z3.Not(a[0])
        exact = {"add": lambda: a[0] + a[1], "sub": lambda: a[0] - a[1], "mul": lambda: a[0] * a[1],
                 "div": lambda: a[0] / a[1], "fma": lambda: a[0] * a[1] + a[2]}[op]()
        return self.round(self.inner, exact)

    # -- axioms ------------------------------------------------------------------
    def axioms(self) -> list:
        out = []
        for name, apps in self.apps.items():
            if name in self.roundings:
                out += self._rounding_axioms(self.roundings[name], apps)
            else:
                out += self._function_axioms(name, apps)
        return out

    def _function_axioms(self, name, apps):
        ax = []
        strict = self.exact
        for t, ft in apps:
            if name == "tanh":
                ax += [ft > -1, ft < 1] if strict else [ft >= -1, ft <= 1]
                ax += [z3.Implies(t == 0, ft == 0), z3.Implies(t > 0, ft > 0 if strict else ft >= 0),
                       z3.Implies(t < 0, ft < 0 if strict else ft <= 0)]
                if strict:
                    ax += [z3.Implies(t >= 0, ft <= t), z3.Implies(t <= 0, ft >= t)]
            elif name == "exp":
                ax += [ft > 0 if strict else ft >= 0, z3.Implies(t == 0, ft == 1)]
                if strict:
                    ax.append(ft >= 1 + t)
            elif name == "expm1":
                ax += [ft > -1 if strict else ft >= -1, z3.Implies(t == 0, ft == 0),
                       z3.Implies(t > 0, ft > 0 if strict else ft >= 0),
                       z3.Implies(t < 0, ft < 0 if strict else ft <= 0)]
                if strict:
                    ax.append(ft >= t)
            elif name == "log1p":
                ax += [z3.Implies(t == 0, ft == 0)]
        for i, (t1, f1) in enumerate(apps):
            for t2, f2 in apps[i + 1:]:
                if strict:
                    ax += [z3.Implies(t1 < t2, f1 < f2), z3.Implies(t2 < t1, f2 < f1)]
                else:
                    ax += [z3.Implies(t1 <= t2, f1 <= f2), z3.Implies(t2 <= t1, f2 <= f1)]
                ax.append(z3.Implies(t1 == t2, f1 == f2))
                if name == "tanh":
                    ax.append(z3.Implies(t1 == -t2, f1 == -f2))
        return ax

    def _rounding_axioms(self, r: Rounding, apps):
        ax = []
        u, eta = Q(r.unit), Q(r.eta)
        # Rounding to nearest is odd: every anchor c gives -c too.
        base = self.anchors.get(r.name, set()) | {Fraction(0)}
        anchors = sorted(base | {-c for c in base})
        for t, rt in apps:
            mag = z3.If(t >= 0, t, -t)
            ax += [rt - t <= u * mag + eta, t - rt <= u * mag + eta]
            for c in anchors:
                rc = Q(r.round_const(c))
                ax += [z3.Implies(t <= Q(c), rt <= rc), z3.Implies(t >= Q(c), rt >= rc)]
        for i, (t1, r1) in enumerate(apps):
            for t2, r2 in apps[i + 1:]:
                ax += [z3.Implies(t1 <= t2, r1 <= r2), z3.Implies(t2 <= t1, r2 <= r1),
                       z3.Implies(t1 == -t2, r1 == -r2)]
        return ax
