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

pow(a, b) over the reals is +-M(|a|, b), M uninterpreted (RealModel.power): its sign and parity are then the term's
form, for an attribute b that is symbolic as for a numeral one. The platform's pow at a negative base is a value of
its own under the contract (no parity: NumPy's is not odd bit for bit).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from fractions import Fraction

import z3

from opcert.expr import NAMED, Expr, pow_record
from opcert.expr.fold import Domain, element_wise_only, fold
from opcert.expr.primitives import LINKS, REGISTRY, SIGN_PRESERVING
from opcert.numerics.exact import eval_rational

SMALL_POWER = 8  # a^n for an integer numeral |n| <= 8: the product itself (exact mode)


def _numeral(t) -> Fraction | None:
    t = z3.simplify(t)
    return Fraction(t.numerator_as_long(), t.denominator_as_long()) if z3.is_rational_value(t) else None


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
        self.pows: list = []  # (m, b, M(m, b), the true M or None): the magnitudes |a|^b of power()
        self.negative_pows: list = []  # (the platform's pow at -m, the true signed value, its magnitude, odd b)

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
        out += self._power_axioms()
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

    # -- pow (expr.pow_record) ----------------------------------------------------
    def power(self, a, b):
        """a^b as a term: a product where b is a small integer numeral (exact mode); elsewhere (-1)^b M(|a|, b) for
        a < 0 and an odd integer b, M(|a|, b) otherwise, M an uninterpreted function: the real power under its
        theorems, or in rounding mode the platform's pow under its contract. Parity is then the term's own form,
        which the contract states bit for bit. Where a^b is undefined (a < 0 with b not an integer: IEEE's NaN; the
        pole at a = 0 for b < 0) it is recorded as a divisor is: a term that is 0 exactly there, so that the
        definition is claimed where it is defined, and the abstraction asks whether an input reaches it."""
        q = _numeral(b)
        on = z3.And(*self.path) if self.path else z3.BoolVal(True)
        if q is None:
            defined = z3.Or(a > 0, z3.And(a == 0, b >= 0), z3.And(a < 0, z3.IsInt(b)))
            self.divisors.append((on, z3.If(defined, 1, 0)))
        elif not pow_record.is_integer(q):
            self.divisors.append((on, z3.If(a > 0 if q < 0 else a >= 0, 1, 0)))
        elif q < 0:
            self.divisors.append((on, a))
        if q == 0 or q == 1:  # pow(a, 0) = 1 and pow(a, 1) = a: the definition, and clauses of the contract
            return Q(1) if q == 0 else a
        if self.exact and q is not None and q.denominator == 1 and abs(q) <= SMALL_POWER:
            t = a
            for _ in range(abs(q.numerator) - 1):
                t = t * a
            return t if q > 0 else 1 / t
        m = z3.If(a >= 0, a, -a)
        # the true magnitude beside the platform's: the contract's error bound relates them
        true = self.truth.magnitude(m, b) if self.truth is not None else None
        p = self.magnitude(m, b, true)
        odd = (
            z3.BoolVal(pow_record.is_odd_integer(q)) if q is not None else z3.And(z3.IsInt(b), z3.Not(z3.IsInt(b / 2)))
        )
        if self.exact:
            return z3.If(z3.And(a < 0, odd), -p, p)
        # the platform's pow at a negative base is a value of its own, within the contract of the true one: NumPy's
        # pow is not odd bit for bit (its AVX-512 loop gives pow(-a, 3) and -pow(a, 3) an ULP apart), so no parity
        # ties it to the value at |a|
        f = self.funcs.get("pow64_negative_base")
        if f is None:
            f = self.funcs["pow64_negative_base"] = z3.Function(
                "pow64_negative_base", z3.RealSort(), z3.RealSort(), z3.RealSort()
            )
        self.negative_pows.append((f(m, b), z3.If(odd, -true, true), true, odd))
        return z3.If(a < 0, f(m, b), p)

    def magnitude(self, m, b, true=None):
        """M(m, b), m >= 0: the real m^b (exact mode), or the platform's pow within its contract of `true`."""
        name = "pow" if self.exact else "pow64"
        f = self.funcs.get(name)
        if f is None:
            f = self.funcs[name] = z3.Function(name, z3.RealSort(), z3.RealSort(), z3.RealSort())
        self.pows.append((m, b, f(m, b), true))
        return f(m, b)

    def _power_axioms(self):
        """Theorems of m^b for m >= 0 (exact), or the platform contract's clauses (rounding mode: non-strict, and
        within ULPS of the true magnitude), on every M(m, b) and every pair of them."""
        ax = []
        strict = self.exact
        delta, eta = Q(Fraction(pow_record.ULPS) / 2**52), Q(Fraction(pow_record.ULPS) / 2**1074)
        for p, true, mag, odd in self.negative_pows:  # within the contract of the signed true value, of its sign
            ax += [p - true <= delta * mag + eta, true - p <= delta * mag + eta, z3.If(odd, p <= 0, p >= 0)]
        for m, b, p, true in self.pows:
            ax += [
                z3.Implies(b == 0, p == 1),
                z3.Implies(m == 1, p == 1),
                z3.Implies(b == 1, p == m),
                z3.Implies(z3.And(m == 0, b > 0), p == 0),
            ]
            if not self.exact:
                ax.append(z3.Implies(m > 0, p >= 0))
                mag = z3.If(true >= 0, true, -true)
                ax += [p - true <= delta * mag + eta, true - p <= delta * mag + eta]
                continue
            ax += [
                z3.Implies(m > 0, p > 0),
                # the side of 1 (pairs with the term at m = 1 need not occur)
                z3.Implies(z3.And(b > 0, m > 1), p > 1),
                z3.Implies(z3.And(b > 0, m >= 0, m < 1), p < 1),
                z3.Implies(z3.And(b < 0, m > 1), p < 1),
                z3.Implies(z3.And(b < 0, m > 0, m < 1), p > 1),
            ]
            if _numeral(b) is None:  # an attribute pinned to 2 by a property's condition
                ax.append(z3.Implies(b == 2, p == m * m))
        for i, (m1, b1, p1, _) in enumerate(self.pows):
            for m2, b2, p2, _ in self.pows[i + 1 :]:
                for (u, pu), (v, pv) in (((m1, p1), (m2, p2)), ((m2, p2), (m1, p1))):
                    below = u < v if strict else u <= v
                    ax += [
                        z3.Implies(z3.And(b1 == b2, b1 > 0, u >= 0, below), pu < pv if strict else pu <= pv),
                        z3.Implies(z3.And(b1 == b2, b1 < 0, u > 0, below), pu > pv if strict else pu >= pv),
                    ]
                if self.exact:  # in b at a fixed base: increasing above 1, decreasing below
                    for (c, pc), (d, pd) in (((b1, p1), (b2, p2)), ((b2, p2), (b1, p1))):
                        ax += [
                            z3.Implies(z3.And(m1 == m2, m1 > 1, c < d), pc < pd),
                            z3.Implies(z3.And(m1 == m2, m1 > 0, m1 < 1, c < d), pc > pd),
                        ]
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
        known = self._attribute_condition(e.args[0])
        if known is not None:
            return walk(e.args[1] if known else e.args[2])
        c = walk(e.args[0])
        decided = z3.simplify(c)
        if z3.is_true(decided) or z3.is_false(decided):
            # a condition of the attributes' values (ConstantPow's integer exponent): only the branch taken, so that
            # the other one's functions and their pairwise facts do not enter the query
            return walk(e.args[1] if z3.is_true(decided) else e.args[2])
        self.model.path.append(c)
        a = walk(e.args[1])
        self.model.path[-1] = z3.Not(c)
        b = walk(e.args[2])
        self.model.path.pop()
        return z3.If(c, a, b)

    def _attribute_condition(self, c: Expr) -> bool | None:
        """A condition of the attributes alone where their values are given (the implementation level): its exact
        truth value. Rounding mode models floor as the platform's function, which z3 may give any value at a
        numeral (ConstantPow's integer exponent was then odd at 2 in a model)."""
        if c.uses("var"):
            return None
        values = {}
        for name in c.attributes():
            v = self.attrs.get(name)
            q = v if isinstance(v, Fraction) else _numeral(v) if isinstance(v, z3.ExprRef) else None
            if q is None:
                return None
            values[name] = q
        try:
            return bool(eval_rational(c, Fraction(0), values))
        except Exception:  # noqa: BLE001 - an irrational constant in the condition: leave it to z3
            return None

    reduction = element_wise_only

    def primitive(self, p, a, node=None):
        return self.model.apply(p.name, a)

    def power(self, a, b, node=None):
        # the model's terms are sound for any exponent, one that depends on x included (its theorems hold for
        # every b); proofs that need b fixed fail there, with z3's unknown or an unreplayed model
        return self.model.power(a, b)

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
