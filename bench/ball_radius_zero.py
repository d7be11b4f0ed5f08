"""The compiled ball's default kernel against its radius-0 kernel (numerics.ball_compiled.source(zero=True)), per
kind of block, in ns per input (best of 5, this thread's CPU time), and whether compiled(tune=True) keeps it.

    .venv/bin/python bench/ball_radius_zero.py [--ops Round LeakyRelu] [--at 0x30000000 0x3f000000]

Each block: 65,536 consecutive binary32 inputs of one sign from --at (bits), as the float32 sweep gives them.
The radius-0 kernel computes a ball with every radius taken as +0 and checks it was; where one was not (Round
below 2^-29, where x + 1/2 is not exact) the default code computes the input again, in a second loop: there it
costs more than the default kernel, and compiled() runs the default one on such blocks (_ZeroState). Both give
the same balls (checked here too).
"""

import argparse
import math
import time

import numpy as np

import opcert
from opcert.numerics import ball_compiled as bc
from opcert.spec.attrs import resolve


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ops", nargs="+", default=["Round"])
    ap.add_argument(
        "--at",
        nargs="+",
        default=["0x00400000", "0x30000000", "0x3a000000", "0x3e000000", "0x3f000000", "0x4b000000", "0x5a000000"],
    )
    a = ap.parse_args()
    np.seterr(all="ignore")
    print("| operator | block at | default kernel | radius-0 kernel | inputs it sent to the default code |")
    print("|---|---|---|---|---|")
    for name in a.ops:
        op = opcert.get_operator(name)
        form = op.reference_form(None)
        attrs = {k: float(v) for k, v in resolve(op, None).items()}
        src, pre = bc.source(form, attrs)
        kd, kz = bc._load(src), bc._load(bc.source(form, attrs, zero=True)[0])
        for at in a.at:
            for sign in (0, 0x80000000):
                bits = np.arange(int(at, 16), int(at, 16) + 65536, dtype=np.uint64).astype(np.uint32) | np.uint32(sign)
                x = bits.view(np.float32).astype(np.float64)
                pa, pv = (r.copy() for r in bc._midpoints(pre, x, attrs, form))
                n = x.size
                times, outs, again = [], [], 0
                for k in (kd, kz):
                    o = (np.empty(n), np.empty(n), np.empty(n, np.bool_), np.empty(n, np.int8), np.empty(n, np.bool_))
                    got = int(k(x, pa, pv, *o))
                    if k is kz:
                        again = got >> 32
                    best = math.inf
                    for _ in range(5):
                        t0 = time.thread_time()
                        k(x, pa, pv, *o)
                        best = min(best, time.thread_time() - t0)
                    times.append(1e9 * best / n)
                    outs.append(o)
                for g, w in zip(*outs):
                    assert np.array_equal(g.view(np.uint8), w.view(np.uint8)), (name, at, sign)
                print(
                    f"| {name} | 0x{int(at, 16) | sign:08x} | {times[0]:.2f} | {times[1]:.2f} | {again:,} |", flush=True
                )
        ev = bc.compiled(form, attrs, tune=True)
        cells = dict(zip(ev.__code__.co_freevars, (c.cell_contents for c in ev.__closure__)))
        print(f"{name}: compiled(tune=True) keeps the radius-0 kernel: {cells.get('zero') is not None}")


if __name__ == "__main__":
    main()
