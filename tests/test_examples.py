"""Expected values from outside opcert: the seed documents' examples and ONNX's backend test cases."""
import warnings

import numpy as np
import pytest

import opcert
from opcert.impl import run
from opcert.verify.ulp import ulp_error
from opcert.formats import get_format
from opcert.spec.attrs import resolve
from opcert.spec.reference import reference_detailed

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
    from onnx import numpy_helper  # noqa: F401
    from onnx.backend.test.case.node import collect_testcases
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cases = collect_testcases()  # collects once; filter by node type below
    wanted = {"Tanh", "HardSigmoid", "Shrink", "Celu"}
    out = []
    for case in cases:
        node = case.model.graph.node
        if len(node) == 1 and node[0].op_type in wanted:
            out.append(case)
    return out


CASES = _onnx_cases()


def test_onnx_cases_were_found():
    names = {c.model.graph.node[0].op_type for c in CASES}
    assert names == {"Tanh", "HardSigmoid", "Shrink", "Celu"}


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_onnx_backend_cases(case):
    """ONNX computes its expected outputs with NumPy in the tensor's dtype, so
    they are not correctly rounded: they must lie within 2 ULP of the exact
    value (the float32 NumPy error on these formulas). opcert's implementation
    must be within 0.5 ULP + the double-rounding margin of the exact value."""
    from onnx import helper
    node = case.model.graph.node[0]
    attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    for inputs, outputs in case.data_sets:
        x, expected = inputs[0], outputs[0]
        fmt = get_format(x.dtype)
        resolved = resolve(opcert.get_operator(node.op_type), attrs)
        ref = reference_detailed(node.op_type, x, resolved)
        onnx_err = ulp_error(expected.astype(np.float64), ref.exact_hi, ref.exact_lo, fmt)
        assert np.nanmax(onnx_err, initial=0) <= 2.0, (case.name, np.nanmax(onnx_err))
        ours = run(node.op_type, x, **attrs)
        our_err = ulp_error(ours.astype(np.float64), ref.exact_hi, ref.exact_lo, fmt)
        assert np.nanmax(our_err, initial=0) <= 0.5 + 2 ** -20, case.name
        assert np.array_equal(np.isnan(ours), np.isnan(expected))
