"""The declared properties, checked on any target's outputs (black box).

Inputs are taken by magnitude: an ascending array of non-negative bit patterns
(every one of a 16-bit format, a block of binary32 ones, or the magnitudes of
a symmetric sample), with the target's outputs at +m and at -m. Then:

- monotonicity runs over adjacent inputs in value order: the positive side
  ascends with the magnitude and the negative side descends, and the two meet
  at zero, where -0 and +0 are one point (their outputs must be equal as
  values); blocks and chunks carry their ends, so no boundary pair is missed;
  a non-increasing property (`decreasing`) turns every comparison, and its
  violations are the pairs x1 < x2 with f(x1) < f(x2);
- oddness compares f(-x) with -f(x) for every pair (x, -x), evenness f(-x) with
  f(x), bit for bit (or as values where the catalog says zero signs are exempt);
- ranges, constant regions (dead zones, saturation), NaN propagation, exact
  points and the limits at +-inf are checked at every input they concern.

Over every input of a format the verdict is a proof for that target (on that
machine and library version): `proved` or `refuted`. Over samples it is
`checked` or `refuted`. Each refutation counts the violating inputs (or
pairs) and names the first (in input bit order) and the worst (largest excess
over a bound, largest step backwards), with outputs and the correctly rounded
reference, replayed on the target before it is reported.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from opcert.formats import FloatFormat, from_bits, hex_bits, round_fraction
from opcert.numerics.exact import eval_rational
from opcert.verify.properties import kernels
from opcert.verify.result import PropertyResult
from opcert.verify.ulp import ulp_of

VALUE_KINDS = {"range": 0, "constant": 1, "nan_propagation": 2}  # kernels.scan_values' kinds


def _bound(v, default: float) -> float:
    return default if v is None else float(v)


def _native(a: np.ndarray) -> np.ndarray:
    """binary32 and binary64 as they are (exact comparisons either way); the
    16-bit formats, which numba does not know, widened to binary64 (exactly)."""
    return a if a.dtype in (np.float32, np.float64) else a.astype(np.float64)


def _find(ascending: np.ndarray, b: int) -> int | None:
    i = int(np.searchsorted(ascending, ascending.dtype.type(b)))
    return i if i < ascending.size and int(ascending[i]) == b else None


# ---- a property in one format, at given attributes -----------------------------------


@dataclass
class Compiled:
    prop: object
    skip: str | None = None  # why it is not checked (not claimed, not representable, ...)
    expected: str = "holds"
    dom_lo: float | None = None  # x >= dom_lo (a value of the format), None: unbounded
    dom_hi: float | None = None
    lower: float | None = None  # range bounds, rounded to the format
    upper: float | None = None
    value: float | None = None  # constant regions
    center: float | None = None  # point symmetry
    points: list = field(default_factory=list)  # [(x, expected value)] exact points, representable
    statement: str = ""

    @property
    def name(self) -> str:
        return self.prop.name

    @property
    def kind(self) -> str:
        return self.prop.kind


def _q(e, attrs) -> Fraction:
    return eval_rational(e, Fraction(0), attrs)


def _fmt_num(v: float) -> str:
    return repr(float(v))


def compile_property(op, prop, fmt: FloatFormat, attrs: dict[str, Fraction], standard: str) -> Compiled:
    c = Compiled(prop, statement=prop.statement)
    if not prop.holds:
        c.expected = "fails"
    why_not = prop.not_claimed(attrs, standard)
    if why_not is not None:
        c.skip = f"not claimed: {why_not}"
        c.expected = "not claimed"
        return c
    if prop.spec_only:
        c.skip = "a property of the exact definition (proved by `opcert prove`), not of a float kernel"
        return c
    lo, hi = prop.domain
    if lo is not None:
        c.dom_lo = round_fraction(_q(lo, attrs), fmt, mode="up")
    if hi is not None:
        c.dom_hi = round_fraction(_q(hi, attrs), fmt, mode="down")
    where = ""
    if lo is not None or hi is not None:
        where = (
            f" for x in [{_fmt_num(c.dom_lo) if lo is not None else '-inf'}, "
            f"{_fmt_num(c.dom_hi) if hi is not None else 'inf'}]"
        )
    if prop.kind == "range":
        if prop.lower is not None:
            c.lower = round_fraction(_q(prop.lower, attrs), fmt)
        if prop.upper is not None:
            c.upper = round_fraction(_q(prop.upper, attrs), fmt)
        c.statement += (
            f" (in {fmt.name}: f(x) in [{_fmt_num(c.lower) if c.lower is not None else '-inf'}, "
            f"{_fmt_num(c.upper) if c.upper is not None else 'inf'}]{where}, bounds rounded to nearest)"
        )
    elif prop.kind == "constant":
        c.value = round_fraction(_q(prop.value, attrs), fmt)
        c.statement += f" (in {fmt.name}: f(x) = {_fmt_num(c.value)}{where})"
    elif prop.kind == "point_symmetry":
        c.center = float(_q(prop.center, attrs))
        c.statement += f" (in {fmt.name}: within half an ULP of each output)"
    elif prop.kind == "monotonic":
        c.statement += f" (in {fmt.name}: every adjacent pair of inputs{where}; -0 and +0 are one point)"
    elif prop.kind in ("odd", "even"):
        c.statement += " (bit for bit)" if prop.zero_sign else " (as values)"
    elif prop.kind == "exact_point":
        skipped = []
        for p, v in prop.points:
            pq, vq = _q(p, attrs), _q(v, attrs)
            rounded = round_fraction(pq, fmt)  # beyond the format's range (Clip's max 3.4e38 in float16): +-inf
            if not math.isfinite(rounded) or Fraction(rounded) != pq:
                skipped.append(repr(float(pq)))
                continue
            c.points.append((float(pq), round_fraction(vq, fmt)))
            if pq == 0:
                c.points.append((-0.0, round_fraction(vq, fmt)))
        if not c.points:
            c.skip = f"its points ({', '.join(skipped)}) are not values of {fmt.name}"
    return c


def compile_all(op, fmt, attrs, standard, names=None) -> list[Compiled]:
    # kernel-only properties (layout) are not decided from one array of outputs: verify.paths.layout runs them
    props = [p for p in op.properties if (names is None or p.name in names) and not p.kernel_only]
    return [compile_property(op, p, fmt, attrs, standard) for p in props]


# ---- accumulation -----------------------------------------------------------------------


@dataclass
class Acc:
    """Counts of one property over some inputs; mergeable (sweep chunks)."""

    evaluated: int = 0
    violations: int = 0
    first: list | None = None  # [key, [input bits...]]: smallest key in input bit order
    worst: list | None = None  # [magnitude, key, [input bits...]]

    def add(self, evaluated: int, mask: np.ndarray, keys: np.ndarray, inputs: list, magnitude: np.ndarray):
        """mask over candidate elements; inputs: a list of arrays (one per input of a violation)."""
        self.evaluated += int(evaluated)
        idx = np.nonzero(mask)[0]
        if not idx.size:
            return
        self.violations += int(idx.size)
        k = keys[idx]
        i = int(idx[np.argmin(k)])
        cand = [int(keys[i]), [int(a[i]) for a in inputs]]
        if self.first is None or cand[0] < self.first[0]:
            self.first = cand
        mag = np.where(np.isnan(magnitude[idx]), np.inf, magnitude[idx])
        best = np.max(mag)
        j = int(idx[np.nonzero(mag == best)[0][np.argmin(k[mag == best])]])
        cand = [float(best), int(keys[j]), [int(a[j]) for a in inputs]]
        if self.worst is None or (cand[0], -cand[1]) > (self.worst[0], -self.worst[1]):
            self.worst = cand

    def take(self, st: np.ndarray, wmag: np.ndarray, pairs: bool = False) -> None:
        """Add the state of a compiled scan (verify.properties.kernels); pairs:
        its violations have two inputs."""

        def inputs(a, b):
            return [int(a), int(b)] if pairs else [int(a)]

        K = kernels
        if not st[K.VIOLATIONS]:  # nearly every block
            self.evaluated += int(st[K.EVALUATED])
            return
        o = Acc(int(st[K.EVALUATED]), int(st[K.VIOLATIONS]))
        if o.violations:
            o.first = [int(st[K.FIRST_KEY]), inputs(st[K.FIRST_A], st[K.FIRST_B])]
            o.worst = [float(wmag[0]), int(st[K.WORST_KEY]), inputs(st[K.WORST_A], st[K.WORST_B])]
        self.merge(o)

    def merge(self, o: Acc) -> Acc:
        self.evaluated += o.evaluated
        self.violations += o.violations
        if o.first is not None and (self.first is None or o.first[0] < self.first[0]):
            self.first = o.first
        if o.worst is not None and (self.worst is None or (o.worst[0], -o.worst[1]) > (self.worst[0], -self.worst[1])):
            self.worst = o.worst
        return self

    def to_json(self) -> dict:
        return {"evaluated": self.evaluated, "violations": self.violations, "first": self.first, "worst": self.worst}

    @classmethod
    def from_json(cls, d: dict) -> Acc:
        return cls(int(d["evaluated"]), int(d["violations"]), d["first"], d["worst"])


class PropertyChecker:
    """Accumulates every compiled property over blocks of magnitudes (see the module doc)."""

    def __init__(self, compiled: list[Compiled], fmt: FloatFormat):
        self.fmt = fmt
        self.compiled = [c for c in compiled if c.skip is None]
        self.acc = {c.name: Acc() for c in self.compiled}
        self.sign = 1 << (fmt.bits - 1)
        self.inf_bits = int(np.array([np.inf]).astype(fmt.dtype).view(fmt.uint)[0])
        # monotonic chains: per property and side, the first and the last valid (mag, y bits)
        self.ends = {c.name: {"pos": [None, None], "neg": [None, None]} for c in self.compiled if c.kind == "monotonic"}
        self.decreasing = {c.name: bool(c.prop.decreasing) for c in self.compiled if c.kind == "monotonic"}
        self.limit_expect = None
        self._points: dict[str, list[int]] = {}
        self.bounds = {
            c.name: kernels.Bounds(
                _bound(c.dom_lo, -np.inf),
                _bound(c.dom_hi, np.inf),
                _bound(c.lower, -np.inf),
                _bound(c.upper, np.inf),
                0.0 if c.value is None else float(c.value),
            )
            for c in self.compiled
        }

    # -- values ---------------------------------------------------------------------
    def _y1(self, bits: int) -> float:
        """One output's value from its bits (as _y, without the arrays)."""
        return float(self.fmt.uint.type(bits).view(self.fmt.dtype))

    def _y(self, bits) -> np.ndarray:
        with np.errstate(invalid="ignore"):
            return from_bits(np.asarray(bits, dtype=np.uint64).astype(self.fmt.uint), self.fmt).astype(np.float64)

    def add_block(self, mags: np.ndarray, yp: np.ndarray, yn: np.ndarray, limits=None, negb=None) -> None:
        """mags: ascending magnitudes, each once (bit patterns without the sign: the scans find a property's
        domain in each side by bisection, kernels._domain); yp, yn: the
        target's outputs at +m and -m (arrays of the format). limits: the
        correctly rounded outputs at (+inf, -inf), as bit patterns. negb: the bit
        patterns of -m where the caller has them (the float32 sweep: two passes saved)."""
        # a sweep calls this 512 times per chunk: the bit patterns stay in the format's own width (no
        # copies to uint64 and back), and the per-call Python is kept small (bench/chunk_stages.py)
        fmt = self.fmt
        mags = np.asarray(mags, dtype=fmt.uint)
        yp, yn = np.ascontiguousarray(yp), np.ascontiguousarray(yn)
        with np.errstate(invalid="ignore"):
            xp = _native(from_bits(mags, fmt))
            yp64, yn64 = _native(yp), _native(yn)
        ybp, ybn = yp.view(fmt.uint), yn.view(fmt.uint)
        if negb is None:
            negb = mags | fmt.uint.type(self.sign)
            xn = -xp
        else:
            with np.errstate(invalid="ignore"):
                xn = _native(from_bits(negb, fmt))  # -m's bits: -xp, NaN payloads and all
        pos, neg = kernels.Side(mags, xp, yp64, ybp), kernels.Side(negb, xn, yn64, ybn)
        # the magnitudes ascend: a block whose last is at most infinity's has no NaN input, and the NaN
        # property evaluates nothing there (two passes saved in all but the last chunk of a sweep)
        no_nan = not mags.size or int(mags[-1]) <= self.inf_bits
        first, last = (int(mags[0]), int(mags[-1])) if mags.size else (1, 0)
        for c in self.compiled:
            acc, k = self.acc[c.name], c.kind
            if k == "nan_propagation" and no_nan:
                continue
            if k in VALUE_KINDS:
                st, wmag = kernels.new_state()
                for side in (pos, neg):
                    kernels.scan_values(VALUE_KINDS[k], side, self.bounds[c.name], st, wmag)
                acc.take(st, wmag)
            elif k in ("odd", "even"):
                st, wmag = kernels.new_state()
                odd = k == "odd"
                sign, mirror = fmt.uint.type(self.sign if odd else 0), -1.0 if odd else 1.0
                kernels.scan_parity(pos, neg, sign, mirror, bool(c.prop.zero_sign), st, wmag)
                acc.take(st, wmag, pairs=True)
            elif k == "point_symmetry":
                # one compiled pass; the pairs at the tolerance's edge decided exactly here, as
                # symmetry_violations decides them
                st, wmag = kernels.new_state()
                close = np.empty(mags.size, np.intp)
                nclose = kernels.scan_symmetry(pos, neg, float(c.center), fmt.emin, fmt.p, st, wmag, close)
                acc.take(st, wmag, pairs=True)
                if nclose:
                    i = close[:nclose]
                    bad, excess = symmetry_violations(yp64[i], yn64[i], c.center, fmt)
                    acc.add(0, bad, mags[i], [mags[i], negb[i]], excess)
            elif k == "monotonic":
                self._monotonic(c, pos, neg)
            elif k == "exact_point":
                for (p, v), pb in zip(c.points, self._point_bits(c)):
                    i = _find(mags, pb) if first <= pb <= last else None
                    if i is None:
                        continue
                    below = p < 0 or (p == 0 and np.signbit(p))
                    y = yn64[i] if below else yp64[i]
                    xb = np.array([negb[i] if below else mags[i]], dtype=np.uint64)
                    acc.add(1, np.array([not (y == v)]), xb, [xb], np.array([abs(y - v)]))
            elif k == "limit":
                i = _find(mags, self.inf_bits) if first <= self.inf_bits <= last else None
                if i is not None and limits is not None:
                    for side, (xb, yb) in enumerate(((mags[i], ybp[i]), (negb[i], ybn[i]))):
                        want = limits[side]
                        got_nan = bool(np.isnan(self._y([yb])[0]))
                        want_nan = bool(np.isnan(self._y([want])[0]))
                        bad = not (got_nan and want_nan) and int(yb) != int(want)
                        arr = np.array([xb], dtype=np.uint64)
                        acc.add(1, np.array([bad]), arr, [arr], np.array([np.inf]))

    def _point_bits(self, c) -> list[int]:
        """The magnitude bits of each of c's exact points (computed once)."""
        got = self._points.get(c.name)
        if got is None:
            fmt = self.fmt
            got = self._points[c.name] = [
                int(np.array([abs(p)]).astype(fmt.dtype).view(fmt.uint)[0]) for p, _ in c.points
            ]
        return got

    def _monotonic(self, c, pos: kernels.Side, neg: kernels.Side):
        acc, ends = self.acc[c.name], self.ends[c.name]
        st, wmag = kernels.new_state()
        for side, arrays in (("pos", pos), ("neg", neg)):
            prev = ends[side][1]
            got = np.zeros(5, np.uint64)
            chain = (
                kernels.Chain(True, np.uint64(prev[0]), self._y1(prev[1]))
                if prev
                else kernels.Chain(False, np.uint64(0), 0.0)
            )
            kernels.scan_monotonic(
                arrays, self.bounds[c.name], side == "neg", self.decreasing[c.name], chain, st, wmag, got
            )
            if got[0]:
                if ends[side][0] is None:
                    ends[side][0] = (int(got[1]), int(got[2]))
                ends[side][1] = (int(got[3]), int(got[4]))
        acc.take(st, wmag, pairs=True)

    # -- what the results name ------------------------------------------------------------
    def chain_ends(self) -> dict[int, int]:
        """{input bits: output bits} of the monotonic chains' ends (they pair across blocks and chunks)."""
        return {e[0]: e[1] for d in self.ends.values() for side in d.values() for e in side if e}

    def violations(self) -> tuple:
        return tuple(a.violations for a in self.acc.values())

    def named_inputs(self) -> set[int]:
        """The input bits of every counterexample held (first and worst of each property)."""
        out = set()
        for a in self.acc.values():
            if a.first:
                out.update(int(b) for b in a.first[1])
            if a.worst:
                out.update(int(b) for b in a.worst[2])
        return out

    # -- sweep chunks -------------------------------------------------------------------
    def to_json(self) -> dict:
        return {
            "acc": {n: a.to_json() for n, a in self.acc.items()},
            "ends": {n: {s: [list(e) if e else None for e in v] for s, v in d.items()} for n, d in self.ends.items()},
        }

    def merge_chunks(self, chunks: list[dict]) -> None:
        """Merge chunk states given in ascending magnitude order, checking the
        monotonic pairs across every chunk boundary."""
        for ch in chunks:
            for n, a in ch["acc"].items():
                if n in self.acc:
                    self.acc[n].merge(Acc.from_json(a))
            for n, sides in ch["ends"].items():
                if n not in self.ends:
                    continue
                for side in ("pos", "neg"):
                    first, last = sides[side]
                    if first is None:
                        continue
                    prev = self.ends[n][side][1]
                    if prev is not None:
                        (pb, py), (fb, fy) = prev, first
                        ya, yb = self._y([py])[0], self._y([fy])[0]
                        left, right = (ya, yb) if side == "pos" else (yb, ya)  # f(x1), f(x2): x1 < x2
                        lb, rb = (pb, fb) if side == "pos" else (fb, pb)
                        arr = [np.array([lb], dtype=np.uint64), np.array([rb], dtype=np.uint64)]
                        down = self.decreasing[n]
                        with np.errstate(invalid="ignore"):  # inf - inf where both ends overflow: no violation
                            gap = right - left if down else left - right
                        self.acc[n].add(
                            1,
                            np.array([not (left >= right if down else left <= right)]),
                            np.array([min(lb, rb)], dtype=np.uint64),
                            arr,
                            np.array([gap]),
                        )
                    if self.ends[n][side][0] is None:
                        self.ends[n][side][0] = tuple(first)
                    self.ends[n][side][1] = tuple(last)

    def finish_chains(self) -> None:
        """The pair where the negative and the positive sides meet (at zero)."""
        for n, sides in self.ends.items():
            (pf, _), (nf, _) = sides["pos"], sides["neg"]
            if pf is None or nf is None:
                continue
            pb, py = pf
            nb, ny = nf
            yp, yn = self._y([py])[0], self._y([ny])[0]
            if pb == 0 and (nb & ~self.sign) == 0:
                bad = not (yn == yp)  # -0 and +0 are one point
                with np.errstate(invalid="ignore"):  # log(-0) - log(+0) = -inf - -inf
                    gap = yn - yp
                mag = abs(gap) if not np.isnan(gap) else np.inf
            elif self.decreasing[n]:
                bad = not (yn >= yp)
                mag = yp - yn
            else:
                bad = not (yn <= yp)
                mag = yn - yp
            arr = [np.array([nb], dtype=np.uint64), np.array([pb], dtype=np.uint64)]
            self.acc[n].add(1, np.array([bad]), np.array([pb], dtype=np.uint64), arr, np.array([mag]))


