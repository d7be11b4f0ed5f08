"""The commands of the predicate operators (spec.predicate: IsNaN, IsInf), a thin layer over
verify.predicate.measure and the operators' classification: `opcert ops IsNaN`, `opcert ref IsInf -- X ...`,
`opcert accuracy IsNaN ...`. opcert.cli dispatches here where the operator named is a predicate, passing itself as
`ui`: its console, escaping and input parsing (this module sits below it in the layers, and imports none of it)."""

from __future__ import annotations

import json
import sys

import numpy as np
from rich.table import Table

from opcert import policy
from opcert.errors import UsageError
from opcert.files import write_json_atomic
from opcert.formats import get_format
from opcert.spec.predicate import CHECKED_DTYPES, class_name, get_predicate_operator, predicate_operators
from opcert.verify.predicate.measure import PredicateOptions, measure_predicate


def predicate_record(op) -> dict:
    return {
        "name": op.name,
        "kind": "predicate",
        "summary": op.summary,
        "family": op.family,
        "inputs": list(op.inputs),
        "primary_standard": op.primary,
        "dtypes": sorted({d for s in op.standards for u in s.support for d in u.dtypes}),
        "checked_dtypes": [d for d in CHECKED_DTYPES if any(s.lists(d) for s in op.standards)],
        "standards": [
            {
                "key": s.key,
                "name": s.op_name,
                "document": s.document,
                "formula": s.formula_text,
                "attribute_names": s.attribute_names,
                "defaults": s.defaults or {},
                "support": [
                    {"since": u.since, "dtypes": list(u.dtypes), "ranks": list(u.ranks) if u.ranks else None}
                    for u in s.support
                ],
                "output_type": s.output_type,
                "output_types": list(s.output_types),
                "notes": s.notes or None,
            }
            for s in op.standards
        ],
        "attributes": [
            {
                "name": a.name,
                "standard": a.standard,
                "doc": a.doc,
                "values": list(a.values),
                "value_names": a.value_names or {},
                "aliases": list(a.aliases),
            }
            for a in op.attributes
        ],
        "properties": [
            {"name": p.name, "kind": p.kind, "statement": p.statement, "standards": list(p.standards)}
            for p in op.properties
        ],
    }


def ops_rows(ui, console) -> None:
    """The predicate operators' table of `opcert ops`."""
    t = Table(title="predicate operators: a truth value per element (opcert ref OP -- X ...; accuracy: every pattern)")
    for col in ("operator", "standards", "attributes (defaults)", "dtypes", "output", "definition"):
        t.add_column(col)
    for op in predicate_operators():
        r = predicate_record(op)
        stds = ", ".join(f"{s.key}:{s.op_name}" for s in op.standards)
        at = (
            ", ".join(
                f"{a.name} ({a.standard}, {next(s for s in op.standards if s.key == a.standard).defaults[a.name]})"
                for a in op.attributes
            )
            or "-"
        )
        outs = ", ".join(f"{s.key}: {s.output_type}" for s in op.standards)
        t.add_row(
            op.name, ui.esc(stds), ui.esc(at), ", ".join(r["checked_dtypes"]), ui.esc(outs),
            ui.esc(op.standard(None).formula_text),
        )  # fmt: skip
    console.print(t)


