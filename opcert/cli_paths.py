"""`opcert paths OP --dtype DT --paths A,B,...`: the path matrix (verify.paths.matrix), a thin layer over it.
opcert.cli registers the command and passes itself as `ui` (its console and escaping)."""

from __future__ import annotations

import sys

from rich.table import Table

from opcert import policy
from opcert.errors import UsageError
from opcert.files import write_json_atomic
from opcert.options import Options
from opcert.path_matrix import pair_text, path_matrix

PROPS_SHOWN = 8  # properties named per path in the table (all are in the JSON)


def add_parser(sub, func) -> None:
    s = sub.add_parser(
        "paths",
        help="the same operator through several code paths (eager, compiled, fused, ISA levels), compared",
        description="Each path is measured by its own `opcert accuracy` (printed, to reproduce it) in a fresh "
        "process; the paths' outputs on the same inputs (every input of a 16-bit format, the sampled inputs "
        "of float32 and float64) are compared bit for bit, and every differing pair is replayed. Exit 0: "
        "every path was measured and all give the same bits; 1: some pair differs, or a path's own check "
        "failed or crashed; 2: bad usage.",
    )
    s.add_argument("op")
    s.add_argument("--dtype", required=True)
    s.add_argument(
        "--paths",
        required=True,
        metavar="A,B,...",
        help="two targets or more (torch,torch.compile,torch.compile-emulate-casts); TARGET@LEVEL is one ISA "
        "level of its library's switch, TARGET@all every level the host has",
    )
    s.add_argument("--attr", action="append", metavar="NAME=VALUE")
    s.add_argument("--standard")
    s.add_argument("--exhaustive", action="store_true", help="every input (16-bit formats are always every input)")
    s.add_argument("--samples", type=int)
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--layout-samples", type=int)
    s.add_argument("--target-timeout", type=float)
    s.add_argument("--json", metavar="FILE", help="write the matrix as JSON (- for standard output)")
    s.set_defaults(func=func)


def cmd_paths(ui, args) -> int:
    if args.samples is not None:
        policy.samples(args.samples, "--samples")
    if args.exhaustive and args.samples is not None:
        raise UsageError("--exhaustive and --samples exclude each other")
    policy.seed(args.seed, "--seed")
    if args.target_timeout is not None:
        policy.timeout(args.target_timeout, "--target-timeout")
    ui._outputs(args, files=("json",))
    options = Options(
        samples=args.samples,
        seed=args.seed,
        standard=args.standard,
        target_timeout=args.target_timeout,
        layout_samples=args.layout_samples,
    )
    m = path_matrix(
        args.op,
        args.dtype,
        args.paths,
        mode="exhaustive" if args.exhaustive else "sample",
        options=options,
        attrs=ui._attrs(args.attr),
        say=lambda text: print(f"opcert: {text}", file=sys.stderr),
    )
    _print(ui, m, stderr=args.json == "-")
    if args.json:
        ui._write(args.json, "--json", lambda: write_json_atomic(args.json, m))
    return 0 if matrix_ok(m) else 1


def matrix_ok(m: dict) -> bool:
    """Every path measured, its own check passed, and every pair the same bits."""
    return (
        not m["missing"]
        and all(p.get("exit_code") == 0 for p in m["paths"])
        and all(p["differ"] == 0 for p in m["pairs"])
    )


def _ulp(v) -> str:
    return "-" if v is None else f"{v:.4g}"


def _print(ui, m: dict, stderr: bool) -> None:
    con = ui._console(stderr)
    attrs = ", ".join(f"{k}={v}" for k, v in m["attrs"].items())
    t = Table(title=f"{m['op']} {m['dtype']}" + (f" ({attrs})" if attrs else "") + f": paths on {m['scope']}")
    for col in ("path", "max ULP", "correctly rounded", "properties", "result"):
        t.add_column(col)
    for p in m["paths"]:
        props = p.get("properties") or {}
        bad = [k for k, v in props.items() if v in ("refuted", "unknown")]
        shown = ", ".join(f"{k}: {props[k]}" for k in bad[:PROPS_SHOWN]) or (
            f"{len(props)} established" if props else "-"
        )
        cr = p.get("correctly_rounded")
        n = p.get("inputs")
        t.add_row(
            ui.esc(p["path"]),
            _ulp(p.get("max_ulp")),
            f"{cr:,} / {n:,}" if cr is not None and n else "-",
            ui.esc(shown),
            "pass"
            if p.get("exit_code") == 0
            else f"{'fail' if p.get('status') == 'ok' else p.get('status')} (exit {p.get('exit_code')})",
        )
    con.print(t)
    for p in m["paths"]:
        seen = ((p.get("target_details") or {}).get("observed") or {}).get("kernels") or {}
        for label, k in seen.items():
            con.print(f"{ui.esc(p['path'])} ran, for {ui.esc(label)}: {ui.esc(', '.join(k['nodes_run']))}")
    pt = Table(title="bits compared on the same inputs (any NaN equals any NaN)")
    for col in ("paths", "outputs that differ", "most apart (representable values)", "example (replayed)"):
        pt.add_column(col)
    for pr in m["pairs"]:
        apart, text = pair_text(pr)
        pt.add_row(ui.esc(" vs ".join(pr["paths"])), f"{pr['differ']:,} of {m['inputs']:,}", apart, ui.esc(text))
    con.print(pt)
    con.print("same bits: " + "; ".join(" = ".join(g) for g in m["groups"]))
    for name, why in m["missing"].items():
        con.print(f"[bold]no outputs from {ui.esc(name)}[/bold]: {ui.esc(why)}")
    for p in m["paths"]:
        con.print(f"reproduce {ui.esc(p['path'])}: {ui.esc(p['command'])}")