def symmetry_violations(yp, yn, center, fmt):
    """|f(x) + f(-x) - center| <= (ulp(f(x)) + ulp(f(-x))) / 2, decided exactly where close: (bad, excess
    |f(x) + f(-x) - center| - tol), each of yp's shape. The binary64 pass is compiled
    (property_kernels.symmetry_pass; tests/test_properties.py checks it against rational arithmetic)."""
    a = np.ascontiguousarray(yp, dtype=np.float64).reshape(-1)
    b = np.ascontiguousarray(yn, dtype=np.float64).reshape(-1)
    bad, excess, close = np.empty(a.size, np.bool_), np.empty(a.size), np.empty(a.size, np.bool_)
    kernels.symmetry_pass(a, b, float(center), fmt.emin, fmt.p, bad, excess, close)
    for i in np.nonzero(close)[0]:
        ta = Fraction(float(ulp_of(a[i : i + 1], fmt)[0])) + Fraction(float(ulp_of(b[i : i + 1], fmt)[0]))
        bad[i] = abs(Fraction(float(a[i])) + Fraction(float(b[i])) - Fraction(center)) > ta / 2
    shape = np.shape(yp)
    return bad.reshape(shape), excess.reshape(shape)


# ---- verdicts ---------------------------------------------------------------------------


