"""The commands of the binary operators (spec.binary: Pow), a thin layer over verify.binary.measure and the
operator's reference: `opcert ops Pow`, `opcert ref Pow -- X Y`, `opcert accuracy Pow ...`. opcert.cli
dispatches here where the operator named is a binary one, passing itself as `ui`: its console, escaping and
input parsing (this module sits below it in the layers, and imports none of it)."""

from __future__ import annotations

import json
import sys

import numpy as np
from rich.table import Table

from opcert import policy
from opcert.errors import UsageError
from opcert.files import write_json_atomic
from opcert.formats import get_format, hex_bits
from opcert.spec import binary_operators, get_binary_operator
from opcert.verify.binary.measure import PairOptions, measure_pairs


def binary_record(op) -> dict:
    return {
        "name": op.name,
        "kind": "binary",
        "summary": op.summary,
        "family": op.family,
        "inputs": list(op.inputs),
        "primary_standard": op.primary,
        "dtypes": sorted({d for s in op.standards for u in s.support for d in u.dtypes}),
        "standards": [
            {
                "key": s.key,
                "name": s.op_name,
                "document": s.document,
                "formula": s.formula_text,
                "attribute_names": s.attribute_names,
                "defaults": s.defaults or {},
                "support": [{"since": u.since, "dtypes": list(u.dtypes), "ranks": u.ranks} for u in s.support],
                "implementation": str(s.implementation),
                "notes": s.notes or None,
            }
            for s in op.standards
        ],
        "attributes": [{"name": a.name, "doc": a.doc} for a in op.attributes],
        "properties": [
            {"name": p.name, "kind": p.kind, "statement": p.statement, "standards": list(p.standards)}
            for p in op.properties
        ],
        "budget64": op.budget64,
    }


def ops_rows(ui, console) -> None:
    """The binary operators' table of `opcert ops`."""
    t = Table(title="binary operators: z = f(x, y), two tensors (opcert ref OP -- X Y; accuracy over pairs)")
    for col in ("operator", "standards", "attributes (defaults)", "dtypes", "definition"):
        t.add_column(col)
    for op in binary_operators():
        r = binary_record(op)
        stds = ", ".join(f"{s.key}:{s.op_name}" for s in op.standards)
        at = (
            ", ".join(
                f"{a.name}={s.defaults[a.name]:g} ({s.key})"
                for a in op.attributes
                for s in op.standards
                if s.has(a.name) and s.defaults and a.name in s.defaults
            )
            or "-"
        )
        t.add_row(op.name, ui.esc(stds), ui.esc(at), ", ".join(r["dtypes"]), ui.esc(op.standard(None).formula_text))
    console.print(t)


def cmd_ops_one(ui, args) -> int:
    r = binary_record(get_binary_operator(args.op))
    if args.json:
        print(json.dumps(r, indent=2))
        return 0
    con = ui._console()
    con.print(f"[bold]{ui.esc(r['name'])}[/bold] (binary, {ui.esc(r['family'])}): {ui.esc(r['summary'])}")
    con.print(f"inputs: {', '.join(r['inputs'])}; dtypes: {', '.join(r['dtypes'])}; primary: {r['primary_standard']}")
    t = Table(title="standards")
    for col in ("key", "name", "formula", "support (since: dtypes)", "notes"):
        t.add_column(col)
    for s in r["standards"]:
        support = "; ".join(f"{u['since']}: {', '.join(u['dtypes'])}" for u in s["support"])
        t.add_row(s["key"], ui.esc(s["name"]), ui.esc(s["formula"]), ui.esc(support), ui.esc(s["notes"] or ""))
    con.print(t)
    t = Table(title="properties (decided over every pair of a 16-bit format, or on samples)")
    for col in ("name", "kind", "statement", "standards"):
        t.add_column(col)
    for p in r["properties"]:
        t.add_row(p["name"], p["kind"], ui.esc(p["statement"]), ", ".join(p["standards"]) or "all")
    con.print(t)
    return 0


