"""The binary64 primitives the reference's balls take per block: NumPy's loops against
glibc's vector functions (opcert.expr.libm_arrays), side by side in one process.

    .venv/bin/python bench/vector_primitives.py [--n 1048576]

For each primitive: ns per value of each function over 2^20 arguments spread over the range
the float32 sweep reaches (best of 5, interleaved), and the worst error of each against Arb
at 200 bits on 2,000 of them, in binary64 ULPs (the contract the ball assumes: NumPy's
function the record's, glibc's vector one 4 ULPs). Where NumPy's loop is SIMD (an AVX-512
host) the two are close; without AVX-512 NumPy's binary64 tanh, exp, expm1 and log1p are
scalar. The host's SIMD row is printed first.
"""

import argparse
import math
import time
from fractions import Fraction

import flint
import numpy as np

from opcert.expr import PRIMITIVES, libm_arrays
from opcert.provenance import simd


def _arguments(name, n, rng):
    """Over the range the float32 sweep's balls reach (log's and log1p's spread over binades)."""
    if name == "log":
        return np.exp2(rng.uniform(-996, 996, n))
    if name == "log1p":
        return np.where(rng.random(n) < 0.5, rng.uniform(-0.99, 1, n), np.exp2(rng.uniform(0, 60, n)))
    lo, hi = {"exp": (-740, 705), "expm1": (-60, 88), "tanh": (-20, 20), "erf": (-6, 6), "erfc": (-6, 27)}[name]
    return rng.uniform(lo, hi, n)


def _worst(name, f, t):
    flint.ctx.prec = 200
    try:
        worst = 0.0
        y = f(t)
        for ti, yi in zip(t.tolist(), y.tolist()):
            n, d = Fraction(ti).as_integer_ratio()
            v = flint.arb(n) / flint.arb(d)
            v = v.erfc() if name == "erfc" else getattr(v, name)()
            ulp = max(math.ulp(yi), 2.0**-1074) if yi else 2.0**-1074
            g = Fraction(yi)
            worst = max(
                worst, float((abs(flint.arb(g.numerator) / flint.arb(g.denominator) - v) / flint.arb(ulp)).upper())
            )
        return worst
    finally:
        flint.ctx.prec = 53


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1 << 20)
    a = ap.parse_args()
    print(f"SIMD: {simd()}; {libm_arrays.status()}")
    rng = np.random.default_rng(0)
    print("| primitive | NumPy, ns/value | glibc vector, ns/value | ratio | NumPy worst ULP | vector worst ULP |")
    print("|---|---|---|---|---|---|")
    total = [0.0, 0.0]
    for name in libm_arrays.VECTOR_NAMES:
        vec = libm_arrays.vector(name)
        if vec is None:
            print(f"| {name} | - | not available here | - | - | - |")
            continue
        t = _arguments(name, a.n, rng)
        out = np.empty_like(t)
        fn = PRIMITIVES[name].numpy
        best = [math.inf, math.inf]
        with np.errstate(all="ignore"):
            for _ in range(5):
                for i, f in enumerate((fn, vec)):
                    t0 = time.perf_counter()
                    f(t, out=out) if f is vec else f(t)
                    best[i] = min(best[i], time.perf_counter() - t0)
            sub = t[:: max(1, t.size // 2000)]
            wn, wv = _worst(name, fn, sub), _worst(name, vec, sub)
        total[0] += best[0]
        total[1] += best[1]
        ns = [b / t.size * 1e9 for b in best]
        print(f"| {name} | {ns[0]:.2f} | {ns[1]:.2f} | {best[1] / best[0]:.2f} | {wn:.3f} | {wv:.3f} |")
    print(f"\nall primitives: {total[1] / total[0]:.2f} of NumPy's time")


if __name__ == "__main__":
    main()
