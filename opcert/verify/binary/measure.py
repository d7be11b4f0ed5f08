"""Accuracy and properties of a binary operator's target (spec.binary), over pairs (x, y).

Every output is compared with the correctly rounded reference of its pair (the operator's `reference`): bit for
bit (any NaN for a NaN) where it is correctly rounded, else its error in ULPs of the exact value (verify.ulp's
definition; the exact value taken from binary64 pow, within 2^-40 ULP of it up to binary32, from the x87 long
double for float64, and the worst pair's error recomputed with Arb). NaN where a number is due, a number where
NaN is due, an infinity where a finite value is due and the reverse, and any wrong output at a special pair
(spec.binary's `special_cases`) are counted apart from the ULP figure, as are zeros of the wrong sign and
subnormal results flushed to zero.

Pairs: sampled (verify.binary.pairs: landmarks and strata, any format), or for a 16-bit format every pair
(exhaustive: 2^32), in blocks of 64 values of y against every x. The properties are decided on the same outputs:
over every pair they are `proved` or `refuted` (enumeration), on samples `checked` or `refuted`; a refutation is
replayed (the same call again) before it is reported. The layout property compares each block (or a sampled
grid) given as two tensors of one shape with the same pairs given broadcast, a row of x against a column of y.
"""

from __future__ import annotations

import math
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field, replace
from fractions import Fraction

import numpy as np
from flint import ctx

from opcert.errors import TargetFailure, UsageError
from opcert.expr import pow_record
from opcert.formats import get_format
from opcert.progress import Progress
from opcert.spec import get_binary_operator
from opcert.spec.binary import BinaryOperator
from opcert.targets import binary as binary_targets
from opcert.targets.isolation import child_ends
from opcert.verify.binary import pairs as P
from opcert.verify.result import PropertyResult
from opcert.verify.ulp import ulp_error, ulp_error_exact
from opcert.workers import WorkerLost, activity, in_worker, run_isolated

DEFAULT_PAIRS = 100_000


@dataclass(frozen=True)
class PairOptions:
    """How measure_pairs measures: whose definition, which attributes (DirectML's scale and bias), how many random
    pairs from which seed, the target in a supervised worker ("process") or not ("none"), every pair of a 16-bit
    format (exhaustive)."""

    standard: str | None = None
    attrs: tuple = ()  # (name, value) pairs
    samples: int | None = None
    seed: int = 0
    isolation: str = "process"
    exhaustive: bool = False
    progress: bool = False


