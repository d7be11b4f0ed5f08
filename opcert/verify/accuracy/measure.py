"""ULP accuracy of an implementation under test against the correctly rounded
reference, and the declared properties checked on the same outputs.

Everything a user gives is validated first, in the caller's process (bad input
is a UsageError before anything runs). An untrusted target then runs in a
supervised worker process (opcert.workers): the whole measurement for the
16-bit formats and samples, chunk by chunk for the exhaustive binary32 sweep.
A target that crashes, exits or hangs gives a result with status "crashed"
and the inputs it was given; it never ends opcert.
"""

from __future__ import annotations

import dataclasses
import math
import shlex
import time
from dataclasses import asdict, dataclass, field
from fractions import Fraction

import numpy as np

from opcert import policy
from opcert.errors import TargetFailure, UsageError, choices
from opcert.expr import libm_arrays
from opcert.fingerprint import code_fingerprint
from opcert.formats import IntFormat, bits_differ, get_format, hex_bits, round_fraction
from opcert.numerics import ball
from opcert.numerics.exact import eval_rational, evaluate
from opcert.options import Options, split_keywords
from opcert.progress import tell
from opcert.provenance import cpu_model, provenance
from opcert.spec import get_operator
from opcert.spec.attrs import attribute_keys, describe, resolve, user_value
from opcert.spec.points import special_points
from opcert.spec.reference import check_dtype, reference_detailed
from opcert.targets import Target, check_name, describe_inputs, describe_target, load_target, trusted
from opcert.verify.accuracy import inputs as inputs_mod
from opcert.verify.accuracy.stats import HIST_LABELS, Stats, float_stats
from opcert.verify.accuracy.sweep import HALF, SweepConfig, keep_freed_memory, refuse_non_directory, rerun_blocks, sweep
from opcert.verify.paths.layout import LayoutCheck, Measured, enumerable
from opcert.verify.properties.checks import PropertyChecker, compile_all, value_of, verdicts
from opcert.verify.result import PropertyResult
from opcert.verify.ulp import round_up, ulp_error_exact
from opcert.workers import WorkerLost, in_worker, run_isolated

F32 = get_format("float32")
DEFAULT_SAMPLES = {"float32": 100_000, "float64": 1_000_000}
# the float64 default where every input takes the exact path, slow per input (bench/README.md,
# 'Figures behind choices in the code')
FLOAT64_EXACT_SAMPLES = 10_000


def default_samples(op, dtype: str, standard: str | None = None) -> tuple[int, str | None]:
    """The default number of samples, and why it is smaller when it is."""
    if dtype == "float64":
        missing = ball.without_fast_path(op.reference_form(standard), ball.WIDE)
        if missing:
            return FLOAT64_EXACT_SAMPLES, (
                f"{FLOAT64_EXACT_SAMPLES:,} float64 samples by default, not {DEFAULT_SAMPLES['float64']:,}: "
                f"{op.name}'s binary64 reference uses {', '.join(sorted(missing))}, which has no long double "
                "function here, so every input takes the exact path (0.2-0.4 ms each); --samples sets more"
            )
    return DEFAULT_SAMPLES.get(dtype, 65536), None


REVERIFY_BITS = 96  # the worst cases' exact values are enclosed to this many bits


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
    worst_layout: str | None = None  # where the worst error came from, when not the measurement's own call
    histogram: dict = field(default_factory=dict)
    correctly_rounded: int = 0
    nan_mismatches: int = 0
    inf_mismatches: int = 0
    signed_zero_mismatches: int = 0
    subnormal_flushes: int = 0
    examples: dict = field(default_factory=dict)
    properties: list = field(default_factory=list)  # PropertyResult dicts, checked on the same outputs
    # which of them the command enforced, reported or waived (enforcement(); None: measured, not judged)
    enforcement: dict | None = None
    target_modified_input: bool = False
    replay: dict | None = None  # the target run again on the inputs the verdict names: did it agree?
    fp_environment: list = field(default_factory=list)  # what the target did to the FP environment
    status: str = "ok"  # ok | crashed | unsupported (skipped: `error` says why)
    error: str | None = None
    elapsed_s: float = 0.0
    seed: int | None = None
    samples: int | None = None
    sweep: dict | None = None  # chunks, resumed chunks, checkpoint, wall time, inputs/s
    command: str = ""
    isolation: str = "process"
    notes: list = field(default_factory=list)
    target_info: dict = field(default_factory=dict)
    provenance: dict = field(default_factory=dict)
    errors: tuple | None = field(default=None, repr=False)  # (inputs, ULP errors) when kept; not serialised

    @property
    def failed_special_values(self) -> bool:
        return self.nan_mismatches > 0 or self.inf_mismatches > 0

    def to_dict(self) -> dict:
        d = asdict(self)
        d.pop("errors", None)
        return d


WAIVE_HOW = (
    'waive one: --waive NAME=REASON (opcert accuracy), waive = { NAME = "REASON" } in the [[check]] (opcert gate); '
    "a waived property is still measured and reported, never counted as established"
)


def parse_waivers(op, given, where: str = "--waive") -> dict[str, str]:
    """{property: reason} of NAME=REASON texts (NAME alone: no reason given); UsageError for a name the
    operator does not declare."""
    declared = [p.name for p in op.properties]
    out = {}
    for item in given or ():
        name, _, reason = str(item).partition("=")
        name = name.strip()
        if name not in declared:
            raise UsageError(
                f"{where} {name!r}: {op.name} declares no property {name!r}; declared: {choices(declared)}"
            )
        out[name] = reason.strip() or f"{where} {name}, no reason given"
    return out


