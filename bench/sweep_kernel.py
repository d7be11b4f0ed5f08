"""The sweep's compiled classification kernel, per input, against a trivial compiled loop.

    .venv/bin/python bench/sweep_kernel.py [--against COMMIT] [--cr]

One block of 65,536 binary32 inputs in [0.5, 1): the binary64 tanh as the
ball's midpoint (radius 2^-52 relative), NumPy's binary32 tanh as the target's
outputs (18% correctly rounded there: the branches are unpredictable) or, with
--cr, the correctly rounded outputs. Times sweep_kernel.block per input, and
in the same process a compiled loop that reads the same arrays (the
baseline), and with --against the kernel of another commit (git show), all
interleaved, 5 rounds of 50 calls each; checks that they agree.
"""

import argparse
import importlib.util
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numba
import numpy as np

from opcert.verify.accuracy import sweep_kernel
from opcert.verify.accuracy.stats import HIST_LABELS


@numba.njit
def baseline(v, rad):
    s = 0.0
    for i in range(v.size):
        s += v[i] * rad[i]
    return s


def kernel_of(commit):
    for path in ("opcert/verify/accuracy/sweep_kernel.py", "opcert/verify/sweep_kernel.py"):  # moved in issue 51
        got = subprocess.run(
            ["git", "show", f"{commit}:{path}"], capture_output=True, text=True, cwd=Path(__file__).resolve().parents[1]
        )
        if got.returncode == 0:
            break
    src = got.stdout.replace("from .ulp import", "from opcert.verify.ulp import")
    f = Path(tempfile.mkdtemp()) / f"kernel_{commit[:8]}.py"
    f.write_text(src)
    spec = importlib.util.spec_from_file_location(f.stem, f)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--against", help="also time the kernel of this commit")
    ap.add_argument("--cr", action="store_true", help="correctly rounded outputs (predictable branches)")
    a = ap.parse_args()
    n = 1 << 16
    bits = np.arange(n, dtype=np.uint32) + np.uint32(0x3F000000)
    x = bits.view(np.float32)
    v = np.tanh(x.astype(np.float64))
    rad, sg = np.abs(v) * 2.0**-52, np.sign(v).astype(np.int8)
    y = v.astype(np.float32) if a.cr else np.tanh(x)
    top = sweep_kernel.TOP

    def call(mod):
        """mod's block on fresh accumulators: (the call, its accumulators); records (Block, AtInf, Tally)
        since issue 51, 21 positional arguments before."""
        state = [
            np.zeros(6, np.int64),
            np.zeros(len(HIST_LABELS), np.int64),
            np.full(top, -1.0),
            np.full(top, -1, np.int64),
            np.full(top, -1.0),
            np.full(top, -1, np.int64),
            np.full(4, 1 << 32, np.int64),
            np.full(1, -1, np.int64),
        ]
        ball = (bits, y, y.view(np.uint32), v, rad, sg)
        at_inf = (np.uint32(0xBF800000), np.uint32(0x3F800000), -1.0, 1.0)
        if hasattr(mod, "Tally"):
            args = (mod.Block(*ball), mod.AtInf(*at_inf), mod.Tally(*state), np.empty(n, np.int64), False)
        else:
            args = (*ball, *at_inf, *state, np.empty(n, np.int64), False)
        return (lambda: mod.block(*args)), state

    kernels = {"this checkout": sweep_kernel}
    if a.against:
        kernels[a.against] = kernel_of(a.against)
    results = []
    for k in kernels.values():
        run, state = call(k)
        run()
        results.append(state)
    for r in results[1:]:
        assert all(np.array_equal(p, q) for p, q in zip(results[0], r)), "the kernels disagree"
    baseline(v, rad)
    tot = dict.fromkeys(list(kernels) + ["baseline loop"], 0.0)
    for _ in range(5):
        for name, k in kernels.items():
            runs = [call(k)[0] for _ in range(50)]
            t0 = time.perf_counter()
            for run in runs:
                run()
            tot[name] += time.perf_counter() - t0
        t0 = time.perf_counter()
        for _ in range(50):
            baseline(v, rad)
        tot["baseline loop"] += time.perf_counter() - t0
    base = tot["baseline loop"]
    print(
        f"{'outputs':>14}: {'correctly rounded' if a.cr else 'NumPy binary32 tanh'} "
        f"({np.mean(y == v.astype(np.float32)):.0%} correctly rounded)"
    )
    for name, t in tot.items():
        print(f"{name:>14}: {1e9 * t / 250 / n:6.2f} ns per input ({t / base:5.1f}x the baseline loop)")


if __name__ == "__main__":
    sys.exit(main())
