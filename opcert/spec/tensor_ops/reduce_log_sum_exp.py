"""ReduceLogSumExp: log(sum(exp(x))) over the reduced axes, one output per row (ONNX 18, DirectML's reduce)."""

import numpy as np

from opcert.expr import exp, log, rowmax, rowsum
from opcert.expr.numpy_eval import depth
from opcert.spec.tensor import TensorOperator
from opcert.spec.tensor_declarations import (
    LAYOUT,
    MAX_LOG_BOUNDS,
    PERMUTATION_INVARIANT,
    RowProperty,
    per_row,
    reduction_standards,
    x,
)

m = rowmax(x)
# the row maximum subtracted: every exponential in (0, 1], the sum in [1, n], where log(sum(exp(x))) overflows
# at x = 89 in binary32 and 710 in binary64
LSE = per_row(log(rowsum(exp(x - m))) + m)
# the standard's own formula, in IEEE arithmetic at a row with a NaN or an infinite entry: +inf with a +inf entry,
# -inf at a row of -inf only, NaN with a NaN; -inf entries beside finite ones drop out (exp(-inf) = 0), the
# finite ones' value taken exactly (neg_inf_drops)
PLAIN = per_row(log(rowsum(exp(x))))


def _error_bound(rows: np.ndarray) -> np.ndarray:
    """The binary64 implementation's error in binary64 ULPs of its value: (depth + 8) ULPs of log(s) and of the
    maximum m, relative to their sum y = log(s) + m, which cancels where m is near -log(s); 4x for the margin, the
    bound being estimated from binary64's own values."""
    if rows.shape[1] == 0:
        return np.zeros(rows.shape)
    with np.errstate(all="ignore"):
        m = rows.max(axis=1, keepdims=True)
        ls = np.log(np.sum(np.exp(rows - m), axis=1, keepdims=True))
        ratio = np.where(ls + m != 0, (np.abs(m) + ls) / np.abs(ls + m), np.inf)
    k = depth(rows.shape[1]) + 8
    return np.broadcast_to(4 * k * np.minimum(np.nan_to_num(ratio, nan=1.0), 2.0**40), rows.shape)


NONFINITE_LSE = RowProperty(
    "nonfinite",
    "nonfinite_row",
    "a row holding a NaN gives NaN, one holding +inf gives +inf, a row of -inf only gives -inf (IEEE arithmetic on "
    "log(sum(exp(x)))); -inf entries beside finite ones drop out (exp(-inf) = 0): the finite entries' value, "
    "correctly rounded",
)


OPERATOR = TensorOperator(
    name="ReduceLogSumExp",
    summary="log(sum_j exp(x_j)) over the reduced axes: one output per row, the reduced axes kept with size 1",
    family="reduction",
    standards=reduction_standards(
        "ReduceLogSumExp",
        "DML_REDUCE_FUNCTION_LOG_SUM_EXP",
        "log(sum(exp(x))) over the reduced elements; an empty row gives -inf",
        # written with the row maximum out, which is the same real function (the proofs then need no identity
        # log(exp(t)) = t); rows with NaN or infinite entries take PLAIN in IEEE arithmetic (nonfinite_form)
        LSE,
        notes="ONNX's function body casts to double, takes Exp, ReduceSum and Log, and casts back: the formula "
        "in binary64 without the row maximum, which overflows from x = 710 on; the real value is finite there",
    ),
    primary="onnx",
    implementation=LSE,
    reference_form=LSE,
    absent=0,
    nonfinite="formula",
    nonfinite_form=PLAIN,
    neg_inf_drops=True,
    hard_cases="logsumexp",
    reduces=True,
    empty_value=float("-inf"),
    # log(s) + m cancels where m is near -log(s): binary64's own error is then no bound in ULPs of the result
    reference_in_binary64=True,
    error_bound=_error_bound,
    properties=(PERMUTATION_INVARIANT, MAX_LOG_BOUNDS, NONFINITE_LSE, LAYOUT),
    budget64=lambda n: 0.5,  # the reference (reference_in_binary64): within half an ULP of the exact value
)
