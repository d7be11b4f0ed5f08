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
from opcert.spec import get_operator
from opcert.spec.attrs import describe, resolve, user_value
from opcert.spec.onnx_backend_attrs import ATTRS as ONNX_TEST_ATTRS
from opcert.targets import trusted
from opcert.verify.accuracy.measure import measure
from opcert.workers import WorkerLost, in_worker, run_isolated

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
) -> AttrSweepResult:
    """measure() at every attribute set of attribute_sets(), with options (samples, seed, standard,
    isolation, target_timeout, ...); rows with each set's figures, skips with their reasons, and the worst
    set; progress() is called as each set finishes. An untrusted target runs every set in one supervised
    worker; if a set ends that worker, the sweep runs again with one worker per set, so the crash is pinned
    on its set."""
    op = get_operator(op)
    o = (options or Options()).replace(progress=None)
    if not any(True for a in op.attributes if op.standard(o.standard).has(a.name)):
        raise UsageError(f"{op.name} has no attributes: there is nothing to sweep (run the check without --attr-sweep)")
    args = (op.name, target, dtype, inputs, o, max_ulp)
    if o.isolation == "process" and isinstance(target, str) and not trusted(target) and not in_worker():
        try:
            return run_isolated(_sweep, *args, None)
        except WorkerLost:
            pass
    return _sweep(*args, progress)


def _sweep(op, target, dtype, inputs, options: Options, max_ulp, progress):
    op = get_operator(op)
    res = AttrSweepResult(op.name, dtype, target if isinstance(target, str) else target.name, inputs)
    for s in attribute_sets(op, options.standard):
        row = {"label": s.label, "grid": s.grid, "attrs": {k: v for k, v in s.attrs.items()}}
        try:
            resolved = resolve(op, s.attrs, options.standard)
        except UsageError as exc:
            row.update(status="skipped", reason=str(exc))
            res.rows.append(row)
            if progress:
                progress()
            continue
        row["attrs_exact"] = describe(resolved, op)
        r = measure(op.name, target, dtype, inputs, options, attrs=s.attrs)
        refuted = [p["name"] for p in r.properties if p["status"] == "refuted" and p.get("expected") == "holds"]
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
        if r.status == "unsupported":
            row["status"] = "skipped"
        elif r.status != "ok":
            row["verdict"] = "fail"
        else:
            over = max_ulp is not None and (r.max_ulp is None or r.max_ulp > max_ulp)
            row["verdict"] = "fail" if (over or refuted or r.failed_special_values) else "pass"
        res.rows.append(row)
        if progress:
            progress()
    res.worst = _worst(res.rows)
    return res


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
