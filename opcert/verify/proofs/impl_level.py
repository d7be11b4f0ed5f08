"""Properties of the implementation, per floating-point format.

float16, bfloat16: bit-precise z3 (FP theory) for every single-input property;
monotonicity by checking every pair of adjacent inputs (complete for a 65,536-
value format; the bit-precise two-input query takes ~26 s per operator).
float32, float64: the rounding abstraction of real_model over every finite
input, the special inputs (+-0, +-inf) evaluated, NaN by abstract
interpretation. Counterexamples of the abstraction are replayed on the code;
one that does not replay never makes a verdict.
"""
from __future__ import annotations

import time
from fractions import Fraction

import numpy as np
import z3

from ...formats import FLOAT_FORMATS, FloatFormat, from_bits, hex_bits, ordinal, round_fraction
from ...impl.run import run_resolved
from ...spec.exact import eval_rational
from ..inputs import exhaustive, from_ordinal, special_values
from .common import force, model_value, selects_on_x, show, solve
from .fp_model import FPModel, fp_sort
from .real_model import Q, RealModel, Rounding
from .result import PropertyResult

F64 = FLOAT_FORMATS["float64"]
R64 = Rounding("R64", Fraction(1, 2 ** 53), Fraction(1, 2 ** 1075), lambda c: Fraction(round_fraction(c, F64)))


def _rounding_for(fmt: FloatFormat) -> Rounding | None:
    if fmt.name == "float64":
        return None  # the binary64 computation is already in the output format
    eta = Fraction(2) ** (fmt.emin - fmt.p)
    return Rounding("R_" + fmt.name, Fraction(1, 2 ** fmt.p), eta, lambda c: Fraction(round_fraction(c, fmt)))


def _eval(op, attrs, xs, fmt) -> np.ndarray:
    return run_resolved(op, np.asarray(xs, dtype=np.float64).astype(fmt.dtype), attrs).astype(np.float64)


def _point(v: float, fmt) -> dict:
    return {"value": v if v == v else "nan", "bits": hex_bits(v, fmt)}


def _bounds(prop, attrs, fmt):
    lo = round_fraction(eval_rational(prop.lower, Fraction(0), attrs), fmt) if prop.lower is not None else None
    hi = round_fraction(eval_rational(prop.upper, Fraction(0), attrs), fmt) if prop.upper is not None else None
    return lo, hi


# ---- NaN: abstract interpretation -------------------------------------------------

def _nan_state(e, memo=None):
    """'nan' if e is NaN whenever x is NaN (attributes finite), else None;
    booleans: False/True when decided, None otherwise."""
    op = e.op
    if op == "var":
        return "nan"
    if op in ("attr", "const"):
        return None
    args = [_nan_state(a) for a in e.args]
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


def prove_nan(op, fmt, attrs) -> PropertyResult:
    t0 = time.perf_counter()
    state = _nan_state(op.implementation)
    specials = special_values(fmt)
    with np.errstate(invalid="ignore"):
        nans = specials[np.isnan(specials.astype(np.float64))]   # quiet and signalling, both signs
    y = run_resolved(op, nans, attrs)
    replay_ok = bool(np.isnan(y.astype(np.float64)).all())
    res = PropertyResult("nan", "nan_propagation", "a NaN input gives a NaN output", "unknown",
                         "abstract interpretation of the expression (NaN operands give NaN, comparisons "
                         "with NaN are false, libm maps NaN to NaN)", time.perf_counter() - t0)
    if state == "nan" and replay_ok:
        res.status = "proved"
    elif not replay_ok:
        i = int(np.argmax(~np.isnan(y.astype(np.float64))))
        res.status = "refuted"
        res.counterexample = {"inputs": {"x": _point(float("nan"), fmt) | {"bits": hex_bits(nans[i], fmt)}},
                              "outputs": {"f(x)": _point(float(y[i].astype(np.float64)), fmt)}, "replayed": True}
    else:
        res.note = "the abstract interpretation could not decide"
    return res


# ---- 16-bit formats: bit-precise ----------------------------------------------

def _fp_query(op, fmt, attrs, build, timeout_ms):
    m = FPModel()
    sort = fp_sort(fmt)
    viol, xs = build(m, sort)
    status, model, dt, reason = solve(viol + m.axioms(), timeout_ms)
    return status, model, dt, reason, xs


