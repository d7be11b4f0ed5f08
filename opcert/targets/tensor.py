"""Targets of the tensor operators: a kernel given a tensor and the axes its standard reduces over.

Each target is called with the tensor in its own shape and the rows the standard makes of it, in the
target's own terms: ONNX Runtime and onnx.reference run a one-node model of the standard's opset (ONNX
opsets 1, 11, 13; DirectML's forms as the opset whose rule makes the same rows: one axis is opset 13,
trailing axes opset 11, proved equal in verify.proofs.axes); torch gets `dim` (trailing axes flattened
by a reshape, other sets by a permute first); JAX gets `axis` as an int or a tuple; a Python callable
`module:function` gets x and `axis=` (an int for one axis, a tuple for several); OpenVINO runs the same
one-node models as ONNX Runtime, through its ONNX frontend. What a target cannot be
given (Hardmax in torch and JAX, an axis set ONNX cannot express) is `unsupported`, with the reason.
"""
from __future__ import annotations

import contextlib

import numpy as np

from opcert.errors import UsageError, choices

NAMES = ("opcert", "onnxruntime", "onnx-reference", "torch", "jax", "openvino")
TORCH = {"Softmax": "softmax", "LogSoftmax": "log_softmax"}
JAX = {"Softmax": "softmax", "LogSoftmax": "log_softmax"}


def _trailing(reduced, rank) -> bool:
    return tuple(reduced) == tuple(range(reduced[0], rank))


class TensorTarget:
    """call(op, std, x, reduced) -> y; unsupported(op, std, dtype, reduced, rank) -> reason or None;
    threads(n) -> a context in which the target runs on n threads, or None where opcert has no switch for
    them (`no_threads` says why)."""
    name = ""
    version = ""
    no_threads = "a callable's threads are its own: opcert has no switch for them"

    def unsupported(self, op, std, dtype, reduced, rank) -> str | None:
        return None

    def threads(self, n: int):
        return None


class _ThreadCount:
    """A target whose runtime objects (sessions, compiled models) are made per thread count: `n_threads`
    is part of their key; threads(n) sets it for the calls inside."""
    n_threads = None        # None: the target's default

    @contextlib.contextmanager
    def threads(self, n: int):
        before, self.n_threads = self.n_threads, int(n)
        try:
            yield
        finally:
            self.n_threads = before


class Opcert(TensorTarget):
    name = "opcert"
    no_threads = "opcert's implementation is NumPy on one thread: it has no thread count"

    def __init__(self):
        from opcert._version import __version__
        self.version = __version__

    def call(self, op, std, x, reduced):
        from opcert.impl.tensor_run import run
        kind = std.axes.kind
        if kind == "list":
            return run(op, x, standard=std.key, axes=list(reduced))
        if kind == "last":
            return run(op, x, standard=std.key)
        return run(op, x, standard=std.key, axis=reduced[0])


class _Onnx(TensorTarget):
    """One-node models of the standard's ONNX opset (or, for DirectML's forms, the opset whose rule
    makes the same rows)."""

    def _opset_axis(self, std, reduced, rank):
        if std.key in ("onnx-1", "onnx-11", "onnx"):
            return {"onnx-1": 1, "onnx-11": 11, "onnx": 13}[std.key], reduced[0]
        if len(reduced) == 1:
            return 13, reduced[0]
        if _trailing(reduced, rank):
            return 11, reduced[0]
        return None, None

    def unsupported(self, op, std, dtype, reduced, rank):
        opset, _ = self._opset_axis(std, reduced, rank)
        if opset is None:
            return (f"ONNX's {op.name} reduces over one axis (opset 13) or the trailing axes (opsets 1, 11): "
                    f"axes {list(reduced)} of a rank-{rank} tensor have no ONNX form")
        return None

    def _refusal(self, op, std, dtype, reduced, rank) -> str | None:
        """The library's own refusal of this case (a type it has no kernel for), from a call on zeros: its
        message, once per case."""
        probe = (op.name, std.key, dtype, reduced, rank)
        if probe not in self.refused:
            from opcert.formats import get_format
            try:
                self.call(op, std, np.zeros((2,) * rank, dtype=get_format(dtype).dtype), reduced)
                self.refused[probe] = None
            except Exception as exc:   # noqa: BLE001 - NOT_IMPLEMENTED and the like: the library's message
                self.refused[probe] = f"{self.name} {self.version}: {str(exc).splitlines()[0][:300]}"
        return self.refused[probe]

    def model(self, op, std, x, reduced):
        from onnx import helper
        from opcert.targets.runtimes import ONNX_ELEM
        opset, axis = self._opset_axis(std, reduced, x.ndim)
        elem = ONNX_ELEM[x.dtype.name]
        node = helper.make_node(op.name, ["X"], ["Y"], axis=int(axis))
        g = helper.make_graph([node], f"opcert_{op.name}", [helper.make_tensor_value_info("X", elem, x.shape)],
                              [helper.make_tensor_value_info("Y", elem, x.shape)])
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], producer_name="opcert")
        m.ir_version = 9
        return m