def _options(ui, args) -> PairOptions:
    attrs = tuple(sorted((k, _number(k, v)) for k, v in ui._attrs(args.attr).items()))
    return PairOptions(standard=args.standard, attrs=attrs)


def _number(name: str, text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise UsageError(f"--attr {name}={text!r}: give a number (a binary32 value)") from None
    if not np.isfinite(np.float32(v)):
        raise UsageError(f"--attr {name}={text!r}: must be a finite binary32 value")
    return float(np.float32(v))


def cmd_ref(ui, args) -> int:
    """The correctly rounded pow of each pair: `opcert ref Pow --dtype float16 -- X Y [X Y ...]`."""
    op = get_binary_operator(args.op)
    if args.axis is not None or args.axes is not None or args.shape is not None:
        raise UsageError(f"--axis, --axes and --shape are for the tensor operators; {op.name} takes pairs: -- X Y")
    fmt = get_format(args.dtype)
    if fmt.kind != "float":
        raise UsageError(f"{op.name} takes floating-point tensors; allowed: float16, bfloat16, float32, float64")
    if not args.x or len(args.x) % 2:
        raise UsageError(f"give pairs of values: -- X Y [X Y ...] ({len(args.x or [])} values given)")
    o = _options(ui, args)
    std = op.standard(o.standard)
    attrs = {k: float(v) for k, v in (std.defaults or {}).items()} | dict(o.attrs)
    for k in dict(o.attrs):
        if not std.has(k):
            raise UsageError(f"{op.name} ({std.key}) has no attribute {k!r}; its attributes: "
                             f"{', '.join(std.attribute_names) or 'none'}")  # fmt: skip
    v = np.concatenate([ui._parse_input(t, fmt) for t in args.x])
    x, y = v[0::2].copy(), v[1::2].copy()
    z = op.reference(x, y, fmt, std.key, **attrs)
    rows = [
        {
            "x": ui._num(x[i], fmt),
            "x_bits": hex_bits(x[i], fmt),
            "y": ui._num(y[i], fmt),
            "y_bits": hex_bits(y[i], fmt),
            "result": ui._num(z[i], fmt),
            "result_bits": hex_bits(z[i], fmt),
        }
        for i in range(x.size)
    ]
    out = {"op": op.name, "dtype": fmt.name, "standard": std.key, "attrs": attrs, "results": rows}
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    t = Table(title=ui.esc(f"{op.name} ({std.key}, {std.op_name}) reference, {fmt.name}: correctly rounded (nearest, "
                          "ties to even)"))  # fmt: skip
    for col in ("x", "x bits", "y", "y bits", "result", "result bits"):
        t.add_column(col)
    for r in rows:
        t.add_row(str(r["x"]), r["x_bits"], str(r["y"]), r["y_bits"], str(r["result"]), r["result_bits"])
    ui._console().print(t)
    return 0


def cmd_accuracy(ui, args) -> int:
    """A binary operator's target over pairs (verify.binary.measure)."""
    op = get_binary_operator(args.op)
    for flag, given in (
        ("--workers", args.workers),
        ("--scheduler", args.scheduler),
        ("--checkpoint", args.checkpoint),
        ("--attr-sweep", args.attr_sweep),
        ("--plot", args.plot),
        ("--isa", args.isa),
        ("--layout-samples", args.layout_samples),
    ):
        if given:
            raise UsageError(
                f"{flag} does not apply to {op.name}, a binary operator: its pairs are sampled (--samples, --seed, "
                "--standard, --attr, --max-ulp) or, in a 16-bit format, every one (--exhaustive); --require, --waive, "
                "--signed-zero, --subnormals and --accept-sampled-evidence judge it as a gate check"
            )
    if args.exhaustive and args.samples is not None:
        raise UsageError("--exhaustive and --samples exclude each other")
    if args.samples is not None:
        policy.samples(args.samples, "--samples")
    policy.seed(args.seed, "--seed")
    if args.max_ulp is not None:
        policy.number(args.max_ulp, "--max-ulp")
    ui._outputs(args, files=("json",))
    o = _options(ui, args)
    fmt = get_format(args.dtype)
    if args.require is not None or args.signed_zero or args.subnormals or args.accept_sampled_evidence or args.waive:
        # judged as a gate check (gating.run.judge_pairs): the command a gate report prints gives its verdict
        return ui._accuracy_as_check(args, fmt, "exhaustive" if args.exhaustive else "sample")
    res = measure_pairs(
        op,
        args.target,
        fmt.name,
        PairOptions(
            standard=o.standard,
            attrs=o.attrs,
            samples=args.samples,
            seed=args.seed,
            isolation=ui._isolation(args),
            exhaustive=args.exhaustive,
            progress=True,
        ),
    )
    to_stdout = args.json == "-"
    _print(ui, res, stderr=to_stdout)
    if args.json:
        ui._write(args.json, "--json", lambda: write_json_atomic(args.json, res.gate_accuracy()))
    if res.status == "unsupported":
        print(f"opcert: skipped: {ui.safe(res.error)}", file=sys.stderr)
        return 0
    failed = not res.ok
    if res.status != "ok":
        print(f"opcert: {ui.safe(res.error)}", file=sys.stderr)
    refuted = [p["name"] for p in res.properties if p["status"] == "refuted"]
    if refuted:
        print(f"opcert: declared properties refuted on {res.target}: {', '.join(refuted)}", file=sys.stderr)
        failed = True
    if args.max_ulp is not None and res.status == "ok" and (res.max_ulp or 0.0) > args.max_ulp:
        w = res.worst or {}
        print(
            f"opcert: max ULP error {res.max_ulp!r} > --max-ulp {args.max_ulp!r} at x = {w.get('x')!r}, "
            f"y = {w.get('y')!r}",
            file=sys.stderr,
        )
        failed = True
    return 1 if failed else 0


def _print(ui, res, stderr: bool = False) -> None:
    con = ui._console(stderr)
    if res.status != "ok":
        con.print(ui.esc(f"{res.op} {res.dtype} {res.target} ({res.standard}): {res.status}: {res.error}"))
        return
    w = res.worst or {}
    what = "every pair" if res.exhaustive else "sampled pairs"
    t = Table(
        title=ui.esc(
            f"{res.op} ({res.standard}) {res.dtype}, target {res.target} {res.target_version}: {res.pairs:,} pairs "
            f"({what}), {res.elapsed_s:.1f} s"
        )
    )
    t.add_column("measure")
    t.add_column("value")
    t.add_row(
        "max ULP error",
        ui.esc(
            f"{res.max_ulp!r} at x = {w.get('x')!r}, y = {w.get('y')!r}: output {w.get('got')!r}, correctly rounded "
            f"{w.get('want')!r} ({w.get('batch')})"
            if w
            else "every output correctly rounded (within 0.5 ULP), or wrong only at special values (below)"
        ),
    )
    t.add_row("correctly rounded", f"{res.correctly_rounded:,} / {res.pairs:,}")
    for line in res.notes()[1 if w else 0 :]:
        t.add_row("finding", ui.esc(line))
    con.print(t)
    p = Table(title="declared properties: proved or refuted over every pair; checked at best on samples")
    for col in ("property", "verdict", "pairs", "violations", "first counterexample"):
        p.add_column(col)
    for v in res.properties:
        p.add_row(
            v["name"],
            v["status"] + (f" ({v['note']})" if v.get("note") else ""),
            f"{v.get('inputs_checked') or 0:,}",
            f"{v.get('violations') or 0:,}",
            ui.esc(json.dumps(v.get("counterexample"))[:300] if v.get("counterexample") else ""),
        )
    con.print(p)
    con.print(ui.esc(f"reproduce: {res.command}"))