def _fp_counterexample(op, fmt, attrs, model, xs) -> dict:
    inputs, vals = {}, []
    for k, t in xs.items():
        v = model.eval(t, model_completion=True)
        bits = z3.simplify(z3.fpToIEEEBV(v)).as_long()
        x = from_bits(np.array([bits], dtype=np.uint64).astype(fmt.uint), fmt)
        inputs[k] = {"value": float(x.astype(np.float64)[0]), "bits": hex_bits(x[0], fmt)}
        vals.append(x[0])
    y = run_resolved(op, np.array(vals, dtype=fmt.dtype), attrs).astype(np.float64)
    return {"inputs": inputs, "outputs": {f"f({k})": _point(float(v), fmt) for k, v in zip(xs, y)}}


def exhaustive_single(op, prop, fmt, attrs) -> dict | None:
    """Check a single-input property on every input of a 16-bit format;
    the first counterexample, or None."""
    x = exhaustive(fmt)
    with np.errstate(invalid="ignore"):
        x64 = x.astype(np.float64)
    keep = ~np.isnan(x64)
    x, x64 = x[keep], x64[keep]
    y = run_resolved(op, x, attrs).astype(np.float64)
    if prop.kind == "range":
        lo, hi = _bounds(prop, attrs, fmt)
        bad = np.isnan(y) | ((y < lo) if lo is not None else False) | ((y > hi) if hi is not None else False)
        outs = lambda i: {"f(x)": _point(float(y[i]), fmt)}  # noqa: E731
    else:  # odd, as values
        yn = run_resolved(op, (-x64).astype(fmt.dtype), attrs).astype(np.float64)
        bad = ~(yn == -y)
        outs = lambda i: {"f(-x)": _point(float(yn[i]), fmt), "-f(x)": _point(float(-y[i]), fmt)}  # noqa: E731
    idx = np.nonzero(bad)[0]
    if not idx.size:
        return None
    i = int(idx[0])
    return {"inputs": {"x": _point(float(x64[i]), fmt)}, "outputs": outs(i), "replayed": True}


def prove_16bit(op, prop, fmt, attrs, timeout_ms) -> PropertyResult:
    """Every input enumerated (complete), and the bit-precise z3 model queried
    beside it within a short budget: the verdict comes from the enumeration,
    the method says what z3 concluded."""
    t0 = time.perf_counter()
    ce = exhaustive_single(op, prop, fmt, attrs)
    enum_s = time.perf_counter() - t0
    z = prove_fp(op, prop, fmt, attrs, min(timeout_ms, CROSS_CHECK_MS))
    res = PropertyResult(prop.name, prop.kind, z.statement, "proved" if ce is None else "refuted", "",
                         enum_s + z.elapsed_s, counterexample=ce)
    zs = {"proved": f"proved it in {z.elapsed_s:.1f} s", "refuted": "refuted it",
          "unknown": f"did not finish in {min(timeout_ms, CROSS_CHECK_MS) / 1000:.0f} s"}[z.status]
    res.method = (f"every {fmt.name} input enumerated on the code (complete); z3 bit-precise floating point "
                  f"(binary64 operations, libm contract) {zs}")
    if z.status == "refuted" and ce is None:
        res.status, res.counterexample = "refuted", z.counterexample
        res.note = "z3's bit-precise model found a counterexample the enumeration did not: investigate"
    return res


CROSS_CHECK_MS = 5_000


