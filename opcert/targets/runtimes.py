"""Real runtimes under test: ONNX Runtime (CPU), onnx.reference, PyTorch (CPU).

Each builds what its library needs once per operator, dtype and attributes.
A combination the library does not support is reported as unsupported with
the library's own reason; anything that fails at run time is a crash.
"""
from __future__ import annotations

import hashlib
import json
from fractions import Fraction

import numpy as np

from ..errors import UsageError

# onnx.TensorProto element types (numbers, so that importing this module does not import onnx)
ONNX_ELEM = {"float16": 10, "bfloat16": 16, "float32": 1, "float64": 11, "int8": 3, "int16": 5, "int32": 6,
             "int64": 7, "uint8": 2, "uint16": 4, "uint32": 12, "uint64": 13}
# ScaledTanh was an experimental ONNX operator (opsets 1-9); the others at the opset they last changed in.
OPSET = {"Tanh": 13, "HardSigmoid": 22, "Shrink": 9, "Celu": 12, "ScaledTanh": 9}


def onnx_model(op, dtype: str, attrs: dict[str, Fraction]):
    """A one-node ONNX model: Y = op(X), X and Y of `dtype` and unknown shape."""
    from onnx import helper
    std_names = next((s.attribute_names for s in op.standards if s.key == "onnx"), {})
    node = helper.make_node(op.name, ["X"], ["Y"],
                            **{std_names.get(k, k): float(v) for k, v in attrs.items()})
    elem = ONNX_ELEM[dtype]
    graph = helper.make_graph([node], f"opcert_{op.name}",
                              [helper.make_tensor_value_info("X", elem, None)],
                              [helper.make_tensor_value_info("Y", elem, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET[op.name])],
                              producer_name="opcert")
    model.ir_version = 9   # what ONNX Runtime 1.16 and later accept
    return model


def _is_bf16(x):
    return x.dtype.name == "bfloat16"


def _built(cache: dict, op, dtype, attrs, build):
    """build() once per operator, dtype and attributes; its error message, as
    a string, where the library cannot build it (an unsupported combination)."""
    key = (op.name, dtype, tuple(sorted(attrs.items())))
    if key not in cache:
        try:
            cache[key] = build()
        except Exception as exc:  # the library's own refusal: NOT_IMPLEMENTED, unknown schema, ...
            cache[key] = str(exc).splitlines()[0][:300]
    return cache[key]


class OnnxRuntime:
    name = "onnxruntime"

    def __init__(self):
        import onnxruntime as ort
        self.ort = ort
        self.version = ort.__version__
        build = ort.get_build_info() if hasattr(ort, "get_build_info") else ""
        self.details = {"onnxruntime": ort.__version__, "build": build, "execution_provider": "CPUExecutionProvider"}
        self.sessions = {}

    def _session(self, op, dtype, attrs):
        def build():
            opts = self.ort.SessionOptions()
            opts.intra_op_num_threads = 1   # opcert parallelises over processes
            opts.inter_op_num_threads = 1
            opts.log_severity_level = 3
            return self.ort.InferenceSession(onnx_model(op, dtype, attrs).SerializeToString(), opts,
                                             providers=["CPUExecutionProvider"])
        return _built(self.sessions, op, dtype, attrs, build)

    def unsupported(self, op, dtype, attrs):
        s = self._session(op, dtype, attrs)
        return f"onnxruntime {self.version} cannot run {op.name} in {dtype}: {s}" if isinstance(s, str) else None

    def __call__(self, op, x, attrs):
        sess = self._session(op, x.dtype.name, attrs)
        if _is_bf16(x):
            v = self.ort.OrtValue.ortvalue_from_numpy_with_onnx_type(x.view(np.uint16), ONNX_ELEM["bfloat16"])
            out = sess.run_with_ort_values(["Y"], {"X": v})[0]
            return np.asarray(out.numpy()).view(x.dtype)
        return sess.run(["Y"], {"X": x})[0]


