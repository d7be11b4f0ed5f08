"""Expressions as z3 real terms.

Exact mode (spec level): arithmetic is exact; exp, expm1 and tanh are
uninterpreted functions with the registry's theorems (expr.primitives), instantiated
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

from opcert.expr import NAMED, Expr
from opcert.expr.fold import Domain, element_wise_only, fold
from opcert.expr.primitives import LINKS, REGISTRY, SIGN_PRESERVING


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
        self.inner = inner  # rounding of each arithmetic operation (None: exact)
        self.funcs: dict[str, z3.FuncDeclRef] = {}
        self.apps: dict[str, list] = defaultdict(list)
        self.anchors: dict[str, set] = defaultdict(set)  # rounding name -> constants
        self.roundings: dict[str, Rounding] = {}
        self.constants: dict[str, object] = {}
        self.truth: RealModel | None = None if exact else RealModel(exact=True)  # the true functions
        self.symbolic_anchors: list = []  # representable values that are terms (the input x)
        # every divisor's (path, term): the branch conditions it is reached under (a select's untaken branch divides
        # by anything: Softsign's 1 / (1 + 1/x) is taken for x > 0 only), and over the reals the definition is
        # claimed where no divisor on the path taken is 0
        self.divisors: list = []
        self.path: list = []  # the select conditions of the branch being built

    def named(self, name: str):
        """A named irrational constant: a real variable inside a 2^-80-wide rational enclosure."""
        if name not in self.constants:
            self.constants[name] = z3.Real(f"const[{name}]")
        return self.constants[name]

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
        return fold(e, _RealDomain(self, x, attrs))

    # -- axioms ------------------------------------------------------------------
    def axioms(self) -> list:
        # a pole (Reciprocal at 0) is outside the real function's domain: z3's x / 0 is any value, which no
        # property of the definition is about; IEEE's value there is each format's (the implementation's proofs)
        out = [z3.Implies(on, d != 0) for on, d in self.divisors] if self.exact else []
        for name, c in self.constants.items():
            lo, hi = NAMED[name].enclosure(80)
            out += [c > Q(lo), c < Q(hi)]
            if NAMED[name].square is not None:
                out.append(c * c == Q(NAMED[name].square))
        done: dict[str, int] = defaultdict(int)
        # axioms may create terms (erf's bound uses exp(-t^2)): instantiate until none is new
        for _ in range(4):
            new = False
            for name in list(self.apps):
                apps = self.apps[name]
                if done[name] == len(apps):
                    continue
                new = True
                start, done[name] = done[name], len(apps)
                if name in self.roundings:
                    continue
                out += self._function_axioms(name, apps, start)
            if not new:
                break
        for name, apps in self.apps.items():
            if name in self.roundings:
                out += self._rounding_axioms(self.roundings[name], apps)
            else:
                out += self._pair_axioms(name, apps)
        out += self._links()
        if self.truth is not None:
            out += self.truth.axioms()
        return out

    def _platform_truth(self, name, t, ft):
        """The contract's error bound: the platform's f(t) is within k ULPs of the true f(t),
        so the true function's theorems (spec level) apply to it, up to that error."""
        p = REGISTRY[name]
        true = self.truth.apply(name, t)
        delta = Q(Fraction(p.ulps) / 2**52)
        eta = Q(Fraction(p.ulps) / 2**1074)
        mag = z3.If(true >= 0, true, -true)
        return [ft - true <= delta * mag + eta, true - ft <= delta * mag + eta]

    def _function_axioms(self, name, apps, start=0):
        """Facts about each application: the registry's theorems (spec level), or
        the platform contract's non-strict facts (implementation level)."""
        p = REGISTRY[name]
        ax = []
        for t, ft in apps[start:]:
            if self.exact:
                ax += p.spec_axioms(self, t, ft)
                continue
            lo, hi = p.bounds
            if lo is not None:
                ax.append(ft >= Q(lo))
            if hi is not None:
                ax.append(ft <= Q(hi))
            for at in (0, 1):
                v = p.exact(Fraction(at))
                if v is not None:
                    ax.append(z3.Implies(t == at, ft == Q(v)))
            if name in SIGN_PRESERVING:
                ax += [z3.Implies(t > 0, ft >= 0), z3.Implies(t < 0, ft <= 0)]
            ax += self._platform_truth(name, t, ft)
        return ax

    def _pair_axioms(self, name, apps):
        p = REGISTRY[name]
        strict = self.exact and p.strict
        ax = []
        for i, (t1, f1) in enumerate(apps):
            for t2, f2 in apps[i + 1 :]:
                if p.increasing is not None:  # None: monotone nowhere on its domain (sin), no order to state
                    a, b = (f1, f2) if p.increasing else (f2, f1)
                    if strict:
                        ax += [z3.Implies(t1 < t2, a < b), z3.Implies(t2 < t1, b < a)]
                    else:
                        ax += [z3.Implies(t1 <= t2, a <= b), z3.Implies(t2 <= t1, b <= a)]
                ax.append(z3.Implies(t1 == t2, f1 == f2))
                if p.odd:
                    ax.append(z3.Implies(t1 == -t2, f1 == -f2))
                if p.even:
                    ax.append(z3.Implies(t1 == -t2, f1 == f2))
        return ax

    def _links(self):
        """Relations between primitives applied to related arguments (expm1 = exp - 1, ...):
        theorems over the reals; the platform's functions are not assumed to satisfy them."""
        if not self.exact:
            return []
        ax = []
        for (f, g), rel in LINKS.items():
            for t1, a in self.apps.get(f, []):
                for t2, b in self.apps.get(g, []):
                    if a is not b:
                        ax.append(rel(t1, a, t2, b))
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
            # values of the format that are terms (the input): rounding is exact on them and monotone
            for v in self.symbolic_anchors:
                ax += [z3.Implies(t <= v, rt <= v), z3.Implies(t >= v, rt >= v)]
        for i, (t1, r1) in enumerate(apps):
            for t2, r2 in apps[i + 1 :]:
                ax += [z3.Implies(t1 <= t2, r1 <= r2), z3.Implies(t2 <= t1, r2 <= r1), z3.Implies(t1 == -t2, r1 == -r2)]
        return ax


