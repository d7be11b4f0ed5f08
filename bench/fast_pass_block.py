"""The sweep's fast pass (`sweep_kernel.easy_near`, and `easy`) and `block` alone on real blocks, in ns per input,
best of several runs (this thread's CPU time): to compare two checkouts' kernels on a busy host.

    PYTHONPATH=CHECKOUT .venv/bin/python bench/fast_pass_block.py [--ops Exp Log] [--at 0x3f800000 0xbf800000]

Each block (--at: its first input's bits; 65,536 inputs of one sign) is the sweep's: opcert's outputs and the
compiled ball as `verify.accuracy.sweep._Chunk` gives them, the worst-case thresholds of a chunk that has seen a
few blocks (a sample of this one raises them, as the sweep's crowded blocks do). `specials` (where the checkout
has it) is timed on what the fast pass leaves, and `block` on what is left then (and on the whole block, as
"block all").
"""

import argparse
import math
import time

import numpy as np
from sweep_setup import sweep_config  # bench/, beside this script

import opcert
import opcert.workers
from opcert.verify.accuracy import sweep, sweep_kernel


def best(f, repeat):
    t = math.inf
    for _ in range(repeat):
        t0 = time.thread_time()
        f()
        t = min(t, time.thread_time() - t0)
    return t


def timed_block(blk, tops, tally, at_inf, repeat):
    """(easy_near's time, easy's, block's on what they leave, the inputs they leave, block's on all of blk)."""
    n = blk.xbits.size
    hard, keep = np.empty(n, np.bool_), np.empty(n, np.uint32)
    e_near = best(lambda: sweep_kernel.easy_near(blk, tops, hard, keep), repeat)
    e_all = best(lambda: sweep_kernel.easy(blk, tops, hard, keep), repeat)
    only = np.flatnonzero(hard)

    def run_block(idx):
        st = sweep_kernel.block_state()
        for mine, theirs in zip(st, tally):
            mine[:] = theirs
        sweep_kernel.block(blk, at_inf, st, np.empty(n, np.int64), False, idx)

    if hasattr(sweep_kernel, "specials"):  # this checkout's specials() first (sweep._Chunk runs it on many left)
        sp = best(lambda: sweep_kernel.specials(blk, hard.copy(), True), repeat)
        sweep_kernel.specials(blk, hard, True)
        only = np.flatnonzero(hard)
    else:
        sp = 0.0
    return (
        e_near,
        e_all,
        sp,
        best(lambda: run_block(only), repeat),
        only,
        best(lambda: run_block(np.arange(n)), max(3, repeat // 5)),
    )


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ops", nargs="+", default=["Exp", "Tanh", "Log"])
    ap.add_argument("--at", nargs="+", default=["0x3f800000", "0xbf800000"])
    ap.add_argument("--repeat", type=int, default=30)
    a = ap.parse_args()
    opcert.workers._IN_WORKER = True
    print(
        "| operator | block at | easy_near ns | easy ns | specials ns | block (what is left) ns | left | block all ns |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for name in a.ops:
        op = opcert.get_operator(name)
        cfg = sweep_config(op)
        for at in a.at:
            bits0 = int(at, 16)
            m0, negative = bits0 & 0x7FFFFFFF, bool(bits0 >> 31)
            chunk = sweep._Chunk(cfg, m0 // cfg.chunk)
            b0 = m0 // cfg.block * cfg.block
            chunk.run_block(b0, b0 + cfg.block)  # thresholds from one block, as in a running chunk
            mags = np.arange(b0, b0 + cfg.block, dtype=np.uint64).astype(np.uint32)
            bits = mags | np.uint32(0x80000000) if negative else mags
            y = sweep._call_block(cfg, chunk.setup.tgt, op, chunk.setup.attrs, b0, b0 + cfg.block, negative)
            blk = chunk._own(bits, y)
            t = chunk.tally
            tops = sweep_kernel.sampled_floor(blk, chunk.at_inf, t, False, sweep_kernel.SAMPLE_STRIDE)
            n = bits.size
            e_near, e_all, sp, b_left, only, b_all = timed_block(blk, tops, t, chunk.at_inf, a.repeat)
            print(
                f"| {name} | 0x{bits0:08x} | {1e9 * e_near / n:.3f} | {1e9 * e_all / n:.3f} | {1e9 * sp / n:.3f} | "
                f"{1e9 * b_left / n:.3f} | {only.size:,} | {1e9 * b_all / n:.2f} |",
                flush=True,
            )


if __name__ == "__main__":
    np.seterr(all="ignore")
    main()
