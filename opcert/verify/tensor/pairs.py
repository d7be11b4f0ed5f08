"""Every row of two 16-bit values: all 2^32 pairs (a, b), through the target, against the reference.

A pair's exact outputs depend on d = a - b alone (a binary64 difference, and for bfloat16 values far apart
its TwoSum remainder): Softmax is (sigmoid(d), sigmoid(-d)), LogSoftmax (ln sigmoid(d), ln sigmoid(-d)),
Hardmax (a >= b, b > a). Each is increasing in d, so its rounding is a step function of d: the steps
(numerics.pair_steps, enclosed at 200 bits once a format) give the rounded reference of every pair as d rises,
without a transcendental function (verify.tensor.pairs_kernel, compiled). A rounded difference (bfloat16
values far apart) inside a step's wide enclosure goes to the element-wise machinery's exact path on the
exact difference (Arb: Sigmoid's or Softplus' reference form). Pairs
holding NaN or +-inf take the rule of spec.tensor.limit_row, which makes them depend only on where the
infinities are.

The pairs go to the target in blocks of 64 values of b, each with every a in increasing order: one call
per block, rows [a, b] (the last axis reduced), the next block's call beside this block's check. In the same
pass, over every pair: the range, the row sum, monotonicity in a (y_0 non-decreasing, y_1 non-increasing as
a increases, b fixed), the NaN rule and the rule for infinite entries (bit for bit), Hardmax's one-hot row.
Shift and permutation invariance over every row of two finite values: an output that is the correctly
rounded value is the same for every row it relates to (the exact outputs depend on a - b alone, swapped
with the row), so only the outputs off it are kept (their distance in values of the format) and related:
rows of one difference (a shift of each other), a row and its swap (_relations). Beyond 20 million such
outputs they are left undecided (said so: the sampled rows check them).
"""

from __future__ import annotations

import math
import os
import time
from concurrent.futures import ThreadPoolExecutor
from fractions import Fraction

import numpy as np

from opcert.errors import TargetFailure
from opcert.expr import PRIMITIVES, var
from opcert.formats import round_fraction, to_format
from opcert.numerics.errorfree import exact_difference
from opcert.numerics.exact import evaluate
from opcert.numerics.pair_steps import steps
from opcert.spec.declarations import sigmoid_stable
from opcert.spec.ops.softplus import stable
from opcert.spec.row_reference import reference_rows
from opcert.spec.tensor import round_just_below
from opcert.verify.result import PropertyResult
from opcert.verify.tensor import pairs_kernel as K
from opcert.verify.ulp import ordinal_distance, ordinals, ulp_error

