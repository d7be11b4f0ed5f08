"""GPU spellings of the runtime targets (torch:cuda, jax:gpu): the same functions on
another device, skipped with the reason where the machine has none."""

import numpy as np
import pytest

from opcert.verify.accuracy.measure import measure


def _probe(code: str):
    """Run code in a fresh interpreter (this process does not import torch or jax: see runtime_helpers):
    True, False, or None where the library is not installed."""
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    out = r.stdout.strip().splitlines()
    return {"True": True, "False": False}.get(out[-1] if out else "", None)


def _has_cuda():
    return _probe("try:\n import torch\nexcept ImportError:\n print(None)\nelse:\n print(torch.cuda.is_available())")


def _has_jax_gpu():
    return bool(
        _probe(
            "try:\n import jax\n print(bool(jax.devices('gpu')))\nexcept (ImportError, RuntimeError):\n print(False)"
        )
    )


@pytest.mark.parametrize(
    "target,present,reason",
    [
        ("torch:cuda", _has_cuda, "no CUDA device on this machine"),
        ("jax:gpu", _has_jax_gpu, "no gpu device on this machine"),
    ],
)
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
    import importlib.util

    if importlib.util.find_spec("onnxruntime") is None:
        pytest.skip("onnxruntime is not installed (opcert[onnxruntime])")
    import ml_dtypes

    import opcert

    x = np.array([-3.0, -1.0, 0.0, 0.5, 2.0, np.inf], dtype=ml_dtypes.bfloat16)
    r = measure("Celu", "onnxruntime", "bfloat16", x)
    if r.status == "unsupported" and "knows ONNX Celu up to Celu-12" in r.error:
        pytest.skip(r.error)  # Celu-28 brought bfloat16, and ONNX Runtime's only bfloat16 activation kernel with it
    assert r.status == "ok", r.error
    assert r.correctly_rounded == x.size  # these inputs are far from Celu's cancellation zone
    assert opcert.reference("Celu", x).dtype == x.dtype


def test_measuring_a_runtime_does_not_load_it_in_the_measuring_process():
    # The runtime is loaded in the isolated worker only: a result that pickled one of its objects (torch's
    # TorchVersion) loaded torch in the parent when it was read, and the parent then spawned every later
    # worker instead of forking it (seconds each)
    import importlib.util
    import subprocess
    import sys

    names = [n for n in ("torch", "onnxruntime", "jax", "openvino") if importlib.util.find_spec(n)]
    if not names:
        pytest.skip("no runtime installed")
    code = (
        "import sys, numpy as np\nfrom opcert.verify.accuracy.measure import measure\n"
        f"for t in {names!r}:\n"
        "    r = measure('Tanh', t, 'float32', np.array([0.5, -2.0], np.float32), properties=())\n"
        "    assert r.status == 'ok', (t, r.error)\n"
        "from opcert.workers import _THREADED\n"
        "print('LOADED', sorted(m for m in _THREADED if m in sys.modules))\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.strip().splitlines()[-1] == "LOADED []", (r.stdout, names)


def test_jax_gpu_workers_do_not_each_take_most_of_the_gpu():
    # a float32 sweep runs one worker per core, each its own JAX client: with XLA's default every client takes
    # 75% of the GPU's memory at its first array (the second fails); the user's own setting is kept
    import importlib.util

    if importlib.util.find_spec("jax") is None:
        pytest.skip("jax is not installed (opcert[jax])")
    from runtime_helpers import jax_gpu_preallocation

    from opcert.workers import run_isolated

    assert run_isolated(jax_gpu_preallocation, None)[0] == "false"
    assert run_isolated(jax_gpu_preallocation, "true")[0] == "true"
