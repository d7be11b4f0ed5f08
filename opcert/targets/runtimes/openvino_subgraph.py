"""OpenVINO's CPU plugin on the operator's decomposed subgraph (onnx_subgraphs, as for onnxruntime-subgraph):
the compiled model of the exported Div, Erf, Add, Mul, Mul that its transformations fuse (into one Eltwise node
on the CPUs tried here), inference precision f32 and one thread as the `openvino` target. The nodes the compiled
model runs are in the result (target_info.details.observed.kernels: each node's layer type, primitive and the
original layers it holds, from the compiled model's runtime model)."""

from __future__ import annotations

from opcert.spec.attrs import user_value
from opcert.targets.runtimes.onnx_models import ONNX_ELEM, built
from opcert.targets.runtimes.onnx_subgraphs import no_subgraph, subgraph_for, subgraph_model
from opcert.targets.runtimes.openvino import OpenVinoElementWise


class OpenVinoSubgraph(OpenVinoElementWise):
    name = "openvino-subgraph"

    def __init__(self):
        super().__init__()
        self.details["model"] = "the operator's decomposed subgraph (opcert.targets.runtimes.onnx_subgraphs)"
        self.observed = {"kernels": {}}

    def _form(self, op, attrs):
        return subgraph_for(op, {k: user_value(op, k, v) for k, v in attrs.items()})

    def _compiled(self, op, dtype, attrs):
        key = (op.name, dtype, tuple(sorted(attrs.items())))
        fresh = key not in self.models

        def build():
            form = self._form(op, attrs)
            model = self.core.read_model(subgraph_model(form, dtype, ONNX_ELEM[dtype], shape=["N"]).SerializeToString())
            return self.core.compile_model(
                model, "CPU", {"INFERENCE_NUM_THREADS": 1, "INFERENCE_PRECISION_HINT": "f32"}
            )

        c = built(self.models, op, dtype, attrs, build)
        if fresh and not isinstance(c, str):
            self._observe(op, dtype, attrs, c)
        return c

    def _observe(self, op, dtype, attrs, compiled) -> None:
        nodes = []
        for node in compiled.get_runtime_model().get_ordered_ops():
            info = node.get_rt_info()
            kind = info["layerType"].astype(str)
            if kind in ("Input", "Output"):
                continue
            nodes.append(f"{kind} ({info['primitiveType'].astype(str)}; {info['originalLayersNames'].astype(str)})")
        label = f"{op.name} {dtype} " + " ".join(f"{k}={user_value(op, k, v)}" for k, v in sorted(attrs.items()))
        self.observed["kernels"][label] = {"form": self._form(op, attrs).form, "nodes_run": nodes}

    def unsupported(self, op, dtype, attrs):
        if self._form(op, attrs) is None:
            return no_subgraph(op)
        if dtype == "bfloat16":
            return f"openvino {self.version}: opcert feeds OpenVINO NumPy arrays, which have no bfloat16"
        c = self._compiled(op, dtype, attrs)
        return (
            f"openvino {self.version} cannot run the subgraph of {op.name} in {dtype}: {c}"
            if isinstance(c, str)
            else None
        )
