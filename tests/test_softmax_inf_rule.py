"""Rows with infinite entries, which the standards leave undefined (issue 55, item 5): opcert's default `limit`
rule, and the named alternative `ieee` (`--standard onnx+ieee`): the max-subtracted formula evaluated in IEEE
arithmetic, as NumPy, ONNX Runtime and torch compute it. Each against an independent computation."""

import textwrap

import numpy as np
import pytest

from opcert.errors import UsageError
from opcert.gating.config import parse
from opcert.spec import get_tensor_operator
from opcert.spec.row_reference import reference
from opcert.spec.tensor import INF_RULES
from opcert.verify.tensor.measure import measure_rows

inf = np.inf
ROWS = [[inf, 1, 2], [1, inf, inf], [-inf, 1, 2], [-inf, -inf, -inf], [inf, -inf, 0], [0, -inf, -inf], [1, 2, 3]]


def numpy_softmax(x):
    """The formula as NumPy users (and ONNX Runtime, torch) write it, in binary64."""
    with np.errstate(all="ignore"):
        e = np.exp(x - x.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)


def numpy_log_softmax(x):
    with np.errstate(all="ignore"):
        m = x.max(axis=-1, keepdims=True)
        return (x - m) - np.log(np.exp(x - m).sum(axis=-1, keepdims=True))


@pytest.mark.parametrize("op, formula", [("Softmax", numpy_softmax), ("LogSoftmax", numpy_log_softmax)])
def test_the_ieee_rule_is_the_formula_in_binary64(op, formula):
    x = np.array(ROWS, dtype=np.float64)
    want = formula(x)
    got = reference(op, x.astype(np.float16), standard="onnx+ieee").astype(np.float64)
    assert (np.isnan(got) == np.isnan(want)).all()  # NaN for +inf in a row, and for a row of -inf only
    assert np.isnan(want[[0, 1, 3, 4]]).all() and not np.isnan(want[[2, 5, 6]]).any()
    ok = ~np.isnan(want)
    assert (np.isinf(got[ok]) == np.isinf(want[ok])).all()
    fin = ok & np.isfinite(want)
    np.testing.assert_allclose(got[fin], want[fin], rtol=2**-10, atol=2**-24)  # one float16 rounding apart


def test_the_default_limit_rule_is_the_documented_one():
    got = reference("Softmax", np.array(ROWS, dtype=np.float16)).astype(np.float64)
    third = float(np.float16(1 / 3))
    e = np.exp([1.0, 2.0])
    s = e / e.sum()
    want = [[1, 0, 0], [0, 0.5, 0.5], [0, s[0], s[1]], [third] * 3, [1, 0, 0], [1, 0, 0]]
    np.testing.assert_allclose(got[:6], np.array(want), rtol=2**-10)
    log = reference("LogSoftmax", np.array(ROWS, dtype=np.float16)).astype(np.float64)
    assert log[1, 0] == -inf and log[1, 1] == log[1, 2] == np.float16(-np.log(2))  # +inf entries share the row
    assert log[2, 0] == -inf and not np.isnan(log).any()


def test_hardmax_takes_no_difference_so_both_rules_agree():
    x = np.array(ROWS, dtype=np.float16)
    a, b = reference("Hardmax", x), reference("Hardmax", x, standard="onnx+ieee")
    assert (a == b).all() and (a == np.eye(3, dtype=np.float16)[np.argmax(x.astype(np.float64), axis=-1)]).all()


def test_the_rule_is_chosen_with_the_standards_key():
    op, _ = get_tensor_operator("Softmax")
    s = op.standard("directml-1+ieee")
    assert (s.key, s.inf_rule, s.name) == ("directml-1", "ieee", "directml-1+ieee")
    assert op.standard("onnx+limit").name == "onnx" and set(INF_RULES) == {"limit", "ieee"}
    with pytest.raises(UsageError, match="unknown rule 'nan'.*allowed: limit, ieee"):
        op.standard("onnx+nan")
    with pytest.raises(UsageError, match="KEY\\+RULE"):
        op.standard("onnx-12")
    (check,) = parse({"check": [{"op": "Softmax", "dtypes": ["float16"], "standard": "onnx+ieee"}]}, "t").checks
    assert check.standard == "onnx+ieee"
    with pytest.raises(UsageError, match="exhaustive"):
        measure_rows("Softmax", "opcert", "float16", standard="onnx+ieee", exhaustive=True)


@pytest.fixture
def formula_kernel(tmp_path, monkeypatch):
    (tmp_path / "formula_softmax.py").write_text(
        textwrap.dedent("""
        import numpy as np

        def softmax(x, axis=-1):
            x64 = x.astype(np.float64)
            with np.errstate(all="ignore"):
                e = np.exp(x64 - x64.max(axis=axis, keepdims=True, initial=-np.inf))
                return (e / e.sum(axis=axis, keepdims=True)).astype(x.dtype)
        """)
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    return "formula_softmax:softmax"


def test_a_kernel_computing_the_formula_passes_under_ieee_and_fails_under_the_default(formula_kernel):
    ieee = measure_rows("Softmax", formula_kernel, "float16", standard="onnx+ieee", samples=200, isolation="none")
    assert ieee.ok and ieee.special_mismatches == 0 and ieee.standard == "onnx+ieee"
    assert {p["name"]: p["status"] for p in ieee.properties}["infinite"] == "checked"
    assert "--standard onnx+ieee" in ieee.command and "follow the ieee rule" in ieee.gate_accuracy()["notes"][0]
    limit = measure_rows("Softmax", formula_kernel, "float16", samples=200, isolation="none")
    assert not limit.ok and limit.special_mismatches > 0
    assert {p["name"]: p["status"] for p in limit.properties}["infinite"] == "refuted"
    e = limit.special_examples[0]
    assert np.isinf(e["row_max"]) and np.isnan(e["got"])  # NaN where the limit rule gives a number
    note = limit.gate_accuracy()["notes"][0]
    assert "follow the limit rule" in note and "--standard onnx+ieee" in note


@pytest.mark.parametrize("standard", ["onnx+ieee", "directml-1+ieee"])
def test_opcerts_own_implementation_follows_the_rule_its_standard_names(standard):
    """opcert as a target under KEY+ieee gives the IEEE rule's NaN (the rule reaches its implementation, not only
    the reference it is measured against): [inf, 1, 2] is NaN throughout, not [1, 0, 0]."""
    import opcert

    x = np.array([[np.inf, 1.0, 2.0]], np.float32)
    axes = {"axes": [1]} if standard.startswith("directml") else {"axis": 1}
    assert np.isnan(opcert.run("Softmax", x, standard=standard, **axes)).all()
    assert opcert.run("Softmax", x, standard=standard.partition("+")[0], **axes).tolist() == [[1.0, 0.0, 0.0]]
    r = measure_rows("Softmax", "opcert", "float32", standard=standard, samples=300)
    assert r.ok and r.special_mismatches == 0, r.special_examples
