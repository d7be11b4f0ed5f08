"""onnx.reference (`onnx.reference.ReferenceEvaluator`): the ONNX standard's Python reference, on the same
one-node models as ONNX Runtime (at the newest version the installed `onnx` knows), evaluated with NumPy; the
binary operators (Pow) on Z = op(X, Y) of dynamic shapes, one evaluator per operator, dtype and ranks."""

from __future__ import annotations

import numpy as np

from opcert.provenance import simd
from opcert.targets.layouts import LayoutSupport
from opcert.targets.runtimes.onnx_models import (
    BinaryRuntime,
    OnnxTensorModels,
    OnnxVersions,
    binary_model,
    binary_opset,
    built,
    newest_schema,
    onnx_mismatch,
    onnx_model,
    schema_versions,
)


class OnnxReferenceElementWise(OnnxVersions):
    name = "onnx-reference"

    def __init__(self):
        import onnx

        self.version = onnx.__version__
        super().__init__(
            f"onnx.reference {onnx.__version__}", schema_versions(onnx.defs.get_all_schemas_with_history())
        )
        self.details = {
            "onnx": onnx.__version__,
            "numpy": np.__version__,
            "isa": f"NumPy: {simd()}",
            "newest_onnx_schema": newest_schema(self.known),
        }
        self.evaluators = {}

    def _evaluator(self, op, dtype, attrs):
        from onnx.reference import ReferenceEvaluator

        return built(
            self.evaluators,
            op,
            dtype,
            attrs,
            lambda: ReferenceEvaluator(onnx_model(op, dtype, attrs, opset=self.opset(op, dtype))),
        )

    def unsupported(self, op, dtype, attrs):
        why = onnx_mismatch(op, attrs)
        if why:
            return f"onnx.reference {self.version}: {why}"
        why = self.too_new(op, dtype)
        if why:
            return why
        e = self._evaluator(op, dtype, attrs)
        return f"onnx.reference {self.version} cannot run {op.name}: {e}" if isinstance(e, str) else None

    def __call__(self, op, x, attrs):
        return self._evaluator(op, x.dtype.name, attrs).run(None, {"X": x})[0]

    def layouts(self):
        return LayoutSupport(
            views=True,
            rows=True,
            rows_are_calls=True,
            offsets=True,
            cannot={
                "threads": "onnx.reference runs NumPy on one thread",
                "in place": "onnx.reference has no in-place form",
            },
        )


class OnnxReferenceTensor(OnnxTensorModels):
    name = "onnx-reference"
    no_threads = "onnx.reference evaluates with NumPy on one thread: it has no thread count"

    def __init__(self):
        import onnx
        from onnx.reference import ReferenceEvaluator

        self.version = onnx.__version__
        self.evaluator = ReferenceEvaluator

    def call(self, op, std, x, reduced):
        return self.evaluator(self.model(op, std, x, reduced)).run(None, {"X": x})[0]


class OnnxReferenceBinary(BinaryRuntime):
    name = "onnx-reference"

    def __init__(self):
        import onnx
        from onnx.reference import ReferenceEvaluator

        self.version = onnx.__version__
        self.known = schema_versions(onnx.defs.get_all_schemas_with_history())
        self.evaluator = ReferenceEvaluator
        self.evaluators = {}

    def call(self, op, std, x, y, attrs):
        key = (op.name, std.op_name, x.dtype.name, (x.ndim, y.ndim))
        if key not in self.evaluators:
            opset = binary_opset(std, self.known.get(std.op_name))
            self.evaluators[key] = self.evaluator(binary_model(op, std, x.dtype.name, key[3], opset))
        a, b = op.inputs
        return self.evaluators[key].run(None, {a: x, b: y})[0]
