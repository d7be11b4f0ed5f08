"""Where a float32 sweep chunk's time goes, stage by stage, for each operator.

    .venv/bin/python bench/chunk_stages.py [--ops Mish Gelu Swish] [--chunks 0 32 64 96 120 127] [--target opcert]
    .venv/bin/python bench/chunk_stages.py --ops Gelu --attr approximate=tanh

Runs the given chunks (2^24 magnitudes, both signs) of each operator's sweep
one after the other on one core, as a sweep's worker runs them (see main),
every declared property checked, and wraps each stage of
`verify.accuracy.sweep.run_chunk` with a timer: the target's call, the compiled ball
(its NumPy precomputation included), the branch-free pass (`easy_pass`:
easy_near or easy), the NaN and infinite references it leaves (`specials`),
the classification kernel (`block`), the one-sided
decisions and the exact reference (what the fast path leaves), the property
scans (`add_block`); "other" is the rest (array conversions, Python), and the
minor page faults per block of 65,536 inputs (fresh memory from the system:
~1 us each on a VM; a reference cycle holding arrays showed as ~900). Seconds
per chunk, mean over the chunks. Chunk 0 (the subnormals) is where Gelu,
HardSwish, ScaledTanh and Swish put half their inputs on a binary32 midpoint
(one-sided decisions): the mean of six chunks weighs it 21 times its share of
a sweep.
"""

import argparse
import resource
import time

import stage_timers  # bench/, beside this script
from stage_timers import SPENT
from sweep_setup import sweep_config

import opcert
import opcert.workers
from opcert.verify.accuracy import sweep


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ops", nargs="*", help="operators (default: the catalog)")
    ap.add_argument("--chunks", type=int, nargs="*", default=[0, 32, 64, 96, 120, 127])
    ap.add_argument("--target", default="opcert")
    ap.add_argument(
        "--attr",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="an attribute value (as opcert accuracy --attr) instead of the default",
    )
    a = ap.parse_args()
    # the chunks run here as in a sweep's worker: a target call in the main process also looks for child
    # processes the target left (isolation.py: it reads /proc, ~50 us a call), which a worker does not, and
    # which made the target's stage 0.05-0.1 s of a chunk too long
    opcert.workers._IN_WORKER = True
    given = dict(kv.split("=", 1) for kv in a.attr)
    stage_timers.install()
    stages = ["target", "ball", "easy", "specials", "block", "one-sided", "exact", "zeros", "properties"]
    print(
        "| operator | s per chunk | "
        + " | ".join(stages)
        + " | other | page faults per block |\n|---|---|"
        + "---|" * (len(stages) + 2)
    )
    for op in [opcert.get_operator(n) for n in a.ops] if a.ops else opcert.operators():
        cfg = sweep_config(op, a.target, given)
        sweep.run_chunk(cfg, 64)  # compile, tune, load
        stage_timers.time_target(cfg)
        SPENT.clear()
        faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        t0 = time.perf_counter()
        for c in a.chunks:
            sweep.run_chunk(cfg, c)
        total = (time.perf_counter() - t0) / len(a.chunks)
        faults = (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - faults) / (
            len(a.chunks) * 2 * sweep.CHUNK / cfg.block
        )
        per = {k: v / len(a.chunks) for k, v in SPENT.items()}
        other = total - sum(per.values())
        print(
            f"| {op.name} | {total:.2f} | "
            + " | ".join(f"{per.get(s, 0.0):.2f}" for s in stages)
            + f" | {other:.2f} | {faults:.0f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
