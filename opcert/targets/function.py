"""Python callables given as targets: `opcert.measure("Tanh", my_tanh, ...)`, `opcert_check("Tanh", my_tanh, ...)`.

A callable is measured as `module:function` is (the same call `f(x, **attrs)`, the same checks of what it
returns), and where it runs depends on whether a fresh process can find it again:

- a function that `module:qualname` names (a module-level function, or a function reached through module-level
  classes, of a module a fresh process imports from sys.path, not `__main__`) becomes that string target, and runs
  in a supervised worker process like `--target module:qualname`, with the same result, name and `reproduce` command;
- anything else (a lambda, a closure, a bound method, a functools.partial, a callable object, a function of
  `__main__` or of a module no fresh process can import) cannot be sent to a worker: it is measured in the
  caller's process (`FunctionTarget`), and the result says so (its `isolation` is "none", its notes say why and
  what that loses), and says that no command line reproduces it.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import inspect
import marshal
import os
import sys

import numpy as np

from opcert.errors import UsageError
from opcert.provenance import simd
from opcert.spec.attrs import user_value
from opcert.targets.base import Target, TargetInfo
from opcert.targets.layouts import PYTHON, LayoutSupport
from opcert.targets.python import split


def from_callable(fn) -> str | FunctionTarget:
    """The target a callable stands for: its `module:qualname` string where a worker can import it by that
    name, else a FunctionTarget measured in this process."""
    name, _ = importable(fn)
    return name if name is not None else FunctionTarget(fn)


def importable(fn) -> tuple[str | None, str]:
    """(`module:qualname` when a fresh process with this sys.path imports that name and finds fn itself, else
    None; why not, in words, else "")."""
    what = kind(fn)
    if what != "function":
        return None, _WHY[what]
    module_name = getattr(fn, "__module__", None)
    qualname = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None)
    if not isinstance(module_name, str) or not isinstance(qualname, str):
        return None, "it has no module and name a worker process could import it by"
    if module_name == "__main__" or module_name == "__mp_main__":
        return None, (
            "a function of __main__ (the script, notebook or interactive session being run) cannot be "
            "imported by a worker process"
        )
    if "<locals>" in qualname.split("."):
        return None, "a function defined inside another function (a closure) cannot be sent to a worker process"
    try:
        split(f"{module_name}:{qualname}")  # the spelling `module:function` accepts
    except UsageError:
        return None, f"{module_name}:{qualname} is not a name `module:function` can spell"
    module = sys.modules.get(module_name)
    obj = module
    for part in qualname.split("."):
        obj = getattr(obj, part, None)
    if module is None or obj is not fn:
        return None, (
            f"{module_name}.{qualname} does not name this object in its module (it was replaced, renamed or "
            "made at run time), so a worker process could not find it"
        )
    why = _not_on_path(module)
    if why:
        return None, why
    return f"{module_name}:{qualname}", ""


def _not_on_path(module) -> str:
    """Why a fresh process with this sys.path would not import `module` from the same file ("" where it would):
    its top-level package is looked up on sys.path as the worker will look it up."""
    spec = getattr(module, "__spec__", None)
    name = module.__name__
    if spec is None:
        return f"module {name} was made at run time (it has no import spec), so a worker process cannot import it"
    top = name.split(".")[0]
    top_module = sys.modules.get(top)
    if top_module is None:
        return f"module {top}, the package of {name}, is not loaded"
    if top in sys.builtin_module_names:
        return ""
    found = None
    for finder in sys.meta_path:  # as an import in a fresh process looks (sys.modules aside)
        find = getattr(finder, "find_spec", None)
        if find is None:
            continue
        try:
            found = find(top, None)
        except Exception:  # noqa: BLE001 - a finder of the user's that fails: not importable by it
            found = None
        if found is not None:
            break
    if found is None:
        return f"module {top} is not on sys.path, so a worker process could not import it"
    mine = getattr(top_module, "__file__", None)
    if found.origin and mine and os.path.realpath(found.origin) != os.path.realpath(mine):
        return f"module {top} on sys.path is {found.origin}, not the {mine} this function comes from"
    return ""


def kind(fn) -> str:
    """What sort of callable fn is: function (a plain function, a builtin, a ufunc), lambda, method (bound),
    partial, or object (an instance of a class with __call__)."""
    if isinstance(fn, functools.partial):
        return "partial"
    if inspect.ismethod(fn):
        return "method"
    if getattr(fn, "__name__", None) == "<lambda>":
        return "lambda"
    if inspect.isfunction(fn) or inspect.isbuiltin(fn) or _is_ufunc(fn) or inspect.isroutine(fn):
        return "function"
    if isinstance(fn, type):
        return "function"  # a class is named and imported as a function is
    return "object"


def _is_ufunc(fn) -> bool:
    np = sys.modules.get("numpy")
    return np is not None and isinstance(fn, np.ufunc)


_WHY = {
    "lambda": "a lambda cannot be sent to a worker process",
    "method": "a bound method (a function bound to its object) cannot be sent to a worker process",
    "partial": "a functools.partial has no module:function name, so it cannot be sent to a worker process",
    "object": "a callable object has no module:function name, so it cannot be sent to a worker process",
    "function": "",
}


def where_defined(fn) -> str:
    """file:line of the code of fn (of the function a partial or a bound method wraps); "" where unknown."""
    inner = fn
    for _ in range(8):
        if isinstance(inner, functools.partial):
            inner = inner.func
        elif inspect.ismethod(inner):
            inner = inner.__func__
        else:
            break
    code = getattr(inner, "__code__", None)
    if code is None:
        return ""
    return f"{code.co_filename}:{code.co_firstlineno}"


def display_name(fn) -> str:
    """A name people can find fn by: module.qualname, `<lambda>` with file:line, ..."""
    what = kind(fn)
    where = where_defined(fn)
    at = f" at {where}" if where else ""
    if what == "partial":
        return f"functools.partial of {display_name(fn.func)}"
    if what == "method":
        return f"bound method {_dotted(fn.__func__)} of a {type(fn.__self__).__name__} object{at}"
    if what == "object":
        cls = type(fn)
        return f"{cls.__module__}.{cls.__qualname__} object{at}"
    if what == "lambda":
        return f"<lambda>{at}"
    return f"{_dotted(fn)}{at}"


def _dotted(fn) -> str:
    module = getattr(fn, "__module__", None)
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or type(fn).__name__
    return f"{module}.{name}" if isinstance(module, str) else str(name)


class FunctionTarget(Target):
    """A callable measured in the caller's process: one a worker process cannot be given (from_callable).

    `in_process` says why and what is lost; `no_command` that the command line cannot name it. Everything
    else is `Target`'s: a copy of the input per call, the floating-point environment and the modules opcert
    computes with saved and restored around every call, the checks of the returned type, dtype and shape,
    and an exception of any kind is the target's failure (TargetFailure), never opcert's."""

    def __init__(self, fn, timeout: float | None = None):
        name = display_name(fn)
        _, why = importable(fn)
        why = why or "it cannot be sent to a worker process"
        self.fn = fn
        self.why = why  # why a worker cannot be given it, in words
        self.in_process = (
            f"in-process: {name} ran in this process, not in a worker: {why}. A crash or hang of it ends or "
            "stops this process (no worker supervises it, and its calls have no time limit), and the layout "
            "check's calls from other threads run in this process. A module-level function of an importable "
            "module runs in a supervised worker"
        )
        self.no_command = (
            f"none: the command line cannot name {name} ({why}); a module-level function of an importable "
            "module can be given as --target module:function"
        )
        module = sys.modules.get(getattr(_unwrapped(fn), "__module__", None) or "")
        top = (getattr(module, "__name__", "") or "").split(".")[0]
        version = str(getattr(sys.modules.get(top), "__version__", "unknown")) if top else "unknown"
        info = TargetInfo(
            name,
            "python",
            version,
            _code_fingerprint(fn),
            {
                "callable": kind(fn),
                "defined_at": where_defined(fn) or None,
                "in_process": self.in_process,
                "numpy_isa": simd(),
            },
            isolated=False,
        )

        def call(op, x, attrs):
            # by ONNX's spelling, as for module:function (targets.python)
            return fn(x, **{k: user_value(op, k, v) for k, v in attrs.items()})

        super().__init__(info, call, timeout=timeout)
        self.layouts = LayoutSupport(**PYTHON)

    def __str__(self) -> str:  # where a check's label or a message prints its target
        return self.name

    def __repr__(self) -> str:
        return f"FunctionTarget({self.name})"


class TableTarget(FunctionTarget):
    """Outputs a kernel already produced, given as arrays (x, y): measured as a target that looks each input
    up by its bit pattern (opcert.given_outputs). An input the table does not hold is the target's failure,
    naming it. No kernel is called, so nothing is learned about its code paths: the layout property is
    skipped, and says why (`no_code_paths`)."""

    def __init__(self, x, y, name: str = "given outputs"):
        x, y = np.asarray(x), np.asarray(y)
        if x.shape != y.shape or x.dtype != y.dtype or x.dtype.kind != "f" and x.dtype.name != "bfloat16":
            raise UsageError(
                f"given outputs: x and y must be float arrays of one dtype and shape (got x {x.dtype}{x.shape}, "
                f"y {y.dtype}{y.shape})"
            )
        width = f"uint{8 * x.itemsize}"
        keys = np.ascontiguousarray(x).reshape(-1).view(width)
        order = np.argsort(keys, kind="stable")
        self._keys, self._values = keys[order], np.ascontiguousarray(y).reshape(-1)[order]
        self._width, self._dtype = width, x.dtype

        def lookup(x, **attrs):
            k = np.ascontiguousarray(x).reshape(-1).view(self._width)
            at = np.minimum(np.searchsorted(self._keys, k), self._keys.size - 1)
            missing = self._keys[at] != k
            if missing.any():
                v = np.ascontiguousarray(x).reshape(-1)[np.flatnonzero(missing)[0]]
                raise LookupError(
                    f"the given outputs hold no output for the input {float(v)!r} (bits {hex(int(k[missing][0]))})"
                )
            return self._values[at].reshape(np.shape(x))

        lookup.__qualname__ = lookup.__name__ = name
        super().__init__(lookup)
        # its name as given: the lookup function's module and line say nothing of where the outputs came from
        # and keyed by the outputs themselves, not by the lookup's code (the same for every table)
        digest = hashlib.sha256(self._keys.tobytes() + np.ascontiguousarray(self._values).view(width).tobytes())
        self.info = dataclasses.replace(self.info, name=name, kind="outputs", fingerprint=digest.hexdigest()[:32])
        self.no_code_paths = (
            f"{name}: a table of outputs (opcert.given_outputs), not a kernel: its calls cannot show how the "
            "kernel that produced them depends on the call (length, position, alignment, threads)"
        )
        self.in_process = f"in-process: {name}, a table of {keys.size:,} outputs looked up by input"
        self.no_command = f"none: the command line cannot name {name} (a table of outputs given from Python)"


def _unwrapped(fn):
    while isinstance(fn, functools.partial):
        fn = fn.func
    return fn.__func__ if inspect.ismethod(fn) else fn


def _code_fingerprint(fn) -> str:
    """A hash of fn's code (and of what a partial binds, by its repr), with NumPy's dispatch: what keys a
    result to the code measured."""
    h = hashlib.sha256(f"python {sys.version} {simd()}".encode())
    inner = _unwrapped(fn)
    code = getattr(inner, "__code__", None)
    if code is None and kind(fn) == "object":
        code = getattr(type(fn).__dict__.get("__call__"), "__code__", None)
    if code is not None:
        try:
            h.update(marshal.dumps(code))
        except ValueError:  # a code object marshal cannot write (constants of other types)
            h.update(code.co_code)
    else:
        h.update(repr(inner).encode())
    if isinstance(fn, functools.partial):
        h.update(repr((fn.args, fn.keywords)).encode()[:4096])
    return h.hexdigest()[:32]
