"""z3-backed proofs of the properties the catalog declares.

prove(op)                      the specification, for every attribute value, and
                               the agreement of the standards' definitions
prove(op, dtype, attrs)        the implementation in that format
"""

from __future__ import annotations

import multiprocessing
import os
import queue as queues
import signal
import time
from dataclasses import dataclass, fields, replace

from opcert.errors import UsageError, choices
from opcert.formats import get_format
from opcert.options import Options
from opcert.spec import get_operator, get_tensor_operator, is_tensor_operator, operators, tensor_operators
from opcert.spec.attrs import describe, resolve
from opcert.verify.accuracy.measure import measure
from opcert.verify.proofs import descriptors, impl_level, spec_level
from opcert.verify.proofs.axes import prove_axis_rules
from opcert.verify.proofs.rows import prove_rows
from opcert.verify.result import ProofReport, PropertyResult
from opcert.workers import die_with_parent, fresh_stdio

__all__ = ["ProofReport", "ProofSettings", "PropertyResult", "prove"]


@dataclass(frozen=True)
class ProofSettings:
    """How prove() goes about it, apart from what it proves (operator, format, attributes, properties,
    z3's rlimit, standard, target). samples, isolation, target_timeout: how another target's code is run
    where its properties are decided on its outputs (opcert.Options' fields of the same names; samples:
    float64's). cross_check: a 16-bit enumeration's verdicts checked against the bit-precise z3 model
    too. enumerate_float32: in float32, what the provers leave unknown is decided by running opcert's
    code on every float32 input (the sweep for properties alone; its time: bench/README.md, 'Figures
    behind choices in the code')."""

    samples: int | None = None
    isolation: str = "process"
    target_timeout: float | None = None
    cross_check: bool = False
    enumerate_float32: bool = False


SETTINGS = frozenset(f.name for f in fields(ProofSettings))


def prove(
    op,
    dtype: str | None = None,
    attrs: dict | None = None,
    properties=None,
    rlimit: int | None = None,
    standard: str | None = None,
    *,
    target="opcert",
    settings: ProofSettings | None = None,
    **keywords,
) -> ProofReport:
    """The declared properties: of the exact specification (dtype None), of
    opcert's implementation in a format (z3 and enumeration), or of any other
    target in a format (every input of float16, bfloat16 and float32: a proof
    for that target; samples of float64: evidence). settings: a ProofSettings
    (samples, isolation, target_timeout, cross_check, enumerate_float32); each
    of its fields may also be given as a keyword, which overrides the record's
    (`prove("Sigmoid", "float32", enumerate_float32=True)`). rlimit: z3's
    resource units per query (its `rlimit`, never a time: the verdicts do not
    depend on the host's load), instead of each query family's calibrated budget (common.BUDGETS)."""
    settings = _settings(settings, keywords)
    rlimit = _rlimit(rlimit)
    if is_tensor_operator(op):
        return prove_tensor(op, dtype, properties, rlimit, target=target)
    op = get_operator(op)
    t0 = time.perf_counter()
    if target != "opcert":
        return _prove_target(op, dtype, attrs, properties, standard, target, settings, t0)
    names = [p.name for p in op.properties]
    wanted = list(properties) if properties else None
    if wanted:
        extra = [n for n in wanted if n not in names and not n.startswith("agrees")]
        if extra:
            raise UsageError(f"{op.name} declares no property {extra[0]!r}; declared: {choices(names)}")
    props = [p for p in op.properties if wanted is None or p.name in wanted]
    if dtype in (None, "real"):
        resolved = resolve(op, attrs, standard) if attrs else None
        report = ProofReport(op.name, "real", describe(resolved, op) if resolved else "all values in their domains")
        report.properties = [_spec_property(op, p, resolved, rlimit, standard) for p in props]
        if not attrs and (wanted is None or any(n.startswith("agrees") for n in wanted)):
            report.properties += spec_level.cross_standard(op, rlimit)
        if not attrs and wanted is None:
            report.properties += [descriptors.prove_descriptors(op, s.key, rlimit) for s in op.standards]
    else:
        fmt = get_format(dtype)
        if fmt.kind != "float":
            raise UsageError("proofs cover the float formats; allowed: float16, bfloat16, float32, float64")
        resolved = resolve(op, attrs, standard)
        report = ProofReport(op.name, fmt.name, describe(resolved, op))
        subject = impl_level.Subject(op, fmt, resolved, standard or op.primary)
        enumerated = None
        if fmt.bits <= 16:
            plain = [
                p for p in props if not p.spec_only and not p.kernel_only and p.kind not in ("nan_propagation", "limit")
            ]
            enumerated = impl_level.prove_enumerated(subject, plain, rlimit, settings.cross_check) if plain else {}
        report.properties = [impl_level.prove_property(subject, p, rlimit, enumerated) for p in props]
        if settings.enumerate_float32 and fmt.name == "float32":
            _enumerate_unknown(op, report, attrs, standard)
        elif fmt.name == "float32":
            for p in report.properties:
                if p.status == "unknown":
                    cmd = (
                        f"opcert prove {op.name} --dtype float32"
                        + "".join(f" --attr {k}={v}" for k, v in (attrs or {}).items())
                        + (f" --standard {standard}" if standard else "")
                        + f" --property {p.name} --enumerate"
                    )
                    p.note = f"{p.note + '; ' if p.note else ''}`{cmd}` decides it on every float32 input"
    report.elapsed_s = time.perf_counter() - t0
    return report


