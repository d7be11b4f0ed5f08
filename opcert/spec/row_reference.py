"""The correctly rounded reference of a tensor operator, element by element of each row.

The fast path is numerics.ball's binary64 ball arithmetic over whole rows (long double for binary64 results),
whose reductions bound their own error (a row's sum: the pairwise sum's gamma_depth bound, expr.numpy_eval);
an element whose ball rounds to one value has that value. Every other element is evaluated exactly
(numerics.exact, Arb at increasing precision) with its row, each reduction once per row and precision.
Rows with NaN or infinite entries follow spec.tensor.limit_row, the same rule for every tensor operator, or the
rule the standard's key names (spec.tensor.INF_RULES: `onnx+ieee`, the formula in IEEE arithmetic).
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from opcert.errors import UsageError, choices
from opcert.formats import format_of, round_fraction
from opcert.numerics import ball
from opcert.numerics.exact import Row, Undefined, evaluate
from opcert.spec import get_tensor_operator
from opcert.spec.tensor import (
    DEFAULT_INF_RULE,
    TensorOperator,
    over_rows,
    round_just_below,
    row_outputs,
    tensor_rows,
)

FLOAT_DTYPES = ("float16", "bfloat16", "float32", "float64")


@dataclass
class RowReference:
    rounded: np.ndarray  # x's shape and dtype (a reduction's: the reduced axes of size 1)
    slow_path: int  # elements the exact path decided
    exact_hi: np.ndarray | None = None  # the exact values as hi + lo (binary64 pair), x's shape: ULP errors
    exact_lo: np.ndarray | None = None


def check_float(op: TensorOperator, x: np.ndarray):
    fmt = format_of(x)
    if fmt.name not in FLOAT_DTYPES:
        raise UsageError(f"{op.name} takes floating-point tensors; allowed: {choices(FLOAT_DTYPES)} (got {fmt.name})")
    return fmt


# The last results over large blocks of rows: a check of opcert's own binary64 LayerNormalization asks for the
# reference of each case twice, once as the reference and once as the implementation (reference_in_binary64);
# what it saves: bench/README.md, 'Figures behind choices in the code'.
_RECENT: OrderedDict = OrderedDict()
_RECENT_SIZE = 8
_LARGE = 4096  # elements: smaller blocks cost less than their key


def reference_rows(
    op: TensorOperator,
    rows: np.ndarray,
    fmt,
    fast: bool = True,
    exact: bool = False,
    rule: str = DEFAULT_INF_RULE,
    attrs: dict | None = None,
):
    if rows.size < _LARGE or not fast:
        return _reference_rows(op, rows, fmt, fast, exact, rule, attrs)
    key = (
        op.name,
        str(op.reference_form),  # a standard with its own formula (TensorOperator.for_standard)
        fmt.name,
        exact,
        rule,
        tuple(sorted((attrs or {}).items())),
        rows.shape,
        hashlib.blake2b(np.ascontiguousarray(rows, dtype=np.float64).tobytes(), digest_size=16).digest(),
    )
    if key not in _RECENT:
        _RECENT[key] = _reference_rows(op, rows, fmt, fast, exact, rule, attrs)
        while len(_RECENT) > _RECENT_SIZE:
            _RECENT.popitem(last=False)
    _RECENT.move_to_end(key)
    got = _RECENT[key]
    return tuple(g.copy() if isinstance(g, np.ndarray) else g for g in got)


def _reference_rows(
    op: TensorOperator,
    rows: np.ndarray,
    fmt,
    fast: bool = True,
    exact: bool = False,
    rule: str = DEFAULT_INF_RULE,
    attrs: dict | None = None,
):
    """The correctly rounded values (as binary64) of op over rows (2-D, binary64 values of fmt), and how
    many elements took the exact path (fast=False: every element; the tests' cross-check). exact=True:
    (rounded, hi, lo, slow): the exact values as binary64 pairs too (the ball's midpoint where it decided,
    within its radius: far below an ULP of fmt). rule: for rows with infinite entries (spec.tensor.INF_RULES).
    attrs: the attributes' values (name -> binary64 value of the binary32 attribute: TensorStandard.values)."""
    form = op.reference_form
    attrs = {k: float(v) for k, v in (attrs or {}).items()}
    exact_attrs = {k: Fraction(v) for k, v in attrs.items()}
    precision = None if not fast else ball.BINARY64 if fmt.p <= 24 else ball.WIDE
    slow = [0]

    def block(b: np.ndarray):
        out, hi, lo = np.full(b.shape, np.nan), np.full(b.shape, np.nan), np.zeros(b.shape)
        pending = np.ones(b.shape, dtype=bool)
        # binary64 balls, then long double ones for the rows that keep an element undecided: the exact path
        # evaluates a row's reductions in rationals and Arb, costly for a long row (bench/README.md, 'Figures
        # behind choices in the code')
        passes = [] if precision is None or not b.shape[1] else [precision]
        if precision is ball.BINARY64:
            passes.append(ball.WIDE)
        for k, prec in enumerate(passes):
            at = np.arange(b.shape[0]) if k == 0 else np.nonzero(pending.any(axis=1))[0]
            if not at.size:
                break
            m, r, ok, sg = ball.evaluate(form, b[at], attrs, prec)
            val, decided = ball.decide(m, r, ok, fmt, sg)
            decided &= pending[at]
            sub_out, sub_hi, sub_lo = out[at], hi[at], lo[at]
            sub_out[decided] = val[decided]
            with np.errstate(all="ignore"):
                mh = m.astype(np.float64)
                sub_hi[decided] = np.where(m == 0, val, mh)[decided]
                sub_lo[decided] = np.where(np.isfinite(mh) & (m != 0), (m - mh).astype(np.float64), 0.0)[decided]
            out[at], hi[at], lo[at] = sub_out, sub_hi, sub_lo
            pending[at] &= ~decided
        for i in np.nonzero(pending.any(axis=1))[0]:
            row = Row([Fraction(float(v)) for v in b[i]])
            top = int(np.argmax(b[i]))
            others = np.delete(b[i], top) - b[i, top]
            # LogSoftmax of a row whose other elements all lie 800 or more below its maximum: ln(sum) - 0 is
            # below n 2^-1154, beyond any enclosure and any distance from x_j - max to a rounding boundary
            shifted_only = op.below_shift and (others.size == 0 or others.max() <= -800) and b.shape[1] < 2**64
            for j in np.nonzero(pending[i])[0]:
                if shifted_only and b.shape[1] > 1:
                    out[i, j] = hi[i, j] = round_just_below(row.values[j] - row.values[top], fmt)
                    lo[i, j] = 0.0
                    slow[0] += 1
                    continue
                try:
                    v = evaluate(form, row.values[j], exact_attrs, fmt, row=row.at(int(j)))
                except Undefined as u:
                    # 0 / 0: a row of equal values with epsilon 0 (LayerNormalization); IEEE's NaN, as the formula;
                    # log of a sum that is 0 exactly (ReduceLogSum): the pole's -inf
                    out[i, j] = hi[i, j] = np.nan if u.limit is None else u.limit
                    slow[0] += 1
                    continue
                except RuntimeError:
                    if not op.below_shift:
                        raise
                    # x_j - max minus an amount no enclosure resolves (TensorOperator.below_shift)
                    q = row.values[j] - max(row.values)
                    out[i, j] = hi[i, j] = round_just_below(q, fmt)
                    lo[i, j] = 0.0
                    slow[0] += 1
                    continue
                q = v.mid if v.is_rational else v.lo
                out[i, j] = 0.0 if (v.is_rational and q == 0) else round_fraction(q, fmt, negative_zero=q < 0)
                mid = v.mid
                hi[i, j] = float(mid)
                lo[i, j] = float(mid - Fraction(hi[i, j])) if hi[i, j] != 0 or mid == 0 else 0.0
                slow[0] += 1
        return out, hi, lo

    rounded, hi, lo = over_rows(op, rows, block, channels=3, rule=rule, attrs=attrs)
    finite_hi = np.isfinite(hi)
    hi = np.where(finite_hi, hi, rounded)  # filled specials: the value itself (NaN, -inf, 0)
    lo = np.where(finite_hi, lo, 0.0)
    return (rounded, hi, lo, slow[0]) if exact else (rounded, slow[0])


def reference_detailed(op, x, *, standard: str | None = None, axis=None, axes=None, attrs=None) -> RowReference:
    op, named = get_tensor_operator(op)
    x = np.asarray(x)
    fmt = check_float(op, x)
    rows, back, std = tensor_rows(op, x, standard or named, axis, axes, attrs=attrs)
    op = op.for_standard(std)
    with np.errstate(invalid="ignore"):
        values, hi, lo, slow = reference_rows(
            op, rows.astype(np.float64), fmt, exact=True, rule=std.inf_rule, attrs=std.values()
        )
    # a reduction's one value per row, in the shape with the reduced axes kept (an empty row's value is exact: no
    # low part)
    values, hi, lo = row_outputs(op, values), row_outputs(op, hi), row_outputs(op, lo, empty=0.0)
    return RowReference(back(values.astype(fmt.dtype)), slow, back(hi), back(lo))


def reference(op, x, *, standard: str | None = None, axis=None, axes=None, attrs=None) -> np.ndarray:
    """The correctly rounded result of the tensor operator `op` at every element of x, in x's dtype: the rows
    are those `standard`'s axis rule makes of x with `axis` (ONNX) or `axes` (DirectML's `1` forms); a
    standard's key with "+ieee" (onnx+ieee) takes the IEEE-formula rule for rows with infinite entries.
    attrs: the attributes (LayerNormalization's epsilon), each rounded to binary32; the standard's defaults
    for the others."""
    return reference_detailed(op, x, standard=standard, axis=axis, axes=axes, attrs=attrs).rounded
