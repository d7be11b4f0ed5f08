"""Accuracy and properties of a tensor operator's target, over rows.

Every output element is compared with the correctly rounded reference of its row (spec.row_reference):
its error in ULPs of the exact value (verify.ulp), NaN and infinities bit for bit against the rule for
rows with infinite entries (spec.tensor.limit_row, or the standard's key's `+ieee`: spec.tensor.INF_RULES;
the result names it). Beside it, each row's sum: Softmax's outputs sum to 1, LogSoftmax's
exponentials too, within the bound that half an ULP (or the check's `max_ulp`) per output allows.

The rows (`cases`): stratified random rows of lengths 1 to 4,096 at several scales, and the hard cases
where runtimes' softmax bugs live: values whose exponential overflows the working format unless the row
maximum is subtracted, one dominant element with others whose outputs are subnormal, ties and equal
elements (a float16 sum of 4,096 ones stalls at 2,048), long rows (10^5), NaN and +-inf entries, rows of
-inf, empty rows, and the reduction axis in every position of 1- to 4-d shapes (several axes for
DirectML's `1` forms). The properties are decided on those outputs and on the target run again on
shifted, permuted and nudged rows: `checked` (a sample), or `refuted` with a replayed row.
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass, field, replace

import numpy as np

from opcert.errors import TargetFailure, UsageError
from opcert.formats import get_format
from opcert.progress import Progress
from opcert.spec import get_tensor_operator
from opcert.spec.attrs import describe
from opcert.spec.row_reference import reference_detailed
from opcert.spec.tensor import (
    DEFAULT_INF_RULE,
    block_call,
    groups_of_standard,
    inf_rule_text,
    reduced_axes,
    to_rows,
)
from opcert.targets import tensor as tensor_targets
from opcert.verify.tensor import properties as row_properties
from opcert.verify.tensor.calls import EXP, call_target, row_excerpt
from opcert.verify.tensor.layouts import other_axis
from opcert.verify.tensor.pairs import PairSweep
from opcert.verify.ulp import same_bits, ulp_error
from opcert.workers import WorkerLost, in_worker, run_isolated

DEFAULT_ROWS = 20_000  # elements of the random rows (the hard cases come on top)
LONGEST_ROW = 100_000  # the longest row of `cases`: a binary64 budget that depends on n is taken there


@dataclass
class Case:
    label: str
    x: np.ndarray
    axis: int | None = None
    axes: tuple | None = None
    # the case's own rows: the first own_rows of x's rows (None: every row). GroupNormalization's tensors hold its
    # rows as spec.tensor.block_call makes them, the last sample's missing groups filled with copies of the first
    # rows: the target computes them, the counts and figures leave them out
    own_rows: int | None = None

    def rows_of(self, a: np.ndarray, reduced) -> np.ndarray:
        """The case's own rows of `a` (its input, an output or the reference, of x's shape or a reduction's)."""
        return to_rows(a, reduced)[0][: self.own_rows]


