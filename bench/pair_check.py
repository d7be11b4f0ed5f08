"""The pair sweep's compiled check (verify.tensor.pairs_kernel.check_block) alone, and what a worker started
after it costs: the check's parts run in Python threads, not in numba's threading layer (whose GNU OpenMP pool
made every later worker process a spawn, opcert.workers).

    .venv/bin/python bench/pair_check.py [--values 4000] [--rounds 3]

Float16 Softmax through opcert's implementation, on a grid of --values float16 values (--values^2 pairs):
the sweep's seconds, the seconds inside check_block, and then an isolated float16 measurement of numpy:tanh
(the worker's start included) twice. Runs in this process; the figures are per round.
"""

import argparse
import sys
import time

import numpy as np

import opcert.verify.tensor.pairs_kernel as K
from opcert import measure
from opcert.formats import get_format
from opcert.impl.tensor_run import run
from opcert.spec import get_tensor_operator
from opcert.verify.tensor.pairs import PairSweep, _all_values


def isolated_measure() -> float:
    t = time.perf_counter()
    r = measure("Tanh", "numpy:tanh", "float16", "exhaustive")
    assert r.status == "ok", r.error
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--values", type=int, default=4000)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    op, _ = get_tensor_operator("Softmax")
    fmt = get_format("float16")
    values = _all_values(fmt)[np.linspace(0, 65535, args.values).astype(int)]
    isolated_measure()  # the first worker's imports and kernels aside
    spent = [0.0]
    check = K.check_block

    def timed(*a):
        t = time.perf_counter()
        check(*a)
        spent[0] += time.perf_counter() - t

    K.check_block = timed
    PairSweep(op, fmt, lambda X: run(op, X, axis=1), 0.5, values=values[:50]).run()  # compile or load
    for i in range(args.rounds):
        spent[0] = 0.0
        t = time.perf_counter()
        s = PairSweep(op, fmt, lambda X: run(op, X, axis=1), 0.5, values=values)
        s.run()
        total = time.perf_counter() - t
        after = [isolated_measure() for _ in range(2)]
        print(
            f"round {i}: {s.pairs:,} pairs in {total:.2f} s, check_block {spent[0]:.2f} s; "
            f"an isolated float16 measure after it: {after[0]:.2f} s, {after[1]:.2f} s; "
            f"numba's OpenMP pool started: {'numba.np.ufunc.omppool' in sys.modules}"
        )


if __name__ == "__main__":
    main()
