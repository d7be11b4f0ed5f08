"""The floor of a float32 sweep: the kernel under test alone over every float32 input, on the same cores, and the
whole `opcert accuracy ... --exhaustive` command, in one run; prints both and their ratio.

    .venv/bin/python bench/floor.py Sin                     # opcert's own implementation of Sin
    .venv/bin/python bench/floor.py Tanh --target numpy:tanh
    .venv/bin/python bench/floor.py Floor --kernel-only

The kernel alone: every float32 bit pattern in blocks of 2^20, on as many processes as the sweep has workers
(2 here), the target called on each block as the sweep calls it (opcert's implementation through opcert.run; a
NumPy function of the float32 block itself). The command runs with a fresh checkpoint directory (a resumed sweep
is no timing), its kernels' caches as they are (say which: cold or warm)."""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from multiprocessing import Pool

import numpy as np

BLOCK = 1 << 20


def _kernel(op: str, target: str):
    if target == "opcert":
        import opcert

        return lambda x: opcert.run(op, x)
    module, name = target.split(":")
    f = getattr(np, name) if module == "numpy" else getattr(__import__(module), name)
    return f


def _part(args):
    op, target, k, n = args
    f = _kernel(op, target)
    for b in range(k, 4096, n):
        x = np.arange(b * BLOCK, (b + 1) * BLOCK, dtype=np.uint64).astype(np.uint32).view(np.float32)
        with np.errstate(all="ignore"):
            f(x)
    return 0


def kernel_alone(op: str, target: str, workers: int) -> float:
    t = time.perf_counter()
    with Pool(workers) as p:
        p.map(_part, [(op, target, k, workers) for k in range(workers)])
    return time.perf_counter() - t


def whole_command(op: str, target: str, extra: list) -> tuple[float, dict]:
    with tempfile.TemporaryDirectory() as d:
        cmd = [sys.executable, "-m", "opcert", "accuracy", op, "--dtype", "float32", "--target", target]
        cmd += ["--exhaustive", "--checkpoint", d, "--json", os.path.join(d, "r.json"), *extra]
        t = time.perf_counter()
        subprocess.run(cmd, check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wall = time.perf_counter() - t
        with open(os.path.join(d, "r.json")) as fh:
            return wall, json.load(fh)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("op")
    ap.add_argument("--target", default="opcert")
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--kernel-only", action="store_true")
    a, extra = ap.parse_known_args()
    k = kernel_alone(a.op, a.target, a.workers)
    print(f"{a.op} {a.target}: the kernel alone over 2^32 inputs on {a.workers} processes: {k:.1f} s")
    if a.kernel_only:
        return
    wall, r = whole_command(a.op, a.target, extra)
    print(
        f"the whole command: {wall:.1f} s ({r.get('correctly_rounded')} correctly rounded, max {r.get('max_ulp')} ULP)"
    )
    print(f"ratio: {wall / k:.2f}")


if __name__ == "__main__":
    main()