def prove_fp(op, prop, fmt, attrs, timeout_ms) -> PropertyResult:
    method = "z3 bit-precise floating point (binary64 operations, libm contract)"
    res = PropertyResult(prop.name, prop.kind, prop.statement, "unknown", method)
    if prop.kind == "range":
        lo, hi = _bounds(prop, attrs, fmt)

        def build(m, sort):
            x = z3.FP("x", sort)
            y = m.implementation(op.implementation, x, attrs, fmt)
            v = [z3.fpIsNaN(y)]
            if lo is not None:
                v.append(z3.fpLT(y, z3.FPVal(lo, sort)))
            if hi is not None:
                v.append(z3.fpGT(y, z3.FPVal(hi, sort)))
            return [z3.Not(z3.fpIsNaN(x)), z3.Or(*v)], {"x": x}
        res.statement += f" (in {fmt.name}: [{lo}, {hi}])"
    elif prop.kind == "odd":
        def build(m, sort):
            x = z3.FP("x", sort)
            y1 = m.implementation(op.implementation, z3.fpNeg(x), attrs, fmt)
            y2 = z3.fpNeg(m.implementation(op.implementation, x, attrs, fmt))
            return [z3.Not(z3.fpIsNaN(x)), z3.Not(z3.fpEQ(y1, y2))], {"x": x}
        res.statement += " (as values: +0 = -0)"
    else:
        raise ValueError(prop.kind)
    status, model, dt, reason, xs = _fp_query(op, fmt, attrs, build, timeout_ms)
    res.elapsed_s = dt
    if status == "unsat":
        res.status = "proved"
    elif status == "sat":
        ce = _fp_counterexample(op, fmt, attrs, model, xs)
        y = [o["value"] for o in ce["outputs"].values()]
        if prop.kind == "range":
            replayed = y[0] == "nan" or (lo is not None and y[0] < lo) or (hi is not None and y[0] > hi)
        else:
            xv = ce["inputs"]["x"]["value"]
            a, b = _eval(op, attrs, [-xv, xv], fmt)
            replayed = not (a == -b)
        ce["replayed"] = bool(replayed)
        res.counterexample = ce
        res.status = "refuted" if replayed else "unknown"
        if not replayed:
            res.note = "the model's libm contract admits it; the platform's functions do not"
    else:
        res.note = f"z3: {reason} after {dt:.1f} s"
    return res


def prove_monotonic_exhaustive(op, fmt, attrs) -> PropertyResult:
    t0 = time.perf_counter()
    x = exhaustive(fmt)
    with np.errstate(invalid="ignore"):
        keep = ~np.isnan(x.astype(np.float64))
    x = x[keep]
    x = x[np.argsort(ordinal(x), kind="stable")]
    y = run_resolved(op, x, attrs).astype(np.float64)
    res = PropertyResult("monotonic", "monotonic", "non-decreasing", "proved",
                         f"every pair of adjacent {fmt.name} inputs, in value order (complete)",
                         0.0)
    bad = np.nonzero(np.isnan(y[1:]) | np.isnan(y[:-1]) | (y[1:] < y[:-1]))[0]
    if bad.size:
        i = int(bad[0])
        res.status = "refuted"
        res.counterexample = {"inputs": {"x1": _point(float(x[i].astype(np.float64)), fmt),
                                         "x2": _point(float(x[i + 1].astype(np.float64)), fmt)},
                              "outputs": {"f(x1)": _point(float(y[i]), fmt), "f(x2)": _point(float(y[i + 1]), fmt)},
                              "replayed": True}
    res.elapsed_s = time.perf_counter() - t0
    return res


# ---- binary32 and binary64: the rounding abstraction -----------------------------

def _real_x(name, fmt):
    x = z3.Real(name)
    big, tiny = Q(fmt.max_finite), Q(fmt.min_subnormal)
    return x, [x <= big, x >= -big, z3.Or(x == 0, x >= tiny, x <= -tiny)]


def _abstract_impl(m: RealModel, e, x, attrs, fmt):
    y = m.eval(e, x, attrs)
    out = _rounding_for(fmt)
    return m.round(out, y) if out is not None else y


def _specials(op, fmt, attrs):
    xs = [0.0, -0.0, np.inf, -np.inf]
    return dict(zip(["+0", "-0", "+inf", "-inf"], _eval(op, attrs, xs, fmt)))


