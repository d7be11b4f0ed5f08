"""expr.quarter_turns over every binary32 value: how many values >= pi/4 its reduction hands to the C library
(a rest under 2^-48 of a quarter turn, where the table's truncation would matter), the smallest rest, and whether
its sin, cos and tan are monotone over every binary32 value of the pieces expr.primitives' records declare (the
contract clause the narrow formats' code relies on).

    .venv/bin/python bench/quarter_turns.py [--per-element]

and the time per element of expr.quarter_turns' sin and cos and of its reduction (alone with --per-element).
"""

import functools
import sys
import time

import numpy as np

from opcert.expr import quarter_turns as qt
from opcert.expr import quarter_turns_kernel as k
from opcert.expr.primitives import REGISTRY

STEP = 1 << 22


def rests() -> str:
    table = qt.pairs()
    other = 0
    smallest = np.inf
    for lo in range(0x3F000000, 0x7F800000, STEP):
        x = np.arange(lo, min(lo + STEP, 0x7F800000), dtype=np.uint32).view(np.float32).astype(np.float64)
        r = np.empty(x.size)
        q = np.empty(x.size, np.int8)
        other += k.reduce(x, table, r, q, qt.E_MIN, qt.E_MAX, qt.QUARTER, 0)
        reduced = (q != k.DIRECT) & (q != k.OTHER)
        if reduced.any():
            # for sin (which 0) the rest is halved in quadrants 1 and 3 (combine's cos r = 1 - 2 sin(r / 2)^2)
            rest = np.abs(r[reduced]) * np.where(q[reduced] & 1, 2.0, 1.0)
            smallest = min(smallest, float(np.min(rest)) / (np.pi / 2))
    return (
        f"binary32 values >= pi/4 handed to the C library: {other}; smallest rest {smallest:.6e} quarter turns "
        f"(2^{np.log2(smallest):.2f})"
    )


def _ordinal(v: float) -> int:
    i = int(np.float32(v).view(np.int32))
    return i if i >= 0 else -(i & 0x7FFFFFFF)


def monotone(name: str) -> str:
    f = qt.FUNCTIONS[name]
    out = []
    for a, b, d in REGISTRY[name].pieces:
        a, b = float(a), float(b)
        bad = n = 0
        last = None
        oa, ob = _ordinal(a), _ordinal(b)
        for s in range(oa, ob + 1, STEP):
            o = np.arange(s, min(s + STEP, ob + 1), dtype=np.int64)
            x = np.where(o >= 0, o, (-o) | 0x80000000).astype(np.uint32).view(np.float32).astype(np.float64)
            x = x[(x >= a) & (x <= b)]
            y = f(x)
            if last is not None:
                y = np.concatenate([[last], y])
            bad += int((d * np.diff(y) < 0).sum())
            n += x.size
            last = y[-1]
        out.append(f"{name} on [{a}, {b}]: {n:,} binary32 values, {bad} adjacent pairs out of order")
    return "; ".join(out)


def _best(f, x) -> float:
    f(x[:1000])
    best = np.inf
    for _ in range(7):
        t = time.perf_counter()
        f(x)
        best = min(best, time.perf_counter() - t)
    return best / x.size * 1e9


@functools.cache
def _buffers(n: int) -> tuple:
    return np.empty(n), np.empty(n, np.int8)


def _reduction(x: np.ndarray) -> None:
    """the reduction alone, into buffers made once (a fresh array's first touch is not the kernel's cost)"""
    k.reduce(x, qt.pairs(), *_buffers(x.size), qt.E_MIN, qt.E_MAX, qt.QUARTER, 0)


def per_element() -> str:
    """ns per element, best of 7: sin, cos and the reduction alone (k.reduce) over 2^22 random binary32 values
    (all exponents) and over 2^22 consecutive ones from 2^23 (as a sweep's chunk gives them: the quadrant and
    the rest's sign then follow a pattern, and a branch on them is predicted)."""
    random = np.random.default_rng(1).integers(0, 0x7F800000, 1 << 22, dtype=np.uint32).view(np.float32)
    consecutive = np.arange(0x4B000000, 0x4B000000 + (1 << 22), dtype=np.uint32).view(np.float32)
    out = []
    for label, x in (("random", random), ("consecutive", consecutive)):
        x = x.astype(np.float64)
        times = [f"{name} {_best(f, x):.1f} ns" for name, f in qt.FUNCTIONS.items()]
        reduce = _best(_reduction, x)
        out.append(f"{label}: " + ", ".join(times) + f", the reduction {reduce:.1f} ns")
    return "per element over 2^22 binary32 values: " + "; ".join(out)


def main() -> None:
    t0 = time.perf_counter()
    print(per_element())
    if "--per-element" in sys.argv[1:]:
        return
    print(rests())
    print(monotone("sin"))
    print(monotone("cos"))
    print(monotone("tan"))
    print(f"{time.perf_counter() - t0:.1f} s")


if __name__ == "__main__":
    main()