@dataclass
class RowResult:
    op: str
    target: str
    dtype: str
    standard: str
    status: str = "ok"  # ok | unsupported | crashed
    error: str | None = None
    elements: int = 0
    rows: int = 0
    max_ulp: float = 0.0
    worst: dict | None = None
    special_mismatches: int = 0
    nan_mismatches: int = 0
    inf_mismatches: int = 0
    correctly_rounded: int = 0
    subnormal_flushes: int = 0  # outputs of 0 where the correctly rounded value is subnormal: apart
    flush_example: dict | None = None
    signed_zero_mismatches: int = 0  # a zero of the other sign than the correctly rounded zero: apart
    signed_zero_example: dict | None = None
    special_examples: list = field(default_factory=list)
    call_failures: list = field(default_factory=list)  # cases where the target raised or returned no array
    pairs: dict | None = None  # exhaustive: every row of two 16-bit values (verify.tensor.pairs)
    row_sum: dict | None = None
    properties: list = field(default_factory=list)
    cases: list = field(default_factory=list)  # per case: label, shape, axes, max ULP, specials wrong
    elapsed_s: float = 0.0
    command: str = ""
    target_version: str = ""
    allowed_ulp: float = 0.5  # the per-output error the row properties' bounds allow
    inf_rule: str = DEFAULT_INF_RULE  # the rule rows with infinite entries were held to (spec.tensor.INF_RULES)
    inf_rule_text: str = ""  # that rule in words, and how to choose the other
    enforcement: dict | None = None  # which declared properties the command enforced, reported, waived
    attrs: dict = field(default_factory=dict)  # the attributes held to (spec.attrs.describe): LayerNorm's epsilon

    @property
    def ok(self) -> bool:
        return self.status == "ok" and self.special_mismatches == 0 and not self.call_failures

    def to_dict(self) -> dict:
        return asdict(self)

    def gate_accuracy(self) -> dict:
        """The result as a gate check's `accuracy` (the keys the reports and `opcert diff` read), with the
        rows' own facts beside them (kind "rows")."""
        d = self.to_dict()
        w = self.worst or {}
        fmt = get_format(self.dtype)

        def bits(v):
            return "0x" + format(int(np.array([v]).astype(fmt.dtype).view(fmt.uint)[0]), f"0{fmt.bits // 4}x")

        d.update(
            {
                "kind": "rows",
                "inputs_checked": self.elements,
                "attrs": self.attrs,
                "notes": self._notes(),
                "target_info": {"name": self.target, "kind": "tensor", "version": self.target_version},
            }
        )
        if self.max_ulp is not None and w:
            d.update(
                {
                    "worst_input": w["x"],
                    "worst_input_bits": bits(w["x"]),
                    "worst_output": w["got"],
                    "worst_output_bits": bits(w["got"]),
                    "worst_reference": w["want"],
                    "worst_reference_bits": bits(w["want"]),
                    "worst_exact": None,
                }
            )
        else:
            d["max_ulp"] = None
        for k, v in list(d.items()):  # JSON: no NaN or inf numbers in the rows' excerpts
            d[k] = _plain(v)
        return d

    def _notes(self) -> list[str]:
        out = [self.inf_rule_text] if self.inf_rule_text else []
        w = self.worst
        if w:
            shown = (
                f"the row {w['row']}"
                if w.get("row")
                else f"a row of {w['length']} (row maximum {w['row_max']!r}; around it: {w['neighbours']})"
            )
            out.append(
                f"worst element: position {w['position']} of {shown} ({w['case']})"
                + ("" if w.get("replayed", True) else "; not reproduced when run again")
            )
        rs = self.row_sum
        if rs:
            what = "the outputs" if rs["sum_of"] == "y" else "the outputs' exponentials"
            out.append(
                f"row sums: |sum of {what} - 1| up to {rs['max_abs_error']:.3g} = "
                f"{rs['max_units_of_2^-p']:.3g} x 2^-{get_format(self.dtype).p}, in a row of {rs['row_length']} "
                f"({rs['case']})"
            )
        skipped = [c for c in self.cases if "skipped" in c]
        if skipped:
            out.append(f"{len(skipped)} case(s) not given to the target: {skipped[0]['skipped']}")
        if self.error and self.status == "ok":
            out.append(self.error)
        if self.signed_zero_mismatches:
            e = self.signed_zero_example
            out.append(
                f"{self.signed_zero_mismatches} zeros of the wrong sign"
                + (
                    f", first at position {e['position']} of a row of {e['length']} ({e['case']}): {e['got']!r} where "
                    f"{e['want']!r} is due"
                    if e
                    else ", in the pairs"
                )
            )
        if self.subnormal_flushes:
            e = self.flush_example
            out.append(
                f"{self.subnormal_flushes} subnormal outputs flushed to zero (counted apart from the ULP "
                "figure)"
                + (
                    f", first at position {e['position']} of a row of {e['length']} ({e['case']}): "
                    f"0 where {e['want']!r} is due"
                    if e
                    else ", in the pairs"
                )
            )
        for f in self.call_failures[:3]:
            out.append(f"the target failed on {f['case']} (shape {f['shape']}, axes {f['axes']}): {f['error']}")
        return out


