"""`opcert`: opcert's own implementation as a target, element-wise (impl.run) and on the tensor operators
(impl.tensor_run). The one trusted target: it runs in the process that owns the verdict."""

from __future__ import annotations

import hashlib

from opcert._version import __version__
from opcert.fingerprint import code_fingerprint
from opcert.impl.run import run_resolved
from opcert.impl.tensor_run import run as run_tensor
from opcert.provenance import simd
from opcert.targets.base import Target, TargetInfo
from opcert.targets.isolation import Isolation
from opcert.targets.layouts import LayoutSupport
from opcert.targets.protocol import TensorTarget


def load(timeout: float | None = None, standard: str | None = None) -> Target:
    """opcert's implementation of the element-wise operators, at `standard`'s definition (None: each
    operator's primary)."""
    # opcert's code runs on NumPy's binary64 ufuncs: NumPy's dispatch (NPY_DISABLE_CPU_FEATURES) is keyed
    fp = hashlib.sha256(f"{code_fingerprint()} {simd()}".encode()).hexdigest()
    info = TargetInfo("opcert", "opcert", __version__, fp, {"numpy_isa": simd()}, isolated=False)
    tgt = Target(info, lambda op, x, attrs: run_resolved(op, x, attrs, standard=standard), timeout=timeout)
    tgt.isolation = Isolation(trusted=True)
    # run_resolved converts a float input into a fresh contiguous binary64 array before any of its own code runs:
    # the rows of a view and the caller's alignment never reach that code (the rows of a view are one long
    # call of their elements, which the long calls drive; bench/README.md, 'Figures behind choices in the code')
    tgt.layouts = LayoutSupport(
        views=True,
        concurrent=True,
        cannot={
            "threads": "opcert's implementation runs on the calling thread",
            "in place": "opcert's implementation has no in-place form",
            "rows and offsets": "opcert's implementation copies its input into a fresh contiguous binary64 array "
            "before any of its own code runs: the rows of a view and the caller's alignment do not reach it "
            "(a view's rows are one long call of their elements, as the long calls are)",
        },
    )
    return tgt


class OpcertTensor(TensorTarget):
    """opcert's implementation of the tensor operators."""

    name = "opcert"
    version = __version__
    no_threads = "opcert's implementation is NumPy on one thread: it has no thread count"

    def call(self, op, std, x, reduced):
        kind = std.axes.kind
        attrs = op.given(std)
        key = std.name  # with its rule for rows with infinite entries (onnx+ieee)
        if kind == "list":
            return run_tensor(op, x, standard=key, axes=list(reduced), attrs=attrs)
        if kind in ("last", "spatial", "groups"):  # the rule's own axes
            return run_tensor(op, x, standard=key, attrs=attrs)
        return run_tensor(op, x, standard=key, axis=reduced[0], attrs=attrs)
