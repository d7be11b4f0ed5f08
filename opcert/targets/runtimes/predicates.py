"""The runtimes' predicate sides (spec.predicate: IsNaN, IsInf), one class per runtime, named by its row of
opcert.runtime_table (`predicate`).

ONNX Runtime, onnx.reference and OpenVINO run a one-node model Y = op(X) with Y of tensor(bool), at the newest
version of the operator the runtime knows (IsNaN-20 and IsInf-20 where it knows them), the attributes
(detect_positive, detect_negative) always written out; torch and JAX call the library function the operator's
file names for the attributes (torch.isnan, isinf, isposinf, isneginf; jax.numpy's of the same names). The
runtimes implement ONNX's standard only: DirectML's is unsupported on each, with the reason. The output is the
library's as it gives it (verify.predicate judges its dtype and shape): no side casts it.

Where an input comes as a view (the layout property's strided and reversed inputs), torch sees its strides
(torch.from_numpy) unless they are negative, which torch cannot take (then a contiguous copy); ONNX Runtime's and
onnx.reference's Python APIs take the array as it is; OpenVINO gets a flat contiguous copy (its compiled model has
one dynamic dimension: the 2-D input is reshaped, and the output shaped back)."""

from __future__ import annotations

import os

import numpy as np

from opcert.formats import get_format
from opcert.spec.predicate import CHECKED_DTYPES
from opcert.targets.runtimes.onnx_models import ONNX_ELEM, is_bfloat16, schema_versions

ONNX_BOOL = 9  # onnx.TensorProto.BOOL


def predicate_opset(std, dtype: str, known: frozenset[int] | None) -> tuple[int | None, str | None]:
    """(the version of the operator a one-node model is built at, None) or (None, why no version fits): the
    standard's newest version the runtime knows (`known`: its versions of the operator; empty or None: all),
    where that version lists `dtype`."""
    versions = [int(s.since) for s in std.support if dtype in s.dtypes]
    if not versions:
        return None, f"ONNX's {std.op_name} lists no {dtype}"
    newest = int(std.support[-1].since)
    top = min(newest, max(known)) if known else newest
    fits = [v for v in versions if v <= top]
    if not fits:
        return None, (
            f"it knows ONNX {std.op_name} up to {std.op_name}-{max(known)}; {dtype} is in {std.op_name}-"
            f"{min(versions)} and later"
        )
    return top, None


def predicate_model(op, std, dtype: str, attrs: dict, opset: int, shape=None):
    """A one-node ONNX model Y = op(X): X of `dtype` and `shape` (None: any rank), Y of tensor(bool), the
    standard's attributes written out (ONNX's names)."""
    from onnx import helper

    node = helper.make_node(
        std.op_name, ["X"], ["Y"], **{std.attribute_names[k]: int(v) for k, v in attrs.items() if std.has(k)}
    )
    graph = helper.make_graph(
        [node],
        f"opcert_{op.name}",
        [helper.make_tensor_value_info("X", ONNX_ELEM[dtype], shape)],
        [helper.make_tensor_value_info("Y", ONNX_BOOL, shape)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], producer_name="opcert")
    model.ir_version = 9  # what ONNX Runtime 1.16 and later accept
    return model


def _key(op, dtype: str, attrs: dict) -> tuple:
    return (op.name, dtype, tuple(sorted((k, int(v)) for k, v in attrs.items())))


