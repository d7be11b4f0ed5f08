"""Properties of the implementation, per floating-point format.

float16, bfloat16: every input enumerated on the code (complete), with the
bit-precise z3 model (FP theory) as an optional cross-check.
float32, float64, where enumeration is out of reach:
- ranges and constants: rounding-aware interval arithmetic over every finite
  input (interval.implementation_bound), then the z3 rounding abstraction;
- monotonicity: composition of monotone steps, rounding included
  (monotone.prove_monotone), then the z3 rounding abstraction; a property
  declared NOT to hold is refuted by a decreasing pair found on the code;
  non-increasing is -f non-decreasing (negation is exact), with the
  abstraction's comparison turned;
- oddness, evenness: the z3 rounding abstraction (rounding to nearest is odd);
- exact points, limits: evaluation of the code; NaN: abstract interpretation.
Counterexamples of an abstraction are replayed on the code; one that does not
replay never makes a verdict. The special inputs (+-0, +-inf) are evaluated.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import z3

from opcert.formats import FLOAT_FORMATS, FloatFormat, from_bits, hex_bits, ordinal, round_fraction
from opcert.impl.run import run_resolved
from opcert.numerics.exact import eval_rational
from opcert.spec.reference import reference_detailed
from opcert.verify.accuracy.inputs import exhaustive, from_ordinal, max_ordinal, sample, special_values
from opcert.verify.proofs.common import attribute, has_subterm, model_value, show, solve, units_spent
from opcert.verify.proofs.fp_model import FPModel, fp_sort
from opcert.verify.proofs.interval import first_outside, implementation_bound, ordinal_of
from opcert.verify.proofs.monotone import find_decrease_on_code, prove_monotone
from opcert.verify.proofs.real_model import Q, RealModel, Rounding
from opcert.verify.properties.checks import PropertyChecker, compile_property, symmetry_violations, value_of, verdicts
from opcert.verify.result import PropertyResult

F64 = FLOAT_FORMATS["float64"]
R64 = Rounding("R64", Fraction(1, 2**53), Fraction(1, 2**1075), lambda c: Fraction(round_fraction(c, F64)))


@dataclass(frozen=True)
class Subject:
    """opcert's implementation of one standard's definition, in one format, at fixed attributes."""

    op: object
    fmt: FloatFormat
    attrs: dict
    std: str

    @property
    def impl(self):
        return self.op.implementation_for(self.std)

    def run(self, xs) -> np.ndarray:
        x = np.asarray(xs, dtype=np.float64).astype(self.fmt.dtype)
        return run_resolved(self.op, x, self.attrs, standard=self.std).astype(np.float64)

    def q(self, e) -> Fraction:
        return eval_rational(e, Fraction(0), self.attrs)


def _rounding_for(fmt: FloatFormat) -> Rounding | None:
    if fmt.name == "float64":
        return None  # the binary64 computation is already in the output format
    eta = Fraction(2) ** (fmt.emin - fmt.p)
    return Rounding("R_" + fmt.name, Fraction(1, 2**fmt.p), eta, lambda c: Fraction(round_fraction(c, fmt)))


def _point(v: float, fmt) -> dict:
    return {"value": v if v == v else "nan", "bits": hex_bits(v, fmt)}


def _bounds(s: Subject, prop):
    if prop.kind == "constant":
        v = round_fraction(s.q(prop.value), s.fmt)
        return v, v
    lo = round_fraction(s.q(prop.lower), s.fmt) if prop.lower is not None else None
    hi = round_fraction(s.q(prop.upper), s.fmt) if prop.upper is not None else None
    return lo, hi


def _domain(s: Subject, prop):
    """The property's x-range as values of the format (inclusive), None where unbounded."""
    lo, hi = prop.domain
    return (
        round_fraction(s.q(lo), s.fmt, mode="up") if lo is not None else None,
        round_fraction(s.q(hi), s.fmt, mode="down") if hi is not None else None,
    )


# ---- NaN: abstract interpretation -------------------------------------------------


_BOOLEAN = ("lt", "le", "gt", "ge", "eq", "not", "and", "or")


def _nan_state(e, attrs=None):
    """'nan' if e is NaN whenever x is NaN (attributes finite), else None;
    booleans: False/True when decided, None otherwise. attrs: a condition on the attributes alone is decided at
    these values (ConstantPow's exponent = 0, where a NaN base gives 1)."""
    op = e.op
    if op == "var":
        return "nan"
    if op in ("attr", "const"):
        return None
    if attrs is not None and op in _BOOLEAN and not any(n.op == "var" for n in e.nodes()):
        try:
            return bool(eval_rational(e, Fraction(0), attrs))
        except Exception:  # noqa: BLE001 - not decidable at these values: as if unknown
            return None
    args = [_nan_state(a, attrs) for a in e.args]
    if op == "isnan":
        return True if args[0] == "nan" else None
    if op in ("lt", "le", "gt", "ge", "eq"):
        return False if "nan" in args else None
    if op == "not":
        return None if args[0] is None else (not args[0])
    if op in ("and", "or"):
        if op == "and" and False in args:
            return False
        if op == "or" and True in args:
            return True
        return None
    if op == "select":
        c, a, b = args
        if c is True:
            return a
        if c is False:
            return b
        return "nan" if a == b == "nan" else None
    return "nan" if "nan" in args else None


