"""A tensor operator's row properties over the reals, with z3: the standards' formula over rows
of 1 to MAX_LENGTH elements, each element a real variable.

The formula is read from the declaration (spec.tensor_ops) and interpreted by `_RowDomain`: a
value is one z3 term per element of the row; a reduction (rowsum, rowmax, rowfirstmax) is one
term shared by the row. exp and log are uninterpreted functions under the theorems of their
records (expr.primitives: positivity, strict monotonicity, exp(0) = 1, log(1) = 0 ...),
instantiated on every term that occurs, plus two more, instantiated on the terms the property
relates: exp(a + c) = exp(a) exp(c) (the shift) and exp(log t) = t for t > 0 (LogSoftmax's row
sum). Each property is a query whose negation z3 finds unsatisfiable, for each length.

For every length: the proofs use per-element facts and the row's sum, maximum and first
maximum, never the number of elements; the same argument holds for a row of any length (the
result states it). Permutation equivariance is proved for a transposition of the first two
elements and for the rotation by one: they generate every permutation of the row, and
equivariance composes.

NaN and infinite entries are rules of the specification's special values: the reals have
neither, so those verdicts are `skipped` here, with the reason; the black-box checks decide
them on each target.
"""

from __future__ import annotations

import time
from fractions import Fraction

import z3

from opcert.expr import Expr
from opcert.expr.fold import Domain, fold
from opcert.expr.primitives import REGISTRY
from opcert.spec.tensor import RowProperty
from opcert.verify.proofs.common import attribute, decide, units_spent
from opcert.verify.proofs.real_model import Q, RealModel
from opcert.verify.result import PropertyResult

MAX_LENGTH = 4


class _RowDomain(Domain):
    """Terms per element of a row of z3 reals."""

    def __init__(self, model: RealModel, row: list, attrs: dict):
        self.model, self.row, self.attrs, self.n = model, row, attrs, len(row)

    def var(self, e):
        return list(self.row)

    def attr(self, e):
        v = self.attrs[e.name]  # a value, or a z3 real: every value of the attribute's domain (attribute_facts)
        return [v if isinstance(v, z3.ArithRef) else Q(v)] * self.n

    def const(self, e):
        v = self.model.named(e.name) if e.name is not None else Q(e.value)
        return [v] * self.n

    def isnan(self, e, walk):
        return [z3.BoolVal(False)] * self.n

    def select(self, e, walk):
        c, a, b = walk(e.args[0]), walk(e.args[1]), walk(e.args[2])
        return [z3.If(ci, ai, bi) for ci, ai, bi in zip(c, a, b)]

    def reduction(self, e, walk):
        a = walk(e.args[0])
        if e.op == "rowsum":
            return [z3.Sum(a)] * self.n
        if e.op == "rowmax":
            m = a[0]
            for v in a[1:]:
                m = z3.If(v > m, v, m)
            return [m] * self.n
        # rowfirstmax: element j is at least every element and above every one before it
        return [
            z3.And(*[a[j] >= a[k] for k in range(self.n) if k != j], *[a[j] > a[k] for k in range(j)])
            for j in range(self.n)
        ]

    def primitive(self, p, a, node=None):
        # simplified arguments: (x0 + c) - (x0 + c) and 0 are one term, so that congruence sees equal ones
        return [self.model.apply(p.name, z3.simplify(v)) for v in a]

    def compare(self, op, a, b):
        f = {
            "lt": lambda u, v: u < v,
            "le": lambda u, v: u <= v,
            "gt": lambda u, v: u > v,
            "ge": lambda u, v: u >= v,
            "eq": lambda u, v: u == v,
        }[op]
        return [f(u, v) for u, v in zip(a, b)]

    def connective(self, op, a):
        if op == "not":
            return [z3.Not(u) for u in a[0]]
        f = z3.And if op == "and" else z3.Or
        return [f(u, v) for u, v in zip(a[0], a[1])]

    def arithmetic(self, op, a, node=None):
        if op == "neg":
            return [-u for u in a[0]]
        if op == "abs":
            return [z3.If(u >= 0, u, -u) for u in a[0]]
        if op in ("min", "max"):
            return [z3.If(u <= v, u, v) if op == "min" else z3.If(u >= v, u, v) for u, v in zip(a[0], a[1])]
        f = {
            "add": lambda u, v: u + v,
            "sub": lambda u, v: u - v,
            "mul": lambda u, v: u * v,
            "div": lambda u, v: u / v,
        }.get(op)
        if f is not None:
            return [f(u, v) for u, v in zip(a[0], a[1])]
        return [u * v + w for u, v, w in zip(*a)]  # fma: exact over the reals