BLOCK = 64  # values of b per call: 4 million pairs
DEVIATIONS_PER_RUN = 8192  # outputs off the reference kept per value of b and block (the kernel's buffer)
DEVIATIONS_KEPT = 20_000_000  # in all: beyond, shift and permutation over the pairs are left undecided


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def _in_threads(part, n: int) -> None:
    """part(j0, j1) over 0..n in one thread per core the process may use (each part writes its own rows)."""
    k = max(1, min(_cores(), n))
    cuts = [n * i // k for i in range(k + 1)]
    if k == 1:
        part(0, n)
        return
    with ThreadPoolExecutor(k, thread_name_prefix="opcert-pairs-check") as pool:
        for f in [pool.submit(part, j0, j1) for j0, j1 in zip(cuts[:-1], cuts[1:])]:
            f.result()


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
        return sigmoid_stable(x)
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
    exp, log1p = PRIMITIVES["exp"], PRIMITIVES["log1p"]
    ke, kl = exp.ulps, log1p.ulps
    rel = (2 * ke + 4) * 2.0**-53 if op.name == "Softmax" else (2 * ke + 2 * kl + 4) * 2.0**-53
    lo_t, hi_t = (fmt.emin - fmt.p) * math.log(2), (fmt.p + 1) * math.log(2) + 0.5
    with np.errstate(all="ignore"):
        if op.name == "Softmax":
            e = exp.numpy(-np.abs(d))
            v = np.where(d >= 0, 1 / (1 + e), e / (1 + e))
            known = np.where(d <= lo_t, 0.0, np.where(d >= hi_t, 1.0, np.nan))
        else:
            v = np.where(d >= 0, -log1p.numpy(exp.numpy(-d)), d - log1p.numpy(exp.numpy(d)))
            known = np.where(d >= -lo_t + 1, -0.0, np.nan)
        a, b = np.nextafter(v * (1 - rel), -np.inf), np.nextafter(v * (1 + rel), np.inf)
        ra, rb = to_format(np.minimum(a, b), fmt), to_format(np.maximum(a, b), fmt)
    bits = fmt.uint
    decided = (ra.view(bits) == rb.view(bits)) & np.isfinite(v)
    value = ra.astype(np.float64)
    have = ~np.isnan(known)
    value = np.where(have, known, value)
    return value, decided | have, v


def _reference_of_d(op, d: np.ndarray, fmt, d_lo: np.ndarray | None = None):
    """(rounded, exact midpoint) of output 0 at differences d + d_lo (d the binary64 difference, d_lo what
    it left out: bfloat16 values far apart differ by more than 53 bits; such d go to the exact path)."""
    if op.name == "Hardmax":  # the first element wins ties
        v = (d >= 0).astype(np.float64)
        return v, v
    val, decided, mid = _fast(op, d, fmt)
    if d_lo is not None:
        decided &= d_lo == 0
    if not decided.all():
        form = _forms(op)
        for i in np.nonzero(~decided)[0]:
            q = Fraction(float(d[i])) + (Fraction(float(d_lo[i])) if d_lo is not None else 0)
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
    inf = np.inf
    kinds = {
        ("+", "+"): (inf, inf),
        ("+", "f"): (inf, 0.0),
        ("f", "+"): (0.0, inf),
        ("-", "-"): (-inf, -inf),
        ("-", "f"): (-inf, 0.0),
        ("f", "-"): (0.0, -inf),
        ("+", "-"): (inf, -inf),
        ("-", "+"): (-inf, inf),
    }
    rows = np.array(list(kinds.values()))
    vals = reference_rows(op, rows, fmt)[0]
    return {k: vals[i] for i, k in enumerate(kinds)}


def _kind(v):
    return np.where(np.isposinf(v), 1, np.where(np.isneginf(v), -1, 0))


class PairSweep:
    def __init__(self, op, fmt, call, max_ulp: float, progress=None, values=None, layout=None):
        """values: the 16-bit values to pair (default every bit pattern; the tests give a subset, in
        increasing order, NaNs last). layout: (call, words): the block's rows through the target in another
        layout (call(X) -> the outputs of X's rows, in X's order), compared bit for bit with `call`'s."""
        self.op, self.fmt, self.call, self.max_ulp = op, fmt, call, max_ulp
        self.layout = layout
        self.progress = progress or (lambda done, total: None)
        self.a = _all_values(fmt) if values is None else values
        self.table = _special_table(op, fmt)
        self.pairs = 0
        self.max_err = 0.0  # over the outputs that are not the reference's (the others: within 0.5)
        self.worst = None
        self.correctly_rounded = 0
        self.special_wrong = 0
        self.special_example = None
        self.flushes = 0
        self.zero_sign = 0
        self.undecided = 0  # rows the binary64 interval left to Arb
        self.viol = {}  # property kind -> [count, first example]
        self._devs = []  # (a bits, b bits, k, distance, d, d_lo) of the outputs off the reference
        self._dev_total = 0
        self.dev_overflow = False
        self.relations = {}  # shift_invariance / permutation -> PropertyResult over the finite pairs
        self.checked = {}
        self.elapsed = 0.0
        self._kernel_args()

    def _kernel_args(self) -> None:
        """The records verify.tensor.pairs_kernel.check_block takes besides the block, computed once."""
        op, fmt = self.op, self.fmt
        kinds = {p.kind: p for p in op.properties}
        flags = {
            "range": K.P_RANGE,
            "row_sum": K.P_SUM,
            "row_monotonic": K.P_MONO,
            "nan_row": K.P_NAN,
            "infinite_entries": K.P_INF,
            "one_hot_first": K.P_HOT,
        }
        self._props = sum(f for k, f in flags.items() if k in kinds)
        rng, total = kinds.get("range"), kinds.get("row_sum")
        lower = rng.lower if rng is not None and rng.lower is not None else -np.inf
        upper = rng.upper if rng is not None and rng.upper is not None else np.inf
        table = np.zeros((3, 3, 2))
        for (p, q), v in self.table.items():
            table[{"-": 0, "f": 1, "+": 2}[p], {"-": 0, "f": 1, "+": 2}[q]] = v
        table_bits = to_format(table, fmt).view(fmt.uint).astype(np.int64)
        code = {"Softmax": K.SOFTMAX, "LogSoftmax": K.LOG_SOFTMAX, "Hardmax": K.HARDMAX}[op.name]
        inf_bits = int(np.array([np.inf]).astype(fmt.dtype).view(fmt.uint)[0])
        with np.errstate(invalid="ignore"):
            self._a64 = self.a.astype(np.float64)
            values = np.arange(1 << 16, dtype=np.uint16).view(fmt.dtype).astype(np.float64)
        self._nkeep = int(np.count_nonzero(~np.isnan(self._a64)))
        with np.errstate(all="ignore"):
            exp_of = PRIMITIVES["exp"].numpy(values)
        floor, below, above, stepped = steps(op.name, fmt.name)
        stepped_ord = ordinals(to_format(stepped, fmt), fmt).astype(np.int64)
        self._a_bits = self.a.view(fmt.uint)
        self._pos = np.full(1 << 16, -1, dtype=np.int64)  # where each bit pattern is in self.a (-1: absent)
        self._pos[self._a_bits] = np.arange(self.a.size)
        self._values = values
        self._reference = K.Reference(values, exp_of, floor, below, above, stepped, stepped_ord, table, table_bits)
        mu, p, emin = float(self.max_ulp), fmt.p, fmt.emin
        sum_bound = mu * 2.0 ** (1 - p) + 2 * mu * 2.0 ** (emin - p + 1)  # two outputs within mu ULPs each
        self._declared = K.Declared(
            code,
            self._props,
            p,
            emin,
            float(lower),
            float(upper),
            total is not None and total.sum_of == "y",
            mu,
            max(0, math.ceil(mu - 0.5)),
            self._nkeep,
            inf_bits,
            sum_bound,
            int(np.count_nonzero(np.isfinite(self._a64))),
        )

    def _note(self, kind, n_checked, bad, example):
        c = self.viol.setdefault(kind, [0, None])
        self.checked[kind] = self.checked.get(kind, 0) + int(n_checked)
        if bad:
            c[0] += int(bad)
            if c[1] is None:
                c[1] = example()

    def run(self) -> None:
        """Block by block, the target's call of the next block beside the check of this one (a thread: the
        call and the compiled check both leave the GIL; 13.8 M pairs/s one after the other on 2 cores)."""
        t0 = time.perf_counter()
        n = self.a.size
        blocks = [self.a[start : start + BLOCK] for start in range(0, n, BLOCK)]
        with ThreadPoolExecutor(1, thread_name_prefix="opcert-pairs") as pool:
            pending = pool.submit(self._called, blocks[0])
            for k, bs in enumerate(blocks):
                X, Y, Y2 = pending.result()
                if k + 1 < len(blocks):
                    pending = pool.submit(self._called, blocks[k + 1])
                self._block(bs, X, Y)
                if Y2 is not None:
                    self._same_in_layout(X, Y, Y2)
                self.progress(min(n, (k + 1) * BLOCK), n)
        self.elapsed = time.perf_counter() - t0
        self._relations()
        self.elapsed = time.perf_counter() - t0
        self.replay()

    def _called(self, bs):
        X = self._make(bs)
        Y = self.call(X)
        if not self.layout:
            return X, Y, None
        try:
            return X, Y, self.layout[0](X)
        except TargetFailure as exc:  # the measured layout ran: a failure in the other one is a finding
            return X, Y, exc

    def _same_in_layout(self, X, Y, Y2) -> None:
        """Every row of the block, bit for bit in both layouts (any NaN equals any NaN); a target that
        failed in the second layout breaks the property on every row of the block."""
        if isinstance(Y2, TargetFailure):

            def failed():
                try:
                    self.layout[0](X)
                    again = False
                except TargetFailure:
                    again = True
                return {
                    **self._example(X, Y, None, 0),
                    "layout": self.layout[1],
                    "got_in_layout": None,
                    "error": str(Y2),
                    "replayed": again,
                }

            self._note("row_layout", X.shape[0], X.shape[0], failed)
            return
        # Y2 may be a strided view (the transposed call's outputs, not copied back): compared as it lies
        a, b = Y.view(np.uint16), Y2.view(np.uint16)
        bad = np.flatnonzero((a[:, 0] != b[:, 0]) | (a[:, 1] != b[:, 1]))
        if bad.size:  # NaN against NaN of another payload is not a difference: looked at only there
            with np.errstate(invalid="ignore"):
                both_nan = np.isnan(Y[bad].astype(np.float32)) & np.isnan(Y2[bad].astype(np.float32))
            bad = bad[((a[bad] != b[bad]) & ~both_nan).any(axis=1)]

        def example():
            r = int(bad[0])
            again = self.layout[0](X)
            e = self._example(X, Y, None, 2 * r)
            return {
                **e,
                "layout": self.layout[1],
                "got_in_layout": [float(v) for v in Y2[r].astype(np.float64)],
                "replayed": bool(np.all(again[r].view(np.uint16) == b[r])),
            }

        self._note("row_layout", X.shape[0], bad.size, example if bad.size else None)

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
            ex["replayed"] = bool(
                np.all(
                    Y[k // 2].view(self.fmt.uint) == np.asarray(ex["got"]).astype(self.fmt.dtype).view(self.fmt.uint)
                )
            )

    def _want(self, x64) -> tuple[np.ndarray, np.ndarray]:
        """(rounded, exact midpoint) of rows of two (binary64 values of the format), through Arb where the
        binary64 interval cannot decide: the rows the compiled check leaves, and the rows of examples."""
        op, fmt = self.op, self.fmt
        want = np.full(x64.shape, np.nan)
        mid = np.full(x64.shape, np.nan)
        finite = np.isfinite(x64).all(axis=1)
        nan = np.isnan(x64).any(axis=1)
        d, d_lo = exact_difference(x64[finite, 0], x64[finite, 1])
        v0, m0 = _reference_of_d(op, d, fmt, d_lo)
        v1, m1 = _reference_of_d(op, -d, fmt, -d_lo) if op.name != "Hardmax" else (1.0 - v0, 1.0 - v0)
        want[finite, 0], want[finite, 1], mid[finite, 0], mid[finite, 1] = v0, v1, m0, m1
        inf_rows = ~finite & ~nan
        if inf_rows.any():
            vals = self._table_lookup(_kind(x64[inf_rows, 0]), _kind(x64[inf_rows, 1]))
            want[inf_rows] = vals
            mid[inf_rows] = vals
        return want, mid

    def _block(self, bs, X, Y) -> None:
        na, nb = self.a.size, bs.size
        self._bs = bs
        self.pairs += X.shape[0]
        with np.errstate(invalid="ignore"):
            b64 = bs.astype(np.float64)
        found = K.found(nb, na, DEVIATIONS_PER_RUN)
        ybits = np.ascontiguousarray(Y).view(np.uint16).reshape(nb, na, 2)
        _in_threads(
            lambda j0, j1: K.check_block(self._a64, b64, ybits, self._reference, self._declared, found, j0, j1), nb
        )
        counts, firsts, worst_err, worst_at, undecided = found[:5]
        self._keep_deviations(bs, b64, found)
        c = counts.sum(axis=0)
        self.correctly_rounded += int(c[K.CORRECT])
        self.flushes += int(c[K.FLUSHES])
        self.zero_sign += int(c[K.ZERO_SIGN])
        self.undecided += int(c[K.UNDECIDED])
        self.special_wrong += int(c[K.SPECIAL_WRONG])

        def first(col):  # the first row (index into X) where column col of firsts is set
            js = np.flatnonzero(firsts[:, col] >= 0)
            return None if js.size == 0 else int(js[0]) * na + int(firsts[js[0], col])

        def row_example(r):
            return lambda: self._example(X, Y, None, 2 * r)

        if c[K.SPECIAL_WRONG] and self.special_example is None:
            j = int(np.flatnonzero(firsts[:, K.FIRST_SPECIAL] >= 0)[0])
            k = j * 2 * na + int(firsts[j, K.FIRST_SPECIAL])  # 2 i + k within b's run
            self.special_example = {**self._example(X, Y, None, k), "_block": (bs, k)}
        j = int(np.argmax(worst_err))
        if worst_err[j] >= 0:
            self._worst(X, Y, None, float(worst_err[j]), j * 2 * na + int(worst_at[j]))
        checks = [
            ("range", K.RANGE_CHECKED, K.RANGE_BAD, K.FIRST_RANGE),
            ("row_sum", K.SUM_CHECKED, K.SUM_BAD, K.FIRST_SUM),
            ("nan_row", K.NAN_CHECKED, K.NAN_BAD, K.FIRST_NAN),
            ("infinite_entries", K.INF_CHECKED, K.INF_BAD, K.FIRST_INF),
            ("one_hot_first", K.HOT_CHECKED, K.HOT_BAD, K.FIRST_HOT),
        ]
        kinds = {p.kind for p in self.op.properties}
        for kind, n_checked, n_bad, col in checks:
            if kind in kinds:
                r = first(col)
                self._note(kind, c[n_checked], c[n_bad], row_example(r) if r is not None else None)
        if "row_monotonic" in kinds:
            r = first(K.FIRST_MONO)
            self._note(
                "row_monotonic",
                nb * max(self._nkeep - 1, 0),
                c[K.MONO_BAD],
                (lambda: self._mono_example(X, Y, r)) if r is not None else None,
            )
        if c[K.UNDECIDED]:
            rows = np.flatnonzero(undecided.reshape(-1))
            with np.errstate(invalid="ignore"):
                x64 = X[rows].astype(np.float64)
                y64 = Y[rows].astype(np.float64)
            want, mid = self._want(x64)
            self._compare(X[rows], Y[rows], y64, want, mid, rows)

    def _row_output(self, a_bits: int, b_bits: int, cache: dict) -> np.ndarray:
        """The target's outputs for the row [a, b], from the call of its whole block made again."""
        j = int(self._pos[b_bits])
        start = (j // BLOCK) * BLOCK
        if start not in cache:
            cache[start] = self.call(self._make(self.a[start : start + BLOCK]))
        return cache[start][(j - start) * self.a.size + int(self._pos[a_bits])]

    def _relations(self) -> None:
        """Shift and permutation invariance over every row of two finite values, from the outputs that are
        not the reference's (every other output is the correctly rounded value of an exact output that
        depends on a - b alone, the same for every related pair): two rows with one difference (a shift of
        each other) or swapped (a permutation) are refuted where their outputs are more than the allowed
        distance apart, counting a row kept off the reference by its distance and any other as 0."""
        op, fmt = self.op, self.fmt
        tol = 0 if op.name == "Hardmax" else math.ceil(2 * self.max_ulp)
        with np.errstate(invalid="ignore"):
            n_finite = int(np.isfinite(self._a64).sum())
        pairs = n_finite * n_finite
        kinds = {p.kind: p for p in op.properties}
        words = {
            "shift_invariance": "rows of one difference a - b (each a shift of the other)",
            "permutation": "each row and the row swapped",
        }
        for kind in ("shift_invariance", "permutation"):
            if kind not in kinds:
                continue
            p = kinds[kind]
            method = (
                f"every pair of finite {fmt.name} values ({pairs:,} rows of 2): {words[kind]}, from the "
                f"outputs off the correctly rounded value ({self._dev_total:,}); outputs may be {tol} "
                f"value(s) apart"
            )
            if self.dev_overflow:
                self.relations[kind] = PropertyResult(
                    f"{p.name} (pairs)",
                    kind,
                    p.statement + " (rows of 2)",
                    "unknown",
                    "-",
                    note=f"more than {DEVIATIONS_KEPT:,} outputs (or {DEVIATIONS_PER_RUN:,} in one run of a) are "
                    f"off the correctly rounded value: too many to relate; the sampled rows check it",
                )
                continue
            self.relations[kind] = self._relate(kind, p, tol, pairs, method, K.DEV_NAN)

    def _relate(self, kind, p, tol, pairs, method, dev_nan):
        name, statement = f"{p.name} (pairs)", p.statement + " (rows of 2 finite values)"
        if kind == "permutation" and self.op.name == "Hardmax":  # rows [v, v] (and [-0, +0]) left out
            with np.errstate(invalid="ignore"):
                pairs -= int(np.isfinite(self._a64).sum()) + (2 if int((self._a64 == 0).sum()) == 2 else 0)
        if not self._devs:
            return PropertyResult(
                name, kind, statement, "proved", method, elapsed_s=self.elapsed, inputs_checked=pairs, violations=0
            )
        A, B, Kk, D, DH, DL = (np.concatenate(c) for c in zip(*self._devs))
        A, B, Kk = A.astype(np.int64), B.astype(np.int64), Kk.astype(np.int64)
        nan = np.abs(D) >= dev_nan

        def distance(d1, n1, d2, n2):
            return np.where(n1 & n2, 0.0, np.where(n1 | n2, np.inf, np.abs(d1 - d2).astype(np.float64)))

        bad_rows, first, unresolved = set(), None, ""
        if kind == "permutation" and self.op.name == "Hardmax":  # the first maximum wins: not rows of a tie
            keep = self._values[A] != self._values[B]
            A, B, Kk, D, nan = A[keep], B[keep], Kk[keep], D[keep], nan[keep]
        if kind == "permutation" and A.size:
            key = (A << 17) | (B << 1) | Kk
            order = np.argsort(key, kind="stable")
            ks = key[order]
            partner = (B << 17) | (A << 1) | (1 - Kk)
            pos = np.minimum(np.searchsorted(ks, partner), ks.size - 1)
            found = ks[pos] == partner
            dist = distance(D, nan, np.where(found, D[order][pos], 0), np.where(found, nan[order][pos], False))
            for i in np.flatnonzero(dist > tol):
                bad_rows.add((int(A[i]), int(B[i])))
                if first is None or (A[i], B[i]) < first[:2]:
                    first = (int(A[i]), int(B[i]), int(B[i]), int(A[i]))
        elif kind == "shift_invariance":
            bad_rows, first, unresolved = self._shifted((A, B, Kk, D, DH, DL, nan), tol)
        if unresolved and not bad_rows:
            return PropertyResult(name, kind, statement, "unknown", method, inputs_checked=pairs, note=unresolved)
        if not bad_rows:
            return PropertyResult(
                name, kind, statement, "proved", method, elapsed_s=self.elapsed, inputs_checked=pairs, violations=0
            )
        return PropertyResult(
            name,
            kind,
            statement,
            "refuted",
            method,
            elapsed_s=self.elapsed,
            inputs_checked=pairs,
            violations=len(bad_rows),
            counterexample=self._related_example(kind, first, tol),
        )

    def _shifted(self, devs, tol):
        """Shift invariance over the outputs off the reference (devs: rows A, B, output Kk, distance D, the
        difference DH + DL, NaN), grouped by difference and output: (the rows refuting it, the first pair of
        them, why it is undecided)."""
        A, B, Kk, D, DH, DL, nan = devs
        bad_rows, first, unresolved = set(), None, ""
        group = np.lexsort((Kk, DL, DH))
        gh, gl, gk = DH[group], DL[group], Kk[group]
        starts = np.flatnonzero(np.r_[True, (gh[1:] != gh[:-1]) | (gl[1:] != gl[:-1]) | (gk[1:] != gk[:-1])])
        gd, gn = D[group], nan[group]
        big = np.iinfo(np.int64).max
        hi = np.maximum.reduceat(np.where(gn, -big, gd), starts)  # over the numbers of each group
        lo = np.minimum.reduceat(np.where(gn, big, gd), starts)
        n_nan = np.add.reduceat(gn.astype(np.int64), starts)
        size = np.diff(np.r_[starts, group.size])
        mixed = (n_nan > 0) & (n_nan < size)  # a NaN and a number: apart
        apart = mixed | ((n_nan < size) & (hi - np.minimum(lo, hi) > tol))
        for g in np.flatnonzero(apart):
            members = group[starts[g] : starts[g] + size[g]]
            i = members[int(np.argmax(np.where(nan[members], big, D[members])))]
            j = members[int(np.argmin(np.where(nan[members], big, D[members])))]
            bad_rows.update({(int(A[i]), int(B[i])), (int(A[j]), int(B[j]))})
            if first is None:
                first = (int(A[i]), int(B[i]), int(A[j]), int(B[j]))
        # a group whose outputs agree among themselves but one is far from the reference: against a row
        # of the same difference that is on it (none found: undecided, said so)
        far = ~apart & ((n_nan > 0) | (np.maximum(np.abs(hi), np.abs(lo)) > tol) & (n_nan < size))
        n_far = int(np.count_nonzero(far))
        for g in np.flatnonzero(far)[:64]:
            members = group[starts[g] : starts[g] + size[g]]
            i = members[0]
            other = self._same_difference(
                int(A[i]), int(B[i]), int(Kk[i]), DH[i], DL[i], set(zip(A[members].tolist(), B[members].tolist()))
            )
            if other is None:
                unresolved = unresolved or (
                    f"an output {int(D[i]) if not nan[i] else 'NaN'} values off the "
                    f"reference, and no other row of its difference found to compare "
                    f"it with"
                )
                continue
            n_far -= 1
            bad_rows.update({(int(A[i]), int(B[i])), other})
            if first is None:
                first = (int(A[i]), int(B[i]), *other)
        if n_far > 64 and not unresolved:
            unresolved = (
                f"{n_far:,} differences with an output more than {tol} values off the reference: "
                f"more than the 64 searched for a row on it"
            )
        return bad_rows, first, unresolved

    def _same_difference(self, a_bits, b_bits, k, d, d_lo, off) -> tuple | None:
        """Another row [a', b'] of the format with a' - b' = a - b exactly that is not among `off` (the rows
        of that difference off the reference), from the 256 values of a' nearest a; None if none is."""
        if d_lo != 0:
            return None
        fmt = self.fmt
        i = int(self._pos[a_bits])
        for j in sorted(range(max(0, i - 128), min(self.a.size, i + 128)), key=lambda j: abs(j - i)):
            a2 = float(self._a64[j])
            if not math.isfinite(a2) or j == i:
                continue
            b2 = a2 - d
            if not math.isfinite(b2) or a2 - b2 != d or (a2 - (a2 - b2)) != b2:
                continue
            b2f = np.array([b2]).astype(fmt.dtype)
            if float(b2f[0]) != b2:
                continue
            row = (int(self._a_bits[j]), int(b2f.view(fmt.uint)[0]))
            if row not in off and self._pos[row[1]] >= 0:  # a row the sweep ran
                return row
        return None

    def _related_example(self, kind, first, tol) -> dict:
        fmt = self.fmt
        a1, b1, a2, b2 = first
        cache: dict = {}
        y1, y2 = self._row_output(a1, b1, cache), self._row_output(a2, b2, cache)
        again = self._row_output(a1, b1, {}), self._row_output(a2, b2, {})

        def val(bits):
            return float(np.array([bits], dtype=fmt.uint).view(fmt.dtype).astype(np.float64)[0])

        got1, got2 = np.asarray(y1), np.asarray(y2)
        cmp2 = got2[::-1] if kind == "permutation" else got2
        dist = ordinal_distance(got1[None, :], cmp2[None, :], fmt)[0]
        return {
            "case": "every pair",
            "row": [val(a1), val(b1)],
            "related_row": [val(a2), val(b2)],
            "how": "the row swapped (outputs compared swapped)"
            if kind == "permutation"
            else "a row of the same difference a - b",
            "got": [float(v) for v in got1.astype(np.float64)],
            "got_related": [float(v) for v in got2.astype(np.float64)],
            "distance_ulps": float(np.max(dist)),
            "allowed_ulps": tol,
            "replayed": bool(
                np.all(again[0].view(fmt.uint) == got1.view(fmt.uint))
                and np.all(again[1].view(fmt.uint) == got2.view(fmt.uint))
            ),
        }

    def _keep_deviations(self, bs, b64, found) -> None:
        dev_at, dev_val, dev_n = found.dev_at, found.dev_val, found.dev_n
        if self.dev_overflow:
            return
        if (dev_n > DEVIATIONS_PER_RUN).any() or self._dev_total + int(dev_n.sum()) > DEVIATIONS_KEPT:
            self.dev_overflow = True
            self._devs = []
            return
        js = np.repeat(np.arange(bs.size), dev_n)
        at = np.concatenate([dev_at[j, : dev_n[j]] for j in range(bs.size)]) if js.size else np.zeros(0, np.int64)
        if not at.size:
            return
        i, k = at // 2, at % 2
        d, d_lo = exact_difference(self._a64[i], b64[js])
        dev = np.concatenate([dev_val[j, : dev_n[j]] for j in range(bs.size)])
        self._devs.append((self._a_bits[i], bs.view(self.fmt.uint)[js], k.astype(np.int8), dev, d, d_lo))
        self._dev_total += at.size

    def _mono_example(self, X, Y, r):
        with np.errstate(invalid="ignore"):
            x64, y64 = X[r : r + 2].astype(np.float64), Y[r : r + 2].astype(np.float64)
        moved = ordinal_distance(Y[r : r + 1], Y[r + 1 : r + 2], self.fmt)[0]
        return {
            "case": "every pair",
            "row": [float(v) for v in x64[0]],
            "related_row": [float(v) for v in x64[1]],
            "how": "a raised to the next value of the format (y_0 may not fall, y_1 may not rise)",
            "got": [float(v) for v in y64[0]],
            "got_related": [float(v) for v in y64[1]],
            "distance_ulps": float(np.max(moved)),
            "allowed_ulps": 0,
        }

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
        """The row of element i of X (flattened) with the target's outputs and the reference's (want: the
        reference of X's rows, or None to compute that row's)."""
        fmt = self.fmt
        row = np.asarray(X[i // 2])
        if want is None:
            with np.errstate(invalid="ignore"):
                w = self._want(row.astype(np.float64)[None, :])[0][0]
        else:
            w = want[i // 2]
        return {
            "case": "every pair",
            "row": [float(v) for v in row.astype(np.float64)],
            "row_bits": [f"0x{int(b):04x}" for b in row.view(fmt.uint)],
            "got": [float(v) for v in np.asarray(Y[i // 2], dtype=np.float64)],
            "want": [float(v) for v in np.asarray(w, dtype=np.float64)],
        }

    def _worst(self, X, Y, want, e, k, block_k=None) -> None:
        if self.worst is None or e > self.max_err:
            self.max_err = max(self.max_err, e)
            self.worst = {
                **self._example(X, Y, want, k),
                "position": k % 2,
                "ulp": e,
                "_block": (self._bs, k if block_k is None else block_k),
            }

    def _compare(self, X, Y, y64, want, mid, rows):
        """The accuracy of the rows the compiled check left undecided (rows: their indices in the block),
        with the exact reference: as check_block does for the others."""
        fmt = self.fmt
        w16 = to_format(want, fmt)
        same = (Y.view(fmt.uint) == w16.view(fmt.uint)) | (np.isnan(y64) & np.isnan(want))
        special = ~np.isfinite(y64) | ~np.isfinite(want)
        wrong = special & ~same
        if wrong.any():
            self.special_wrong += int(wrong.sum())
            if self.special_example is None:
                i = int(np.flatnonzero(wrong)[0])
                k = 2 * int(rows[i // 2]) + i % 2
                self.special_example = {**self._example(X, Y, want, i), "_block": (self._bs, k)}
        flushed = ~special & (y64 == 0) & (want != 0) & (np.abs(want) < 2.0**fmt.emin)
        self.flushes += int(flushed.sum())
        self.zero_sign += int(np.sum(~special & (y64 == 0) & (want == 0) & (np.signbit(y64) != np.signbit(want))))
        with np.errstate(all="ignore"):
            err = ulp_error(y64, mid, np.zeros_like(mid), fmt)
        err = np.where(special | flushed, np.nan, err)
        self.correctly_rounded += int(np.sum(~special & ~flushed & (err <= 0.5))) + int(np.sum(special & same))
        if np.any(~np.isnan(err)):
            i = int(np.nanargmax(err))
            self._worst(X, Y, want, float(err.flat[i]), i, 2 * int(rows[i // 2]) + i % 2)

    def verdicts(self) -> list[dict]:
        """One verdict per declared property, over every pair (named "NAME (pairs)")."""
        out = []
        for p in self.op.properties:
            name = f"{p.name} (pairs)"
            method = f"every pair of {self.fmt.name} values ({self.pairs:,} rows of 2), enumerated"
            if p.kind in self.relations:
                out.append(self.relations[p.kind].to_dict())
                continue
            bad, first = self.viol.get(p.kind, [0, None])
            checked = self.checked.get(p.kind, 0)
            if not checked:
                continue
            note = None
            if p.kind == "row_layout":
                method = (
                    f"every pair of {self.fmt.name} values ({self.pairs:,} rows of 2) in two layouts, bit "
                    f"for bit: the measured call and {self.layout[1]}"
                )
                note = (
                    'over these two layouts; the sampled verdict (the property without "(pairs)") covers the '
                    "others on rows of every length: a row alone, the reverse order, another axis, threads"
                )
            r = PropertyResult(
                name,
                p.kind,
                p.statement + " (rows of 2)",
                "refuted" if bad else "proved",
                method,
                elapsed_s=self.elapsed,
                inputs_checked=checked,
                violations=bad,
                counterexample=first,
                note=note,
            )
            out.append(r.to_dict())
        return out