class OnnxReference:
    name = "onnx-reference"

    def __init__(self):
        import onnx
        self.version = onnx.__version__
        self.details = {"onnx": onnx.__version__, "numpy": np.__version__}
        self.evaluators = {}

    def _evaluator(self, op, dtype, attrs):
        from onnx.reference import ReferenceEvaluator
        return _built(self.evaluators, op, dtype, attrs, lambda: ReferenceEvaluator(onnx_model(op, dtype, attrs)))

    def unsupported(self, op, dtype, attrs):
        e = self._evaluator(op, dtype, attrs)
        return f"onnx.reference {self.version} cannot run {op.name}: {e}" if isinstance(e, str) else None

    def __call__(self, op, x, attrs):
        return self._evaluator(op, x.dtype.name, attrs).run(None, {"X": x})[0]


class Torch:
    """PyTorch operators whose definition is the operator's, and nothing else."""
    name = "torch"

    def __init__(self):
        import torch
        torch.set_num_threads(1)
        self.torch = torch
        self.version = torch.__version__
        self.details = {"torch": torch.__version__, "git": torch.version.git_version,
                        "config_sha256": hashlib.sha256(torch.__config__.show().encode()).hexdigest()[:16]}

    def _function(self, op, attrs):
        F = self.torch.nn.functional
        if op.name == "Tanh":
            return self.torch.tanh, None
        if op.name == "Celu":
            return (lambda t: F.celu(t, alpha=float(attrs["alpha"]))), None
        if op.name == "HardSigmoid":
            # relu6(x + 3) / 6 is alpha = 1/6, beta = 1/2; 1/6 as binary32 is the nearest attribute
            if attrs["alpha"] == Fraction(float(np.float32(1 / 6))) and attrs["beta"] == Fraction(1, 2):
                return F.hardsigmoid, None
            return None, ("torch.nn.functional.hardsigmoid is HardSigmoid with alpha = 1/6 (binary32 "
                          "0.1666666716) and beta = 0.5 only")
        if op.name == "Shrink":
            lam, bias = attrs["lambd"], attrs["bias"]
            if lam >= 0 and bias == 0:
                return (lambda t: F.hardshrink(t, float(lam))), None
            if lam >= 0 and bias == lam:
                return (lambda t: F.softshrink(t, float(lam))), None
            return None, "torch has Shrink only as hardshrink (bias = 0) and softshrink (bias = lambd), lambd >= 0"
        return None, f"torch has no operator defined as {op.name} ({op.summary})"

    def unsupported(self, op, dtype, attrs):
        f, why = self._function(op, attrs)
        if f is None:
            return f"torch {self.version}: {why}"
        if dtype not in ("float16", "bfloat16", "float32", "float64"):
            return f"torch {self.version}: opcert maps {op.name} for float dtypes only"
        return None

    def __call__(self, op, x, attrs):
        torch = self.torch
        f, _ = self._function(op, attrs)
        if _is_bf16(x):
            t = torch.from_numpy(x.view(np.int16).copy()).view(torch.bfloat16)
            return f(t).view(torch.int16).numpy().view(x.dtype)
        return f(torch.from_numpy(x.copy())).numpy()


RUNTIMES = {"onnxruntime": OnnxRuntime, "onnx-reference": OnnxReference, "torch": Torch}


def load(name: str, timeout: float | None = None):
    from .base import Target, TargetInfo
    try:
        rt = RUNTIMES[name]()
    except ImportError as exc:
        raise UsageError(f"target {name} needs its library ({exc}); install opcert[runtimes]") from None
    fp = hashlib.sha256(json.dumps([name, rt.details], sort_keys=True).encode()).hexdigest()[:32]
    info = TargetInfo(name, "runtime", rt.version, fp, rt.details)
    return Target(info, rt, rt.unsupported, timeout=timeout)
