"""Run a gate: every (check, dtype), judged by the check's policies.

Checks run in supervised worker processes (opcert.workers); exhaustive
binary32 sweeps are orchestrated from here and use every core themselves. A
worker that dies or overruns its time limit fails its check, with what it was
doing; the other checks go on and every finished result is kept. The gate
passes only when every check passes or is skipped with its reason, and at
least one check passed: a gate that verified nothing fails.

Required properties (`proofs`) apply to every target. For opcert's own
implementation they are proved with z3 (and enumeration); for any other
target they are decided on the target's outputs, in the same pass as the
accuracy measurement (verify.properties). A property passes only when it is
`proved`; `checked` (samples) passes only where the check accepts sampled
evidence; anything else fails with its reason.
"""

from __future__ import annotations

import json
import os
import shlex
import time
from dataclasses import dataclass, field

from opcert._version import __version__
from opcert.errors import TargetFailure, UsageError
from opcert.expr import libm_arrays
from opcert.formats import get_format
from opcert.gating.config import Check, GateConfig
from opcert.gating.paths import reproduce_env
from opcert.isa import environment as isa_environment
from opcert.isa import measure_at_level
from opcert.options import Options
from opcert.path_matrix import compare_paths
from opcert.progress import takes_phase, tell
from opcert.provenance import command_line, provenance
from opcert.spec import (
    get_binary_operator,
    get_operator,
    get_predicate_operator,
    is_binary_operator,
    is_predicate_operator,
    is_tensor_operator,
)
from opcert.spec.attrs import resolve
from opcert.targets import DEFAULT_LOAD_LIMIT_S, describe_target, trusted
from opcert.verify.accuracy.measure import enforcement, measure, reproduce_command
from opcert.verify.binary.measure import PairOptions, command, measure_pairs, settle
from opcert.verify.predicate import measure as predicate_measure
from opcert.verify.result import verdict_text
from opcert.verify.tensor.measure import measure_rows
from opcert.workers import Pool, WorkerLost

SCHEMA = "opcert.gate/1"


@dataclass
class CheckResult:
    check: Check
    dtype: str
    status: str  # pass | fail | skipped
    reasons: list = field(default_factory=list)
    accuracy: dict | None = None
    proofs: list | None = None  # the required properties' verdicts
    proof_note: str | None = None
    command: str = ""
    elapsed_s: float = 0.0
    plot: tuple | None = field(default=None, repr=False)  # (inputs, errors) or ("chunks", [...])
    internal_error: bool = False
    enforcement: dict | None = None  # which declared properties it enforced, reported, waived (with why)
    against: dict | None = None  # the `against` key's comparison (path_matrix.compare_paths)

    @property
    def key(self) -> str:
        return json.dumps(self.check.identity(self.dtype), sort_keys=True, default=str)

    def to_dict(self) -> dict:
        c = self.check
        return {
            "key": self.key,
            "identity": c.identity(self.dtype),
            "name": c.label(self.dtype),
            "where": c.where(),
            "op": c.op,
            "dtype": self.dtype,
            "target": c.target,
            "mode": c.mode_for(self.dtype),
            "attrs": dict(c.attrs),
            "standard": c.standard,
            "policy": {
                "max_ulp": c.max_ulp,
                "signed_zero": c.signed_zero,
                "subnormals": c.subnormals,
                "proofs": list(c.proofs),
                "accept_sampled_evidence": c.accept_sampled_evidence,
                "proofs_left_out": list(c.proofs_left_out),
            },
            "status": self.status,
            "reasons": self.reasons,
            "command": self.command,
            "elapsed_s": self.elapsed_s,
            "accuracy": self.accuracy,
            "proofs": self.proofs,
            "proof_note": self.proof_note,
            "enforcement": self.enforcement,
            **({"against": self.against} if self.against is not None else {}),
        }


