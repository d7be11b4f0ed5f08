"""The reference of every catalog operator against MPFR (gmpy2, tests/oracle.py): every finite
float16 and bfloat16 input at the defaults and at two other attribute sets (each other set that takes a
branch of its own in one format here, in both in the slow run), and random finite
float32 and float64 inputs (a few thousand here; 10^5 each in the slow test). Zeros are compared by
value (their sign is the standard's IEEE formula's, checked elsewhere).

Operators without attributes (Erf, Identity, Mish, Relu, Sigmoid, Softsign) have only their
definition; Gelu's one attribute is a choice of two forms, so it has one other set; HardSwish's and
Softplus's attributes exist only in DirectML's definitions, which are checked with their standard."""

import numpy as np
import pytest
from oracle import catalog_oracle

import opcert
from opcert.spec.attrs import resolve

# (operator, standard, attributes): two sets besides the defaults for every operator with FLOAT attributes
OTHER = [
    ("Elu", None, {"alpha": 2.5}),
    ("Elu", None, {"alpha": 0.1}),
    ("LeakyRelu", None, {"alpha": -0.3}),
    ("LeakyRelu", None, {"alpha": 5.5}),
    ("PRelu", None, {"slope": 0.25}),
    ("PRelu", None, {"slope": -2.0}),
    ("ThresholdedRelu", None, {"alpha": -1.5}),
    ("ThresholdedRelu", None, {"alpha": 0.75}),
    ("Selu", None, {"alpha": 2.0, "gamma": 3.0}),
    ("Selu", None, {"alpha": 1.0, "gamma": 0.5}),
    ("Swish", None, {"alpha": 1.702}),
    ("Swish", None, {"alpha": 0.5}),
    ("Linear", None, {"alpha": 3.0, "beta": -0.1}),
    ("Linear", None, {"alpha": -0.25, "beta": 3.0}),
    ("Gelu", None, {"approximate": "tanh"}),
    # one channel's parameters: B cancelling the rest at x = -85.75 (to about 3e-5), and a negative scale
    (
        "BatchNormalization",
        None,
        {"scale": 3.0, "B": 991.1026611328125, "input_mean": -2.5, "input_var": 0.0625, "epsilon": 0.001},
    ),
    ("BatchNormalization", None, {"scale": -0.7, "B": 0.3, "input_mean": 0.1, "input_var": 5.5}),
    ("HardSwish", "directml", {}),
    ("HardSwish", "directml", {"alpha": 0.2, "beta": 0.5}),
    ("HardSwish", "directml", {"alpha": 0.125, "beta": 0.25}),
    ("Softplus", "directml", {"steepness": 2.0}),
    ("Softplus", "directml", {"steepness": 7.5}),
    ("Softplus", "directml-parametric", {"alpha": 2.0, "beta": 0.5}),
    # DirectML's ScaleBias, f(x * scale + bias): a scale that shifts, one that flips and shrinks
    ("Exp", "directml", {"scale": 0.5, "bias": 1.0}),
    ("Exp", "directml", {"scale": -3.5, "bias": 0.1}),
    ("Abs", "directml", {"scale": -0.75, "bias": 2.5}),
    ("Abs", "directml", {"scale": 3.0, "bias": -1.0}),
    ("Erf", "directml", {"scale": 0.5, "bias": 1.0}),
    ("Erf", "directml", {"scale": -3.5, "bias": 0.1}),
    ("Identity", "directml-element-wise", {"scale": 3.0, "bias": 0.1}),
    ("Identity", "directml-element-wise", {"scale": -0.25, "bias": 2.0}),
    ("Log", "directml", {"scale": 0.5, "bias": 1.0}),
    ("Log", "directml", {"scale": -3.5, "bias": 0.1}),
    ("Sqrt", "directml", {"scale": 2.0, "bias": -0.5}),
    ("Sqrt", "directml", {"scale": -0.75, "bias": 3.0}),
    ("Sinh", "directml", {"scale": 0.5, "bias": 1.0}),
    ("Sinh", "directml", {"scale": -3.5, "bias": 0.1}),
    ("Asinh", "directml", {"scale": 0.5, "bias": 1.0}),
    ("Asinh", "directml", {"scale": -3.5, "bias": 0.1}),
    ("Atan", "directml", {"scale": 0.5, "bias": 1.0}),
    ("Atan", "directml", {"scale": -3.5, "bias": 0.1}),
    # the inverse functions' domains: a scale-bias that maps part of the inputs onto the ends (+-1 exactly)
    ("Asin", "directml", {"scale": 0.5, "bias": 0.5}),
    ("Asin", "directml", {"scale": -3.5, "bias": 0.1}),
    ("Acos", "directml", {"scale": 0.5, "bias": -0.5}),
    ("Acos", "directml", {"scale": -3.5, "bias": 0.1}),
    ("Atanh", "directml", {"scale": 0.5, "bias": 0.5}),
    ("Atanh", "directml", {"scale": -0.25, "bias": -0.75}),
    ("Acosh", "directml", {"scale": 2.0, "bias": 1.0}),
    ("Acosh", "directml", {"scale": -0.75, "bias": 3.0}),
    # the periodic functions: a huge x * scale + bias in bfloat16 (up to 2^127), whose reduction needs many bits of pi
    ("Sin", "directml", {"scale": 0.5, "bias": 1.0}),
    ("Sin", "directml", {"scale": -3.5, "bias": 0.1}),
    ("Cos", "directml", {"scale": 0.5, "bias": 1.0}),
    ("Cos", "directml", {"scale": -3.5, "bias": 0.1}),
    ("Tan", "directml", {"scale": 0.5, "bias": 1.0}),
    ("Tan", "directml", {"scale": -3.5, "bias": 0.1}),
    ("Cosh", "directml", {"scale": 0.5, "bias": 1.0}),
    ("Cosh", "directml", {"scale": -3.5, "bias": 0.1}),
    # the rounding operators: a scale-bias whose sum lands near integers and past 2^53 in bfloat16
    ("Floor", "directml", {"scale": -3.5, "bias": 0.1}),
    ("Floor", "directml", {"scale": 0.5, "bias": 0.25}),
    ("Ceil", "directml", {"scale": -3.5, "bias": 0.1}),
    ("Ceil", "directml", {"scale": 3.0, "bias": -0.3}),
    ("Round", "directml", {"rounding_mode": "toward_zero"}),
    ("Round", "directml", {"rounding_mode": "toward_infinity"}),
    # Clip: the standards' definitions where min > max (ONNX's max, DirectML's Min), Clip-6's defaults (-+FLT_MAX)
    ("Clip", None, {"min": -0.3, "max": 2.5}),
    ("Clip", None, {"min": 2.0, "max": -1.0}),
    ("Clip", "onnx-6", {}),
    ("Clip", "directml", {"scale": -3.5, "bias": 0.1, "min": -1.0, "max": 7.0}),
    ("Clip", "directml", {"scale": 0.5, "bias": 0.25, "min": 2.0, "max": -1.0}),
    ("Reciprocal", "directml", {"scale": -3.5, "bias": 0.1}),
    ("Reciprocal", "directml", {"scale": 0.5, "bias": -2.0}),
    ("Threshold", "directml", {"scale": 3.0, "bias": 0.1, "min": -0.3}),
    ("Threshold", "directml", {"scale": -0.25, "bias": 2.0, "min": 1.5}),
    # ConstantPow: a root of a negative base (NaN), a negative odd power (the pole's sign), a large power, a scale-bias
    ("ConstantPow", None, {"exponent": 0.5}),
    ("ConstantPow", None, {"exponent": -3.0}),
    ("ConstantPow", None, {"exponent": 7.25}),
    ("ConstantPow", None, {"exponent": 100.0}),
    ("ConstantPow", "directml", {"scale": -3.5, "bias": 0.1, "exponent": 3.0}),
    ("ConstantPow", "directml", {"scale": 0.5, "bias": 1.0, "exponent": -1.5}),
]
# The ScaleBias forms' second sets: f of another scale and bias, the same code as the first set's with other
# constants; the slow run takes them (their 16-bit and random inputs, and tests/test_ball_compiled.py's balls)
SCALE_BIAS_SECOND = {
    "Exp-directml-scale=-3.5,bias=0.1",
    "Abs-directml-scale=3.0,bias=-1.0",
    "Erf-directml-scale=-3.5,bias=0.1",
    "Identity-directml-element-wise-scale=-0.25,bias=2.0",
    "Log-directml-scale=-3.5,bias=0.1",
    "Sqrt-directml-scale=-0.75,bias=3.0",
    "Sinh-directml-scale=-3.5,bias=0.1",
    "Asinh-directml-scale=-3.5,bias=0.1",
    "Atan-directml-scale=-3.5,bias=0.1",
    "Asin-directml-scale=-3.5,bias=0.1",
    "Acos-directml-scale=-3.5,bias=0.1",
    "Atanh-directml-scale=-0.25,bias=-0.75",
    "Acosh-directml-scale=-0.75,bias=3.0",
    "Threshold-directml-scale=-0.25,bias=2.0,min=1.5",
    "Sin-directml-scale=-3.5,bias=0.1",
    "Cos-directml-scale=-3.5,bias=0.1",
    "Tan-directml-scale=-3.5,bias=0.1",
    "Cosh-directml-scale=-3.5,bias=0.1",
    "Floor-directml-scale=0.5,bias=0.25",
    "Ceil-directml-scale=3.0,bias=-0.3",
    "Reciprocal-directml-scale=0.5,bias=-2.0",
    "ConstantPow-primary-exponent=100.0",
    "ConstantPow-directml-scale=0.5,bias=1.0,exponent=-1.5",
}
SEEDS = {"Tanh", "ScaledTanh", "HardSigmoid", "Shrink", "Celu"}  # tests/test_reference_oracle.py
OPS = [op.name for op in opcert.operators() if op.name not in SEEDS]
CASES = [(n, None, {}) for n in OPS] + OTHER
IDS = [f"{n}-{s or 'primary'}-" + (",".join(f"{k}={v}" for k, v in a.items()) or "default") for n, s, a in CASES]


