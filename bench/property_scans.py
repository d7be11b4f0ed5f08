"""What the property scans of a float32 sweep cost per block, and the loop form they need.

    .venv/bin/python bench/property_scans.py                    # Tanh against numpy:tanh, chunks 64 and 100
    .venv/bin/python bench/property_scans.py --op HardSigmoid --chunks 60 62
    .venv/bin/python bench/property_scans.py --op Sigmoid --each  # and each property alone
    .venv/bin/python bench/property_scans.py --loops            # a loop over range(i0, i1) and over a slice

The first: the target's outputs of every block of the chunks (2^16 magnitudes, both signs) made first, then
PropertyChecker.add_block over them all, as a sweep's chunk calls it, every declared property checked; the
best of 5 passes, in microseconds per block. To compare two versions of opcert in one run, give one of them
with PYTHONPATH (a copy of the older tree) and alternate.

--loops: the count of outputs outside [lo, hi] over one block of binary32 outputs, written as a loop over
range(i0, i1) of the array and as a loop over range(n) of its slice y[i0:i1]: numba's range with a start
kept LLVM from vectorising the first (opcert.verify.properties.kernels._count_values)."""

import argparse
import sys
import time

import numpy as np

import opcert
import opcert.workers
from opcert.jit import numba
from opcert.verify.accuracy import sweep
from opcert.verify.properties.checks import PropertyChecker

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from sweep_setup import sweep_config  # noqa: E402 - bench/, beside this script


@numba.njit(error_model="numpy")
def _over_range(y, lo, hi, i0, i1):
    bad = 0
    for i in range(i0, i1):
        bad += ~((y[i] >= lo) & (y[i] <= hi))
    return bad


@numba.njit(error_model="numpy")
def _over_slice(y, lo, hi, i0, i1):
    z = y[i0:i1]
    bad = 0
    for i in range(z.size):
        bad += ~((z[i] >= lo) & (z[i] <= hi))
    return bad


def loops() -> None:
    y = np.tanh(np.arange(64 << 24, (64 << 24) + (1 << 16), dtype=np.uint32).view(np.float32))
    for f in (_over_range, _over_slice):
        f(y, -1.0, 1.0, 0, y.size)
        t = time.perf_counter()
        for _ in range(3000):
            f(y, -1.0, 1.0, 0, y.size)
        print(f"{f.__name__}: {(time.perf_counter() - t) / 3000 * 1e6:.1f} us a block of 65,536 outputs")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--op", default="Tanh")
    ap.add_argument("--target", default=None, help="default: numpy:tanh for Tanh, else opcert")
    ap.add_argument("--chunks", type=int, nargs="*", default=[64, 100])
    ap.add_argument("--loops", action="store_true")
    ap.add_argument(
        "--each", action="store_true", help="also each property alone (its scan and the block's fixed cost)"
    )
    a = ap.parse_args()
    if a.loops:
        return loops()
    opcert.workers._IN_WORKER = True  # as in a sweep's worker (no look for child processes after a call)
    op = opcert.get_operator(a.op)
    cfg = sweep_config(op, a.target or ("numpy:tanh" if a.op == "Tanh" else "opcert"))
    s = sweep._setup(cfg)
    blocks = []
    for c in a.chunks:
        for b0 in range(c << 24, (c + 1) << 24, 1 << 16):
            mags = np.arange(b0, b0 + (1 << 16), dtype=np.uint32)
            negb = mags | np.uint32(1 << 31)
            yp = s.tgt.run(op, mags.view(np.float32).copy(), s.attrs)
            yn = s.tgt.run(op, negb.view(np.float32).copy(), s.attrs)
            blocks.append((mags, yp, yn, negb))

    def timed(compiled):
        best = float("inf")
        for _ in range(5):
            checker = PropertyChecker(compiled, sweep.F32)
            t = time.perf_counter()
            for mags, yp, yn, negb in blocks:
                checker.add_block(mags, yp, yn, limits=s.limits[:2], negb=negb)
            best = min(best, time.perf_counter() - t)
        return best / len(blocks) * 1e6, checker

    us, checker = timed(s.compiled)
    print(
        f"{a.op} ({cfg.target}): add_block {us:.1f} us per block (best of 5), "
        f"{[c.name for c in checker.compiled]}, violations {checker.violations()} (opcert at {opcert.__file__})"
    )
    if a.each:
        for c in checker.compiled:
            print(f"  {c.name} alone: {timed([c])[0]:.1f} us per block")


if __name__ == "__main__":
    main()