@dataclass
class GateResult:
    results: list
    source: str
    elapsed_s: float
    provenance: dict
    command: str

    @property
    def counts(self) -> dict:
        return {s: sum(r.status == s for r in self.results) for s in ("pass", "fail", "skipped")}

    @property
    def ok(self) -> bool:
        c = self.counts
        return c["fail"] == 0 and c["pass"] > 0

    @property
    def internal_errors(self) -> int:
        return sum(r.internal_error for r in self.results)

    @property
    def verdict_note(self) -> str | None:
        if self.counts["pass"] == 0 and self.counts["fail"] == 0:
            return "no check passed: every one was skipped, so the gate verified nothing"
        return None

    def to_dict(self) -> dict:
        return {
            "schema": SCHEMA,
            "opcert": __version__,
            "config": self.source,
            "ok": self.ok,
            "counts": self.counts,
            "verdict_note": self.verdict_note,
            "elapsed_s": self.elapsed_s,
            "command": self.command,
            "provenance": self.provenance,
            "checks": [r.to_dict() for r in self.results],
        }


def _accuracy(check: Check, dtype: str, workers=None, checkpoint=None, progress=None):
    if check.isa or not (dtype == "float32" and check.mode_for(dtype) == "exhaustive"):
        workers = checkpoint = progress = None  # a level's check runs in a process of its own, with its defaults
    # every declared property and every code path, whatever `proofs` requires: the same measurement as
    # `opcert accuracy` and the API make; `proofs` only says which unestablished properties fail the check
    options = Options(
        samples=check.samples,
        seed=check.seed,
        standard=check.standard,
        flush_allowed=check.subnormals == "flush-allowed",
        keep_errors=True,
        workers=workers,
        isolation=check.isolation,
        target_timeout=check.target_timeout,
        properties="all",
        layout_samples=check.layout_samples,
        checkpoint=checkpoint,
        progress=progress,
    )
    if check.isa:
        return measure_at_level(
            check.isa, check.op, check.target, dtype, check.mode_for(dtype), options=options, attrs=check.attrs
        )
    return measure(check.op, check.target, dtype, check.mode_for(dtype), options, attrs=dict(check.attrs))


def _z3_proofs(check: Check, dtype: str):
    # alone: the verdict does not depend on which checks this worker proved before (z3's search depends on its
    # process's history), nor on the host's load
    from opcert.verify.proofs import prove_alone  # lazy: z3 loads only for checks that require proofs

    rep = prove_alone(check.op, dtype, dict(check.attrs), check.proofs, standard=check.standard)
    return [p.to_dict() for p in rep.properties]


def describe_counterexample(ce: dict | None) -> str:
    if not ce:
        return ""
    if "row" in ce and isinstance(ce["row"], list):  # a tensor operator's row (verify.tensor.properties)
        text = f"row {ce['row']} ({ce.get('case')})"
        if "layout" in ce:  # the layout property (verify.tensor.layouts, verify.tensor.pairs)
            text += (
                f" -> {ce.get('got')}"
                + (f" as {ce['measured_in']}" if ce.get("measured_in") else "")
                + f"; {ce['layout']}: "
                + (f"the target failed: {ce['error']}" if ce.get("error") else f"-> {ce.get('got_in_layout')}")
            )
        elif "related_row" in ce:
            text += (
                f" -> {ce.get('got')}; {ce.get('how')}: {ce['related_row']} -> {ce.get('got_related')} "
                f"({ce.get('distance_ulps')} ULPs apart, {ce.get('allowed_ulps')} allowed)"
            )
        else:
            text += f" -> {ce.get('got')}, correctly rounded {ce.get('want')}"
        if ce.get("replayed") is False:
            text += " (not reproduced when run again)"
        return text
    parts = []
    for label, inp in (ce.get("inputs") or {}).items():
        if isinstance(inp, dict):
            out = (ce.get("outputs") or {}).get(f"f({label})") or {}
            ref = (ce.get("reference") or {}).get(f"f({label})") or {}
            text = f"{label} = {inp.get('value')!r} ({inp.get('bits')})"
            if out:
                text += f" -> {out.get('value')!r} ({out.get('bits')})"
            if ref:
                text += f", correctly rounded {ref.get('value')!r}"
            parts.append(text)
        else:
            parts.append(f"{label} = {inp}")
    if not parts and ce.get("outputs"):
        parts.append(str(ce["outputs"]))
    text = "; ".join(parts)
    if ce.get("layout"):  # the layout property: where the output was, and what the measurement's call gave
        text += f", in {ce['layout']}" + (f" (layout family: {ce['family']})" if ce.get("family") else "")
        base = ce.get("base") or {}
        if base.get("output"):
            text += f"; {base['output'].get('value')!r} ({base['output'].get('bits')}) in {base.get('layout')}"
        if ce.get("replayed") is False:
            text += " (not reproduced when run again)"
    return text


