"""Each runtime's Softmax, LogSoftmax and Hardmax against the correctly rounded reference (issue 26).

    .venv/bin/python bench/tensor_runtimes.py [--samples 20000] [--dtypes float16,float32]

One row per (operator, target, dtype, standard): the worst per-element ULP error and where, the outputs
that break the declared rule for NaN and infinite entries, the row-sum error in units of 2^-p, the
declared row properties each target breaks (checked on the same rows; a sample, never a proof), and
the time. Every row is reproduced by the `opcert accuracy` command printed under the table.
"""

import argparse
import sys
import time

from opcert.verify.tensor.measure import measure_rows

TARGETS = ("opcert", "onnxruntime", "onnx-reference", "openvino", "torch", "jax")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--samples", type=int, default=20_000)
    ap.add_argument("--dtypes", default="float16,bfloat16,float32,float64")
    ap.add_argument("--targets", default=",".join(TARGETS))
    args = ap.parse_args(argv)
    print(
        "| operator | target | dtype | standard | max ULP | worst at | NaN/inf rule broken | row sum (x 2^-p) "
        "| properties refuted | s |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    commands = []
    for op in ("Softmax", "LogSoftmax", "Hardmax"):
        for target in args.targets.split(","):
            for dtype in args.dtypes.split(","):
                standards = ["onnx"] + (["onnx-11"] if target in ("onnxruntime", "onnx-reference", "openvino") else [])
                for std in standards:
                    t0 = time.perf_counter()
                    # opcert's binary64 code is held to its stated bound; every other target to correct rounding
                    from opcert.spec import get_tensor_operator
                    from opcert.verify.tensor.measure import LONGEST_ROW

                    allowed = (
                        get_tensor_operator(op)[0].budget64(LONGEST_ROW)
                        if (target, dtype) == ("opcert", "float64")
                        else 0.5
                    )
                    r = measure_rows(op, target, dtype, standard=std, samples=args.samples, max_ulp=allowed)
                    dt = time.perf_counter() - t0
                    if r.status != "ok":
                        print(
                            f"| {op} | {target} | {dtype} | {std} | {r.status} | {r.error[:90]} | | | | {dt:.1f} |",
                            flush=True,
                        )
                        continue
                    w = r.worst or {}
                    where = f"{w.get('case', '-')}, position {w.get('position')} of {w.get('length')}"
                    refuted = ", ".join(p["name"] for p in r.properties if p["status"] == "refuted") or "-"
                    rs = r.row_sum["max_units_of_2^-p"] if r.row_sum else None
                    fails = f"; {len(r.call_failures)} case(s) raised" if r.call_failures else ""
                    fails += f"; {r.subnormal_flushes:,} subnormal outputs flushed to 0" if r.subnormal_flushes else ""
                    print(
                        f"| {op} | {target} | {dtype} | {std} | {r.max_ulp:.3g} | {where}{fails} | "
                        f"{r.special_mismatches} | {'-' if rs is None else f'{rs:.3g}'} | {refuted} | {dt:.1f} |",
                        flush=True,
                    )
                    commands.append(r.command)
    print()
    for c in commands:
        print(f"    {c}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
