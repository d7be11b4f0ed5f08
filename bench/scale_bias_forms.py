"""opcert's own DirectML ScaleBias forms against the reference: sampled, at scale-bias values whose sums are inexact.

    .venv/bin/python bench/scale_bias_forms.py [--dtypes float32,float64] [--samples N] [--ops Acos,Log,...]

Per form, attribute set and dtype: how many of the inputs are not the reference's value, and the most values of the
format apart (1: the neighbour; inf: NaN against a number, verify.ulp.ordinal_distance). Inputs: N random bit
patterns (every exponent), N uniform in [-8, 8], and 12 steps of the format either way of each x where x * scale +
bias is 0, +-1/2, +-1 or +-2 (the arcs' end points, log's and atanh's poles). The figures of bench/README.md ("DirectML's ScaleBias forms of opcert's own code")."""

import argparse
import time

import ml_dtypes
import numpy as np

import opcert
from opcert.formats import get_format
from opcert.spec.scale_bias import has_scale_bias
from opcert.verify.ulp import ordinal_distance

SETS = [(1.0, 0.0), (3.0, 0.0), (3.0, 1.0), (0.5, 1.0), (-1.7, 2.5), (1e-3, 0.999), (0.1, -0.25), (3.0, 3 * 2.0**-60)]
DTYPES = {"bfloat16": np.dtype(ml_dtypes.bfloat16), "float32": np.dtype(np.float32), "float64": np.dtype(np.float64)}
BITS = {2: np.uint16, 4: np.uint32, 8: np.uint64}


def inputs(dtype, scale, bias, n, rng):
    u = BITS[dtype.itemsize]
    random_bits = rng.integers(0, np.iinfo(u).max, n, dtype=u, endpoint=True).view(dtype)
    uniform = rng.uniform(-8, 8, n).astype(dtype)
    points = np.array([(c - bias) / scale for c in (0.0, 0.5, -0.5, 1.0, -1.0, 2.0, -2.0)], np.float64)
    centre = points.astype(dtype).view(u).astype(np.int64)
    steps = (centre[:, None] + np.arange(-12, 13)[None, :]).reshape(-1)
    near = steps[(steps >= 0) & (steps <= np.iinfo(u).max)].astype(u).view(dtype)
    xs = np.concatenate([random_bits, uniform, near])
    with np.errstate(invalid="ignore"):
        return xs[np.isfinite(xs.astype(np.float64))]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dtypes", default="bfloat16,float32,float64")
    ap.add_argument("--samples", type=int, default=5000)
    ap.add_argument("--ops", default="")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    wanted = set(args.ops.split(",")) - {""}
    forms = [
        (op.name, s.key)
        for op in opcert.operators()
        for s in op.standards
        if has_scale_bias(s) and (not wanted or op.name in wanted)
    ]
    print("| operator | dtype | scale | bias | inputs | not the reference's | most values apart | at x |")
    print("|---|---|---|---|---|---|---|---|")
    t0 = time.perf_counter()
    for name, std in forms:
        for dname in args.dtypes.split(","):
            dtype = DTYPES[dname]
            for scale, bias in SETS:
                sc, bi = float(np.float32(scale)), float(np.float32(bias))
                xs = inputs(dtype, sc, bi, args.samples, np.random.default_rng(args.seed))
                got = opcert.run(name, xs, standard=std, scale=sc, bias=bi)
                want = opcert.reference(name, xs, standard=std, scale=sc, bias=bi)
                d = ordinal_distance(got, want, get_format(dname))
                k = int(np.argmax(d))
                worst = f"{float(xs[k])!r}" if d[k] else ""
                print(
                    f"| {name} | {dname} | {sc:.9g} | {bi:.9g} | {xs.size} | {int((d > 0).sum())} | {d[k]} | {worst} |"
                )
    print(f"\n{time.perf_counter() - t0:.1f} s")


if __name__ == "__main__":
    main()