def _abstract_query(op, fmt, attrs, e, kind, timeout_ms, bounds=None, region=None):
    """Run one abstraction query for expression e; region: a constraint builder on the inputs."""
    m = RealModel(exact=False, inner=R64)
    out = _rounding_for(fmt)
    if kind == "monotonic":
        x1, c1 = _real_x("x1", fmt)
        x2, c2 = _real_x("x2", fmt)
        xs = {"x1": x1, "x2": x2}
        viol = c1 + c2 + [x1 <= x2, _abstract_impl(m, e, x1, attrs, fmt) > _abstract_impl(m, e, x2, attrs, fmt)]
    elif kind == "range":
        x, c = _real_x("x", fmt)
        xs = {"x": x}
        y = _abstract_impl(m, e, x, attrs, fmt)
        lo, hi = bounds
        v = ([y < Q(lo)] if lo is not None else []) + ([y > Q(hi)] if hi is not None else [])
        for b in (lo, hi):
            if b is not None:
                m.anchor(R64, Fraction(b))
                if out is not None:
                    m.anchor(out, Fraction(b))
        viol = c + [z3.Or(*v)]
    elif kind == "odd":
        x, c = _real_x("x", fmt)
        xs = {"x": x}
        viol = c + [_abstract_impl(m, e, -x, attrs, fmt) != -_abstract_impl(m, e, x, attrs, fmt)]
    if region is not None:
        viol += region(m, xs)
    if out is not None:
        m.anchor(out, Fraction(0))
    status, model, dt, reason = solve(viol + m.axioms(), timeout_ms)
    return status, model, dt, reason, xs


def _replay_real(op, fmt, attrs, kind, model, xs, bounds=None):
    """Round the model's inputs into the format and run the code."""
    vals = {k: float(round_fraction(model_value(model, t), fmt)) for k, t in xs.items()}
    ce = {"inputs": {k: _point(v, fmt) for k, v in vals.items()}}
    if kind == "monotonic":
        y1, y2 = _eval(op, attrs, [vals["x1"], vals["x2"]], fmt)
        ce["outputs"] = {"f(x1)": _point(float(y1), fmt), "f(x2)": _point(float(y2), fmt)}
        ce["replayed"] = bool(vals["x1"] <= vals["x2"] and y1 > y2)
    elif kind == "range":
        (y,) = _eval(op, attrs, [vals["x"]], fmt)
        lo, hi = bounds
        ce["outputs"] = {"f(x)": _point(float(y), fmt)}
        ce["replayed"] = bool((lo is not None and y < lo) or (hi is not None and y > hi))
    else:
        a, b = _eval(op, attrs, [-vals["x"], vals["x"]], fmt)
        ce["outputs"] = {"f(-x)": _point(float(a), fmt), "-f(x)": _point(float(-b), fmt)}
        ce["replayed"] = bool(a != -b)
    return ce


def _domain(prop, attrs, fmt):
    """The property's x-range as values of fmt (inclusive), None where unbounded."""
    lo, hi = prop.domain
    return (round_fraction(eval_rational(lo, Fraction(0), attrs), fmt, mode="up") if lo is not None else None,
            round_fraction(eval_rational(hi, Fraction(0), attrs), fmt, mode="down") if hi is not None else None)


def _region_builder(dom):
    lo, hi = dom
    if lo is None and hi is None:
        return None

    def build(m, xs):
        out = []
        for x in xs.values():
            if lo is not None:
                out.append(x >= Q(Fraction(lo)) if np.isfinite(lo) else z3.BoolVal(lo < 0))
            if hi is not None:
                out.append(x <= Q(Fraction(hi)) if np.isfinite(hi) else z3.BoolVal(hi > 0))
        return out
    return build


