"""Every row of two 16-bit values through a runtime's tensor operator: the pair sweep's time and findings
(issue 26's bar: ONNX Runtime's float16 Softmax, all 2^32 pairs, under 5 minutes on 2 cores).

    .venv/bin/python bench/tensor_pairs.py [--ops Softmax,LogSoftmax,Hardmax] [--targets onnxruntime]
                                           [--dtype float16] [--no-second-layout]

The pairs go through the target in two layouts, as in `opcert accuracy --exhaustive` (the `layout`
property over the pairs); --no-second-layout times the measured layout alone (the sweep before issue 26's
code paths).

One row per (operator, target): the seconds of the pair sweep alone, pairs per second, the outputs
correctly rounded, the worst pair, and each verdict over the pairs. Runs in this process (no supervised
worker: the time is the sweep's), the next block's call beside this block's check as in `opcert accuracy
--exhaustive`, whose command is printed under the table.
"""

import argparse
import sys
import time

from opcert.formats import get_format
from opcert.spec import get_tensor_operator
from opcert.targets.tensor import load
from opcert.verify.tensor.calls import call_target
from opcert.verify.tensor.measure import pair_layout
from opcert.verify.tensor.pairs import PairSweep


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--ops", default="Softmax,LogSoftmax,Hardmax")
    ap.add_argument("--targets", default="onnxruntime")
    ap.add_argument("--dtype", default="float16")
    ap.add_argument("--max-ulp", type=float, default=0.5)
    ap.add_argument("--second-layout", action=argparse.BooleanOptionalAction, default=True)
    args = ap.parse_args(argv)
    fmt = get_format(args.dtype)
    print(
        "| operator | target | dtype | s | M pairs/s | outputs correctly rounded | worst pair | verdicts over the "
        "pairs |"
    )
    print("|---|---|---|---|---|---|---|---|")
    commands = []
    for name in args.ops.split(","):
        op, _ = get_tensor_operator(name)
        std = op.standard("onnx")
        for target in args.targets.split(","):
            tgt = load(target)
            why = tgt.unsupported(op, std, fmt.name, (1,), 2)
            if why:
                print(f"| {name} | {target} | {fmt.name} | - | - | - | unsupported: {why[:80]} | |")
                continue
            sweep = PairSweep(
                op,
                fmt,
                lambda X, tgt=tgt, op=op, std=std: call_target(tgt, op, std, X, (1,)),
                args.max_ulp,
                layout=pair_layout(op, std, fmt, tgt) if args.second_layout else None,
            )
            t0 = time.perf_counter()
            sweep.run()
            s = time.perf_counter() - t0
            w = sweep.worst
            worst = (
                "every output within 0.5 ULP"
                if w is None
                else f"{sweep.max_err:.4g} ULP at {w['row']} (output {w['position']})"
            )
            verdicts = ", ".join(f"{v['name'].replace(' (pairs)', '')} {v['status']}" for v in sweep.verdicts())
            print(
                f"| {name} | {target} | {fmt.name} | {s:.0f} | {sweep.pairs / s / 1e6:.1f} | "
                f"{sweep.correctly_rounded:,} of {2 * sweep.pairs:,} | {worst} | {verdicts} |",
                flush=True,
            )
            commands.append(f"opcert accuracy {name} --dtype {fmt.name} --target {target} --exhaustive")
    print()
    for c in commands:
        print(f"    {c}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
