"""Per-stage time of a float32 sweep over a few consecutive blocks, best of several runs.

    .venv/bin/python bench/sweep_stages_block.py --ops Log Sinh --at 0x3f800000 0x42b40000 [--blocks 16] [--repeat 5]

For each operator and each starting magnitude (--at, hex bits; rounded down to a block), runs
`verify.accuracy.sweep._Chunk.run_block` on --blocks consecutive blocks of 65,536 magnitudes (both signs:
2 x blocks x 65,536 inputs) as a sweep's worker runs them, --repeat times with a fresh chunk each time, and
prints the best time (this thread's CPU time; --clock wall) of each stage (summed over the blocks) in ns per input of the whole run: the target,
the compiled ball (NumPy's precomputation included), `prepare`, the fast pass (`easy_pass`), `block`, the
one-sided decisions and the exact reference, the property scans (`add_block`), the outputs' fingerprints;
"total" is the best whole run, and "sent to block" the inputs the fast pass left (per run). Unlike
bench/chunk_stages.py (whole chunks, mean), this is meant for a busy host: the best of several short runs
of one stage is the figure least touched by other processes' load.
"""

import argparse
import collections
import math
import time

import numpy as np
import stage_timers  # bench/, beside this script
from stage_timers import SENT, SPENT
from sweep_setup import sweep_config

import opcert
import opcert.verify.accuracy.sweep_kernel as sweep_kernel
import opcert.workers
from opcert.verify.accuracy import sweep


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ops", nargs="+", required=True)
    ap.add_argument("--at", nargs="+", default=["0x3f800000"], help="starting magnitudes (hex bits)")
    ap.add_argument("--blocks", type=int, default=16)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--target", default="opcert")
    ap.add_argument("--clock", choices=["cpu", "wall"], default="cpu")
    a = ap.parse_args()
    # the calling thread's CPU time: time another process takes from this one's core is not counted (a busy
    # host); --clock wall for the wall clock
    clock = time.thread_time if a.clock == "cpu" else time.perf_counter
    opcert.workers._IN_WORKER = True
    stage_timers.install(
        clock,
        extra=((sweep_kernel, "prepare", "prepare"), (sweep_kernel, "output_fingerprint", "fingerprint")),
    )
    stages = [
        "target",
        "ball",
        "prepare",
        "zeros",
        "easy",
        "specials",
        "block",
        "one-sided",
        "exact",
        "properties",
        "fingerprint",
    ]
    print(
        "| operator | block at | ns per input | "
        + " | ".join(stages)
        + " | sent to block |\n|---|---|---|"
        + "---|" * (len(stages) + 1)
    )
    for name in a.ops:
        op = opcert.get_operator(name)
        cfg = sweep_config(op, a.target)
        sweep.run_chunk(cfg, 127)  # compile, tune, load (and block's kernel on NaN inputs)
        stage_timers.time_target(cfg)
        for at in a.at:
            m0 = int(at, 16) // cfg.block * cfg.block
            index = (m0 - cfg.start) // cfg.chunk
            best = collections.defaultdict(lambda: math.inf)
            sent = None
            for _ in range(a.repeat):
                SPENT.clear()
                SENT.clear()
                chunk = sweep._Chunk(cfg, index)
                t0 = clock()
                for k in range(a.blocks):
                    b0 = m0 + k * cfg.block
                    if b0 >= chunk.hi:
                        break
                    chunk.run_block(b0, min(b0 + cfg.block, chunk.hi))
                total = clock() - t0
                best["total"] = min(best["total"], total)
                for s in stages:
                    best[s] = min(best[s], SPENT.get(s, 0.0))
                sent = SENT["block"]
            n = 2 * min(a.blocks * cfg.block, chunk.hi - m0)
            print(
                f"| {op.name} | 0x{m0:08x} | {1e9 * best['total'] / n:.2f} | "
                + " | ".join(f"{1e9 * best[s] / n:.2f}" for s in stages)
                + f" | {sent:,} |",
                flush=True,
            )


if __name__ == "__main__":
    np.seterr(all="ignore")
    main()
