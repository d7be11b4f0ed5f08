"""Helpers shared by the spec-level and implementation-level provers."""

from __future__ import annotations

import os
import time
from fractions import Fraction

import z3

from opcert.expr import Expr

# z3 runs under resource limits (its `rlimit`: units of work it counts as it searches), never under a
# wall-clock timeout, so whether a query is decided does not depend on how busy the host is. Each query
# family has its own budget per query; bench/z3_rlimits.py measures what the hardest query of each family
# in the catalog spends, and bench/README.md gives the figures the budgets are a multiple of.
BUDGETS = {
    "spec": 2_000_000,  # spec_level: a property over the reals, attributes symbolic (or given)
    "spec-quick": 1_000_000,  # spec_level: a range with finitely many attribute cases, before intervals
    "spec-case": 1_000_000,  # spec_level: one attribute case, a tail beyond the intervals, the
    #                                 property outside its condition
    "agreement": 1_000_000,  # spec_level: two standards' definitions equal (then exact evaluation)
    "region": 1_000_000,  # spec_level: the region quantifier elimination gives = the declared one
    "fp": 2_000_000,  # impl_level: the bit-precise model beside a 16-bit enumeration
    "abstraction": 10_000_000,  # impl_level: the rounding abstraction (binary32, binary64)
    "abstraction-quick": 150_000,  # impl_level: binary64 ranges, asked before interval arithmetic
    "rows": 1_000_000,  # rows: a row property over the reals, one row length
    "axes": 1_000_000,  # axes: two standards' axis rules over every shape of rank 1 to 8
    "axes-example": 1_000_000,  # axes: the smallest shape where two rules part (z3.Optimize)
    "descriptors": 2_000_000,  # descriptors: the tables' formula = the validator's accepted set
    "descriptor-levels": 1_000_000,  # descriptors: what a level rejects that the next accepts (one model)
}
# A short first try with a fallback after it (intervals, exact evaluation, enumeration): a caller's
# larger rlimit never lengthens it.
QUICK = frozenset({"spec-quick", "agreement", "fp", "abstraction-quick"})

# Interval proofs (interval.implementation_bound, monotone.prove_monotone) stop after a number of pieces,
# never after a time: their verdicts do not depend on the host's load either.
RECORD: list | None = None  # bench/z3_rlimits.py: (family, result, units spent, budget) of each query
_SPENT = [0]  # units spent by the queries of this process (units_spent())
_PROBE: dict = {}


def budget(family: str, rlimit: int | None = None) -> int:
    """The resource units one query of `family` may spend: its calibrated budget, or the caller's
    `rlimit` instead (a short first try keeps the smaller of the two)."""
    b = BUDGETS[family]
    if rlimit is None:
        return b
    return min(int(rlimit), b) if family in QUICK else int(rlimit)


def rlimit_count() -> int:
    """z3's count of resource units spent so far in this process's context (cumulative: a query's
    own figure is the difference across it)."""
    probe = _PROBE.get(os.getpid())
    if probe is None:
        probe = _PROBE[os.getpid()] = z3.Solver()
    return int(probe.statistics().get_key_value("rlimit count"))


def units_spent() -> int:
    """The units spent by every query check() ran in this process so far."""
    return _SPENT[0]


# z3's default solver picks a strategy by the kind of formula, and for linear and nonlinear integer and real
# arithmetic those strategies are portfolios whose members are cut off after a number of milliseconds (its
# qflia, qflra, qfnra, qfnia and nra tactics, try_for): on a loaded host a query that takes seconds reaches
# another member, or none (LogSoftmax's row monotonicity at 4 elements did; bench/README.md). Those kinds get
# strategies without a clock here: nonlinear real arithmetic, z3's nlsat with a fixed variable ordering (each
# ordering in turn, each under the budget; 2 decides every such query of the catalog), the others z3's SMT
# core. Every other kind keeps z3's default strategy, which has no clock (uninterpreted functions: the SMT
# core; floating point: bit-blasting).
KINDS = (
    "is-propositional",
    "is-qfbv",
    "is-qfaufbv",
    "is-qflia",
    "is-qfauflia",
    "is-qflra",
    "is-qfnra",
    "is-qfnia",
    "is-lira",
    "is-nra",
    "is-qffp",
    "is-qffplra",
)  # the order of z3's default_tactic
CLOCKED = frozenset({"is-qflia", "is-qflra", "is-qfnra", "is-qfnia", "is-nra"})
NLSAT_ORDERINGS = (2, 1, 5, 3)


def kind_of(constraints) -> str:
    """The kind z3's default strategy would see (its probes, in its order, after simplification)."""
    g = z3.Goal()
    g.add(*constraints)
    simplified = z3.Tactic("simplify")(g)[0]
    return next((k for k in KINDS if z3.Probe(k)(simplified)), "other")


def _strategies(kind: str) -> list:
    if kind == "is-qfnra":
        return [
            lambda o=o: z3.With(z3.Tactic("qfnra-nlsat"), variable_ordering_strategy=o).solver()
            for o in NLSAT_ORDERINGS
        ]
    if kind in CLOCKED:
        return [z3.SimpleSolver]
    return [z3.Solver]


def solver_for(constraints):
    """A solver holding the constraints, whose strategy has no clock (the first one, for nonlinear real
    arithmetic): for a caller that adds to it and checks again (check())."""
    s = _strategies(kind_of(constraints))[0]()
    s.add(*constraints)
    return s