def judge_properties(check: Check, verdicts: list | None, target_is_opcert: bool) -> tuple[list, list]:
    """(reasons to fail, the required verdicts) for the check's required properties."""
    reasons, chosen = [], []
    by_name = {v["name"]: v for v in verdicts or []}
    for name in check.proofs:
        v = by_name.get(name)
        if v is None:
            reasons.append(
                f"property {name}: no verdict (no method decided it for target {check.target}); required: proved"
            )
            continue
        chosen.append(v)
        st = v["status"]
        if st == "proved":
            continue
        if st == "checked" and check.accept_sampled_evidence:
            v["accepted"] = "sampled evidence, accepted by accept_sampled_evidence = true"
            continue
        if st == "checked":
            reasons.append(
                f"property {name}: checked on {v.get('inputs_checked') or 0:,} sampled inputs, not "
                'proved (a sample is not a proof: use mode = "exhaustive" where the format allows, '
                "or accept_sampled_evidence = true)"
            )
        elif st == "refuted":
            ce = v.get("counterexample") or {}
            n = v.get("violations")
            text = f"property {name}: refuted" + (f" by {n:,} input(s) or pair(s)" if n else "")
            first = describe_counterexample(ce)
            if first:
                text += f"; first: {first}"
            worst = describe_counterexample(v.get("worst"))
            if worst and worst != first:
                text += f"; worst: {worst}"
            if not first and v.get("note"):  # refuted by what the target did (it raised in a layout)
                text += f"; {v['note']}"
            text += (
                f'; not a property you need? waive it with its reason: waive = {{ {name} = "WHY" }} in the '
                f"[[check]], --waive {name}=WHY on the command line (still measured and reported)"
            )
            reasons.append(text)
        else:
            reasons.append(f"property {name}: {st} (required: proved)" + (f"; {v['note']}" if v.get("note") else ""))
    return reasons, chosen


def check_command(check: Check, base: str) -> str:
    """The command that gives this check's verdict: the measurement's own (`base`, `opcert accuracy ...`)
    with the check's policy, which `opcert accuracy` then judges as the gate does (run_check)."""
    parts = ["--max-ulp", repr(float(check.max_ulp)), "--require", ",".join(check.proofs) or "none"]
    if check.signed_zero != "strict":
        parts += ["--signed-zero", check.signed_zero]
    if check.subnormals != "strict":
        parts += ["--subnormals", check.subnormals]
    if check.accept_sampled_evidence:
        parts.append("--accept-sampled-evidence")
    if check.target_timeout is not None and "--target-timeout" not in base:
        parts += ["--target-timeout", repr(float(check.target_timeout))]
    if check.isolation == "none" and "--in-process" not in base:
        parts.append("--in-process")
    for name, why in check.waive:
        parts += ["--waive", f"{name}={why}"]
    if check.against:
        parts += ["--against", check.against, "--max-ulp-apart", str(check.max_ulp_apart)]
    return reproduce_env(check) + base + " " + shlex.join(parts)


def _inexact_counts(histogram: dict) -> int:
    """How many compared outputs the histogram puts above 0 ULPs (its "0" bucket: equal to the reference)."""
    return sum(n for bucket, n in histogram.items() if bucket != "0")