UNDECIDED_ROWS = (
    "no prover here decides opcert's own implementation over rows in a float format: its row properties "
    "are decided over every pair of 16-bit values by `opcert accuracy {op} --dtype {dtype} --target opcert "
    "--exhaustive` (45 minutes on 2 cores), and checked on sampled rows by `opcert accuracy`"
)


def prove_tensor(
    op, dtype=None, properties=None, rlimit: int | None = None, target: str = "opcert", axis_rules_only: bool = False
) -> ProofReport:
    """A tensor operator: its standards' axis rules related with z3 (verify.proofs.axes), and its declared
    row properties: over the reals, the standards' formula with z3 (verify.proofs.rows); in a float format,
    `unknown` with the command that decides them (never a pass)."""
    op, _ = get_tensor_operator(op)
    if target != "opcert":
        raise UsageError(
            f"{op.name}: a target's properties over rows are not checked yet (the black-box checks "
            "of the tensor operators are to come); `opcert prove` gives their axis rules and "
            "opcert's declared properties"
        )
    t0 = time.perf_counter()
    names = [p.name for p in op.properties]
    wanted = list(properties) if properties else None
    if wanted:
        extra = [n for n in wanted if n not in names]
        if extra:
            raise UsageError(f"{op.name} declares no property {extra[0]!r}; declared: {choices(names)}")
    fmt = "real" if dtype in (None, "real") else get_format(dtype).name
    report = ProofReport(op.name, fmt, "axis rules" if axis_rules_only else "every row")
    if fmt == "real" and wanted is None:
        report.properties += prove_axis_rules(op, _rlimit(rlimit))
    chosen = [p for p in op.properties if wanted is None or p.name in wanted]
    if not axis_rules_only and fmt == "real":
        by_formula: dict = {}
        for std in op.standards:  # the standards that share one formula are proved once
            by_formula.setdefault(std.formula, []).append(std.key)
        for formula, keys in by_formula.items():
            for p in chosen:
                r = prove_rows(op, p, formula, {}, _rlimit(rlimit), ", ".join(keys))
                if len(by_formula) > 1:
                    r.statement += f" ({', '.join(keys)})"
                report.properties.append(r)
    elif not axis_rules_only:
        note = UNDECIDED_ROWS.format(op=op.name, dtype=fmt if fmt in ("float16", "bfloat16") else "float16")
        report.properties += [PropertyResult(p.name, p.kind, p.statement, "unknown", "-", note=note) for p in chosen]
    report.elapsed_s = time.perf_counter() - t0
    return report


def _enumerate_unknown(op, report: ProofReport, attrs, standard) -> None:
    """Replace each unknown verdict by the one of every float32 input run on opcert's code."""
    unknown = [p for p in report.properties if p.status == "unknown"]
    if not unknown:
        return
    swept = _prove_target(
        op, "float32", attrs, [p.name for p in unknown], standard, "opcert", ProofSettings(), time.perf_counter()
    )
    by_name = {p.name: p for p in swept.properties}
    for i, p in enumerate(report.properties):
        q = by_name.get(p.name)
        if p.status != "unknown":
            continue
        if q is None or q.status not in ("proved", "refuted"):
            why = swept.error or (q.note if q is not None else "no verdict")
            p.note = f"{p.note + '; ' if p.note else ''}enumerating every float32 input did not decide it: {why}"
            continue
        q.expected = p.expected
        q.note = (
            f"{q.note + '; ' if q.note else ''}the provers left it unknown "
            f"({p.note or 'no method'}); decided by running opcert's code on every float32 input"
        )
        report.properties[i] = q


def _prove_target(op, dtype, attrs, properties, standard, target, settings: ProofSettings, t0):
    fmt = get_format(dtype)
    if fmt.kind != "float":
        raise UsageError("proofs cover the float formats; allowed: float16, bfloat16, float32, float64")
    names = list(properties) if properties else "all"
    mode = "sample" if fmt.name == "float64" else "exhaustive"
    res = measure(
        op,
        target,
        fmt.name,
        mode,
        Options(
            samples=settings.samples if mode == "sample" else None,
            standard=standard,
            isolation=settings.isolation,
            target_timeout=settings.target_timeout,
            properties=names,
            accuracy=False,
        ),
        attrs=attrs or {},
    )
    report = ProofReport(op.name, fmt.name, res.attrs, target=res.target)
    report.error = res.error if res.status == "crashed" else None
    if res.status == "unsupported":
        report.properties = [
            PropertyResult(p.name, p.kind, p.statement, "skipped", "-", note=res.error)
            for p in op.properties
            if names == "all" or p.name in names
        ]
    report.properties = report.properties or [
        PropertyResult(**{k: v for k, v in d.items() if k != "ok"}) for d in res.properties
    ]
    report.accuracy = res.to_dict()
    report.elapsed_s = time.perf_counter() - t0
    return report


