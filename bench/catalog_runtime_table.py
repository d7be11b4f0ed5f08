"""Every operator of the catalog on every runtime: accuracy and property verdicts.

    .venv/bin/python bench/catalog_runtime_table.py > bench/catalog_runtime_table.md

Default attributes. float16 and bfloat16: every input, so each property
verdict is `proved` or `refuted` by enumeration on that target. float32 and
float64: stratified samples with hard cases and the adjacent neighbour of each
(--samples, default 100,000), so a property is `checked` (never proved) or
`refuted` with a replayed counterexample. Each cell: max ULP error rounded up
to 4 digits, the correctly rounded share, special-value mismatches, and the
properties refuted ("refuted: monotonic, range"); '-' where the target does not
support the combination (its reason is printed on stderr and by
`opcert accuracy ... --target T`).
"""

import argparse
import sys
import time

from opcert.report.render import short_ulp
from opcert.spec import operators
from opcert.targets import describe_target
from opcert.verify.accuracy.measure import measure

TARGETS = ["opcert", "onnxruntime", "onnx-reference", "torch", "jax", "openvino"]
DTYPES = ["float16", "bfloat16", "float32", "float64"]


def cell(r):
    if r.status == "unsupported":
        return "-", []
    if r.status != "ok":
        return f"CRASH: {r.error}", []
    s = f"{short_ulp(r.max_ulp)} ({100 * r.correctly_rounded / max(r.inputs_checked, 1):.2f}% CR)"
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
    # a property declared NOT to hold (Gelu's monotonic) is expected to be refuted: not a finding
    refuted = [p["name"] for p in r.properties if p["status"] == "refuted" and p.get("expected") == "holds"]
    undecided = [p["name"] for p in r.properties if p["status"] not in ("refuted", "proved", "checked", "skipped")]
    if refuted:
        extra.append("**refuted: " + ", ".join(refuted) + "**")
    if undecided:
        extra.append("undecided: " + ", ".join(undecided))
    return s + ("; " + ", ".join(extra) if extra else ""), [
        (p, r) for p in r.properties if p["status"] == "refuted" and p.get("expected") == "holds"
    ]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ops", nargs="*", help="operators (default: the catalog)")
    ap.add_argument("--targets", nargs="*", default=TARGETS)
    ap.add_argument("--dtypes", nargs="*", default=DTYPES)
    ap.add_argument("--samples", type=int, default=100_000)
    ap.add_argument(
        "--attr",
        action="append",
        default=[],
        metavar="NAME=V1,V2",
        help="an attribute's values, one row each (ConstantPow's exponent=2,3,0.5); default: the defaults",
    )
    ap.add_argument(
        "--float32",
        default="sample",
        choices=["sample", "exhaustive"],
        help="exhaustive: all 2^32 float32 inputs, every property proved or refuted on the target "
        "(5-10 minutes per cell on 2 cores; interrupted runs resume from .opcert-cache)",
    )
    a = ap.parse_args()
    t0 = time.time()
    versions = []
    for t in a.targets:
        try:
            info = describe_target(t)
            versions.append(f"{t} {info.version}")
        except Exception as exc:  # noqa: BLE001 - a runtime that is not installed: say so
            versions.append(f"{t}: not loadable ({exc})")
    f32 = "every float32 input" if a.float32 == "exhaustive" else f"float32: {a.samples:,} stratified samples"
    print(f"Targets: {'; '.join(versions)}. {f32}; float64: {a.samples:,} stratified samples.\n")
    print("| operator | target | " + " | ".join(a.dtypes) + " |")
    print("|---|---|" + "---|" * len(a.dtypes))
    findings, worst = [], []
    sets = [{}]
    for spec in a.attr:
        name, values = spec.split("=", 1)
        sets = [{**s, name: float(v)} for s in sets for v in values.split(",")]
    for op, attrs in ((op, s) for op in operators() for s in sets):
        if a.ops and op.name not in a.ops:
            continue
        label = op.name + ("".join(f" {k}={v:g}" for k, v in attrs.items()) if attrs else "")
        for tgt in a.targets:
            cells = []
            for dt in a.dtypes:
                if dt in ("float16", "bfloat16") or (dt == "float32" and a.float32 == "exhaustive"):
                    r = measure(op.name, tgt, dt, "exhaustive", attrs=attrs or None)
                else:
                    r = measure(op.name, tgt, dt, "sample", samples=a.samples, attrs=attrs or None)
                text, refuted = cell(r)
                cells.append(text)
                findings += [(label, tgt, dt, p) for p, _ in refuted]
                if r.status == "ok" and r.worst_input is not None:
                    worst.append(
                        f"- {label} {dt} {tgt}: {r.max_ulp:.4g} ULP at {r.worst_input!r} "
                        f"({r.worst_input_bits}): `{r.command}`"
                    )
                print(
                    f"{label} {tgt} {dt}: {text} ({r.elapsed_s:.0f} s)"
                    + (f" [{r.error}]" if r.status == "unsupported" else ""),
                    file=sys.stderr,
                    flush=True,
                )
            print(f"| {label} | {tgt} | " + " | ".join(cells) + " |", flush=True)
    print(f"\n({time.time() - t0:.0f} s)\n\nWorst inputs (reproduce with the command):\n")
    print("\n".join(worst))
    print("\nRefuted properties, first counterexample (replayed on the target):\n")
    for name, tgt, dt, p in findings:
        print(
            f"- {name} {dt} {tgt}: {p['name']} ({p.get('violations', '?'):,} of {p.get('inputs_checked', '?'):,}): "
            f"{_short(p.get('counterexample'))}"
        )


def _short(ex) -> str:
    try:
        xs = ", ".join(f"{k} = {v['value']!r} ({v['bits']})" for k, v in ex["inputs"].items())
        ys = ", ".join(f"{k} = {v['value']!r} ({v['bits']})" for k, v in ex["outputs"].items())
        rs = ", ".join(f"{v['value']!r}" for v in ex["reference"].values())
        return f"{xs} -> {ys}; correctly rounded {rs}"
    except (AttributeError, KeyError, TypeError):
        return str(ex)[:300]


if __name__ == "__main__":
    main()
