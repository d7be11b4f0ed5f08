"""Implementations under test.

Names: `opcert` (the project's implementation: targets.own), the runtimes (one
row each in opcert.runtime_table, one file each under targets/runtimes/),
`module:function`, any callable f(x, **attrs) -> ndarray (attributes by ONNX
name, as Python floats holding the binary32 values), so `numpy:tanh` audits
NumPy (targets.python), and `c:PATH:SYMBOL`, a C kernel in a shared library
(targets.c_abi). The API and the pytest plugin also take the callable itself
(targets.function): one `module:qualname` names runs as that string does; any
other (a lambda, a closure, a bound method, a partial, a function of __main__)
is measured in the caller's process, and its result says so. What the
measurements call on a target is written down in targets.protocol.

Only `opcert` runs in the process that owns the verdict. Every other target
is loaded and called inside a supervised worker process (opcert.workers): a
target that exits, crashes or hangs fails its check, with the inputs it was
given, and never takes opcert down. `isolation="none"` (CLI `--in-process`)
runs it in the main process instead, faster and without that protection.
"""

from __future__ import annotations

import importlib

import numpy as np

from opcert.errors import TargetFailure, UsageError, choices
from opcert.formats import get_format
from opcert.runtime_table import target_names
from opcert.spec import get_operator
from opcert.targets import c_abi, dependencies, function, python, runtimes
from opcert.targets.base import Target, TargetInfo, UnsupportedByTarget, describe_inputs
from opcert.targets.isolation import Isolation
from opcert.workers import activity, in_worker, run_isolated

# every runtime's name, and NAME:DEVICE for the devices its row lists (the same functions on a GPU; skipped,
# with the reason, where none exists)
RUNTIME_NAMES = target_names()
BUILTIN = ("opcert",) + RUNTIME_NAMES
ISOLATION = ("process", "none")


ALLOWED = (
    f"a name ({choices(BUILTIN)}, module:function or c:PATH:SYMBOL), or from Python (opcert.measure, "
    "opcert_check) a callable f(x, **attrs) -> ndarray"
)


def check_name(name) -> str | Target:
    """Validate a target's spelling without importing anything (UsageError when malformed).

    A Python callable is accepted too (targets.function): the `module:qualname` string where a worker process
    can import it by that name, else a FunctionTarget, measured in this process (its result says so). A Target
    object is returned as it is."""
    if isinstance(name, Target):
        return name
    if not isinstance(name, str) and callable(name):
        return function.from_callable(name)
    if not isinstance(name, str):
        raise UsageError(f"target must be {ALLOWED}; got {type(name).__name__} {_shown(name)}")
    if not name.strip():
        raise UsageError(f"target must be {ALLOWED}; got an empty string")
    name = name.strip()
    if name in BUILTIN:
        return name
    if name.startswith("c:"):
        c_abi.split(name)
        return name
    if ":" in name:
        python.split(name)
        return name
    raise UsageError(
        f"unknown target {name!r}; allowed: {choices(BUILTIN)}, module:function "
        "(a callable f(x, **attrs) -> ndarray, e.g. numpy:tanh), or c:PATH:SYMBOL (a C kernel)"
    )


