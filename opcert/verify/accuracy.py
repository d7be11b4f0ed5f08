"""ULP accuracy of an implementation under test against the correctly rounded reference."""
from __future__ import annotations

import math
import shlex
import time
from dataclasses import asdict, dataclass, field
from fractions import Fraction

import numpy as np

from ..errors import TargetFailure, UsageError
from ..formats import FloatFormat, IntFormat, get_format, hex_bits
from ..provenance import provenance
from ..spec import get_operator
from ..spec.attrs import describe, resolve
from ..spec.reference import check_dtype, reference_detailed
from ..targets import get_target
from . import inputs as inputs_mod
from .stats import HIST_LABELS, Stats, stats_of
from .ulp import ulp_distance, ulp_error, ulp_error_exact

DEFAULT_SAMPLES = {"float32": 100_000, "float64": 10_000}
REVERIFY_BITS = 96     # the worst cases' exact values are enclosed to this many bits


@dataclass
class AccuracyResult:
    op: str
    dtype: str
    target: str
    standard: str
    attrs: dict
    inputs_checked: int
    exhaustive: bool
    mode: str
    max_ulp: float | None = None
    max_ulp_distance: int | None = None
    worst_input: float | None = None
    worst_input_bits: str | None = None
    worst_output: float | None = None
    worst_output_bits: str | None = None
    worst_reference: float | None = None
    worst_reference_bits: str | None = None
    worst_exact: str | None = None
    worst_reverified: bool = False
    histogram: dict = field(default_factory=dict)
    correctly_rounded: int = 0
    nan_mismatches: int = 0
    inf_mismatches: int = 0
    signed_zero_mismatches: int = 0
    subnormal_flushes: int = 0
    examples: dict = field(default_factory=dict)
    status: str = "ok"               # ok | crashed | unsupported (skipped: `error` says why)
    error: str | None = None
    elapsed_s: float = 0.0
    seed: int | None = None
    sweep: dict | None = None          # chunks, resumed chunks, checkpoint, wall time, inputs/s
    command: str = ""
    provenance: dict = field(default_factory=dict)
    errors: tuple | None = field(default=None, repr=False)   # (inputs, ULP errors) when kept; not serialised

    @property
    def failed_special_values(self) -> bool:
        return self.nan_mismatches > 0 or self.inf_mismatches > 0

    def to_dict(self) -> dict:
        d = asdict(self)
        d.pop("errors", None)
        return d


def reproduce_command(op: str, dtype: str, target: str, attrs: dict[str, Fraction], mode: str,
                      samples: int | None, seed: int | None, standard: str | None) -> str:
    parts = ["opcert", "accuracy", op, "--dtype", dtype, "--target", target]
    for k, v in attrs.items():
        parts += ["--attr", f"{k}={float(v)!r}"]
    if mode == "exhaustive":
        parts.append("--exhaustive")
    elif mode == "sample":
        parts += ["--samples", str(samples), "--seed", str(seed)]
    if standard:
        parts += ["--standard", standard]
    return shlex.join(parts)


def _value(v, fmt) -> dict:
    with np.errstate(invalid="ignore"):
        f = float(np.asarray(v).astype(np.float64)) if fmt.kind == "float" else int(v)
    return {"value": f if not (isinstance(f, float) and math.isnan(f)) else "nan",
            "bits": hex_bits(v, fmt)}