def _same(got, want):
    got = got.astype(np.float64)
    return (got == want) | (np.isnan(got) & np.isnan(want))


def _check(name, standard, attrs, x):
    op = opcert.get_operator(name)
    a = {k: float(v) for k, v in resolve(op, attrs, standard).items()}
    got = opcert.reference(name, x, standard=standard, **attrs)
    want = catalog_oracle(name, x, a)
    bad = ~_same(got, want)
    assert not bad.any(), f"{name} {attrs}: {bad.sum()} differ; x={x[bad][:4]} got={got[bad][:4]} MPFR={want[bad][:4]}"


def test_the_cases_cover_every_operator_and_attribute():
    assert set(OPS) == {n for n, _, _ in CASES}
    for op in opcert.operators():
        floats = [a for a in op.attributes if a.kind == "float"]
        if op.name not in SEEDS and floats:
            assert sum(1 for n, _, a in OTHER if n == op.name) >= 2, op.name


# The ScaleBias forms whose first set CI checks on every finite float16 input: f of x * scale + bias is one code
# path for every operator (spec.scale_bias), and these take the shifted argument across what differs by operator:
# the trigonometric reduction (Sin), poles and the ends of a domain (Atanh, Acosh, Asin, Log, Sqrt), overflow
# (Exp). The others' 16-bit inputs are in the slow run, their random float32 and float64 inputs in CI.
SCALE_BIAS_EVERY_INPUT = {"Sin", "Atanh", "Acosh", "Asin", "Log", "Sqrt", "Exp"}
# The other sets whose values are constants of the form the defaults take on every 16-bit input in CI (a slope, a
# scale, a threshold: no select, primitive or standard of their own; Softplus's DirectML form keeps its first
# steepness): CI checks them on the random float32 and float64 inputs below, the slow run on every 16-bit input.
# The sets that take a branch of their own stay (Clip's min above max, Round's modes, ConstantPow's exponents,
# Gelu's tanh form, DirectML's parametric Softplus).
SAME_FORM_SETS = {
    i
    for (n, _, a), i in zip(CASES, IDS)
    if a and n in {"Elu", "LeakyRelu", "PRelu", "ThresholdedRelu", "Selu", "Swish", "Linear", "HardSwish"}
} | {"Softplus-directml-steepness=7.5"}