def prove_nan(s: Subject) -> PropertyResult:
    t0 = time.perf_counter()
    state = _nan_state(s.impl, s.attrs)
    specials = special_values(s.fmt)
    with np.errstate(invalid="ignore"):
        nans = specials[np.isnan(specials.astype(np.float64))]  # quiet and signalling, both signs
    y = run_resolved(s.op, nans, s.attrs, standard=s.std)
    replay_ok = bool(np.isnan(y.astype(np.float64)).all())
    res = PropertyResult(
        "nan",
        "nan_propagation",
        "a NaN input gives a NaN output",
        "unknown",
        "abstract interpretation of the expression (NaN operands give NaN, comparisons "
        "with NaN are false, libm maps NaN to NaN), and every NaN encoding of the "
        "format's special values run on the code",
        time.perf_counter() - t0,
    )
    if state == "nan" and replay_ok:
        res.status = "proved"
    elif not replay_ok:
        i = int(np.argmax(~np.isnan(y.astype(np.float64))))
        res.status = "refuted"
        res.counterexample = {
            "inputs": {"x": _point(float("nan"), s.fmt) | {"bits": hex_bits(nans[i], s.fmt)}},
            "outputs": {"f(x)": _point(float(y[i].astype(np.float64)), s.fmt)},
            "replayed": True,
        }
    else:
        res.note = "the abstract interpretation could not decide"
    return res


# ---- 16-bit formats: enumeration, and the bit-precise model ---------------------------


def prove_fp(s: Subject, prop, rlimit=None) -> PropertyResult:
    """The bit-precise z3 model of the code (binary64 operations, libm contract): range, odd and even."""
    res = PropertyResult(
        prop.name,
        prop.kind,
        prop.statement,
        "unknown",
        "z3 bit-precise floating point (binary64 operations, libm contract)",
    )
    m = FPModel()
    sort = fp_sort(s.fmt)
    x = z3.FP("x", sort)
    if prop.kind in ("range", "constant"):
        lo, hi = _bounds(s, prop)
        y = m.implementation(s.impl, x, s.attrs, s.fmt)
        v = [z3.fpIsNaN(y)]
        if lo is not None:
            v.append(z3.fpLT(y, z3.FPVal(lo, sort)))
        if hi is not None:
            v.append(z3.fpGT(y, z3.FPVal(hi, sort)))
        viol = [z3.Not(z3.fpIsNaN(x)), z3.Or(*v)]
        dlo, dhi = _domain(s, prop)
        viol += ([z3.fpGEQ(x, z3.FPVal(dlo, sort))] if dlo is not None else []) + (
            [z3.fpLEQ(x, z3.FPVal(dhi, sort))] if dhi is not None else []
        )
    elif prop.kind == "odd":
        y1 = m.implementation(s.impl, z3.fpNeg(x), s.attrs, s.fmt)
        y2 = z3.fpNeg(m.implementation(s.impl, x, s.attrs, s.fmt))
        viol = [z3.Not(z3.fpIsNaN(x)), z3.Not(z3.fpEQ(y1, y2))]
    elif prop.kind == "even":
        y1 = m.implementation(s.impl, z3.fpNeg(x), s.attrs, s.fmt)
        y2 = m.implementation(s.impl, x, s.attrs, s.fmt)
        # NaN at both of x and -x is consistent with evenness, as the enumeration's scan takes it
        both_nan = z3.And(z3.fpIsNaN(y1), z3.fpIsNaN(y2))
        viol = [z3.Not(z3.fpIsNaN(x)), z3.Not(z3.fpEQ(y1, y2)), z3.Not(both_nan)]
    else:
        raise ValueError(prop.kind)
    since = units_spent()
    status, model, dt, reason = solve(viol + m.axioms(), "fp", rlimit)
    res.elapsed_s = dt
    attribute(res, since)
    if status == "unsat":
        res.status = "proved"
    elif status == "sat":
        v = model.eval(x, model_completion=True)
        bits = z3.simplify(z3.fpToIEEEBV(v)).as_long()
        xv = float(from_bits(np.array([bits], dtype=np.uint64).astype(s.fmt.uint), s.fmt).astype(np.float64)[0])
        if prop.kind == "odd":
            a, b = s.run([-xv, xv])
            replayed = not (a == -b)
            outs = {"f(-x)": _point(float(a), s.fmt), "-f(x)": _point(float(-b), s.fmt)}
        elif prop.kind == "even":
            a, b = s.run([-xv, xv])
            replayed = not (a == b or (np.isnan(a) and np.isnan(b)))
            outs = {"f(-x)": _point(float(a), s.fmt), "f(x)": _point(float(b), s.fmt)}
        else:
            (y0,) = s.run([xv])
            replayed = bool(np.isnan(y0) or (lo is not None and y0 < lo) or (hi is not None and y0 > hi))
            outs = {"f(x)": _point(float(y0), s.fmt)}
        res.counterexample = {"inputs": {"x": _point(xv, s.fmt)}, "outputs": outs, "replayed": bool(replayed)}
        if replayed:
            res.status = "refuted"
        else:
            res.note = "z3's counterexample is admitted by the model's libm contract but does not replay on the code"
    else:
        res.note = f"z3: {reason}"
    return res


