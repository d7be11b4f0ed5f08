"""Sampled binary64 checks: throughput against a per-input MPFR loop, in one run.

    .venv/bin/python bench/float64_throughput.py [--samples 1000000] [--catalog 100000]

The check is opcert's whole sampled measurement (stratified inputs with hard
cases, the target, the correctly rounded reference, statistics, the property
checks with adjacent neighbours), in one process, Tanh against numpy:tanh. The
baseline does the least a per-input checker must: the correctly rounded
binary64 tanh from MPFR (gmpy2, IEEE binary64 context) compared with NumPy's
output, best of three runs on 50,000 random inputs; opcert's check is timed three
times too, after a warm-up, and the ratio is of the two best (the slowest run's is
printed beside it). --catalog N then times
every operator of the catalog against opcert's own implementation at N samples
and prints how many inputs the reference's long double fast path left to the
exact path.
"""

import argparse
import time

import gmpy2
import numpy as np

import opcert
from opcert.verify.accuracy.measure import measure


def mpfr_loop(x, y):
    t0 = time.perf_counter()
    bad = 0
    with gmpy2.context(gmpy2.ieee(64)):
        for xi, yi in zip(x.tolist(), y.tolist()):
            if float(gmpy2.tanh(gmpy2.mpfr(xi))) != yi:
                bad += 1
    return (time.perf_counter() - t0) / x.size, bad


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--samples", type=int, default=1_000_000)
    ap.add_argument("--catalog", type=int, default=0, help="also time every operator at this many samples")
    a = ap.parse_args()
    rng = np.random.default_rng(0)
    x = rng.integers(0, 2**63, 50_000, dtype=np.uint64).view(np.float64) * rng.choice([-1, 1], 50_000)
    x = x[np.isfinite(x)]
    y = np.tanh(x)
    mpfr_s = min(mpfr_loop(x, y)[0] for _ in range(3))
    measure("Tanh", "numpy:tanh", "float64", samples=10_000, isolation="none")  # warm: imports, caches
    walls = []
    for _ in range(3):  # best of three, as the baseline's
        t0 = time.perf_counter()
        r = measure("Tanh", "numpy:tanh", "float64", samples=a.samples, isolation="none")
        walls.append(time.perf_counter() - t0)
    wall = min(walls)
    per = wall / r.inputs_checked
    print(
        f"opcert: {r.inputs_checked:,} binary64 inputs (Tanh, numpy:tanh, properties included) in {wall:.2f} s "
        f"= {r.inputs_checked / wall / 1e6:.2f} M inputs/s, best of {', '.join(f'{w:.2f}' for w in walls)} s "
        f"(one process; the reference on every core); max ULP {r.max_ulp:.4g}"
    )
    print(f"MPFR (gmpy2) loop: {mpfr_s * 1e9:.0f} ns/input = {1 / mpfr_s / 1e6:.2f} M inputs/s")
    print(
        f"opcert vs MPFR loop: {mpfr_s / per:.1f}x less time per input (both best of three; "
        f"{mpfr_s / (max(walls) / r.inputs_checked):.1f}x at opcert's slowest)"
    )
    if a.catalog:
        from opcert.formats import get_format
        from opcert.spec.attrs import resolve
        from opcert.spec.reference import reference_detailed
        from opcert.verify.accuracy.inputs import sample

        print("\n| operator | inputs | seconds | inputs/s | left to the exact path |\n|---|---|---|---|---|")
        for op in opcert.operators():
            t0 = time.perf_counter()
            r = measure(op.name, "opcert", "float64", samples=a.catalog)
            wall = time.perf_counter() - t0
            xs = sample(op, get_format("float64"), resolve(op), a.catalog, 0)
            slow = reference_detailed(op, xs, resolve(op)).slow_path
            print(
                f"| {op.name} | {r.inputs_checked:,} | {wall:.2f} | {r.inputs_checked / wall:,.0f} | "
                f"{slow:,} ({slow / xs.size:.2%}) |"
            )


if __name__ == "__main__":
    main()
