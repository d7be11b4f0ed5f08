"""Every row of two 16-bit values: all 2^32 pairs (a, b), through the target, against the reference.

A pair's exact outputs depend on d = a - b alone (exact in binary64): Softmax is (sigmoid(d), sigmoid(-d)),
LogSoftmax (-softplus(-d), -softplus(d)), Hardmax (a >= b, b > a). The reference of a pair is the
element-wise machinery's on d: the binary64 ball of Sigmoid's or Softplus' reference form (spec.ball),
decided to the format, and Arb where the ball cannot decide. Pairs holding NaN or +-inf take the rule of
spec.tensor.limit_row, which makes them depend only on where the infinities are.

The pairs go to the target in blocks of 64 values of b, each with every a in increasing order: one call
per block, rows [a, b] (the last axis reduced). In the same pass, over every pair: the range, the row
sum, monotonicity in a (y_0 non-decreasing, y_1 non-increasing as a increases, b fixed), the NaN rule and
the rule for infinite entries (bit for bit), Hardmax's one-hot row. Shift and permutation invariance
follow from the accuracy where every output is within the allowed error of an exact value that depends
on a - b alone; where some output is not, they are left undecided here (said so).
"""
from __future__ import annotations

import math
import time

import numpy as np

from ..expr import var
from ..formats import to_format
from .proofs.result import PropertyResult
from .row_calls import exp_moved, ordinals, ulp_distance

BLOCK = 64        # values of b per call: 4 million pairs


def _all_values(fmt) -> np.ndarray:
    """Every bit pattern of the 16-bit format, numbers in increasing order (-0 before +0), NaNs last."""
    bits = np.arange(1 << 16, dtype=np.uint16)
    v = bits.view(fmt.dtype)
    with np.errstate(invalid="ignore"):
        o = ordinals(v, fmt).astype(np.float64) * 2 + np.signbit(v.astype(np.float64)) * -1
    return v[np.argsort(o, kind="stable")]


def _forms(op):
    """The expression of output 0 of a pair as a function of d = a - b (an element-wise reference form): the
    exact path's, where the fast one below cannot decide."""
    x = var("x")
    if op.name == "Softmax":
        from ..spec.declarations import sigmoid_stable
        return sigmoid_stable(x)
    from ..spec.ops.softplus import stable
    return -stable(-x)


def _fast(op, d: np.ndarray, fmt):
    """(value, decided) of output 0 at the exact differences d, in binary64 under the primitives' own
    contracts (expr.primitives: exp and log1p within k ULPs): Softmax sigmoid(d) = 1 / (1 + e^-d) for
    d >= 0, e^d / (1 + e^d) below, relative error at most (2 k_exp + 4) 2^-53; LogSoftmax
    -log1p(e^-d) for d >= 0 and d - log1p(e^d) below, at most (2 k_exp + 2 k_log1p + 4) 2^-53. A value
    whose interval of that width rounds to one value of fmt is decided. Beyond the thresholds the rounded
    value is known outright: sigmoid(d) < 2^(emin - p) (half the smallest subnormal) where
    d <= (emin - p) ln 2, 1 - sigmoid(d) < 2^-(p + 1) where d >= (p + 1) ln 2 + 1/2 (it rounds to 1);
    LogSoftmax -log1p(e^-d) > -2^(emin - p) there (a negative zero)."""
    from ..expr.primitives import REGISTRY
    ke, kl = REGISTRY["exp"].ulps, REGISTRY["log1p"].ulps
    lo_t, hi_t = (fmt.emin - fmt.p) * math.log(2), (fmt.p + 1) * math.log(2) + 0.5
    with np.errstate(all="ignore"):
        if op.name == "Softmax":
            e = np.exp(-np.abs(d))
            v = np.where(d >= 0, 1 / (1 + e), e / (1 + e))
            rel = (2 * ke + 4) * 2.0 ** -53
            known = np.where(d <= lo_t, 0.0, np.where(d >= hi_t, 1.0, np.nan))
        else:
            v = np.where(d >= 0, -np.log1p(np.exp(-d)), d - np.log1p(np.exp(d)))
            rel = (2 * ke + 2 * kl + 4) * 2.0 ** -53
            known = np.where(d >= -lo_t + 1, -0.0, np.nan)
        a, b = np.nextafter(v * (1 - rel), -np.inf), np.nextafter(v * (1 + rel), np.inf)
        ra, rb = to_format(np.minimum(a, b), fmt), to_format(np.maximum(a, b), fmt)
    bits = fmt.uint
    decided = (ra.view(bits) == rb.view(bits)) & np.isfinite(v)
    value = ra.astype(np.float64)
    have = ~np.isnan(known)
    value = np.where(have, known, value)
    return value, decided | have, v