def _sixteen_bit_cases():
    """Every operator's defaults in one 16-bit format, float16 and bfloat16 in turn by operator; every form with
    one attribute set (Gelu's tanh form, DirectML's parametric Softplus) in both formats; of an operator's two or
    three other sets (SAME_FORM_SETS apart), the first in float16, the next in bfloat16 and so on; the other format
    of each in the slow run. The oracle is the time here (1-4 s a case: MPFR at 320 bits per input): what an
    attribute value exercises does not depend on the format, each format's rounding is exercised at half the
    operators' defaults, and bfloat16's exponent range is float32's, which every operator's random float32 inputs
    below reach in CI."""
    other = {}
    for n, s, a in CASES:
        if a:
            other.setdefault((n, s), []).append(a)
    out = []
    for (n, s, a), i in zip(CASES, IDS):
        sets = other.get((n, s), [])
        for k, dtype in enumerate(("float16", "bfloat16")):
            if not a:  # the defaults: float16 for every other operator, bfloat16 for the rest
                fast = OPS.index(n) % 2 == k
            elif "scale" in a:  # ScaleBias: every input for the operators whose argument meets a domain's edge
                fast = k == 0 and n in SCALE_BIAS_EVERY_INPUT and i not in SCALE_BIAS_SECOND
            else:
                fast = (len(sets) == 1 or sets.index(a) % 2 == k) and i not in SCALE_BIAS_SECOND | SAME_FORM_SETS
            out.append(pytest.param(n, s, a, dtype, id=f"{i}-{dtype}", marks=() if fast else [pytest.mark.slow]))
    return out


