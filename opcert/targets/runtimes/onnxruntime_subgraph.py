"""ONNX Runtime on the decomposed subgraph of an operator (onnx_subgraphs: Gelu as Div, Erf, Add, Mul, Mul; its
tanh form), as a model exported without the operator reaches it: `onnxruntime-subgraph` with ONNX Runtime's
graph optimizations at their default (ORT_ENABLE_ALL: GeluFusion rewrites the erf form into its fused
com.microsoft.Gelu kernel where the provider has one for the dtype), `onnxruntime-subgraph-unfused` with them
off (ORT_DISABLE_ALL: each node's own kernel). Both measure the subgraph against the operator's exact value.

Which kernels ran is in the result (target_info.details.observed.kernels): the nodes of the graph ONNX Runtime
optimized, as it saves it (SessionOptions.optimized_model_filepath), e.g. ["com.microsoft:Gelu"] where the
fusion happened, or the Casts ONNX Runtime inserts around a float16 node its CPU provider has no kernel for.
"""

from __future__ import annotations

import os
import tempfile

from opcert.spec.attrs import user_value
from opcert.targets.runtimes.onnx_models import ONNX_ELEM
from opcert.targets.runtimes.onnx_subgraphs import no_subgraph, subgraph_for, subgraph_model
from opcert.targets.runtimes.onnxruntime import OnnxRuntimeElementWise


class OnnxRuntimeSubgraph(OnnxRuntimeElementWise):
    name = "onnxruntime-subgraph"
    optimized = True

    def __init__(self):
        super().__init__()
        level = "ORT_ENABLE_ALL" if self.optimized else "ORT_DISABLE_ALL"
        self.details["graph_optimization_level"] = level
        self.details["model"] = "the operator's decomposed subgraph (opcert.targets.runtimes.onnx_subgraphs)"
        self.observed = {"kernels": {}}  # what ran, per operator, dtype and attributes (filled as sessions are built)

    def _form(self, op, attrs):
        return subgraph_for(op, {k: user_value(op, k, v) for k, v in attrs.items()})

    def unsupported(self, op, dtype, attrs):
        if self._form(op, attrs) is None:
            return no_subgraph(op)
        s = self._session(op, dtype, attrs)
        return (
            f"onnxruntime {self.version} cannot run the subgraph of {op.name} in {dtype}: {s}"
            if isinstance(s, str)
            else None
        )

    def options(self, threads: int):
        opts = super().options(threads)
        level = self.ort.GraphOptimizationLevel
        opts.graph_optimization_level = level.ORT_ENABLE_ALL if self.optimized else level.ORT_DISABLE_ALL
        return opts

    def model(self, op, dtype, attrs, shape=None, copies: int = 1):
        return subgraph_model(self._form(op, attrs), dtype, ONNX_ELEM[dtype], shape=shape, copies=copies)

    def _session(self, op, dtype, attrs):
        key = (op.name, dtype, tuple(sorted(attrs.items())))
        fresh = key not in self.sessions and self.threads == 1
        sess = super()._session(op, dtype, attrs)
        if fresh and not isinstance(sess, str):
            self._observe(op, dtype, attrs)
        return sess

    def _observe(self, op, dtype, attrs):
        """The nodes ONNX Runtime runs for the subgraph, as its optimizer saves the graph."""
        import onnx

        form = self._form(op, attrs)
        label = f"{op.name} {dtype} " + " ".join(f"{k}={user_value(op, k, v)}" for k, v in sorted(attrs.items()))
        with tempfile.TemporaryDirectory(prefix="opcert-ort-") as tmp:
            path = os.path.join(tmp, "optimized.onnx")
            opts = self.options(1)
            opts.optimized_model_filepath = path
            self.ort.InferenceSession(
                self.model(op, dtype, attrs).SerializeToString(), opts, providers=["CPUExecutionProvider"]
            )
            nodes = [f"{n.domain or 'ai.onnx'}:{n.op_type}" for n in onnx.load(path).graph.node]
        self.observed["kernels"][label] = {"form": form.form, "nodes_run": nodes}


class OnnxRuntimeSubgraphUnfused(OnnxRuntimeSubgraph):
    name = "onnxruntime-subgraph-unfused"
    optimized = False
