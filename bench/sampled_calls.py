"""The layout check's separate calls from Python: each under its own isolation (Target.run, as before) against
a batch under one (Target.run_calls), over the same inputs, alternately, in one process.

    .venv/bin/python bench/sampled_calls.py [--target numpy:tanh] [--dtype float32] [--rounds 7] [--worker]

The calls are the `calls` family's: CALLS_PER_LENGTH calls of each length 1..L (L = layout.longest: 65 in
binary32, 33 in binary64), one batch per length. Prints the median seconds of each way over the rounds, and
their ratio. --worker: both ways in a supervised worker (as a command runs a Python target), not in this
process (where the isolation also reads /proc and swaps the SIGINT handler around each call)."""

import argparse
import statistics
import time

import numpy as np

from opcert.formats import get_format
from opcert.spec import get_operator
from opcert.spec.attrs import resolve
from opcert.targets import load_target
from opcert.verify.paths.layout import CALLS_PER_LENGTH, longest


def batches(dtype: str):
    fmt = get_format(dtype)
    rng = np.random.default_rng(12345)
    vals = rng.standard_normal(4096).astype(fmt.dtype)
    out = []
    for n in range(1, longest(fmt) + 1):
        idx = (rng.integers(vals.size, size=CALLS_PER_LENGTH)[:, None] + np.arange(n)) % vals.size
        out.append([vals[row] for row in idx])
    return out


def one_round(target: str, dtype: str, op_name: str = "Tanh") -> tuple[float, float]:
    op = get_operator(op_name)
    attrs = resolve(op)
    tgt = load_target(target)
    bs = batches(dtype)
    t0 = time.perf_counter()
    for xs in bs:
        for x in xs:
            tgt.run(op, x, attrs, label="a call", keep_layout=False)
    t1 = time.perf_counter()
    for xs in bs:
        tgt.run_calls(op, xs, attrs, ("a call" for _ in xs), "calls")
    t2 = time.perf_counter()
    return t1 - t0, t2 - t1


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--target", default="numpy:tanh")
    ap.add_argument("--dtype", default="float32")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--worker", action="store_true")
    a = ap.parse_args()
    if a.worker:
        from opcert.workers import run_isolated

        run = lambda: run_isolated(one_round, a.target, a.dtype)
    else:
        run = lambda: one_round(a.target, a.dtype)
    run()  # first: imports, loads
    each, batched = zip(*(run() for _ in range(a.rounds)))
    calls = CALLS_PER_LENGTH * longest(get_format(a.dtype))
    where = "a worker" if a.worker else "this process"
    print(f"{calls} calls of {a.target} in {a.dtype}, {where}, median of {a.rounds} rounds:")
    print(f"  each call isolated (run)       {statistics.median(each):.4f} s")
    print(f"  a batch per length (run_calls) {statistics.median(batched):.4f} s")
    print(f"  ratio {statistics.median(each) / statistics.median(batched):.2f}")


if __name__ == "__main__":
    main()