def measure(op, target="opcert", dtype="float32", inputs="sample", *, samples: int | None = None,
            seed: int = 0, standard: str | None = None, progress=None, workers: int | None = None,
            scheduler: str | None = None, checkpoint=None, flush_allowed: bool = False,
            keep_errors: bool = False, bit_range: tuple[int, int] | None = None, **attrs) -> AccuracyResult:
    """Measure `target` against the reference for `op` in `dtype`.

    inputs: "exhaustive" (every value of the format: 16-bit formats in one
    pass, binary32 through the chunked, resumable sweep of opcert.verify.sweep
    on `workers` processes or a Dask `scheduler`), "sample" (stratified over
    signs and binades, plus special values and the neighbours of every branch
    point, threshold and saturation point), or an array of inputs of that dtype."""
    t0 = time.perf_counter()
    op = get_operator(op)
    fmt = get_format(dtype)
    check_dtype(op, fmt)
    resolved = resolve(op, attrs, standard)
    tgt = get_target(target)
    why = tgt.unsupported(op, fmt.name, resolved)
    if why:
        return AccuracyResult(op=op.name, dtype=fmt.name, target=tgt.name, standard=standard or op.primary,
                              attrs=describe(resolved), inputs_checked=0, exhaustive=False,
                              mode=inputs if isinstance(inputs, str) else "given", status="unsupported",
                              error=why, provenance=provenance(tgt.name, tgt.version),
                              elapsed_s=time.perf_counter() - t0)
    if isinstance(inputs, str):
        if inputs == "exhaustive":
            if fmt.name == "float32":
                return _measure_sweep(op, tgt, fmt, resolved, standard, workers, scheduler, checkpoint,
                                      progress, t0, flush_allowed, bit_range)
            if fmt.kind != "float" or fmt.bits > 16:
                raise UsageError(f"--exhaustive covers float16, bfloat16 and float32; {fmt.name} is sampled "
                                 "(use --samples N)")
            x = inputs_mod.exhaustive(fmt)
            mode = "exhaustive"
        elif inputs == "sample":
            if fmt.kind != "float":
                raise UsageError("sampling covers float formats; pass an array of integer inputs")
            samples = samples or DEFAULT_SAMPLES.get(fmt.name, 65536)
            x = inputs_mod.sample(op, fmt, resolved, samples, seed)
            mode = "sample"
        else:
            raise UsageError(f"inputs must be 'exhaustive', 'sample' or an array; got {inputs!r}")
    else:
        x = np.asarray(inputs)
        if x.dtype != fmt.dtype:
            raise UsageError(f"inputs have dtype {x.dtype}; expected {fmt.name}")
        x = x.reshape(-1)
        mode = "given"
    res = AccuracyResult(op=op.name, dtype=fmt.name, target=tgt.name, standard=standard or op.primary,
                         attrs=describe(resolved), inputs_checked=int(x.size),
                         exhaustive=mode == "exhaustive", mode=mode,
                         seed=seed if mode == "sample" else None,
                         command=reproduce_command(op.name, fmt.name, tgt.name, resolved, mode, samples, seed,
                                                   standard),
                         provenance=provenance(tgt.name, tgt.version))
    try:
        y = tgt.run(op, x, resolved)
    except TargetFailure as exc:
        res.status, res.error = "crashed", str(exc)
        res.elapsed_s = time.perf_counter() - t0
        return res
    ref = reference_detailed(op, x, resolved, standard)
    if isinstance(fmt, IntFormat):
        _compare_int(res, x, y, ref.rounded, fmt)
    else:
        keep = [] if keep_errors else None
        _compare_float(res, op, x, y, ref, fmt, resolved, standard, flush_allowed, keep)
        if keep:
            with np.errstate(invalid="ignore"):
                res.errors = (x.astype(np.float64), keep[0])
    res.elapsed_s = time.perf_counter() - t0
    return res


