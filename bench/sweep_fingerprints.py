"""What a float32 sweep's chunks record, over chosen magnitude ranges of every operator, as JSON: to compare
two checkouts bit for bit after a change to the sweep's kernels or the reference's ball.

    PYTHONPATH=CHECKOUT .venv/bin/python bench/sweep_fingerprints.py [--ops Log Round] > OUT.json
    diff <(jq -S . before.json) <(jq -S . after.json)

Each range (magnitudes, both signs) runs as one chunk of `verify.accuracy.sweep.run_chunk` (blocks of
65,536, every declared property checked) against opcert's own target: the statistics (counts, histogram,
worst cases, first mismatches), the property state, the outputs the results name, the blocks' output
fingerprints and how many inputs took the exact path. What depends on the code's version (the key, the
checksum, the time) is left out. The ranges cover the zeros and subnormals, 0.5 and 1 (the edges of asin's
and acosh's domains, Round's ties), the overflow of exp, sinh and cosh, 2^23 (Round's last fractions), the
largest finite values with the infinities and the NaNs.
"""

import argparse
import dataclasses
import json
import sys

from sweep_setup import sweep_config  # bench/, beside this script

import opcert
import opcert.workers
from opcert.verify.accuracy import sweep

SPAN = 1 << 18
RANGES = (0x00000000, 0x3EFE0000, 0x3F7E0000, 0x42B20000, 0x42FE0000, 0x4AFE0000, 0x7F7E0000)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ops", nargs="*", help="operators (default: the catalog)")
    ap.add_argument("--target", default="opcert")
    a = ap.parse_args()
    opcert.workers._IN_WORKER = True
    out = {}
    for op in [opcert.get_operator(n) for n in a.ops] if a.ops else opcert.operators():
        every = sweep_config(op, a.target)
        for lo in RANGES:
            cfg = dataclasses.replace(every, start=lo, stop=min(lo + SPAN, sweep.HALF), chunk=SPAN)
            data = sweep.run_chunk(cfg, 0)
            for k in ("key", "sha256", "elapsed_s"):
                data.pop(k, None)
            out[f"{op.name}/0x{lo:08x}"] = data
        print(op.name, file=sys.stderr, flush=True)
    json.dump(out, sys.stdout, sort_keys=True, indent=0)


if __name__ == "__main__":
    main()