def _plain(v):
    """JSON-safe: NaN and infinities as strings, recursively."""
    if isinstance(v, float) and not math.isfinite(v):
        return str(v)
    if isinstance(v, dict):
        return {str(k): _plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    return v


def _fmt_rows(fmt, a):
    return np.asarray(a, dtype=np.float64).astype(fmt.dtype)


def cases(op, std, fmt, samples: int, seed: int) -> list[Case]:
    """The rows a check runs (module docstring), as tensors with the standard's axis arguments."""
    rng = np.random.default_rng(seed)
    kind = std.axes.kind
    out: list[Case] = []

    def rows(label, block):
        """A 2-D block of rows: the last axis reduced (every rule can say so; the spatial rule of a (m, 1, n)
        tensor)."""
        block = _fmt_rows(fmt, block)
        if kind == "coerce-2d" or kind == "single":
            out.append(Case(label, block, axis=1 if block.ndim == 2 else None))
        elif kind == "last":
            out.append(Case(label, block))
        elif kind in ("spatial", "groups"):  # (m, 1, n): one sample's channel per row; groups: one per group
            own = block.shape[0] if kind == "groups" else None
            out.append(Case(label, block_call(std, block)[0], own_rows=own))
        else:
            out.append(Case(label, block, axes=(1,)))

    lengths = [1, 2, 3, 4, 5, 7, 8, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 127, 128, 129, 255, 256, 1000, 4096]
    per = max(1, samples // (3 * len(lengths)))
    for scale in (1.0, 4.0, 16.0):
        for n in lengths:
            m = max(1, per // n)
            rows(f"random rows of {n} (scale {scale:g})", rng.standard_normal((m, n)) * scale)
    HARD_CASES[op.hard_cases](rows, fmt, rng)
    rows("a long row of 100,000", rng.standard_normal((1, 100_000)) * 3)
    inf, nan = np.inf, np.nan
    specials = [
        [nan, 1.0, 2.0],
        [inf, 1.0, 2.0],
        [1.0, inf, inf],
        [-inf, 1.0, 2.0],
        [-inf, -inf, -inf],
        [inf, -inf, 0.0],
        [nan, inf, -inf],
        [0.0, -inf, -inf],
    ]
    rows("NaN and infinite entries", specials)
    rows("empty rows", np.zeros((3, 0)))
    # the reduction axis in every position, several axes
    if kind == "single":
        for shape, axis in (((5,), 0), ((7, 3), 0), ((3, 9, 4), 1), ((2, 3, 17, 2), 2), ((6, 2, 3, 2), 0)):
            out.append(Case(f"shape {shape}, axis {axis}", _fmt_rows(fmt, rng.standard_normal(shape) * 3), axis=axis))
    elif kind == "coerce-2d":
        for shape, axis in (((3, 4, 5), 1), ((2, 3, 4), 0), ((2, 3, 4, 5), 2), ((6,), 0)):
            out.append(
                Case(
                    f"shape {shape}, axis {axis} (rows of the trailing axes)",
                    _fmt_rows(fmt, rng.standard_normal(shape) * 3),
                    axis=axis,
                )
            )
    elif kind == "last":
        for shape in ((1, 1, 5, 7), (9,), (1, 3, 33)):
            out.append(Case(f"shape {shape}", _fmt_rows(fmt, rng.standard_normal(shape) * 3)))
    elif kind == "spatial":
        for shape in ((2, 3, 4, 5), (1, 2, 7), (3, 2, 2, 2, 3)):
            out.append(Case(f"shape {shape}, the spatial axes", _fmt_rows(fmt, rng.standard_normal(shape) * 3)))
    elif kind == "groups":  # one to three channels per group, over no, one, two and three spatial axes
        g = groups_of_standard(std)
        for shape in ((2, 2 * g, 3, 5), (1, 3 * g, 7), (3, g, 2, 2, 3), (4, 2 * g)):
            out.append(
                Case(f"shape {shape}, {g} group(s) of the channels", _fmt_rows(fmt, rng.standard_normal(shape) * 3))
            )
    else:
        for shape, axes in (((4, 3, 5), (0, 2)), ((2, 3, 4), (1,)), ((2, 3, 4, 5), (1, 2, 3)), ((3, 4), (0,))):
            out.append(
                Case(f"shape {shape}, axes {list(axes)}", _fmt_rows(fmt, rng.standard_normal(shape) * 3), axes=axes)
            )
    return out


def _exp_cases(rows, fmt, rng) -> None:
    """Where the bugs of Softmax's family live: the exponential's overflow and underflow, ties, stalled sums."""
    # the exponential overflows the format's own arithmetic, then binary32's, then binary64's, unless the
    # row maximum is subtracted
    big = [v for v in (11.5, 95.0, 720.0) if v < fmt.max_finite / 2]
    for v in big:
        rows(
            f"values near {v:g} (exp overflows without the row maximum subtracted)",
            v + rng.standard_normal((64, 8)) * min(1.0, v / 64),
        )
    # one dominant element, the others' outputs subnormal in the format
    tiny = -math.log(2.0 ** (fmt.emin)) + 2
    dom = np.concatenate([np.zeros((32, 1)), -tiny - rng.uniform(0, 8, (32, 7))], axis=1)
    rows("one dominant element, subnormal outputs for the others", dom)
    ties = rng.integers(0, 3, (256, 6)).astype(np.float64)
    rows("ties (small integers)", ties)
    rows("equal elements: rows of 3 and of 4,096", np.zeros((4, 3)))
    rows("equal elements, 4,096 (a float16 sum stalls at 2,048)", np.full((2, 4096), 1.5))


def _moment_cases(rows, fmt, rng) -> None:
    """Where the normalizations' bugs live (issue 53's classes): a large mean beside a small spread (the
    variance as E[x^2] - E[x]^2 cancels to 0 or below), squares that overflow the format, long rows whose
    sums stall in a 16-bit accumulator, epsilon of the order of the variance, rows of equal values (variance
    0), one outlier, and large and tiny rows."""
    ulp1 = 2.0 ** (1 - fmt.p)
    top = fmt.max_finite
    # consecutive values of the format far from 0: E[x^2] - E[x]^2 in the format's own arithmetic is 0 or
    # negative (LayerNormalization of [40000, 40001, 40002, 40003] in float32 as NaN)
    for mean in (2.0 ** min(fmt.p - 8, 15), 2.0 ** min(fmt.p - 2, 15) * 0.75):
        step = mean * ulp1
        rows(
            f"a large mean ({mean:g}) and a spread of a few values of the format",
            mean + step * rng.integers(0, 8, (64, 4)).astype(np.float64),
        )
    rows("[40000, 40001, 40002, 40003] and its neighbours", 40000.0 + np.arange(4.0)[None, :] + np.arange(8.0)[:, None])
    # x^2 overflows the format: sqrt(max) and beyond
    big = math.sqrt(top) * 2
    if big < top / 8:
        rows(f"values near {big:.4g} (their squares overflow the format)", big * (1 + rng.uniform(-0.5, 0.5, (32, 8))))
    # long rows: a float16 or bfloat16 running sum of 4,096 values near 1.5 stalls
    rows("4,096 values near 1.5 (a 16-bit running sum stalls at 2,048)", 1.5 + rng.uniform(-0.25, 0.25, (2, 4096)))
    # epsilon (1e-5 by default) of the order of the variance: spreads of 1e-2 to 1e-3
    for sd in (3e-3, 1e-2):
        rows(f"spread {sd:g} (variance near epsilon 1e-5)", 1.0 + sd * rng.standard_normal((64, 16)))
    rows("rows of equal values (variance 0): 3 and 4,096", np.full((2, 3), 7.0))
    rows("equal values, 4,096 (variance 0)", np.full((1, 4096), 0.5))
    out = np.zeros((4, 1000))
    out[:, 0] = 1000.0
    rows("one outlier in a row of 1,000 (|y| near sqrt(n - 1))", out + rng.uniform(-1e-3, 1e-3, out.shape))
    tiny = 2.0 ** (fmt.emin + 4)
    rows("tiny values (squares underflow)", tiny * rng.standard_normal((32, 8)))


def _logsumexp_cases(rows, fmt, rng) -> None:
    """LogSumExp's: the normalizations' rows, and rows whose exponentials overflow the format's own arithmetic,
    binary32's or binary64's (log(sum(exp(x))) without the row maximum is inf there), rows far below 0 whose
    exponentials all underflow (log(0) = -inf), and a row whose result is near 0 (log(sum) beside -max)."""
    _moment_cases(rows, fmt, rng)
    for v in (v for v in (11.5, 95.0, 720.0, 1e4) if v < fmt.max_finite / 2):
        rows(f"values near {v:g} (exp overflows without the row maximum subtracted)", v + rng.standard_normal((32, 8)))
        rows(f"values near {-v:g} (exp underflows without the row maximum)", -v + rng.standard_normal((32, 8)))
    rows("rows of 2 near -log(2) (a result near 0)", np.full((4, 2), -math.log(2.0)) + rng.uniform(-1e-3, 1e-3, (4, 2)))


# the hard rows of each operator family (TensorOperator.hard_cases)
HARD_CASES = {"exp": _exp_cases, "moments": _moment_cases, "logsumexp": _logsumexp_cases}


@dataclass(frozen=True)
class RowOptions:
    """How measure_rows measures: whose definition, how many random elements from which seed, the per-output
    error the row-sum, shift and permutation bounds allow (0.5: correctly rounded), an untrusted target in a
    supervised worker ("process") or not ("none"), every row of two 16-bit values too (exhaustive)."""

    standard: str | None = None
    samples: int | None = None
    seed: int = 0
    max_ulp: float = 0.5
    isolation: str = "process"
    exhaustive: bool = False
    attrs: tuple = ()  # (name, value) pairs: LayerNormalization's epsilon; the standard's defaults for the rest


def measure_rows(
    op, target: str = "opcert", dtype: str = "float32", options: RowOptions | None = None, **keywords
) -> RowResult:
    """Measure `target` on the tensor operator `op` in `dtype` over the rows of `cases`, and check the
    declared row properties on them (options: RowOptions, or its fields as keywords). exhaustive (16-bit
    formats): every row of two values too, all 2^32 pairs (verify.tensor.pairs), its properties decided over
    every pair. An untrusted target runs in a supervised worker: a crash is a result (status crashed), never
    opcert's."""
    o = replace(options or RowOptions(), **keywords)
    op, named = get_tensor_operator(op)
    std = op.standard(o.standard or named)
    std = op.with_values(std, dict(o.attrs))
    fmt = get_format(dtype)
    o = _settled(op, fmt, replace(o, standard=std.name, attrs=tuple(op.given(std).items())), std)
    if target != "opcert" and o.isolation == "process" and not in_worker():
        try:
            return run_isolated(measure_rows, op.name, target, dtype, replace(o, isolation="none"))
        except WorkerLost as lost:
            return RowResult(
                op.name,
                target,
                fmt.name,
                std.name,
                status="crashed",
                error=f"target {target} {lost}",
                command=_command(op, target, fmt, o),
            )
    t0 = time.perf_counter()
    res = RowResult(
        op.name,
        target,
        fmt.name,
        std.name,
        command=_command(op, target, fmt, o),
        allowed_ulp=o.max_ulp,
        inf_rule=std.inf_rule,
        inf_rule_text=inf_rule_text(std.inf_rule, op.name, std.name, op.nonfinite),
        attrs=describe(dict(std.attrs), op),
    )
    try:
        tgt = tensor_targets.load(target)  # through the module: tests stand a target in for it
    except UsageError:
        raise
    except Exception as exc:  # noqa: BLE001 - the user's module raised while it was imported: its failure
        res.status, res.error = "crashed", f"target {target} failed to load: {type(exc).__name__}: {exc}"
        res.elapsed_s = time.perf_counter() - t0
        return res
    res.target_version = str(tgt.version)
    all_cases = cases(op, std, fmt, o.samples, o.seed)
    stats = _Stats(res, fmt, o.max_ulp, next((p for p in op.properties if p.kind == "row_sum"), None))
    for case in all_cases:
        reduced = reduced_axes(op, std, case.x.ndim, case.axis, list(case.axes) if case.axes else None)
        why = tgt.unsupported(op, std, fmt.name, reduced, case.x.ndim)
        if why:
            res.cases.append({"label": case.label, "shape": list(case.x.shape), "axes": list(reduced), "skipped": why})
            continue
        ref = reference_detailed(
            op,
            case.x,
            standard=std.name,
            axis=case.axis,
            axes=list(case.axes) if case.axes else None,
            attrs=op.given(std),
        )
        try:
            y = call_target(tgt, op, std, case.x, reduced)
        except TargetFailure as exc:  # a finding about this case; the other cases go on
            res.call_failures.append(
                {"case": case.label, "shape": list(case.x.shape), "axes": list(reduced), "error": str(exc)}
            )
            continue
        stats.add(case, reduced, y, ref)
    if not any("skipped" not in c for c in res.cases) and res.status == "ok" and not res.call_failures:
        res.status = "unsupported"
        res.error = next((c["skipped"] for c in res.cases if "skipped" in c), "no case ran")
    elif res.status == "ok":
        try:
            stats.replay(lambda x, reduced: call_target(tgt, op, std, x, reduced))
            res.properties = _properties(op, std, fmt, tgt, all_cases, stats, o.max_ulp)
            if o.exhaustive:
                _pairs(res, op, std, fmt, tgt, o.max_ulp)
        except TargetFailure as exc:
            res.status, res.error = "crashed", f"called again: {exc}"
    if fmt.name not in {d for u in std.support for d in u.dtypes}:
        res.error = (
            res.error + "; " if res.error else ""
        ) + f"{std.key}'s {std.op_name} does not list {fmt.name}: measured as asked"
    res.elapsed_s = time.perf_counter() - t0
    return res


def _settled(op, fmt, o: RowOptions, std=None) -> RowOptions:
    """o with its default sample size; UsageError for a format, sample size or exhaustive run it cannot take."""
    if o.exhaustive and op.hard_cases != "exp":
        raise UsageError(
            f"exhaustive (every row of two 16-bit values) is Softmax's family's sweep; {op.name}'s rows are "
            "sampled (no --exhaustive)"
        )
    if o.exhaustive and std is not None and std.inf_rule != DEFAULT_INF_RULE:
        raise UsageError(
            f"exhaustive (every row of two 16-bit values) holds rows with infinite entries to the "
            f"{DEFAULT_INF_RULE} rule only; under {std.name} the rows are sampled (no --exhaustive), or give "
            f"--standard {std.key}"
        )
    if fmt.kind != "float":
        raise UsageError(f"{op.name} takes floating-point tensors; allowed: float16, bfloat16, float32, float64")
    if o.exhaustive and fmt.bits != 16:
        raise UsageError(
            f"exhaustive covers every row of two 16-bit values (2^32 pairs); {fmt.name} pairs are "
            f"2^{2 * fmt.bits}: its rows are sampled (no --exhaustive)"
        )
    o = replace(o, samples=DEFAULT_ROWS if o.samples is None else int(o.samples))
    if o.samples < 1:
        raise UsageError(f"samples must be 1 or more (got {o.samples})")
    return o


def _command(op, target, fmt, o: RowOptions) -> str:
    return (
        f"opcert accuracy {op.name} --dtype {fmt.name} --target {target} --standard {o.standard} "
        f"--samples {o.samples} --seed {o.seed}"
        # a binary32 value by its shortest text, a choice by its name
        + "".join(f" --attr {k}={v if isinstance(v, str) else np.float32(v)!s}" for k, v in o.attrs)
        + (" --exhaustive" if o.exhaustive else "")
    )


class _Stats:
    def __init__(self, res: RowResult, fmt, max_ulp: float, row_sum=None):
        self.res, self.fmt, self.max_ulp, self.row_sum = res, fmt, max_ulp, row_sum
        self.outputs = []  # (case, reduced, y): the properties read them
        self.worst_at = None  # (case, reduced, row, position, output): replayed before it is reported
        self.special_at = []

    def replay(self, call) -> None:
        """Run the target again on the call that gave the worst element and each special example: the
        same bits again, or the result says it was not reproduced."""

        def again(at) -> bool:
            case, reduced, i, j, got = at
            y = to_rows(call(case.x, reduced), reduced)[0]
            return bool(same_bits(y[i, j], got, self.fmt))

        if self.worst_at is not None:
            self.res.worst["replayed"] = again(self.worst_at)
        for ex, at in zip(self.res.special_examples, self.special_at):
            ex["replayed"] = again(at)

    def _sums(self, case, yr, xr) -> None:
        """The row-sum error |sum - 1| of every finite row (sum of the outputs, or of their exponentials),
        in units of 2^-p: correctly rounded outputs keep it under 1 (+ n 2^(emin - 1) for subnormal ones)."""
        p, fmt = self.row_sum, self.fmt
        keep = np.isfinite(xr.astype(np.float64)).all(axis=1) & (xr.shape[1] > 0)
        for i in np.nonzero(keep)[0]:
            y = yr[i].astype(np.float64)
            if not np.all(np.isfinite(y)):
                err = math.inf
            else:
                err = (
                    abs(math.fsum(list(y) + [-1.0]))
                    if p.sum_of == "y"
                    else abs(float(np.sum(EXP.numpy(y.astype(np.longdouble))) - 1))
                )  # sum - 1, the sum not rounded first
            units = err / 2.0**-fmt.p
            cur = self.res.row_sum
            if (
                cur is None
                or units > cur["max_units_of_2^-p"]
                or (math.isnan(units) and not math.isnan(cur["max_units_of_2^-p"]))
            ):
                self.res.row_sum = {
                    "sum_of": p.sum_of,
                    "max_abs_error": err,
                    "max_units_of_2^-p": units,
                    "row_length": int(y.size),
                    "case": case.label,
                    "row": int(i),
                }

    def add(self, case: Case, reduced, y: np.ndarray, ref) -> None:
        res, fmt = self.res, self.fmt
        self.outputs.append((case, reduced, y, ref))
        yr, xr, rr, hr, lr = (case.rows_of(a, reduced) for a in (y, case.x, ref.rounded, ref.exact_hi, ref.exact_lo))
        res.elements += yr.size
        res.rows += yr.shape[0]
        with np.errstate(all="ignore"):
            err = ulp_error(yr, hr, lr, fmt)
        special = ~np.isfinite(np.asarray(rr, dtype=np.float64)) | ~np.isfinite(np.asarray(yr, dtype=np.float64))
        wrong = special & ~same_bits(yr, rr, fmt)
        res.correctly_rounded += int(np.sum(~special & (err <= 0.5))) + int(np.sum(special & ~wrong))
        nanish = np.isnan(np.asarray(rr, dtype=np.float64)) | np.isnan(np.asarray(yr, dtype=np.float64))
        res.nan_mismatches += int(np.sum(wrong & nanish))
        res.inf_mismatches += int(np.sum(wrong & ~nanish))
        entry = {
            "label": case.label,
            "shape": list(case.x.shape),
            "axes": list(reduced),
            "rows": int(yr.shape[0]),
            "max_ulp": None,
            "specials_wrong": int(wrong.sum()),
        }
        flushed = self._counted_apart(case, xr, yr, rr, special)
        # a special or flushed output's error is judged by its own rule, not in ULPs
        entry["max_ulp"] = self._case_worst(case, reduced, (xr, yr, rr), np.where(special | flushed, np.nan, err))
        if wrong.any():
            self._specials(case, reduced, (xr, yr, rr), wrong)
        res.cases.append(entry)
        if self.row_sum is not None and yr.size:
            self._sums(case, yr, xr)

    def _counted_apart(self, case: Case, xr, yr, rr, special) -> np.ndarray:
        """Outputs flushed to zero where the reference is subnormal, and zeros of the wrong sign: counted apart
        from the errors (the check's subnormals and signed_zero policies judge them), the first of each kept.
        Returns where an output was flushed."""
        res, fmt = self.res, self.fmt
        r64 = np.asarray(rr, dtype=np.float64)
        flushed = ~special & (np.asarray(yr, dtype=np.float64) == 0) & (r64 != 0) & (np.abs(r64) < 2.0**fmt.emin)
        if flushed.any():
            res.subnormal_flushes += int(flushed.sum())
            if res.flush_example is None:
                i, j = (int(v[0]) for v in np.nonzero(flushed))
                res.flush_example = {
                    "case": case.label,
                    **row_excerpt(xr[i], j, fmt),
                    "got": float(np.float64(yr[i, j])),
                    "want": float(r64[i, j]),
                }
        y64 = np.asarray(yr, dtype=np.float64)
        zero_sign = ~special & (y64 == 0) & (r64 == 0) & (np.signbit(y64) != np.signbit(r64))
        if zero_sign.any():
            res.signed_zero_mismatches += int(zero_sign.sum())
            if res.signed_zero_example is None:
                i, j = (int(v[0]) for v in np.nonzero(zero_sign))
                res.signed_zero_example = {
                    "case": case.label,
                    **row_excerpt(xr[i], j, fmt),
                    "got": float(y64[i, j]),
                    "want": float(r64[i, j]),
                }
        return flushed

    def _case_worst(self, case: Case, reduced, rows: tuple, finite_err: np.ndarray) -> float | None:
        """The case's largest finite error (None: it has none); where it is the largest so far, it becomes the
        result's worst, replayed before it is reported. rows: the case's (inputs, outputs, reference) rows."""
        res, fmt = self.res, self.fmt
        xr, yr, rr = rows
        if not np.any(~np.isnan(finite_err)):
            return None
        k = int(np.nanargmax(finite_err))
        e = float(finite_err.flat[k])
        if e > res.max_ulp or res.worst is None:
            i, j = divmod(k, yr.shape[1])
            res.max_ulp = max(res.max_ulp, e)
            self.worst_at = (case, reduced, int(i), int(j), yr[i, j])
            res.worst = {
                "case": case.label,
                "row": int(i),
                **row_excerpt(xr[i], j, fmt),
                "got": float(np.float64(yr[i, j])),
                "want": float(np.float64(rr[i, j])),
                "ulp": e,
            }
        return e

    def _specials(self, case: Case, reduced, rows: tuple, wrong: np.ndarray) -> None:
        """NaN and infinities not bit for bit the declared rule's: counted, the first 3 over all cases kept (each
        replayed before it is reported). rows: the case's (inputs, outputs, reference) rows."""
        res, fmt = self.res, self.fmt
        xr, yr, rr = rows
        res.special_mismatches += int(wrong.sum())
        for i, j in list(zip(*np.nonzero(wrong)))[: 3 - min(3, len(res.special_examples))]:
            self.special_at.append((case, reduced, int(i), int(j), yr[i, j]))
            res.special_examples.append(
                {
                    "case": case.label,
                    "row": int(i),
                    **row_excerpt(xr[i], j, fmt),
                    "got": float(np.float64(yr[i, j])),
                    "want": float(np.float64(rr[i, j])),
                }
            )


def _pairs(res: RowResult, op, std, fmt, tgt, max_ulp: float) -> None:
    """Every row of two values: merged into the result (its worst, its counts), its verdicts beside the
    sampled ones, named "NAME (pairs)"."""
    total = 1 << 32
    with Progress(f"{op.name} {fmt.name} {res.target}: every pair", total, "pairs") as bar:
        sweep = PairSweep(
            op,
            fmt,
            lambda X: call_target(tgt, op, std, X, (1,)),
            max_ulp,
            progress=lambda done, n: bar.update(done * n, total),
            layout=pair_layout(op, std, fmt, tgt),
        )
        sweep.run()
    res.elements += 2 * sweep.pairs
    res.rows += sweep.pairs
    res.correctly_rounded += sweep.correctly_rounded
    res.subnormal_flushes += sweep.flushes
    res.signed_zero_mismatches += sweep.zero_sign
    res.special_mismatches += sweep.special_wrong
    if sweep.special_example and len(res.special_examples) < 3:
        e = sweep.special_example
        res.special_examples.append(
            {
                "case": "every pair",
                **e,
                "position": 0,
                "length": 2,
                "x": e["row"][0],
                "neighbours": {0: e["row"][0], 1: e["row"][1]},
                "row_max": max(e["row"]),
                "got": e["got"][0],
                "want": e["want"][0],
            }
        )
    if sweep.worst is not None and sweep.max_err > res.max_ulp:
        w = sweep.worst
        k = w["position"]
        res.max_ulp = sweep.max_err
        res.worst = {
            "case": "every pair",
            "row": w["row"],
            "length": 2,
            "position": k,
            "x": w["row"][k],
            "neighbours": {0: w["row"][0], 1: w["row"][1]},
            "row_max": max(w["row"]),
            "got": w["got"][k],
            "want": w["want"][k],
            "ulp": w["ulp"],
            "replayed": w.get("replayed"),
        }
    res.properties += sweep.verdicts()
    # the largest error of an output that is not the correctly rounded value (the others are within 0.5 ULP,
    # known from the steps of the rounding without an error figure each): None where every output is
    res.pairs = {
        "pairs": sweep.pairs,
        "max_ulp": sweep.max_err if sweep.worst is not None else None,
        "worst": sweep.worst,
        "undecided_rows": sweep.undecided,
        "correctly_rounded": sweep.correctly_rounded,
        "subnormal_flushes": sweep.flushes,
        "special_mismatches": sweep.special_wrong,
        "elapsed_s": sweep.elapsed,
    }


def pair_layout(op, std, fmt, tgt):
    """(call, words): a block of pairs X (N rows of 2) through the target in a second layout, one more row
    in front (each row one place along, in a call of another size) and, where the standard can express it,
    the rows along another axis (verify.tensor.layouts.other_axis); call(X) -> the outputs of X's rows."""
    probe = np.zeros((2, 2), dtype=fmt.dtype)
    x2, how, _ = other_axis(std, probe)
    if x2 is not None and tgt.unsupported(op, std, fmt.name, how, x2.ndim):
        x2 = None

    def call(X):
        n = X.shape[0]
        if x2 is None:
            Z = np.empty((n + 1, 2), dtype=X.dtype)
            Z[1:], Z[0] = X, X[-1]
            return call_target(tgt, op, std, Z, (1,), copy=False)[1:]
        if how == (0,):
            Z = np.empty((2, n + 1), dtype=X.dtype)
            Z[:, 1:], Z[:, 0] = X.T, X[-1]
            return call_target(tgt, op, std, Z, (0,), copy=False)[:, 1:].T
        Z = np.empty((n + 1, 2, 1), dtype=X.dtype)
        Z[1:, :, 0], Z[0, :, 0] = X, X[-1]
        return call_target(tgt, op, std, Z, how, copy=False)[1:, :, 0]

    if x2 is None:
        return call, "the rows one place along, with one more row in front (a call of N + 1 rows)"
    shape = "(2, N + 1), reduced over axis 0" if how == (0,) else f"(N + 1, 2, 1), reduced over axes {list(how)}"
    return call, f"the rows one place along, with one more in front, in a tensor of shape {shape}"


def _properties(op, std, fmt, tgt, all_cases, stats: _Stats, max_ulp: float) -> list[dict]:
    return [r.to_dict() for r in row_properties.check(op, std, fmt, tgt, stats, max_ulp)]