def _shown(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def trusted(name: str) -> bool:
    """Targets that may run in the main process: opcert's own implementation."""
    return name == "opcert"


DEFAULT_LOAD_LIMIT_S = 300.0  # loading a target (an import, a library's constructors) where no limit is set


def load_target(name, timeout: float | None = None, standard: str | None = None) -> Target:
    """Load `name` in this process (a worker's, unless it is trusted or isolation is off).

    The load runs under the same isolation as a call (targets.isolation): the floating-point
    mode a library sets when it is loaded is the target's, not opcert's; and under a time limit
    (`timeout`, else DEFAULT_LOAD_LIMIT_S), which the supervising process enforces."""
    if isinstance(name, Target):
        return name
    name = check_name(name)
    if name == "opcert":
        # lazy: opcert's implementation (numba's loops) loads where opcert is the target, not in every
        # target's worker process
        from opcert.targets import own  # lazy: see above

        return own.load(timeout, standard)
    iso = Isolation()
    limit = timeout if timeout is not None else DEFAULT_LOAD_LIMIT_S
    hint = (
        ""
        if timeout is not None
        else f"opcert's default time limit for loading a target: {DEFAULT_LOAD_LIMIT_S:g} s; target_timeout "
        "(--target-timeout) sets another"
    )
    try:
        with activity(f"loading target {name}", limit, hint), iso.call(name, "load"):
            tgt = _load(name, timeout)
    except (UsageError, TargetFailure):
        raise
    except BaseException as exc:  # noqa: BLE001 - KeyboardInterrupt, os._exit, ... from the target's code
        if isinstance(exc, KeyboardInterrupt) and iso.user_interrupted:
            raise
        raise TargetFailure(f"target {name} raised {type(exc).__name__} while being loaded: {exc}") from None
    tgt.isolation = iso
    tgt.check_globals("while being loaded")
    return tgt


def _load(name: str, timeout) -> Target:
    if name in RUNTIME_NAMES:
        return runtimes.load(name, timeout)
    if name.startswith("c:"):
        return c_abi.load(name, timeout)
    return python.load(name, timeout)


def _probe(name: str, call=None, timeout=None, preload: tuple = ()) -> TargetInfo:
    # The modules the caller's workers have loaded when they load the target, loaded here too: what the
    # target loads (its dependencies' fingerprint) is measured from the same process state.
    for module in preload:
        importlib.import_module(module)
    if call is None:
        return load_target(name, timeout).info
    op_name, dtype, attrs, standard, first = call
    before = dependencies.begin()
    try:
        tgt = load_target(name, timeout, standard)
        _first_call(tgt, op_name, dtype, dict(attrs), first)
    finally:
        digest, cover = dependencies.end(before)
    tgt.info.dependencies = digest
    tgt.info.details["dependencies"] = cover
    return tgt.info


def _first_call(tgt: Target, op_name: str, dtype: str, attrs: dict, first=None) -> None:
    """The target's first call, so that what it loads then is loaded: on `first` = (lo, hi), the binary32
    magnitudes a sweep gives it first (a crash there names that block), else a few values of every kind.
    A failure is not reported here: the measurement that follows meets it and reports it."""
    fmt = get_format(dtype)
    if first is not None:
        lo, hi = first
        x = np.arange(lo, hi, dtype=np.uint64).astype(np.uint32).view(np.float32)
        label = f"binary32 inputs 0x{lo:08x}..0x{hi - 1:08x} ({hi - lo:,} inputs)"
    else:
        values = [0.0, -0.0, 0.5, -0.5, 1.0, -1.0, 3.0, -3.0, 1e-3, -1e-3, 100.0, -100.0, np.inf, -np.inf, np.nan]
        with np.errstate(all="ignore"):
            x = np.array(values if fmt.kind == "float" else [0, 1, 2, 3], dtype=np.float64).astype(fmt.dtype)
        label = f"{x.size} {dtype} inputs (the target's first call)"
    try:
        tgt.run(get_operator(op_name), x, attrs, label=label)
    except (TargetFailure, UsageError):
        pass


_INFO: dict = {}


def describe_target(name, isolation: str = "process", call=None, timeout=None, preload: tuple = ()) -> TargetInfo:
    """The target's identity (version, code fingerprint), loading it where it would run.

    call = (operator, dtype, ((attribute, value), ...), standard, first inputs): the target is also called
    once (on the binary32 magnitudes first = (lo, hi), or a few values where first is None), and
    `dependencies` of the result covers what it loaded (targets.dependencies): the key of a sweep's
    checkpoints; `preload` names the modules the caller's workers import before they load a target (they are
    not the target's). Raises UsageError when it cannot be found, TargetFailure when loading it fails (an
    exception or an exit at import), WorkerLost when loading it ends its process or overruns its limit."""
    if isinstance(name, Target):
        return name.info
    name = check_name(name)
    if trusted(name) or isolation == "none":
        info = _probe(name, call, timeout, preload)
        info.isolated = False
        return info
    if call is None and name in _INFO:
        return _INFO[name]
    info = _probe(name, call, timeout, preload) if in_worker() else run_isolated(_probe, name, call, timeout, preload)
    if call is None and name in RUNTIME_NAMES:  # a user's module may be edited between two calls; a runtime is not
        _INFO[name] = info
    return info


def get_target(name) -> Target:
    """Backward-compatible name for load_target."""
    return load_target(name)


__all__ = [
    "ALLOWED",
    "BUILTIN",
    "ISOLATION",
    "RUNTIME_NAMES",
    "Target",
    "TargetInfo",
    "UnsupportedByTarget",
    "check_name",
    "describe_inputs",
    "describe_target",
    "get_target",
    "load_target",
    "trusted",
]