@dataclass
class PairResult:
    op: str
    target: str
    dtype: str
    standard: str
    attrs: dict = field(default_factory=dict)
    status: str = "ok"  # ok | unsupported | crashed
    error: str | None = None
    exhaustive: bool = False
    pairs: int = 0
    correctly_rounded: int = 0
    # the largest error in ULPs of the exact value; None where every output of an exhaustive sweep is correctly
    # rounded (within 0.5 ULP: the sweep measures the error of the outputs off the correctly rounded value only)
    max_ulp: float | None = 0.0
    worst: dict | None = None
    special_mismatches: int = 0  # outputs wrong at special values (NaN, infinities, the special pairs), of which
    nan_mismatches: int = 0  # a NaN against a number, or a number against a NaN
    inf_mismatches: int = 0  # an infinity against a finite value due, or a finite value against an infinity due
    special_examples: list = field(default_factory=list)
    signed_zero_mismatches: int = 0
    signed_zero_example: dict | None = None
    subnormal_flushes: int = 0
    flush_example: dict | None = None
    properties: list = field(default_factory=list)
    batches: list = field(default_factory=list)  # per sampled batch: label, pairs, max ULP, specials wrong
    elapsed_s: float = 0.0
    command: str = ""
    target_version: str = ""

    @property
    def ok(self) -> bool:
        return self.status == "ok" and self.special_mismatches == 0

    def to_dict(self) -> dict:
        return _plain(asdict(self))

    def gate_accuracy(self) -> dict:
        """The result as a gate check's `accuracy` (the keys reports read), kind "pairs"."""
        d = self.to_dict()
        w = self.worst or {}
        d.update(
            {
                "kind": "pairs",
                "inputs_checked": self.pairs,
                "notes": self.notes(),
                "target_info": {"name": self.target, "kind": "binary", "version": self.target_version},
            }
        )
        fmt = get_format(self.dtype)

        def bits(v):
            return "0x" + format(int(np.array([v]).astype(fmt.dtype).view(fmt.uint)[0]), f"0{fmt.bits // 4}x")

        d["attrs"] = {k: {"exact": repr(v), "value": v} for k, v in self.attrs.items()}
        if w:
            d.update(
                {
                    "worst_input": w["x"],
                    # the reports show one input: the pair's second one goes with the first's bits
                    "worst_input_bits": f"{bits(w['x'])}; y = {w['y']!r} ({bits(w['y'])})",
                    "worst_output": w["got"],
                    "worst_output_bits": bits(w["got"]),
                    "worst_reference": w["want"],
                    "worst_reference_bits": bits(w["want"]),
                    "worst_exact": None,
                }
            )
        else:
            d["max_ulp"] = None
        return _plain(d)

    def notes(self) -> list[str]:
        out = []
        w = self.worst
        if w:
            out.append(
                f"worst pair: x = {w['x']!r}, y = {w['y']!r}: output {w['got']!r}, correctly rounded {w['want']!r} "
                f"({w['batch']})" + ("" if w.get("replayed", True) else "; not reproduced when run again")
            )
        if self.special_mismatches:
            e = self.special_examples[0]
            out.append(
                f"{self.special_mismatches} outputs wrong at special values (NaN, infinities, the special pairs), "
                f"first x = {e['x']!r}, y = {e['y']!r}: {e['got']!r} where {e['want']!r} is due"
            )
        if self.signed_zero_mismatches:
            e = self.signed_zero_example
            out.append(f"{self.signed_zero_mismatches} zeros of the wrong sign, first x = {e['x']!r}, y = {e['y']!r}")
        if self.subnormal_flushes:
            e = self.flush_example
            out.append(
                f"{self.subnormal_flushes} subnormal results flushed to zero (counted apart from the ULP figure), "
                f"first x = {e['x']!r}, y = {e['y']!r}: 0 where {e['want']!r} is due"
            )
        if self.error and self.status == "ok":
            out.append(self.error)
        return out