def enforcement(properties: list, waived: dict | None = None, required=None, rule: str | None = None) -> dict:
    """Which declared properties a check enforced (`required`: the names a gate check's `proofs` require; None:
    every property claimed at these attributes, as `opcert accuracy` judges: a refuted one fails), which it
    only reported, and which it waived, with the reason. Each waived verdict is marked ("waived": reason):
    still measured and shown as it came out, never counted as established."""
    waived = dict(waived or {})
    out = {"enforced": [], "reported": [], "waived": [], "failing": []}
    seen = set()
    for v in properties or []:
        name = v["name"]
        seen.add(name)
        entry = {"name": name, "status": v["status"]}
        if name in waived:
            v["waived"] = waived[name]
            out["waived"].append({**entry, "reason": waived[name]})
        elif (name in required) if required is not None else v.get("expected", "holds") == "holds":
            out["enforced"].append(entry)
            if v["status"] == "refuted" and required is None:
                out["failing"].append(name)
        else:
            out["reported"].append({**entry, "expected": v.get("expected", "holds")})
    for name, reason in waived.items():
        if name not in seen:
            out["waived"].append({"name": name, "status": "no verdict", "reason": reason})
    out["rule"] = rule or (
        "opcert accuracy fails on a refuted enforced property (a checked, unknown or skipped one does not fail "
        "it: --require judges as a gate check does)"
    )
    out["how_to_waive"] = WAIVE_HOW
    return out


def reproduce_command(op: str, dtype: str, target: str, attrs: dict[str, Fraction], mode: str, options: Options) -> str:
    """The `opcert accuracy` command of a measurement (options: its samples as run, seed, standard, layout_samples)."""
    parts = ["opcert", "accuracy", op, "--dtype", dtype, "--target", target]
    operator = get_operator(op)
    for k, v in attrs.items():
        u = user_value(operator, k, v)  # a choice by its name: the CLI takes no index
        parts += ["--attr", f"{k}={u if isinstance(u, str) else repr(u)}"]
    if mode == "exhaustive":
        parts.append("--exhaustive")
    elif mode == "sample":
        parts += ["--samples", str(options.samples), "--seed", str(options.seed)]
    if options.standard:
        parts += ["--standard", options.standard]
    if options.layout_samples is not None:  # the layout verdict's inputs, where they were not the default
        parts += ["--layout-samples", str(options.layout_samples)]
    return shlex.join(parts)


@dataclass(frozen=True)
class Request:
    """A validated measurement request (picklable: it crosses to worker processes)."""

    op: str
    target: object  # a name, or a Target object (API only: not isolated)
    dtype: str
    inputs: object  # "exhaustive", "sample", or an array
    attrs: tuple  # ((name, Fraction), ...)
    options: Options  # validated (_request); properties: "all", a tuple of names, or ()
    layout_default: int | None = None  # inputs per layout where options.layout_samples is None (a sweep's)

    @property
    def resolved(self) -> dict[str, Fraction]:
        return dict(self.attrs)

    @property
    def target_name(self) -> str:
        return self.target.name if isinstance(self.target, Target) else self.target

    @property
    def layout_samples(self) -> int:
        """Inputs per layout where the layouts are not enumerated."""
        return self.options.layout_samples or self.layout_default or DEFAULT_LAYOUT_SAMPLES


def measure(
    op,
    target="opcert",
    dtype="float32",
    inputs="sample",
    options: Options | None = None,
    *,
    attrs: dict | None = None,
    **keywords,
) -> AccuracyResult:
    """Measure `target` against the reference for `op` in `dtype`, and check
    the operator's declared properties on the same outputs.

    options: how (opcert.Options: samples, seed, standard, workers, scheduler,
    checkpoint, flush_allowed, keep_errors, magnitude_range, isolation,
    target_timeout, properties, accuracy, layout_samples, progress); attrs: the
    operator's attributes ({"alpha": 0.5}). Keywords are either: an option's
    name is an option, anything else an attribute; a keyword that names both
    is refused (opcert.options.split_keywords).

    target: a name (opcert, a runtime, module:function, c:PATH:SYMBOL) or a Python callable f(x, **attrs) ->
    ndarray (targets.function): one `module:qualname` names runs in a worker as that name does; any other
    (a lambda, a closure, a bound method, a partial, a function of __main__) runs in this process, and the
    result says so (isolation "none", a note; `command` says that no command line names it). A callable
    first and the operator second (measure(my_tanh, "Tanh")) is accepted too.

    inputs: "exhaustive" (every value of the format: 16-bit formats in one
    pass, binary32 through the chunked, resumable sweep of opcert.verify.accuracy.sweep
    on `workers` processes or a Dask `scheduler`), "sample" (stratified over
    signs and binades, with neighbours, special values and the neighbours of
    every branch point, threshold and saturation point; closed under
    negation), or an array of inputs of that dtype (no property checks).
    isolation: "process" (default: untrusted targets run in a supervised
    worker) or "none". target_timeout: seconds per target call (isolated only).
    properties: "all" (the declared properties that apply at these attributes),
    a list of names, or () for none. accuracy=False: the properties alone,
    for an exhaustive float32 sweep (the reference is then computed only at
    counterexamples; the result has no ULP figures); elsewhere ignored, as
    the accuracy costs little next to the target there. layout_samples: the
    inputs run through every layout where the layouts cannot be enumerated
    (verify.paths.layout; default DEFAULT_LAYOUT_SAMPLES, SWEEP_LAYOUT_SAMPLES in a
    float32 sweep of the whole format)."""
    t0 = time.perf_counter()
    op, target = _operator_first(op, target)
    spec_op = get_operator(op)
    o, attrs = split_keywords(options, attrs, keywords, attribute_keys(spec_op))
    req = _request(spec_op, target, dtype, inputs, o, attrs)
    if isinstance(req.inputs, str) and req.inputs == "exhaustive" and req.dtype == "float32":
        return _measure_sweep(req, t0, o.progress)
    if o.workers is not None or o.scheduler or o.checkpoint or o.magnitude_range:
        raise UsageError("workers, scheduler, checkpoint and magnitude_range apply to exhaustive float32 sweeps")
    if isinstance(req.target, Target) or trusted(req.target) or o.isolation == "none" or in_worker():
        return _measure_here(req, t0)
    try:
        return run_isolated(_measure_here, req, t0)
    except WorkerLost as lost:
        return _crashed(req, f"target {req.target_name} {lost}", t0)