def prove_enumerated(s: Subject, props, rlimit=None, cross_check: bool = False) -> dict:
    """Every property over every input of a 16-bit format, on the code: the same
    enumeration that checks black-box targets (verify.properties), complete.
    cross_check: the bit-precise z3 model is queried beside it for ranges, oddness and evenness."""
    t0 = time.perf_counter()
    fmt = s.fmt
    x = exhaustive(fmt)
    y = run_resolved(s.op, x, s.attrs, standard=s.std)
    compiled = [compile_property(s.op, p, fmt, s.attrs, s.std) for p in props]
    checker = PropertyChecker(compiled, fmt)
    sign = 1 << (fmt.bits - 1)
    mags = np.arange(sign, dtype=np.uint64)
    ref = reference_detailed(s.op, x, s.attrs, s.std).rounded
    inf = int(np.array([np.inf]).astype(fmt.dtype).view(fmt.uint)[0])
    rb = np.ascontiguousarray(ref).view(fmt.uint)
    checker.add_block(mags, y[:sign], y[sign:], limits=(int(rb[inf]), int(rb[inf | sign])))
    checker.finish_chains()

    def describe(blist):
        return [
            {
                "input": value_of(x[b], fmt),
                "output": value_of(y[b], fmt),
                "reference": value_of(ref[b], fmt),
                "replayed": None,
            }
            for b in blist
        ]

    out = {}
    for r in verdicts(
        checker,
        compiled,
        complete=True,
        target="opcert",
        method_where="(the code)",
        describe=describe,
        elapsed=time.perf_counter() - t0,
    ):
        r.method = f"every {fmt.name} input enumerated on the code (complete)"
        prop = next(p for p in props if p.name == r.name)
        if cross_check and r.status == "proved" and prop.kind in ("range", "constant", "odd", "even"):
            z = prove_fp(s, prop, rlimit)
            zs = {
                "proved": f"proved it ({z.rlimit_count or 0:,} rlimit units)",
                "refuted": "refuted it",
                "unknown": f"left it undecided ({z.note})",
            }[z.status]
            r.method += f"; z3 bit-precise floating point (binary64 operations, libm contract) {zs}"
            r.elapsed_s += z.elapsed_s
            r.rlimit_count = (r.rlimit_count or 0) + (z.rlimit_count or 0) or None
            if z.status == "refuted":
                r.status, r.counterexample = "refuted", z.counterexample
                r.note = "z3's bit-precise model found a counterexample the enumeration did not: investigate"
        out[r.name] = r
    return out


# ---- binary32 and binary64: the rounding abstraction -----------------------------


def _real_x(name, fmt):
    x = z3.Real(name)
    big, tiny = Q(fmt.max_finite), Q(fmt.min_subnormal)
    return x, [x <= big, x >= -big, z3.Or(x == 0, x >= tiny, x <= -tiny)]


def _abstract_impl(m: RealModel, e, x, s: Subject):
    y = m.eval(e, x, s.attrs)
    out = _rounding_for(s.fmt)
    return m.round(out, y) if out is not None else y


def _abstract_query(
    s: Subject, kind, rlimit, bounds=None, dom=(None, None), holes=(), family="abstraction", decreasing=False
):
    """One query of the rounding abstraction: is there a violation over the finite inputs
    (outside the holes: closed intervals of values checked otherwise)? decreasing (monotonic): the
    violation is f(x1) < f(x2), the same abstraction (its roundings are monotone and odd) with the
    comparison turned."""
    m = RealModel(exact=False, inner=R64)
    out = _rounding_for(s.fmt)
    e = s.impl
    if kind == "monotonic":
        x1, c1 = _real_x("x1", s.fmt)
        x2, c2 = _real_x("x2", s.fmt)
        xs = {"x1": x1, "x2": x2}
        # x1 < x2 are two values of the format: they are at least one spacing apart, and the
        # spacing next to x1 is at least |x1| 2^-p (the smallest subnormal near 0). Without it
        # the abstraction takes x1 = x2 and rounds the two evaluations apart.
        gap = z3.If(x1 >= 0, x1, -x1) * Q(Fraction(1, 2**s.fmt.p))
        y1, y2 = _abstract_impl(m, e, x1, s), _abstract_impl(m, e, x2, s)
        viol = (
            c1
            + c2
            + [
                x2 - x1 >= gap,
                x2 - x1 >= Q(Fraction(s.fmt.min_subnormal)),
                y1 < y2 if decreasing else y1 > y2,
            ]
        )
    elif kind == "range":
        x, c = _real_x("x", s.fmt)
        xs = {"x": x}
        y = _abstract_impl(m, e, x, s)
        lo, hi = bounds
        v = ([y < Q(lo)] if lo is not None else []) + ([y > Q(hi)] if hi is not None else [])
        for b in (lo, hi):
            if b is not None:
                m.anchor(R64, Fraction(b))
                if out is not None:
                    m.anchor(out, Fraction(b))
        viol = c + [z3.Or(*v)]
    else:  # odd, even
        x, c = _real_x("x", s.fmt)
        xs = {"x": x}
        yn, y = _abstract_impl(m, e, -x, s), _abstract_impl(m, e, x, s)
        viol = c + [yn != (-y if kind == "odd" else y)]
    for v in xs.values():
        m.symbolic_anchors += [v, -v]
        if dom[0] is not None:
            viol.append(v >= Q(Fraction(dom[0])))
        if dom[1] is not None:
            viol.append(v <= Q(Fraction(dom[1])))
        viol += [z3.Or(v <= Q(a), v >= Q(b)) for a, b in holes]
    if out is not None:
        m.anchor(out, Fraction(0))
    if m.divisors:
        # a quotient by 0 has no real value: the query is over inputs where no divisor is 0, which is all of them
        # but x = +-0 only where z3 finds no other input with a zero one; +-0 themselves are run on the code for the
        # kinds whose prover checks them there (_special_violation: range, odd, even), and count for the others
        zeros_run = kind in ("range", "odd", "even")
        where = [c for c in viol if not _mentions_a_function(c)] + ([v != 0 for v in xs.values()] if zeros_run else [])
        zero = z3.Or(*(z3.And(on, d == 0) for on, d in m.divisors))
        st, _, dz, _ = solve(where + [zero] + m.axioms(), family, rlimit)
        if st != "unsat":
            why = "a divisor may be 0 at an input other than +-0" if zeros_run else "a divisor may be 0 at an input"
            return "unknown", None, dz, why, xs
        viol = viol + [z3.Implies(on, d != 0) for on, d in m.divisors]
    status, model, dt, reason = solve(viol + m.axioms(), family, rlimit)
    return status, model, dt, reason, xs


