"""Implementations under test.

Names: `opcert` (the project's implementation), the runtimes (`onnxruntime`,
`onnx-reference`, `torch`, `jax`, `openvino`), `module:function`, any callable
f(x, **attrs) -> ndarray (attributes by ONNX name, as Python floats holding
the binary32 values), so `numpy:tanh` audits NumPy, and `c:PATH:SYMBOL`, a C
kernel in a shared library (targets.c_abi).

Only `opcert` runs in the process that owns the verdict. Every other target
is loaded and called inside a supervised worker process (opcert.workers): a
target that exits, crashes or hangs fails its check, with the inputs it was
given, and never takes opcert down. `isolation="none"` (CLI `--in-process`)
runs it in the main process instead, faster and without that protection.
"""
from __future__ import annotations

from ..errors import UsageError, choices
from .base import Target, TargetInfo, Unsupported, describe_inputs

RUNTIME_NAMES = ("onnxruntime", "onnx-reference", "torch", "jax", "openvino",
                 "torch:cuda", "jax:gpu")   # the same functions on a GPU; skipped, with the reason, where none exists
BUILTIN = ("opcert",) + RUNTIME_NAMES
ISOLATION = ("process", "none")


def check_name(name) -> str:
    """Validate a target's spelling without importing anything (UsageError when malformed)."""
    if not isinstance(name, str) or not name.strip():
        raise UsageError(f"target must be a non-empty string; allowed: {choices(BUILTIN)}, module:function, "
                         "or c:PATH:SYMBOL")
    name = name.strip()
    if name in BUILTIN:
        return name
    if name.startswith("c:"):
        from .c_abi import split as c_split
        c_split(name)
        return name
    if ":" in name:
        from .python import split
        split(name)
        return name
    raise UsageError(f"unknown target {name!r}; allowed: {choices(BUILTIN)}, module:function "
                     "(a callable f(x, **attrs) -> ndarray, e.g. numpy:tanh), or c:PATH:SYMBOL (a C kernel)")


def trusted(name: str) -> bool:
    """Targets that may run in the main process: opcert's own implementation."""
    return name == "opcert"


def load_target(name, timeout: float | None = None) -> Target:
    """Load `name` in this process (a worker's, unless it is trusted or isolation is off)."""
    if isinstance(name, Target):
        return name
    name = check_name(name)
    if name == "opcert":
        from .. import __version__
        from ..impl.run import run_resolved
        from ..verify.sweep import code_fingerprint
        info = TargetInfo("opcert", "opcert", __version__, code_fingerprint(), {}, isolated=False)
        return Target(info, lambda op, x, attrs: run_resolved(op, x, attrs), timeout=timeout)
    if name in RUNTIME_NAMES:
        from .runtimes import load
        return load(name, timeout)
    if name.startswith("c:"):
        from .c_abi import load
        return load(name, timeout)
    from .python import load
    return load(name, timeout)


def _probe(name: str) -> TargetInfo:
    # The modules a sweep worker has loaded when it loads the target, loaded
    # here too: the code fingerprint is computed over the same process state.
    from ..verify import accuracy, sweep  # noqa: F401
    return load_target(name).info


_INFO: dict = {}


def describe_target(name, isolation: str = "process") -> TargetInfo:
    """The target's identity (version, code fingerprint), loading it where it would run.

    Raises UsageError when it cannot be found, TargetFailure when loading it
    fails (an exception or an exit at import), WorkerLost when loading it ends
    its process."""
    if isinstance(name, Target):
        return name.info
    name = check_name(name)
    if trusted(name) or isolation == "none":
        info = load_target(name).info
        info.isolated = False
        return info
    if name in _INFO:
        return _INFO[name]
    from ..workers import in_worker, run_isolated
    info = _probe(name) if in_worker() else run_isolated(_probe, name)
    if name in RUNTIME_NAMES:   # a user's module may be edited between two calls; a runtime is not
        _INFO[name] = info
    return info


def get_target(name) -> Target:
    """Backward-compatible name for load_target."""
    return load_target(name)


__all__ = ["BUILTIN", "ISOLATION", "Target", "TargetInfo", "Unsupported", "check_name", "describe_inputs",
           "describe_target", "get_target", "load_target", "trusted"]