def _homomorphism(model: RealModel, pairs) -> list:
    """exp(a) = exp(b) exp(a - b), a theorem, for the pairs of exp arguments the property relates."""
    return [
        model.apply("exp", z3.simplify(a))
        == model.apply("exp", z3.simplify(b)) * model.apply("exp", z3.simplify(a - b))
        for a, b in pairs
    ]


def _axioms(model: RealModel) -> list:
    """The few facts a row proof uses, instantiated on every application (the records' full theorems add
    polynomial bounds that only slow z3's nonlinear search here): each function's sign rule, its value at its
    exact point, strict monotonicity on its domain (where it has one), and equal arguments giving equal values."""
    out = []
    for name, apps in model.apps.items():
        p = REGISTRY[name]
        lo, lo_open, hi, hi_open = p.domain

        def inside(t, lo=lo, lo_open=lo_open, hi=hi, hi_open=hi_open):
            below = z3.BoolVal(True) if lo is None else (t > Q(lo)) if lo_open else (t >= Q(lo))
            above = z3.BoolVal(True) if hi is None else (t < Q(hi)) if hi_open else (t <= Q(hi))
            return z3.And(below, above)

        for t, ft in apps:
            if p.sign == "positive":
                out.append(ft > 0)
            for at in (0, 1):
                v = p.exact(Fraction(at))
                if v is not None:
                    out.append(z3.Implies(t == at, ft == Q(v)))
            if name == "sqrt":  # the square root's defining identity, on its domain
                out.append(z3.Implies(t >= 0, z3.And(ft >= 0, ft * ft == t)))
            if name == "log":  # log(t) has the sign of t - 1
                out += [z3.Implies(t > 1, ft > 0), z3.Implies(z3.And(t > 0, t < 1), ft < 0)]
        for i, (t1, f1) in enumerate(apps):
            for t2, f2 in apps[i + 1 :]:
                if p.increasing is not None:  # None: monotone nowhere on its domain (sin), no order to state
                    a, b = (f1, f2) if p.increasing else (f2, f1)
                    both = z3.And(inside(t1), inside(t2))
                    if p.strict:
                        out += [z3.Implies(z3.And(both, t1 < t2), a < b), z3.Implies(z3.And(both, t2 < t1), b < a)]
                    else:  # floor: non-decreasing only
                        out += [z3.Implies(z3.And(both, t1 <= t2), a <= b), z3.Implies(z3.And(both, t2 <= t1), b <= a)]
                out.append(z3.Implies(t1 == t2, f1 == f2))
    return out


def _compositions(model: RealModel) -> list:
    """exp(log t) = t for t > 0, for every exp whose argument is a log application."""
    logs = {app.get_id(): t for t, app in model.apps.get("log", [])}
    return [
        z3.Implies(logs[t.get_id()] > 0, ft == logs[t.get_id()])
        for t, ft in model.apps.get("exp", [])
        if t.get_id() in logs
    ]