def judge(check: Check, dtype: str, acc, proofs, proof_note, elapsed) -> CheckResult:
    res = CheckResult(check, dtype, "pass", command=check_command(check, acc.command), elapsed_s=elapsed)
    res.accuracy = acc.to_dict()
    res.proof_note = proof_note
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
        r.append(
            f"max ULP error {acc.max_ulp!r} > budget {check.max_ulp!r} at x = {acc.worst_input!r} "
            f"({acc.worst_input_bits}): output {acc.worst_output!r}, correctly rounded {acc.worst_reference!r}"
        )
    elif acc.max_ulp is None and acc.inputs_checked and acc.histogram and _inexact_counts(acc.histogram):
        # outputs off the reference and no figure for them; exact matches alone (Acosh at a scale of -2^-149:
        # NaN everywhere but inf at -inf, equal to the reference's) need none
        r.append("the worst case could not be re-verified: no ULP figure")
    for n, what, ex in (
        (acc.nan_mismatches, "NaN mismatches", "nan_mismatch"),
        (acc.inf_mismatches, "infinity mismatches", "inf_mismatch"),
    ):
        if n:
            e = acc.examples.get(ex, {})
            r.append(
                f"{n} {what}, first at x = {e.get('input', {}).get('value')} ({e.get('input', {}).get('bits')}): "
                f"output {e.get('output', {}).get('value')}, reference {e.get('reference', {}).get('value')}"
            )
    if acc.signed_zero_mismatches and check.signed_zero == "strict":
        e = acc.examples["signed_zero_mismatch"]
        r.append(
            f"{acc.signed_zero_mismatches} signed-zero mismatches (policy strict), first at x = "
            f"{e['input']['value']} ({e['input']['bits']})"
        )
    if acc.subnormal_flushes and check.subnormals == "strict":
        e = acc.examples["subnormal_flush"]
        r.append(
            f"{acc.subnormal_flushes} subnormal outputs flushed to zero (policy strict), first at x = "
            f"{e['input']['value']} ({e['input']['bits']})"
        )
    rp = acc.replay or {}
    if rp.get("differ"):
        f = rp.get("first") or {}
        r.append(
            f"the target returned other bits for the same input on a second call ({rp['differ']:,} of "
            f"{rp['inputs']:,} inputs; {rp.get('how')}), first at x = {f.get('input', {}).get('value')} "
            f"({f.get('input', {}).get('bits')}): {f.get('output', {}).get('bits')} measured, "
            f"{f.get('replayed', {}).get('bits')} on the second call: its output depends on its call history"
        )
    if check.proofs:
        verdicts = proofs if proofs is not None else acc.properties
        why, chosen = judge_properties(check, verdicts, proofs is not None)
        r += why
        res.proofs = chosen
    res.enforcement = gate_enforcement(check, res.accuracy.get("properties"), proofs)
    if r:
        res.status = "fail"
    return res


GATE_RULE = (
    "each enforced property (proofs, less waive) must be established: proved, or checked where "
    "accept_sampled_evidence = true; refuted, unknown or skipped fails the check. The others are measured "
    "and reported only"
)


def gate_enforcement(check: Check, measured: list | None, proofs: list | None = None) -> dict:
    """Which declared properties a gate check enforced (its proofs), reported only, and waived (its waive, with
    the reasons), each with its verdict: z3's for opcert's own code where it proved them, else the
    measurement's (those dicts are marked where waived)."""
    verdicts = {v["name"]: v for v in measured or []}
    for v in proofs or []:
        verdicts.setdefault(v["name"], v)
        if v["name"] in check.proofs:
            verdicts[v["name"]] = v
    return enforcement(list(verdicts.values()), dict(check.waive), required=set(check.proofs), rule=GATE_RULE)


def enforcement_lines(e: dict | None) -> list[str]:
    """A check's enforcement (verify.accuracy.measure.enforcement) as lines for the console: what it enforced,
    what it only reported, what it waived and why, and how to waive one."""
    if not e:
        return []

    def names(entries):
        return ", ".join(f"{x['name']} ({verdict_text(x)})" for x in entries) or "none"

    out = [f"properties enforced (a refuted one fails): {names(e['enforced'])}"]
    if e.get("reported"):
        out.append(f"properties reported only: {names(e['reported'])}")
    for w in e.get("waived") or []:
        out.append(f"property {w['name']}: {w['status']} (waived: {w['reason']})")
    out.append(e.get("how_to_waive", ""))
    return [line for line in out if line]


