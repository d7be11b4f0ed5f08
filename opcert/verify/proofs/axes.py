"""The axis rules of the tensor operators' standards, related with z3 over every shape of rank 1 to 8.

A rule makes rows of a tensor: two elements (index vectors p and q within the sizes) are in one row when
they agree on every axis the rule does not reduce. Two rules agree on a shape when they make the same rows
there (then the order within a row, the index order over the reduced axes, is the same too). Each claim is
a z3 query over symbolic rank, axis, sizes and elements: unsat proves it for every shape; a sat query names
a shape where the rules part, with two elements that show it.
"""

from __future__ import annotations

import time

import z3

from opcert.verify.proofs.common import attribute, check, decide, units_spent
from opcert.verify.result import PropertyResult

RANK = 8


class _Shape:
    """Symbolic rank r (1..8), sizes d_k >= 0, an axis a in -r..r-1 (a' = a mod r), elements p and q."""

    def __init__(self):
        self.r = z3.Int("rank")
        self.a = z3.Int("axis")
        self.d = [z3.Int(f"d{k}") for k in range(RANK)]
        self.p = [z3.Int(f"p{k}") for k in range(RANK)]
        self.q = [z3.Int(f"q{k}") for k in range(RANK)]
        self.a0 = z3.If(self.a < 0, self.a + self.r, self.a)
        self.facts = [self.r >= 1, self.r <= RANK, self.a >= -self.r, self.a <= self.r - 1]
        for k in range(RANK):
            inside = k < self.r
            self.facts += [
                z3.Implies(
                    inside, z3.And(self.d[k] >= 0, *(z3.And(0 <= v[k], v[k] < self.d[k]) for v in (self.p, self.q)))
                ),
                z3.Implies(z3.Not(inside), z3.And(self.d[k] == 1, self.p[k] == 0, self.q[k] == 0)),
            ]

    def same_row(self, reduced) -> z3.BoolRef:
        """p and q in one row when the axes k with reduced(k) are reduced."""
        return z3.And(
            *[z3.Implies(z3.And(k < self.r, z3.Not(reduced(k))), self.p[k] == self.q[k]) for k in range(RANK)]
        )

    def coerced(self, k):  # ONNX 1 and 11: axis and every later axis
        return k >= self.a0

    def single(self, k):  # ONNX 13: the one axis
        return self.a0 == k

    def last(self, k):  # DirectML's plain descriptors
        return self.r - 1 == k


class _Decided:
    def __init__(self, model, why):
        self.model, self.why = model, why


def _query(facts, claim_negated, rlimit):
    r, model, _, reason = decide(list(facts) + [claim_negated], "axes", rlimit)
    return r, _Decided(model, reason)


def _start():
    """(seconds, z3 units) now: where a result's figures start."""
    return time.perf_counter(), units_spent()


# What each relation of two standards' axis rules claims, by its result's name ({op}: the operator's).
CLAIMS = {
    "agrees:onnx-11=onnx at the last axis": "{op}: ONNX opset 11 (coerced to 2-D) and "
    "opset 13 (one axis) make the same rows when axis = rank - 1",
    "parts:onnx-11|onnx": "{op}: ONNX opsets 11 and 13 make different rows exactly where an "
    "axis after `axis` has size 2 or more (and no size is 0)",
    "agrees:directml=directml-1": "{op}: DirectML's plain descriptor makes the rows "
    "of its `1` form with Axes = {{DimensionCount - 1}}",
    "agrees:onnx=directml-1": "{op}: ONNX opset 13 with axis a is DirectML's `1` form with Axes = {{a mod rank}}",
    "agrees:onnx-11=directml-1": "{op}: ONNX opsets 1 and 11 with axis a are "
    "DirectML's `1` form with Axes = {{a mod rank, ..., rank - 1}}",
}


def _result(op, name, verdict, s, start, sh: _Shape, note="", why=None):
    """The result `name` (its statement: CLAIMS[name]) of a query's verdict."""
    t0, since = start
    statement = CLAIMS[name].format(op=op.name)
    if verdict == z3.unsat:
        r = PropertyResult(
            name,
            "axes",
            statement,
            "proved",
            "z3 over every shape of rank 1 to 8 (unsat)",
            time.perf_counter() - t0,
            note=note or None,
        )
    elif verdict == z3.sat:
        r = PropertyResult(
            name,
            "axes",
            statement,
            "refuted",
            "z3 model",
            time.perf_counter() - t0,
            counterexample=_shape_of(s.model, sh),
        )
    else:
        r = PropertyResult(
            name, "axes", statement, "unknown", "z3 gave up", time.perf_counter() - t0, note=f"z3: {why or s.why}"
        )
    return attribute(r, since)


