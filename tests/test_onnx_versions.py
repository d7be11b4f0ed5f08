"""Which version of an ONNX operator a one-node model is built at, for a runtime older than the standard's
newest version (ONNX Runtime 1.30 knows Celu-12, not Celu-28, and refused every Celu model stamped 28)."""

import numpy as np
import pytest

import opcert
from opcert.targets.runtimes.onnx_models import onnx_opset


def test_the_newest_version_the_runtime_knows_that_lists_the_dtype():
    celu = opcert.get_operator("Celu")  # the catalog: Celu-12 lists float32; Celu-28 every float format
    assert onnx_opset(celu, "float32") == 28
    assert onnx_opset(celu, "float32", frozenset({12, 28})) == 28
    assert onnx_opset(celu, "float32", frozenset({12})) == 12
    assert onnx_opset(celu, "bfloat16", frozenset({12})) is None
    assert onnx_opset(celu, "float16", frozenset({12})) is None
    elu = opcert.get_operator("Elu")  # Elu-6 lists float16, float32, float64; Elu-22 adds bfloat16
    assert onnx_opset(elu, "float16", frozenset({1, 6})) == 6
    assert onnx_opset(elu, "bfloat16", frozenset({1, 6})) is None
    scaled = opcert.get_operator("ScaledTanh")  # experimental, pinned: what the runtime knows does not move it
    assert onnx_opset(scaled, "float32", frozenset({1})) == 9


def test_an_older_runtime_runs_the_version_it_knows_and_says_why_not_the_others():
    import importlib.util

    if importlib.util.find_spec("onnxruntime") is None:
        pytest.skip("onnxruntime is not installed (opcert[onnxruntime])")
    from runtime_helpers import onnx_runtimes_as_older_releases

    from opcert.workers import run_isolated

    got = run_isolated(onnx_runtimes_as_older_releases)
    x = np.array([-3.0, -1.0, -0.25, 0.0, 0.5, 2.0], np.float32)
    want = opcert.reference("Celu", x).astype(np.float64)  # the exact reference, correctly rounded
    for name in ("onnxruntime", "onnx-reference"):
        r = got[name]
        assert r["opset"] == 12 and r["float32"] is None, r
        assert "Celu-12" in r["bfloat16"] and "bfloat16 is in Celu-28" in r["bfloat16"], r["bfloat16"]
        y = np.array(r["y"])
        assert np.all(np.abs(y - want) <= 2 * np.spacing(np.abs(want).astype(np.float32))), (name, y, want)
    rows = np.array(got["onnxruntime"]["rows"])
    assert rows.shape == (3, x.size) and np.array_equal(rows, np.tile(got["onnxruntime"]["y"], (3, 1)))
