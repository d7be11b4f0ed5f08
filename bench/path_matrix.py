"""The path matrices of issue 54: Gelu and Tanh through eager torch, torch.compile (with and without Inductor's
emulate_precision_casts, at each of torch's ISA levels), ONNX Runtime's and OpenVINO's one-node models and their
compiled decomposed subgraphs (fused or not), and JAX's jitted chain f(x * scale + bias) beside opcert's code;
every 16-bit input, 100,000 sampled float32 inputs.

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
from opcert.path_matrix import pair_text, path_matrix

HERE = Path(__file__).resolve().parent

TORCH = "torch,torch.compile,torch.compile-emulate-casts"
TORCH_LEVELS = "torch@all,torch.compile@all"
FUSED = "onnxruntime,onnxruntime-subgraph,onnxruntime-subgraph-unfused,openvino,openvino-subgraph,torch,torch.compile"
CHAIN = "jax-chain,jax,opcert"
SB = {"scale": "0.5", "bias": "0.25"}

# (name, operator, dtype, paths, samples, attributes, standard)
MATRICES = (
    ("gelu-float16-torch", "Gelu", "float16", TORCH, None, {}, None),
    ("tanh-float16-torch", "Tanh", "float16", TORCH, None, {}, None),
    ("gelu-float16-torch-levels", "Gelu", "float16", TORCH_LEVELS, None, {}, None),
    ("tanh-float16-torch-levels", "Tanh", "float16", TORCH_LEVELS, None, {}, None),
    ("gelu-bfloat16-torch", "Gelu", "bfloat16", TORCH, None, {}, None),
    ("gelu-float32-torch", "Gelu", "float32", TORCH, 100000, {}, None),
    ("tanh-float32-torch", "Tanh", "float32", TORCH, 100000, {}, None),
    ("gelu-float16-fused", "Gelu", "float16", FUSED, None, {}, None),
    ("gelu-float32-fused", "Gelu", "float32", FUSED, 100000, {}, None),
    ("gelu-tanh-float32-fused", "Gelu", "float32", FUSED, 100000, {"approximate": "tanh"}, None),
    ("tanh-float16-chain", "Tanh", "float16", "jax-chain,opcert", None, SB, "directml"),
    ("tanh-float16-chain-rounded", "Tanh", "float16", "jax-chain,opcert", None, SB, "directml+rounded"),
    ("tanh-float32-chain", "Tanh", "float32", "jax-chain,opcert", 100000, SB, "directml"),
    ("exp-float16-chain", "Exp", "float16", "jax-chain,opcert", None, SB, "directml"),
)


def command(op, dtype, paths, samples, attrs, standard) -> str:
    parts = ["opcert paths", op, "--dtype", dtype, "--paths", paths]
    if standard:
        parts += ["--standard", standard]
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
        apart, text = pair_text(pr)
        out.append(f"| {' vs '.join(pr['paths'])} | {pr['differ']:,} of {m['inputs']:,} | {apart} | {text} |")
    out += ["", "Same bits: " + "; ".join(" = ".join(g) for g in m["groups"]), ""]
    if m["missing"]:
        out += ["No outputs: " + "; ".join(f"{k}: {v}" for k, v in m["missing"].items()), ""]
    return "\n".join(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", action="append", help="run only these matrices (by name)")
    ap.add_argument("--out", default=str(HERE / "path_matrix.md"))
    ap.add_argument("--render", action="store_true", help="write the Markdown from path_matrix.json, running nothing")
    args = ap.parse_args(argv)
    chosen = [] if args.render else [m for m in MATRICES if not args.only or m[0] in args.only]
    jpath = HERE / "path_matrix.json"
    done = json.loads(jpath.read_text()) if jpath.exists() else {}
    for name, op, dtype, paths, samples, attrs, standard in chosen:
        cmd = command(op, dtype, paths, samples, attrs, standard)
        print(f"== {name}: {cmd}", file=sys.stderr)
        t0 = time.perf_counter()
        m = path_matrix(
            op,
            dtype,
            paths,
            options=Options(samples=samples, standard=standard),
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
        "matrix again. Measured on a 2-core AMD EPYC with AVX-512 on 2026-11-30 (torch 2.13.0+cpu, onnxruntime 1.32.0, "
        "OpenVINO 2026.4.1, jax 0.10.2); the seconds are each matrix's wall time on that shared host, other work "
        "running beside it.\n\n" + body,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
