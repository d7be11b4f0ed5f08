"""One check over many attribute sets: the defaults of each standard, the values
ONNX's backend test cases use, and a grid over each attribute's domain.

A runtime can be right at the defaults and wrong elsewhere (a kernel that
special-cases the default, torch's hardsigmoid that is HardSigmoid only at
alpha = 1/6). The grid varies one attribute at a time, the others at the
primary standard's defaults, over negative values, zero, the smallest
subnormal, tiny, ordinary and huge binary32 values, and the largest finite
one; a value outside the attribute's domain, or a set the target does not
support, is skipped with its reason, per set.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from opcert.errors import UsageError
from opcert.options import Options
from opcert.progress import tell
from opcert.spec import get_operator
from opcert.spec.attrs import describe, resolve, user_value
from opcert.spec.onnx_backend_attrs import ATTRS as ONNX_TEST_ATTRS
from opcert.targets import trusted
from opcert.verify.accuracy.measure import enforcement, measure
from opcert.workers import Pool, WorkerLost, in_worker

F32_MAX = 3.4028234663852886e38
F32_TINY = 1.401298464324817e-45  # the smallest binary32 subnormal
GRID = (-F32_MAX, -1e4, -2.5, -1.0, -0.5, -F32_TINY, 0.0, F32_TINY, 1e-20, 0.01, 0.5, 1.0, 2.5, 1e4, F32_MAX)


@dataclass
class AttrSet:
    label: str  # where the set comes from: "default (onnx)", "onnx test", "grid alpha"
    attrs: dict  # as given to measure(): floats, or a choice's name
    grid: str | None = None  # the attribute this grid point varies


@dataclass
class AttrSweepResult:
    op: str
    dtype: str
    target: str
    mode: str
    rows: list = field(default_factory=list)  # one dict per attribute set
    worst: dict | None = None

    def to_dict(self) -> dict:
        return {
            "schema": "opcert.attr_sweep/1",
            "op": self.op,
            "dtype": self.dtype,
            "target": self.target,
            "mode": self.mode,
            "worst": self.worst,
            "rows": self.rows,
        }


def attribute_sets(op, standard: str | None = None) -> list[AttrSet]:
    """The sets the sweep runs, in order, without duplicates (by resolved value)."""
    op = get_operator(op)
    std = op.standard(standard)
    sets: list[AttrSet] = []
    for s in op.standards:
        if standard is None or s.key == std.key:
            sets.append(
                AttrSet(f"default ({s.key})", {a: user_value(op, a, v) for a, v in resolve(op, {}, s.key).items()})
            )
    if std.key == "onnx" or standard is None:
        for a in ONNX_TEST_ATTRS.get(op.name, []):
            sets.append(AttrSet("onnx test", dict(a)))
    base = {a: user_value(op, a, v) for a, v in resolve(op, {}, std.key).items()}
    for a in op.attributes:
        if not std.has(a.name):
            continue
        values = a.choices if a.kind == "choice" else GRID
        for v in values:
            sets.append(AttrSet(f"grid {a.name}", {**base, a.name: v}, grid=a.name))
    out, seen = [], set()
    for s in sets:
        key = tuple(sorted((k, repr(v)) for k, v in s.attrs.items())) + (s.label.startswith("grid"),)
        if key not in seen:
            seen.add(key)
            out.append(s)
    return out


def sweep_attributes(
    op,
    target="opcert",
    dtype="float32",
    inputs="sample",
    options: Options | None = None,
    *,
    max_ulp=None,
    progress=None,
    waive: dict | None = None,
) -> AttrSweepResult:
    """measure() at every attribute set of attribute_sets(), with options (samples, seed, standard,
    isolation, target_timeout, ...); rows with each set's figures, skips with their reasons, and the worst
    set; progress() is called as each set finishes, and told (opcert.progress.tell) which set runs now: one
    set's measurement and layout check can take minutes. An untrusted target runs the sets one after another
    in one supervised worker (loaded once); a set that ends that worker is run again on its own, so the
    crash is pinned on its set, and the sets after it go on in a fresh worker. waive: {property: reason},
    declared properties a refutation of which fails no set (still measured, and listed as waived)."""
    op = get_operator(op)
    o = (options or Options()).replace(progress=None)
    if not any(True for a in op.attributes if op.standard(o.standard).has(a.name)):
        raise UsageError(f"{op.name} has no attributes: there is nothing to sweep (run the check without --attr-sweep)")
    sets = attribute_sets(op, o.standard)
    res = AttrSweepResult(op.name, dtype, target if isinstance(target, str) else target.name, inputs)
    isolated = o.isolation == "process" and isinstance(target, str) and not trusted(target) and not in_worker()
    waive = dict(waive or {})

    def running(k):
        s = sets[k]
        shown = ", ".join(f"{a}={v!r}" if isinstance(v, str) else f"{a}={v:.9g}" for a, v in s.attrs.items())
        tell(progress, f"set {k + 1}/{len(sets)}, {s.label} ({shown}): its inputs, then its code paths")

    def finished(row):
        res.rows.append(row)
        if progress:
            progress()

    if not isolated:
        for k, s in enumerate(sets):
            running(k)
            finished(_one_set(op.name, s, target, dtype, inputs, o, max_ulp, waive))
    else:
        args = [(op.name, s, target, dtype, inputs, o, max_ulp, waive) for s in sets]
        with Pool(1) as pool:  # one worker for the sets in turn: the next set is sent as one ends
            running(0)
            for k, ok, value in pool.run([(_one_set, a, {}) for a in args]):
                if not ok and isinstance(value, WorkerLost):
                    # the set ended its worker: measured again on its own, whose result names the crash
                    value, ok = _one_set(*args[k]), True
                if not ok:
                    raise value
                finished(value)
                if k + 1 < len(sets):
                    running(k + 1)
    tell(progress, None)
    res.worst = _worst(res.rows)
    return res


def _one_set(op, s: AttrSet, target, dtype, inputs, options: Options, max_ulp, waive: dict) -> dict:
    """The row of one attribute set: measured (measure()), or skipped with the reason."""
    op = get_operator(op)
    row = {"label": s.label, "grid": s.grid, "attrs": {k: v for k, v in s.attrs.items()}}
    try:
        resolved = resolve(op, s.attrs, options.standard)
    except UsageError as exc:
        row.update(status="skipped", reason=str(exc))
        return row
    row["attrs_exact"] = describe(resolved, op)
    r = measure(op.name, target, dtype, inputs, options, attrs=s.attrs)
    e = enforcement(r.properties, waive)
    refuted = e["failing"]
    row.update(
        status=r.status,
        reason=r.error,
        inputs=r.inputs_checked,
        max_ulp=r.max_ulp,
        correctly_rounded=r.correctly_rounded,
        worst_input=r.worst_input,
        worst_input_bits=r.worst_input_bits,
        nan_mismatches=r.nan_mismatches,
        inf_mismatches=r.inf_mismatches,
        refuted=refuted,
        command=r.command,
    )
    if e["waived"]:
        row["waived"] = e["waived"]
    if r.status == "unsupported":
        row["status"] = "skipped"
    elif r.status != "ok":
        row["verdict"] = "fail"
    else:
        over = max_ulp is not None and (r.max_ulp is None or r.max_ulp > max_ulp)
        row["verdict"] = "fail" if (over or refuted or r.failed_special_values) else "pass"
    return row


def _worst(rows: list) -> dict | None:
    """The failing set first (a crash before a refuted property before a budget), then the largest max ULP."""
    ran = [r for r in rows if r["status"] != "skipped"]
    if not ran:
        return None

    def key(r):
        crashed = r["status"] != "ok"
        mu = r.get("max_ulp")
        return (
            crashed,
            bool(r.get("refuted")) or bool(r.get("nan_mismatches")) or bool(r.get("inf_mismatches")),
            -1.0 if mu is None or (isinstance(mu, float) and math.isnan(mu)) else mu,
        )

    return max(ran, key=key)
