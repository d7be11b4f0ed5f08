"""Exhaustive binary32 sweep throughput, against per-input MPFR and mpmath loops, in one run.

    .venv/bin/python bench/sweep_throughput.py [--op Tanh] [--target numpy:tanh] [--chunks 256] [--workers 2]

The sweep is opcert's (target, reference fast path, exact fallback, statistics,
every property the operator declares, checkpoints), as `opcert accuracy OP
--dtype float32 --target T --exhaustive` runs it;
the loops do the least a per-input checker must: compute the correctly rounded
binary32 tanh (MPFR rounds it directly; mpmath at 64 bits, then round) and
compare it with the target's output, on a sample of random binary32 inputs.
Ratios are of time per input, measured in the same process, so the machine's
load affects both alike.
"""

import argparse
import tempfile
import time

import gmpy2
import mpmath
import numpy as np

from opcert.formats import FLOAT_FORMATS, round_fraction
from opcert.numerics.exact import mpf_to_fraction
from opcert.verify.accuracy.sweep import CHUNK, SweepConfig, sweep

F32 = FLOAT_FORMATS["float32"]


def mpfr_loop(x, y):
    ctx = gmpy2.ieee(32)
    t0 = time.perf_counter()
    bad = 0
    with gmpy2.context(ctx):
        for xi, yi in zip(x.tolist(), y.tolist()):
            if float(gmpy2.tanh(gmpy2.mpfr(xi))) != yi:
                bad += 1
    return (time.perf_counter() - t0) / x.size, bad


def mpmath_loop(x, y):
    t0 = time.perf_counter()
    bad = 0
    with mpmath.workprec(64):
        for xi, yi in zip(x.tolist(), y.tolist()):
            v = mpmath.tanh(mpmath.mpf(xi))
            if round_fraction(mpf_to_fraction(v._mpf_), F32) != yi:
                bad += 1
    return (time.perf_counter() - t0) / x.size, bad


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--op", default="Tanh")
    ap.add_argument("--target", default="numpy:tanh")
    ap.add_argument("--chunks", type=int, default=128, help="chunks of 2^24 magnitudes, both signs (128: all 2^32)")
    ap.add_argument("--workers", type=int, default=None)
    ap.add_argument("--sample", type=int, default=50000)
    a = ap.parse_args()
    rng = np.random.default_rng(0)
    x = rng.integers(0, 2**32, a.sample, dtype=np.uint64).astype(np.uint32).view(np.float32)
    x = x[np.isfinite(x)]
    y = np.tanh(x)
    # The baselines' best of three runs: the fastest MPFR figure makes the ratio conservative.
    mpfr_s = min(mpfr_loop(x, y)[0] for _ in range(3))
    mpm_s = min(mpmath_loop(x[:2000], y[:2000])[0] for _ in range(3))
    stop = min(a.chunks * CHUNK, 1 << 31)  # magnitudes: each one is swept with both signs
    from opcert.targets import describe_target

    fp = describe_target(a.target).fingerprint  # what keys the checkpoints (and is checked in every worker)
    # every declared property checked in the same pass, as `opcert accuracy --exhaustive` does
    from opcert.spec import get_operator
    from opcert.spec.attrs import resolve
    from opcert.verify.properties.checks import compile_all

    op = get_operator(a.op)
    props = tuple(c.name for c in compile_all(op, F32, resolve(op), op.primary))
    cfg = SweepConfig(a.op, a.target, (), None, 0, stop, target_fingerprint=fp, properties=props)
    with tempfile.TemporaryDirectory() as d:
        # compiles what the timed sweep runs (its property scans too) before it is timed
        sweep(
            SweepConfig(a.op, a.target, (), None, 0, 1 << 16, 1 << 16, target_fingerprint=fp, properties=props),
            workers=1,
            checkpoint=d + "/warm",
        )
        t0 = time.perf_counter()
        stats, _, info = sweep(cfg, workers=a.workers, checkpoint=d + "/run")
        wall = time.perf_counter() - t0
    n = 2 * stop
    sweep_s = wall / n
    print(
        f"sweep: {n:,} inputs ({a.op}, {a.target}; properties {', '.join(props) or 'none'}) in {wall:.1f} s "
        f"= {n / wall / 1e6:.1f} M inputs/s ({info['undecided']} undecided by the fast path)"
    )
    print(f"MPFR (gmpy2) loop: {mpfr_s * 1e9:.0f} ns/input = {1 / mpfr_s / 1e6:.2f} M inputs/s")
    print(f"mpmath loop: {mpm_s * 1e9:.0f} ns/input = {1 / mpm_s / 1e3:.1f} k inputs/s")
    print(f"sweep vs MPFR loop: {mpfr_s / sweep_s:.0f}x less time per input; vs mpmath: {mpm_s / sweep_s:.0f}x")


if __name__ == "__main__":
    main()