def _measure_sweep(op, tgt, fmt, resolved, standard, workers, scheduler, checkpoint, progress, t0,
                   flush_allowed=False, bit_range=None):
    from .sweep import CHUNK, FULL, SweepConfig, sweep
    start, stop = bit_range or (0, FULL)
    if not 0 <= start < stop <= FULL:
        raise UsageError(f"bit range {bit_range} must lie within [0, 2^32)")
    cfg = SweepConfig(op.name, tgt.name, tuple((k, f"{v.numerator}/{v.denominator}") for k, v in resolved.items()),
                      standard, start, stop, min(CHUNK, stop - start), flush_allowed=flush_allowed,
                      target_version=tgt.version)
    full = (start, stop) == (0, FULL)
    res = AccuracyResult(op=op.name, dtype=fmt.name, target=tgt.name, standard=standard or op.primary,
                         attrs=describe(resolved), inputs_checked=stop - start, exhaustive=full,
                         mode="exhaustive" if full else f"bit range [{start:#x}, {stop:#x})",
                         command=reproduce_command(op.name, fmt.name, tgt.name, resolved, "exhaustive", None, None,
                                                   standard),
                         provenance=provenance(tgt.name, tgt.version))
    try:
        stats, info = sweep(cfg, workers=workers, scheduler=scheduler, checkpoint=checkpoint, progress=progress)
    except TargetFailure as exc:
        res.status, res.error = "crashed", str(exc)
        res.elapsed_s = time.perf_counter() - t0
        return res
    res.inputs_checked = stats.n
    res.sweep = info

    def at(bits_list):
        # The outputs the sweep measured: the target runs on the same aligned
        # block again, because a runtime may compute an input differently in a
        # block than alone (torch's float32 celu does: SIMD against scalar code).
        from .sweep import BLOCK
        x = np.array(bits_list, dtype=np.uint64).astype(np.uint32).view(np.float32)
        y = np.empty_like(x)
        for b0 in sorted({start + (b - start) // BLOCK * BLOCK for b in bits_list}):
            block = np.arange(b0, min(b0 + BLOCK, stop), dtype=np.uint64).astype(np.uint32).view(np.float32)
            out = tgt.run(op, block, resolved)
            for i, b in enumerate(bits_list):
                if b0 <= b < b0 + BLOCK:
                    y[i] = out[b - b0]
        return x, y, reference_detailed(op, x, resolved, standard).rounded
    finish(res, op, fmt, resolved, standard, stats, at)
    res.elapsed_s = time.perf_counter() - t0
    res.sweep["inputs_per_s"] = (stop - start) / max(info["wall_s"], 1e-9) if info["resumed_chunks"] == 0 else None
    return res


def _compare_int(res, x, y, r, fmt):
    diff = np.abs(y.astype(object) - r.astype(object))
    res.correctly_rounded = int(np.count_nonzero(y == r))
    res.max_ulp = float(max(diff.tolist(), default=0))
    res.max_ulp_distance = int(res.max_ulp)
    if x.size:
        i = int(np.argmax(diff))
        res.worst_input, res.worst_input_bits = int(x[i]), hex_bits(x[i], fmt)
        res.worst_output, res.worst_output_bits = int(y[i]), hex_bits(y[i], fmt)
        res.worst_reference, res.worst_reference_bits = int(r[i]), hex_bits(r[i], fmt)


def _compare_float(res, op, x, y, ref, fmt: FloatFormat, attrs, standard, flush_allowed=False, keep=None):
    stats = float_stats(x, y, ref, fmt, flush_allowed, keep)
    lookup = {int(b): i for i, b in enumerate(np.ascontiguousarray(x).view(fmt.uint).tolist())}

    def at(bits_list):
        idx = [lookup[b] for b in bits_list]
        return x[idx], y[idx], ref.rounded[idx]
    finish(res, op, fmt, attrs, standard, stats, at)


def float_stats(x, y, ref, fmt: FloatFormat, flush_allowed: bool = False, keep=None) -> Stats:
    """Per-element comparison of outputs y with the reference, reduced to Stats.
    flush_allowed: outputs flushed to zero where the reference is subnormal are
    counted but left out of the ULP figure. keep: a list that receives the
    per-element errors (for plots)."""
    with np.errstate(invalid="ignore"):
        y64 = y.astype(np.float64)
        r64 = ref.rounded.astype(np.float64)
    ynan, rnan = np.isnan(y64), np.isnan(r64)
    nan_mm = ynan != rnan
    inf_mm = np.isinf(ref.exact_hi) & ~rnan & ~ynan & (y64 != r64)
    zero = (y64 == 0) & (r64 == 0)
    masks = {"nan_mismatch": nan_mm, "inf_mismatch": inf_mm,
             "signed_zero_mismatch": zero & (np.signbit(y64) != np.signbit(r64)),
             "subnormal_flush": (y64 == 0) & (r64 != 0) & (np.abs(r64) < float(Fraction(2) ** fmt.emin))}
    same_bits = (np.ascontiguousarray(y).view(fmt.uint) == np.ascontiguousarray(ref.rounded).view(fmt.uint))
    err = ulp_error(y64, ref.exact_hi, ref.exact_lo, fmt)
    if fmt.name == "float64" and ref.exact_q is not None:
        for i, q in enumerate(ref.exact_q):
            if q is not None and not np.isnan(y64[i]):
                err[i] = round_up(ulp_error_exact(float(y64[i]), q, fmt))
    err = np.where(nan_mm | inf_mm, np.nan, err)
    if flush_allowed:
        err = np.where(masks["subnormal_flush"], np.nan, err)
    if keep is not None:
        keep.append(err)
    dist = np.full(x.size, -1, dtype=np.int64)
    ok = ~np.isnan(err)
    if ok.any():
        dist[ok] = np.minimum(ulp_distance(y[ok], ref.rounded[ok]), np.iinfo(np.int64).max).astype(np.int64)
    # bit patterns as unsigned integers: a 64-bit pattern with the sign bit set is no int64
    bits = np.ascontiguousarray(x).view(fmt.uint).astype(np.uint64)
    return stats_of(bits, err, same_bits | (ynan & rnan), masks, dist)


def finish(res, op, fmt, attrs, standard, stats: Stats, at) -> None:
    """Fill res from stats: counts, histogram, the first example of each
    special-value mismatch, and the worst case re-verified exactly.
    at(list of input bits) -> (inputs, outputs, references) for those inputs."""
    res.correctly_rounded = stats.correctly_rounded
    res.nan_mismatches = stats.nan_mismatches
    res.inf_mismatches = stats.inf_mismatches
    res.signed_zero_mismatches = stats.signed_zero_mismatches
    res.subnormal_flushes = stats.subnormal_flushes
    res.histogram = dict(zip(HIST_LABELS, stats.histogram))
    for kind, b in sorted(stats.first.items()):
        xs, ys, rs = at([b])
        res.examples[kind] = {"input": _value(xs[0], fmt), "output": _value(ys[0], fmt),
                              "reference": _value(rs[0], fmt)}
    cands = sorted({b for _, b in stats.top + stats.top_wrong})
    if not cands:
        return
    res.max_ulp_distance = stats.max_distance
    xs, ys, rs = at(cands)
    with np.errstate(invalid="ignore"):
        y64 = ys.astype(np.float64)
    best = None
    for i, b in enumerate(cands):
        error, exact_text = _exact_error(op, xs[i:i + 1], float(y64[i]), attrs, standard, fmt)
        if best is None or error > best[1] or (error == best[1] and b < best[0]):
            best = (b, error, exact_text, i)
    b, error, exact_text, i = best
    res.max_ulp, res.worst_exact, res.worst_reverified = error, exact_text, True
    with np.errstate(invalid="ignore"):
        res.worst_input, res.worst_input_bits = float(xs[i].astype(np.float64)), hex_bits(xs[i], fmt)
        res.worst_output, res.worst_output_bits = float(y64[i]), hex_bits(ys[i], fmt)
        res.worst_reference = float(rs[i].astype(np.float64))
        res.worst_reference_bits = hex_bits(rs[i], fmt)


def _exact_error(op, xi, yi: float, attrs, standard, fmt) -> tuple[float, str]:
    """|y - v| / ulp(v) with v enclosed to REVERIFY_BITS bits (Fractions)."""
    ref = reference_detailed(op, xi, attrs, standard, exact_bits=REVERIFY_BITS)
    v = ref.exact_q[0]
    return round_up(ulp_error_exact(yi, v, fmt)), f"{float(v):.17g}"


def round_up(q: Fraction) -> float:
    """The smallest double >= q (inf beyond the largest): a reported error is
    never smaller than the true one."""
    try:
        f = float(q)
    except OverflowError:
        return math.inf
    return f if Fraction(f) >= q else float(np.nextafter(f, math.inf))
