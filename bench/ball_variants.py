"""The compiled ball's code variants, timed against each other in one process.

    .venv/bin/python bench/ball_variants.py [--ops Mish Sigmoid Swish Selu Gelu] [--attr approximate=tanh]

numerics/ball_compiled.py generates the reference's binary64 ball for one
expression in several ways that compute the same bits: the ball's function
inlined into the loop or called from it, a repeated subexpression computed
once per branch or each time. The float32 sweep keeps the fastest on
a sample of blocks (`compiled(..., tune=True)`). This bench times every
variant on one-signed blocks of 65,536 inputs in eight binades (both signs of
1e-30, 1, 100 and 1e30; the sweep's blocks have one sign), the NumPy
precomputation excluded (the same for all), interleaved, best of 6, and checks
that every variant gives the default's bits. ns per input.
"""

import argparse
import time

import numpy as np

import opcert.numerics.ball_compiled as bc
from opcert.spec import get_operator
from opcert.spec.attrs import resolve

RANGES = [
    (1e-30, 2e-30),
    (-2e-30, -1e-30),
    (1.0, 2.0),
    (-2.0, -1.0),
    (100.0, 200.0),
    (-200.0, -100.0),
    (2e30, 3e30),
    (-3e30, -2e30),
]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ops", nargs="*", default=["Mish", "Sigmoid", "Swish", "Selu", "Gelu"])
    ap.add_argument(
        "--attr",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="an attribute value (as opcert accuracy --attr) instead of the default",
    )
    a = ap.parse_args()
    given = dict(kv.split("=", 1) for kv in a.attr)
    names = ["default (inlined, shared)", "called", "not shared", "called, not shared"]
    print("| operator | " + " | ".join(names) + " | same bits |\n|---|" + "---|" * (len(names) + 1))
    for name in a.ops:
        op = get_operator(name)
        attrs = {k: float(v) for k, v in resolve(op, given or None).items()}
        form = op.reference_form(None)
        default, pre = bc.source(form, attrs)
        srcs = [
            default,
            bc.source(form, attrs, inline=False)[0],
            bc.source(form, attrs, cse=False)[0],
            bc.source(form, attrs, inline=False, cse=False)[0],
        ]
        kernels = [bc._load(s) for s in srcs]
        n = 1 << 16
        blocks = []
        with np.errstate(all="ignore"):
            for lo, hi in RANGES:
                x = np.linspace(lo, hi, n)
                blocks.append((x, *(q.copy() for q in bc._midpoints(pre, x, attrs, form))))
        outs = [
            (np.empty(n), np.empty(n), np.empty(n, np.bool_), np.empty(n, np.int8), np.empty(n, np.bool_))
            for _ in kernels
        ]
        same = True
        for x, pa, pv in blocks:
            got = []
            for k, o in zip(kernels, outs):
                n_miss = k(x, pa, pv, *o)
                got.append([q.copy() for q in o[:4]] + [np.flatnonzero(o[4]), np.array([n_miss])])
            same &= all(
                np.array_equal(g.view(np.uint8), w.view(np.uint8)) for other in got[1:] for g, w in zip(other, got[0])
            )
        best = [float("inf")] * len(kernels)
        for _ in range(6):
            for i, (k, o) in enumerate(zip(kernels, outs)):
                t0 = time.perf_counter()
                for x, pa, pv in blocks:
                    k(x, pa, pv, *o)
                best[i] = min(best[i], (time.perf_counter() - t0) / len(blocks) / n * 1e9)
        print(f"| {name} | " + " | ".join(f"{b:.1f}" for b in best) + f" | {same} |", flush=True)


if __name__ == "__main__":
    main()
