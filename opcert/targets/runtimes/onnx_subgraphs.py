"""Operators as the decomposed ONNX subgraphs exporters write for them, which ONNX Runtime's graph optimizer
rewrites into fused kernels (onnxruntime/core/optimizer: gelu_fusion.cc, fast_gelu_fusion.cc).

One row per form, as data: the operator, the attribute values it stands for, and the nodes, each an ONNX
operator of the default domain with its inputs; constants are initializers of the input's dtype (each
rounded to it, as an exporter writes them: the subgraph's own error is part of what is measured, against
the operator's exact value). The forms follow torch.onnx's exports, the patterns ONNX Runtime's fusions
match:

- Gelu, approximate = none: 0.5 * (x * (1 + erf(x / sqrt 2)))  (GeluFusion: com.microsoft.Gelu);
- Gelu, approximate = tanh: (0.5 * x) * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))  (FastGeluFusion,
  which ONNX Runtime applies for the CUDA and ROCm providers, not the CPU's).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from opcert.targets.runtimes.onnx_models import copy_names, graph_model, scalar_initializer


@dataclass(frozen=True)
class Subgraph:
    op: str  # the catalog's operator
    attrs: dict  # the attribute values (user values) this form computes
    form: str  # its name, as results show it
    constants: dict  # name -> value (rounded to the input's dtype)
    nodes: tuple  # (ONNX operator, (inputs...), output); "X" is the input, "Y" the output


SUBGRAPHS = (
    Subgraph(
        op="Gelu",
        attrs={"approximate": "none"},
        form="erf: Div, Erf, Add, Mul, Mul (torch.onnx's export of F.gelu)",
        constants={"sqrt2": math.sqrt(2.0), "one": 1.0, "half": 0.5},
        nodes=(
            ("Div", ("X", "sqrt2"), "d"),
            ("Erf", ("d",), "e"),
            ("Add", ("e", "one"), "a"),
            ("Mul", ("X", "a"), "m"),
            ("Mul", ("m", "half"), "Y"),
        ),
    ),
    Subgraph(
        op="Gelu",
        attrs={"approximate": "tanh"},
        form="tanh: Pow, Mul, Add, Mul, Tanh, Add, Mul, Mul (torch.onnx's export of F.gelu(approximate='tanh'))",
        constants={"three": 3.0, "k": 0.044715, "s": math.sqrt(2.0 / math.pi), "one": 1.0, "half": 0.5},
        nodes=(
            ("Pow", ("X", "three"), "p"),
            ("Mul", ("p", "k"), "pk"),
            ("Add", ("X", "pk"), "i"),
            ("Mul", ("i", "s"), "u"),
            ("Tanh", ("u",), "t"),
            ("Add", ("t", "one"), "a"),
            ("Mul", ("X", "half"), "xh"),
            ("Mul", ("xh", "a"), "Y"),
        ),
    ),
)


def subgraph_for(op, attrs: dict) -> Subgraph | None:
    """The form of `op` at these attributes ({name: user value}), or None where there is none."""
    for s in SUBGRAPHS:
        if s.op == op.name and all(attrs.get(k) == v for k, v in s.attrs.items()):
            return s
    return None


def no_subgraph(op) -> str:
    """Why a subgraph target skips `op` at attributes with no form here, naming the forms there are."""
    have = "; ".join(f"{s.op} {' '.join(f'{k}={v}' for k, v in s.attrs.items())}" for s in SUBGRAPHS)
    return f"opcert has no decomposed subgraph of {op.name} at these attributes (it has: {have})"


def subgraph_model(sub: Subgraph, dtype: str, elem: int, shape=None, copies: int = 1, opset: int = 17):
    """The ONNX model of the form: Y = f(X), or (copies > 1) Yi = f(Xi) for i < copies, sharing the constants."""
    from onnx import helper

    inits = [scalar_initializer(value, dtype, name) for name, value in sub.constants.items()]
    xs, ys = copy_names(copies)
    nodes = []
    for i, (x, y) in enumerate(zip(xs, ys)):

        def name(v, i=i, x=x, y=y):
            if v == "X":
                return x
            if v == "Y":
                return y
            return v if v in sub.constants else f"{v}_{i}"

        nodes += [helper.make_node(kind, [name(v) for v in ins], [name(out)]) for kind, ins, out in sub.nodes]
    return graph_model(nodes, f"opcert_{sub.op}_subgraph", xs, ys, elem, shape, inits, opset)
