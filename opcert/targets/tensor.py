"""Targets of the tensor operators: a kernel given a tensor and the axes its standard reduces over.

Each target (targets.protocol.TensorTarget) is called with the tensor in its own shape and the rows the
standard makes of it, in the target's own terms: ONNX Runtime, onnx.reference and OpenVINO run a one-node
model of the standard's opset (targets.runtimes.onnx_models); torch gets `dim` (trailing axes flattened by a
reshape, other sets by a permute first); JAX gets `axis` as an int or a tuple; a Python callable
`module:function` gets x and `axis=` (an int for one axis, a tuple for several: targets.python); a C kernel
the tensor signature (targets.c_abi). What a target cannot be given (Hardmax in torch and JAX, an axis set
ONNX cannot express) is `unsupported`, with the reason. Each runtime's tensor side is in its file under
targets/runtimes/, named by its row of opcert.runtime_table.
"""

from __future__ import annotations

from opcert.errors import UsageError, choices
from opcert.runtime_table import tensor_target_names
from opcert.targets import runtimes
from opcert.targets.c_abi import CTensorTarget
from opcert.targets.protocol import TensorTarget
from opcert.targets.python import PythonTensorTarget

NAMES = ("opcert",) + tensor_target_names()


def load(name: str) -> TensorTarget:
    if name == "opcert":
        from opcert.targets.own import OpcertTensor  # lazy: numba's loops load where opcert is the target

        return OpcertTensor()
    if name in NAMES:
        return runtimes.load_tensor(name)
    if name.startswith("c:"):
        return CTensorTarget(name)
    if ":" in name:
        return PythonTensorTarget(name)
    raise UsageError(
        f"unknown target {name!r} for a tensor operator; allowed: {choices(NAMES)}, module:function "
        "(f(x, axis=...) -> ndarray), c:PATH:SYMBOL (targets.c_abi)"
    )