def _judged(check: Check, dtype: str, res, elapsed, findings) -> CheckResult:
    """What the checks of the tensor, binary and predicate operators share: the result with its accuracy, a skip
    where the target cannot run the case, a failure where it crashed, else `findings(out, reasons)`'s reasons from
    the measurement's own figures and the required properties' verdicts."""
    out = CheckResult(check, dtype, "pass", command=check_command(check, res.command), elapsed_s=elapsed)
    out.accuracy = res.gate_accuracy()
    out.proof_note = "; ".join(check.proofs_left_out) or None
    if res.status == "unsupported":
        out.status, out.reasons = "skipped", [res.error]
        return out
    if res.status != "ok":
        out.status, out.reasons = "fail", [f"target crashed: {res.error}"]
        return out
    r = out.reasons
    findings(out, r)
    if check.proofs:
        why, chosen = judge_properties(check, res.properties, False)
        r += why
        out.proofs = chosen
    out.enforcement = gate_enforcement(check, out.accuracy.get("properties"))
    if r:
        out.status = "fail"
    return out


def judge_rows(check: Check, dtype: str, res, elapsed) -> CheckResult:
    """A tensor operator's check (verify.tensor.measure): its per-element budget, the declared rule for NaN and
    infinite entries, and its required row properties."""

    def findings(out, r: list) -> None:
        w = res.worst or {}
        if res.call_failures:
            f = res.call_failures[0]
            r.append(
                f"the target failed on {len(res.call_failures)} case(s), first {f['case']} (shape {f['shape']}, "
                f"axes {f['axes']}): {f['error']}"
            )
        if res.max_ulp > check.max_ulp:
            r.append(
                f"max ULP error {res.max_ulp!r} > budget {check.max_ulp!r} at element {w.get('position')} of a row "
                f"of {w.get('length')} ({w.get('case')}): x = {w.get('x')!r}, output {w.get('got')!r}, correctly "
                f"rounded {w.get('want')!r}"
                + (f"; the row: {w['row']}" if w.get("row") else "")
                + ("" if w.get("replayed", True) else " (not reproduced when run again)")
            )
        if res.special_mismatches:
            e = res.special_examples[0]
            r.append(
                f"{res.special_mismatches} outputs NaN or infinite where the reference is not, or the other way "
                f"(in the reference, {res.standard}: {res.inf_rule_text}), "
                f"first in the row {e.get('row') or e.get('neighbours')} ({e['case']}): element {e['position']} "
                f"gave {e['got']!r}, declared {e['want']!r}"
                + ("" if e.get("replayed", True) else " (not reproduced when run again)")
            )
        if res.signed_zero_mismatches and check.signed_zero == "strict":
            e = res.signed_zero_example or {}
            r.append(
                f"{res.signed_zero_mismatches} zeros of the wrong sign (policy strict)"
                + (
                    f", first at element {e['position']} of a row of {e['length']} ({e['case']}): {e['got']!r} where "
                    f"{e['want']!r} is due"
                    if e
                    else ", in the pairs"
                )
            )
        if res.subnormal_flushes and check.subnormals == "strict":
            e = res.flush_example
            r.append(
                f"{res.subnormal_flushes} subnormal outputs flushed to zero (policy strict)"
                + (
                    f", first at element {e['position']} of a row of {e['length']} ({e['case']}): 0 where "
                    f"{e['want']!r} is due"
                    if e
                    else ", in the pairs"
                )
            )

    return _judged(check, dtype, res, elapsed, findings)


def judge_pairs(check: Check, dtype: str, res, elapsed) -> CheckResult:
    """A binary operator's check (verify.binary.measure): its per-output budget, the special values, the zeros'
    signs and the subnormals by policy, and its required pair properties."""

    def findings(out, r: list) -> None:
        w = res.worst or {}
        if res.max_ulp is not None and res.max_ulp > check.max_ulp:
            r.append(
                f"max ULP error {res.max_ulp!r} > budget {check.max_ulp!r} at x = {w.get('x')!r}, y = {w.get('y')!r}: "
                f"output {w.get('got')!r}, correctly rounded {w.get('want')!r} ({w.get('batch')})"
                + ("" if w.get("replayed", True) else " (not reproduced when run again)")
            )
        if res.special_mismatches:
            e = res.special_examples[0]
            r.append(
                f"{res.special_mismatches} outputs wrong at special values (IEEE 754's special cases of {res.op}, NaN, "
                f"infinities), first x = {e['x']!r}, y = {e['y']!r}: {e['got']!r} where {e['want']!r} is due"
            )
        if res.signed_zero_mismatches and check.signed_zero == "strict":
            e = res.signed_zero_example
            r.append(
                f"{res.signed_zero_mismatches} zeros of the wrong sign (policy strict), first x = {e['x']!r}, "
                f"y = {e['y']!r}: {e['got']!r} where {e['want']!r} is due"
            )
        if res.subnormal_flushes and check.subnormals == "strict":
            e = res.flush_example
            r.append(
                f"{res.subnormal_flushes} subnormal results flushed to zero (policy strict), first x = {e['x']!r}, "
                f"y = {e['y']!r}: 0 where {e['want']!r} is due"
            )

    return _judged(check, dtype, res, elapsed, findings)