def _operator_first(op, target):
    """(operator, target): measure(my_tanh, "Tanh", ...) is measure("Tanh", my_tanh, ...), as a callable is never
    an operator's name (numpy.testing's and Hypothesis's habit of giving the function first)."""
    if isinstance(op, str) or not callable(op):
        return op, target
    if isinstance(target, str) and target != "opcert":
        return target, op
    raise UsageError(
        "measure takes the operator and the target: measure('Tanh', my_tanh, ...) (or measure(my_tanh, 'Tanh', ...)); "
        f"got the callable {op!r} and no operator name"
    )


def _request(op, target, dtype, inputs, options: Options, attrs) -> Request:
    """measure()'s arguments validated, with its options normalised (the progress callback, called in the
    caller's process, is not part of the request)."""
    fmt = get_format(dtype)
    check_dtype(op, fmt)
    o = options
    if o.standard is not None:
        op.standard(o.standard)
    resolved = resolve(op, attrs, o.standard)
    if not isinstance(target, Target):
        target = check_name(target)
    policy.choice(o.isolation, "isolation", policy.ISOLATION)
    o = o.replace(
        target_timeout=None if o.target_timeout is None else policy.timeout(o.target_timeout, "target_timeout"),
        seed=policy.seed(o.seed),
        samples=None if o.samples is None else policy.samples(o.samples),
        flush_allowed=bool(o.flush_allowed),
        keep_errors=bool(o.keep_errors),
        progress=None,
    )
    if isinstance(inputs, str):
        if inputs not in ("exhaustive", "sample"):
            raise UsageError(f"inputs must be 'exhaustive', 'sample' or an array; got {inputs!r}")
        if inputs == "exhaustive" and (fmt.kind != "float" or fmt.bits > 32):
            raise UsageError(
                f"--exhaustive covers float16, bfloat16 and float32; {fmt.name} is sampled (use --samples N)"
            )
        if inputs == "exhaustive" and o.samples is not None:
            raise UsageError("samples apply to sampled checks, not exhaustive ones")
        if (
            inputs == "exhaustive"
            and fmt.name == "float32"
            and o.standard
            and op.standard(o.standard).rounded_scale_bias
        ):
            raise UsageError(
                f"{o.standard}: the exhaustive float32 sweep computes the exact reading of the ScaleBias only; the "
                "rounded variant is measured on every input of float16 and bfloat16, and on float32 samples "
                "(--samples N)"
            )
        if inputs == "sample" and fmt.kind != "float":
            raise UsageError("sampling covers float formats; pass an array of integer inputs")
    else:
        x = np.asarray(inputs)
        if x.dtype != fmt.dtype:
            raise UsageError(f"inputs have dtype {x.dtype}; expected {fmt.name}")
        inputs = x.reshape(-1).copy()
    if o.properties not in ("all", None):
        declared = [p.name for p in op.properties]
        for n in o.properties:
            if n not in declared:
                raise UsageError(f"{op.name} declares no property {n!r}; declared: {', '.join(declared)}")
    o = o.replace(
        properties="all" if o.properties == "all" else tuple(o.properties or ()),
        layout_samples=None if o.layout_samples is None else policy.samples(o.layout_samples, "layout_samples"),
    )
    if o.workers is not None:
        policy.workers(o.workers, "workers")
    return Request(op.name, target, fmt.name, inputs, tuple(resolved.items()), o)


def _base_result(req: Request, mode: str, n: int, info=None) -> AccuracyResult:
    op, o = get_operator(req.op), req.options
    name = req.target_name
    version = info.version if info else ""
    samples = (o.samples or default_samples(op, req.dtype, o.standard)[0]) if mode == "sample" else None
    # a callable the command line cannot name (targets.function.FunctionTarget): no command, and why; it ran in
    # this process, and the result says so
    no_command = getattr(req.target, "no_command", None)
    in_process = getattr(req.target, "in_process", None)
    return AccuracyResult(
        op=op.name,
        dtype=req.dtype,
        target=name,
        standard=o.standard or op.primary,
        attrs=describe(req.resolved, op),
        inputs_checked=n,
        exhaustive=mode == "exhaustive",
        mode=mode,
        seed=o.seed if mode == "sample" else None,
        samples=samples,
        command=no_command
        or reproduce_command(op.name, req.dtype, name, req.resolved, mode, o.replace(samples=samples)),
        isolation="none" if isinstance(req.target, Target) or trusted(name) else o.isolation,
        notes=[in_process] if in_process else [],
        target_info=info.to_dict() if info else {},
        provenance=_provenance(name, version),
    )


def _provenance(name: str, version: str) -> dict:
    """provenance(), and the functions the reference's balls took their values from (glibc's vector and
    long double functions, or NumPy's alone): they decide how many inputs go to the exact path, never
    what the correctly rounded value is."""
    return {**provenance(name, version), "reference_functions": libm_arrays.status()}


def _crashed(req: Request, error: str, t0: float, info=None) -> AccuracyResult:
    mode = req.inputs if isinstance(req.inputs, str) else "given"
    return _stopped(_base_result(req, mode, 0, info), "crashed", error, t0)


def _stopped(res: AccuracyResult, status: str, error: str, t0: float) -> AccuracyResult:
    """res, ended before its figures: "crashed", or "unsupported" (then no input was checked)."""
    res.status, res.error, res.elapsed_s = status, error, time.perf_counter() - t0
    if status == "unsupported":
        res.inputs_checked = 0
    return res


def _property_names(req: Request):
    return None if req.options.properties == "all" else set(req.options.properties)


