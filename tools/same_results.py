"""Fingerprints of what opcert computes, to compare two checkouts bit for bit after a refactor.

    PYTHONPATH=CHECKOUT .venv/bin/python tools/same_results.py [--measure] > OUT.json
    diff <(jq -S . before.json) <(jq -S . after.json)

Per operator, standard and format: a hash of the reference and of opcert's implementation over fixed
inputs (every float16 and bfloat16 value; 2^16 float32 and 2^12 float64 stratified samples, seed 0);
tensor operators on fixed rows. With --measure, measure() of each runtime target (float16 exhaustive,
float32 10,000 samples, every property) with its timings removed. The built-in gate's figures are
compared with `opcert gate --json` (tools/same_results.py --gate FILE strips that file's timings).
"""

import argparse
import hashlib
import json
import sys

import numpy as np

TIMING = (
    "elapsed",
    "wall",
    "seconds",
    "_s",
    "time",
    "date",
    "provenance",
    "host",
    "started",
    "finished",
    "cores",
    "rlimit_spent",
    "units",
)


def strip(d):
    if isinstance(d, dict):
        return {k: strip(v) for k, v in d.items() if not any(t in k for t in TIMING)}
    if isinstance(d, list):
        return [strip(v) for v in d]
    return d


def digest(a) -> str:
    a = np.ascontiguousarray(a)
    return hashlib.sha256(a.dtype.str.encode() + a.tobytes()).hexdigest()[:16]


def element_wise(out):
    from opcert import run
    from opcert.formats import get_format
    from opcert.spec import operators
    from opcert.spec.attrs import resolve
    from opcert.spec.reference import reference_detailed
    from opcert.verify.accuracy.inputs import exhaustive, sample

    for op in operators():
        for std in op.standards:
            for dt in ("float16", "bfloat16", "float32", "float64"):
                fmt = get_format(dt)
                attrs = resolve(op, {}, standard=std.key)
                try:
                    x = (
                        exhaustive(fmt)
                        if fmt.bits == 16
                        else sample(op, fmt, attrs, 2**16 if fmt.bits == 32 else 2**12, seed=0)
                    )
                    ref = reference_detailed(op, x, attrs, standard=std.key)
                    key = f"{op.name}/{std.key}/{dt}"
                    out[key + "/x"] = digest(x)
                    out[key + "/reference"] = digest(ref.rounded)
                    out[key + "/exact"] = digest(np.stack([ref.exact_hi, ref.exact_lo]))
                    try:
                        out[key + "/impl"] = digest(run(op.name, x, standard=std.key))
                    except Exception as e:  # an unsupported combination: its message is compared
                        out[key + "/impl"] = f"{type(e).__name__}: {e}"
                except Exception as e:
                    out[f"{op.name}/{std.key}/{dt}"] = f"{type(e).__name__}: {e}"
                print(op.name, std.key, dt, file=sys.stderr)


def tensor(out):
    from opcert.impl.tensor_run import run
    from opcert.spec import tensor_operators
    from opcert.spec.row_reference import reference

    rng = np.random.default_rng(0)
    for op in tensor_operators():
        for dt in ("float16", "float32", "float64"):
            x = (rng.standard_normal((7, 33)) * 30).astype(dt)
            x[1, 3] = np.inf
            x[2, 5] = np.nan
            x[3, :] = 65000 if dt == "float16" else 1e30
            for std in op.standards:
                key = f"{op.name}/{std.key}/{dt}"
                errors = []
                for kw in ({"axis": -1}, {"axis": 1}, {"axes": [1]}, {}):  # what each standard takes
                    try:
                        out[key + "/reference"] = digest(reference(op.name, x, standard=std.key, **kw))
                        out[key + "/impl"] = digest(run(op.name, x, standard=std.key, **kw))
                        break
                    except Exception as e:
                        errors.append(f"{type(e).__name__}: {e}")
                else:
                    out[key] = errors


def measured(out):
    from opcert import Options, measure
    from opcert.spec import operators

    for target in ("opcert", "onnxruntime", "torch"):
        for op in operators():
            for dt, inputs in (("float16", "exhaustive"), ("float32", "sample")):
                opts = Options(seed=0, properties="all", samples=None if inputs == "exhaustive" else 10_000)
                r = measure(op.name, target, dt, inputs, opts)
                out[f"measure/{target}/{op.name}/{dt}"] = strip(r.to_dict())
                print(target, op.name, dt, file=sys.stderr)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--measure", action="store_true")
    ap.add_argument("--gate", help="a gate --json file: print it without its timings")
    a = ap.parse_args()
    if a.gate:
        json.dump(strip(json.load(open(a.gate))), sys.stdout, indent=1, sort_keys=True, default=str)
        return
    out = {}
    element_wise(out)
    tensor(out)
    if a.measure:
        measured(out)
    json.dump(out, sys.stdout, indent=1, sort_keys=True, default=str)


if __name__ == "__main__":
    main()
