"""Which runtimes and operators depend on the layout: the `layout` property over the catalog.

    .venv/bin/python bench/layout_table.py > bench/layout_table.md
    .venv/bin/python bench/layout_table.py --dtypes float16 --targets torch onnxruntime   # a part

Default attributes. Each cell: the layout verdict and, where it is refuted, the
replayed example: the input, its output in the layout that shows it and in the
measurement's own call, and the time the layout check took. float16: every input
(`proved` where the target's short calls can be enumerated: torch by rows of a
2-D view, ONNX Runtime by graphs of independent nodes; else `checked` on
--layout-samples inputs per layout). float32: --samples stratified inputs, of
which --layout-samples go through every layout (`checked` or `refuted`).
Each row is reproduced by the command printed under the table.
"""

import argparse
import sys
import time

from opcert.spec import operators
from opcert.verify.accuracy.measure import measure

TARGETS = ["onnxruntime", "onnx-reference", "torch", "jax", "openvino"]


def cell(r) -> tuple[str, str | None]:
    if r.status == "unsupported":
        return "-", None
    if r.status != "ok":
        return f"CRASH: {r.error[:80]}", None
    lay = next((p for p in r.properties if p["name"] == "layout"), None)
    if lay is None:
        return "?", None
    t = f"{lay['elapsed_s']:.1f} s"
    if lay["status"] != "refuted":
        return f"{lay['status']} ({t})", None
    ce = lay.get("counterexample") or {}
    n = lay.get("violations")
    fams = ", ".join(f["family"] for f in lay["layouts"] if f["differ"] or f["errors"])
    ex = None
    if ce:
        ex = (
            f"x = {ce['inputs']['x']['value']!r} ({ce['inputs']['x']['bits']}): "
            f"{ce['outputs']['f(x)']['bits']} in {ce['layout']}; {ce['base']['output']['bits']} in "
            f"{ce['base']['layout']}; replayed: {ce['replayed']}"
        )
    return f"**refuted** ({n:,} outputs; {fams}; {t})", ex


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--targets", nargs="+", default=TARGETS)
    ap.add_argument("--dtypes", nargs="+", default=["float32", "float16"])
    ap.add_argument("--ops", nargs="+")
    ap.add_argument("--samples", type=int, default=20000)
    ap.add_argument("--layout-samples", type=int, default=1024)
    args = ap.parse_args(argv)
    ops = [op for op in operators() if not args.ops or op.name in args.ops]
    t_all = time.perf_counter()
    for dtype in args.dtypes:
        mode = "exhaustive" if dtype in ("float16", "bfloat16") else "sample"
        print(f"\n### {dtype} ({'every input' if mode == 'exhaustive' else f'{args.samples:,} samples'})\n")
        print("| operator | " + " | ".join(args.targets) + " |")
        print("|---|" + "---|" * len(args.targets))
        examples = []
        for op in ops:
            row = []
            for tgt in args.targets:
                kw = {"samples": args.samples} if mode == "sample" else {}
                r = measure(op.name, tgt, dtype, mode, properties=("layout",), layout_samples=args.layout_samples, **kw)
                text, ex = cell(r)
                row.append(text)
                if ex:
                    examples.append(
                        f"- {op.name} {dtype} on {tgt}: {ex}. `{r.command} --layout-samples {args.layout_samples}`"
                    )
                print(f"{op.name} {dtype} {tgt}: {text}", file=sys.stderr, flush=True)
            print(f"| {op.name} | " + " | ".join(row) + " |", flush=True)
        if examples:
            print("\nReplayed examples (the first refutation of each cell):\n")
            print("\n".join(examples))
    print(f"\n({time.perf_counter() - t_all:.0f} s in all)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