def judge_predicate(check: Check, dtype: str, res, elapsed) -> CheckResult:
    """A predicate operator's check (verify.predicate.measure): every output the truth value due (no ULP budget:
    an output is right or wrong), and its required properties."""

    def findings(out, r: list) -> None:
        if res.mismatches:  # the first note says how many, of which kind, and the first input (a result read back too)
            r.append((out.accuracy.get("notes") or [f"{res.mismatches} wrong outputs"])[0])

    return _judged(check, dtype, res, elapsed, findings)


def _predicate_options(check: Check, dtype: str):
    return predicate_measure.PredicateOptions(
        standard=check.standard,
        attrs=tuple(check.attrs),
        samples=check.samples,
        seed=check.seed,
        isolation=check.isolation,
        exhaustive=check.mode_for(dtype) == "exhaustive",
    )


def _measure_pairs(check: Check, dtype: str):
    return measure_pairs(
        check.op,
        check.target,
        dtype,
        PairOptions(
            standard=check.standard,
            attrs=tuple(check.attrs),
            samples=check.samples,
            seed=check.seed,
            isolation=check.isolation,
            exhaustive=check.mode_for(dtype) == "exhaustive",
        ),
    )


def run_check(check: Check, dtype: str, workers: int | None = None, checkpoint=None, progress=None) -> CheckResult:
    """Measure, prove where required, and judge one (check, dtype): what the gate, the pytest plugin and
    `opcert accuracy --require` all run."""
    t0 = time.perf_counter()
    if is_binary_operator(check.op):
        return judge_pairs(check, dtype, _measure_pairs(check, dtype), time.perf_counter() - t0)
    if is_predicate_operator(check.op):
        res = predicate_measure.measure_predicate(check.op, check.target, dtype, _predicate_options(check, dtype))
        return judge_predicate(check, dtype, res, time.perf_counter() - t0)
    if is_tensor_operator(check.op):
        res = measure_rows(
            check.op,
            check.target,
            dtype,
            standard=check.standard,
            samples=check.samples,
            seed=check.seed,
            max_ulp=max(0.5, check.max_ulp),
            isolation=check.isolation,
            exhaustive=check.mode_for(dtype) == "exhaustive",
            attrs=tuple(check.attrs),
        )
        return judge_rows(check, dtype, res, time.perf_counter() - t0)
    acc = _accuracy(check, dtype, workers=workers, checkpoint=checkpoint, progress=progress)
    proofs = None
    note = None
    if check.proofs and acc.status == "ok" and check.target == "opcert":
        proofs = _z3_proofs(check, dtype)
        # the layout property is decided on outputs, in the measurement, for opcert's code as for any target
        measured = {p["name"]: p for p in acc.properties}
        proofs = [measured.get(p["name"], p) if p["kind"] == "layout" else p for p in proofs]
        note = "opcert's implementation: properties proved with z3 and enumeration (opcert prove)"
    elif check.proofs and acc.status == "ok":
        note = f"properties decided on {check.target}'s outputs, in the measurement's pass"
    if check.proofs_left_out:
        note = (note + ". " if note else "") + "Not required: " + "; ".join(check.proofs_left_out)
    res = judge(check, dtype, acc, proofs, note, time.perf_counter() - t0)
    if check.against and res.status != "skipped":
        res.against = _against(check, dtype)
        res.reasons += against_reasons(check, res.against)
        if res.reasons:
            res.status = "fail"
        res.elapsed_s = time.perf_counter() - t0
    return res


