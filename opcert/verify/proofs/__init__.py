"""z3-backed proofs of the properties the catalog declares.

prove(op)                      the specification, for every attribute value, and
                               the agreement of the standards' definitions
prove(op, dtype, attrs)        the implementation in that format
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
import queue as queues
import signal
import sys
import time
from dataclasses import dataclass, fields, replace

from opcert.errors import UsageError, choices
from opcert.formats import get_format
from opcert.options import Options
from opcert.spec import (
    binary_operators,
    get_binary_operator,
    get_operator,
    get_tensor_operator,
    is_binary_operator,
    is_tensor_operator,
    operators,
    scale_bias,
    tensor_operators,
)
from opcert.spec.attrs import describe, resolve
from opcert.verify.accuracy.measure import measure
from opcert.verify.proofs import descriptors, impl_level, spec_level
from opcert.verify.proofs.axes import prove_axis_rules
from opcert.verify.proofs.pow_reals import prove_pow_reals
from opcert.verify.proofs.rows import attribute_terms, prove_rows
from opcert.verify.result import ProofReport, PropertyResult
from opcert.workers import die_with_parent, fresh_stdio, warm_before_fork

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
    if is_binary_operator(op) and dtype in (None, "real") and target == "opcert" and not attrs and not standard:
        return _prove_binary(get_binary_operator(op), properties, rlimit)
    op = get_operator(op)  # a binary operator in a format (or with attributes): UsageError, saying where to go
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
    if standard and op.standard(standard).rounded_scale_bias:
        return _variant_not_proved(op, dtype, attrs, standard, props, t0)
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


def _prove_binary(op, properties, rlimit) -> ProofReport:
    names = [p.name for p in op.properties]
    extra = [n for n in properties or () if n not in names]
    if extra:
        raise UsageError(f"{op.name} declares no property {extra[0]!r}; declared: {choices(names)}")
    return prove_pow_reals(op, properties, rlimit)


def _variant_not_proved(op, dtype, attrs, standard, props, t0) -> ProofReport:
    """The +rounded variant (spec.scale_bias): every property skipped for opcert's code, with the reason and the
    command that decides them on outputs."""
    resolved = resolve(op, attrs, standard)
    report = ProofReport(op.name, dtype or "real", describe(resolved, op))
    why = scale_bias.WHY_NOT_PROVED.format(op=op.name, name=op.standard(standard).name)
    report.properties = [PropertyResult(p.name, p.kind, p.statement, "skipped", "-", note=why) for p in props]
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
                r = prove_rows(op, p, formula, attribute_terms(op), _rlimit(rlimit), ", ".join(keys))
                if len(by_formula) > 1:
                    r.statement += f" ({', '.join(keys)})"
                report.properties.append(r)
    elif not axis_rules_only:
        note = UNDECIDED_ROWS.format(op=op.name, dtype=fmt if fmt in ("float16", "bfloat16") else "float16")
        held = op.with_values(op.standard(None))  # the primary standard at its defaults, as the check would run
        for p in chosen:
            why = p.not_claimed(held)
            if why is None:
                report.properties.append(PropertyResult(p.name, p.kind, p.statement, "unknown", "-", note=note))
            else:  # scaling at the default epsilon: nothing to decide there
                r = PropertyResult.skipped(p, why)
                r.expected = "not claimed"
                report.properties.append(r)
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
            return PropertyResult.skipped(
                p,
                f"declared for {', '.join(p.standards)}'s definition, not {standard}'s",
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


def _shard(tasks, taken, queue, parent_pid: int) -> None:
    """A worker of prove_all: takes the next task while there is one, and proves it in a process forked
    for it (this worker asks z3 nothing, so every task starts from the same state); each report is sent
    as it comes. It dies with its parent and leaves Ctrl-C to it (as opcert.workers' workers)."""

    die_with_parent(parent_pid)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    fresh_stdio()
    ctx = multiprocessing.get_context("fork")
    while True:
        with taken.get_lock():
            i = taken.value
            taken.value += 1
        if i >= len(tasks):
            return
        child = ctx.Process(target=_one_task, args=(tasks, i, queue, os.getpid()))
        child.start()
        child.join()
        if child.exitcode != 0:
            queue.put((i, None, f"the process proving it exited with code {child.exitcode}"))
            return


def fresh_z3() -> None:
    """A new z3 context for this process, as a new process has: z3's search depends on the numbering of its
    terms, which every term made before in the context moves (a fork inherits its parent's). z3py makes its
    main context anew when it has none; the two terms fp_model keeps at module level are made again in it,
    first, as its import makes them."""
    import z3  # lazy: as every z3 import of opcert (the commands that prove load it)

    z3.z3._main_ctx = None
    fp = sys.modules.get("opcert.verify.proofs.fp_model")
    if fp is not None:
        fp.F64, fp.RNE = z3.Float64(), z3.RNE()


def prove_alone(*args, **keywords) -> ProofReport:
    """prove(*args, **keywords) in a process forked for it, so that z3 starts from the state every such
    process starts from: what this process asked z3 before (the gate's and the pytest plugin's earlier
    checks) cannot change the verdict or its units. The gate, `opcert accuracy --require` and the pytest
    plugin prove through it. The child starts with a new z3 context (fresh_z3): a fork alone keeps its
    parent's terms. os.fork, not multiprocessing: the gate's workers are daemonic, and may not start
    multiprocessing children; the child runs z3 and NumPy only (no runtime's threads), and its exception is
    raised here."""
    warm_before_fork()  # numba's registries loaded once here, not again in every child
    rfd, wfd = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: prove, send, leave without running the parent's exit handlers
        code = 0
        try:
            os.close(rfd)
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            try:
                fresh_z3()
                out = (True, prove(*args, **keywords))
            except BaseException as exc:  # noqa: BLE001 - the parent re-raises it
                out = (False, exc)
            try:
                data = pickle.dumps(out)
            except Exception as exc:  # noqa: BLE001 - an exception that does not pickle: its text
                data = pickle.dumps((False, RuntimeError(f"{type(out[1]).__name__}: {out[1]}; and {exc}")))
            with os.fdopen(wfd, "wb") as w:
                w.write(data)
        except BaseException:  # noqa: BLE001 - nothing may escape the child
            code = 1
        finally:
            os._exit(code)
    os.close(wfd)
    with os.fdopen(rfd, "rb") as r:
        data = r.read()
    _, status = os.waitpid(pid, 0)
    if not data:
        raise RuntimeError(f"the process proving {args[:2]} ended with status {status} and sent nothing")
    ok, value = pickle.loads(data)
    if not ok:
        raise value
    return value


def _one_task(tasks, i: int, queue, parent_pid: int) -> None:
    die_with_parent(parent_pid)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        fresh_z3()
        queue.put((i, _prove_task(tasks[i]), None))
    except BaseException as exc:  # noqa: BLE001 - the parent re-raises it
        queue.put((i, None, f"{type(exc).__name__}: {exc}"))


def prove_all(
    rlimit: int | None = None,
    workers: int | None = None,
    progress=None,
    enumerate_float32: bool = False,
    only: tuple[str, ...] | None = None,
) -> list[ProofReport]:
    """Every operator: the specification (all attribute values, agreement of
    the standards, descriptors) and the implementation in every float format
    at default attributes; in parallel processes. z3's search depends on what its process asked
    before (the numbering of its terms), so each (operator, format) pair is proved in a process of
    its own, forked from a worker that never asks z3 anything: a verdict, its z3 units and its time
    are those of `opcert prove OP --dtype DT` alone, whatever else the catalog holds and whichever
    worker is free first (Gelu's agreement query, in one worker after other operators' queries and alone:
    bench/README.md). `only`: these operators' pairs alone."""

    rlimit = _rlimit(rlimit)
    chosen = None if only is None else set(only)  # operators by name (None: the whole catalog)
    tasks = [(op.name, "real", rlimit, False) for op in tensor_operators() if chosen is None or op.name in chosen]
    tasks += [(op.name, "real", rlimit, False) for op in binary_operators() if chosen is None or op.name in chosen]
    tasks += [
        (op.name, dt, rlimit, enumerate_float32)
        for op in operators()
        if chosen is None or op.name in chosen
        for dt in ("real", "float16", "bfloat16", "float32", "float64")
    ]
    workers = min(workers or os.cpu_count() or 1, len(tasks))
    ctx = multiprocessing.get_context("fork")
    q = ctx.Queue()
    taken = ctx.Value("i", 0)  # the next task's index: a free worker takes it
    procs = [ctx.Process(target=_shard, args=(tasks, taken, q, os.getpid())) for _ in range(workers)]
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
