"""What the float32 sweep's kernel tuning gains, operator by operator: each variant the tuning compiles, timed as
the tuning times it, and the time it takes to compile.

    .venv/bin/python bench/kernel_tuning.py [--ops Round Tan ...]

For each operator's reference form (its primary standard, default attributes), the kernels
numerics.ball_compiled.compiled(tune=True) would compile: the default (inlined, shared) and the variants
`variants` returns, each compiled here in this process (set OPCERT_KERNEL_CACHE to an empty directory for cold
compiles; a warm cache loads them), then all timed on the tuning's own blocks (_tuning_blocks, best of 5,
interleaved), and the radius-0 kernel where the tuning would try it (_zero_candidate and the default's time
above ZERO_WORTH). The tuning's choice is the fastest; its gain is 1 - best / default. ns per input."""

import argparse
import math
import time

import numpy as np

import opcert.numerics.ball_compiled as bc
from opcert.spec import CATALOG, get_operator
from opcert.spec.attrs import resolve


def timed(kernels, blocks, rounds=5):
    n = max(b[0].size for b in blocks)
    out = bc._kernel_outputs(n)
    best = [math.inf] * len(kernels)
    for _ in range(rounds):
        for i, k in enumerate(kernels):
            t0 = time.perf_counter()
            for x, pa, pv in blocks:
                k(x, pa, pv, *(a[: x.size] for a in out))
            best[i] = min(best[i], time.perf_counter() - t0)
    total = sum(b[0].size for b in blocks)
    return [b / total * 1e9 for b in best]


def load(src, pre, attrs):
    t0 = time.perf_counter()
    k = bc._load(src)
    k(np.zeros(1), *bc._midpoints(pre, np.zeros(1), attrs), *bc._kernel_outputs(1))
    return k, time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ops", nargs="*", help="operators (default: every element-wise one with a compiled ball)")
    a = ap.parse_args()
    names = a.ops or list(CATALOG)
    print(
        "| operator | default ns | variants ns | radius-0 ns | chosen | gain | compile s: default, others |\n"
        "|---|---|---|---|---|---|---|",
        flush=True,
    )
    gains = []
    for name in names:
        op = get_operator(name)
        attrs = {k: float(v) for k, v in resolve(op).items()}
        form = op.reference_form(None)
        try:
            src, pre, alts = bc.variants(form, attrs, True, tune=True)
        except Exception:  # noqa: BLE001 - no compiled ball for this form (the NumPy ball takes it)
            continue
        default, c0 = load(src, pre, attrs)
        loaded = [load(s, pre, attrs) for s in alts]
        kernels = [default, *(k for k, _ in loaded)]
        compile_s = [c0, *(c for _, c in loaded)]
        blocks = [(x, *(q.copy() for q in bc._midpoints(pre, x, attrs, form))) for x in bc._tuning_blocks()]
        times = timed(kernels, blocks)
        zero_ns = None
        if bc._zero_candidate(form) and times[0] * 1e-9 > bc.ZERO_WORTH:
            zsrc = bc.source(form, attrs, True, zero=True)[0]
            zk, zc = load(zsrc, pre, attrs)
            compile_s.append(zc)
            zt = bc._block_times(zk, blocks)
            kt = bc._block_times(kernels[int(np.argmin(times))], blocks)
            total = sum(b[0].size for b in blocks)
            zero_ns = float(np.minimum(zt, kt).sum()) / total * 1e9
        best = min(times + ([zero_ns] if zero_ns is not None else []))
        chosen = (
            "radius-0"
            if zero_ns is not None and best == zero_ns
            else ("default" if times.index(min(times)) == 0 else f"variant {times.index(min(times))}")
        )
        gain = 1 - best / times[0]
        gains.append((name, gain))
        print(
            f"| {name} | {times[0]:.2f} | {', '.join(f'{t:.2f}' for t in times[1:]) or '-'} | "
            f"{'-' if zero_ns is None else f'{zero_ns:.2f}'} | {chosen} | {100 * gain:.1f}% | "
            f"{compile_s[0]:.2f}, {', '.join(f'{c:.2f}' for c in compile_s[1:]) or '-'} |",
            flush=True,
        )
    if gains:
        g = sorted(x for _, x in gains)
        print(f"\n{len(g)} operators; gain median {100 * g[len(g) // 2]:.1f}%, largest {100 * g[-1]:.1f}%")


if __name__ == "__main__":
    main()