class PredicateRuntime:
    """What the runtimes' predicate sides share. unsupported(): opcert's objection (a standard other than ONNX's,
    a dtype ONNX's operator does not list), then the side's own (`refuse`), then the library's refusal of a call
    on two zeros (its message), answered once per case. Subclasses set name and version and define call()."""

    name = ""
    version = ""

    def refuse(self, op, std, dtype: str, attrs: dict) -> str | None:
        return None

    def unsupported(self, op, std, dtype, attrs):
        cache = self.__dict__.setdefault("_refused", {})
        key = (std.key,) + _key(op, dtype, attrs)
        if key not in cache:
            label = f"{self.name} {self.version}"
            why = None
            if std.key != "onnx":
                why = (
                    f"{label}: no runtime here runs DirectML ({std.op_name}): the runtimes implement ONNX's "
                    f"{op.name} only"
                )
            elif not std.lists(dtype):
                listed = ", ".join(sorted({d for s in std.support for d in s.dtypes}))
                why = f"{label}: ONNX's {std.op_name} lists no {dtype} (its types: {listed})"
            elif dtype not in CHECKED_DTYPES:
                why = f"{label}: opcert checks {', '.join(CHECKED_DTYPES)}; it has no format for {dtype}"
            if why is None:
                own = self.refuse(op, std, dtype, attrs)
                why = f"{label}: {own}" if own else None
            if why is None:
                zeros = np.zeros(2, dtype=get_format(dtype).dtype)
                try:
                    self.call(op, std, zeros, attrs)
                except Exception as exc:  # noqa: BLE001 - NOT_IMPLEMENTED and the like: the library's message
                    first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:300]
                    why = f"{label} cannot run {std.op_name} in {dtype}: {first}"
            cache[key] = why
        return cache[key]


class OnnxModels(PredicateRuntime):
    """A side that builds one-node models at the newest version of the operator it knows (`known`)."""

    known: dict

    def opset(self, std, dtype: str) -> tuple[int | None, str | None]:
        return predicate_opset(std, dtype, self.known.get(std.op_name))

    def refuse(self, op, std, dtype, attrs):
        _, why = self.opset(std, dtype)
        return why


class OnnxRuntimePredicate(OnnxModels):
    """ONNX Runtime's CPU execution provider on Y = op(X) of any rank, one intra-op thread; bfloat16 given as its
    bits (an OrtValue of tensor(bfloat16) over a uint16 buffer)."""

    name = "onnxruntime"

    def __init__(self):
        import onnxruntime as ort

        self.ort = ort
        self.version = ort.__version__
        try:  # the versions of each operator ONNX Runtime knows (its binding lists them)
            self.known = schema_versions(ort.capi._pybind_state.get_all_operator_schema())
        except Exception:  # noqa: BLE001 - a minimal build without schemas: the standard's newest is built
            self.known = {}
        self.sessions = {}

    def _session(self, op, std, dtype: str, attrs: dict):
        key = _key(op, dtype, attrs)
        if key not in self.sessions:
            opset, why = self.opset(std, dtype)
            if opset is None:
                raise ValueError(why)
            opts = self.ort.SessionOptions()
            opts.intra_op_num_threads = 1
            opts.inter_op_num_threads = 1
            opts.log_severity_level = 3
            model = predicate_model(op, std, dtype, attrs, opset)
            self.sessions[key] = self.ort.InferenceSession(
                model.SerializeToString(), opts, providers=["CPUExecutionProvider"]
            )
        return self.sessions[key]

    def call(self, op, std, x, attrs):
        sess = self._session(op, std, x.dtype.name, attrs)
        if is_bfloat16(x):
            v = self.ort.OrtValue.ortvalue_from_numpy_with_onnx_type(
                np.ascontiguousarray(x).view(np.uint16), ONNX_ELEM["bfloat16"]
            )
            return np.asarray(sess.run_with_ort_values(["Y"], {"X": v})[0].numpy())
        return sess.run(["Y"], {"X": x})[0]


class OnnxReferencePredicate(OnnxModels):
    """onnx.reference's ReferenceEvaluator (NumPy) on Y = op(X) of any rank."""

    name = "onnx-reference"

    def __init__(self):
        import onnx
        from onnx.reference import ReferenceEvaluator

        self.version = onnx.__version__
        self.known = schema_versions(onnx.defs.get_all_schemas_with_history())
        self.evaluator = ReferenceEvaluator
        self.evaluators = {}

    def call(self, op, std, x, attrs):
        key = _key(op, x.dtype.name, attrs)
        if key not in self.evaluators:
            opset, why = self.opset(std, x.dtype.name)
            if opset is None:
                raise ValueError(why)
            self.evaluators[key] = self.evaluator(predicate_model(op, std, x.dtype.name, attrs, opset))
        return self.evaluators[key].run(None, {"X": x})[0]


