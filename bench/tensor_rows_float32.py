"""opcert's own Softmax (LogSoftmax) on sampled float32 rows of lengths 1 to 4,096 against the correctly
rounded reference, element by element (issue 26: 10^5 rows).

    .venv/bin/python bench/tensor_rows_float32.py [--op Softmax] [--rows 100000] [--seed 0]

Lengths log-uniform on 1..4096, entries normal at a scale drawn from 1, 4, 16, 64 per row (huge dynamic
range beside moderate rows). Rows of one length are run as one 2-D tensor (axis 1) through `opcert.run`
and `opcert.reference`; the result is the count of elements whose bits differ (0: correctly rounded
everywhere), the worst ULP error, and the time.
"""

import argparse
import sys
import time

import numpy as np

import opcert
from opcert.formats import get_format
from opcert.spec import get_tensor_operator
from opcert.spec.row_reference import reference_detailed
from opcert.verify.ulp import ulp_error


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--op", default="Softmax")
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    op, _ = get_tensor_operator(args.op)
    fmt = get_format("float32")
    rng = np.random.default_rng(args.seed)
    lengths = np.minimum(4096, np.floor(np.exp(rng.uniform(0, np.log(4097), args.rows)))).astype(int)
    scales = rng.choice([1.0, 4.0, 16.0, 64.0], args.rows)
    t0 = time.perf_counter()
    elements = differ = 0
    worst = (0.0, None)
    for n in np.unique(lengths):
        sel = lengths == n
        x = (rng.standard_normal((int(sel.sum()), int(n))) * scales[sel][:, None]).astype(np.float32)
        got = opcert.run(op.name, x, axis=1)
        ref = reference_detailed(op.name, x, axis=1)
        want = ref.rounded
        bad = got.view(np.uint32) != want.view(np.uint32)
        elements += x.size
        differ += int(bad.sum())
        err = ulp_error(got.astype(np.float64), ref.exact_hi, ref.exact_lo, fmt)
        if np.nanmax(err) > worst[0]:
            i = np.unravel_index(int(np.nanargmax(err)), err.shape)
            worst = (float(err[i]), f"row of {n}, position {i[1]}")
    s = time.perf_counter() - t0
    print(
        f"{op.name} float32, opcert: {args.rows:,} rows of lengths 1 to 4,096 ({elements:,} elements, seed "
        f"{args.seed}): {differ:,} elements not the correctly rounded value; worst {worst[0]:.4g} ULP"
        f"{' at ' + worst[1] if worst[1] else ''}; {s:.0f} s"
    )
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
