"""The compiled ball of a float32 sweep, per block of 65,536 inputs, as the sweep calls it (its NumPy precomputation
and the midpoints' fold included): best and median of 5 rounds over nine blocks spread over the magnitudes.

    .venv/bin/python bench/ball_per_block.py Gelu Mish Swish     (one operator per process gives steadier figures)

To compare two trees, run it in each (or with PYTHONPATH= a copy of the other), alternately."""

import statistics
import sys
import time

import numpy as np

import opcert
from opcert.numerics import ball_compiled
from opcert.spec.attrs import resolve

STARTS = (500, 2000, 15000, 17000, 21000, 33000, 34500, 40000, 50000)  # blocks of magnitudes (x 65,536)


def main():
    for name in sys.argv[1:] or ["Gelu"]:
        op = opcert.get_operator(name)
        form = op.reference_form(op.primary)
        attrs = {k: float(v) for k, v in resolve(op).items()}
        ev = ball_compiled.compiled(form, attrs, True, tune=True)
        xs = [(np.arange(1 << 16, dtype=np.uint32) + (1 << 16) * k).view(np.float32).astype(np.float64) for k in STARTS]
        xs = [x[np.isfinite(x)] for x in xs]
        for x in xs:
            ev(x)
        ts = []
        for _ in range(5):
            t = time.perf_counter()
            for x in xs:
                ev(x)
            ts.append((time.perf_counter() - t) / len(xs) * 1e6)
        print(f"{name}: the ball per block {min(ts):.1f} us (best), {statistics.median(ts):.1f} us (median)")


if __name__ == "__main__":
    main()
