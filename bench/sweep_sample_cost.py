"""A float32 sweep's cost per input over the whole range, estimated from a sample of its blocks, in this
thread's CPU time: to compare checkouts, and operators with the 60 s bar, on a busy host.

    PYTHONPATH=CHECKOUT .venv/bin/python bench/sweep_sample_cost.py --ops Log Round [--every 4] [--blocks 3]

For every --every-th chunk of the sweep (2^24 magnitudes, both signs), runs its first block as the sweep does
(not timed: a chunk's first block raises its empty worst-case lists), then times the next --blocks blocks
(`verify.accuracy.sweep._Chunk.run_block`, both signs, every property), best of --repeat runs each. The mean
over the chunks, in ns per input, times 2^32 is the sweep's CPU time without its start (workers, kernels,
the layout check) and the first blocks; half of it is a lower bound of its wall time on 2 cores. Chunks cover
equal ranges of bits: the mean weighs the binades as the sweep does.
"""

import argparse
import math
import time

import numpy as np
from sweep_setup import sweep_config  # bench/, beside this script

import opcert
import opcert.workers
from opcert.verify.accuracy import sweep


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ops", nargs="+", required=True)
    ap.add_argument("--every", type=int, default=4)
    ap.add_argument("--blocks", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    opcert.workers._IN_WORKER = True
    print(
        "| operator | ns per input (CPU) | 2^32 inputs (CPU s) | half of it (s) | the costliest chunk (ns per input) |"
    )
    print("|---|---|---|---|---|")
    for name in a.ops:
        op = opcert.get_operator(name)
        cfg = sweep_config(op)
        sweep.run_chunk(cfg, 127)  # compile, tune, load
        per = []
        for c in range(0, cfg.chunks, a.every):
            lo, hi = cfg.chunk_range(c)
            best = math.inf
            for _ in range(a.repeat):
                chunk = sweep._Chunk(cfg, c)
                chunk.run_block(lo, lo + cfg.block)
                t0 = time.thread_time()
                for k in range(1, 1 + a.blocks):
                    b0 = lo + k * cfg.block
                    chunk.run_block(b0, b0 + cfg.block)
                best = min(best, time.thread_time() - t0)
            per.append((1e9 * best / (2 * a.blocks * cfg.block), c))
        mean = sum(p for p, _ in per) / len(per)
        worst = max(per)
        print(
            f"| {name} | {mean:.2f} | {mean * 2**32 / 1e9:.1f} | {mean * 2**31 / 1e9:.1f} | "
            f"{worst[0]:.1f} (chunk {worst[1]}) |",
            flush=True,
        )


if __name__ == "__main__":
    np.seterr(all="ignore")
    main()