def prove_abstract(op, prop, fmt, attrs, timeout_ms) -> PropertyResult:
    method = "z3 rounding abstraction (monotone, odd rounding within 2^-53 relative; libm contract) " \
             "over every finite input, and the inputs +-0 and +-inf evaluated"
    res = PropertyResult(prop.name, prop.kind, prop.statement, "unknown", method)
    spec = _specials(op, fmt, attrs)
    dom = _domain(prop, attrs, fmt)
    kind = prop.kind
    if kind == "constant":
        v = round_fraction(eval_rational(prop.value, Fraction(0), attrs), fmt)
        bounds = (v, v)
        kind = "range"
    else:
        bounds = _bounds(prop, attrs, fmt) if kind == "range" else None
    xval = {"+0": 0.0, "-0": -0.0, "+inf": np.inf, "-inf": -np.inf}

    def in_dom(k):
        x = xval[k]
        return (dom[0] is None or x >= dom[0]) and (dom[1] is None or x <= dom[1])
    # The special inputs, evaluated on the code.
    bad = None
    if kind == "range":
        lo, hi = bounds
        res.statement += f" (in {fmt.name}: [{lo}, {hi}]" + (f" for x in [{dom[0]}, {dom[1]}]" if dom != (None, None)
                                                             else "") + ")"
        for k, y in spec.items():
            if in_dom(k) and (np.isnan(y) or (lo is not None and y < lo) or (hi is not None and y > hi)):
                bad = {"inputs": {"x": k}, "outputs": {"f(x)": float(y)}, "replayed": True}
    elif kind == "odd":
        res.statement += " (as values: +0 = -0)"
        if not (spec["-0"] == -spec["+0"] and spec["-inf"] == -spec["+inf"]):
            bad = {"inputs": {"x": "+-0, +-inf"}, "outputs": {k: float(v) for k, v in spec.items()}, "replayed": True}
    elif kind == "monotonic":
        chain = [k for k in ("-inf", "-0", "+0", "+inf") if in_dom(k)]
        ys = [spec[k] for k in chain]
        if not all(a <= b for a, b in zip(ys, ys[1:])) or ("-0" in chain and "+0" in chain
                                                            and not spec["-0"] == spec["+0"]):
            bad = {"inputs": {"x": ", ".join(chain)}, "outputs": {k: float(spec[k]) for k in chain}, "replayed": True}
    if bad:
        res.status, res.counterexample = "refuted", bad
        return res
    region = _region_builder(dom)
    status, model, dt, reason, xs = _abstract_query(op, fmt, attrs, op.implementation, kind, timeout_ms, bounds,
                                                    region)
    res.elapsed_s = dt
    if kind == "monotonic" and status == "unsat":
        # finite inputs against the infinite ones: f(-inf) <= f(x) <= f(+inf) (those in the domain)
        lo_b = Fraction(spec["-inf"]) if in_dom("-inf") and np.isfinite(spec["-inf"]) else None
        hi_b = Fraction(spec["+inf"]) if in_dom("+inf") and np.isfinite(spec["+inf"]) else None
        if lo_b is not None or hi_b is not None:
            st2, _, dt2, _, _ = _abstract_query(op, fmt, attrs, op.implementation, "range", timeout_ms,
                                                (lo_b, hi_b), region)
            res.elapsed_s += dt2
            status = st2 if st2 != "sat" else "unknown"
    if status == "unsat":
        res.status = "proved"
        return res
    if status == "sat":
        ce = _replay_real(op, fmt, attrs, kind, model, xs, bounds)
        if ce["replayed"]:
            res.status, res.counterexample = "refuted", ce
            return res
        res.note = "the abstraction's counterexample does not replay on the code"
        if kind == "monotonic" and region is None:
            return _piecewise_monotonic(op, fmt, attrs, timeout_ms, res)
    else:
        res.note = f"z3: {reason} after {dt:.1f} s"
    return res


