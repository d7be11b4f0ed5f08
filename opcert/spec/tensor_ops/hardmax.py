"""Hardmax: ONNX Hardmax-1/11/13, DirectML DML_ACTIVATION_HARDMAX and HARDMAX1."""

from opcert.expr import rowfirstmax, select
from opcert.spec.tensor import TensorOperator
from opcert.spec.tensor_declarations import INFINITE, LAYOUT, NAN_ROW, PERMUTATION, SHIFT, RowProperty, standards, x

ONE_HOT = select(rowfirstmax(x), 1, 0)

OPERATOR = TensorOperator(
    name="Hardmax",
    summary="1 at the first maximum of a row, 0 elsewhere",
    family="tensor",
    standards=standards(
        "Hardmax",
        "HARDMAX",
        "1 for the first maximum value in the row, 0 for all others",
        ONE_HOT,
        "1 for the first occurrence of the largest value in the row, 0 for all other values",
    ),
    primary="onnx",
    implementation=ONE_HOT,
    reference_form=ONE_HOT,
    absent=0,
    properties=(
        RowProperty("one_hot", "one_hot_first", "every row is 0 except a 1 at its first maximum"),
        SHIFT,
        PERMUTATION,
        NAN_ROW,
        INFINITE,
        LAYOUT,
    ),
)