def _mentions_a_function(c) -> bool:
    """Whether a constraint applies a function (a primitive, a rounding): the property's own terms; the input's
    range constraints do not."""
    return has_subterm(c, lambda t: z3.is_app(t) and t.decl().kind() == z3.Z3_OP_UNINTERPRETED and t.num_args() > 0)


def _replay_real(s: Subject, kind, model, xs, bounds=None, decreasing=False):
    """Round the model's inputs into the format and run the code."""
    fmt = s.fmt
    vals = {k: float(round_fraction(model_value(model, t), fmt)) for k, t in xs.items()}
    ce = {"inputs": {k: _point(v, fmt) for k, v in vals.items()}}
    if kind == "monotonic":
        y1, y2 = s.run([vals["x1"], vals["x2"]])
        ce["outputs"] = {"f(x1)": _point(float(y1), fmt), "f(x2)": _point(float(y2), fmt)}
        ce["replayed"] = bool(vals["x1"] <= vals["x2"] and (y1 < y2 if decreasing else y1 > y2))
    elif kind == "range":
        (y,) = s.run([vals["x"]])
        lo, hi = bounds
        ce["outputs"] = {"f(x)": _point(float(y), fmt)}
        ce["replayed"] = bool((lo is not None and y < lo) or (hi is not None and y > hi))
    elif kind == "even":
        a, b = s.run([-vals["x"], vals["x"]])
        ce["outputs"] = {"f(-x)": _point(float(a), fmt), "f(x)": _point(float(b), fmt)}
        ce["replayed"] = bool(a != b)
    else:
        a, b = s.run([-vals["x"], vals["x"]])
        ce["outputs"] = {"f(-x)": _point(float(a), fmt), "-f(x)": _point(float(-b), fmt)}
        ce["replayed"] = bool(a != -b)
    return ce


def _abstraction(s: Subject, prop, res, kind, rlimit, bounds=None, dom=(None, None), family="abstraction"):
    """Try the z3 rounding abstraction; res is updated in place (proved / refuted / a note).
    Returns the counterexample when the abstraction had one that does not replay."""
    decreasing = kind == "monotonic" and prop.decreasing
    status, model, dt, reason, xs = _abstract_query(s, kind, rlimit, bounds, dom, family=family, decreasing=decreasing)
    res.elapsed_s += dt
    if status == "unsat":
        res.status = "proved"
        res.method = (
            "z3 rounding abstraction (each binary64 operation a monotone, odd rounding within 2^-53 "
            "relative; libm contract) over every finite input"
        )
        res.note = None
    elif status == "sat":
        ce = _replay_real(s, kind, model, xs, bounds, decreasing)
        if ce["replayed"]:
            res.status, res.counterexample = "refuted", ce
            res.method = "z3 rounding abstraction; its counterexample replayed on the code"
        else:
            res.note = _join(res.note, "z3's rounding abstraction has a counterexample that does not replay")
            return ce
    else:
        res.note = _join(res.note, f"z3 rounding abstraction: {reason}")
    return None


HOLE_START = 1 << 21  # values on each side of a first spurious counterexample
HOLE_BUDGET = 1 << 30  # values run on the code in all (HardSwish's bound at -1.5: 2.0-2.9e8; their
# time: bench/README.md, 'Figures behind choices in the code')
HOLE_ROUNDS = 24


class _Holes:
    """The neighbourhoods of _range_with_holes: closed ranges of ordinals of fmt (sorted, merged), every
    value in them run on the code, and how many values that was."""

    def __init__(self, s: Subject, bounds):
        self.s, self.bounds = s, bounds
        self.ranges: list[list[int]] = []
        self.ran = 0

    def add(self, a: int, b: int):
        """Run the values of a..b not run yet, and merge a..b into the neighbourhoods: "budget" where that
        passes HOLE_BUDGET (nothing run), the first value outside the bounds, or None."""
        lo, hi = self.bounds
        todo, c = [], a
        for h0, h1 in self.ranges:
            if h1 < c or h0 > b:
                continue
            if h0 > c:
                todo.append((c, h0 - 1))
            c = max(c, h1 + 1)
        if c <= b:
            todo.append((c, b))
        self.ran += sum(q - p + 1 for p, q in todo)
        if self.ran > HOLE_BUDGET:
            return "budget"
        for p, q in todo:
            x = first_outside(self.s.run, p, q, self.s.fmt, lo, hi, chunk=1 << 22)
            if x is not None:
                return x
        merged = []
        for h in sorted(self.ranges + [[a, b]]):
            if merged and h[0] <= merged[-1][1] + 1:
                merged[-1][1] = max(merged[-1][1], h[1])
            else:
                merged.append(list(h))
        self.ranges = merged
        return None

    def reach(self, o: int, w: int, o_min: int, o_max: int):
        """Extend the neighbourhood next to ordinal o (or start one) to w values past it, within
        [o_min, o_max]; as add."""
        near = [h for h in self.ranges if h[0] - 4 * w <= o <= h[1] + 4 * w]
        if near:
            h = min(near, key=lambda h: min(abs(o - h[0]), abs(o - h[1])))
            return self.add(max(o_min, min(h[0], o - w)), min(o_max, max(h[1], o + w)))
        return self.add(max(o_min, o - w), min(o_max, o + w))

    def edges(self) -> list[tuple[Fraction, Fraction]]:
        """Each neighbourhood's first and last value, exactly."""
        return [
            tuple(Fraction(float(v)) for v in from_ordinal(np.array(h, dtype=np.int64), self.s.fmt))
            for h in self.ranges
        ]


