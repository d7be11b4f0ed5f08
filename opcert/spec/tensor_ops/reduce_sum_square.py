"""ReduceSumSquare: sum(x^2) over the reduced axes, one output per row (ONNX 18, DirectML's reduce)."""

from opcert.expr import rowsum
from opcert.expr.numpy_eval import depth
from opcert.spec.tensor import TensorOperator
from opcert.spec.tensor_declarations import (
    LAYOUT,
    NONFINITE,
    PERMUTATION_INVARIANT,
    RowProperty,
    per_row,
    reduction_standards,
    x,
)

SUM_SQUARE = per_row(rowsum(x * x))

OPERATOR = TensorOperator(
    name="ReduceSumSquare",
    summary="sum_j x_j^2 over the reduced axes: one output per row, the reduced axes kept with size 1",
    family="reduction",
    standards=reduction_standards(
        "ReduceSumSquare",
        "DML_REDUCE_FUNCTION_SUM_SQUARE",
        "sum(x^2) over the reduced elements; an empty row gives 0",
        SUM_SQUARE,
    ),
    primary="onnx",
    implementation=SUM_SQUARE,
    reference_form=SUM_SQUARE,
    absent=0,
    nonfinite="formula",
    hard_cases="moments",
    reduces=True,
    empty_value=0.0,
    # a sum of non-negative terms: no cancellation, (depth + 2) binary64 ULPs at most
    error_bound=lambda rows: 2.0 * (depth(rows.shape[1]) + 2),
    properties=(
        PERMUTATION_INVARIANT,
        RowProperty("range", "range", "y >= 0 (a sum of squares)", lower=0.0),
        NONFINITE,
        LAYOUT,
    ),
    budget64=lambda n: 1 + depth(n),
)
