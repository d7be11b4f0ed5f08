"""Integer tensors (Shrink): exact comparisons, x -+ bias rounded to the nearest
integer with ties to even, saturated to the type's range (see the operator's
`integer_semantics`)."""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from ..expr import Expr
from ..formats import IntFormat


def _shift(x: np.ndarray, delta: Fraction) -> np.ndarray:
    """round_half_even(x + delta) for int64-safe x, as Python-int-exact int64/object math."""
    whole = math.floor(delta)
    frac = delta - whole
    base = x.astype(object) + whole  # exact, any size
    if frac == 0:
        return base
    if frac < Fraction(1, 2):
        return base
    if frac > Fraction(1, 2):
        return base + 1
    # A tie: base + 1/2 goes to whichever of base, base + 1 is even.
    return np.where(np.vectorize(lambda b: b % 2 == 0, otypes=[bool])(base), base, base + 1)


def _eval(e: Expr, x: np.ndarray, attrs: dict[str, Fraction]):
    op = e.op
    if op == "var":
        return x.astype(object)
    if op == "attr":
        return attrs[e.name]
    if op == "const":
        return e.value
    if op == "isnan":
        return np.zeros(x.shape, dtype=bool)
    if op == "select":
        c, a, b = (_eval(n, x, attrs) for n in e.args)
        return np.where(c, a, b)
    if op in ("add", "sub") and e.args[0].op == "var" and e.args[1].op == "attr":
        d = attrs[e.args[1].name]
        return _shift(x, d if op == "add" else -d)
    a = [_eval(n, x, attrs) for n in e.args]
    if op == "neg":
        return -a[0]
    if op in ("lt", "le", "gt", "ge", "eq"):
        # Python ints against Fractions compare exactly.
        f = {"lt": lambda p, q: p < q, "le": lambda p, q: p <= q, "gt": lambda p, q: p > q,
             "ge": lambda p, q: p >= q, "eq": lambda p, q: p == q}[op]
        return np.vectorize(f, otypes=[bool])(a[0], a[1])
    raise ValueError(f"operation {op} has no integer semantics")


def run_integer(op, x: np.ndarray, attrs: dict[str, Fraction], fmt: IntFormat) -> np.ndarray:
    y = _eval(op.implementation, x, attrs)
    y = np.broadcast_to(np.asarray(y, dtype=object), x.shape)
    clipped = np.vectorize(lambda v: min(max(int(v), fmt.min), fmt.max), otypes=[object])(y) \
        if y.size else y
    return np.asarray(clipped, dtype=object).astype(fmt.dtype).reshape(x.shape)