def _range_with_holes(s: Subject, res, bounds, dom, first_ce, rlimit) -> None:
    """Where a bound is attained by the code (HardSwish: -0.375 at x = -1.5), the abstraction's
    errors exceed the margin near that point and its counterexamples there do not replay: run
    every value of a neighbourhood of each such counterexample on the code and ask the
    abstraction again about the rest, each new counterexample extending the neighbourhood next
    to it. Together, a proof over every finite input: each is either run or covered by an unsat
    query. res is updated in place; it stays unknown if the budget runs out."""
    fmt = s.fmt
    top = max_ordinal(fmt) - 1
    o_min = ordinal_of(dom[0], fmt) if dom[0] is not None else -top
    o_max = ordinal_of(dom[1], fmt) if dom[1] is not None else top
    holes = _Holes(s, bounds)
    z3_s = 0.0
    t0 = time.perf_counter()
    # Each counterexample extends the neighbourhood next to it (or starts one) to w values past it,
    # and w doubles every round: the neighbourhoods reach the region where the abstraction fails in
    # a few rounds whatever points z3 returns (its models vary with what the process asked before).
    ce, w = first_ce, HOLE_START
    for _ in range(HOLE_ROUNDS):
        x = holes.reach(ordinal_of(ce["inputs"]["x"]["value"], fmt), w, o_min, o_max)
        w *= 2
        if x == "budget":
            res.note = _join(
                res.note,
                f"the values near the abstraction's counterexamples exceed the budget of "
                f"{HOLE_BUDGET:,} run on the code",
            )
            return
        if x is not None:
            _refuted_in_hole(s, res, x)
            return
        edges = holes.edges()
        status, model, dt, reason, xs = _abstract_query(s, "range", rlimit, bounds, dom, edges)
        res.elapsed_s += dt
        z3_s += dt
        if status == "unsat":
            _proved_around_holes(res, holes, edges)
            res.elapsed_s += time.perf_counter() - t0 - z3_s
            return
        if status != "sat":
            res.note = _join(
                res.note, f"z3 rounding abstraction outside {len(holes.ranges)} neighbourhood(s): {reason}"
            )
            return
        ce = _replay_real(s, "range", model, xs, bounds)
        if ce["replayed"]:
            res.status, res.counterexample = "refuted", ce
            res.method = "z3 rounding abstraction; its counterexample replayed on the code"
            return
    res.note = _join(
        res.note, f"{HOLE_ROUNDS} rounds of neighbourhoods did not exclude the abstraction's counterexamples"
    )


def _refuted_in_hole(s: Subject, res, x: float) -> None:
    (y,) = s.run([x])
    res.status, res.method = "refuted", "every value near the abstraction's counterexample run on the code"
    res.counterexample = {
        "inputs": {"x": _point(x, s.fmt)},
        "outputs": {"f(x)": _point(float(y), s.fmt)},
        "replayed": True,
    }


def _proved_around_holes(res, holes: _Holes, edges) -> None:
    where = "; ".join(f"[{a!r}, {b!r}]" for a, b in ((float(p), float(q)) for p, q in edges))
    res.status, res.note = "proved", None
    res.method = (
        f"z3 rounding abstraction (each binary64 operation a monotone, odd rounding within 2^-53 "
        f"relative; libm contract) over every finite input outside {len(holes.ranges)} "
        f"neighbourhood(s) of its spurious counterexamples, and the {holes.ran:,} values in them "
        f"({where}) run on the code"
    )


def _join(a, b):
    return f"{a}; {b}" if a else b


def _specials(s: Subject):
    return dict(zip(["+0", "-0", "+inf", "-inf"], s.run([0.0, -0.0, np.inf, -np.inf])))


def _in(dom, x) -> bool:
    return (dom[0] is None or x >= dom[0]) and (dom[1] is None or x <= dom[1])


def _special_violation(s: Subject, prop, bounds, dom):
    """The special inputs +-0, +-inf evaluated on the code: a counterexample, or None."""
    spec = _specials(s)
    xval = {"+0": 0.0, "-0": -0.0, "+inf": np.inf, "-inf": -np.inf}
    if prop.kind in ("range", "constant"):
        lo, hi = bounds
        for k, y in spec.items():
            if _in(dom, xval[k]) and (np.isnan(y) or (lo is not None and y < lo) or (hi is not None and y > hi)):
                return {"inputs": {"x": k}, "outputs": {"f(x)": float(y)}, "replayed": True}
    elif prop.kind in ("odd", "even"):
        # NaN at both of x and -x is consistent with oddness (asin(+-inf)) and evenness, as the sweeps' scan takes
        # it; zeros' signs count where the property is bit for bit (zero_sign), as the enumeration and the sweeps'
        # scan take them: f(+-0) = +0 at both is not odd bit for bit (the abstraction, over the reals, has no -0)
        mirror = -1.0 if prop.kind == "odd" else 1.0

        def holds(a, b):
            if np.isnan(a) and np.isnan(b):
                return True
            same_sign = not prop.zero_sign or a != 0 or np.signbit(a) == np.signbit(mirror * b)
            return a == mirror * b and same_sign

        if not (holds(spec["-0"], spec["+0"]) and holds(spec["-inf"], spec["+inf"])):
            return {"inputs": {"x": "+-0, +-inf"}, "outputs": {k: float(v) for k, v in spec.items()}, "replayed": True}
    return None


