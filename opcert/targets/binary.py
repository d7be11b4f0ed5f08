"""Targets of the binary element-wise operators (spec.binary: Pow): a kernel given two tensors x and y of one
dtype that broadcast against each other, z = f(x, y).

Each target (targets.protocol.BinaryTarget) is called with the operator, the standard checked, both inputs and
the attributes beside them (DirectML's scale and bias). `opcert` is opcert's own implementation
(`OpcertBinary`: the standard's expression evaluated by expr.numpy_eval, which loads neither numba nor a
runtime). ONNX Runtime, onnx.reference and OpenVINO run a one-node model Z = op(X, Y) of dynamic shapes
(targets.runtimes.onnx_models.binary_model); torch and JAX call the function the operator's file declares
(BinaryOperator.runtimes: torch.pow, jax.numpy.power); a Python callable `module:function` gets x and y
(`PythonBinaryTarget`: numpy:power is NumPy's np.power on the inputs' own dtype). The runtimes implement ONNX's
standard only: DirectML's is `unsupported` on each of them, with the reason. Binary operators have no C ABI yet
(targets.c_abi's signatures take one input). Each runtime's binary side is in its file under
targets/runtimes/, named by its row of opcert.runtime_table.
"""

from __future__ import annotations

import numpy as np

from opcert._version import __version__
from opcert.errors import UsageError, choices
from opcert.expr.numpy_eval import eval_numpy
from opcert.formats import FloatFormat, format_of, to_format
from opcert.runtime_table import binary_target_names, runtime_of
from opcert.targets import runtimes
from opcert.targets.protocol import BinaryTarget
from opcert.targets.python import keywords_not_taken, load_callable

NAMES = ("opcert",) + binary_target_names()


class OpcertBinary(BinaryTarget):
    """opcert's implementation of the binary operators: the standard's `implementation`, an expression of x
    with the second input as the attribute `op.second`, evaluated by expr.numpy_eval in binary64 on the two
    inputs widened exactly and broadcast to their common shape (the standard's defaults for the attributes not
    given), then rounded once into x's format (formats.to_format: bfloat16 by round_float64, not ml_dtypes'
    cast, which rounds twice)."""

    name = "opcert"
    version = __version__

    def unsupported(self, op, std, dtype, attrs):
        if not any(dtype in s.dtypes for s in std.support):
            listed = sorted({d for s in std.support for d in s.dtypes})
            return f"opcert {self.version}: {std.op_name} lists no {dtype} (its types: {', '.join(listed)})"
        plain: dict = {}  # another standard's attribute at its default (DirectML's scale = 1) is the plain function
        for s in op.standards:
            plain.update(s.defaults or {})
        extra = [k for k, v in attrs.items() if not std.has(k) and not (k in plain and float(v) == float(plain[k]))]
        if extra:
            return f"opcert {self.version}: {std.op_name} ({std.key}) has no attribute {', '.join(extra)}"
        return None

    def call(self, op, std, x, y, attrs):
        fmt = format_of(x)
        if not isinstance(fmt, FloatFormat):
            raise TypeError(f"opcert's {op.name} takes floating-point inputs, not {x.dtype}")
        with np.errstate(invalid="ignore"):  # widening is exact; ml_dtypes' NaNs raise NumPy's invalid flag
            x64, y64 = np.broadcast_arrays(np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64))
        values = {**(std.defaults or {}), **attrs}
        a64 = {k: float(v) for k, v in values.items()}
        z = eval_numpy(std.implementation, x64, {**a64, op.second: y64}, input_bits=fmt.p)
        return to_format(np.broadcast_to(z, x64.shape), fmt)


class PythonBinaryTarget(BinaryTarget):
    """`module:function` for the binary operators: f(x, y) -> ndarray, called on the inputs as given (their own
    dtype: bfloat16 arrays are ml_dtypes.bfloat16). An attribute whose value is not the standard's default
    (DirectML's scale and bias) is passed by keyword, by opcert's name, where the function's signature takes
    it; where it does not, the case is unsupported."""

    def __init__(self, name: str):
        self.fn, self.version = load_callable(name, "f(x, y) -> ndarray")
        self.name = name

    @staticmethod
    def _given(std, attrs: dict) -> dict:
        defaults = std.defaults or {}
        return {k: float(v) for k, v in attrs.items() if k not in defaults or float(v) != float(defaults[k])}

    def unsupported(self, op, std, dtype, attrs):
        return keywords_not_taken(self.name, self.fn, self._given(std, attrs))

    def call(self, op, std, x, y, attrs):
        return self.fn(x, y, **self._given(std, attrs))


def load(name: str) -> BinaryTarget:
    if name == "opcert":
        return OpcertBinary()
    if name in NAMES:
        return runtimes.load_binary(name)
    if name.startswith("c:"):
        raise UsageError(
            f"target {name!r}: binary operators do not yet have a C ABI (targets.c_abi's signatures take one "
            f"input tensor); use {choices(NAMES)} or a Python callable module:function (f(x, y) -> ndarray)"
        )
    if runtime_of(name) is not None:  # NAME:DEVICE of a runtime (torch:cuda)
        return runtimes.load_binary(name)
    if ":" in name:
        return PythonBinaryTarget(name)
    raise UsageError(
        f"unknown target {name!r} for a binary operator; allowed: {choices(NAMES)}, module:function "
        "(f(x, y) -> ndarray, e.g. numpy:power)"
    )