def _bits_in(x):
    return x.view(np.uint16) if x.dtype.name == "bfloat16" else x


def _bits_out(y, like):
    y = np.asarray(y)
    return y.view(like.dtype) if like.dtype.name == "bfloat16" and y.dtype == np.uint16 else y


class OnnxRuntime(_ThreadCount, _Onnx):
    name = "onnxruntime"

    def __init__(self):
        import onnxruntime as ort
        self.ort = ort
        self.version = ort.__version__
        self.sessions = {}
        self.refused = {}

    def unsupported(self, op, std, dtype, reduced, rank):
        why = super().unsupported(op, std, dtype, reduced, rank)
        if why:
            return why
        return self._refusal(op, std, dtype, reduced, rank)

    def call(self, op, std, x, reduced):
        key = (op.name, std.key, x.dtype.name, x.shape, tuple(reduced), self.n_threads)
        if key not in self.sessions:
            opts = self.ort.SessionOptions()
            opts.log_severity_level = 3
            if self.n_threads:
                opts.intra_op_num_threads = self.n_threads
            self.sessions[key] = self.ort.InferenceSession(self.model(op, std, x, reduced).SerializeToString(), opts,
                                                           providers=["CPUExecutionProvider"])
        sess = self.sessions[key]
        if x.dtype.name == "bfloat16":
            v = self.ort.OrtValue.ortvalue_from_numpy_with_onnx_type(np.ascontiguousarray(x).view(np.uint16), 16)
            return _bits_out(sess.run_with_ort_values(["Y"], {"X": v})[0].numpy(), x)
        return sess.run(None, {"X": x})[0]


class OnnxReference(_Onnx):
    name = "onnx-reference"
    no_threads = "onnx.reference evaluates with NumPy on one thread: it has no thread count"

    def __init__(self):
        import onnx
        from onnx.reference import ReferenceEvaluator
        self.version = onnx.__version__
        self.evaluator = ReferenceEvaluator

    def call(self, op, std, x, reduced):
        return self.evaluator(self.model(op, std, x, reduced)).run(None, {"X": x})[0]


class OpenVino(_ThreadCount, _Onnx):
    """OpenVINO's CPU plugin on the standard's one-node ONNX model (its ONNX frontend), inference precision
    pinned to f32 and one thread, as the element-wise target (targets.runtimes.OpenVino); threads(n) runs
    it on n (the layout check)."""
    name = "openvino"

    def __init__(self):
        import openvino as ov
        self.core = ov.Core()
        self.version = ov.__version__
        self.compiled = {}
        self.refused = {}

    def unsupported(self, op, std, dtype, reduced, rank):
        why = super().unsupported(op, std, dtype, reduced, rank)
        if why:
            return f"openvino {self.version}: {why}"
        if dtype == "bfloat16":
            return f"openvino {self.version}: opcert feeds OpenVINO NumPy arrays, which have no bfloat16"
        return self._refusal(op, std, dtype, reduced, rank)

    def call(self, op, std, x, reduced):
        key = (op.name, std.key, x.dtype.name, x.shape, tuple(reduced), self.n_threads)
        if key not in self.compiled:
            model = self.core.read_model(self.model(op, std, x, reduced).SerializeToString())
            threads = self.n_threads or 1
            self.compiled[key] = self.core.compile_model(model, "CPU", {"INFERENCE_NUM_THREADS": threads,
                                                                        "INFERENCE_PRECISION_HINT": "f32"})
        return np.asarray(self.compiled[key]([np.ascontiguousarray(x)])[0])