def prove_range(s: Subject, prop, rlimit) -> PropertyResult:
    """A range or a constant over every input of the domain."""
    bounds = _bounds(s, prop)
    dom = _domain(s, prop)
    lo, hi = bounds
    where = f" for x in [{dom[0]}, {dom[1]}]" if dom != (None, None) else ""
    res = PropertyResult(
        prop.name, prop.kind, prop.statement + f" (in {s.fmt.name}: [{lo}, {hi}]{where})", "unknown", "-"
    )
    bad = _special_violation(s, prop, bounds, dom)
    if bad:
        res.status, res.counterexample, res.method = "refuted", bad, "evaluation of the code at +-0 and +-inf"
        return res
    holes_tried = False
    if s.fmt.bits == 64:
        # binary64 cannot be enumerated: the interval prover splits pieces until its budget runs out (for
        # Softplus's and Sigmoid's ranges), where z3's rounding abstraction answers at once. Ask it first, on
        # a short budget ("abstraction-quick"); both are proofs over every input, and the method says which.
        spurious = _abstraction(s, prop, res, "range", rlimit, bounds, dom, family="abstraction-quick")
        holes_tried = spurious is not None
        if spurious is not None:
            # the queries outside the neighbourhoods get the abstraction's full budget
            _range_with_holes(s, res, bounds, dom, spurious, rlimit)
        if res.status in ("proved", "refuted"):
            return res
        # what the neighbourhoods ran into stays in the note; the quick query's own remark does not
        res.note = (
            res.note.split("does not replay; ", 1)[1]
            if holes_tried and "does not replay; " in (res.note or "")
            else None
        )
    t0 = time.perf_counter()
    q = lambda e: s.q(e) if e is not None else None  # noqa: E731
    lower, upper = (q(prop.value), q(prop.value)) if prop.kind == "constant" else (q(prop.lower), q(prop.upper))
    dlo, dhi = prop.domain
    status, info = implementation_bound(s.impl, s.attrs, s.fmt, (lower, upper), (q(dlo), q(dhi)), run_code=s.run)
    res.elapsed_s += time.perf_counter() - t0
    if status == "proved":
        res.status, res.note = "proved", None
        res.method = (
            f"interval arithmetic over every finite {s.fmt.name} input ({info:,} pieces of consecutive "
            "values): each binary64 operation's exact result rounded to nearest (monotone: the enclosure's ends round), each primitive within its libm "
            "contract, the final rounding monotone; pieces the enclosures could not separate from the "
            "bound (at most 2^22 inputs each), and +-0 and +-inf, run on the code"
        )
        return res
    if status == "refuted":
        (y,) = s.run([float(info)])
        if (lo is not None and y < lo) or (hi is not None and y > hi):
            res.status, res.method = "refuted", "interval arithmetic; its counterexample replayed on the code"
            res.counterexample = {
                "inputs": {"x": _point(float(info), s.fmt)},
                "outputs": {"f(x)": _point(float(y), s.fmt)},
                "replayed": True,
            }
            return res
        info = f"a suspect input {float(info)!r} does not replay"
    res.note = _join(res.note, f"interval arithmetic: {info}")
    spurious = _abstraction(s, prop, res, "range", rlimit, bounds, dom)
    if spurious is not None and s.fmt.bits == 64 and not holes_tried:
        # the quick query above ran out of its budget where this one found the point
        _range_with_holes(s, res, bounds, dom, spurious, rlimit)
    return res


def prove_monotonic(s: Subject, prop, rlimit) -> PropertyResult:
    dom = _domain(s, prop)
    fmt = s.fmt
    res = PropertyResult(
        prop.name,
        prop.kind,
        prop.statement
        + f" (in {fmt.name}: every adjacent pair of inputs"
        + (f" in [{dom[0]}, {dom[1]}]" if dom != (None, None) else "")
        + "; -0 and +0 are one point)",
        "unknown",
        "-",
    )
    t0 = time.perf_counter()
    spec = _specials(s)
    if not prop.holds:
        return _refute_monotonic(s, prop, res, dom, t0)
    top = max_ordinal(fmt) - 1
    ordlo = -top if dom[0] is None else int(_ordinal(dom[0], fmt))
    ordhi = top if dom[1] is None else int(_ordinal(dom[1], fmt))
    bad = _special_decrease(s, prop, dom, spec)
    if bad is not None:
        return _decreasing_pair(res, fmt, t0, *bad)
    # A non-increasing property is proved as -f non-decreasing: the code's outputs negated (exactly; NaN stays
    # NaN, and -0 and +0 stay one point) and the expression -impl, whose binary64 steps are impl's with one
    # exact negation on top (the final rounding to the format is monotone either way). Pairs found on -f are
    # turned back into f's outputs (_oriented_pair) before they are reported.
    impl, run = _oriented(s, prop)
    status, info = prove_monotone(impl, s.attrs, fmt, run, ordlo, ordhi)
    res.elapsed_s = time.perf_counter() - t0
    if status == "proved":
        res.status = "proved"
        res.method = (
            f"composition of monotone steps over every finite {fmt.name} input ({info:,} pieces"
            + (
                ", applied to -f: f is non-increasing exactly where -f, negated exactly, is non-decreasing"
                if prop.decreasing
                else ""
            )
            + "): each binary64 rounding is non-decreasing and each primitive monotone by its libm contract, with "
            "the signs the rules need from rounding-aware interval arithmetic; pieces of at most "
            "64 inputs, and the infinities and +-0, evaluated on the code"
        )
        return res
    if status == "refuted":
        return _decreasing_pair(
            res, fmt, t0, _oriented_pair(info, prop), "evaluation of the code on a piece of adjacent inputs"
        )
    res.note = f"composition rules: {info}"
    found = find_decrease_on_code(run, fmt, s.op.hard_points(s.attrs) if s.op.hard_points else (), dom[0], dom[1])
    if found:
        return _decreasing_pair(
            res,
            fmt,
            t0,
            _oriented_pair(found, prop),
            f"{_wrong_pair(prop)} found by scanning the code's values (log-spaced, and runs of "
            "consecutive values), after the composition rules did not conclude",
        )
    _abstraction(s, prop, res, "monotonic", rlimit, dom=dom)
    if res.status == "proved":
        # finite inputs against the infinite ones: f(-inf) <= f(x) <= f(+inf) (non-increasing: f(+inf) <= f(x) <=
        # f(-inf))
        first, last = ("+inf", "-inf") if prop.decreasing else ("-inf", "+inf")
        below, above = (dom[1], dom[0]) if prop.decreasing else (dom[0], dom[1])
        lo_b = Fraction(spec[first]) if below is None and np.isfinite(spec[first]) else None
        hi_b = Fraction(spec[last]) if above is None and np.isfinite(spec[last]) else None
        if lo_b is not None or hi_b is not None:
            res.status = "unknown"
            _abstraction(s, prop, res, "range", rlimit, (lo_b, hi_b), dom)
    return res


