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
from ..spec.attrs import describe, exact_decimal, resolve
from ..spec.reference import check_dtype, reference_detailed
from ..targets import get_target
from . import inputs as inputs_mod
from .ulp import histogram, ulp_distance, ulp_error, ulp_error_exact

DEFAULT_SAMPLES = {"float32": 100_000, "float64": 10_000}
REVERIFY_BITS = 96     # the worst cases' exact values are enclosed to this many bits
REVERIFY_COUNT = 8     # how many of the largest errors are re-verified


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
    status: str = "ok"               # ok | crashed | unsupported
    error: str | None = None
    elapsed_s: float = 0.0
    seed: int | None = None
    command: str = ""
    provenance: dict = field(default_factory=dict)

    @property
    def failed_special_values(self) -> bool:
        return self.nan_mismatches > 0 or self.inf_mismatches > 0

    def to_dict(self) -> dict:
        return asdict(self)


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
            seed: int = 0, standard: str | None = None, progress=None, **attrs) -> AccuracyResult:
    """Measure `target` against the reference for `op` in `dtype`.

    inputs: "exhaustive" (every value of an 8- or 16-bit format), "sample"
    (stratified over signs and binades, plus special values and the neighbours
    of every branch point, threshold and saturation point), or an array of
    inputs of that dtype."""
    t0 = time.perf_counter()
    op = get_operator(op)
    fmt = get_format(dtype)
    check_dtype(op, fmt)
    resolved = resolve(op, attrs, standard)
    tgt = get_target(target)
    if isinstance(inputs, str):
        if inputs == "exhaustive":
            if fmt.kind != "float" or fmt.bits > 16:
                raise UsageError(f"--exhaustive covers the 8- and 16-bit formats here; {fmt.name} is sampled "
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
        _compare_float(res, op, x, y, ref, fmt, resolved, standard)
    res.elapsed_s = time.perf_counter() - t0
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


def _compare_float(res, op, x, y, ref, fmt: FloatFormat, attrs, standard):
    with np.errstate(invalid="ignore"):
        y64 = y.astype(np.float64)
        r64 = ref.rounded.astype(np.float64)
        x64 = x.astype(np.float64)
    ynan, rnan = np.isnan(y64), np.isnan(r64)
    nan_mm = ynan != rnan
    exact_inf = np.isinf(ref.exact_hi)
    inf_mm = exact_inf & ~rnan & ~ynan & (y64 != r64)
    zero = (y64 == 0) & (r64 == 0)
    sz_mm = zero & (np.signbit(y64) != np.signbit(r64))
    tiny = float(Fraction(2) ** fmt.emin)
    flush = (y64 == 0) & (r64 != 0) & (np.abs(r64) < tiny)
    same_bits = (np.ascontiguousarray(y).view(fmt.uint) == np.ascontiguousarray(ref.rounded).view(fmt.uint))
    res.correctly_rounded = int(np.count_nonzero(same_bits | (ynan & rnan)))
    res.nan_mismatches = int(nan_mm.sum())
    res.inf_mismatches = int(inf_mm.sum())
    res.signed_zero_mismatches = int(sz_mm.sum())
    res.subnormal_flushes = int(flush.sum())
    for name, mask in (("nan_mismatch", nan_mm), ("inf_mismatch", inf_mm),
                       ("signed_zero_mismatch", sz_mm), ("subnormal_flush", flush)):
        if mask.any():
            i = int(np.argmax(mask))
            res.examples[name] = {"input": _value(x[i], fmt), "output": _value(y[i], fmt),
                                  "reference": _value(ref.rounded[i], fmt)}

    err = ulp_error(y64, ref.exact_hi, ref.exact_lo, fmt)
    if fmt.name == "float64" and ref.exact_q is not None:
        for i, q in enumerate(ref.exact_q):
            if q is not None and not np.isnan(y64[i]):
                err[i] = float(ulp_error_exact(float(y64[i]), q, fmt))
    err = np.where(nan_mm | inf_mm, np.nan, err)
    res.histogram = histogram(err)
    comparable = ~np.isnan(err)
    if not comparable.any():
        return
    dist = ulp_distance(y[comparable], ref.rounded[comparable])
    res.max_ulp_distance = int(max(dist.tolist()))
    # Re-verify the largest errors with the exact reference enclosed to many bits.
    # Estimates cannot tell 0.5 from 0.5 + 2**-200: re-verify the largest
    # estimates and, apart, the largest among the incorrectly rounded results.
    e = np.where(comparable, err, -1.0)
    wrong = np.where(same_bits, -1.0, e)
    order = list(np.argsort(-e, kind="stable")[:REVERIFY_COUNT]) + \
        list(np.argsort(-wrong, kind="stable")[:REVERIFY_COUNT])
    order = sorted({int(i) for i in order if e[i] >= 0})
    best = None
    for i in order:
        exact = _exact_error(op, x[i:i + 1], y64[i], attrs, standard, fmt)
        if best is None or exact[0] > best[1][0] or (exact[0] == best[1][0] and i < best[0]):
            best = (i, exact)
    i, (error, exact_text) = best
    res.max_ulp = error
    res.worst_exact = exact_text
    res.worst_reverified = True
    res.worst_input, res.worst_input_bits = float(x64[i]), hex_bits(x[i], fmt)
    res.worst_output, res.worst_output_bits = float(y64[i]), hex_bits(y[i], fmt)
    res.worst_reference = float(ref.rounded[i].astype(np.float64))
    res.worst_reference_bits = hex_bits(ref.rounded[i], fmt)


def _exact_error(op, xi, yi: float, attrs, standard, fmt) -> tuple[float, str]:
    """|y - v| / ulp(v) with v enclosed to REVERIFY_BITS bits (Fractions)."""
    ref = reference_detailed(op, xi, attrs, standard, exact_bits=REVERIFY_BITS)
    v = ref.exact_q[0]
    return round_up(ulp_error_exact(yi, v, fmt)), f"{float(v):.17g}"


def round_up(q: Fraction) -> float:
    """The smallest double >= q: a reported error is never smaller than the true one."""
    f = float(q)
    return f if Fraction(f) >= q else float(np.nextafter(f, math.inf))
