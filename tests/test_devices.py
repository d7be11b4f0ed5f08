"""GPU spellings of the runtime targets (torch:cuda, jax:gpu): the same functions on
another device, skipped with the reason where the machine has none."""
import numpy as np
import pytest

from opcert.verify.accuracy import measure


def _has_cuda():
    try:
        import torch
        return torch.cuda.is_available()
    except ImportError:
        return None


def _has_jax_gpu():
    try:
        import jax
        return bool(jax.devices("gpu"))
    except (ImportError, RuntimeError):
        return False


@pytest.mark.parametrize("target,present,reason", [
    ("torch:cuda", _has_cuda, "no CUDA device on this machine"),
    ("jax:gpu", _has_jax_gpu, "no gpu device on this machine"),
])
def test_a_gpu_target_runs_where_a_gpu_exists_and_says_why_not_elsewhere(target, present, reason):
    have = present()
    if have is None:
        pytest.skip(f"{target.split(':')[0]} is not installed")
    r = measure("Tanh", target, "float16", "exhaustive")
    if have:
        assert r.status == "ok" and r.inputs_checked == 65536 and r.target_info["details"]["device"] != "cpu"
    else:
        assert r.status == "unsupported" and reason in r.error


def test_onnxruntime_bfloat16_outputs_are_read_back():
    # ONNX Runtime's Python API has no NumPy bfloat16: the target binds uint16 buffers of the same bits
    pytest.importorskip("onnxruntime")
    import ml_dtypes
    import opcert
    x = np.array([-3.0, -1.0, 0.0, 0.5, 2.0, np.inf], dtype=ml_dtypes.bfloat16)
    r = measure("Celu", "onnxruntime", "bfloat16", x)
    assert r.status == "ok", r.error
    assert r.correctly_rounded == x.size      # these inputs are far from Celu's cancellation zone
    assert opcert.reference("Celu", x).dtype == x.dtype