def _piecewise_monotonic(op, fmt, attrs, timeout_ms, res) -> PropertyResult:
    """Where one select splits the inputs: the region where its condition holds
    is an interval (proved), each piece is monotone (proved with the inputs
    kept in one piece), and the two pairs of adjacent inputs at the interval's
    ends are evaluated on the code."""
    sel = selects_on_x(op.implementation)
    if len(sel) != 1:
        return res
    (s,) = sel
    cond = s.args[0]
    then_e, else_e = force(op.implementation, {s: True}), force(op.implementation, {s: False})
    t_total = res.elapsed_s

    def in_region(flag_by_var):
        def build(m, xs):
            return [m.eval(cond, xs[k], attrs) if flag else z3.Not(m.eval(cond, xs[k], attrs))
                    for k, flag in flag_by_var.items()]
        return build
    # 1. the condition's region is an interval: x1 <= x2 <= x3, c(x1), c(x3) imply c(x2)
    m = RealModel(exact=False, inner=R64)
    (x1, c1), (x2, c2), (x3, c3) = (_real_x(n, fmt) for n in ("a", "b", "c"))
    st, _, dt, _ = solve(c1 + c2 + c3 + [x1 <= x2, x2 <= x3, m.eval(cond, x1, attrs), m.eval(cond, x3, attrs),
                                       z3.Not(m.eval(cond, x2, attrs))] + m.axioms(), timeout_ms)
    t_total += dt
    if st != "unsat":
        res.elapsed_s = t_total
        return res
    # 2. each piece is monotone
    for e, flag in ((then_e, True), (else_e, False)):
        st, _, dt, _, _ = _abstract_query(op, fmt, attrs, e, "monotonic", timeout_ms,
                                          region=in_region({"x1": flag, "x2": flag}))
        t_total += dt
        if st != "unsat":
            res.elapsed_s = t_total
            return res
    # 3. the interval's ends, found by bisection over the format's values, and their neighbours
    from ...expr.numpy_eval import eval_numpy
    a64 = {k: float(v) for k, v in attrs.items()}

    def c_at(o: int) -> bool:
        x = _from_ord(o, fmt)
        return bool(eval_numpy(cond, np.array([float(x)]), a64)[0])
    top = int(ordinal(np.array([np.inf], dtype=fmt.dtype))[0]) - 1
    inside = next((o for o in (0, 1, -1) if c_at(o)), None)
    pairs = []
    if inside is not None:
        for direction in (1, -1):
            lo, hi = inside, direction * top
            if c_at(hi):
                continue
            while abs(hi - lo) > 1:
                mid = (lo + hi) // 2
                lo, hi = (mid, hi) if c_at(mid) else (lo, mid)
            pairs.append((min(lo, hi), max(lo, hi)))
    for a, b in pairs:
        xa, xb = float(_from_ord(a, fmt)), float(_from_ord(b, fmt))
        ya, yb = _eval(op, attrs, [xa, xb], fmt)
        if not ya <= yb:
            res.status = "refuted"
            res.counterexample = {"inputs": {"x1": _point(xa, fmt), "x2": _point(xb, fmt)},
                                  "outputs": {"f(x1)": _point(float(ya), fmt), "f(x2)": _point(float(yb), fmt)},
                                  "replayed": True}
            res.elapsed_s = t_total
            return res
    res.status = "proved"
    res.method = ("z3 rounding abstraction per branch of the select on " + str(cond) +
                  " (its region proved an interval), and the adjacent inputs at the region's ends "
                  f"({', '.join(f'{float(_from_ord(a, fmt))!r}/{float(_from_ord(b, fmt))!r}' for a, b in pairs)}) "
                  "evaluated; +-0 and +-inf evaluated")
    res.note = None
    res.elapsed_s = t_total
    return res


def _from_ord(o: int, fmt):
    return from_ordinal(np.array([o]), fmt)[0]


# ---- exact points -----------------------------------------------------------------

def prove_points(op, prop, fmt, attrs) -> PropertyResult:
    t0 = time.perf_counter()
    res = PropertyResult(prop.name, prop.kind, prop.statement, "proved",
                         "evaluation of the code at each point (and at -0 for 0)")
    checked, skipped = [], []
    for p, v in prop.points:
        pq = eval_rational(p, Fraction(0), attrs)
        vq = eval_rational(v, Fraction(0), attrs)
        if Fraction(round_fraction(pq, fmt)) != pq:
            skipped.append(show(pq))
            continue
        xs = [float(pq)] + ([-0.0] if pq == 0 else [])
        for xv, y in zip(xs, _eval(op, attrs, xs, fmt)):
            checked.append(xv)
            if not y == float(round_fraction(vq, fmt)):
                res.status = "refuted"
                res.counterexample = {"inputs": {"x": _point(xv, fmt)}, "outputs": {"f(x)": _point(float(y), fmt)},
                                      "expected": show(vq), "replayed": True}
    if skipped:
        res.note = f"points not representable in {fmt.name}, not checked: {', '.join(skipped)}"
        if not checked:
            res.status = "skipped"
    res.elapsed_s = time.perf_counter() - t0
    return res


def prove_limits(op, prop, fmt, attrs, standard=None) -> PropertyResult:
    from ...spec.reference import reference_detailed
    t0 = time.perf_counter()
    x = np.array([np.inf, -np.inf], dtype=np.float64).astype(fmt.dtype)
    y = run_resolved(op, x, attrs)
    r = reference_detailed(op, x, attrs, standard).rounded
    yb, rb = np.ascontiguousarray(y).view(fmt.uint), np.ascontiguousarray(r).view(fmt.uint)
    with np.errstate(invalid="ignore"):
        both_nan = np.isnan(y.astype(np.float64)) & np.isnan(r.astype(np.float64))
    res = PropertyResult(prop.name, prop.kind, prop.statement, "proved",
                         "evaluation of the code at +inf and -inf, bit for bit against the reference's limits",
                         time.perf_counter() - t0)
    for i, k in enumerate(("+inf", "-inf")):
        if not (yb[i] == rb[i] or both_nan[i]):
            res.status = "refuted"
            res.counterexample = {"inputs": {"x": k}, "outputs": {"f(x)": _point(float(y[i].astype(np.float64)), fmt)},
                                  "reference": _point(float(r[i].astype(np.float64)), fmt), "replayed": True}
            break
    return res