class Torch(TensorTarget):
    name = "torch"

    def __init__(self):
        import torch
        torch.set_num_threads(1)
        self.torch = torch
        self.version = torch.__version__

    def unsupported(self, op, std, dtype, reduced, rank):
        if op.name not in TORCH:
            return f"torch {self.version} has no {op.name} function"
        return None

    def threads(self, n: int):
        from opcert.targets.layouts import torch_threads
        return torch_threads(self.torch, n)

    def call(self, op, std, x, reduced):
        torch = self.torch
        t = torch.from_numpy(np.ascontiguousarray(x).view(np.int16)).view(torch.bfloat16) \
            if x.dtype.name == "bfloat16" else torch.from_numpy(np.ascontiguousarray(x))
        fn = getattr(torch.nn.functional, TORCH[op.name])
        r = x.ndim
        if len(reduced) == 1:
            y = fn(t, dim=reduced[0])
        else:
            rest = [a for a in range(r) if a not in reduced]
            perm = rest + list(reduced)
            moved = t.permute(perm)
            shape = moved.shape
            y2 = fn(moved.reshape(*shape[:len(rest)], -1), dim=-1).reshape(shape)
            y = y2.permute([int(i) for i in np.argsort(perm)])
        y = y.contiguous()
        if x.dtype.name == "bfloat16":
            return y.view(torch.int16).numpy().view(x.dtype)
        return y.numpy()


class Jax(TensorTarget):
    name = "jax"
    no_threads = "XLA's CPU thread pool is fixed when JAX starts: a process has no switch for it"

    def __init__(self):
        import jax
        jax.config.update("jax_enable_x64", True)
        self.jax = jax
        self.version = jax.__version__

    def unsupported(self, op, std, dtype, reduced, rank):
        if op.name not in JAX:
            return f"jax {self.version} has no {op.name} function in jax.nn"
        return None

    def call(self, op, std, x, reduced):
        fn = getattr(self.jax.nn, JAX[op.name])
        axis = reduced[0] if len(reduced) == 1 else tuple(reduced)
        return np.asarray(fn(self.jax.numpy.asarray(x), axis=axis))


class Callable(TensorTarget):
    """`module:function`: f(x, axis=int or tuple) -> array."""

    def __init__(self, name: str):
        from opcert.targets.python import split
        import importlib
        module, attr = split(name)
        try:
            obj = importlib.import_module(module)
        except ImportError as exc:
            raise UsageError(f"target {name!r}: cannot import module {module!r} ({exc})") from None
        for part in attr.split("."):
            try:
                obj = getattr(obj, part)
            except AttributeError:
                raise UsageError(f"target {name!r}: module {module!r} has no {attr!r}") from None
        if not callable(obj):
            raise UsageError(f"target {name!r}: {attr!r} is not callable (a function f(x, axis=...) -> ndarray)")
        self.fn = obj
        self.name = name
        self.version = getattr(importlib.import_module(module.split(".")[0]), "__version__", "")

    def call(self, op, std, x, reduced):
        return self.fn(x, axis=reduced[0] if len(reduced) == 1 else tuple(reduced))


def load(name: str) -> TensorTarget:
    if name == "opcert":
        return Opcert()
    if name in ("onnxruntime", "onnx-reference", "torch", "jax", "openvino"):
        from opcert.targets.runtimes import EXTRAS
        try:
            return {"onnxruntime": OnnxRuntime, "onnx-reference": OnnxReference, "torch": Torch, "jax": Jax,
                    "openvino": OpenVino}[name]()
        except ImportError as exc:
            raise UsageError(f"target {name} needs {EXTRAS[name]}, which is not installed ({exc}): pip install "
                             f"'opcert[{EXTRAS[name]}]'") from None
    if name.startswith("c:"):
        from opcert.targets.tensor_c import CTensor
        return CTensor(name)
    if ":" in name:
        return Callable(name)
    raise UsageError(f"unknown target {name!r} for a tensor operator; allowed: {choices(NAMES)}, module:function "
                     "(f(x, axis=...) -> ndarray), c:PATH:SYMBOL (targets.tensor_c)")