def _plain(v):
    if isinstance(v, float) and not math.isfinite(v):
        return str(v)
    if isinstance(v, dict):
        return {str(k): _plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    return v


def command(op, target: str, fmt, o: PairOptions) -> str:
    attrs = "".join(f" --attr {k}={v!r}" for k, v in o.attrs)
    return (
        f"opcert accuracy {op.name} --dtype {fmt.name} --target {target}"
        + (f" --standard {o.standard}" if o.standard else "")
        + attrs
        + (" --exhaustive" if o.exhaustive else f" --samples {o.samples} --seed {o.seed}")
    )


def settle(op: BinaryOperator, fmt, o: PairOptions) -> PairOptions:
    """o with its defaults; UsageError for what it cannot run."""
    if fmt.kind != "float":
        raise UsageError(f"{op.name} takes floating-point tensors; allowed: float16, bfloat16, float32, float64")
    if o.exhaustive and fmt.bits != 16:
        raise UsageError(
            f"exhaustive covers every pair of a 16-bit format (2^32 pairs); {fmt.name} pairs are 2^{2 * fmt.bits}: "
            "they are sampled (no --exhaustive, --samples N)"
        )
    std = op.standard(o.standard)
    for k, _ in o.attrs:
        if not std.has(k):
            allowed = ", ".join(std.attribute_names) or "none"
            raise UsageError(f"{op.name} ({std.key}) has no attribute {k!r}; its attributes: {allowed}")
    o = replace(o, standard=std.key, samples=DEFAULT_PAIRS if o.samples is None else int(o.samples))
    if o.samples < 1:
        raise UsageError(f"samples must be 1 or more (got {o.samples})")
    return o


def attributes(op, std, o: PairOptions) -> dict:
    """Every attribute of the standard, at its default unless given (binary32 values)."""
    a = {k: float(v) for k, v in (std.defaults or {}).items()}
    a.update({k: float(np.float32(v)) for k, v in o.attrs})
    return a


def call(tgt, op, std, x, y, attrs) -> np.ndarray:
    """The target's output, checked: an array of x's dtype in the broadcast shape (anything else, or an exception,
    is a TargetFailure naming the call)."""
    shape = np.broadcast_shapes(x.shape, y.shape)
    try:
        with (
            activity(f"running on {x.dtype.name} pairs of shapes {x.shape} and {y.shape}"),
            np.errstate(all="ignore"),
            child_ends(tgt.name),
        ):
            z = tgt.call(op, std, x.copy(), y.copy(), dict(attrs))
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # noqa: BLE001 - whatever the target raises (SystemExit too) is its failure
        raise TargetFailure(f"{type(exc).__name__}: {str(exc)[:300]} (inputs {x.shape} and {y.shape})") from None
    if not isinstance(z, np.ndarray):
        try:
            z = np.asarray(z)
        except Exception:  # noqa: BLE001
            raise TargetFailure(f"returned {type(z).__name__}, not an array") from None
    if z.shape != shape or z.dtype != x.dtype:
        raise TargetFailure(f"returned {z.dtype} {z.shape} for inputs of {x.dtype} {x.shape} and {y.shape}")
    return z


def _same(a, b, fmt) -> np.ndarray:
    """Bit for bit, any NaN for any NaN."""
    ua, ub = a.view(fmt.uint), b.view(fmt.uint)
    return (ua == ub) | (np.isnan(a) & np.isnan(b))


def _near_value(x, y, fmt, attrs):
    """(hi, lo): the exact pow(g, y) as hi + lo, close enough for the ULP figure (module docstring)."""
    g = x.astype(np.float64) * attrs.get("scale", 1.0) + attrs.get("bias", 0.0)
    if fmt.name == "float64":
        gl = x.astype(np.longdouble) * np.longdouble(attrs.get("scale", 1.0)) + np.longdouble(attrs.get("bias", 0.0))
        with np.errstate(all="ignore"):
            p = np.power(gl, y.astype(np.longdouble))
            hi = p.astype(np.float64)
            lo = np.where(np.isfinite(hi), (p - hi).astype(np.float64), 0.0)
        return hi, lo
    with np.errstate(all="ignore"):
        return pow_record.numpy_power(g, y.astype(np.float64)), np.zeros(x.shape)


def _special_pairs(x, y, fmt, attrs=None) -> np.ndarray:
    """The pairs of IEEE 754's special cases of pow: a zero, an infinity or a NaN among the inputs, the base +-1.
    With a scale-bias other than (1, 0) (DirectML's), the base is g = x * scale + bias: the pairs whose case x and y
    alone decide (a NaN, an infinite exponent, the exponent 0, x = +-inf at a nonzero scale)."""
    a, b = x.astype(np.float64), y.astype(np.float64)
    scale, bias = (attrs or {}).get("scale", 1.0), (attrs or {}).get("bias", 0.0)
    if scale == 1.0 and bias == 0.0:
        return ~np.isfinite(a) | ~np.isfinite(b) | (a == 0) | (b == 0) | (np.abs(a) == 1)
    return np.isnan(a) | ~np.isfinite(b) | (b == 0) | (np.isinf(a) & (scale != 0))


class Tally:
    """The counts over every batch, and where the worst pair and the first of each finding were."""

    def __init__(self, res: PairResult, fmt, attrs: dict):
        self.res, self.fmt, self.attrs = res, fmt, attrs
        self.worst_at = None  # (batch key, flat index)

    def add(self, label: str, key, x, y, z, ref, every: bool = True) -> None:
        """One batch. every: measure the error of every output (samples); else only of the outputs off the correctly
        rounded value (every pair of a format: theirs exceed every correctly rounded one's)."""
        fmt, res = self.fmt, self.res
        res.pairs += int(z.size)
        same = _same(z, ref, fmt)
        res.correctly_rounded += int(np.count_nonzero(same))
        bad = np.flatnonzero(~same) if not every else np.arange(z.size)
        if not bad.size:
            return
        xb, yb, zb, rb = x.ravel()[bad], y.ravel()[bad], z.ravel()[bad], ref.ravel()[bad]
        z64, r64 = zb.astype(np.float64), rb.astype(np.float64)
        wrong = ~_same(zb, rb, fmt)
        nan = np.isnan(z64) != np.isnan(r64)
        at_special = _special_pairs(xb, yb, fmt, self.attrs)
        inf = (np.isinf(z64) | np.isinf(r64)) & ~nan & at_special
        special = wrong & (at_special | nan)
        zero_sign = wrong & (z64 == 0) & (r64 == 0)
        flush = wrong & (z64 == 0) & (r64 != 0) & (np.abs(r64) < 2.0**fmt.emin) & ~special
        special &= ~zero_sign
        res.nan_mismatches += int(np.count_nonzero(special & nan))
        res.inf_mismatches += int(np.count_nonzero(special & inf))
        if np.any(special):
            k = np.flatnonzero(special)
            res.special_mismatches += int(k.size)
            if len(res.special_examples) < 5:
                res.special_examples += [
                    self._pair(xb, yb, zb, rb, i, label) for i in k[: 5 - len(res.special_examples)]
                ]
        if np.any(zero_sign):
            k = np.flatnonzero(zero_sign)
            res.signed_zero_mismatches += int(k.size)
            res.signed_zero_example = res.signed_zero_example or self._pair(xb, yb, zb, rb, k[0], label)
        if np.any(flush):
            k = np.flatnonzero(flush)
            res.subnormal_flushes += int(k.size)
            res.flush_example = res.flush_example or self._pair(xb, yb, zb, rb, k[0], label)
        # the errors: of every number that is no special pair's (samples), or of every wrong one (every pair)
        # (a correctly rounded infinity is an overflow: the ULP definition's 2^(emax + 1) does not measure it)
        rest = ~(special | zero_sign | flush) & ~at_special & ~np.isnan(r64) & (wrong | np.isfinite(r64))
        if not np.any(rest):
            return
        k = np.flatnonzero(rest)
        hi, lo = _near_value(xb[k], yb[k], fmt, self.attrs)
        err = ulp_error(z64[k], hi, lo, fmt)
        err = np.where(np.isnan(err), np.inf, err)  # an infinity against a finite value beyond binary64's range
        i = int(np.argmax(err))
        if err[i] > (res.max_ulp or 0.0):
            res.max_ulp = float(err[i])
            res.worst = self._pair(xb, yb, zb, rb, k[i], label)
            res.worst["ulp"] = res.max_ulp
            self.worst_at = (key, int(bad[k[i]]))

    @staticmethod
    def _pair(xb, yb, zb, rb, i, label) -> dict:
        return {
            "x": float(xb[i]),
            "y": float(yb[i]),
            "got": float(zb[i]),
            "want": float(rb[i]),
            "batch": label,
        }

    def exact_worst(self, op, std) -> None:
        """The worst pair's error recomputed from Arb's enclosure of the exact value (or its rational value)."""
        w = self.res.worst
        if not w or math.isnan(w["got"]):
            return
        v = _exact(w["x"], w["y"], self.attrs)
        if v is None:
            return
        e = float(ulp_error_exact(w["got"], v, self.fmt))
        w["ulp"] = e
        self.res.max_ulp = e


def _exact(x: float, y: float, attrs: dict) -> Fraction | None:
    """pow(g, y) to 2^-200 relative, as a rational (None where it is not a finite real)."""
    g = Fraction(x) * Fraction(attrs.get("scale", 1.0)) + Fraction(attrs.get("bias", 0.0))
    b = Fraction(y)
    try:
        v = pow_record.exact_power(g, b)
    except (ZeroDivisionError, pow_record.OutsideDomain):
        return None
    if v is not None:
        return v
    old = ctx.prec
    ctx.prec = 300
    try:
        r = pow_record.arb_power(pow_record.arb_of_fraction(g), pow_record.arb_of_fraction(b))
        m, e = r.mid().man_exp()
        return Fraction(int(m)) * Fraction(2) ** int(e)
    except (ValueError, pow_record.OutsideDomain):
        return None
    finally:
        ctx.prec = old


def measure_pairs(op, target: str = "opcert", dtype: str = "float32", options: PairOptions | None = None, **kw):
    """Measure `target` on the binary operator `op` in `dtype` (options: PairOptions, or its fields as keywords).
    An untrusted target runs in a supervised worker: a crash is a result (status crashed), never opcert's."""
    o = replace(options or PairOptions(), **kw)
    op = get_binary_operator(op)
    fmt = get_format(dtype)
    o = settle(op, fmt, o)
    std = op.standard(o.standard)
    attrs = attributes(op, std, o)
    if target != "opcert" and o.isolation == "process" and not in_worker():
        try:
            return run_isolated(measure_pairs, op.name, target, fmt.name, replace(o, isolation="none"))
        except WorkerLost as lost:
            return PairResult(
                op.name, target, fmt.name, std.key, attrs, status="crashed", error=f"target {target} {lost}",
                exhaustive=o.exhaustive, command=command(op, target, fmt, o),
            )  # fmt: skip
    t0 = time.perf_counter()
    res = PairResult(op.name, target, fmt.name, std.key, attrs, exhaustive=o.exhaustive)
    res.command = command(op, target, fmt, o)
    tgt = binary_targets.load(target)
    res.target_version = str(getattr(tgt, "version", ""))
    why = tgt.unsupported(op, std, fmt.name, attrs)
    if why:
        res.status, res.error = "unsupported", why
        res.elapsed_s = time.perf_counter() - t0
        return res
    try:
        with np.errstate(invalid="ignore", over="ignore"):  # casts of NaN and of huge values to the 16-bit formats
            if o.exhaustive:
                _every_pair(res, op, std, fmt, tgt, attrs, o)
            else:
                _sampled(res, op, std, fmt, tgt, attrs, o)
    except TargetFailure as exc:
        res.status, res.error = "crashed", f"target {target}: {exc}"
    if fmt.name not in {d for u in std.support for d in u.dtypes}:
        res.error = (res.error + "; " if res.error else "") + (
            f"{std.key}'s {std.op_name} does not list {fmt.name}: measured as asked"
        )
    res.elapsed_s = time.perf_counter() - t0
    return res


def _claimed(op, std, attrs) -> dict:
    """The declared properties of this standard, and why one is not claimed at these attributes."""
    plain = attrs.get("scale", 1.0) == 1.0 and attrs.get("bias", 0.0) == 0.0
    out = {}
    for p in op.properties_of(std.key):
        why = None
        if p.kind in ("monotonic_first", "monotonic_second", "parity", "range") and not plain:
            why = "claimed of the power itself: at scale 1 and bias 0"
        out[p.name] = (p, why)
    return out


# ---------------------------------------------------------------- property rules over a grid (rows: y, columns: x)


def _rule_first(xs64, y64):
    """For each row (exponent y): the columns whose x the monotonicity in x covers, and its direction."""
    rows = []
    for r, yv in enumerate(y64):
        if yv > 0:
            rows.append((r, (xs64 >= 0) & ~np.isnan(xs64), +1))
        elif yv < 0:
            rows.append((r, (xs64 > 0) & ~np.isnan(xs64), -1))
    return rows


def _first_violations(z, xs64, y64, cols_sorted=True):
    """(count, first (row, column)) of steps against the rule along each row; x ascending along the row."""
    count, first = 0, None
    zf = z.astype(np.float64)
    for r, cols, sign in _rule_first(xs64, y64):
        idx = np.flatnonzero(cols)
        if idx.size < 2:
            continue
        v = zf[r, idx]
        ok = v[1:] >= v[:-1] if sign > 0 else v[1:] <= v[:-1]
        bad = np.flatnonzero(~ok)
        if bad.size:
            count += int(bad.size)
            if first is None:
                first = (r, int(idx[bad[0]]), int(idx[bad[0] + 1]))
    return count, first


def _second_violations(z, xs64, y64):
    """Steps against the monotonicity in y down each column (y ascending down the rows, NaN rows left out)."""
    keep = np.flatnonzero(~np.isnan(y64))
    if keep.size < 2:
        return 0, None
    zf = z[keep].astype(np.float64)
    up = (xs64 > 1) & ~np.isnan(xs64)
    down = (xs64 > 0) & (xs64 < 1)
    count, first = 0, None
    for cols, sign in ((up, 1), (down, -1)):
        c = np.flatnonzero(cols)
        if not c.size:
            continue
        v = zf[:, c]
        ok = v[1:] >= v[:-1] if sign > 0 else v[1:] <= v[:-1]
        bad = np.argwhere(~ok)
        if bad.size:
            count += int(bad.shape[0])
            if first is None:
                r, j = bad[0]
                first = (int(keep[r]), int(keep[r + 1]), int(c[j]))
    return count, first


def _parity_violations(z, xs, y64, fmt, neg_index):
    """pow(-x, y) against +-pow(x, y) for the integer rows, bit for bit (NaN for NaN)."""
    count, first = 0, None
    ok_cols = neg_index >= 0
    for r, yv in enumerate(y64):
        if not (math.isfinite(yv) and yv == math.floor(yv)):
            continue
        a = z[r, ok_cols]
        b = z[r, neg_index[ok_cols]]
        if yv % 2:
            b = (b.view(fmt.uint) ^ fmt.uint.type(1 << (fmt.bits - 1))).view(fmt.dtype)
        bad = np.flatnonzero(~_same(a, b, fmt))
        if bad.size:
            count += int(bad.size)
            if first is None:
                first = (r, int(np.flatnonzero(ok_cols)[bad[0]]))
    return count, first


def _range_violations(z, xs, y64):
    xs64 = xs.astype(np.float64)
    pos = (xs64 > 0) | ((xs64 == 0) & ~np.signbit(xs64))
    count, first = 0, None
    zf = z.astype(np.float64)
    for r, yv in enumerate(y64):
        even = math.isfinite(yv) and yv % 2 == 0
        cols = np.ones(xs64.shape, bool) if even else pos
        bad = np.flatnonzero(cols & (zf[r] < 0))
        if bad.size:
            count += int(bad.size)
            if first is None:
                first = (r, int(bad[0]))
    return count, first


class _Verdicts:
    """Violations and pairs looked at per property, over batches; the first counterexample of each."""

    def __init__(self, claimed: dict):
        self.claimed = claimed
        self.seen = {n: 0 for n in claimed}
        self.bad = {n: 0 for n in claimed}
        self.example = {}

    def add(self, name, looked: int, count: int, example):
        if name not in self.claimed or self.claimed[name][1]:
            return
        self.seen[name] += looked
        self.bad[name] += count
        if count and name not in self.example:
            self.example[name] = example

    def results(self, method: str, complete: bool) -> list[dict]:
        out = []
        for name, (p, why) in self.claimed.items():
            if why:
                status, note = "skipped", why
            elif self.bad[name]:
                status, note = "refuted", None
            elif not self.seen[name]:
                status, note = "skipped", "no pair of its domain was measured"
            else:
                status, note = ("proved" if complete else "checked"), None
            out.append(
                PropertyResult(
                    p.name, p.kind, p.statement, status, method if status != "skipped" else "-",
                    counterexample=self.example.get(name), note=note, inputs_checked=self.seen[name] or None,
                    violations=self.bad[name] if status == "refuted" else None,
                ).to_dict()
            )  # fmt: skip
        return out


def _grid_properties(v: _Verdicts, xs, ys, z, ref, fmt, neg_index, attrs, z_broadcast=None, prev=None, label=""):
    """Every grid property of one grid (rows: ys ascending, columns: xs ascending); `prev`: the previous grid's
    last row (its y and outputs) for the monotonicity in y across blocks."""
    xs64, y64 = xs.astype(np.float64), ys.astype(np.float64)

    def ex(r, c, extra=None):
        d = {"x": float(xs64[c]), "y": float(y64[r]), "output": float(z[r, c]), "grid": label}
        return {**d, **(extra or {})}

    sp = _special_pairs(xs[None, :], ys[:, None], fmt, attrs)
    wrong = sp & ~_same(z, ref, fmt)
    k = np.argwhere(wrong)
    v.add(
        "special_cases", int(sp.sum()), int(k.shape[0]),
        ex(*k[0], {"due": float(ref[tuple(k[0])])}) if k.size else None,
    )  # fmt: skip
    n, first = _first_violations(z, xs64, y64)
    looked = sum(int(c.sum()) for _, c, _ in _rule_first(xs64, y64))
    v.add(
        "monotonic_base", looked, n,
        ex(first[0], first[1], {"next_x": float(xs64[first[2]]), "next_output": float(z[first[0], first[2]])})
        if first else None,
    )  # fmt: skip
    zz, yy = (np.vstack([prev[1][None, :], z]), np.concatenate([[prev[0]], y64])) if prev is not None else (z, y64)
    n, first = _second_violations(zz, xs64, yy)
    v.add(
        "monotonic_exponent", zz.shape[0] * int(((xs64 > 0) & (xs64 != 1)).sum()), n,
        {"x": float(xs64[first[2]]), "y": float(yy[first[0]]), "output": float(zz[first[0], first[2]]),
         "next_y": float(yy[first[1]]), "next_output": float(zz[first[1], first[2]]), "grid": label}
        if first else None,
    )  # fmt: skip
    if neg_index is not None:
        n, first = _parity_violations(z, xs, y64, fmt, neg_index)
        ints = sum(1 for t in y64 if math.isfinite(t) and t == math.floor(t))
        v.add(
            "parity", ints * int((neg_index >= 0).sum()), n,
            ex(*first, {"output_at_minus_x": float(z[first[0], neg_index[first[1]]])}) if first else None,
        )  # fmt: skip
    n, first = _range_violations(z, xs, y64)
    v.add("nonnegative", z.size, n, ex(*first) if first else None)
    if z_broadcast is not None:
        k = np.argwhere(~_same(z, z_broadcast, fmt))
        v.add(
            "layout", z.size, int(k.shape[0]),
            ex(*k[0], {"broadcast_output": float(z_broadcast[tuple(k[0])])}) if k.size else None,
        )  # fmt: skip


def _negation_index(xs) -> np.ndarray:
    """For each column, the column holding -x (-1 where there is none: NaN, or -x not in the grid)."""
    x64 = xs.astype(np.float64)
    order = {}
    for i, (b, s) in enumerate(zip(x64, np.signbit(x64))):
        if not math.isnan(b):
            order[(abs(b), bool(s))] = i
    return np.array(
        [-1 if math.isnan(b) else order.get((abs(b), not bool(s)), -1) for b, s in zip(x64, np.signbit(x64))]
    )


def _negation_index_all(fmt, xs) -> np.ndarray:
    """_negation_index for every value of a 16-bit format, in array arithmetic (65,536 columns)."""
    bits = xs.view(fmt.uint).astype(np.int64)
    where = np.empty(1 << 16, np.int64)
    where[bits] = np.arange(bits.size)
    out = where[bits ^ 0x8000]
    out[np.isnan(xs.astype(np.float64))] = -1
    return out


def _broadcast(tgt, op, std, xs, ys, attrs):
    return call(tgt, op, std, xs[None, :], ys[:, None], attrs)


def _sampled(res, op, std, fmt, tgt, attrs, o: PairOptions) -> None:
    tally = Tally(res, fmt, attrs)
    batches = P.sampled_pairs(fmt, o.samples, o.seed)
    calls = {}
    for i, (label, x, y) in enumerate(batches):
        z = call(tgt, op, std, x, y, attrs)
        ref = op.reference(x, y, fmt, std.key, **attrs)
        calls[i] = (x, y, z, ref)
        before = (res.special_mismatches, res.max_ulp)
        tally.add(label, i, x, y, z, ref)
        res.batches.append({"label": label, "pairs": int(z.size), "specials_wrong": res.special_mismatches - before[0]})
    _replay(res, tally, lambda key: calls[key][:2], tgt, op, std, attrs)
    tally.exact_worst(op, std)
    v = _Verdicts(_claimed(op, std, attrs))
    for (label, x, y), (_, _, z, ref) in zip(batches, calls.values()):  # the special pairs among the sampled ones
        sp = _special_pairs(x, y, fmt, attrs)
        k = np.flatnonzero(sp & ~_same(z, ref, fmt))
        first = {"x": float(x[k[0]]), "y": float(y[k[0]]), "output": float(z[k[0]]), "due": float(ref[k[0]]),
                 "batch": label} if k.size else None  # fmt: skip
        v.add("special_cases", int(sp.sum()), int(k.size), first)
    for label, (xs, ys) in (
        ("consecutive bases", P.monotone_runs(fmt, o.seed)),
        ("consecutive exponents", P.exponent_runs(fmt, o.seed)),
        ("landmarks", (np.sort(P.landmarks(fmt).astype(np.float64)).astype(fmt.dtype),) * 2),
    ):
        z = _broadcast(tgt, op, std, xs, ys, attrs)
        gx, gy = np.broadcast_arrays(xs[None, :], ys[:, None])
        flat = call(tgt, op, std, gx.ravel().copy(), gy.ravel().copy(), attrs).reshape(z.shape)
        ref = op.reference(gx.ravel().copy(), gy.ravel().copy(), fmt, std.key, **attrs).reshape(z.shape)
        neg = _negation_index(xs) if std.key == "onnx" else None
        _grid_properties(v, xs, ys, flat, ref, fmt, neg, attrs, z_broadcast=z, label=label)
    res.properties = v.results("samples", complete=False)


def _replay(res, tally, inputs, tgt, op, std, attrs) -> None:
    if tally.worst_at is None:
        return
    key, i = tally.worst_at
    x, y = inputs(key)
    z = call(tgt, op, std, x, y, attrs)
    res.worst["replayed"] = bool(_same(z.ravel()[i : i + 1], np.array([res.worst["got"]], dtype=z.dtype), tally.fmt)[0])


def _block_range(nb: int):
    """The blocks a sweep runs: all of them (tests run a few through the same code)."""
    return range(nb)


def _every_pair(res, op, std, fmt, tgt, attrs, o: PairOptions) -> None:
    """Every pair of the 16-bit format: 1,024 blocks of 64 exponents against every base, the next block's calls
    beside this block's reference and checks."""
    xs = P.all_values(fmt)
    neg = _negation_index_all(fmt, xs) if std.key == "onnx" else None
    tally = Tally(res, fmt, attrs)
    v = _Verdicts(_claimed(op, std, attrs))
    nb = xs.size // P.BLOCK_ROWS
    prev = None

    def grid(b):
        ys = xs[b * P.BLOCK_ROWS : (b + 1) * P.BLOCK_ROWS]
        gx, gy = np.broadcast_arrays(xs[None, :], ys[:, None])
        return ys, gx.ravel().copy(), gy.ravel().copy()

    def calls(b):
        ys, fx, fy = grid(b)
        z = call(tgt, op, std, fx, fy, attrs).reshape(ys.size, xs.size)
        return ys, fx, fy, z, _broadcast(tgt, op, std, xs, ys, attrs)

    order = _block_range(nb)
    progress = Progress(f"{op.name} {fmt.name} {res.target}: every pair", len(order), "blocks") if o.progress else None
    if progress:
        progress.__enter__()
    with ThreadPoolExecutor(1, thread_name_prefix="opcert-pow-calls") as pool:
        ahead = pool.submit(calls, order[0])
        for k, b in enumerate(order):
            ys, fx, fy, z, zb = ahead.result()
            if k + 1 < len(order):
                ahead = pool.submit(calls, order[k + 1])
            ref = op.reference(fx, fy, fmt, std.key, **attrs).reshape(z.shape)
            label = f"block {b} of {nb}: y from {float(ys[0])!r} to {float(ys[-1])!r}"
            tally.add(label, b, fx, fy, z.ravel(), ref.ravel(), every=False)
            _grid_properties(v, xs, ys, z, ref, fmt, neg, attrs, z_broadcast=zb, prev=prev, label=label)
            keep = np.flatnonzero(~np.isnan(ys.astype(np.float64)))
            if keep.size:
                prev = (float(ys[keep[-1]]), z[keep[-1]].copy())
            if progress:
                progress.advance(1)
    if progress:
        progress.__exit__(None, None, None)
    _replay(res, tally, lambda key: grid(key)[1:], tgt, op, std, attrs)
    tally.exact_worst(op, std)
    if res.worst is None:
        res.max_ulp = None  # every output correctly rounded: within 0.5 ULP, not measured finer
    res.properties = v.results("enumeration", complete=True)
