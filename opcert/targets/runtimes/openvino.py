"""OpenVINO's CPU plugin, running the one-node ONNX models (onnx_models) through its ONNX frontend; inference
precision pinned to f32 (the plugin would otherwise pick bf16 on CPUs that have it), one thread (the tensor
side runs on n for the layout check); no bfloat16 (opcert feeds it NumPy arrays). The binary operators (Pow):
Z = op(X, Y) of dynamic shapes, one compiled model per operator, dtype and ranks."""

from __future__ import annotations

import os

import numpy as np

from opcert.targets.layouts import LayoutSupport, ThreadCount
from opcert.targets.runtimes.onnx_models import (
    BinaryRuntime,
    OnnxTensorModels,
    binary_model,
    binary_opset,
    built,
    channel_parameters_exact,
    onnx_mismatch,
    onnx_model,
    schema_versions,
)


class OpenVinoElementWise:
    """OpenVINO's CPU plugin, running the one-node ONNX model through its ONNX
    frontend; inference precision pinned to f32 (the plugin would otherwise
    pick bf16 on CPUs that have it), one thread."""

    name = "openvino"

    def __init__(self):
        import openvino as ov

        self.ov = ov
        self.core = ov.Core()
        self.version = ov.__version__
        self.details = {
            "openvino": ov.__version__,
            "device": "CPU",
            "inference_precision_hint": "f32",
            "cpu": self.core.get_property("CPU", "FULL_DEVICE_NAME"),
            "isa": f"oneDNN, ONEDNN_MAX_CPU_ISA={os.environ['ONEDNN_MAX_CPU_ISA']}"
            if os.environ.get("ONEDNN_MAX_CPU_ISA")
            else "oneDNN, as the CPU allows (no cap set)",
        }
        self.models = {}

    def _compiled(self, op, dtype, attrs):
        def build():
            # OpenVINO's BatchNormInference takes X and its parameters in one type (ONNX-15's mixed types fail to
            # convert: "Input element types do not match"): given in X's type, where unsupported() found them exact
            model = self.core.read_model(
                onnx_model(op, dtype, attrs, shape=["N"], parameters_in_x_type=True).SerializeToString()
            )
            return self.core.compile_model(
                model, "CPU", {"INFERENCE_NUM_THREADS": 1, "INFERENCE_PRECISION_HINT": "f32"}
            )

        return built(self.models, op, dtype, attrs, build)

    def unsupported(self, op, dtype, attrs):
        why = onnx_mismatch(op, attrs)
        if why:
            return f"openvino {self.version}: {why}"
        if dtype == "bfloat16":
            return f"openvino {self.version}: opcert feeds OpenVINO NumPy arrays, which have no bfloat16"
        inexact = channel_parameters_exact(op, dtype, attrs)
        if inexact:
            return (
                f"openvino {self.version} takes {op.name}'s parameters in X's type only (ONNX-15's mixed types fail "
                f"to convert), and {inexact}: rounding it first would measure another operator"
            )
        c = self._compiled(op, dtype, attrs)
        return f"openvino {self.version} cannot run {op.name} in {dtype}: {c}" if isinstance(c, str) else None

    def __call__(self, op, x, attrs):
        c = self._compiled(op, x.dtype.name, attrs)
        flat = np.ascontiguousarray(x).reshape(-1)
        y = np.asarray(c([flat])[0])
        return y.reshape(x.shape) if y.size == x.size else y

    def layouts(self):
        return LayoutSupport(
            cannot={
                "strides": "opcert gives OpenVINO a flat contiguous array (its compiled "
                "model has one dynamic dimension)",
                "offsets": "OpenVINO copies its input into a tensor of its own",
                "threads": "the compiled model's INFERENCE_NUM_THREADS is fixed at 1 here",
                "caller threads": "the compiled model's call shares one infer request, "
                "which is not for use from several threads at once",
                "in place": "OpenVINO's outputs are its own tensors",
            }
        )


class OpenVinoTensor(ThreadCount, OnnxTensorModels):
    """OpenVINO's CPU plugin on the standard's one-node ONNX model (its ONNX frontend), inference precision
    pinned to f32 and one thread, as the element-wise side; threads(n) runs it on n (the layout check)."""

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
        return self.refusal(op, std, dtype, reduced, rank)

    def call(self, op, std, x, reduced):
        # the standard's attributes too: another epsilon or num_groups is another model
        key = (op.name, std.key, std.attrs, x.dtype.name, x.shape, tuple(reduced), self.n_threads)
        if key not in self.compiled:
            model = self.core.read_model(self.model(op, std, x, reduced).SerializeToString())
            threads = self.n_threads or 1
            self.compiled[key] = self.core.compile_model(
                model, "CPU", {"INFERENCE_NUM_THREADS": threads, "INFERENCE_PRECISION_HINT": "f32"}
            )
        return np.asarray(self.compiled[key]([np.ascontiguousarray(x)])[0])


class OpenVinoBinary(BinaryRuntime):
    """OpenVINO's CPU plugin on the one-node model Z = op(X, Y) (its ONNX frontend, the model at the newest
    version of the operator the installed `onnx` knows), inference precision pinned to f32 and one thread, as
    the element-wise side."""

    name = "openvino"

    def __init__(self):
        import onnx
        import openvino as ov

        self.core = ov.Core()
        self.version = ov.__version__
        self.known = schema_versions(onnx.defs.get_all_schemas_with_history())
        self.compiled = {}

    def refuse(self, op, std, dtype, attrs):
        if dtype == "bfloat16":
            return "opcert feeds OpenVINO NumPy arrays, which have no bfloat16"
        return None

    def call(self, op, std, x, y, attrs):
        key = (op.name, std.op_name, x.dtype.name, (x.ndim, y.ndim))
        if key not in self.compiled:
            opset = binary_opset(std, self.known.get(std.op_name))
            model = self.core.read_model(binary_model(op, std, x.dtype.name, key[3], opset).SerializeToString())
            self.compiled[key] = self.core.compile_model(
                model, "CPU", {"INFERENCE_NUM_THREADS": 1, "INFERENCE_PRECISION_HINT": "f32"}
            )
        return np.asarray(self.compiled[key]([np.ascontiguousarray(x), np.ascontiguousarray(y)])[0])