@pytest.mark.parametrize("name,standard,attrs,dtype", _sixteen_bit_cases())
def test_every_finite_16bit_input(name, standard, attrs, dtype):
    from opcert.formats import get_format

    x = np.arange(1 << 16, dtype=np.uint16).view(get_format(dtype).dtype)
    _check(name, standard, attrs, x[np.isfinite(x.astype(np.float32))])


def _random(dtype, n, seed=11):
    rng = np.random.default_rng(seed)
    width = 32 if dtype == "float32" else 64
    bits = rng.integers(0, 2**width - 1, n, dtype=np.uint64).astype(f"uint{width}")
    x = bits.view(dtype)
    # half of them in [-40, 40], where every operator does something other than saturate
    x = np.concatenate([x, rng.uniform(-40, 40, n).astype(dtype)])
    return x[np.isfinite(x)]


@pytest.mark.parametrize(
    "name,standard,attrs",
    [pytest.param(*c, id=i, marks=[pytest.mark.slow] if i in SCALE_BIAS_SECOND else []) for c, i in zip(CASES, IDS)],
)
@pytest.mark.parametrize("dtype,n", [("float32", 3000), ("float64", 400)])
def test_random_float32_and_float64(name, standard, attrs, dtype, n):
    _check(name, standard, attrs, _random(dtype, n))


@pytest.mark.slow
@pytest.mark.parametrize("name,standard,attrs", CASES, ids=IDS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_100000_random_float32_and_float64(name, standard, attrs, dtype):
    _check(name, standard, attrs, _random(dtype, 50000, seed=12))
