"""What a small float32 sweep chunk pays for its reference's ball: numerics.ball over arrays, or the kernel
numerics.ball_compiled generates, compiled on a cold cache (verify.accuracy.sweep.COMPILED_BALL_FROM).

    .venv/bin/python bench/ball_compile_threshold.py [--ops Tanh Gelu Mish] [--magnitudes 1048576]

For each operator, in a fresh kernel cache (a temporary OPCERT_KERNEL_CACHE and NUMBA_CACHE_DIR, set before
opcert is imported): numerics.ball over the given number of binary32 magnitudes (one sign, in blocks of
65,536), then the compiled kernel's compile and first call, then the compiled kernel over the same inputs.
The first operator's compile includes the ball's rules, which later kernels load from the cache.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ops", nargs="+", default=["Tanh", "Gelu", "Mish"])
    ap.add_argument("--magnitudes", type=int, default=1 << 20)
    args = ap.parse_args(argv)
    cache = tempfile.mkdtemp(prefix="opcert-ball-threshold-")
    os.environ["OPCERT_KERNEL_CACHE"] = cache
    os.environ["NUMBA_CACHE_DIR"] = cache
    import numpy as np

    import opcert
    from opcert.numerics import ball, ball_compiled
    from opcert.spec.attrs import resolve

    block = 1 << 16
    start = 0x3F000000
    blocks = [
        np.arange(b, b + block, dtype=np.uint32).view(np.float32).astype(np.float64)
        for b in range(start, start + args.magnitudes, block)
    ]
    print(f"{args.magnitudes:,} magnitudes from {start:#x}, one sign, blocks of {block:,}; cold cache {cache}")
    for name in args.ops:
        op = opcert.get_operator(name)
        form = op.reference_form(None)
        a64 = {k: float(v) for k, v in resolve(op).items()}
        t = time.perf_counter()
        for x in blocks:
            ball.evaluate(form, x, a64)
        arrays = time.perf_counter() - t
        t = time.perf_counter()
        kernel = ball_compiled.compiled(form, a64, tune=False)
        kernel(blocks[0])
        cold = time.perf_counter() - t
        t = time.perf_counter()
        for x in blocks:
            kernel(x)
        run = time.perf_counter() - t
        print(f"{name:8s} numerics.ball {arrays:6.2f} s   compile + first call {cold:6.2f} s   compiled {run:6.3f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