def prove_enumerated(op, props, fmt, attrs, timeout_ms) -> dict:
    """Every property over every input of a 16-bit format, on the code: the same
    enumeration that checks black-box targets (verify.properties), complete; the
    bit-precise z3 model queried beside it for single-input properties."""
    from ..properties import PropertyChecker, compile_property, value_of, verdicts
    t0 = time.perf_counter()
    x = exhaustive(fmt)
    y = run_resolved(op, x, attrs)
    compiled = [compile_property(op, p, fmt, attrs) for p in props]
    checker = PropertyChecker(compiled, fmt)
    sign = 1 << (fmt.bits - 1)
    mags = np.arange(sign, dtype=np.uint64)
    from ...spec.reference import reference_detailed
    ref = reference_detailed(op, x, attrs).rounded
    inf = int(np.array([np.inf]).astype(fmt.dtype).view(fmt.uint)[0])
    rb = np.ascontiguousarray(ref).view(fmt.uint)
    checker.add_block(mags, y[:sign], y[sign:], limits=(int(rb[inf]), int(rb[inf | sign])))
    checker.finish_chains()

    def describe(blist):
        return [{"input": value_of(x[b], fmt), "output": value_of(y[b], fmt), "reference": value_of(ref[b], fmt),
                 "replayed": None} for b in blist]
    out = {}
    for r in verdicts(checker, compiled, complete=True, target="opcert", method_where="(the code)",
                      describe=describe, elapsed=time.perf_counter() - t0):
        r.method = f"every {fmt.name} input enumerated on the code (complete)"
        prop = next(p for p in props if p.name == r.name)
        if r.status == "proved" and prop.kind in ("range", "odd") and not prop.bounded_domain:
            z = prove_fp(op, prop, fmt, attrs, min(timeout_ms, CROSS_CHECK_MS))
            zs = {"proved": f"proved it in {z.elapsed_s:.1f} s", "refuted": "refuted it",
                  "unknown": f"did not finish in {min(timeout_ms, CROSS_CHECK_MS) / 1000:.0f} s"}[z.status]
            r.method += f"; z3 bit-precise floating point (binary64 operations, libm contract) {zs}"
            r.elapsed_s += z.elapsed_s
            if z.status == "refuted":
                r.status, r.counterexample = "refuted", z.counterexample
                r.note = "z3's bit-precise model found a counterexample the enumeration did not: investigate"
        out[r.name] = r
    return out


def prove_property(op, prop, fmt, attrs, timeout_ms, enumerated=None) -> PropertyResult:
    expected = "holds" if prop.holds else "fails"
    if prop.condition is not None and not eval_rational(prop.condition, Fraction(0), attrs):
        expected = "not claimed"
    if prop.spec_only:
        r = PropertyResult(prop.name, prop.kind, prop.statement, "skipped", "-",
                           note=f"{prop.kind} is a property of the real function (proved on the specification)")
    elif prop.kind == "nan_propagation":
        r = prove_nan(op, fmt, attrs)
    elif prop.kind == "limit":
        r = prove_limits(op, prop, fmt, attrs)
    elif fmt.bits <= 16:
        r = (enumerated or prove_enumerated(op, [prop], fmt, attrs, timeout_ms))[prop.name]
    elif prop.kind == "exact_point":
        r = prove_points(op, prop, fmt, attrs)
    elif prop.kind in ("range", "monotonic", "odd", "constant"):
        r = prove_abstract(op, prop, fmt, attrs, timeout_ms)
    else:
        r = PropertyResult(prop.name, prop.kind, prop.statement, "unknown", "-",
                           note=f"no implementation-level method for {prop.kind} in {fmt.name} yet")
    r.expected = expected
    return r