def _measure_here(req: Request, t0: float) -> AccuracyResult:
    """The measurement, in the process that runs the target."""
    op, fmt, o = get_operator(req.op), get_format(req.dtype), req.options
    try:
        tgt = load_target(req.target, o.target_timeout, o.standard)
    except TargetFailure as exc:
        return _crashed(req, str(exc), t0)
    why = tgt.unsupported(op, fmt.name, req.resolved)
    x, mode, why_fewer = _inputs_here(req, op, fmt)
    if x.size >= 1 << 16:
        # arrays of 10^6 elements allocated and freed a dozen times: glibc maps and unmaps each, and the
        # page faults showed in a float64 check's time (bench/README.md, 'Figures behind choices in the code')
        keep_freed_memory()
    res = _base_result(req, mode, int(x.size), tgt.info)
    if why_fewer:
        res.notes.append(why_fewer)
    if why:
        return _stopped(res, "unsupported", why, t0)
    try:
        y = tgt.run(op, x, req.resolved, label=_label(x, mode))
    except TargetFailure as exc:
        return _stopped(res, "crashed", str(exc), t0)
    ref = reference_detailed(op, x, req.resolved, o.standard)
    replay = {}

    def rerun():
        if "y" not in replay:
            replay["y"] = tgt.run(op, x, req.resolved, label=_label(x, mode) + " (replay)")
        return replay["y"]

    try:
        if isinstance(fmt, IntFormat):
            _compare_int(res, x, y, ref.rounded, fmt)
        else:
            _compare_float(res, req, x, y, ref)
            if mode in ("exhaustive", "sample") and o.properties != ():
                res.properties = _check_properties(req, tgt, x, y, ref, mode, rerun)
            if mode in ("exhaustive", "sample") and _wants_layout(req):
                lay, worst = layout_verdict(
                    req,
                    tgt,
                    x,
                    y,
                    ref.rounded,
                    f"the measurement's own call of {x.size:,} elements",
                    whole=mode == "exhaustive",
                )
                res.properties.append(lay)
                path_accuracy(res, worst)
        # every verdict above comes from y; a second call is a check of its own
        res.replay = replay_report(
            np.ascontiguousarray(x).reshape(-1),
            np.ascontiguousarray(y).reshape(-1),
            np.ascontiguousarray(rerun()).reshape(-1),
            fmt,
            "the whole input array, called again as the first time",
        )
    except TargetFailure as exc:  # a replay failed: the target is not deterministic enough to run twice
        res.status, res.error = "crashed", str(exc)
    _fp_findings(res, tgt.findings)
    res.target_modified_input = tgt.modified_input
    if tgt.modified_input:
        res.notes.append(MODIFIED_INPUT)
    res.elapsed_s = time.perf_counter() - t0
    return res


MODIFIED_INPUT = (
    "the target wrote into its input array (in-place execution); every call got its own copy, so it "
    "was measured on what it was given"
)


def _inputs_here(req: Request, op, fmt) -> tuple:
    """(the inputs, the mode, why fewer samples than the format's default or None)."""
    o = req.options
    if isinstance(req.inputs, str) and req.inputs == "exhaustive":
        return inputs_mod.exhaustive(fmt), "exhaustive", None
    if isinstance(req.inputs, str):
        n, why_fewer = (o.samples, None) if o.samples else default_samples(op, fmt.name, o.standard)
        return inputs_mod.sample(op, fmt, req.resolved, n, o.seed, o.standard), "sample", why_fewer
    return req.inputs, "given", None


def _wants_layout(req: Request) -> bool:
    """Whether the check runs the layouts: always, whatever properties it reports, since a check's accuracy
    is the worst over every code path (one measurement for every front end), except in a sweep that
    decides properties without accuracy (`opcert prove --target`), where only a requested `layout` runs."""
    o = req.options
    return o.accuracy is not False or o.properties == "all" or "layout" in o.properties


# what a measurement's worker has imported before it loads a target (targets.describe_target)
WORKER_MODULES = ("opcert.verify.accuracy.measure", "opcert.verify.accuracy.sweep")
DEFAULT_LAYOUT_SAMPLES = 1024  # inputs per layout where the layouts are not enumerated (bench/README.md)
SWEEP_LAYOUT_SAMPLES = 10**6  # ... in a float32 sweep of the whole format (a range of magnitudes: the default)
ONE_ELEMENT_CALLS = 100_000  # ... at least, on a target that compiles per shape (each in a call of its own)


