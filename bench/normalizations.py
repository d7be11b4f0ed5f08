"""The normalizations of issue 53 on every runtime here: LayerNormalization, RMSNormalization,
MeanVarianceNormalization, InstanceNormalization, GroupNormalization (2 groups) and LpNormalization (p = 2 and
p = 1) through torch (F.layer_norm, F.rms_norm, F.instance_norm, F.group_norm, F.normalize; no
MeanVarianceNormalization), JAX (jax.nn.standardize
for LayerNormalization; no function for the others), ONNX Runtime, onnx.reference and OpenVINO (one-node ONNX
models, Scale of ones; InstanceNormalization's scale of ones and B of zeros), in float16, bfloat16 and float32, each over the sampled and the generated hard rows of `opcert accuracy`.

    python bench/normalizations.py [--samples 20000] [--out bench/normalizations.md] [--only OP ...]

Each cell is one `opcert accuracy` measurement (the command is in the table: it replays the cell, its worst
row included); the JSON of every cell goes to bench/normalizations.json. Timings are per measurement, in one
process, on whatever host runs it: they are not the point of this table.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from opcert.files import write_json_atomic, write_text_atomic
from opcert.verify.tensor.measure import RowOptions, measure_rows

HERE = Path(__file__).resolve().parent
# (operator, attributes other than the standard's defaults)
OPS = (
    ("LayerNormalization", ()),
    ("RMSNormalization", ()),
    ("MeanVarianceNormalization", ()),
    ("InstanceNormalization", ()),
    ("GroupNormalization", (("num_groups", "2"),)),
    ("LpNormalization", ()),
    ("LpNormalization", (("p", "1"),)),
)
TARGETS = ("torch", "jax", "onnxruntime", "onnx-reference", "openvino")
DTYPES = ("float16", "bfloat16", "float32")


def _named(name: str, value) -> bool:
    """Whether the operator column names the attribute: a choice, or a scale or B other than the identity."""
    return name in ("p", "num_groups") or (name in ("scale", "B") and float(value) != {"scale": 1.0, "B": 0.0}[name])


def _cell(r) -> dict:
    refuted = [p["name"] for p in r.properties if p["status"] == "refuted"]
    w = r.worst or {}
    return {
        "op": r.op + "".join(f" {k}={v['value']}" for k, v in (r.attrs or {}).items() if _named(k, v["value"])),
        "target": r.target,
        "version": r.target_version,
        "dtype": r.dtype,
        "status": r.status,
        "error": r.error,
        "max_ulp": r.max_ulp if w else None,
        "worst_case": w.get("case"),
        "worst": {k: w.get(k) for k in ("length", "position", "x", "got", "want", "replayed", "row")},
        "correctly_rounded": r.correctly_rounded,
        "elements": r.elements,
        "nan_inf_wrong": r.special_mismatches,
        "flushed": r.subnormal_flushes,
        "refuted": refuted,
        "call_failures": [f"{f['case']}: {' '.join(f['error'].split())[:160]}" for f in r.call_failures],
        "elapsed_s": round(r.elapsed_s, 1),
        "command": r.command,
    }


SETTINGS = "epsilon 1e-5 as binary32, Scale 1; LpNormalization p = 2 unless the operator column says p = 1"


def main(argv=None, ops=OPS, name="normalizations", title="The normalizations", settings=SETTINGS) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", type=int, default=20000)
    ap.add_argument("--out", default=str(HERE / f"{name}.md"))
    ap.add_argument("--only", action="append", help="measure this operator only (repeatable)")
    a = ap.parse_args(argv)
    cells = []
    for op, attrs in ops:
        if a.only and op not in a.only:
            continue
        for target in TARGETS:
            for dtype in DTYPES:
                t0 = time.perf_counter()
                c = _cell(measure_rows(op, target, dtype, RowOptions(samples=a.samples, attrs=attrs)))
                cells.append(c)
                print(f"{op} {target} {dtype}: max {c['max_ulp']} ({time.perf_counter() - t0:.1f} s)", file=sys.stderr)
    lines = [
        f"# {title} on every runtime here (issue 53)",
        "",
        f"`python bench/{name}.py --samples {a.samples}{''.join(f' --only {o}' for o in a.only or ())}`: each row is the `opcert accuracy` command in its",
        "last column (it replays the row, its worst element included). Max ULP: over every element of the sampled",
        f"and the generated hard rows, against the correctly rounded value of the whole row ({settings}).",
        "NaN/inf wrong: outputs NaN or infinite where the reference is not, or the other way.",
        "",
        "| operator | target | dtype | max ULP | worst row (case) | correctly rounded | NaN/inf wrong | refuted "
        "| failed calls | command |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for c in cells:
        cr = f"{c['correctly_rounded']:,} / {c['elements']:,}"
        worst = "-" if c["max_ulp"] is None else f"{c['max_ulp']:.4g}"
        if c["status"] != "ok":
            worst = f"{c['status']}: {' '.join(str(c['error']).split())}"
        fails = "; ".join(c["call_failures"]) or "-"
        lines.append(
            f"| {c['op']} | {c['target']} {c['version']} | {c['dtype']} | {worst} | {c['worst_case'] or '-'} | {cr} "
            f"| {c['nan_inf_wrong']:,} | {', '.join(c['refuted']) or '-'} | {fails} | `{c['command']}` |"
        )
    write_text_atomic(a.out, "\n".join(lines) + "\n")
    write_json_atomic(str(Path(a.out).with_suffix(".json")), cells)
    print(f"wrote {a.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
