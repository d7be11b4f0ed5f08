"""Implementations under test.

A target maps (operator, input array, attributes) to an output array of the
input's dtype and shape. `opcert` is the project's implementation;
`module:function` is any callable f(x, **attrs) -> ndarray (attributes by ONNX
name, as Python floats holding the binary32 values), so `numpy:tanh` audits
NumPy. A target that does not support an operator or dtype says why
(`unsupported`); one that raises, or returns the wrong shape or dtype, fails.
"""
from __future__ import annotations

import importlib
import warnings
from dataclasses import dataclass
from fractions import Fraction
from typing import Callable

import numpy as np

from ..errors import TargetFailure, UsageError, choices


class Unsupported(UsageError):
    """The target does not support this operator, dtype or attribute set (a skip, with its reason)."""


@dataclass
class Target:
    name: str
    version: str
    call: Callable[[object, np.ndarray, dict], np.ndarray]
    unsupported: Callable[[object, str, dict], str | None] = lambda op, dtype, attrs: None

    def run(self, op, x: np.ndarray, attrs: dict[str, Fraction]) -> np.ndarray:
        why = self.unsupported(op, x.dtype.name, attrs)
        if why:
            raise Unsupported(why)
        try:
            # Floating-point warnings (invalid in tanh(NaN), ...) are expected here.
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                y = self.call(op, x, attrs)
        except Exception as exc:  # the target crashed: a failure, never a pass
            raise TargetFailure(f"target {self.name} raised {type(exc).__name__}: {exc}") from exc
        if not isinstance(y, np.ndarray):
            y = np.asarray(y) if np.isscalar(y) or isinstance(y, np.generic) else y
        if not isinstance(y, np.ndarray):
            raise TargetFailure(f"target {self.name} returned {type(y).__name__}, not a numpy array")
        if y.dtype != x.dtype:
            raise TargetFailure(f"target {self.name} returned dtype {y.dtype}; expected {x.dtype}")
        if y.shape != x.shape:
            raise TargetFailure(f"target {self.name} returned shape {y.shape}; expected {x.shape}")
        return y


def _opcert_target() -> Target:
    from .. import __version__
    from ..impl.run import run_resolved
    return Target("opcert", __version__, lambda op, x, attrs: run_resolved(op, x, attrs))


def _callable_target(spec: str) -> Target:
    module_name, _, func_name = spec.partition(":")
    if not module_name or not func_name:
        raise UsageError(f"target {spec!r} is not of the form module:function")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise UsageError(f"target {spec!r}: cannot import module {module_name!r} ({exc})") from None
    func = module
    for part in func_name.split("."):
        func = getattr(func, part, None)
        if func is None:
            raise UsageError(f"target {spec!r}: module {module_name!r} has no {func_name!r}")
    if not callable(func):
        raise UsageError(f"target {spec!r}: {func_name!r} is not callable")
    top = importlib.import_module(module_name.split(".")[0])
    version = str(getattr(top, "__version__", "unknown"))

    def call(op, x, attrs):
        return func(x, **{k: float(v) for k, v in attrs.items()})
    return Target(spec, version, call)


def _runtime_target(name: str):
    def build() -> Target:
        from .runtimes import make
        rt = make(name)
        return Target(name, rt.version, rt, rt.unsupported)
    return build


BUILTIN = {"opcert": _opcert_target, "onnxruntime": _runtime_target("onnxruntime"),
           "onnx-reference": _runtime_target("onnx-reference"), "torch": _runtime_target("torch")}


def get_target(name: str) -> Target:
    if isinstance(name, Target):
        return name
    if name in BUILTIN:
        return BUILTIN[name]()
    if ":" in name:
        return _callable_target(name)
    raise UsageError(f"unknown target {name!r}; allowed: {choices(BUILTIN)}, or module:function "
                     "(a callable f(x, **attrs) -> ndarray, e.g. numpy:tanh)")
