"""The hard cases of an operator in a format, derived from its declaration.

- every comparison of the implementation and of the standard's formula (branch
  points, thresholds, dead zones, the tiny-argument guards);
- where the output saturates to its limit at +-inf, overflows to an infinity,
  or underflows to zero;
- the points the operator declares (the minimum of Gelu, Mish and Swish).

Each is found by probing the format at every binade, both signs, and bisecting
every change of a predicate down to adjacent values of the format; sampling
then takes each point with its neighbours (verify.accuracy.inputs).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from opcert.expr.numpy_eval import eval_numpy
from opcert.formats import FloatFormat, from_bits, to_format
from opcert.spec.attrs import standard_for

COMPARISONS = ("lt", "le", "gt", "ge", "eq")


def _ordinal_values(fmt: FloatFormat, ords: np.ndarray) -> np.ndarray:
    sign = np.uint64(1) << np.uint64(fmt.bits - 1)
    o = np.asarray(ords, dtype=np.int64)
    mag = np.abs(o).astype(np.uint64)
    bits = np.where(o < 0, mag | sign, mag)
    with np.errstate(invalid="ignore"):
        return from_bits(bits.astype(fmt.uint), fmt).astype(np.float64)


def _probes(fmt: FloatFormat) -> np.ndarray:
    """Ordinals of 0, +-every power of two of the format, its largest finite values."""
    mant = fmt.p - 1
    top = ((1 << (fmt.bits - 1 - mant)) - 1) << mant  # ordinal of +inf
    pos = sorted({1} | {e << mant for e in range(1, (1 << (fmt.bits - 1 - mant)) - 1)} | {top - 1})
    return np.array([-o for o in reversed(pos)] + [0] + pos, dtype=np.int64)


def _bisect(pred, fmt, lo: int, hi: int) -> list[int]:
    """Adjacent ordinals (a, a + 1) between lo and hi where pred changes."""
    plo = pred(np.array([lo]))[0]
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if pred(np.array([mid]))[0] == plo:
            lo = mid
        else:
            hi = mid
    return [lo, hi]


def _changes(pred, fmt) -> list[int]:
    probes = _probes(fmt)
    vals = pred(probes)
    out = []
    for i in np.nonzero(vals[1:] != vals[:-1])[0]:
        out += _bisect(pred, fmt, int(probes[i]), int(probes[i + 1]))
    return out


def special_points(op, attrs: dict[str, Fraction], fmt: FloatFormat, standard: str | None = None) -> list[Fraction]:
    std = op.standard(standard_for(op, attrs, standard))
    a64 = {k: float(v) for k, v in attrs.items()}
    impl = op.implementation_for(std.key)
    ords: list[int] = [0]

    def on(expr):
        def pred(o):
            with np.errstate(all="ignore"):
                v = np.broadcast_to(eval_numpy(expr, _ordinal_values(fmt, o), a64), np.shape(o))
            return np.asarray(v)

        return pred

    for e in (impl, std.formula):
        for n in e.nodes():
            if n.op in COMPARISONS and any(m.op == "var" for m in n.nodes()):
                ords += _changes(on(n), fmt)

    def out_of(o):
        with np.errstate(all="ignore"):
            y = np.broadcast_to(eval_numpy(impl, _ordinal_values(fmt, o), a64), np.shape(o))
            return to_format(np.asarray(y, dtype=np.float64), fmt).astype(np.float64)

    probes = _probes(fmt)
    ends = out_of(np.array([probes[0], probes[-1]]))  # the outputs at -max and +max: the saturation values

    for kind in ("saturated", "infinite", "zero"):

        def pred(o, kind=kind):
            y = out_of(o)
            if kind == "infinite":
                return np.isinf(y)
            if kind == "zero":
                return y == 0
            return (y == ends[0]) | (y == ends[1])

        ords += _changes(pred, fmt)
    points = [Fraction(float(v)) for v in _ordinal_values(fmt, np.array(sorted(set(ords)))) if np.isfinite(v)]
    if op.hard_points is not None:
        points += [Fraction(p) for p in op.hard_points(attrs)]
    return sorted(set(points))