def _against(check: Check, dtype: str) -> dict:
    """The check's target against its `against` path on the compared inputs (path_matrix.compare_paths)."""
    options = Options(
        samples=check.samples,
        seed=check.seed,
        standard=check.standard,
        isolation=check.isolation,
        target_timeout=check.target_timeout,
        layout_samples=check.layout_samples,
    )
    env = isa_environment(check.target, check.isa) if check.isa else None
    return compare_paths(
        check.op,
        dtype,
        check.target,
        check.against,
        mode=check.mode_for(dtype),
        options=options,
        attrs={k: (v if isinstance(v, str) else repr(float(v))) for k, v in check.attrs},
        env=env,
    )


def against_reasons(check: Check, cmp: dict) -> list[str]:
    """Why the comparison with the `against` path fails the check (none where it passes)."""
    a, b = cmp["paths"]
    if cmp["missing"]:
        return [
            f"against {b}: not compared, no outputs from " + "; ".join(f"{k} ({v})" for k, v in cmp["missing"].items())
        ]
    if not cmp["differ"]:
        return []
    ex = cmp["example"] or {}
    oa, ob = ex.get("outputs") or [{}, {}]
    shown = (
        f"first at x = {ex['x']['value']} ({ex['x']['bits']}): {a} {oa['output']['bits']}, {b} {ob['output']['bits']}, "
        f"correctly rounded {ex['correctly_rounded']['bits']}"
        + ("" if ex.get("replayed") else " (not reproduced when run again)")
        if ex
        else ""
    )
    out = []
    if cmp["nan_differ"]:
        out.append(
            f"against {b}: {cmp['nan_differ']:,} inputs give a NaN on one path and a number on the other; {shown}"
        )
    if cmp["max_apart"] > check.max_ulp_apart:
        out.append(
            f"against {b}: outputs up to {cmp['max_apart']:,} representable value{'s' if cmp['max_apart'] != 1 else ''} "
            "apart > max_ulp_apart "
            f"{check.max_ulp_apart} ({cmp['differ']:,} of {cmp['inputs']:,} differ on {cmp['scope']}); {shown}"
        )
    return out


def _task(check, dtype) -> CheckResult:
    return run_check(check, dtype, workers=1)


def _lost(check: Check, dtype: str, exc) -> CheckResult:
    if is_predicate_operator(check.op):
        op, fmt = get_predicate_operator(check.op), get_format(dtype)
        o = predicate_measure.settle(op, fmt, _predicate_options(check, dtype))
        cmd = reproduce_env(check) + predicate_measure.command(op, check.target, fmt, o)
        return CheckResult(check, dtype, "fail", [f"target crashed: target {check.target} {exc}"], command=cmd)
    if is_binary_operator(check.op):
        op, fmt = get_binary_operator(check.op), get_format(dtype)
        o = PairOptions(check.standard, tuple(check.attrs), check.samples, check.seed,
                        exhaustive=check.mode_for(dtype) == "exhaustive")  # fmt: skip
        cmd = reproduce_env(check) + command(op, check.target, fmt, settle(op, fmt, o))
        return CheckResult(check, dtype, "fail", [f"target crashed: target {check.target} {exc}"], command=cmd)
    if is_tensor_operator(check.op):
        cmd = reproduce_env(check) + (
            f"opcert accuracy {check.op} --dtype {dtype} --target {check.target}"
            + (f" --standard {check.standard}" if check.standard else "")
            + (f" --samples {check.samples}" if check.samples else "")
            + f" --seed {check.seed}"
        )
        return CheckResult(check, dtype, "fail", [f"target crashed: target {check.target} {exc}"], command=cmd)
    op = get_operator(check.op)
    cmd = check_command(
        check,
        reproduce_command(
            op.name,
            dtype,
            check.target,
            resolve(op, dict(check.attrs), check.standard),
            check.mode_for(dtype),
            Options(
                samples=check.samples, seed=check.seed, standard=check.standard, layout_samples=check.layout_samples
            ),
        ),
    )
    return CheckResult(check, dtype, "fail", [f"target crashed: target {check.target} {exc}"], command=cmd)