class _RealDomain(Domain):
    """z3 real terms: exact arithmetic, or each operation rounded by the model's `inner` rounding (an
    uninterpreted function under its axioms); primitives are uninterpreted functions under their axioms."""

    def __init__(self, model: RealModel, x, attrs: dict):
        self.model, self.x, self.attrs = model, x, attrs

    def var(self, e):
        return self.x

    def attr(self, e):
        v = self.attrs[e.name]
        if self.model.inner is not None and not isinstance(v, z3.ExprRef):
            self.model.anchor(self.model.inner, v)
        return Q(v) if not isinstance(v, z3.ExprRef) else v

    def const(self, e):
        if e.name is not None:
            return self.model.named(e.name)
        if self.model.inner is not None:
            self.model.anchor(self.model.inner, e.value)
        return Q(e.value)

    def isnan(self, e, walk):
        return z3.BoolVal(False)  # real inputs are never NaN (NaN is proved apart)

    def select(self, e, walk):
        c = walk(e.args[0])
        self.model.path.append(c)
        a = walk(e.args[1])
        self.model.path[-1] = z3.Not(c)
        b = walk(e.args[2])
        self.model.path.pop()
        return z3.If(c, a, b)

    reduction = element_wise_only

    def primitive(self, p, a, node=None):
        return self.model.apply(p.name, a)

    def compare(self, op, a, b):
        return {
            "lt": lambda: a < b,
            "le": lambda: a <= b,
            "gt": lambda: a > b,
            "ge": lambda: a >= b,
            "eq": lambda: a == b,
        }[op]()

    def connective(self, op, a):
        return z3.And(a[0], a[1]) if op == "and" else z3.Or(a[0], a[1]) if op == "or" else z3.Not(a[0])

    def arithmetic(self, op, a, node=None):
        if op == "neg":
            return -a[0]
        if op == "abs":
            return z3.If(a[0] >= 0, a[0], -a[0])
        if op == "min":
            return z3.If(a[0] <= a[1], a[0], a[1])
        if op == "max":
            return z3.If(a[0] >= a[1], a[0], a[1])
        exact = {
            "add": lambda: a[0] + a[1],
            "sub": lambda: a[0] - a[1],
            "mul": lambda: a[0] * a[1],
            "div": lambda: a[0] / a[1],
            "fma": lambda: a[0] * a[1] + a[2],
        }[op]()
        if op == "div":
            path = self.model.path
            self.model.divisors.append((z3.And(*path) if path else z3.BoolVal(True), a[1]))
        return self.model.round(self.model.inner, exact)
