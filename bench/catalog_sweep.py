"""Which operator's float32 sweep is slowest: every operator, a spread of chunks, projected.

    .venv/bin/python bench/catalog_sweep.py [--chunks 0 32 64 96 120 127] [--target opcert]

For each operator of the catalog at its default attributes, runs the given
sweep chunks (2^24 magnitudes each, both signs: chunk 0 holds the subnormals,
127 the largest values, infinities and NaNs) one after the other in this
process on one core, with every declared property checked, and prints the
mean time per chunk, the inputs the fast path left to the exact reference, and
the projected wall time of the whole sweep on 2 cores (mean x 128 / 2),
slowest first. A projection from 6 of 128 chunks, not a measurement of the
whole sweep: run `opcert accuracy OP --dtype float32 --target opcert
--exhaustive` for that.
"""
import argparse
import time

import opcert
from opcert.spec.attrs import resolve
from opcert.targets import load_target
from opcert.verify.properties import compile_all
from opcert.verify.sweep import F32, SweepConfig, run_chunk


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--chunks", type=int, nargs="*", default=[0, 32, 64, 96, 120, 127])
    ap.add_argument("--target", default="opcert")
    a = ap.parse_args()
    fp = load_target(a.target).info.fingerprint
    rows = []
    for op in opcert.operators():
        attrs = resolve(op)
        props = tuple(c.name for c in compile_all(op, F32, attrs, op.primary) if c.skip is None)
        cfg = SweepConfig(op.name, a.target, tuple((k, f"{v.numerator}/{v.denominator}") for k, v in attrs.items()),
                          None, target_fingerprint=fp, properties=props)
        run_chunk(cfg, 64)    # warm: compile, load
        t0, undecided = time.perf_counter(), 0
        for c in a.chunks:
            undecided += run_chunk(cfg, c)["undecided"]
        per = (time.perf_counter() - t0) / len(a.chunks)
        rows.append((per * 128 / 2, per, undecided, op.name))
        print(f"{op.name}: {per:.2f} s per chunk", flush=True)
    print(f"\n| operator | s per chunk (1 core) | left to the exact path (in {len(a.chunks)} chunks) | "
          "projected sweep, 2 cores |\n|---|---|---|---|")
    for proj, per, und, name in sorted(rows, reverse=True):
        print(f"| {name} | {per:.2f} | {und:,} | {proj:.0f} s |")


if __name__ == "__main__":
    main()
