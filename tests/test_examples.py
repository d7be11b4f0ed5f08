"""Expected values from outside opcert: the seed documents' examples and ONNX's backend test cases."""

import warnings

import numpy as np
import pytest

import opcert
from opcert.formats import get_format
from opcert.impl import run
from opcert.spec.attrs import resolve
from opcert.spec.reference import reference_detailed
from opcert.verify.ulp import ulp_error

# SONNX Tanh (seed 003), examples 1 and 2, printed to 8 decimals. The figures
# carry binary32-level error: tanh(1) = 0.761594156 is printed 0.76159418
# (binary32's value) and tanh(4) = 0.999329300 is printed 0.99932921 (9e-8 off,
# 1.5 binary32 ULP). They hold to 1e-7, which is what is checked.
SEED_TOLERANCE = 1e-7
SEED_EXAMPLES = [
    ([0, 1, -1], [0.0, 0.76159418, -0.76159418]),
    ([[-2, 0], [1, 2], [-4, 4]], [[-0.96402758, 0.0], [0.76159418, 0.96402758], [-0.99932921, 0.99932921]]),
]


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("x,y", SEED_EXAMPLES)
def test_seed_003_tanh_examples(x, y, dtype):
    xs = np.array(x, dtype=dtype)
    tol = max(SEED_TOLERANCE, float(np.finfo(dtype).eps))  # the seed's accuracy, or the format's
    for got in (opcert.reference("Tanh", xs), run("Tanh", xs)):
        assert got.shape == xs.shape and got.dtype == xs.dtype
        np.testing.assert_allclose(got.astype(np.float64), y, rtol=0, atol=tol)


def test_seed_003_tanh_4_is_off_in_the_eighth_decimal():
    # Recorded so the tolerance above is not mistaken for opcert's accuracy.
    exact = float(opcert.reference("Tanh", np.array([4.0]))[0])
    assert abs(exact - 0.99932921) > 5e-8 and abs(exact - 0.99932930) < 5e-9


def test_seed_003_example_3_special_values():
    xs = np.array([np.inf, np.nan, -np.inf], dtype=np.float32)
    for got in (opcert.reference("Tanh", xs), run("Tanh", xs)):
        assert got[0] == 1.0 and np.isnan(got[1]) and got[2] == -1.0


def _onnx_cases():
    import importlib
    import importlib.util

    from onnx.backend.test.case import node as onnx_node

    # every operator of the catalog that ONNX defines; PRelu's slope is a tensor input (opcert
    # checks one scalar slope at a time), so its cases are not single-attribute cases
    wanted = {op.name for op in opcert.operators() if any(s.key == "onnx" for s in op.standards)} - {"PRelu"}
    # ONNX keeps each operator's cases in node/<op_type in lower case>.py, made when that module is
    # imported; importing only those (not collect_testcases, which imports all 200 and computes every
    # operator's expected outputs: 8-14 s in each pytest worker, measured) gives the same cases
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in sorted(wanted):
            module = f"{onnx_node.__name__}.{name.lower()}"
            if importlib.util.find_spec(module) is not None:
                importlib.import_module(module)
    cases = getattr(onnx_node, "_NodeTestCases", None)
    if cases is None:  # another onnx keeps them elsewhere: collect them all (slower, the same cases)
        cases = onnx_node.collect_testcases()
    out = []
    for case in cases:
        node = case.model.graph.node
        if len(node) == 1 and node[0].op_type in wanted and len(node[0].input) == 1:
            out.append(case)
    return out


CASES = _onnx_cases()
ONNX_TOLERANCE = 8.0


def test_onnx_cases_were_found():
    names = {c.model.graph.node[0].op_type for c in CASES}
    assert {
        "Tanh",
        "HardSigmoid",
        "Shrink",
        "Celu",
        "Relu",
        "Elu",
        "Selu",
        "Sigmoid",
        "Gelu",
        "Mish",
        "Swish",
        "Softplus",
        "Softsign",
        "HardSwish",
        "LeakyRelu",
        "ThresholdedRelu",
        "Erf",
    } <= names, names


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_onnx_backend_cases(case):
    """ONNX computes its expected outputs with NumPy in the tensor's dtype, so
    they are not correctly rounded: they must lie within ONNX_TOLERANCE ULP of
    the exact value (the float32 NumPy error of those formulas: up to 3.4 ULP
    for HardSwish and 3.0 for Mish, measured), which confirms opcert's function
    is ONNX's. opcert's implementation
    must be within 0.5 ULP + the double-rounding margin of the exact value."""
    from onnx import helper

    node = case.model.graph.node[0]
    attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    attrs = {k: v.decode() if isinstance(v, bytes) else v for k, v in attrs.items()}  # STRING attributes
    for inputs, outputs in case.data_sets:
        x, expected = inputs[0], outputs[0]
        fmt = get_format(x.dtype)
        resolved = resolve(opcert.get_operator(node.op_type), attrs)
        ref = reference_detailed(node.op_type, x, resolved)
        onnx_err = ulp_error(expected.astype(np.float64), ref.exact_hi, ref.exact_lo, fmt)
        assert np.nanmax(onnx_err, initial=0) <= ONNX_TOLERANCE, (case.name, np.nanmax(onnx_err))
        ours = run(node.op_type, x, **attrs)
        our_err = ulp_error(ours.astype(np.float64), ref.exact_hi, ref.exact_lo, fmt)
        assert np.nanmax(our_err, initial=0) <= 0.5 + 2**-20, case.name
        assert np.array_equal(np.isnan(ours), np.isnan(expected))
