"""LpNormalization: ONNX LpNormalization-1, each row along one axis divided by its L1 or L2 norm."""

from opcert.expr import absolute, attr, const, eq, rowsum, select, sqrt
from opcert.expr.numpy_eval import depth
from opcert.spec.declarations import FLOATS_ONNX_OLD, ONNX_DOC
from opcert.spec.model import Attribute, Support
from opcert.spec.tensor import AxisRule, TensorOperator, TensorStandard
from opcert.spec.tensor_declarations import LAYOUT, NONFINITE, PERMUTATION, RowProperty, x

# p is a choice, "1" or "2" (ONNX's INT attribute; the document allows only those): in expressions its index
p = attr("p")
L1 = rowsum(absolute(x))
L2 = sqrt(rowsum(x * x))
norm = select(eq(p, const(0)), L1, L2)
# a row of zeros gives zeros: ONNX's reference and its backend test case (test_l2normalization_axis_0) say
# "When norm is 0, output is 0 (0/0 = 0)"
LP = select(eq(norm, const(0)), const(0), x / norm)

AXIS = AxisRule(
    "single",
    default=-1,
    negative=True,
    text="the one axis `axis` (default -1); the opset 1 document gives no range: opcert takes -rank to rank - 1",
)

OPERATOR = TensorOperator(
    name="LpNormalization",
    summary="x_i / ||x||_p over a row along one axis, p = 1 (sum of |x_j|) or 2 (square root of the sum of squares)",
    family="normalization",
    standards=(
        TensorStandard(
            "onnx",
            "LpNormalization",
            ONNX_DOC.format("LpNormalization"),
            "Given a matrix, apply Lp-normalization along the provided axis: y = x / ||x||_p, and 0 where the "
            "norm is 0 (ONNX's reference and backend test cases)",
            LP,
            AXIS,
            (Support("1", FLOATS_ONNX_OLD),),
            versions=("1",),
            defaults={"p": "2"},
            attribute_names={"p": "p"},
            notes="The document says nothing of a row of zeros; ONNX's reference and backend test cases give 0 "
            "there, and so does this standard. torch.nn.functional.normalize divides by max(norm, 1e-12): rows "
            "whose norm is below 1e-12 but not 0 are then off, which this standard counts",
        ),
    ),
    primary="onnx",
    implementation=LP,
    reference_form=LP,
    absent=0,
    attributes=(Attribute("p", "the order of the norm: 1 or 2", kind="choice", choices=("1", "2")),),
    nonfinite="formula",
    hard_cases="moments",
    # no cancellation: a sum of magnitudes or of squares, a square root and a division, (depth + 8) binary64
    # ULPs at most
    error_bound=lambda rows: 2.0 * (depth(rows.shape[1]) + 8),
    properties=(
        PERMUTATION,
        RowProperty("range", "range", "-1 <= y_i <= 1 (|x_i| is at most the row's norm)", lower=-1.0, upper=1.0),
        NONFINITE,
        LAYOUT,
    ),
    budget64=lambda n: 4 + depth(n),
)
