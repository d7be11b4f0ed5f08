"""opcert's implementation in NumPy: the evaluator against the plain interpretation, in one run.

    .venv/bin/python bench/impl_eval.py [--n 4194304]

For every operator at its default attributes, the implementation expression
on n binary64 inputs (random binary32 bit patterns, widened), with
opcert.expr.numpy_eval (a repeated subexpression computed once, a select on
an attribute evaluating only its branch) and with the plain interpretation it
replaced (every node on its own, both branches of every select: kept below as
the baseline), interleaved, best of three each; and a check that every output
bit is the same. This is the `opcert` target's cost in a float32 sweep
(binary32 inputs: input_bits = 24).
"""

import argparse
import time

import numpy as np

import opcert
from opcert.expr.numpy_eval import _BINARY, _UNARY, eval_numpy, eval_plain, fma
from opcert.spec.attrs import resolve


def plain(e, x, attrs):
    """eval_plain, with binary32 inputs' exact products (as eval_numpy has them at input_bits = 24)."""
    if e.op == "fma" and all(n.op in ("var", "attr", "const") for n in e.args[:2]):
        return plain(e.args[0], x, attrs) * plain(e.args[1], x, attrs) + plain(e.args[2], x, attrs)
    if e.op in ("var", "attr", "const"):
        return eval_plain(e, x, attrs)
    args = [plain(a, x, attrs) for a in e.args]
    if e.op == "select":
        return np.where(*args)
    if e.op == "fma":  # operands not both leaves: the fused multiply-add, as eval_numpy's
        return fma(*(np.asarray(v, dtype=np.float64) for v in args))
    return _BINARY[e.op](*args) if e.op in _BINARY else _UNARY[e.op](args[0])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1 << 22)
    a = ap.parse_args()
    rng = np.random.default_rng(0)
    with np.errstate(invalid="ignore"):
        x = rng.integers(0, 2**32, a.n, dtype=np.uint64).astype(np.uint32).view(np.float32).astype(np.float64)
    print("| operator | eval_numpy, ns/input | plain, ns/input | ratio | same bits |\n|---|---|---|---|---|")
    tot_new = tot_old = 0.0
    for op in opcert.operators():
        attrs = {k: float(v) for k, v in resolve(op).items()}
        e = op.implementation_for(op.primary)
        best = {"new": 1e9, "old": 1e9}
        with np.errstate(all="ignore"):
            for _ in range(3):
                for label in ("new", "old"):
                    t0 = time.perf_counter()
                    y = eval_numpy(e, x, attrs, input_bits=24) if label == "new" else plain(e, x, attrs)
                    best[label] = min(best[label], time.perf_counter() - t0)
                    if label == "new":
                        ynew = np.broadcast_to(y, x.shape)
                    else:
                        yold = np.broadcast_to(y, x.shape)
        same = np.array_equal(ynew.view(np.uint64), yold.view(np.uint64))
        tot_new, tot_old = tot_new + best["new"], tot_old + best["old"]
        print(
            f"| {op.name} | {best['new'] / a.n * 1e9:.1f} | {best['old'] / a.n * 1e9:.1f} | "
            f"{best['new'] / best['old']:.2f} | {same} |",
            flush=True,
        )
    print(f"\nall operators: {tot_new / tot_old:.2f} of the time")


if __name__ == "__main__":
    main()