def layout_verdict(req: Request, tgt, x, y, rounded, base_layout: str, whole: bool):
    """The layout property (verify.paths.layout) of tgt, on the inputs x whose outputs in the measurement's call
    were y: (its PropertyResult dict, the worst error among outputs that differed, or None).

    Every input goes through every layout where that can decide the property: every input of a 16-bit
    format, on a target whose short calls can be enumerated (verify.paths.layout.enumerable). Elsewhere the verdict
    is `checked` at best, and req.layout_samples inputs go through each layout: first those whose measured
    output is not the correctly rounded one (`rounded`: the reference's outputs), as two code paths can only
    disagree where one of them is not correctly rounded, up to half; then inputs spread evenly over x's bit
    patterns."""
    op, fmt, attrs, standard = get_operator(req.op), get_format(req.dtype), req.resolved, req.options.standard
    prop = next(p for p in op.properties if p.kind == "layout")
    why = getattr(tgt, "no_code_paths", None)
    if why:  # a table of outputs (targets.function.TableTarget): no kernel is called, no code path seen
        return PropertyResult(prop.name, prop.kind, prop.statement, "skipped", "", note=why).to_dict(), None
    bits = np.ascontiguousarray(x).reshape(-1).view(fmt.uint)
    _, first = np.unique(bits, return_index=True)
    keep = first[np.argsort(bits[first], kind="stable")]  # ascending bit patterns
    allk = keep
    limit = None if whole and enumerable(tgt.layouts) else req.layout_samples
    if limit is not None and tgt.layouts.compiles_per_shape and not (whole and fmt.bits <= 16):
        # a runtime that compiles per shape: its one-element calls are a path of their own, sampled widely
        limit = max(limit, ONE_ELEMENT_CALLS)
    elif whole and fmt.bits <= 16 and tgt.layouts.compiles_per_shape:
        limit = None
    if limit is not None and keep.size > limit:
        first = np.zeros(0, np.int64)
        if rounded is not None:
            off = np.flatnonzero(
                bits_differ(
                    np.ascontiguousarray(y).reshape(-1)[keep], np.ascontiguousarray(rounded).reshape(-1)[keep], fmt
                )
            )
            if off.size > limit // 2:
                off = off[np.linspace(0, off.size - 1, limit // 2).astype(np.int64)]
            first = off
        # not np.setdiff1d, which hashes 10^6 values (bench/README.md, 'Figures behind choices in the code')
        spread = np.ones(keep.size, dtype=bool)
        spread[first] = False
        rest = np.flatnonzero(spread)
        rest = rest[np.linspace(0, rest.size - 1, limit - first.size).astype(np.int64)]
        keep = keep[np.sort(np.concatenate([first, rest]))]
    xs = np.ascontiguousarray(x).reshape(-1)[keep]
    ys = np.ascontiguousarray(y).reshape(-1)[keep]
    # every input of the measurement, ascending by bits, for the families whose cost is one call per input
    wide = (
        None
        if allk.size <= keep.size
        else (np.ascontiguousarray(x).reshape(-1)[allk], np.ascontiguousarray(y).reshape(-1)[allk])
    )
    check = LayoutCheck(
        op,
        tgt,
        fmt,
        attrs,
        Measured(xs, ys, base_layout, wide),
        whole and keep.size == bits.size,
        points=_branch_points(op, attrs, fmt, standard),
    )
    check.run()

    def ref_of(in_bits):
        xi = np.ascontiguousarray(in_bits).view(fmt.dtype)
        rounded = np.ascontiguousarray(reference_detailed(op, xi, attrs, standard).rounded).view(fmt.uint)

        def err(x1, got_bits):
            with np.errstate(invalid="ignore"):
                yv = float(np.array([got_bits], dtype=fmt.uint).view(fmt.dtype).astype(np.float64)[0])
            return exact_error(op, x1, yv, attrs, standard, fmt)  # (ULP error, exact value's text) or None

        return rounded, err

    where = f"({tgt.info.kind} {tgt.version}, {cpu_model()})"
    return check.verdict(prop, ref_of, tgt.name, where)


def _branch_points(op, attrs, fmt, standard, most: int = 8) -> list[float]:
    """Up to `most` of the operator's branch points and thresholds in fmt, spread over their magnitudes:
    the mixed vectors' neighbours beside the ladder of magnitude classes."""
    try:
        pts = sorted({abs(float(p)) for p in special_points(op, attrs, fmt, standard)} - {0.0})
    except (ValueError, OverflowError, ArithmeticError):
        return []
    if len(pts) > most:
        pts = [pts[i] for i in np.linspace(0, len(pts) - 1, most).astype(int)]
    return pts


def path_accuracy(res, worst) -> None:
    """The accuracy of a check is the worst over every layout run: an output that differed in another layout
    and is further from the reference than the measurement's worst replaces it, with the layout named."""
    if not worst or worst.get("ulp") is None:
        return
    if res.max_ulp is not None and not worst["ulp"] > res.max_ulp:
        return
    res.max_ulp, res.worst_reverified = worst["ulp"], True
    res.worst_input, res.worst_input_bits = worst["input"]["value"], worst["input"]["bits"]
    res.worst_output, res.worst_output_bits = worst["output"]["value"], worst["output"]["bits"]
    res.worst_reference, res.worst_reference_bits = worst["reference"]["value"], worst["reference"]["bits"]
    res.worst_exact = worst.get("exact")
    res.worst_layout = worst["layout"]
    res.notes.append(
        f"the worst error is in another layout than the measurement's call: {worst['layout']} ({worst['ulp']:.6g} ULP)"
    )


def replay_report(x, y, y2, fmt, how: str) -> dict:
    """Where a second run of the target gave other bits than the run that was measured (any NaN
    equals any NaN: payloads are not judged elsewhere either)."""
    differ = np.flatnonzero(bits_differ(y, y2, fmt))
    out = {"inputs": int(x.size), "how": how, "differ": int(differ.size)}
    if differ.size:
        i = int(differ[0])
        out["first"] = {"input": value_of(x[i], fmt), "output": value_of(y[i], fmt), "replayed": value_of(y2[i], fmt)}
    return out


def _fp_findings(res, events) -> None:
    res.fp_environment = list(events)
    if events:
        res.notes.append(
            "; ".join(events) + ". It was measured under the mode it set for itself; opcert's "
            "reference and comparison ran under opcert's own (the environment is saved and restored "
            "around every load and call of the target)"
        )


def _label(x, mode) -> str:
    if mode == "exhaustive":
        w = 2 * x.itemsize
        return f"every {x.dtype.name} input 0x{0:0{w}x}..0x{x.size - 1:0{w}x} ({x.size:,})"
    return f"{describe_inputs(x)} ({mode})"


def _check_properties(req: Request, tgt, x, y, ref, mode, rerun) -> list:
    t0 = time.perf_counter()
    op, fmt = get_operator(req.op), get_format(req.dtype)
    compiled = compile_all(op, fmt, req.resolved, req.options.standard or op.primary, _property_names(req))
    checker = PropertyChecker(compiled, fmt)
    bits = np.ascontiguousarray(x).view(fmt.uint).astype(np.uint64)
    sign = np.uint64(1) << np.uint64(fmt.bits - 1)
    at = inputs_mod.index_of(bits)

    def pos_of(b):
        return min(int(at(np.uint64(b))), bits.size - 1)

    mags = inputs_mod.sorted_unique(bits & ~sign)
    ip, ineg = at(mags), at(mags | sign)
    inf = int(np.array([np.inf]).astype(fmt.dtype).view(fmt.uint)[0])
    rb = np.ascontiguousarray(ref.rounded).view(fmt.uint)
    has_inf = all(int(bits[pos_of(b)]) == b for b in (inf, inf | int(sign)))
    limits = (int(rb[pos_of(inf)]), int(rb[pos_of(inf | int(sign))])) if has_inf else None
    checker.add_block(mags, y[ip], y[ineg], limits=limits)
    checker.finish_chains()

    def describe_bits(blist):
        yy = rerun()
        return [
            {
                "input": value_of(x[i], fmt),
                "output": value_of(y[i], fmt),
                "reference": value_of(ref.rounded[i], fmt),
                "replayed": value_of(yy[i], fmt),
            }
            for i in (pos_of(b) for b in blist)
        ]

    where = f"({tgt.info.kind} {tgt.version}, {cpu_model()})"
    return [
        r.to_dict()
        for r in verdicts(
            checker,
            compiled,
            complete=mode == "exhaustive",
            target=tgt.name,
            method_where=where,
            describe=describe_bits,
            elapsed=time.perf_counter() - t0,
        )
    ]


def _measure_sweep(req: Request, t0: float, progress=None) -> AccuracyResult:
    """An exhaustive binary32 measurement (or one over options.magnitude_range): the target probed, its
    layouts checked, the sweep run (verify.accuracy.sweep), then the verdicts from the outputs it recorded."""
    o, op = req.options, get_operator(req.op)
    start, stop = o.magnitude_range or (0, HALF)
    if not (isinstance(start, int) and isinstance(stop, int) and 0 <= start < stop <= HALF):
        raise UsageError(f"magnitude range {o.magnitude_range} must lie within [0, 2^31)")
    if isinstance(req.target, Target):
        why = getattr(req.target, "no_command", None)
        raise UsageError(
            "an exhaustive float32 sweep runs its target in worker processes: give the target by "
            "name (module:function), or a module-level function of an importable module, not "
            + (f"{req.target.name} (a worker cannot be given it)" if why else "an object")
            + "; a sample (inputs='sample') measures it in this process"
        )
    in_process = trusted(req.target) or o.isolation == "none"
    if o.checkpoint is not None:
        refuse_non_directory(o.checkpoint)  # before the target is loaded
    full = (start, stop) == (0, HALF)
    # the whole format: 10^6 inputs at every position; a range of magnitudes (a partial sweep): 1,024
    req = dataclasses.replace(req, layout_default=SWEEP_LAYOUT_SAMPLES if full else DEFAULT_LAYOUT_SAMPLES)
    # the layout check runs beside the sweep's chunks, in one of its workers (sweep's `alongside`): it needs
    # nothing the sweep computes, and before the sweep it added its whole time to a float32 check's on 2 cores
    # (in the target's process: bench/README.md, 'Figures behind choices in the code'). Not where
    # measure itself runs in a worker, nor with a Dask scheduler: there it comes first, as before.
    beside = not in_worker() and not o.scheduler
    tell(
        progress,
        "loading the target and its first call"
        if beside
        else "loading the target, its first call and its code paths (layout check)",
    )
    try:
        call = (op.name, "float32", req.attrs, o.standard, (start, min(start + (1 << 16), stop)))  # its first block
        if in_process or in_worker():
            info, checked = _describe(req, call), None
        else:
            # one worker loads the target, makes its first call (what it loads then keys the checkpoints),
            # says what it supports and runs the layout check: a worker is slow to start and load
            # (bench/README.md, 'Figures behind choices in the code')
            info, *checked = run_isolated(_probe_and_unsupported if beside else _probe_and_check, req, call)
    except TargetFailure as exc:
        return _crashed(req, str(exc), t0)
    except WorkerLost as lost:
        return _crashed(
            req, f"target {req.target_name} {lost} (while being loaded, at its first call or in the layout check)", t0
        )
    compiled = (
        compile_all(op, F32, req.resolved, o.standard or op.primary, _property_names(req)) if o.properties != () else []
    )
    cfg = _sweep_config(req, info, tuple(c.name for c in compiled), start, stop)
    res = _base_result(req, "exhaustive", 2 * (stop - start), info)
    res.exhaustive = full
    if not full:
        res.mode = f"magnitudes [0x{start:08x}, 0x{stop:08x}), both signs"
    try:
        if beside:
            why, lay = (_unsupported(req)[0] if in_process else checked[0]), None
        else:
            why, lay = (
                _unsupported_and_layout(req) if in_process else checked or run_isolated(_unsupported_and_layout, req)
            )
    except TargetFailure as exc:
        return _crashed(req, str(exc), t0, info)
    except WorkerLost as lost:
        return _crashed(req, f"target {req.target_name} {lost}", t0, info)
    if why:
        return _stopped(res, "unsupported", why, t0)
    tell(progress, None)
    alongside = (_layout_alone, (req,), {}) if beside and _wants_layout(req) else None
    try:
        stats, checker, sinfo = sweep(
            cfg,
            workers=o.workers,
            scheduler=o.scheduler,
            checkpoint=o.checkpoint,
            progress=progress,
            alongside=alongside,
        )
    except TargetFailure as exc:
        return _stopped(res, "crashed", str(exc), t0)
    if alongside is not None:
        ok, lay = sinfo.pop("alongside")
        if not ok:  # as before the sweep: the worker lost, or the target failed to load again there
            if isinstance(lay, WorkerLost):
                return _crashed(req, f"target {req.target_name} {lay} (in the layout check)", t0, info)
            if isinstance(lay, TargetFailure):
                return _crashed(req, str(lay), t0, info)
            raise lay
    res.inputs_checked, res.sweep = stats.n if cfg.accuracy else cfg.inputs, sinfo
    if sinfo["rejected_chunks"]:
        res.notes.append(
            f"{len(sinfo['rejected_chunks'])} checkpoint chunk file(s) failed verification and were "
            "computed again: " + "; ".join(sinfo["rejected_chunks"][:5])
        )
    if sinfo["modified_input"]:
        res.target_modified_input = True
        res.notes.append(MODIFIED_INPUT)
    _fp_findings(res, sinfo.get("fp_environment", []))
    outs = _SweepOutputs(req, cfg, sinfo["outputs"], in_process)
    tell(progress, "the verdicts: worst cases run again, properties' counterexamples replayed")
    try:
        _sweep_verdicts(res, outs, stats, (checker, compiled, info, sinfo["wall_s"]), lay)
    except (TargetFailure, WorkerLost) as exc:
        res.status, res.error = "crashed", f"target {req.target_name} failed when run again on its worst inputs: {exc}"
    res.elapsed_s = time.perf_counter() - t0
    res.sweep["inputs_per_s"] = (
        res.inputs_checked / max(sinfo["wall_s"], 1e-9) if sinfo["resumed_chunks"] == 0 else None
    )
    return res


def _sweep_config(req: Request, info, properties: tuple, start: int, stop: int):
    o = req.options
    return SweepConfig(
        req.op,
        req.target_name,
        tuple((k, f"{v.numerator}/{v.denominator}") for k, v in req.resolved.items()),
        o.standard,
        start,
        stop,
        min(1 << 24, stop - start),
        flush_allowed=o.flush_allowed,
        target_fingerprint=info.fingerprint,
        target_dependencies=info.dependencies,
        properties=properties,
        timeout=o.target_timeout,
        accuracy=bool(o.accuracy) or not properties,
        opcert_code=code_fingerprint(),
    )


class _SweepOutputs:
    """The target's outputs at the inputs a sweep's verdicts name: as measured (the sweep recorded every one
    its results name), and run again, each in its own aligned block (once, where a verdict asks)."""

    def __init__(self, req: Request, cfg, measured: dict, in_process: bool):
        self.req, self.cfg, self.measured, self.in_process = req, cfg, measured, in_process
        self.replays: dict = {}
        self.named: set = set()

    def replayed(self, bits_list):
        need = [b for b in bits_list if b not in self.replays]
        if need:
            self.replays.update(
                rerun_blocks(self.cfg, need) if self.in_process else run_isolated(rerun_blocks, self.cfg, need)
            )
        return [self.replays[b] for b in bits_list]

    def outputs(self, bits_list):
        self.named.update(bits_list)
        missing = [b for b in bits_list if b not in self.measured]
        if missing:  # not expected: every input a chunk's results name has its output recorded
            raise RuntimeError(
                "the sweep recorded no output for input(s) " + ", ".join(f"0x{b:08x}" for b in missing[:4])
            )
        return [self.measured[b] for b in bits_list]

    def at(self, bits_list):
        """(inputs, outputs as measured, references) at the given input bits."""
        x, y = _binary32(bits_list), _binary32(self.outputs(bits_list))
        op, req = get_operator(self.req.op), self.req
        return x, y, reference_detailed(op, x, req.resolved, req.options.standard).rounded

    def describe(self, bits_list) -> list[dict]:
        """A counterexample's inputs, each with its output, reference and output when run again."""
        x, y, r = self.at(bits_list)
        y2 = _binary32(self.replayed(bits_list))
        return [
            {
                "input": value_of(x[i], F32),
                "output": value_of(y[i], F32),
                "reference": value_of(r[i], F32),
                "replayed": value_of(y2[i], F32),
            }
            for i in range(len(bits_list))
        ]


def _sweep_verdicts(res: AccuracyResult, outs: _SweepOutputs, stats: Stats, found: tuple, lay) -> None:
    """res's figures, property verdicts, layout verdict and replay from a finished sweep; found: (the
    property checker, the properties compiled, the target's description, the sweep's wall time)."""
    checker, compiled, info, wall_s = found
    op, req, full = get_operator(outs.req.op), outs.req, res.exhaustive
    if outs.cfg.accuracy:
        finish(res, op, F32, req.resolved, req.options.standard, stats, outs.at)
    else:
        res.mode = "properties only" if full else f"properties only, {res.mode}"
        res.notes.append(f"the properties alone were checked (no ULP statistics): {res.command} measures the accuracy")
    if compiled:
        where = f"({info.kind} {info.version}, {cpu_model()})"
        res.properties = [
            p.to_dict()
            for p in verdicts(
                checker,
                compiled,
                complete=full,
                target=req.target_name,
                method_where=where,
                describe=outs.describe,
                elapsed=wall_s,
            )
        ]
        if not full:
            for p in res.properties:
                if p["status"] == "checked":
                    p["method"] += " (a part of the binary32 range)"
    if lay is not None:
        if isinstance(lay, str):
            res.status, res.error = "crashed", lay
        else:
            res.properties.append(lay[0])
            if outs.cfg.accuracy:
                path_accuracy(res, lay[1])
    if outs.named:
        blist = sorted(outs.named)
        res.replay = replay_report(
            _binary32(blist),
            _binary32(outs.outputs(blist)),
            _binary32(outs.replayed(blist)),
            F32,
            "the inputs the result names, each called again in its own aligned block",
        )


def _layout_sampled(req: Request, tgt: Target):
    """The layout check of a float32 sweep's target (loaded: tgt): on a stratified sample of
    req.layout_samples inputs (SWEEP_LAYOUT_SAMPLES for the whole format; every binary32 input at every
    position of every length would be 2^32 x 2,145 outputs, hours even at torch's rate: bench/README.md,
    'Figures behind choices in the code'), in the process that runs the target."""
    op, o = get_operator(req.op), req.options
    n = req.layout_samples
    # more candidates than go through the layouts (16x, 4x past 2^16, where the reference's cost per input
    # adds up: bench/README.md, 'Figures behind choices in the code'): those not correctly rounded go first
    x = inputs_mod.sample(op, F32, req.resolved, (16 if n <= 1 << 16 else 4) * n, o.seed, o.standard)
    y = tgt.run(op, x, req.resolved, label=f"{x.size:,} sampled float32 inputs (layout check)")
    rounded = reference_detailed(op, x, req.resolved, o.standard).rounded
    return layout_verdict(req, tgt, x, y, rounded, f"one call of the {x.size:,} sampled inputs", whole=False)


def _describe(req: Request, call):
    """The target's identity (targets.describe_target, its first call included)."""
    return describe_target(req.target, req.options.isolation, call, req.options.target_timeout, WORKER_MODULES)


def _probe_and_check(req: Request, call):
    """In one worker: the target's identity, what it does not support, and its layout check."""
    return (_describe(req, call), *_unsupported_and_layout(req))


def _probe_and_unsupported(req: Request, call):
    """In one worker: the target's identity and what it does not support (its layout check runs beside the
    sweep: _layout_alone)."""
    return _describe(req, call), _unsupported(req)[0]


def _unsupported(req: Request):
    """In the target's process: (why it does not support the check or None, the target loaded)."""
    tgt = load_target(req.target, req.options.target_timeout, req.options.standard)
    return tgt.unsupported(get_operator(req.op), "float32", req.resolved), tgt


def _unsupported_and_layout(req: Request):
    """In the target's process: (why it does not support the check or None, the layout result, why the target
    failed the layout check (a string) or None)."""
    why, tgt = _unsupported(req)
    if why or not _wants_layout(req):
        return why, None
    return None, _layout_checked(req, tgt)


def _layout_alone(req: Request):
    """In one of the sweep's workers, beside its chunks: the layout result, or why the target failed the
    layout check (a string), as _unsupported_and_layout gives them for a target that supports the check."""
    return _layout_checked(req, load_target(req.target, req.options.target_timeout, req.options.standard))


def _layout_checked(req: Request, tgt: Target):
    try:
        return _layout_sampled(req, tgt)
    except TargetFailure as exc:
        return f"target {req.target_name} failed in the layout check: {exc}"


def _binary32(bits_list) -> np.ndarray:
    """binary32 values from their bit patterns (Python ints)."""
    return np.array(bits_list, dtype=np.uint64).astype(np.uint32).view(np.float32)


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


def _compare_float(res, req: Request, x, y, ref) -> None:
    """res's figures from the outputs y of the inputs x and their reference (the per-element errors kept
    in res.errors where options.keep_errors)."""
    op, fmt, o = get_operator(req.op), get_format(req.dtype), req.options
    keep = [] if o.keep_errors else None
    stats = float_stats(x, y, ref, fmt, o.flush_allowed, keep)
    index = inputs_mod.index_of(np.ascontiguousarray(x).view(fmt.uint))

    def at(bits_list):
        idx = index(np.array(bits_list, dtype=fmt.uint)) if len(bits_list) else np.array([], dtype=np.int64)
        return x[idx], y[idx], ref.rounded[idx]

    finish(res, op, fmt, req.resolved, o.standard, stats, at)
    if keep:
        with np.errstate(invalid="ignore"):
            res.errors = (x.astype(np.float64), keep[0])


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
        res.examples[kind] = {
            "input": value_of(xs[0], fmt),
            "output": value_of(ys[0], fmt),
            "reference": value_of(rs[0], fmt),
        }
    cands = sorted({b for _, b in stats.top + stats.top_wrong})
    if not cands:
        return
    res.max_ulp_distance = stats.max_distance
    xs, ys, rs = at(cands)
    with np.errstate(invalid="ignore"):
        y64 = ys.astype(np.float64)
    best = None
    for i, b in enumerate(cands):
        got = exact_error(op, xs[i : i + 1], float(y64[i]), attrs, standard, fmt)
        if got is None:
            continue
        error, exact_text = got
        if best is None or error > best[1] or (error == best[1] and b < best[0]):
            best = (b, error, exact_text, i)
    if best is None:
        return
    b, error, exact_text, i = best
    res.max_ulp, res.worst_exact, res.worst_reverified = error, exact_text, True
    with np.errstate(invalid="ignore"):
        res.worst_input, res.worst_input_bits = float(xs[i].astype(np.float64)), hex_bits(xs[i], fmt)
        res.worst_output, res.worst_output_bits = float(y64[i]), hex_bits(ys[i], fmt)
        res.worst_reference = float(rs[i].astype(np.float64))
        res.worst_reference_bits = hex_bits(rs[i], fmt)


def exact_error(op, xi, yi: float, attrs, standard, fmt) -> tuple[float, str] | None:
    """|y - v| / ulp(v) with v enclosed to REVERIFY_BITS bits (Fractions);
    None where the error is not a number (a NaN output or reference, an infinite exact value)."""
    if math.isnan(yi):
        return None
    with np.errstate(invalid="ignore"):
        xf = float(np.asarray(xi).astype(np.float64)[0])
    if math.isnan(xf):
        return None
    if math.isinf(xf):
        lim = op.limit(1 if xf > 0 else -1, attrs)
        if isinstance(lim.value, str):  # an infinite limit: infinity mismatches are counted apart
            return None
        try:
            v = eval_rational(lim.value, Fraction(0), attrs)
        except Exception:  # noqa: BLE001 - an irrational limit (alpha ln 2)
            v = evaluate(lim.value, Fraction(0), attrs, fmt, min_prec=REVERIFY_BITS).mid
    else:
        ref = reference_detailed(op, xi, attrs, standard, exact_bits=REVERIFY_BITS)
        v = ref.exact_q[0]
        if v is None:
            return None
    if math.isinf(yi) and round_fraction(v, fmt, negative_zero=v < 0) == yi:
        return 0.0, f"{float(v):.17g}"  # the correctly rounded result is this infinity
    return round_up(ulp_error_exact(yi, v, fmt)), f"{float(v):.17g}"
