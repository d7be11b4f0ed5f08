"""Max ULP error per operator, dtype and target, at default attributes.

    .venv/bin/python bench/runtime_table.py [--float32 exhaustive|sample] > bench/runtime_table.md

float16 and bfloat16 exhaustive; float32 exhaustive (all 2^32) by default;
float64 10,000 stratified samples with hard cases. Each cell: max ULP error,
correctly rounded share, and special-value mismatches when there are any
(the max ULP figure rounded up to 4 digits: 0.5000000000000001 shows as 0.5001);
'-' with the reason where the target does not support the combination.
"""

import argparse
import sys
import time

from opcert.report.render import short_ulp
from opcert.spec import operators
from opcert.verify.accuracy.measure import measure

TARGETS = ["opcert", "onnxruntime", "onnx-reference", "torch"]
DTYPES = ["float16", "bfloat16", "float32", "float64"]


def cell(r):
    if r.status == "unsupported":
        return "-"
    if r.status != "ok":
        return f"CRASH: {r.error}"
    s = f"{short_ulp(r.max_ulp)} ({100 * r.correctly_rounded / r.inputs_checked:.2f}% CR)"
    extra = [
        f"{n} {k}"
        for k, n in (
            ("NaN mm", r.nan_mismatches),
            ("inf mm", r.inf_mismatches),
            ("-0 mm", r.signed_zero_mismatches),
            ("flushed", r.subnormal_flushes),
        )
        if n
    ]
    return s + ("; " + ", ".join(extra) if extra else "")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--float32", default="exhaustive", choices=["exhaustive", "sample"])
    ap.add_argument("--ops", nargs="*", help="operators (default: the catalog)")
    ap.add_argument("--targets", nargs="*", default=TARGETS)
    ap.add_argument("--dtypes", nargs="*", default=DTYPES)
    a = ap.parse_args()
    t0 = time.time()
    print("| operator | target | " + " | ".join(a.dtypes) + " |")
    print("|---|---|" + "---|" * len(a.dtypes))
    worst = []
    for op in operators():
        if a.ops and op.name not in a.ops:
            continue
        for tgt in a.targets:
            cells = []
            for dt in a.dtypes:
                mode = (
                    "exhaustive"
                    if dt in ("float16", "bfloat16") or (dt == "float32" and a.float32 == "exhaustive")
                    else "sample"
                )
                r = measure(op.name, tgt, dt, mode)
                cells.append(cell(r))
                if r.status == "ok" and r.worst_input is not None:
                    worst.append((op.name, tgt, dt, r.max_ulp, r.worst_input_bits, r.worst_input, r.command))
                print(f"{op.name} {tgt} {dt}: {cells[-1]}", file=sys.stderr, flush=True)
            print(f"| {op.name} | {tgt} | " + " | ".join(cells) + " |", flush=True)
    print(f"\n({time.time() - t0:.0f} s)")
    print("\nWorst inputs (reproduce with the command):\n")
    for w in worst:
        print(f"- {w[0]} {w[2]} {w[1]}: {w[3]:.4g} ULP at {w[5]!r} ({w[4]}): `{w[6]}`")


if __name__ == "__main__":
    main()