def _reference_of_d(op, d: np.ndarray, fmt):
    """(rounded, exact midpoint) of output 0 at differences d (finite binary64 values)."""
    from fractions import Fraction
    from ..formats import round_fraction
    from ..spec.exact import evaluate
    from ..spec.tensor import round_just_below
    if op.name == "Hardmax":     # the first element wins ties
        v = (d >= 0).astype(np.float64)
        return v, v
    val, decided, mid = _fast(op, d, fmt)
    if not decided.all():
        form = _forms(op)
        for i in np.nonzero(~decided)[0]:
            q = Fraction(float(d[i]))
            if op.below_shift and d[i] <= -800:
                # d - ln(1 + e^d): the second term is below 2^-1154, no enclosure resolves it, and it is
                # below any distance from d (a binary64 value above 2^9) to a rounding boundary of fmt
                val[i] = mid[i] = round_just_below(q, fmt)
                continue
            try:
                e = evaluate(form, q, {}, fmt)
            except RuntimeError:
                if not op.below_shift:
                    raise
                # d - ln(1 + e^d), the second term beyond any enclosure (TensorOperator.below_shift)
                val[i] = mid[i] = round_just_below(q, fmt)
                continue
            q = e.mid if e.is_rational else e.lo
            val[i] = round_fraction(q, fmt, negative_zero=q < 0)
            mid[i] = float(e.mid)
    return val, mid


def _special_table(op, fmt) -> dict:
    """The declared outputs of pairs with infinite entries, by where the infinities are (spec.tensor)."""
    from ..spec.row_reference import reference_rows
    inf = np.inf
    kinds = {("+", "+"): (inf, inf), ("+", "f"): (inf, 0.0), ("f", "+"): (0.0, inf), ("-", "-"): (-inf, -inf),
             ("-", "f"): (-inf, 0.0), ("f", "-"): (0.0, -inf), ("+", "-"): (inf, -inf), ("-", "+"): (-inf, inf)}
    rows = np.array(list(kinds.values()))
    vals = reference_rows(op, rows, fmt)[0]
    return {k: vals[i] for i, k in enumerate(kinds)}


def _kind(v):
    return np.where(np.isposinf(v), 1, np.where(np.isneginf(v), -1, 0))


