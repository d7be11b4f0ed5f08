"""ReduceL2: sqrt(sum(x^2)) over the reduced axes, one output per row (ONNX 18, DirectML's reduce)."""

from opcert.expr import rowsum, sqrt
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

L2 = per_row(sqrt(rowsum(x * x)))

OPERATOR = TensorOperator(
    name="ReduceL2",
    summary="sqrt(sum_j x_j^2) over the reduced axes: one output per row, the reduced axes kept with size 1",
    family="reduction",
    standards=reduction_standards(
        "ReduceL2",
        "DML_REDUCE_FUNCTION_L2",
        "sqrt(sum(x^2)) over the reduced elements; an empty row gives 0",
        L2,
    ),
    primary="onnx",
    implementation=L2,
    reference_form=L2,
    absent=0,
    nonfinite="formula",
    hard_cases="moments",
    reduces=True,
    empty_value=0.0,
    # a sum of squares and a square root: (depth + 4) binary64 ULPs at most
    error_bound=lambda rows: 2.0 * (depth(rows.shape[1]) + 4),
    properties=(
        PERMUTATION_INVARIANT,
        RowProperty("range", "range", "y >= 0 (a norm)", lower=0.0),
        NONFINITE,
        LAYOUT,
    ),
    budget64=lambda n: 2 + depth(n),
)