def verdicts(
    checker: PropertyChecker,
    compiled: list[Compiled],
    *,
    complete: bool,
    target: str,
    method_where: str,
    describe,
    elapsed: float = 0.0,
) -> list[PropertyResult]:
    """PropertyResults from the accumulated counts. describe(input bits list) ->
    dict with each input's value, bits, output, reference and replayed output."""
    out = []
    for c in compiled:
        base = PropertyResult(c.name, c.kind, c.statement, "skipped", "-", expected=c.expected)
        if c.skip is not None:
            base.note = c.skip
            out.append(base)
            continue
        acc = checker.acc[c.name]
        base.inputs_checked, base.violations = acc.evaluated, acc.violations
        unit = "pairs of inputs" if c.kind in ("monotonic", "odd", "even", "point_symmetry") else "inputs"
        if complete:
            base.method = f"every input enumerated on target {target} {method_where}: {acc.evaluated:,} {unit}"
        else:
            base.method = f"sampled on target {target} {method_where}: {acc.evaluated:,} {unit} (evidence, not a proof)"
        base.elapsed_s = elapsed
        if acc.violations:
            base.status = "refuted"
            base.counterexample = _counterexample(acc.first[1], describe, c, first=True)
            base.counterexample["violations"] = acc.violations
            base.worst = _counterexample(acc.worst[2], describe, c, first=False)
            base.worst["magnitude"] = acc.worst[0]
        elif acc.evaluated == 0:
            base.status = "proved" if complete else "checked"
            base.note = f"vacuous: no input of {checker.fmt.name} falls where the property applies"
        else:
            base.status = "proved" if complete else "checked"
        out.append(base)
    return out


def _counterexample(bits: list, describe, c: Compiled, first: bool) -> dict:
    d = describe(bits)
    labels = ("x1", "x2") if c.kind == "monotonic" else ("x", "-x") if len(bits) == 2 else ("x",)
    ce = {"which": "first" if first else "worst", "inputs": {}, "outputs": {}, "reference": {}}
    replayed = True
    for label, item in zip(labels, d):
        ce["inputs"][label] = item["input"]
        ce["outputs"][f"f({label})"] = item["output"]
        ce["reference"][f"f({label})"] = item["reference"]
        if item.get("replayed") is not None and item["replayed"]["bits"] != item["output"]["bits"]:
            replayed = False
            ce.setdefault("replay", {})[f"f({label})"] = item["replayed"]
    ce["replayed"] = replayed
    if not replayed:
        ce["note"] = "the target returned a different output when run again on the same block: not reproducible"
    return ce


def value_of(v, fmt) -> dict:
    with np.errstate(invalid="ignore"):
        f = float(np.asarray(v).astype(np.float64)) if fmt.kind == "float" else int(v)
    return {"value": f if f == f else "nan", "bits": hex_bits(v, fmt)}
