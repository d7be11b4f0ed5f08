"""opcert's tanh (expr.primitives._tanh_np) against NumPy's and against NumPy forms of the same selection.

    .venv/bin/python bench/known_values.py [--size 1048576] [--rounds 20]

On one call of random binary32 bit patterns widened to binary64 (a stratified sample's mix: 39% of them
below 2^-27 in magnitude, 48% beyond 20, interleaved at random), ns an element, best of the rounds:

- NumPy's tanh alone, into a reused buffer (the baseline: what any tanh of the call costs);
- NumPy's forms of the known values: abs, compares and np.where, each a fresh temporary;
- NumPy's masked loop, np.tanh(..., where=) on the elements not known;
- opcert's: numba passes without a branch on the data, NumPy's tanh on the gathered rest.

The four give the same values where the first is computed (checked here). Run it with AVX-512 on and off
(NPY_DISABLE_CPU_FEATURES="AVX512_ICL X86_V4" NUMBA_CPU_NAME=haswell NUMBA_CPU_FEATURES="").
"""

import argparse
import time

import numpy as np

from opcert.expr.primitives import TANH_SATURATION, _numpy_avx512, _tanh_np, _tiny_region


def best(f, rounds, n):
    f()
    t = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        f()
        t.append(time.perf_counter() - t0)
    return min(t) / n * 1e9


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=1 << 20)
    ap.add_argument("--rounds", type=int, default=20)
    a = ap.parse_args()
    rng = np.random.default_rng(0)
    bits = rng.integers(0, 2**32, a.size, dtype=np.uint64).astype(np.uint32)
    x = bits.view(np.float32)
    t = x[np.isfinite(x)].astype(np.float64)
    tiny = _tiny_region()
    buf = np.empty_like(t)

    def numpy_forms():
        m = np.abs(t)
        return np.where(m >= TANH_SATURATION, np.copysign(1.0, t), np.where(m < tiny, t, np.tanh(t)))

    def masked():
        m = np.abs(t)
        known = (m >= TANH_SATURATION) | (m < tiny)
        r = np.where(m >= TANH_SATURATION, np.copysign(1.0, t), t)
        np.tanh(t, out=r, where=~known)
        return r

    ref = numpy_forms()
    for f in (masked, lambda: _tanh_np(t)):
        assert np.array_equal(f(), ref, equal_nan=True)
    known = np.mean((np.abs(t) >= TANH_SATURATION) | (np.abs(t) < tiny))
    print(f"{t.size:,} values, {known:.1%} known; NumPy's AVX-512 loops: {_numpy_avx512()}")
    print("| form | ns an element |\n|---|---|")
    for label, f in (
        ("NumPy's tanh alone, into a reused buffer", lambda: np.tanh(t, out=buf)),
        ("NumPy's forms (abs, compares, np.where)", numpy_forms),
        ("NumPy's masked loop (where=)", masked),
        ("opcert's _tanh_np", lambda: _tanh_np(t)),
    ):
        print(f"| {label} | {best(f, a.rounds, t.size):.2f} |")


if __name__ == "__main__":
    main()
