"""What checking every declared property costs a float32 sweep, as a ratio in one run.

    .venv/bin/python bench/properties_overhead.py [--op Tanh] [--target numpy:tanh] [--chunks 20 60 100 127]

Runs the same sweep chunks (2^25 inputs each: 2^24 magnitudes, both signs) with
no property and with every declared property, alternately, twice, in one
process on one core, and prints the ratio of the total times. The target runs
once per input either way: the properties are checked on the outputs the
accuracy measurement already has. A third configuration checks the properties
alone (no reference, no ULP statistics: what `opcert prove --target` runs).
"""

import argparse
import time

from opcert.spec import get_operator
from opcert.spec.attrs import resolve
from opcert.targets import load_target
from opcert.verify.accuracy.sweep import F32, SweepConfig, run_chunk
from opcert.verify.properties.checks import compile_all


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--op", default="Tanh")
    ap.add_argument("--target", default="numpy:tanh")
    ap.add_argument("--chunks", type=int, nargs="*", default=[20, 60, 100, 127])
    a = ap.parse_args()
    op = get_operator(a.op)
    fp = load_target(a.target).info.fingerprint
    props = tuple(c.name for c in compile_all(op, F32, resolve(op), op.primary) if c.skip is None)
    cfgs = {
        name: SweepConfig(a.op, a.target, (), None, target_fingerprint=fp, properties=p, accuracy=acc)
        for name, p, acc in (("none", (), True), ("all", props, True), ("alone", props, False))
    }
    for cfg in cfgs.values():
        run_chunk(cfg, a.chunks[0])  # warm: compile, load, caches
    total = {name: 0.0 for name in cfgs}
    for _ in range(2):
        for c in a.chunks:
            for name, cfg in cfgs.items():
                t0 = time.perf_counter()
                run_chunk(cfg, c)
                total[name] += time.perf_counter() - t0
    n = 2 * len(a.chunks) * 2 * cfgs["none"].chunk
    print(f"{a.op} on {a.target}, {n:,} inputs each way; properties: {', '.join(props)}")
    print(
        f"without properties: {total['none']:.2f} s; with: {total['all']:.2f} s; "
        f"overhead {100 * (total['all'] / total['none'] - 1):.1f}%"
    )
    print(
        f"the properties alone (no accuracy): {total['alone']:.2f} s, "
        f"{total['alone'] / total['none']:.3f} of the sweep without properties"
    )


if __name__ == "__main__":
    main()