def _shape_of(model, sh: _Shape) -> dict:
    r = model.eval(sh.r).as_long()
    val = lambda v: model.eval(v, model_completion=True).as_long()
    return {
        "shape": [val(sh.d[k]) for k in range(r)],
        "axis": val(sh.a),
        "element_p": [val(sh.p[k]) for k in range(r)],
        "element_q": [val(sh.q[k]) for k in range(r)],
    }


def prove_axis_rules(op, rlimit: int | None = None) -> list[PropertyResult]:
    """rlimit: z3's resource units per query instead of the families' budgets (common.BUDGETS)."""
    # One function on purpose: every z3 term and model below stays referenced until it returns and is
    # freed in the same order each run. z3 recycles the ids of freed terms and its search depends on
    # them, so helpers that freed these earlier would change the units (and possibly the verdicts) of
    # the queries this process asks next (the row properties, verify.proofs.rows).
    keys = {s.key for s in op.standards}
    out = []
    sh = _Shape()
    f11, f13, last = sh.same_row(sh.coerced), sh.same_row(sh.single), sh.same_row(sh.last)
    if {"onnx-11", "onnx"} <= keys:
        t0 = _start()
        c, s = _query(sh.facts + [sh.a0 == sh.r - 1], f11 != f13, rlimit)
        out.append(_result(op, "agrees:onnx-11=onnx at the last axis", c, s, t0, sh))
        # exactly where: every axis after a' has size 1, or the tensor is empty
        later_ones = z3.And(*[z3.Implies(z3.And(k > sh.a0, k < sh.r), sh.d[k] == 1) for k in range(RANK)])
        empty = z3.Or(*[z3.And(k < sh.r, sh.d[k] == 0) for k in range(RANK)])
        t0 = _start()
        c1, s1 = _query(sh.facts + [z3.Or(later_ones, empty)], f11 != f13, rlimit)
        # and wherever a later axis k has size >= 2 (nothing empty), the elements 0 and e_k part them
        parts = []
        for k in range(1, RANK):
            witness = [
                z3.And(*[sh.p[j] == 0 for j in range(RANK)]),
                z3.And(*[sh.q[j] == (1 if j == k else 0) for j in range(RANK)]),
            ]
            cond = [k > sh.a0, k < sh.r, sh.d[k] >= 2, z3.Not(empty)]
            ck, sk = _query(sh.facts + cond + witness, z3.Not(z3.And(f11, z3.Not(f13))), rlimit)
            parts.append((ck, sk.why))
        c2 = z3.unsat if all(ck == z3.unsat for ck, _ in parts) else z3.unknown
        why = next((w for ck, w in parts if ck != z3.unsat), None)
        o = z3.Optimize()  # the smallest shape where they part: the clearest example
        o.add(*sh.facts, f11 != f13)
        o.minimize(sh.r)
        o.minimize(z3.Sum(*sh.d))
        example = _shape_of(o.model(), sh) if check(o, "axes-example", rlimit)[0] == z3.sat else None
        verdict = c1 if c1 != z3.unsat else c2
        r = _result(
            op, "parts:onnx-11|onnx", verdict, s1, t0, sh, _example_note(example), why if c1 == z3.unsat else None
        )
        out.append(r)
    if {"directml", "directml-1"} <= keys:
        t0 = _start()
        one = sh.same_row(lambda k: sh.r - 1 == k)  # SOFTMAX1 with AxisCount 1, Axes = {rank - 1}
        c, s = _query(sh.facts, last != one, rlimit)
        out.append(_result(op, "agrees:directml=directml-1", c, s, t0, sh))
    if {"onnx", "directml-1"} <= keys:
        t0 = _start()
        c, s = _query(sh.facts, f13 != sh.same_row(lambda k: sh.a0 == k), rlimit)
        out.append(_result(op, "agrees:onnx=directml-1", c, s, t0, sh))
        t0 = _start()
        c, s = _query(sh.facts, f11 != sh.same_row(lambda k: k >= sh.a0), rlimit)
        out.append(_result(op, "agrees:onnx-11=directml-1", c, s, t0, sh))
    return out


def _example_note(example) -> str:
    if not example:
        return ""
    return (
        f"z3's example: shape {example['shape']}, axis {example['axis']}: elements "
        f"{example['element_p']} and {example['element_q']} share a row in opset 11, not in 13"
    )