def cmd_ops_one(ui, args) -> int:
    r = predicate_record(get_predicate_operator(args.op))
    if args.json:
        print(json.dumps(r, indent=2))
        return 0
    con = ui._console()
    con.print(f"[bold]{ui.esc(r['name'])}[/bold] (predicate, {ui.esc(r['family'])}): {ui.esc(r['summary'])}")
    con.print(
        f"inputs: {', '.join(r['inputs'])}; dtypes: {', '.join(r['dtypes'])} (opcert checks "
        f"{', '.join(r['checked_dtypes'])}); primary: {r['primary_standard']}"
    )
    t = Table(title="standards")
    for col in ("key", "name", "formula", "support (since: dtypes)", "output", "notes"):
        t.add_column(col)
    for s in r["standards"]:
        support = "; ".join(f"{u['since']}: {', '.join(u['dtypes'])}" for u in s["support"])
        t.add_row(
            s["key"], ui.esc(s["name"]), ui.esc(s["formula"]), ui.esc(support), ui.esc(" or ".join(s["output_types"])),
            ui.esc(s["notes"] or ""),
        )  # fmt: skip
    con.print(t)
    if r["attributes"]:
        t = Table(title="attributes")
        for col in ("name", "standard", "values", "meaning"):
            t.add_column(col)
        for a in r["attributes"]:
            named = ", ".join(f"{k} = {v}" for k, v in a["value_names"].items())
            t.add_row(a["name"], a["standard"], ui.esc(named or ", ".join(map(str, a["values"]))), ui.esc(a["doc"]))
        con.print(t)
    t = Table(title="properties (proved over every pattern of a 16-bit format or of float32, or checked on samples)")
    for col in ("name", "kind", "statement", "standards"):
        t.add_column(col)
    for p in r["properties"]:
        t.add_row(p["name"], p["kind"], ui.esc(p["statement"]), ", ".join(p["standards"]) or "all")
    con.print(t)
    return 0


def _settled(ui, args, op):
    """(the standard, every attribute at its value: the defaults and --attr) of a command's arguments."""
    std = op.standard(args.standard)
    return std, op.attributes_for(std, ui._attrs(args.attr))


def cmd_ref(ui, args) -> int:
    """IEEE 754's classification of each input: `opcert ref IsNaN --dtype float16 -- nan 0x7c01 inf 1`."""
    op = get_predicate_operator(args.op)
    if args.axis is not None or args.axes is not None or args.shape is not None:
        raise UsageError(f"--axis, --axes and --shape are for the tensor operators; {op.name} takes values: -- X ...")
    fmt = get_format(args.dtype)
    if fmt.kind != "float" or fmt.name not in CHECKED_DTYPES:
        raise UsageError(f"{op.name} takes floating-point tensors; allowed: {', '.join(CHECKED_DTYPES)}")
    if not args.x:
        raise UsageError("give the inputs: -- X [X ...] (decimal, hex float, bit pattern such as 0x7c01, inf, nan)")
    std, attrs = _settled(ui, args, op)
    x = np.concatenate([ui._parse_input(t, fmt) for t in args.x])
    y = op.reference(x, attrs, std.key)
    bits = x.view(fmt.uint)
    rows = [
        {
            "x": ui._num(x[i], fmt),
            "x_bits": f"0x{int(bits[i]):0{fmt.bits // 4}x}",
            "class": class_name(int(bits[i]), fmt),
            "result": bool(y[i]) if std.output_type == "bool" else int(y[i]),
        }
        for i in range(x.size)
    ]
    out = {"op": op.name, "dtype": fmt.name, "standard": std.key, "attrs": attrs, "output_type": std.output_type,
           "results": rows}  # fmt: skip
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    named = ", ".join(f"{k} = {v}" for k, v in attrs.items())
    t = Table(
        title=ui.esc(
            f"{op.name} ({std.key}, {std.op_name}{', ' + named if named else ''}) reference, {fmt.name}: IEEE 754's "
            f"classification, as {std.output_type}"
        )
    )
    for col in ("x", "x bits", "class", "result"):
        t.add_column(col)
    for r in rows:
        t.add_row(str(r["x"]), r["x_bits"], ui.esc(r["class"]), str(r["result"]))
    ui._console().print(t)
    return 0


