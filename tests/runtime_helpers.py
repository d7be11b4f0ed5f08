"""Helpers that import the runtimes (torch, ONNX Runtime): the tests call them
in a worker process (opcert.workers.run_isolated), so that the test process
never loads a multithreaded runtime (after which workers must be spawned
rather than forked, which is slower)."""

import numpy as np


def agree_with_library(target: str) -> list:
    """For each dtype the target supports: (dtype, target's outputs, the library's own outputs)."""
    import ml_dtypes

    import opcert
    from opcert.targets import load_target

    t = load_target(target)
    op = opcert.get_operator("Tanh")
    out = []
    for dtype in ("float16", "float32", "float64", "bfloat16"):
        x = np.linspace(-3, 3, 13).astype(ml_dtypes.bfloat16 if dtype == "bfloat16" else dtype)
        if t.unsupported(op, dtype, {}):
            continue
        y = t.run(op, x, {})
        if target == "torch":
            import torch

            tx = torch.from_numpy(x.astype(np.float32)).to(
                torch.bfloat16 if dtype == "bfloat16" else getattr(torch, dtype)
            )
            want = torch.tanh(tx).to(torch.float64).numpy()
        elif target == "onnxruntime":
            import onnxruntime as ort

            from opcert.targets.runtimes.onnx_models import onnx_model

            if dtype == "bfloat16":
                continue
            s = ort.InferenceSession(onnx_model(op, dtype, {}).SerializeToString(), providers=["CPUExecutionProvider"])
            want = s.run(None, {"X": x})[0].astype(np.float64)
        else:
            want = np.tanh(x).astype(np.float64)  # onnx.reference's Tanh is np.tanh in the input's dtype
        out.append((dtype, str(y.dtype), y.astype(np.float64), want))
    return out


def torch_alone_and_inside(fn: str, x: float) -> tuple[int, list[int]]:
    """torch.nn.functional.<fn> of the float32 x alone in a call, and its bits at every position of a call of
    4,099 copies of x: (bits alone, bits inside)."""
    import torch
    import torch.nn.functional as F

    f = getattr(F, fn)
    alone = f(torch.from_numpy(np.array([x], np.float32))).numpy()
    inside = f(torch.from_numpy(np.full(4096 + 3, x, np.float32))).numpy()
    return int(alone.view(np.uint32)[0]), [int(b) for b in inside.view(np.uint32)]


def onnx_runtimes_as_older_releases() -> dict:
    """ONNX Runtime and onnx.reference told they know Celu-12 alone (as ONNX Runtime 1.30 does: Celu-28 came
    later): for each, the opset built for float32, the reasons given for float32 and bfloat16, and float32
    outputs of one call and (ONNX Runtime) of the many-calls path the layout check uses."""
    import opcert
    from opcert.spec.attrs import resolve
    from opcert.targets.runtimes.onnx_reference import OnnxReferenceElementWise
    from opcert.targets.runtimes.onnxruntime import OnnxRuntimeElementWise

    op = opcert.get_operator("Celu")
    attrs = resolve(op)
    x = np.array([-3.0, -1.0, -0.25, 0.0, 0.5, 2.0], np.float32)
    out = {}
    for rt in (OnnxRuntimeElementWise(), OnnxReferenceElementWise()):
        rt.known = dict(rt.known, Celu=frozenset({12}))
        r = {
            "opset": rt.opset(op, "float32"),
            "float32": rt.unsupported(op, "float32", attrs),
            "bfloat16": rt.unsupported(op, "bfloat16", attrs),
        }
        if r["float32"] is None:
            r["y"] = rt(op, x.copy(), attrs).astype(np.float64).tolist()
            if rt.name == "onnxruntime":
                r["rows"] = rt.layouts().calls(op, np.tile(x, (3, 1)), attrs).astype(np.float64).tolist()
        out[rt.name] = r
    return out


def jax_gpu_preallocation(user_value) -> tuple:
    """XLA_PYTHON_CLIENT_PREALLOCATE after opcert's jax:gpu target is made (with the user's value, if any, set
    before), and whether the target found a GPU."""
    import os

    os.environ.pop("XLA_PYTHON_CLIENT_PREALLOCATE", None)
    if user_value is not None:
        os.environ["XLA_PYTHON_CLIENT_PREALLOCATE"] = user_value
    from opcert.targets.runtimes.jax import JaxElementWise

    rt = JaxElementWise("gpu")
    return os.environ.get("XLA_PYTHON_CLIENT_PREALLOCATE"), rt.dev is not None


def torch_mish_one_and_two_threads(n: int, seed: int) -> bool:
    """Whether torch's float32 mish of n uniform inputs in [-20, 20] (seed) gives other bits on 2 threads than
    on 1 for some of them: the runtime itself, without opcert."""
    import torch

    x = np.random.default_rng(seed).uniform(-20, 20, n).astype(np.float32)
    torch.set_num_threads(1)
    one = torch.nn.functional.mish(torch.from_numpy(x)).numpy().view(np.uint32)
    torch.set_num_threads(2)
    two = torch.nn.functional.mish(torch.from_numpy(x)).numpy().view(np.uint32)
    return bool((one != two).any())


def jax_exact_gelu_alone(bits: int) -> int:
    """jax.jit(gelu, approximate=False) of the float32 with these bits, alone in a call: its output's bits."""
    import jax
    import jax.numpy as jnp

    f = jax.jit(lambda t: jax.nn.gelu(t, approximate=False))
    x1 = np.array([bits], np.uint32).view(np.float32)
    return int(np.asarray(f(jnp.asarray(x1))).view(np.uint32)[0])


def ort_refusals_of_raised_errors() -> tuple:
    """ONNX Runtime's tensor target probing a case whose call raises: its own status error (NOT_IMPLEMENTED) is a
    refusal with its message; a plain RuntimeError of the call's own code (as reading a bfloat16 output once
    raised) is not taken for one. Returns (the refusal's reason, the propagated error's text)."""
    from onnxruntime.capi import onnxruntime_pybind11_state as state

    from opcert.spec import get_tensor_operator
    from opcert.targets.runtimes.onnxruntime import OnnxRuntimeTensor

    op, _ = get_tensor_operator("Softmax")
    std = op.standard("onnx")
    t = OnnxRuntimeTensor()

    def refuse(*args):
        raise state.NotImplemented("[ONNXRuntimeError] : 9 : NOT_IMPLEMENTED : no kernel")

    t.call = refuse
    reason = t.unsupported(op, std, "float32", (1,), 2)
    t.refused.clear()

    def broken(*args):
        raise RuntimeError("No corresponding Numpy type for Tensor Type. bfloat16")

    t.call = broken
    try:
        t.unsupported(op, std, "float32", (1,), 2)
    except RuntimeError as exc:
        return reason, str(exc)
    return reason, None
