"""Which operator's float32 sweep is slowest: every operator, a spread of chunks, projected.

    .venv/bin/python bench/catalog_sweep.py [--chunks 0 32 64 96 120 127] [--target opcert] [--numpy-ball]

For each operator of the catalog at its default attributes, runs the given
sweep chunks (2^24 magnitudes each, both signs: chunk 0 holds the subnormals,
127 the largest values, infinities and NaNs) one after the other in this
process on one core, with every declared property checked, and prints the
mean time per chunk, the inputs the fast path left to the exact reference, and
the projected wall time of the whole sweep on 2 cores (mean x 128 / 2),
slowest first. A projection from 6 of 128 chunks, not a measurement of the
whole sweep: run `opcert accuracy OP --dtype float32 --target opcert
--exhaustive` for that.

--numpy-ball: the baseline in the same process. Each operator's chunks run
twice, interleaved chunk by chunk: with the compiled ball
(numerics.ball_compiled, what the sweep uses) and with the NumPy ball
(numerics.ball.evaluate, what it used before); the table gains both times and
their ratio.
"""

import argparse
import time

from sweep_setup import sweep_config  # bench/, beside this script

import opcert
from opcert.verify.accuracy.sweep import run_chunk


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--chunks", type=int, nargs="*", default=[0, 32, 64, 96, 120, 127])
    ap.add_argument("--target", default="opcert")
    ap.add_argument("--numpy-ball", action="store_true", help="also time the NumPy ball, interleaved (baseline)")
    a = ap.parse_args()
    import opcert.numerics.ball_compiled as bc

    compiled = bc.compiled

    def use(numpy_ball):
        bc.compiled = (lambda e, attrs, **kw: None) if numpy_ball else compiled

    rows = []
    for op in opcert.operators():
        cfg = sweep_config(op, a.target)
        modes = (False, True) if a.numpy_ball else (False,)
        spent = {m: 0.0 for m in modes}
        undecided = 0
        for m in modes:  # warm: compile, load
            use(m)
            run_chunk(cfg, 64)
        for c in a.chunks:
            for m in modes:
                use(m)
                t0 = time.perf_counter()
                und = run_chunk(cfg, c)["undecided"]
                spent[m] += time.perf_counter() - t0
                undecided += und if not m else 0
        use(False)
        per = spent[False] / len(a.chunks)
        base = spent[True] / len(a.chunks) if a.numpy_ball else None
        rows.append((per * 128 / 2, per, undecided, op.name, base))
        print(f"{op.name}: {per:.2f} s per chunk" + (f" (NumPy ball {base:.2f} s)" if base else ""), flush=True)
    extra = " NumPy ball, s per chunk | ratio |" if a.numpy_ball else ""
    print(
        f"\n| operator | s per chunk (1 core) | left to the exact path (in {len(a.chunks)} chunks) | "
        f"projected sweep, 2 cores |{extra}\n|---|---|---|---|" + ("---|---|" if a.numpy_ball else "")
    )
    for proj, per, und, name, base in sorted(rows, reverse=True):
        tail = f" {base:.2f} | {per / base:.2f} |" if base else ""
        print(f"| {name} | {per:.2f} | {und:,} | {proj:.0f} s |{tail}")
    if a.numpy_ball:
        tot, tb = sum(r[1] for r in rows), sum(r[4] for r in rows)
        print(f"\nall operators: {tot:.1f} s per round of chunks, NumPy ball {tb:.1f} s: {tot / tb:.2f} of the time")


if __name__ == "__main__":
    main()