def cmd_accuracy(ui, args) -> int:
    """A predicate operator's target over every pattern or samples (verify.predicate.measure)."""
    op = get_predicate_operator(args.op)
    for flag, attr in (
        ("--workers", "workers"),
        ("--scheduler", "scheduler"),
        ("--checkpoint", "checkpoint"),
        ("--attr-sweep", "attr_sweep"),
        ("--plot", "plot"),
        ("--isa", "isa"),
        ("--layout-samples", "layout_samples"),
        ("--signed-zero", "signed_zero"),
        ("--subnormals", "subnormals"),
    ):
        if getattr(args, attr, None):
            raise UsageError(
                f"{flag} does not apply to {op.name}, a predicate operator: its outputs are truth values, right or "
                "wrong (no ULP figure); every pattern of a 16-bit format is checked, float32's every one with "
                "--exhaustive, else samples (--samples, --seed); --standard, --attr and --json apply; --require, "
                "--waive and --accept-sampled-evidence (with --max-ulp, which a predicate ignores) judge it as a gate "
                "check"
            )
    fmt = get_format(args.dtype)
    if args.require is not None or args.waive or args.accept_sampled_evidence:
        # judged as a gate check (gating.run.judge_predicate): the command a gate report prints gives its verdict
        return ui._accuracy_as_check(args, fmt, "exhaustive" if args.exhaustive else "sample")
    if args.max_ulp is not None:
        raise UsageError(
            f"--max-ulp does not apply to {op.name}, a predicate operator: its outputs are truth values, right or "
            "wrong (no ULP figure); a gate's reproduce command gives it beside --require, where it is ignored"
        )
    if args.exhaustive and args.samples is not None:
        raise UsageError("--exhaustive and --samples exclude each other")
    if args.samples is not None:
        if fmt.kind == "float" and fmt.bits == 16:
            raise UsageError(
                f"every {fmt.name} pattern is checked (65,536 of them): --samples applies to float32 and float64"
            )
        policy.samples(args.samples, "--samples")
    policy.seed(args.seed, "--seed")
    ui._outputs(args, files=("json",))
    res = measure_predicate(
        op,
        args.target,
        fmt.name,
        PredicateOptions(
            standard=args.standard,
            attrs=tuple(sorted(ui._attrs(args.attr).items())),
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
    if res.status != "ok":
        print(f"opcert: {ui.safe(res.error)}", file=sys.stderr)
        return 1
    failed = False
    if res.mismatches:
        e = res.examples[0]
        print(
            f"opcert: {res.mismatches:,} wrong outputs on {res.target}; first x = {e['x']} ({e['bits']}, "
            f"{ui.safe(e['class'])}): {e['output']!r} where {e['due']!r} is due",
            file=sys.stderr,
        )
        failed = True
    if res.refuted:
        print(f"opcert: declared properties refuted on {res.target}: {', '.join(res.refuted)}", file=sys.stderr)
        failed = True
    return 1 if failed else 0


def _print(ui, res, stderr: bool = False) -> None:
    con = ui._console(stderr)
    if res.status != "ok":
        con.print(ui.esc(f"{res.op} {res.dtype} {res.target} ({res.standard}): {res.status}: {res.error}"))
        return
    what = "every pattern" if res.exhaustive else "sampled patterns"
    named = ", ".join(f"{k} = {v}" for k, v in res.attrs.items())
    t = Table(
        title=ui.esc(
            f"{res.op} ({res.standard}{', ' + named if named else ''}) {res.dtype}, target {res.target} "
            f"{res.target_version}: {res.inputs:,} inputs ({what}), {res.elapsed_s:.1f} s"
        )
    )
    t.add_column("measure")
    t.add_column("value")
    t.add_row("right outputs", f"{res.inputs - res.mismatches:,} / {res.inputs:,}")
    t.add_row("output dtype", ui.esc(f"{res.output_dtype} (the standard's: {res.due_dtype})"))
    for line in res.notes():
        t.add_row("finding", ui.esc(line))
    for e in res.examples:
        t.add_row(
            "wrong output",
            ui.esc(
                f"x = {e['x']} ({e['bits']}, {e['class']}): {e['output']!r} where {e['due']!r} is due ({e['batch']})"
            ),
        )
    con.print(t)
    p = Table(title="declared properties: proved or refuted over every pattern; checked at best on samples")
    for col in ("property", "verdict", "inputs", "violations", "first counterexample"):
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