def _purified(model: RealModel, formulas: list) -> list:
    """The formulas with every function application replaced by a real variable of its own (the axioms
    already say all they know of it, congruence included): nonlinear real arithmetic alone, which z3's
    nlsat decides; with the applications left in, it times out on rows of 4 elements (measured)."""
    subs, seen = [], set()
    for name, apps in model.apps.items():
        for _, ft in apps:
            if ft.get_id() not in seen:
                seen.add(ft.get_id())
                subs.append((ft, z3.Real(f"{name}#{len(subs)}")))
    # simultaneous: exp(log t) is replaced as a whole; any application left in place only makes the problem
    # less abstract; unsat of the purified problem is unsat of the original (a model of the original is one of it)
    return [z3.substitute(f, *subs) if subs else f for f in formulas]


def _decide(claim, build, rlimit: int | None, model: RealModel) -> tuple[str, str | None]:
    """'proved' where the negated claim is unsatisfiable; else the reason."""
    r, _, _, reason = decide(_purified(model, build() + [z3.Not(claim)]), "rows", rlimit)
    if r == z3.unsat:
        return "proved", None
    if r == z3.sat:
        return "refuted", "z3 found a row (a model of the uninterpreted functions) where it fails"
    return "unknown", f"z3: {reason}"


def _row(name: str, n: int) -> list:
    return [z3.Real(f"{name}{i}") for i in range(n)]


def _query(op, p, formula: Expr, attrs: dict, n: int, first_only: bool = False):
    """(claim, axioms builder, model) of property p on rows of n elements, or None where it has no real
    query. first_only: monotonicity in x_0 alone (the formula is permutation equivariant at this length)."""
    m = RealModel(exact=True)
    x = _row("x", n)
    y = fold(formula, _RowDomain(m, x, attrs))
    extra: list = []
    if p.kind == "range":
        claim = z3.And(
            *[
                c
                for v in y
                for c in (
                    (v >= Q(p.lower)) if p.lower is not None else z3.BoolVal(True),
                    (v <= Q(p.upper)) if p.upper is not None else z3.BoolVal(True),
                )
            ]
        )
    elif p.kind == "max_log_bounds":
        top = x[0]
        for v in x[1:]:
            top = z3.If(v > top, v, top)
        log_n = m.apply("log", Q(n))  # log(1) = 0: the primitive's exact point
        claim = z3.And(*[z3.And(v >= top, v <= top + log_n) for v in y])
    elif p.kind == "row_sum":
        terms = y if p.sum_of == "y" else [m.apply("exp", v) for v in y]
        claim = z3.Sum(terms) == 1
    elif p.kind == "one_hot_first":
        first = [
            z3.And(*[x[j] >= x[k] for k in range(n) if k != j], *[x[j] > x[k] for k in range(j)]) for j in range(n)
        ]
        claim = z3.And(
            z3.Sum(y) == 1, *[z3.Or(v == 0, v == 1) for v in y], *[z3.Implies(v == 1, f) for v, f in zip(y, first)]
        )
    elif p.kind == "shift_invariance":
        c = z3.Real("c")
        y2 = fold(formula, _RowDomain(m, [xi + c for xi in x], attrs))
        extra = _homomorphism(m, [(xi + c, xi) for xi in x])
        claim = z3.And(*[a == b for a, b in zip(y, y2)])
    elif p.kind == "scale_invariance":
        c = z3.Real("c")
        y2 = fold(formula, _RowDomain(m, [c * xi for xi in x], attrs))
        extra = [c > 0]
        # where the formula is defined: every square root's argument above 0 (the scaled row's are c^2 times these)
        defined = [t > 0 for t, _ in m.apps.get("sqrt", [])]
        claim = z3.Implies(z3.And(*defined), z3.And(*[a == b for a, b in zip(y, y2)]))
    elif p.kind == "permutation":
        if n == 1:
            return z3.BoolVal(True), lambda: [], m
        perms = [[1, 0] + list(range(2, n)), list(range(1, n)) + [0]]
        claims = []
        for perm in perms:
            yp = fold(formula, _RowDomain(m, [x[i] for i in perm], attrs))
            claims += [yp[k] == y[perm[k]] for k in range(n)]
        claim = z3.And(*claims)
        if op.name == "Hardmax":  # the first maximum moves with the row only where there is no tie
            extra = [z3.Distinct(*x)] if n > 1 else []
    elif p.kind == "row_monotonic":
        d = z3.Real("d")
        claims = []
        for i in range(1 if first_only else n):
            xi = [xj + d if j == i else xj for j, xj in enumerate(x)]
            yi = fold(formula, _RowDomain(m, xi, attrs))
            claims += [yi[i] >= y[i], *[yi[j] <= y[j] for j in range(n) if j != i]]
        claim = z3.Implies(d > 0, z3.And(*claims))
    elif p.kind in ("row_bound", "moments"):
        # about the standard's B, in units of its scale (1 and 0 where the formula has none)
        used = {e.name for e in formula.nodes() if e.op == "attr"}
        s2 = attrs["scale"] * attrs["scale"] if "scale" in used else 1
        b = attrs["B"] if "B" in used else 0
        if p.kind == "row_bound":
            claim = z3.And(*[(v - b) * (v - b) <= s2 * (n - p.bound_less) for v in y])
        else:
            claim = z3.And(
                z3.Sum([(v - b) * (v - b) for v in y]) <= s2 * n, *([z3.Sum(y) == n * b] if p.mean_zero else [])
            )
        # where the formula is defined: every square root's argument (variance + epsilon) above 0
        defined = [t > 0 for t, _ in m.apps.get("sqrt", [])]
        claim = z3.Implies(z3.And(*defined), claim)
    else:
        return None
    extra = extra + attribute_facts(op, attrs)
    return claim, lambda: extra + _axioms(m) + _compositions(m), m