def check(s, family: str, rlimit: int | None = None):
    """s.check() under the family's budget (s from solver_for(), or an Optimize): (result, units spent,
    reason), the reason None unless the result is unknown; it then names the units spent, never seconds."""
    n = budget(family, rlimit)
    r, spent = _check(s, family, n)
    if r != z3.unknown:
        return r, spent, None
    if spent >= n:
        return r, spent, f"resource limit reached ({spent:,} of {n:,} rlimit units)"
    return r, spent, f"{s.reason_unknown()} (after {spent:,} rlimit units)"


def _check(s, family: str, n: int):
    s.set("rlimit", n)
    before = rlimit_count()
    r = s.check()
    spent = rlimit_count() - before
    _SPENT[0] += spent
    if RECORD is not None:
        RECORD.append((family, str(r), spent, n))
    return r, spent


def decide(constraints, family: str, rlimit: int | None = None):
    """One query of `family`: (result, model or None, units spent, reason), the reason None unless the
    result is unknown. Each strategy for the constraints' kind is tried in turn under the budget."""
    n = budget(family, rlimit)
    strategies = _strategies(kind_of(constraints))
    spent, why = 0, []
    for make in strategies:
        s = make()
        s.add(*constraints)
        r, used = _check(s, family, n)
        spent += used
        if r == z3.sat:
            return r, s.model(), spent, None
        if r == z3.unsat:
            return r, None, spent, None
        why.append("resource limit" if used >= n else s.reason_unknown())
    if all(w == "resource limit" for w in why):
        used = (
            f"{spent:,} rlimit units, {n:,} for each of {len(why)} strategies"
            if len(why) > 1
            else f"{spent:,} of {n:,} rlimit units"
        )
        return z3.unknown, None, spent, f"resource limit reached ({used})"
    return z3.unknown, None, spent, f"{'; '.join(sorted(set(why)))} (after {spent:,} rlimit units)"


def solve(constraints, family: str, rlimit: int | None = None):
    """('sat'|'unsat'|'unknown', model or None, seconds, reason): one query of `family` (BUDGETS)."""
    t0 = time.perf_counter()
    r, model, _, reason = decide(constraints, family, rlimit)
    dt = time.perf_counter() - t0
    if r == z3.sat:
        return "sat", model, dt, None
    if r == z3.unsat:
        return "unsat", None, dt, None
    return "unknown", None, dt, reason


def has_subterm(e, test) -> bool:
    """Whether some subterm of the z3 term e (e itself included) passes `test`."""
    todo = [e]
    while todo:
        t = todo.pop()
        if test(t):
            return True
        todo += list(t.children())
    return False


def model_value(model, term) -> Fraction:
    v = model.eval(term, model_completion=True)
    if z3.is_rational_value(v):
        return Fraction(v.numerator_as_long(), v.denominator_as_long())
    if z3.is_algebraic_value(v):
        return Fraction(v.approx(40).as_decimal(40).rstrip("?"))
    if z3.is_fp_value(v) or z3.is_fp(v):
        return fp_value(v)
    raise ValueError(f"cannot read {v}")


def fp_value(v) -> Fraction | float:
    if z3.is_fp_value(v):
        if v.isNaN():
            return float("nan")
        if v.isInf():
            return float("inf") if v.isPositive() else float("-inf")
        if v.isZero():
            return -0.0 if v.isNegative() else 0.0
        return Fraction(z3.simplify(z3.fpToReal(v)).as_fraction())
    raise ValueError(f"not a floating-point value: {v}")


def show(q) -> str:
    """A number for people: decimal, and the exact fraction when it is short."""
    if isinstance(q, float):
        return repr(q)
    if q.numerator.bit_length() - q.denominator.bit_length() > 1023:  # beyond binary64 (no float(): 2^1024 overflows)
        return f"about 2^{q.numerator.bit_length() - q.denominator.bit_length()} (beyond binary64)"
    f = float(q)
    text = repr(f)
    if Fraction(f) != q:
        if q.numerator.bit_length() + q.denominator.bit_length() > 190:  # str() of a huge int is slow
            return text + " (not a binary64 value)"
        s = f"{q.numerator}/{q.denominator}" if q.denominator != 1 else str(q.numerator)
        text += f" (exactly {s})" if len(s) < 60 else " (not a binary64 value)"
    return text


def selects_on_x(e: Expr) -> list[Expr]:
    """The select nodes whose condition depends on the input."""
    out = []
    for n in e.nodes():
        if n.op == "select" and any(m.op == "var" for m in n.args[0].nodes()) and not (n.args[0].op == "isnan"):
            out.append(n)
    return out


def force(e: Expr, choices: dict) -> Expr:
    """e with each select in `choices` replaced by its then (True) or else branch."""
    if e.op == "select" and e in choices:
        return force(e.args[1] if choices[e] else e.args[2], choices)
    if not e.args:
        return e
    return Expr(e.op, tuple(force(a, choices) for a in e.args), e.name, e.value)


def attribute(res, since: int):
    """res with the units spent since `since` (units_spent()) added to its rlimit_count."""
    n = units_spent() - since
    if n:
        res.rlimit_count = (res.rlimit_count or 0) + n
    return res


def record(family: str, outcome: tuple, budget: int) -> None:
    """bench/z3_rlimits.py: an interval proof's pieces ((status, pieces) when proved)."""
    if RECORD is not None:
        status, info = outcome
        RECORD.append((family, status, info if status == "proved" else None, budget))