def _oriented(s: Subject, prop):
    """(expression, code) whose non-decrease is the property: opcert's, or for a non-increasing property
    their negations (-impl, and the code's outputs negated: exact)."""
    if not prop.decreasing:
        return s.impl, s.run
    return -s.impl, lambda xs: -s.run(xs)


def _oriented_pair(pair, prop):
    """A pair (x1, x2, g(x1), g(x2)) found on _oriented's code g, with f's outputs: g = -f negated back."""
    x1, x2, y1, y2 = pair
    return (x1, x2, -y1, -y2) if prop.decreasing else pair


def _wrong_pair(prop) -> str:
    return "an increasing pair" if prop.decreasing else "a decreasing pair"


def _refute_monotonic(s: Subject, prop, res, dom, t0) -> PropertyResult:
    """A property declared not to hold: refuted by a decreasing pair (for non-increasing, an increasing one) on
    the code, never proved."""
    _, run = _oriented(s, prop)
    found = find_decrease_on_code(run, s.fmt, s.op.hard_points(s.attrs) if s.op.hard_points else (), dom[0], dom[1])
    if found:
        return _decreasing_pair(
            res,
            s.fmt,
            t0,
            _oriented_pair(found, prop),
            f"{_wrong_pair(prop)} found by scanning the code's values (log-spaced, and dense "
            "around the operator's turning points)",
        )
    res.note = f"no {_wrong_pair(prop).split(' ', 1)[1]} found on the scanned inputs"
    res.elapsed_s = time.perf_counter() - t0
    return res


def _special_decrease(s: Subject, prop, dom, spec):
    """The infinities against their finite neighbours, and -0 against +0, on the code: (pair, how)
    where f decreases (non-increasing: increases), else None."""
    fmt = s.fmt
    ends = []
    if dom[0] is None:
        ends.append((-np.inf, -float(fmt.max_finite)))
    if dom[1] is None:
        ends.append((float(fmt.max_finite), np.inf))
    for x1, x2 in ends:
        y1, y2 = s.run([x1, x2])
        if not (y1 >= y2 if prop.decreasing else y1 <= y2):
            return (x1, x2, float(y1), float(y2)), "evaluation of the code at the infinities and their neighbours"
    if _in(dom, 0.0) and not spec["-0"] == spec["+0"]:
        return (-0.0, 0.0, float(spec["-0"]), float(spec["+0"])), "evaluation of the code at -0 and +0"
    return None


def _decreasing_pair(res, fmt, t0, pair, how) -> PropertyResult:
    """res refuted by pair = (x1, x2, f(x1), f(x2)), x1 < x2 with f(x1) > f(x2) (non-increasing: f(x1) <
    f(x2)), found by `how`."""
    x1, x2, y1, y2 = pair
    res.status, res.method = "refuted", how
    res.counterexample = {
        "inputs": {"x1": _point(x1, fmt), "x2": _point(x2, fmt)},
        "outputs": {"f(x1)": _point(y1, fmt), "f(x2)": _point(y2, fmt)},
        "replayed": True,
    }
    res.elapsed_s = time.perf_counter() - t0
    return res


def _ordinal(v, fmt) -> int:
    return int(ordinal(np.array([v]).astype(fmt.dtype))[0])


def prove_parity(s: Subject, prop, rlimit) -> PropertyResult:
    """Oddness or evenness (prop.kind): +-0 and +-inf on the code, the finite inputs by the abstraction."""
    scope = (
        " (zeros' signs compared at x = +-0 and +-inf; the other inputs as values: +0 = -0)"
        if prop.zero_sign
        else " (as values: +0 = -0)"
    )
    res = PropertyResult(prop.name, prop.kind, prop.statement + scope, "unknown", "-")
    bad = _special_violation(s, prop, None, (None, None))
    if bad:
        res.status, res.counterexample, res.method = "refuted", bad, "evaluation of the code at +-0 and +-inf"
        return res
    _abstraction(s, prop, res, prop.kind, rlimit)
    return res


SYMMETRY_SEARCH = 200_000  # sampled inputs (with their negations) searched for a violation


def search_point_symmetry(s: Subject, prop) -> PropertyResult:
    """No prover here proves f(-x) = c - f(x) for the code (within half an ULP of each output);
    a violation can still be found, by running the code on stratified inputs and their
    negations (every binade, the operator's special points): that refutes it, never proves it."""
    t0 = time.perf_counter()
    res = PropertyResult(prop.name, prop.kind, prop.statement + " (within half an ULP of each output)", "unknown", "-")
    with np.errstate(invalid="ignore", over="ignore"):  # the sample holds NaN patterns and overflows
        x = sample(s.op, s.fmt, s.attrs, SYMMETRY_SEARCH, standard=s.std).astype(np.float64)
        x = x[np.isfinite(x) & (x > 0)]
        yp, yn = s.run(x), s.run(-x)
    bad, _ = symmetry_violations(yp, yn, float(s.q(prop.center)), s.fmt)
    res.elapsed_s = time.perf_counter() - t0
    if bad.any():
        i = int(np.nonzero(bad)[0][0])
        res.status, res.violations, res.inputs_checked = "refuted", int(bad.sum()), int(x.size)
        res.method = "search: the code run on stratified inputs and their negations; the counterexample replayed"
        res.counterexample = {
            "inputs": {"x": _point(float(x[i]), s.fmt), "-x": _point(float(-x[i]), s.fmt)},
            "outputs": {"f(x)": _point(float(yp[i]), s.fmt), "f(-x)": _point(float(yn[i]), s.fmt)},
            "replayed": True,
        }
        return res
    res.note = (
        f"no method proves {prop.kind} for the code in {s.fmt.name}; no violation among "
        f"{x.size:,} sampled inputs and their negations"
    )
    return res


