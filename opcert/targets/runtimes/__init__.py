"""The runtimes under test, one file each holding its element-wise, tensor and binary sides (onnxruntime.py,
onnx_reference.py, torch.py, jax.py, openvino.py; onnx_models.py: the one-node ONNX models three of them
run; functions.py: the library functions the catalog declares, which torch and JAX call).

Which runtimes there are, and where each side is, is opcert.runtime_table's: a runtime's sides are imported
when it is loaded, so importing opcert imports no runtime. Each side builds what its library needs once per
operator, dtype and attributes. A combination the library does not support is reported as unsupported with
the library's own reason; anything that fails at run time is a crash.
"""

from __future__ import annotations

import hashlib
import importlib
import json

from opcert.errors import UsageError
from opcert.runtime_table import Runtime, runtime_of
from opcert.targets.base import Target, TargetInfo
from opcert.targets.protocol import BinaryTarget, TensorTarget

__all__ = ["load", "load_binary", "load_tensor", "resolve", "row"]


def row(name: str) -> Runtime:
    """The table's row of a runtime target (NAME or NAME:DEVICE); UsageError where there is none."""
    found = runtime_of(name)
    if found is None:
        raise UsageError(f"{name!r} is no runtime of opcert.runtime_table")
    return found


def resolve(spec: str):
    """The object a row names as "module:attribute" (the module imported now)."""
    module, _, attribute = spec.partition(":")
    obj = importlib.import_module(module)
    for part in attribute.split("."):
        obj = getattr(obj, part)
    return obj


def load(name: str, timeout: float | None = None) -> Target:
    """The runtime's element-wise side, in the call contract of a Target (UsageError naming the extra to
    install where its library is missing)."""
    r = row(name)
    _, _, device = name.partition(":")
    side = resolve(r.elementwise)
    try:
        rt = side(device) if device else side()
    except ImportError as exc:
        raise UsageError(
            f"target {name} needs {r.extra}, which is not installed ({exc}): pip install "
            f"'opcert[{r.extra}]' (or 'opcert[runtimes]' for every runtime)"
        ) from None
    fp = hashlib.sha256(json.dumps([name, rt.details], sort_keys=True).encode()).hexdigest()[:32]
    # plain str and JSON values: torch.__version__ is a TorchVersion, and a result holding one imports torch
    # where it is unpickled (the parent of an isolated worker, which must not load a multithreaded runtime)
    info = TargetInfo(name, "runtime", str(rt.version), fp, json.loads(json.dumps(rt.details, default=str)))
    if getattr(rt, "observed", None) is not None:
        # what the runtime reports as it builds its sessions (the kernels a fused graph ran): this dict, filled
        # later, and read where the result is made (plain str values)
        info.details["observed"] = rt.observed
    tgt = Target(info, rt, rt.unsupported, timeout=timeout)
    layouts = rt.layouts()
    # calls from other threads: the row's, where the target can be given layouts at all (not on a GPU, whose
    # input is a copy the device makes)
    layouts.concurrent = r.concurrent and "every layout" not in layouts.cannot
    if not r.concurrent:
        layouts.cannot.setdefault(
            "caller threads",
            f"{r.name}'s row in opcert.runtime_table says its calls are not to be made from several threads at once",
        )
    tgt.layouts = layouts
    return tgt


def load_tensor(name: str) -> TensorTarget:
    """The runtime's tensor side (UsageError naming the extra to install where its library is missing)."""
    r = row(name)
    if r.tensor is None or r.name != name:
        raise UsageError(f"target {name} has no tensor side (opcert.runtime_table)")
    side = resolve(r.tensor)
    try:
        return side()
    except ImportError as exc:
        raise UsageError(
            f"target {name} needs {r.extra}, which is not installed ({exc}): pip install 'opcert[{r.extra}]'"
        ) from None


def load_binary(name: str) -> BinaryTarget:
    """The runtime's binary side (UsageError naming the extra to install where its library is missing)."""
    r = row(name)
    if r.name != name:
        raise UsageError(f"target {name}: the binary operators run on the CPU only (target {r.name})")
    if r.binary is None:
        raise UsageError(f"target {name} has no binary side (opcert.runtime_table)")
    side = resolve(r.binary)
    try:
        return side()
    except ImportError as exc:
        raise UsageError(
            f"target {name} needs {r.extra}, which is not installed ({exc}): pip install 'opcert[{r.extra}]'"
        ) from None
