"""The correctly rounded reference: exact value, rounded to nearest, ties to even.

For each input:
- NaN gives NaN (opcert's specification propagates NaN, see each operator);
- +-inf gives the limit of f at +-inf, rounded;
- a finite input of a format of at most 24 bits first takes the fast path: the
  operator's `fast_reference` formula in binary64, whose relative error is at
  most `fast_reference_rel_error` (no underflow is possible there for binary32
  inputs and attributes, so a zero result is exact). Where the enclosing
  interval rounds to one value, that value is the correctly rounded result;
- every other input is evaluated exactly (`spec.exact`): rational arithmetic,
  else interval arithmetic at increasing precision.
A zero result takes the sign that IEEE arithmetic gives the standard's formula.
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ..errors import UsageError, choices
from ..expr.numpy_eval import eval_numpy
from ..formats import IntFormat, format_of, get_format, round_float64, round_fraction
from . import get_operator
from .attrs import resolve
from .exact import evaluate, eval_rational
from .model import Operator


@dataclass
class Reference:
    """Correctly rounded results and the exact values they round.

    `exact` holds the exact value as a binary64 pair hi + lo (lo = 0 where the
    fast path decided: then hi is within the fast path's relative error bound,
    2**-44 or better, which bounds the error of ULP figures computed from it by
    2**-19 ULP for binary32 and far less for 16-bit formats). NaN where the
    result is NaN, +-inf where the exact value is infinite (an infinite limit).
    """
    rounded: np.ndarray
    exact_hi: np.ndarray
    exact_lo: np.ndarray
    slow_path: int = 0
    # The exact values as Fractions (flat order; None where NaN, infinite or
    # decided by the fast path). Kept for binary64 results, whose hi + lo pair
    # cannot hold values in binary64's own subnormal range.
    exact_q: list | None = None


# opcert's implementation and reference take every float format for every
# operator, whatever a given standard allows (the descriptor validation checks that).
FLOAT_DTYPES = ("float16", "bfloat16", "float32", "float64")


def check_dtype(op: Operator, fmt) -> None:
    allowed = FLOAT_DTYPES + (
        tuple(d for d in op.dtypes if d.startswith(("int", "uint"))) if op.integer_semantics else ())
    if fmt.name not in allowed:
        raise UsageError(f"{op.name} does not take {fmt.name}; allowed: {choices(allowed)}")


def _zero_sign(op: Operator, std: str | None, xi: float, attrs64: dict[str, float]) -> float:
    v = eval_numpy(op.standard(std).formula, np.array([xi]), attrs64)[()]
    return -0.0 if (v == 0 and np.signbit(v)) else 0.0


def reference_detailed(op, x, attrs: dict[str, Fraction], standard: str | None = None,
                       exact_bits: int = 0) -> Reference:
    """Reference results for the array x (any shape) with resolved attributes.

    `exact_bits` > 0 forces the exact path everywhere and encloses each exact
    value to that many bits (used to re-verify worst cases)."""
    op = get_operator(op)
    x = np.asarray(x)
    fmt = format_of(x)
    check_dtype(op, fmt)
    if isinstance(fmt, IntFormat):
        return _reference_int(op, x, attrs, standard, fmt)
    std = op.standard(standard)
    flat = x.reshape(-1)
    with np.errstate(invalid="ignore"):  # ml_dtypes warns when widening NaN
        x64 = flat.astype(np.float64)
    n = x64.size
    out = np.full(n, np.nan)
    hi = np.full(n, np.nan)
    lo = np.zeros(n)
    attrs64 = {k: float(v) for k, v in attrs.items()}

    for sign in (1, -1):
        where = np.isinf(x64) & ((x64 > 0) if sign > 0 else (x64 < 0))
        if where.any():
            limit = op.limits(sign, attrs)
            if isinstance(limit, float):  # +-inf
                out[where], hi[where] = limit, limit
            else:
                out[where] = round_fraction(limit, fmt, negative_zero=False)
                hi[where] = float(limit)

    pending = np.isfinite(x64)
    if fmt.p <= 24 and exact_bits == 0 and std.key == op.primary:
        idx = np.nonzero(pending)[0]
        y = eval_numpy(op.fast_reference, x64[idx], attrs64, input_bits=fmt.p)
        rel = float(op.fast_reference_rel_error)
        err = np.abs(y) * rel
        with np.errstate(invalid="ignore", over="ignore"):
            r_lo = round_float64(np.nextafter(y - err, -np.inf), fmt)
            r_hi = round_float64(np.nextafter(y + err, np.inf), fmt)
        same = (r_lo == r_hi) & (np.signbit(r_lo) == np.signbit(r_hi)) & np.isfinite(y)
        zero = y == 0  # exact: the relative bound admits no other zero
        ok = same | zero
        out[idx[ok]] = np.where(zero[ok], y[ok], r_lo[ok])
        hi[idx[ok]] = y[ok]
        pending[idx[ok]] = False

    slow = np.nonzero(pending)[0]
    exact_q = [None] * n
    for i in slow:
        xi = float(x64[i])
        v = evaluate(std.formula, Fraction(xi), attrs, fmt, min_prec=exact_bits)
        if v.is_rational and v.lo == 0:
            out[i] = hi[i] = _zero_sign(op, standard, xi, attrs64)
            exact_q[i] = Fraction(0)
            continue
        m = v.mid
        exact_q[i] = m
        out[i] = round_fraction(m if v.is_rational else v.lo, fmt, negative_zero=m < 0)
        h = float(m)
        hi[i], lo[i] = h, float(m - Fraction(h))
    shape = x.shape
    return Reference(out.reshape(shape).astype(fmt.dtype), hi.reshape(shape), lo.reshape(shape),
                     slow_path=len(slow), exact_q=exact_q)


def _reference_int(op: Operator, x: np.ndarray, attrs, standard, fmt: IntFormat) -> Reference:
    formula = op.standard(standard).formula
    flat = x.reshape(-1)
    out = np.empty(flat.size, dtype=object)
    exact = np.empty(flat.size)
    for i, xi in enumerate(flat.tolist()):
        q = eval_rational(formula, Fraction(xi), attrs)
        exact[i] = float(q)
        out[i] = min(max(round_half_even(q), fmt.min), fmt.max)
    return Reference(out.astype(fmt.dtype).reshape(x.shape), exact.reshape(x.shape),
                     np.zeros(x.shape))


def round_half_even(q: Fraction) -> int:
    return round(q)  # Fraction.__round__ rounds ties to even


def reference(op, x, *, standard: str | None = None, **attrs) -> np.ndarray:
    """The correctly rounded result of `op` at every element of x, in x's dtype.

    Attributes take ONNX or DirectML names; missing ones take the standard's
    defaults. `standard` selects whose definition ("onnx", "directml", ...);
    by default the operator's primary standard."""
    op = get_operator(op)
    x = np.asarray(x)
    get_format(x.dtype)
    return reference_detailed(op, x, resolve(op, attrs, standard), standard).rounded
