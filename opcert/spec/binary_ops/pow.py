"""Pow: x to the power y, both tensors. ONNX's Pow-7 (bfloat16 from 13; the exponent's own type T1 from 12, opcert
checks it in x's format), IEEE 754's pow (its section 9.2.1), which C's pow and ONNX's reference (np.power) are;
DirectML's DML_ELEMENT_WISE_POW (level 1.0), pow(x * scale + bias, exponent).

DirectML's document: "f(input, exponent) = pow(input, exponent). Negative bases are supported for exponents with
integral values (though datatype can still be float), otherwise this operator returns NaN." -inf is a negative
base: NaN for a non-integer exponent (C's pow gives +inf or +0); +-inf as exponents are integral in IEEE 754's
reading (pow(-2, inf) = inf), which opcert keeps for both standards. Where the documents are silent (a NaN
base with a zero exponent, the base 1 with a NaN exponent) IEEE 754's pow decides: 1 in both cases.

opcert's implementation is ConstantPow's (spec/ops/constant_pow.py) with the exponent an array: the same
expression, proved there for every exponent value, evaluated here per element; a NaN base to the power 0 is 1 in
both (IEEE 754)."""

from opcert.spec.binary import BinaryOperator, BinaryStandard, PairProperty
from opcert.spec.declarations import ANY_RANK, FLOATS_ONNX, FLOATS_ONNX_OLD, ONNX_DOC
from opcert.spec.elementwise import DML_ELEMENT_WISE_DOC, SCALE_BIAS
from opcert.spec.model import RuntimeMap, Support
from opcert.spec.ops.constant_pow import POW_OF_X, pow_scaled

OPERATOR = BinaryOperator(
    name="Pow",
    family="power",
    summary="x to the power y, element-wise, both tensors (IEEE 754's pow); DirectML's POW, pow(x * scale + bias, "
    "y), NaN for a negative base and a non-integer exponent",
    inputs=("X", "Y"),
    second="exponent",
    attributes=SCALE_BIAS,
    standards=(
        BinaryStandard(
            key="onnx",
            op_name="Pow",
            document=ONNX_DOC.format("Pow"),
            formula_text="Z = pow(X, Y), Y broadcast against X",
            support=(Support("7", FLOATS_ONNX_OLD, ANY_RANK), Support("13", FLOATS_ONNX, ANY_RANK)),
            attribute_names={},
            implementation=POW_OF_X,  # pow(NaN, +-0) = 1 included (IEEE 754), as ConstantPow's
            notes="IEEE 754's pow, C's: pow(x, +-0) = 1 and pow(1, y) = 1 for every x and y, NaN among them; "
            "NaN for a finite negative base and a finite non-integer exponent; +inf or +0 at -inf.",
        ),
        BinaryStandard(
            key="directml",
            op_name="DML_ELEMENT_WISE_POW",
            document=DML_ELEMENT_WISE_DOC.format("pow"),
            formula_text="f(input, exponent) = pow(input, exponent), of g(x) = x * scale + bias (ScaleBias; absent: "
            "scale = 1, bias = 0); negative bases with integral exponents only, else NaN",
            support=(Support("1.0", ("float16", "float32"), (4, 4)), Support("3.0", ("float16", "float32"), (1, 8))),
            attribute_names={"scale": "ScaleBias.Scale", "bias": "ScaleBias.Bias"},
            implementation=pow_scaled(),
            notes="The tensors have equal sizes (no broadcast). -inf is a negative base: NaN for a non-integer "
            "exponent. A NaN base to the power 0 is 1 (IEEE 754; the document does not say). The scale-bias is the "
            "exact real x * scale + bias.",
            defaults={"scale": 1.0, "bias": 0.0},
        ),
    ),
    primary="onnx",
    reference_at="opcert.spec.pow_reference:pow_reference",
    properties=(
        PairProperty(
            "special_cases",
            "special_cases",
            "IEEE 754's special cases of pow bit for bit: a zero, an infinity or a NaN among the inputs, the base +-1, "
            "the exponent +-0 (DirectML: -inf to a non-integer power is NaN)",
        ),
        PairProperty(
            "monotonic_base",
            "monotonic_first",
            "pow(x, y) is non-decreasing in x on [0, inf] where y > 0, non-increasing on (0, inf] where y < 0",
        ),
        PairProperty(
            "monotonic_exponent",
            "monotonic_second",
            "pow(x, y) is non-decreasing in y where x > 1, non-increasing in y where 0 < x < 1",
        ),
        PairProperty(
            "parity",
            "parity",
            "pow(-x, y) = pow(x, y) for an even integer y, -pow(x, y) for an odd one, zeros' signs included",
            standards=("onnx",),
        ),
        PairProperty("nonnegative", "range", "pow(x, y) >= 0 where x >= 0 or y is an even integer"),
        PairProperty(
            "layout", "layout", "broadcast inputs (a row of x, a column of y) give the same bits as inputs of one shape"
        ),
    ),
    budget64=1.0,
    runtimes={"torch": RuntimeMap("torch.pow"), "jax": RuntimeMap("jax.numpy.power")},
)
