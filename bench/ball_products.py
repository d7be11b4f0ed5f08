"""The compiled ball's products by a constant power of two, with and without Dekker's test.

    .venv/bin/python bench/ball_products.py [OP ...]     # default: ScaledTanh Linear HardSwish Gelu

numerics.ball_compiled tests a product by a constant +-2^k (ScaledTanh's 0.5 x, alpha = 1)
with errorfree.product_exact_pow2 instead of Dekker's product_exact. For each
operator, the kernel is generated both ways (the second by substituting the call in
the same source), compiled, and run over 2^24 consecutive binary32 inputs from 2^-5
up, interleaved, best of 3; the balls must be identical.
"""

import importlib.util
import os
import sys
import tempfile
import time

import numpy as np

import opcert
from opcert.numerics import ball_compiled as bc
from opcert.spec.attrs import resolve


def main(names):
    for name in names:
        op = opcert.get_operator(name)
        attrs = {k: float(v) for k, v in resolve(op).items()}
        src, _ = bc.source(op.reference_form(None), attrs, precompute=False)  # the products alone
        if "product_exact_pow2(" not in src:
            print(f"{name}: no product by a constant power of two")
            continue
        kernels = {}
        d = tempfile.mkdtemp()
        for tag, s in (("pow2", src), ("dekker", src.replace("product_exact_pow2(", "product_exact("))):
            path = os.path.join(d, f"k_{name}_{tag}.py")
            with open(path, "w") as f:
                f.write(s)
            spec = importlib.util.spec_from_file_location(f"k_{name}_{tag}", path)
            mod = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(mod)
            kernels[tag] = mod.evaluate
        xs = (np.arange(1 << 24, dtype=np.uint32) + np.uint32(0x3D000000)).view(np.float32).astype(np.float64)
        n = xs.size
        none = bc._midpoints([], xs, attrs)  # no precomputed primitive
        out = {
            t: (
                np.empty(n),
                np.empty(n),
                np.empty(n, dtype=np.bool_),
                np.empty(n, dtype=np.int8),
                np.empty(n, dtype=np.bool_),
            )
            for t in kernels
        }  # m, r, ok, s, miss
        for t, k in kernels.items():
            k(xs[:16], *(a[:, :16] for a in none), *(a[:16] for a in out[t]))  # compile outside the timing
        best = {t: float("inf") for t in kernels}
        for _ in range(3):
            for t, k in kernels.items():
                t0 = time.perf_counter()
                k(xs, *none, *out[t])
                best[t] = min(best[t], time.perf_counter() - t0)
        same = all(np.array_equal(a, b, equal_nan=a.dtype.kind == "f") for a, b in zip(out["pow2"], out["dekker"]))
        print(
            f"{name}: power-of-two test {best['pow2'] * 1e9 / n:.2f} ns/input, Dekker {best['dekker'] * 1e9 / n:.2f} "
            f"ns/input, ratio {best['pow2'] / best['dekker']:.2f}; identical balls: {same}"
        )


if __name__ == "__main__":
    main(sys.argv[1:] or ["ScaledTanh", "Linear", "HardSwish", "Gelu"])