class OpenVinoPredicate(OnnxModels):
    """OpenVINO's CPU plugin on Y = op(X) through its ONNX frontend (the model at the newest version of the
    operator the installed `onnx` knows), one dynamic dimension, one thread, inference precision pinned to f32;
    bfloat16 given as its bits (an ov.Tensor of bf16)."""

    name = "openvino"

    def __init__(self):
        import onnx
        import openvino as ov

        self.ov = ov
        self.core = ov.Core()
        self.version = ov.__version__
        self.known = schema_versions(onnx.defs.get_all_schemas_with_history())
        self.compiled = {}

    def call(self, op, std, x, attrs):
        key = _key(op, x.dtype.name, attrs)
        if key not in self.compiled:
            opset, why = self.opset(std, x.dtype.name)
            if opset is None:
                raise ValueError(why)
            model = predicate_model(op, std, x.dtype.name, attrs, opset, shape=["N"])
            self.compiled[key] = self.core.compile_model(
                self.core.read_model(model.SerializeToString()),
                "CPU",
                {"INFERENCE_NUM_THREADS": 1, "INFERENCE_PRECISION_HINT": "f32"},
            )
        flat = np.ascontiguousarray(x).reshape(-1)
        if is_bfloat16(x):
            t = self.ov.Tensor(self.ov.Type.bf16, self.ov.Shape([flat.size]))
            t.data.view(np.uint16)[:] = flat.view(np.uint16)
            flat = t
        y = np.asarray(self.compiled[key]([flat])[0])
        return y.reshape(x.shape) if y.size == x.size else y


class LibraryFunctions(PredicateRuntime):
    """A side that calls the library's function for the attributes (spec.predicate's `library_function`)."""

    def refuse(self, op, std, dtype, attrs):
        if op.library_function(attrs, std.key) is None:
            named = ", ".join(f"{k} = {int(v)}" for k, v in sorted(attrs.items()))
            return (
                f"no {self.name} function is {std.op_name} at {named} (ONNX's model is valid: every output "
                "false; the runtimes that run ONNX models run it)"
            )
        return None


class TorchPredicate(LibraryFunctions):
    """torch.isnan, torch.isinf, torch.isposinf or torch.isneginf (by the attributes) on a CPU tensor that shares
    the input's buffer (torch.from_numpy; bfloat16 through its bits), one thread as the element-wise side."""

    name = "torch"

    def __init__(self):
        import torch

        torch.set_num_threads(1)
        self.torch = torch
        self.version = str(torch.__version__)

    def _tensor(self, a: np.ndarray):
        if any(s < 0 for s in a.strides) or not a.flags.writeable:  # torch.from_numpy takes neither
            a = np.ascontiguousarray(a).copy()
        if a.dtype.name == "bfloat16":
            return self.torch.from_numpy(a.view(np.int16)).view(self.torch.bfloat16)
        return self.torch.from_numpy(a)

    def call(self, op, std, x, attrs):
        fn = getattr(self.torch, op.library_function(attrs, std.key))
        y = fn(self._tensor(x))
        if not isinstance(y, self.torch.Tensor):
            return np.asarray(y)  # judged as the wrong thing it is
        return y.detach().cpu().numpy()


class JaxPredicate(LibraryFunctions):
    """jax.numpy.isnan, isinf, isposinf or isneginf (by the attributes), jit-compiled on the CPU, 64-bit enabled
    so that float64 stays float64."""

    name = "jax"

    def __init__(self):
        os.environ.setdefault("JAX_PLATFORMS", "cpu")
        import jax

        jax.config.update("jax_enable_x64", True)
        self.jax = jax
        self.version = jax.__version__
        self.dev = jax.devices("cpu")[0]
        self.compiled = {}

    def call(self, op, std, x, attrs):
        name = op.library_function(attrs, std.key)
        if name not in self.compiled:
            self.compiled[name] = self.jax.jit(getattr(self.jax.numpy, name))
        return np.asarray(self.compiled[name](self.jax.device_put(x, self.dev)))