class PairSweep:
    def __init__(self, op, fmt, call, max_ulp: float, progress=None, values=None):
        """values: the 16-bit values to pair (default every bit pattern; the tests give a subset, in
        increasing order, NaNs last)."""
        self.op, self.fmt, self.call, self.max_ulp = op, fmt, call, max_ulp
        self.progress = progress or (lambda done, total: None)
        self.a = _all_values(fmt) if values is None else values
        self.table = _special_table(op, fmt)
        self.pairs = 0
        self.max_err = 0.0
        self.worst = None
        self.correctly_rounded = 0
        self.special_wrong = 0
        self.special_example = None
        self.flushes = 0
        self.zero_sign = 0
        self.viol = {}         # property kind -> [count, first example]
        self.checked = {}
        self.elapsed = 0.0

    def _note(self, kind, n_checked, bad_mask, example):
        c = self.viol.setdefault(kind, [0, None])
        self.checked[kind] = self.checked.get(kind, 0) + int(n_checked)
        k = int(np.count_nonzero(bad_mask))
        if k:
            c[0] += k
            if c[1] is None:
                c[1] = example(int(np.flatnonzero(bad_mask)[0]))

    def run(self) -> None:
        t0 = time.perf_counter()
        b_all = self.a
        n = b_all.size
        for start in range(0, n, BLOCK):
            self._block(b_all[start:start + BLOCK])
            self.progress(min(n, start + BLOCK), n)
        self.elapsed = time.perf_counter() - t0
        self.replay()

    def _make(self, bs) -> np.ndarray:
        X = np.empty((bs.size * self.a.size, 2), dtype=self.fmt.dtype)
        X[:, 0] = np.tile(self.a, bs.size)
        X[:, 1] = np.repeat(bs, self.a.size)
        return X

    def replay(self) -> None:
        """The worst element and the first special example, from the same call made again: the same bits, or
        the result says it was not reproduced."""
        for ex in (self.worst, self.special_example):
            if ex is None:
                continue
            bs, k = ex.pop("_block")
            Y = self.call(self._make(bs))
            ex["replayed"] = bool(np.all(Y[k // 2].view(self.fmt.uint) == np.asarray(
                ex["got"]).astype(self.fmt.dtype).view(self.fmt.uint)))

    def _block(self, bs) -> None:
        fmt, op = self.fmt, self.op
        na = self.a.size
        X = self._make(bs)
        self._bs = bs
        Y = self.call(X)
        self.pairs += X.shape[0]
        with np.errstate(invalid="ignore"):
            x64 = X.astype(np.float64)
            y64 = Y.astype(np.float64)
        want = np.full(X.shape, np.nan)
        mid = np.full(X.shape, np.nan)
        finite = np.isfinite(x64).all(axis=1)
        nan = np.isnan(x64).any(axis=1)
        d = x64[finite, 0] - x64[finite, 1]
        v0, m0 = _reference_of_d(op, d, fmt)
        v1, m1 = _reference_of_d(op, -d, fmt) if op.name != "Hardmax" else (1.0 - v0, 1.0 - v0)
        want[finite, 0], want[finite, 1], mid[finite, 0], mid[finite, 1] = v0, v1, m0, m1
        inf_rows = ~finite & ~nan
        if inf_rows.any():
            ka, kb = _kind(x64[inf_rows, 0]), _kind(x64[inf_rows, 1])
            vals = self._table_lookup(ka, kb)
            want[inf_rows] = vals
            mid[inf_rows] = vals
        self._compare(X, x64, Y, y64, want, mid, finite, nan, inf_rows)
        self._properties(X, x64, Y, y64, want, mid, finite, nan, inf_rows, bs.size, na)

    def _table_lookup(self, ka, kb):
        sym = {1: "+", -1: "-", 0: "f"}
        out = np.empty((ka.size, 2))
        for p in (1, -1, 0):
            for q in (1, -1, 0):
                sel = (ka == p) & (kb == q)
                if sel.any():
                    out[sel] = self.table[(sym[p], sym[q])]
        return out

    def _example(self, X, Y, want, i):
        fmt = self.fmt
        row = X[i // 2] if X.ndim == 2 else X[i]
        return {"row": [float(v) for v in np.asarray(row, dtype=np.float64)],
                "row_bits": [f"0x{int(b):04x}" for b in np.asarray(row).view(fmt.uint)],
                "got": [float(v) for v in np.asarray(Y[i // 2], dtype=np.float64)],
                "want": [float(v) for v in np.asarray(want[i // 2], dtype=np.float64)]}

    def _compare(self, X, x64, Y, y64, want, mid, finite, nan, inf_rows):
        from .ulp import ulp_error
        fmt = self.fmt
        w16 = to_format(want, fmt)
        same = (Y.view(fmt.uint) == w16.view(fmt.uint)) | (np.isnan(y64) & np.isnan(want))
        special = ~finite[:, None] | ~np.isfinite(y64) | ~np.isfinite(want)
        wrong = special & ~same
        if wrong.any():
            self.special_wrong += int(wrong.sum())
            if self.special_example is None:
                i = int(np.flatnonzero(wrong)[0])
                self.special_example = {**self._example(X, Y, want, i), "_block": (self._bs, i)}
        flushed = ~special & (y64 == 0) & (want != 0) & (np.abs(want) < 2.0 ** fmt.emin)
        self.flushes += int(flushed.sum())
        self.zero_sign += int(np.sum(~special & (y64 == 0) & (want == 0) & (np.signbit(y64) != np.signbit(want))))
        with np.errstate(all="ignore"):
            err = ulp_error(y64, mid, np.zeros_like(mid), fmt)
        err = np.where(special | flushed, np.nan, err)
        self.correctly_rounded += int(np.sum(~special & ~flushed & (err <= 0.5))) + int(np.sum(special & same))
        if np.any(~np.isnan(err)):
            k = int(np.nanargmax(err))
            e = float(err.flat[k])
            if self.worst is None or e > self.max_err:
                self.max_err = max(self.max_err, e)
                self.worst = {**self._example(X, Y, want, k), "position": k % 2, "ulp": e, "_block": (self._bs, k)}

    def _properties(self, X, x64, Y, y64, want, mid, finite, nan, inf_rows, nb, na):
        op, fmt = self.op, self.fmt
        ex = (lambda i: self._example(X, Y, want, 2 * i))
        kinds = {p.kind: p for p in op.properties}
        if "range" in kinds:
            p = kinds["range"]
            bad = finite[:, None] & (np.isnan(y64) | ((y64 < p.lower) if p.lower is not None else False)
                                     | ((y64 > p.upper) if p.upper is not None else False))
            self._note("range", finite.sum() * 2, bad.any(axis=1), ex)
        if "row_sum" in kinds:
            p = kinds["row_sum"]
            u, tiny = 2.0 ** (1 - fmt.p), 2.0 ** (fmt.emin - fmt.p + 1)
            yf = y64[finite]
            if p.sum_of == "y":
                gap = np.abs(yf[:, 0] + yf[:, 1] - 1)        # exact: 16-bit values add exactly in binary64
                bound = self.max_ulp * u + 2 * self.max_ulp * tiny
            else:
                e = np.exp(yf.astype(np.longdouble))
                gap = np.abs((e[:, 0] + e[:, 1] - 1).astype(np.float64))
                t = mid[finite]
                ulp_t = np.ldexp(1.0, np.maximum(np.frexp(np.abs(t))[1] - 1, fmt.emin) - fmt.p + 1)
                bound = np.sum(exp_moved(t, self.max_ulp * ulp_t), axis=1) * 1.001 + 2.0 ** -61
            bad = np.zeros(finite.size, dtype=bool)
            bad[finite] = ~(gap <= bound)
            self._note("row_sum", finite.sum(), bad, ex)
        if "row_monotonic" in kinds:
            # b fixed within each run of na rows, a increasing (NaNs last: left out)
            o = ordinals(Y, fmt).reshape(nb, na, 2)
            keep = ~np.isnan(self.a.astype(np.float64))
            o = o[:, keep, :].astype(np.float64)
            fall0 = o[:, :-1, 0] > o[:, 1:, 0]        # y_0 fell as a rose
            rise1 = o[:, :-1, 1] < o[:, 1:, 1]        # y_1 rose as a rose
            bad_steps = fall0 | rise1
            checked = bad_steps.size
            nkeep = int(keep.sum())

            def mono_example(k):
                j, s = divmod(k, nkeep - 1)
                i0 = j * na + np.flatnonzero(keep)[s]
                i1 = j * na + np.flatnonzero(keep)[s + 1]
                return {"row": [float(v) for v in x64[i0]], "related_row": [float(v) for v in x64[i1]],
                        "how": "a raised to the next value of the format", "got": [float(v) for v in y64[i0]],
                        "got_related": [float(v) for v in y64[i1]]}
            self._note("row_monotonic", checked, bad_steps.reshape(-1), mono_example)
        if "nan_row" in kinds:
            bad = nan & ~np.isnan(y64).all(axis=1)
            self._note("nan_row", nan.sum(), bad, ex)
        if "infinite_entries" in kinds:
            tol = max(0, math.ceil(self.max_ulp - 0.5))
            bad = np.zeros(inf_rows.size, dtype=bool)     # the distance on those rows alone (6% of the pairs)
            bad[inf_rows] = (ulp_distance(Y[inf_rows], to_format(want[inf_rows], fmt), fmt) > tol).any(axis=1)
            self._note("infinite_entries", inf_rows.sum(), bad, ex)
        if "one_hot_first" in kinds:
            w16 = to_format(want, fmt)
            bad = ~nan & ~((Y.view(fmt.uint) == w16.view(fmt.uint)).all(axis=1))
            self._note("one_hot_first", (~nan).sum(), bad, ex)

    def verdicts(self) -> list[dict]:
        """One verdict per declared property, over every pair (named "NAME (pairs)")."""
        out = []
        implied = self.max_err <= self.max_ulp and self.flushes == 0
        for p in self.op.properties:
            name = f"{p.name} (pairs)"
            method = f"every pair of {self.fmt.name} values ({self.pairs:,} rows of 2), enumerated"
            if p.kind in ("shift_invariance", "permutation"):
                if implied:
                    r = PropertyResult(name, p.kind, p.statement + " (rows of 2)", "proved",
                                       f"implied by the accuracy over every pair: each output within "
                                       f"{self.max_ulp:g} ULP of an exact value that depends on a - b alone "
                                       f"(max {self.max_err:.4g}), so related pairs agree within "
                                       f"{2 * self.max_ulp:g}", inputs_checked=self.pairs, violations=0)
                else:
                    r = PropertyResult(name, p.kind, p.statement + " (rows of 2)", "unknown", "-",
                                       note=f"not implied: some output is {self.max_err:.4g} ULP off (allowed "
                                            f"{self.max_ulp:g}) or flushed; the sampled rows decide it")
                out.append(r.to_dict())
                continue
            bad, first = self.viol.get(p.kind, [0, None])
            checked = self.checked.get(p.kind, 0)
            if not checked:
                continue
            r = PropertyResult(name, p.kind, p.statement + " (rows of 2)", "refuted" if bad else "proved", method,
                               elapsed_s=self.elapsed, inputs_checked=checked, violations=bad, counterexample=first)
            out.append(r.to_dict())
        return out
