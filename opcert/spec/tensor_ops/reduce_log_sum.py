"""ReduceLogSum: log(sum(x)) over the reduced axes, one output per row (ONNX 18, DirectML's reduce)."""

import numpy as np

from opcert.expr import log, rowsum
from opcert.expr.numpy_eval import depth
from opcert.spec.tensor import TensorOperator
from opcert.spec.tensor_declarations import LAYOUT, NONFINITE, PERMUTATION_INVARIANT, per_row, reduction_standards, x

LOG_SUM = per_row(log(rowsum(x)))


def _error_bound(rows: np.ndarray) -> np.ndarray:
    """The binary64 implementation's error in binary64 ULPs of its value: the sum's (depth + 2) ULPs of sum|x_j|
    relative to |sum x_j| (which cancels), divided by |log(s)| (near s = 1 the logarithm cancels too), and the
    logarithm's own; 4x for the margin, the bound being estimated from binary64's own values."""
    if rows.shape[1] == 0:
        return np.zeros(rows.shape)
    with np.errstate(all="ignore"):
        s = np.sum(rows, axis=1, keepdims=True)
        rel = np.abs(rows).sum(axis=1, keepdims=True) / np.abs(s)
        ratio = np.where(s > 0, rel / np.abs(np.log(s)), np.inf)
    k = depth(rows.shape[1]) + 4
    return np.broadcast_to(4 * k * (np.minimum(np.nan_to_num(ratio, nan=np.inf), 2.0**40) + 1), rows.shape)


OPERATOR = TensorOperator(
    name="ReduceLogSum",
    summary="log(sum_j x_j) over the reduced axes: one output per row, the reduced axes kept with size 1",
    family="reduction",
    standards=reduction_standards(
        "ReduceLogSum",
        "DML_REDUCE_FUNCTION_LOG_SUM",
        "log(sum(x)) over the reduced elements: -inf where the sum is 0, NaN where it is negative; an empty row "
        "gives -inf",
        LOG_SUM,
    ),
    primary="onnx",
    implementation=LOG_SUM,
    reference_form=LOG_SUM,
    absent=0,
    nonfinite="formula",
    hard_cases="moments",
    reduces=True,
    empty_value=float("-inf"),
    # log(s) of a sum s that cancels, or near 1: binary64's own error is no bound in ULPs of the result
    reference_in_binary64=True,
    error_bound=_error_bound,
    properties=(PERMUTATION_INVARIANT, NONFINITE, LAYOUT),
    budget64=lambda n: 0.5,  # the reference (reference_in_binary64): within half an ULP of the exact value
)
