"""Targets of the predicate operators (spec.predicate: IsNaN, IsInf): a kernel given one floating-point tensor x
that returns a truth value per element, y = p(x), of the standard's output type (ONNX: bool; DirectML: uint8).

Each target (`PredicateTarget`) is called with the operator, the standard checked, the input and the standard's
attributes (every one, at its default unless given: detect_positive, detect_negative; DirectML's infinity_mode).
`opcert` is opcert's own implementation (`OpcertPredicate`: the class read from the bits, spec.predicate.classes,
cast to the standard's output type). A runtime's predicate side is the class its row of opcert.runtime_table names
(`predicate`, in targets/runtimes/predicates.py); a Python callable `module:function` gets x and the attributes
whose values are not the standard's defaults, by keyword (`PythonPredicateTarget`: numpy:isnan is NumPy's own on
the input's dtype). Predicates have no C ABI (targets.c_abi's signatures write an output of the input's type)."""

from __future__ import annotations

from typing import Protocol

import numpy as np

from opcert._version import __version__
from opcert.errors import UsageError, choices
from opcert.formats import FloatFormat, format_of
from opcert.runtime_table import predicate_target_names, runtime_of
from opcert.targets.python import keywords_not_taken, load_callable
from opcert.targets.runtimes import resolve

NAMES = ("opcert",) + predicate_target_names()


class PredicateTarget(Protocol):
    """call(op, std, x, attrs) -> y: y of x's shape and of the standard's output type. `op` is a
    spec.predicate.PredicateOperator, `std` one of its PredicateStandard, `attrs` every attribute of the standard
    (name -> int). The output is the target's as it gives it: opcert judges its dtype and shape (a wrong one is a
    finding), so no side casts or reshapes it."""

    name: str
    version: str

    def unsupported(self, op, std, dtype: str, attrs: dict) -> str | None:
        """Why this operator, standard, dtype and attribute set cannot be given to the target (a skip, with the
        library's own reason where it has one); None where it can."""
        ...

    def call(self, op, std, x: np.ndarray, attrs: dict) -> np.ndarray: ...


class OpcertPredicate:
    """opcert's implementation of the predicates: the operator's `implementation` (the exponent, significand
    and sign fields of the bits, no float arithmetic), as the standard's output type (bool, or uint8 0/1)."""

    name = "opcert"
    version = __version__

    def unsupported(self, op, std, dtype, attrs):
        if not std.lists(dtype):
            listed = sorted({d for s in std.support for d in s.dtypes})
            return f"opcert {self.version}: {std.op_name} lists no {dtype} (its types: {', '.join(listed)})"
        return None

    def call(self, op, std, x, attrs):
        fmt = format_of(x)
        if not isinstance(fmt, FloatFormat):
            raise TypeError(f"opcert's {op.name} takes floating-point inputs, not {x.dtype}")
        return op.implementation(x, attrs, std.key).astype(std.output_type)


class PythonPredicateTarget:
    """`module:function` for the predicates: f(x, **attrs) -> ndarray, called on the input as given (its own
    dtype: bfloat16 arrays are ml_dtypes.bfloat16; the layout property's views as views). An attribute whose
    value is not the standard's default is passed by keyword, by opcert's name, where the function's signature
    takes it; where it does not, the case is unsupported."""

    def __init__(self, name: str):
        self.fn, self.version = load_callable(name, "f(x) -> ndarray")
        self.name = name

    @staticmethod
    def given(std, attrs: dict) -> dict:
        """The attributes whose values are not the standard's defaults."""
        defaults = std.defaults or {}
        return {k: int(v) for k, v in attrs.items() if k not in defaults or int(v) != int(defaults[k])}

    def unsupported(self, op, std, dtype, attrs):
        return keywords_not_taken(self.name, self.fn, self.given(std, attrs))

    def call(self, op, std, x, attrs):
        return self.fn(x, **self.given(std, attrs))


def load_predicate(name: str) -> PredicateTarget:
    """The target called `name`: opcert, a runtime whose row has a predicate side, or module:function."""
    if name == "opcert":
        return OpcertPredicate()
    if name.startswith("c:"):
        raise UsageError(
            f"target {name!r}: the predicate operators have no C ABI (targets.c_abi's signatures write an output "
            f"of the input's type); use {choices(NAMES)} or a Python callable module:function (f(x) -> ndarray)"
        )
    row = runtime_of(name)
    if row is not None:
        if row.name != name:
            raise UsageError(f"target {name}: the predicate operators run on the CPU only (target {row.name})")
        if row.predicate is None:
            raise UsageError(f"target {name} has no predicate side (opcert.runtime_table)")
        side = resolve(row.predicate)
        try:
            return side()
        except ImportError as exc:
            raise UsageError(
                f"target {name} needs {row.extra}, which is not installed ({exc}): pip install 'opcert[{row.extra}]'"
            ) from None
    if ":" in name:
        return PythonPredicateTarget(name)
    raise UsageError(
        f"unknown target {name!r} for a predicate operator; allowed: {choices(NAMES)}, module:function "
        "(f(x) -> ndarray of bool, e.g. numpy:isnan)"
    )
