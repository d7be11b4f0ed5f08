"""Softmax: ONNX Softmax-1/11/13, DirectML DML_ACTIVATION_SOFTMAX and SOFTMAX1."""

from opcert.expr import exp, rowmax, rowsum
from opcert.expr.numpy_eval import depth
from opcert.spec.tensor import TensorOperator
from opcert.spec.tensor_declarations import (
    INFINITE,
    LAYOUT,
    NAN_ROW,
    PERMUTATION,
    SHIFT,
    RowProperty,
    shifted,
    standards,
    x,
)

t = exp(x - rowmax(x))
SHIFTED = t / rowsum(t)
_, _, term = shifted()

OPERATOR = TensorOperator(
    name="Softmax",
    summary="exp(x_i) / sum_j exp(x_j) over a row",
    family="tensor",
    standards=standards(
        "Softmax",
        "SOFTMAX",
        "Softmax(input, axis) = Exp(input) / ReduceSum(Exp(input), axis)",
        exp(x) / rowsum(exp(x)),
        "f(x[i]) = exp(x[i]) / sum(exp(x[0]), ..., exp(x[j-1]))",
    ),
    primary="onnx",
    implementation=term / rowsum(term),
    reference_form=SHIFTED,
    absent=0,
    properties=(
        RowProperty("range", "range", "0 <= Softmax(x)_i <= 1", lower=0.0, upper=1.0),
        RowProperty(
            "row_sum",
            "row_sum",
            "the outputs of a row sum to 1 (a kernel's outputs, each within e ULPs: "
            "within e 2^(1-p) + n e 2^(emin-p+1), n the row length)",
        ),
        SHIFT,
        PERMUTATION,
        RowProperty("monotonic", "row_monotonic", "y_i is non-decreasing in x_i and non-increasing in x_j, j != i"),
        NAN_ROW,
        INFINITE,
        LAYOUT,
    ),
    budget64=lambda n: 2 + depth(n) / 2,
)