def attribute_facts(op, attrs: dict) -> list:
    """The domains of the attributes given as z3 reals (every value of the domain: epsilon >= 0; a choice, one
    of its indices: LpNormalization's p)."""
    out = []
    for a in getattr(op, "attributes", ()):
        v = attrs.get(a.name)
        if isinstance(v, z3.ArithRef) and a.kind == "choice":
            out.append(z3.Or(*[v == i for i in range(len(a.choices))]))
        elif isinstance(v, z3.ArithRef) and a.domain.lower is not None:
            lo = Q(a.domain.lower)
            out.append(v > lo if a.domain.lower_open else v >= lo)
    return out


def _choice_cases(op, attrs: dict) -> list[dict]:
    """attrs once per combination of the choices given as z3 terms, each choice fixed to one of its indices
    (LpNormalization's p: one query per norm, which z3 decides where the disjunction of both it did not)."""
    cases = [attrs]
    for a in getattr(op, "attributes", ()):
        if a.kind == "choice" and isinstance(attrs.get(a.name), z3.ArithRef):
            cases = [{**c, a.name: Fraction(i)} for c in cases for i in range(len(a.choices))]
    return cases


def attribute_terms(op) -> dict:
    """Each attribute of op as a z3 real: the row properties proved for every value of its domain."""
    return {a.name: z3.Real(a.name) for a in getattr(op, "attributes", ())}


ARGUMENT = (
    "for longer rows, the same argument: it uses per-element facts (exp > 0 and increasing, "
    "exp(a + c) = exp(a) exp(c), log increasing with log(1) = 0, exp(log t) = t) and the row's sum, maximum "
    "and first maximum, never the number of elements"
)


# the normalizations' bound and moments: a theorem for every length, which z3 is given length by length
MOMENTS_ARGUMENT = (
    "for longer rows, Cauchy-Schwarz: the deviations d sum to 0, so d_i^2 <= (n - 1)/n sum d_j^2, and the "
    "mean square is var / (var + epsilon) <= 1, each times scale^2 about B where the standard has them (scale and B "
    "real variables: every value); z3 proves it length by length (the lengths above), not for every n"
)


