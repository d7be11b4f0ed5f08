"""The path matrices of issue 54: Gelu and Tanh through eager torch, torch.compile (with and without Inductor's
emulate_precision_casts, at each of torch's ISA levels), ONNX Runtime's one-node model and its fused and unfused
subgraph; every float16 input, 100,000 sampled float32 inputs.

    python bench/path_matrix.py [--only NAME] [--out bench/path_matrix.md]

Each matrix is `opcert paths ...` (the command is printed above its table); the JSON of every matrix goes to
bench/path_matrix.json. Each path runs in a fresh process of its own: one matrix takes minutes.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from opcert.files import write_json_atomic, write_text_atomic
from opcert.options import Options
from opcert.path_matrix import path_matrix

HERE = Path(__file__).resolve().parent

TORCH = "torch,torch.compile,torch.compile-emulate-casts"
TORCH_LEVELS = "torch@all,torch.compile@all"
ORT = "onnxruntime,onnxruntime-subgraph,onnxruntime-subgraph-unfused,torch,torch.compile"

# (name, operator, dtype, paths, samples, attributes)
MATRICES = (
    ("gelu-float16-torch", "Gelu", "float16", TORCH, None, {}),
    ("tanh-float16-torch", "Tanh", "float16", TORCH, None, {}),
    ("gelu-float16-torch-levels", "Gelu", "float16", TORCH_LEVELS, None, {}),
    ("tanh-float16-torch-levels", "Tanh", "float16", TORCH_LEVELS, None, {}),
    ("gelu-bfloat16-torch", "Gelu", "bfloat16", TORCH, None, {}),
    ("gelu-float32-torch", "Gelu", "float32", TORCH, 100000, {}),
    ("tanh-float32-torch", "Tanh", "float32", TORCH, 100000, {}),
    ("gelu-float16-ort", "Gelu", "float16", ORT, None, {}),
    ("gelu-float32-ort", "Gelu", "float32", ORT, 100000, {}),
    ("gelu-tanh-float32-ort", "Gelu", "float32", ORT, 100000, {"approximate": "tanh"}),
)


def command(op, dtype, paths, samples, attrs) -> str:
    parts = ["opcert paths", op, "--dtype", dtype, "--paths", paths]
    if samples:
        parts += ["--samples", str(samples)]
    for k, v in attrs.items():
        parts += ["--attr", f"{k}={v}"]
    return " ".join(parts)


def _ulp(v) -> str:
    return "-" if v is None else f"{v:.4g}"


def markdown(name: str, cmd: str, m: dict, seconds: float) -> str:
    out = [f"### {name}", "", f"`{cmd}` ({seconds:.0f} s; {m['scope']})", ""]
    out += ["| path | max ULP | correctly rounded | refuted properties | kernels run |", "|---|---|---|---|---|"]
    for p in m["paths"]:
        props = p.get("properties") or {}
        bad = ", ".join(k for k, v in props.items() if v == "refuted") or "none"
        seen = ((p.get("target_details") or {}).get("observed") or {}).get("kernels") or {}
        ran = "; ".join(", ".join(v["nodes_run"]) for v in seen.values()) or "-"
        cr, n = p.get("correctly_rounded"), p.get("inputs")
        out.append(
            f"| {p['path']} | {_ulp(p.get('max_ulp'))} | "
            + (f"{cr:,} / {n:,}" if cr is not None and n else f"- ({p.get('status')}: {p.get('error')})")
            + f" | {bad} | {ran} |"
        )
    out += [
        "",
        "| paths | outputs that differ | most apart | example (replayed in fresh processes) |",
        "|---|---|---|---|",
    ]
    for pr in m["pairs"]:
        ex = pr["example"]
        text = "-"
        if ex:
            a, b = ex["outputs"]
            text = (
                f"x = {ex['x']['bits']}: {a['output']['bits']} ({_ulp(a['ulp'])} ULP) vs {b['output']['bits']} "
                f"({_ulp(b['ulp'])} ULP), correctly rounded {ex['correctly_rounded']['bits']}"
                + ("" if ex["replayed"] else " (not reproduced)")
            )
        apart = f"{pr['max_apart']:,}" + (f" (+{pr['nan_differ']:,} NaN vs number)" if pr["nan_differ"] else "")
        out.append(f"| {' vs '.join(pr['paths'])} | {pr['differ']:,} of {m['inputs']:,} | {apart} | {text} |")
    out += ["", "Same bits: " + "; ".join(" = ".join(g) for g in m["groups"]), ""]
    if m["missing"]:
        out += ["No outputs: " + "; ".join(f"{k}: {v}" for k, v in m["missing"].items()), ""]
    return "\n".join(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", action="append", help="run only these matrices (by name)")
    ap.add_argument("--out", default=str(HERE / "path_matrix.md"))
    args = ap.parse_args(argv)
    chosen = [m for m in MATRICES if not args.only or m[0] in args.only]
    jpath = HERE / "path_matrix.json"
    done = json.loads(jpath.read_text()) if jpath.exists() else {}
    for name, op, dtype, paths, samples, attrs in chosen:
        cmd = command(op, dtype, paths, samples, attrs)
        print(f"== {name}: {cmd}", file=sys.stderr)
        t0 = time.perf_counter()
        m = path_matrix(
            op,
            dtype,
            paths,
            options=Options(samples=samples),
            attrs=attrs,
            say=lambda text: print(f"   {text}", file=sys.stderr),
        )
        done[name] = {"command": cmd, "seconds": time.perf_counter() - t0, "matrix": m}
        write_json_atomic(str(jpath), done)
    order = [m[0] for m in MATRICES if m[0] in done]
    body = "\n".join(markdown(n, done[n]["command"], done[n]["matrix"], done[n]["seconds"]) for n in order)
    write_text_atomic(
        args.out,
        "# Path matrices (issue 54)\n\nWritten by `python bench/path_matrix.py`; each section's command gives its "
        "matrix again.\n\n" + body,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