# ---- exact points, limits -------------------------------------------------------------


def prove_points(s: Subject, prop) -> PropertyResult:
    t0 = time.perf_counter()
    res = PropertyResult(
        prop.name, prop.kind, prop.statement, "proved", "evaluation of the code at each point (and at -0 for 0)"
    )
    checked, skipped = [], []
    for p, v in prop.points:
        pq, vq = s.q(p), s.q(v)
        if Fraction(round_fraction(pq, s.fmt)) != pq:
            skipped.append(show(pq))
            continue
        xs = [float(pq)] + ([-0.0] if pq == 0 else [])
        for xv, y in zip(xs, s.run(xs)):
            checked.append(xv)
            if not y == float(round_fraction(vq, s.fmt)):
                res.status = "refuted"
                res.counterexample = {
                    "inputs": {"x": _point(xv, s.fmt)},
                    "outputs": {"f(x)": _point(float(y), s.fmt)},
                    "expected": show(vq),
                    "replayed": True,
                }
    if skipped:
        res.note = f"points not representable in {s.fmt.name}, not checked: {', '.join(skipped)}"
        if not checked:
            res.status = "skipped"
    res.elapsed_s = time.perf_counter() - t0
    return res


def prove_limits(s: Subject, prop) -> PropertyResult:
    t0 = time.perf_counter()
    fmt = s.fmt
    x = np.array([np.inf, -np.inf], dtype=np.float64).astype(fmt.dtype)
    y = run_resolved(s.op, x, s.attrs, standard=s.std)
    r = reference_detailed(s.op, x, s.attrs, s.std).rounded
    yb, rb = np.ascontiguousarray(y).view(fmt.uint), np.ascontiguousarray(r).view(fmt.uint)
    with np.errstate(invalid="ignore"):
        both_nan = np.isnan(y.astype(np.float64)) & np.isnan(r.astype(np.float64))
    res = PropertyResult(
        prop.name,
        prop.kind,
        prop.statement,
        "proved",
        "evaluation of the code at +inf and -inf, bit for bit against the reference's limits",
        time.perf_counter() - t0,
    )
    for i, k in enumerate(("+inf", "-inf")):
        if not (yb[i] == rb[i] or both_nan[i]):
            res.status = "refuted"
            res.counterexample = {
                "inputs": {"x": k},
                "outputs": {"f(x)": _point(float(y[i].astype(np.float64)), fmt)},
                "reference": _point(float(r[i].astype(np.float64)), fmt),
                "replayed": True,
            }
            break
    return res


# ---- dispatch ---------------------------------------------------------------------------


def prove_property(s: Subject, prop, rlimit=None, enumerated=None) -> PropertyResult:
    """rlimit: z3's resource units per query instead of each family's budget (common.BUDGETS)."""
    since = units_spent()
    why_not = prop.not_claimed(s.attrs, s.std)
    if prop.spec_only:
        r = PropertyResult.skipped(
            prop,
            f"{prop.kind} is a property of the real function (proved on the specification)",
        )
    elif prop.kernel_only:
        r = PropertyResult.skipped(
            prop,
            "a property of a kernel's code paths, decided on its outputs in every layout "
            f"(`opcert accuracy {s.op.name} --dtype {s.fmt.name} --target opcert`), not by "
            "z3: opcert's code is NumPy's binary64 ufuncs, which no model here describes "
            "path by path",
        )
    elif why_not is not None and (s.fmt.bits > 16 or (prop.standards is not None and s.std not in prop.standards)):
        # not claimed here: nothing to establish (16-bit formats report what the enumeration saw)
        r = PropertyResult(prop.name, prop.kind, prop.statement, "skipped", "-")
    elif prop.kind == "nan_propagation":
        r = prove_nan(s)
    elif prop.kind == "limit":
        r = prove_limits(s, prop)
    elif s.fmt.bits <= 16:
        r = (enumerated or prove_enumerated(s, [prop], rlimit))[prop.name]
    elif prop.kind == "exact_point":
        r = prove_points(s, prop)
    elif prop.kind in ("range", "constant"):
        r = prove_range(s, prop, rlimit)
    elif prop.kind == "monotonic":
        r = prove_monotonic(s, prop, rlimit)
    elif prop.kind in ("odd", "even"):
        r = prove_parity(s, prop, rlimit)
    elif prop.kind == "point_symmetry":
        r = search_point_symmetry(s, prop)
    else:
        r = PropertyResult(
            prop.name,
            prop.kind,
            prop.statement,
            "unknown",
            "-",
            note=f"no method decides {prop.kind} for the code in {s.fmt.name}",
        )
    r.expected = "fails" if not prop.holds else "holds"
    if why_not is not None:
        r.expected = "not claimed"
        r.note = _join(r.note, why_not)
    # a 16-bit enumeration's verdicts carry the units of their own cross-check already
    return r if s.fmt.bits <= 16 else attribute(r, since)