# scaling: the deviations (or the values) and the root of their mean square both scale by c where epsilon is 0
SCALING_ARGUMENT = (
    "for longer rows, the same argument: where epsilon = 0 the numerator (x_i - mean, or x_i) and the square root of "
    "the mean of its squares are both multiplied by c > 0, so their quotient is unchanged; z3 proves it length by "
    "length (the lengths above), not for every n"
)


def prove_rows(op, p, formula: Expr, attrs: dict, rlimit: int | None, standards: str) -> PropertyResult:
    """Property p of the formula over rows of 1 to MAX_LENGTH elements; rlimit: z3's resource units per
    query instead of the family's budget (common.BUDGETS)."""
    since = units_spent()
    return attribute(_prove_rows(op, p, formula, attrs, rlimit, standards), since)


def _prove_rows(op, p, formula: Expr, attrs: dict, rlimit: int | None, standards: str) -> PropertyResult:
    t0 = time.perf_counter()
    if p.kind in ("nan_row", "infinite_entries", "nonfinite_row"):
        return PropertyResult.skipped(
            p,
            "a rule of the specification's special values: the reals have no NaN and no "
            "infinity, so there is nothing to prove over them; the black-box checks decide "
            "it on each target (`opcert accuracy`)",
        )
    if p.kind == "row_layout":
        return PropertyResult.skipped(
            p,
            "a property of a kernel's code paths: the real function maps a row to its "
            "outputs whatever the tensor around it; each target's outputs decide it in "
            "every layout (`opcert accuracy`)",
        )
    if p.requires:  # claimed at these values only (scaling: epsilon = 0): proved there, for every other attribute
        used = {e.name for e in formula.nodes() if e.op == "attr"}
        absent = [name for name, _ in p.requires if name not in used]
        if absent:
            r = PropertyResult.skipped(
                p,
                "claimed where "
                + ", ".join(f"{name} = {value:g}" for name, value in p.requires if name in absent)
                + f" only; this formula ({standards}) has no {', '.join(absent)}",
            )
            r.expected = "not claimed"
            return r
        attrs = {**attrs, **{name: Fraction(value) for name, value in p.requires}}
    longest = min(MAX_LENGTH, p.longest or MAX_LENGTH)
    for n in range(1, longest + 1):
        # monotonicity in x_i is monotonicity in x_0 of the row with x_i and x_0 swapped, where the formula
        # is permutation equivariant: proved first at this length, then x_0 alone, which is faster
        # (bench/README.md, 'Figures behind choices in the code')
        first_only = False
        if p.kind == "row_monotonic" and n > 1:
            perm = _query(op, RowProperty("permutation", "permutation", ""), formula, attrs, n)
            first_only = _decide(perm[0], perm[1], rlimit, perm[2])[0] == "proved"
        for case in _choice_cases(op, attrs):
            q = _query(op, p, formula, case, n, first_only)
            if q is None:
                return PropertyResult.skipped(
                    p,
                    f"no model over the reals for a property of kind {p.kind}",
                )
            status, why = _decide(q[0], q[1], rlimit, q[2])
            if status != "proved":
                break
        if status != "proved":
            # a model of uninterpreted functions is not a real counterexample: never `refuted` from it
            return PropertyResult(
                p.name,
                p.kind,
                p.statement,
                "unknown",
                "z3, real rows",
                elapsed_s=time.perf_counter() - t0,
                note=f"rows of {n} elements: {why or status}" + (f" (rows of 1 to {n - 1} proved)" if n > 1 else ""),
            )
    return PropertyResult(
        p.name,
        p.kind,
        p.statement,
        "proved",
        f"z3, real rows of 1 to {longest} elements ({standards}' formula)",
        elapsed_s=time.perf_counter() - t0,
        note=MOMENTS_ARGUMENT
        if p.kind in ("row_bound", "moments")
        else SCALING_ARGUMENT
        if p.kind == "scale_invariance"
        else ARGUMENT,
    )
