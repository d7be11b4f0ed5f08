"""opcert's implementation compiled (expr.compiled_eval) against numpy_eval, as a float32 sweep calls it.

    .venv/bin/python bench/impl_compiled.py [--ops HardSigmoid Mish] [--sizes 256 1024 4096 16384 65536]

Per operator at its default attributes: the `opcert` target's call (impl.run through the target, as a
sweep's worker makes it: a fresh input buffer, the output checked) on blocks of 65,536 binary32 inputs of
one sign, three blocks from each of nine chunks of the sweep (2^-60 ... 2^100 in magnitude, both signs),
with the compiled loops and with numpy_eval alone (compiled_eval._ENABLED), interleaved, best of three;
ns per input, the ratio, and whether every output bit is the same (NaN payloads aside). Then, for a few
operators, the same at smaller call sizes, to place impl.run.MIN_SIZE.
"""

import argparse
import time

import numpy as np

import opcert
import opcert.impl.run as impl_run
import opcert.workers
from opcert.expr import compiled_eval
from opcert.formats import FLOAT_FORMATS, bits_differ
from opcert.spec.attrs import resolve
from opcert.targets import load_target
from opcert.verify.accuracy.sweep import keep_freed_memory

CHUNKS = (20, 40, 60, 63, 64, 65, 80, 100, 120)
F32 = FLOAT_FORMATS["float32"]


def blocks(size: int) -> list[np.ndarray]:
    out = []
    for c in CHUNKS:
        for k in (0, 100, 200):
            m = np.arange(size, dtype=np.uint32) + np.uint32(c * (1 << 24) + k * 65536)
            out += [m.view(np.float32), (m | np.uint32(0x80000000)).view(np.float32)]
    return out


def timed(tgt, op, attrs, bs, compiled: bool) -> tuple[float, list]:
    compiled_eval._ENABLED = compiled
    impl_run.MIN_SIZE = 1  # every call size compiled where enabled: the size table places MIN_SIZE
    t0 = time.perf_counter()
    ys = [tgt.run(op, b, attrs, owned=True) for b in bs]
    return time.perf_counter() - t0, ys


def compare(tgt, op, bs) -> tuple[float, float, bool]:
    attrs = resolve(op)
    timed(tgt, op, attrs, bs, True)  # compile or load, and warm
    timed(tgt, op, attrs, bs, False)
    best = {True: np.inf, False: np.inf}
    same = True
    for _ in range(3):
        ys = {}
        for on in (True, False):
            t, ys[on] = timed(tgt, op, attrs, bs, on)
            best[on] = min(best[on], t)
        for a, b in zip(ys[True], ys[False]):
            same &= not bits_differ(a, b, F32).any()
    n = sum(b.size for b in bs)
    return best[False] / n * 1e9, best[True] / n * 1e9, same


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ops", nargs="*", help="operators (default: the catalog)")
    ap.add_argument("--sizes", type=int, nargs="*", default=[256, 1024, 4096, 16384])
    ap.add_argument("--size-ops", nargs="*", default=["HardSigmoid", "Celu", "Mish", "Swish"])
    a = ap.parse_args()
    keep_freed_memory()  # as a sweep's worker: freed blocks are reused, not faulted in again
    opcert.workers._IN_WORKER = True  # a worker's call (the main process also looks for target children)
    tgt = load_target("opcert")
    print("| operator | numpy_eval, ns/input | compiled, ns/input | ratio | same bits |\n|---|---|---|---|---|")
    for op in [opcert.get_operator(n) for n in a.ops] if a.ops else opcert.operators():
        old, new, same = compare(tgt, op, blocks(65536))
        print(f"| {op.name} | {old:.2f} | {new:.2f} | {old / new:.2f} | {same} |", flush=True)
    print("\n| operator | call size | numpy_eval, ns/input | compiled, ns/input | ratio |\n|---|---|---|---|---|")
    for name in a.size_ops:
        for size in a.sizes:
            old, new, same = compare(tgt, opcert.get_operator(name), blocks(size))
            assert same
            print(f"| {name} | {size} | {old:.2f} | {new:.2f} | {old / new:.2f} |", flush=True)


if __name__ == "__main__":
    main()
