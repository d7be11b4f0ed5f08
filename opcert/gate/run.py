"""Run a gate: every (check, dtype), judged by the check's policies."""
from __future__ import annotations

import os
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field

from .. import __version__
from ..provenance import command_line, provenance
from ..spec import get_operator
from .config import Check, GateConfig

SCHEMA = "opcert.gate/1"


@dataclass
class CheckResult:
    check: Check
    dtype: str
    status: str                      # pass | fail | skipped
    reasons: list = field(default_factory=list)
    accuracy: dict | None = None
    proofs: list | None = None
    proof_note: str | None = None
    command: str = ""
    elapsed_s: float = 0.0
    plot: tuple | None = field(default=None, repr=False)   # (inputs, errors) or ("chunks", [...])

    @property
    def key(self) -> str:
        return f"{self.check.op}|{self.dtype}|{self.check.target}|{dict(self.check.attrs)}|{self.check.name}"

    def to_dict(self) -> dict:
        c = self.check
        return {"key": self.key, "name": c.label(self.dtype), "op": c.op, "dtype": self.dtype, "target": c.target,
                "mode": c.mode_for(self.dtype), "attrs": dict(c.attrs),
                "policy": {"max_ulp": c.max_ulp, "signed_zero": c.signed_zero, "subnormals": c.subnormals,
                           "proofs": list(c.proofs)},
                "status": self.status, "reasons": self.reasons, "command": self.command,
                "elapsed_s": self.elapsed_s, "accuracy": self.accuracy, "proofs": self.proofs,
                "proof_note": self.proof_note}


@dataclass
class GateResult:
    results: list
    source: str
    elapsed_s: float
    provenance: dict
    command: str

    @property
    def ok(self) -> bool:
        return all(r.status != "fail" for r in self.results)

    def to_dict(self) -> dict:
        counts = {s: sum(r.status == s for r in self.results) for s in ("pass", "fail", "skipped")}
        return {"schema": SCHEMA, "opcert": __version__, "config": self.source, "ok": self.ok,
                "counts": counts, "elapsed_s": self.elapsed_s, "command": self.command,
                "provenance": self.provenance, "checks": [r.to_dict() for r in self.results]}


def _accuracy(check: Check, dtype: str, workers=None):
    from ..verify.accuracy import measure
    return measure(check.op, check.target, dtype, check.mode_for(dtype), samples=check.samples, seed=check.seed,
                   standard=check.standard, flush_allowed=check.subnormals == "flush-allowed",
                   keep_errors=True, workers=workers, **dict(check.attrs))


def _proofs(check: Check, dtype: str):
    if not check.proofs:
        return None, None
    if check.target != "opcert":
        return None, (f"proofs {list(check.proofs)} apply to opcert's implementation, which has a model; "
                      f"target {check.target} has none: not proved here")
    from ..verify.proofs import prove
    rep = prove(check.op, dtype, dict(check.attrs), check.proofs, standard=check.standard)
    return [p.to_dict() for p in rep.properties], None


def judge(check: Check, dtype: str, acc, proofs, proof_note, elapsed) -> CheckResult:
    res = CheckResult(check, dtype, "pass", command=acc.command, elapsed_s=elapsed)
    res.accuracy = acc.to_dict()
    res.proofs, res.proof_note = proofs, proof_note
    if acc.errors is not None:
        res.plot = acc.errors
    elif acc.sweep and acc.sweep.get("chunk_max"):
        res.plot = ("chunks", acc.sweep["chunk_max"])
    if acc.status == "unsupported":
        res.status, res.reasons = "skipped", [acc.error]
        return res
    if acc.status != "ok":
        res.status, res.reasons = "fail", [f"target crashed: {acc.error}"]
        return res
    r = res.reasons
    if acc.max_ulp is not None and acc.max_ulp > check.max_ulp:
        r.append(f"max ULP error {acc.max_ulp!r} > budget {check.max_ulp!r} at x = {acc.worst_input!r} "
                 f"({acc.worst_input_bits}): output {acc.worst_output!r}, correctly rounded {acc.worst_reference!r}")
    for n, what, ex in ((acc.nan_mismatches, "NaN mismatches", "nan_mismatch"),
                        (acc.inf_mismatches, "infinity mismatches", "inf_mismatch")):
        if n:
            e = acc.examples.get(ex, {})
            r.append(f"{n} {what}, first at x = {e.get('input', {}).get('value')} ({e.get('input', {}).get('bits')}): "
                     f"output {e.get('output', {}).get('value')}, reference {e.get('reference', {}).get('value')}")
    if acc.signed_zero_mismatches and check.signed_zero == "strict":
        e = acc.examples["signed_zero_mismatch"]
        r.append(f"{acc.signed_zero_mismatches} signed-zero mismatches (policy strict), first at x = "
                 f"{e['input']['value']} ({e['input']['bits']})")
    if acc.subnormal_flushes and check.subnormals == "strict":
        e = acc.examples["subnormal_flush"]
        r.append(f"{acc.subnormal_flushes} subnormal outputs flushed to zero (policy strict), first at x = "
                 f"{e['input']['value']} ({e['input']['bits']})")
    for p in proofs or []:
        if not p["ok"]:
            r.append(f"proof {p['name']}: {p['status']} (required: proved)" +
                     (f"; counterexample {p['counterexample']}" if p.get("counterexample") else "") +
                     (f"; {p['note']}" if p.get("note") else ""))
    if r:
        res.status = "fail"
    return res


def run_check(check: Check, dtype: str, workers: int | None = None) -> CheckResult:
    """Measure, prove where required, and judge one (check, dtype)."""
    t0 = time.perf_counter()
    acc = _accuracy(check, dtype, workers=workers)
    proofs, note = _proofs(check, dtype) if acc.status == "ok" else (None, None)
    return judge(check, dtype, acc, proofs, note, time.perf_counter() - t0)


def _task(args) -> CheckResult:
    check, dtype = args
    return run_check(check, dtype, workers=1)


def run_gate(config: GateConfig, workers: int | None = None, progress=None, argv=None) -> GateResult:
    """Every (check, dtype) of the configuration; in parallel processes, except
    exhaustive float32 sweeps, which use every core themselves."""
    t0 = time.perf_counter()
    tasks = [(c, d) for c in config.checks for d in c.dtypes]
    for c, _ in tasks:
        get_operator(c.op)
    big = [t for t in tasks if t[1] == "float32" and t[0].mode == "exhaustive"]
    small = [t for t in tasks if t not in big]
    workers = workers or os.cpu_count() or 1
    done: dict = {}
    if workers > 1 and len(small) > 1:
        with ProcessPoolExecutor(workers) as pool:
            for t, r in zip(small, pool.map(_task, small)):
                done[id(t)] = r
                if progress:
                    progress()
    else:
        for t in small:
            done[id(t)] = _task(t)
            if progress:
                progress()
    for t in big:
        done[id(t)] = run_check(*t)   # the sweep itself uses every core
        if progress:
            progress()
    results = [done[id(t)] for t in tasks]
    return GateResult(results, config.source, time.perf_counter() - t0, provenance(),
                      command_line(argv) if argv is not None else command_line())