def _spec_property(op, p, resolved, rlimit, standard):
    """A property of the definition it is declared for (`Property.standards`)."""
    key = standard or op.primary
    if p.standards is not None and key not in p.standards:
        if standard is not None:
            return PropertyResult(
                p.name,
                p.kind,
                p.statement,
                "skipped",
                "-",
                note=f"declared for {', '.join(p.standards)}'s definition, not {standard}'s",
            )
        key = p.standards[0]
    r = spec_level.prove_property(op, p, resolved if (standard or key == op.primary) else None, rlimit, std_key=key)
    if key != op.primary:
        r.statement += f" ({key}'s definition)"
    return r


def _settings(settings: ProofSettings | None, keywords: dict) -> ProofSettings:
    """The record prove() was given (default: ProofSettings()), with its keywords in place of its fields.
    A keyword that names no field is refused as Python refuses an unknown keyword argument."""
    unknown = sorted(set(keywords) - SETTINGS)
    if unknown:
        raise TypeError(f"prove() got an unexpected keyword argument {unknown[0]!r}")
    if settings is not None and not isinstance(settings, ProofSettings):
        raise UsageError(f"settings must be an opcert.verify.proofs.ProofSettings; got {type(settings).__name__}")
    return replace(settings or ProofSettings(), **keywords)


def _rlimit(rlimit):
    """A caller's z3 resource limit per query: None (each family's budget) or an integer >= 1."""
    if rlimit is None:
        return None
    if isinstance(rlimit, bool) or not isinstance(rlimit, int) or not 1 <= rlimit < 2**32:
        raise UsageError(
            f"rlimit: z3's resource units per query, an integer from 1 to {2**32 - 1:,} "
            f"(got {rlimit!r}); z3 runs under resource limits, not seconds"
        )
    return rlimit


def _prove_task(args):
    op, dtype, rlimit, enumerate_float32 = args
    return prove(op, dtype, rlimit=rlimit, enumerate_float32=enumerate_float32)


def _shard(tasks, first: int, step: int, queue, parent_pid: int) -> None:
    """A worker of prove_all: tasks first, first + step, ... in turn, each report sent as it comes.
    It dies with its parent and leaves Ctrl-C to it (as opcert.workers' workers)."""

    die_with_parent(parent_pid)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    fresh_stdio()
    for i in range(first, len(tasks), step):
        try:
            queue.put((i, _prove_task(tasks[i]), None))
        except BaseException as exc:  # noqa: BLE001 - the parent re-raises it
            queue.put((i, None, f"{type(exc).__name__}: {exc}"))
            return


def prove_all(
    rlimit: int | None = None, workers: int | None = None, progress=None, enumerate_float32: bool = False
) -> list[ProofReport]:
    """Every operator: the specification (all attribute values, agreement of
    the standards, descriptors) and the implementation in every float format
    at default attributes; in parallel processes. Each worker takes a fixed share of the
    (operator, format) pairs (every `workers`-th), in order: z3's search depends on what its
    process asked before (the numbering of its terms), so pairs handed to whichever worker is
    free first would make a verdict depend on the host's load after all."""

    rlimit = _rlimit(rlimit)
    tasks = [(op.name, "real", rlimit, False) for op in tensor_operators()]
    tasks += [
        (op.name, dt, rlimit, enumerate_float32)
        for op in operators()
        for dt in ("real", "float16", "bfloat16", "float32", "float64")
    ]
    workers = min(workers or os.cpu_count() or 1, len(tasks))
    if workers == 1:
        out = []
        for t in tasks:
            out.append(_prove_task(t))
            if progress:
                progress()
        return out
    ctx = multiprocessing.get_context("fork")
    q = ctx.Queue()
    procs = [ctx.Process(target=_shard, args=(tasks, k, workers, q, os.getpid())) for k in range(workers)]
    for p in procs:
        p.start()
    out: list = [None] * len(tasks)
    try:
        for _ in tasks:
            while True:
                try:
                    i, report, error = q.get(timeout=1.0)
                    break
                except queues.Empty:
                    dead = [p for p in procs if p.exitcode not in (None, 0)]
                    if dead:
                        raise RuntimeError(f"a prove --all worker died (exit code {dead[0].exitcode})") from None
            if error is not None:
                raise RuntimeError(f"{tasks[i][0]} {tasks[i][1]}: {error}")
            out[i] = report
            if progress:
                progress()
    finally:
        for p in procs:
            if p.is_alive() and any(r is None for r in out):
                p.terminate()
            p.join()
    return out
