"""Pow's properties over the reals (the binary operator: both x and y vary), by z3.

Over the reals pow(x, y) = e^(y ln x) for x > 0; 0^y is 0 for y > 0 and 1 at y = 0 (a pole for y < 0); a negative
base is defined for integer exponents as (-1)^y |x|^y. The proofs take e^t and ln t as uninterpreted functions under
the facts the primitive table states of them (expr.primitives: exp increasing and positive, log increasing on
(0, inf) with log 1 = 0), instantiated at the terms each query builds (ground instances of true statements: a
proof from them is a proof), and z3's nonlinear real arithmetic for the products y ln x. ONNX's definition, which
DirectML's is at scale 1 and bias 0 (with another scale x * scale + bias moves the base; the properties are stated
of the base).

What the reals cannot say is said: `parity` is the definition of a negative base's power itself; `special_cases` and
`layout` are about IEEE values and code paths. Each is decided over every pair of a 16-bit format on the code
(`opcert accuracy Pow --dtype float16 --target T --exhaustive`)."""

from __future__ import annotations

import time

import z3

from opcert.verify.proofs.common import decide, units_spent
from opcert.verify.result import ProofReport, PropertyResult


def _facts(E, L, args_e, args_l):
    """exp increasing and positive at the arguments given; log increasing on (0, inf) at those, log 1 = 0."""
    out = [L(z3.RealVal(1)) == 0]
    for a in args_e:
        out.append(E(a) > 0)
    for a in args_e:
        for b in args_e:
            if a is not b:
                out.append(z3.Implies(a < b, E(a) < E(b)))
    pts = [z3.RealVal(1), *args_l]
    for a in pts:
        for b in pts:
            if a is not b:
                out.append(z3.Implies(z3.And(a > 0, a < b), L(a) < L(b)))
    return out


def _decide(claim, facts, rlimit) -> tuple[str, str | None]:
    """common.decide's strategies without a clock, under the spec-case family's budget (or rlimit)."""
    r, model, _, why = decide([*facts, z3.Not(claim)], "spec-case", rlimit)
    if r == z3.unsat:
        return "proved", None
    if r == z3.sat:
        return "refuted", str(model)
    return "unknown", why


def _queries():
    E = z3.Function("exp", z3.RealSort(), z3.RealSort())
    L = z3.Function("log", z3.RealSort(), z3.RealSort())
    x, x1, x2, y, y1, y2 = z3.Reals("x x1 x2 y y1 y2")

    def pw(b, e):  # b > 0
        return E(e * L(b))

    out = {}
    # in y: x > 1 non-decreasing, 0 < x < 1 non-increasing (x = 1: constant, 1^y = 1 by the definition)
    a1, a2 = y1 * L(x), y2 * L(x)
    facts = _facts(E, L, [a1, a2], [x])
    claim = z3.Implies(
        y1 <= y2,
        z3.And(z3.Implies(x > 1, pw(x, y1) <= pw(x, y2)), z3.Implies(z3.And(x > 0, x < 1), pw(x, y1) >= pw(x, y2))),
    )
    out["monotonic_exponent"] = (claim, facts, "x > 1 and 0 < x < 1, every y1 <= y2")
    # in x: y > 0 non-decreasing on (0, inf) (and 0^y = 0 below every positive value), y < 0 non-increasing
    b1, b2 = y * L(x1), y * L(x2)
    facts = _facts(E, L, [b1, b2], [x1, x2])
    claim = z3.Implies(
        z3.And(0 < x1, x1 <= x2),
        z3.And(z3.Implies(y > 0, pw(x1, y) <= pw(x2, y)), z3.Implies(y < 0, pw(x1, y) >= pw(x2, y))),
    )
    out["monotonic_base"] = (
        z3.And(claim, z3.Implies(z3.And(y > 0, x2 > 0), pw(x2, y) > 0)),  # 0^y = 0 < x2^y: the point x1 = 0
        facts + _facts(E, L, [y * L(x2)], []),
        "0 < x1 <= x2 every y != 0, and 0^y = 0 < x2^y for y > 0",
    )
    # nonnegative: x > 0 (e^t > 0), x = 0 (0 or 1), and a negative base to an even integer power, |x|^y > 0
    facts = _facts(E, L, [y * L(x)], [x])
    out["nonnegative"] = (z3.Implies(x > 0, pw(x, y) > 0), facts, "every x > 0 (x = 0: 0 or 1; x < 0, y even: |x|^y)")
    return out


NOT_OVER_REALS = {
    "parity": "over the reals a negative base's integer power is defined as (-1)^y |x|^y: this is the definition, "
    "nothing to prove; on the code it is decided over every pair of a 16-bit format",
    "special_cases": "IEEE 754's values at zeros, infinities and NaN are not reals: decided on the code over pairs",
    "layout": "a property of a kernel's code paths, decided on each target's outputs",
}


def prove_pow_reals(op, properties=None, rlimit: int | None = None) -> ProofReport:
    """The binary operator `op`'s (Pow's) properties over the reals."""
    t0 = time.perf_counter()
    report = ProofReport(op.name, "real", "ONNX's definition (DirectML's at scale 1, bias 0), every x and y")
    queries = _queries()
    for p in op.properties:
        if properties and p.name not in properties:
            continue
        since, t1 = units_spent(), time.perf_counter()
        if p.name in queries:
            claim, facts, where = queries[p.name]
            status, info = _decide(claim, facts, rlimit)
            r = PropertyResult(
                p.name,
                p.kind,
                p.statement,
                status,
                "z3 over the reals: pow(x, y) = e^(y ln x) for x > 0, e^t increasing and positive, ln increasing "
                f"with ln 1 = 0 (the primitive table's facts), at {where}",
                note=info,
            )
            if status == "refuted":
                r.counterexample = {"model": info}
        else:
            r = PropertyResult(p.name, p.kind, p.statement, "skipped", "-", note=NOT_OVER_REALS.get(p.name))
        r.elapsed_s = time.perf_counter() - t1
        r.rlimit_count = units_spent() - since
        report.properties.append(r)
    report.elapsed_s = time.perf_counter() - t0
    return report
