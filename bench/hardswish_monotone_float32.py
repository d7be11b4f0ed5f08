"""Every adjacent pair of float32 inputs on [-1.5, -0]: is opcert's HardSwish
non-decreasing there (its declared monotonic_above_minimum)? ~1.07e9 inputs,
about 50 s on one core. Measured 2026-11-22: 0 decreasing pairs. (In binary64
the same code decreases: `opcert prove HardSwish --dtype float64`.)"""

import time

import numpy as np

from opcert import run

t = time.time()
hi, lo = 0xBFC00000, 0x80000000  # the bits of -1.5 and of -0: descending bits = ascending values
bad, prev, first = 0, None, None
for s in range(hi, lo - 1, -(1 << 24)):
    bits = np.arange(s, max(lo - 1, s - (1 << 24)), -1, dtype=np.int64).astype(np.uint32)
    xs = bits.view(np.float32)
    ys = run("HardSwish", xs).astype(np.float64)
    if prev is not None and prev > ys[0]:
        bad += 1
    d = np.nonzero(ys[:-1] > ys[1:])[0]
    bad += len(d)
    if len(d) and first is None:
        first = (float(xs[d[0]]), float(xs[d[0] + 1]), float(ys[d[0]]), float(ys[d[0] + 1]))
    prev = ys[-1]
print(
    f"float32 inputs in [-1.5, -0]: {hi - lo + 1:,}; decreasing adjacent pairs: {bad}; first: {first}; "
    f"{time.time() - t:.0f} s"
)
