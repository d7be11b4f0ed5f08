"""Pow, the binary operator, on every target: accuracy and the pair properties.

    .venv/bin/python bench/pow_table.py > bench/pow_table.md

float16 (and bfloat16 with --exhaustive-bfloat16): every pair of values, 2^32, so each property is `proved` or
`refuted` by enumeration on that target; float32 and float64 (and bfloat16 by default): sampled pairs (--samples,
default 100,000) with the landmark grid and the property grids, so a property is `checked` or `refuted` with a
replayed counterexample. Each cell: the max ULP error rounded up to 4 digits, the correctly rounded share, the
outputs wrong at special values, zeros of the wrong sign and flushed subnormals, and the refuted properties; '-'
where the target does not run the combination (its reason on stderr). Every row's command is printed below it.
"""

import argparse
import sys
import time

from opcert.report.render import short_ulp
from opcert.verify.binary.measure import measure_pairs

TARGETS = ["opcert", "onnxruntime", "onnx-reference", "torch", "jax", "openvino", "numpy:power"]
DTYPES = ["float16", "bfloat16", "float32", "float64"]


def cell(r):
    if r.status == "unsupported":
        return "-"
    if r.status != "ok":
        return f"CRASH: {r.error}"
    worst = "<= 0.5" if r.max_ulp is None else short_ulp(r.max_ulp)
    s = f"{worst} ({100 * r.correctly_rounded / max(r.pairs, 1):.4f}% CR)"
    extra = [
        f"{n:,} {k}"
        for k, n in (
            ("wrong at special values", r.special_mismatches),
            ("-0 mm", r.signed_zero_mismatches),
            ("flushed", r.subnormal_flushes),
        )
        if n
    ]
    refuted = [p["name"] for p in r.properties if p["status"] == "refuted"]
    if refuted:
        extra.append("**refuted: " + ", ".join(refuted) + "**")
    return s + ("; " + ", ".join(extra) if extra else "")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--targets", nargs="*", default=TARGETS)
    ap.add_argument("--dtypes", nargs="*", default=DTYPES)
    ap.add_argument("--samples", type=int, default=100_000)
    ap.add_argument("--no-exhaustive", action="store_true", help="float16 sampled too")
    ap.add_argument("--exhaustive-bfloat16", action="store_true", help="every bfloat16 pair too")
    a = ap.parse_args()
    t0 = time.time()
    print("| target | " + " | ".join(a.dtypes) + " |")
    print("|---|" + "---|" * len(a.dtypes))
    details = []
    for tgt in a.targets:
        cells = []
        for dt in a.dtypes:
            every = (dt == "float16" and not a.no_exhaustive) or (dt == "bfloat16" and a.exhaustive_bfloat16)
            r = (
                measure_pairs("Pow", tgt, dt, exhaustive=True)
                if every
                else measure_pairs("Pow", tgt, dt, samples=a.samples)
            )
            text = cell(r)
            cells.append(text)
            print(f"{tgt} {dt}: {text} ({r.elapsed_s:.0f} s) {r.error or ''}", file=sys.stderr, flush=True)
            if r.status == "ok":
                w = r.worst
                worst = (
                    f"worst {r.max_ulp:.6g} ULP at x = {w['x']!r}, y = {w['y']!r}: {w['got']!r} for {w['want']!r}"
                    if w
                    else "every output correctly rounded"
                )
                refuted = [
                    f"{p['name']} ({p['violations']:,} of {p['inputs_checked']:,}; first {p['counterexample']})"
                    for p in r.properties
                    if p["status"] == "refuted"
                ]
                specials = f"; special values: {r.special_examples[0]}" if r.special_examples else ""
                details.append(
                    f"- {tgt} {dt} ({r.elapsed_s:.0f} s): {worst}{specials}"
                    + (f"; refuted: {'; '.join(refuted)}" if refuted else "")
                    + f". `{r.command}`"
                )
        print(f"| {tgt} | " + " | ".join(cells) + " |", flush=True)
    print(f"\n({time.time() - t0:.0f} s)\n")
    print("\n".join(details))


if __name__ == "__main__":
    main()
