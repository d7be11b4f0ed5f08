"""LogSoftmax: ONNX LogSoftmax-1/11/13, DirectML DML_ACTIVATION_LOG_SOFTMAX and LOG_SOFTMAX1."""

from opcert.expr import exp, log, log1p, rowfirstmax, rowmax, rowsum, select
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

m = rowmax(x)
SHIFTED = (x - m) - log(rowsum(exp(x - m)))
t, e, term = shifted()
# ln(sum) as log1p of the sum without the first maximum's term (exactly 1): ln(1 + 1e-20) is not 0
IMPLEMENTATION = (t + e) - log1p(rowsum(select(rowfirstmax(x), 0, term)))

OPERATOR = TensorOperator(
    name="LogSoftmax",
    summary="x_i - ln(sum_j exp(x_j)) over a row",
    family="tensor",
    standards=standards(
        "LogSoftmax",
        "LOG_SOFTMAX",
        "LogSoftmax(input, axis) = Log(Softmax(input, axis=axis))",
        log(exp(x) / rowsum(exp(x))),
        "f(x[i]) = ln(exp(x[i]) / sum(exp(x[0]), ..., exp(x[j-1])))",
    ),
    primary="onnx",
    implementation=IMPLEMENTATION,
    reference_form=SHIFTED,
    absent="-inf",
    below_shift=True,
    properties=(
        RowProperty("range", "range", "LogSoftmax(x)_i <= 0", upper=0.0),
        RowProperty("row_sum", "row_sum", "sum_i exp(y_i) = 1 over a row", sum_of="exp(y)"),
        SHIFT,
        PERMUTATION,
        RowProperty("monotonic", "row_monotonic", "y_i is non-decreasing in x_i and non-increasing in x_j, j != i"),
        NAN_ROW,
        INFINITE,
        LAYOUT,
    ),
    notes="DirectML's plain LOG_SOFTMAX is taken to have the effective-rank bound (at most 2) that the SOFTMAX and "
    "HARDMAX documents state.",
    budget64=lambda n: 2 + depth(n) / 2,
)
