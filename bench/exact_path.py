"""The exact reference path per input, against its previous rounding routine, in one run.

    .venv/bin/python bench/exact_path.py [--op Tanh] [--n 200000]

Draws n binary64 inputs over the binades where the operator is neither x nor
saturated (2^-30 to 2^6, both signs), keeps those the long double fast path
leaves undecided (about 1.1% for Tanh: the long double contracts leave 7 bits
of margin), and times spec.reference.exact_value on each, interleaved three
times with the baseline: the same path with formats.round_fraction as it was
before 2026-11-24 (Fraction arithmetic, kept below), patched into every opcert
module that imported it. Prints microseconds per input, best of three each,
and checks that both give the same exact values.
"""

import argparse
import math
import sys
import time
from fractions import Fraction

import numpy as np

import opcert
from opcert.formats import FLOAT_FORMATS
from opcert.numerics import ball
from opcert.spec.reference import _fast, exact_value


def old_round_fraction(q: Fraction, fmt, negative_zero: bool = False, mode: str = "nearest") -> float:
    """formats.round_fraction before 2026-11-24 (the baseline)."""
    if q == 0:
        return -0.0 if negative_zero else 0.0
    sign = -1 if q < 0 else 1
    a = abs(q)
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if Fraction(2) ** e > a:
        e -= 1
    quantum = Fraction(2) ** (max(e, fmt.emin) - fmt.p + 1)
    m = a / quantum
    n = m.numerator // m.denominator
    rem = m - n
    if mode == "nearest":
        if rem > Fraction(1, 2) or (rem == Fraction(1, 2) and n % 2 == 1):
            n += 1
    elif rem != 0 and ((mode == "up") == (sign > 0)):
        n += 1
    r = n * quantum
    if r > fmt.max_finite:
        if mode == "nearest" or (mode == "up") == (sign > 0):
            return sign * math.inf
        return sign * float(fmt.max_finite)
    return sign * float(r) if r != 0 else (-0.0 if sign < 0 else 0.0)


def use(fn):
    for name, mod in list(sys.modules.items()):
        if name.startswith("opcert") and hasattr(mod, "round_fraction"):
            mod.round_fraction = fn


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--op", default="Tanh")
    ap.add_argument("--n", type=int, default=200_000)
    a = ap.parse_args()
    import opcert.formats as F

    new = F.round_fraction
    f64 = FLOAT_FORMATS["float64"]
    op = opcert.get_operator(a.op)
    std = op.standard(None)
    rng = np.random.default_rng(0)
    x = np.exp2(rng.uniform(-30, 6, a.n)) * rng.choice([-1, 1], a.n)
    _, decided, _, _, _, _ = _fast(op.reference_form(None), std.formula, x, {}, ball.WIDE, f64)
    xs = [Fraction(v) for v in x[~decided].tolist()]
    print(f"{a.op}: {len(xs):,} of {a.n:,} inputs left to the exact path ({len(xs) / a.n:.2%})")
    best, values = {}, {}
    for _ in range(3):
        for label, fn in (("new", new), ("old", old_round_fraction)):
            use(fn)
            t0 = time.perf_counter()
            values[label] = [exact_value(op, std, q, {}, f64) for q in xs]
            best[label] = min(best.get(label, math.inf), (time.perf_counter() - t0) / len(xs))
    use(new)
    same = all((u.lo, u.hi) == (v.lo, v.hi) for u, v in zip(values["new"], values["old"]))
    print(
        f"exact path: {best['new'] * 1e6:.1f} us per input, {best['old'] * 1e6:.1f} us with the old rounding "
        f"({best['new'] / best['old']:.2f} of the time); same exact values: {same}"
    )


if __name__ == "__main__":
    main()
