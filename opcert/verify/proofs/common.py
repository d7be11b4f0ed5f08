"""Helpers shared by the spec-level and implementation-level provers."""
from __future__ import annotations

import time
from fractions import Fraction

import z3

from ...expr import Expr


def solve(constraints, timeout_ms: int):
    """('sat'|'unsat'|'unknown', model or None, seconds, reason)."""
    s = z3.Solver()
    s.set("timeout", int(timeout_ms))
    s.add(*constraints)
    t0 = time.perf_counter()
    r = s.check()
    dt = time.perf_counter() - t0
    if r == z3.sat:
        return "sat", s.model(), dt, None
    if r == z3.unsat:
        return "unsat", None, dt, None
    return "unknown", None, dt, s.reason_unknown()


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
    if q.numerator.bit_length() - q.denominator.bit_length() > 1100:   # beyond binary64 (no float())
        return f"about 2^{q.numerator.bit_length() - q.denominator.bit_length()} (beyond binary64)"
    f = float(q)
    text = repr(f)
    if Fraction(f) != q:
        if q.numerator.bit_length() + q.denominator.bit_length() > 190:   # str() of a huge int is slow
            return text + " (not a binary64 value)"
        s = f"{q.numerator}/{q.denominator}" if q.denominator != 1 else str(q.numerator)
        text += f" (exactly {s})" if len(s) < 60 else " (not a binary64 value)"
    return text


def selects_on_x(e: Expr) -> list[Expr]:
    """The select nodes whose condition depends on the input."""
    out = []
    for n in e.nodes():
        if n.op == "select" and any(m.op == "var" for m in n.args[0].nodes()) and \
                not (n.args[0].op == "isnan"):
            out.append(n)
    return out


def force(e: Expr, choices: dict) -> Expr:
    """e with each select in `choices` replaced by its then (True) or else branch."""
    if e.op == "select" and e in choices:
        return force(e.args[1] if choices[e] else e.args[2], choices)
    if not e.args:
        return e
    return Expr(e.op, tuple(force(a, choices) for a in e.args), e.name, e.value)