def _internal(check: Check, dtype: str, exc) -> CheckResult:
    r = _lost(check, dtype, exc)
    r.reasons = [f"internal error in opcert: {type(exc).__name__}: {exc} (please report it)"]
    r.internal_error = True
    return r


def _probe_targets(config: GateConfig) -> dict:
    """Load every untrusted target once, where it will run: a target that cannot be
    found is a configuration error (exit 2); one that fails to load fails its checks."""
    broken = {}
    # a load runs under the checks' own target_timeout: the most any check of that target allows
    limits: dict = {}
    for c in config.checks:
        limits[c.target] = max(limits.get(c.target, 0.0), c.target_timeout or DEFAULT_LOAD_LIMIT_S)
    probed = set()
    for c in config.checks:
        # once per target and isolation: an attribute sweep or a table of dtypes expands into many checks of
        # one target, and each load is a worker process of its own
        if trusted(c.target) or c.target in broken or (c.target, c.isolation) in probed:
            continue
        probed.add((c.target, c.isolation))
        try:
            describe_target(c.target, c.isolation, timeout=limits[c.target])
        except UsageError as exc:
            raise UsageError(f"{config.source}: check for {c.op} ({c.label(c.dtypes[0])}): {exc}") from None
        except (TargetFailure, WorkerLost) as exc:
            broken[c.target] = (
                str(exc)
                if isinstance(exc, TargetFailure)
                else f"target {c.target} {exc}" + ("" if exc.doing else " (while being loaded)")
            )
    return broken


def _sweep_phase(progress, label: str):
    """A float32 sweep's progress callback that names, in the gate's progress, the check and how far its
    sweep is (None where the gate's callback takes no phase)."""
    if progress is None or not takes_phase(progress):
        return None

    def update(done=None, total=None, phase=None):
        if phase is not None:
            tell(progress, f"{label}: {phase}")
        elif done is not None and total:
            tell(progress, f"{label}: float32 sweep {100 * done / total:.0f}% of its chunks")

    return update


def run_gate(config: GateConfig, workers: int | None = None, progress=None, argv=None) -> GateResult:
    """Every (check, dtype) of the configuration; in supervised worker processes,
    except exhaustive float32 sweeps, which use every core themselves."""
    t0 = time.perf_counter()
    broken = _probe_targets(config)
    tasks = [(c, d) for c in config.checks for d in c.dtypes]
    big = [i for i, (c, d) in enumerate(tasks) if d == "float32" and c.mode == "exhaustive"]
    done: dict = {}
    for i, (c, d) in enumerate(tasks):
        if c.target in broken:
            done[i] = _lost(c, d, broken[c.target].removeprefix(f"target {c.target} "))
    small = [i for i in range(len(tasks)) if i not in big and i not in done]
    workers = workers or os.cpu_count() or 1
    if small:
        with Pool(min(workers, len(small))) as pool:
            for j, ok, value in pool.run([(_task, tasks[i], {}) for i in small]):
                i = small[j]
                if ok:
                    done[i] = value
                elif isinstance(value, UsageError):
                    raise value
                elif isinstance(value, (TargetFailure, WorkerLost)):
                    done[i] = _lost(*tasks[i], value)
                else:  # a bug in opcert: this check fails, the others go on, the exit status says so
                    done[i] = _internal(*tasks[i], value)
                if progress:
                    progress()
    for i in big:
        if i in done:
            continue
        # the sweep itself uses every core; the gate's count moves per check, so its phase says how far this
        # one is (progress.tell: where the callback takes a phase)
        sweep_progress = _sweep_phase(progress, tasks[i][0].label(tasks[i][1]))
        done[i] = run_check(*tasks[i], workers=workers, progress=sweep_progress)
        tell(progress, None)
        if progress:
            progress()
    results = [done[i] for i in range(len(tasks))]
    return GateResult(
        results,
        config.source,
        time.perf_counter() - t0,
        {**provenance(), "reference_functions": libm_arrays.status()},
        command_line(argv) if argv is not None else command_line(),
    )
