"""The layout check's long calls: their indices computed per element ((i + i // nv) % nv) and from slices of
one range (opcert.verify.paths.layout.passes_shifted), for a float32 sweep's 3,997,638 sampled inputs.

    .venv/bin/python bench/long_call_indices.py [--nv 3997638]"""

import argparse
import time

import numpy as np

from opcert.verify.paths.layout import passes_shifted


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nv", type=int, default=3997638)
    nv = ap.parse_args().nv
    for size in ((1 << 16) + 1, (1 << 20) + 77, 3 * nv + 77):
        t = time.perf_counter()
        i = np.arange(size)
        want = (i + i // nv) % nv
        divided = time.perf_counter() - t
        t = time.perf_counter()
        got = passes_shifted(nv, size)
        sliced = time.perf_counter() - t
        assert np.array_equal(got, want)
        print(f"a call of {size:,} elements: divisions {divided:.3f} s, slices {sliced:.3f} s")


if __name__ == "__main__":
    main()
