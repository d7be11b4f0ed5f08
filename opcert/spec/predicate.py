"""The data that declares a predicate operator: y = p(x), a truth value per element of one floating-point tensor
(ONNX's IsNaN and IsInf, tensor(bool) outputs; DirectML's DML_ELEMENT_WISE_IS_NAN and IS_INFINITY, UINT8 0/1).

Such an operator is not an element-wise operator of spec/ops/: its output is not of the input's format, and its
definition is a function of the input's bit pattern (its IEEE 754 class), not of its real value. Its checks
compare truth values, not ULPs: every pattern of a 16-bit format, every one of the 2^32 float32 patterns
(exhaustive), or samples that hold every special class of pattern (verify.predicate.measure).

An operator's file (spec/predicate_ops/) gives two functions of the input: `reference`, IEEE 754's
classification as NumPy computes it on the input's own dtype (np.isnan, np.isinf and the sign), and
`implementation`, opcert's own: the same classification read from the bits (`fields`), which opcert's target
runs. The catalog here (`predicate_operators`, `get_predicate_operator`) loads one module per operator from
spec/predicate_ops/ at its first use.
"""

from __future__ import annotations

import difflib
import functools
import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from opcert.errors import UsageError, choices
from opcert.formats import FloatFormat
from opcert.spec.model import Support, standard_of, support_at

# the formats opcert checks a predicate in (ONNX also lists the float8 types, which opcert has no format for)
CHECKED_DTYPES = ("float16", "bfloat16", "float32", "float64")
# ONNX's float8 types (IsNaN-20, IsInf-20): listed in the support tables as the standard lists them
FLOAT8_ONNX = ("float8e4m3fn", "float8e4m3fnuz", "float8e5m2", "float8e5m2fnuz")

# What each property kind claims; verify.predicate decides each on every pattern enumerated (proved) or on the
# samples (checked).
PREDICATE_KINDS = {
    "exact": "the output is the IEEE 754 classification of its input on every input pattern (every NaN payload, "
    "both signs, signalling NaNs included)",
    "output_type": "the output's dtype is the standard's (ONNX: bool; DirectML: uint8, holding only 0 and 1), "
    "and its shape is the input's",
    "layout": "the same outputs for the inputs given as one flat array, reversed, as strided and negatively "
    "strided views, and in a 2-D shape",
}


@dataclass(frozen=True)
class PredicateProperty:
    name: str
    kind: str  # PREDICATE_KINDS
    statement: str
    standards: tuple[str, ...] = ()  # () = every standard


@dataclass(frozen=True)
class PredicateAttribute:
    """An integer attribute of one standard (ONNX's INT detect_positive; DirectML's enum InfinityMode): the values
    it may take, and names for them (DML_IS_INFINITY_MODE_POSITIVE = 1)."""

    name: str  # opcert's spelling
    doc: str
    standard: str  # the standard that has it
    values: tuple[int, ...]
    value_names: dict[str, int] | None = None  # spellings of the values ("POSITIVE" -> 1), any case
    aliases: tuple[str, ...] = ()  # the standard's spelling where it is not opcert's


@dataclass(frozen=True)
class PredicateStandard:
    key: str  # "onnx", "directml"
    op_name: str
    document: str
    formula_text: str
    support: tuple[Support, ...]  # the input's types per version or feature level, ascending
    attribute_names: dict[str, str]  # opcert's name -> the standard's: the attributes it has
    output_type: str  # what opcert's implementation returns: "bool" (ONNX) or "uint8" (DirectML)
    output_types: tuple[str, ...]  # every output type the standard allows (DirectML's IS_NAN: UINT8, UINT32)
    defaults: dict | None = None
    notes: str = ""

    def support_at(self, level: str | None) -> Support | None:
        return support_at(self.support, level)

    def has(self, attr: str) -> bool:
        return attr in self.attribute_names

    def lists(self, dtype: str) -> bool:
        return any(dtype in s.dtypes for s in self.support)

    def first_listing(self, dtype: str) -> str | None:
        """The first version (or feature level) whose table lists `dtype`."""
        return next((s.since for s in self.support if dtype in s.dtypes), None)


@dataclass(frozen=True)
class PredicateOperator:
    name: str
    family: str
    summary: str
    inputs: tuple[str, ...]  # ("X",)
    attributes: tuple[PredicateAttribute, ...]
    standards: tuple[PredicateStandard, ...]
    primary: str
    properties: tuple[PredicateProperty, ...]
    # reference(x, attrs, standard key) -> bool array: IEEE 754's classification (NumPy on the input's dtype)
    reference_fn: Callable
    # implementation(x, attrs, standard key) -> bool array: opcert's own, from the bits (`fields`)
    implementation_fn: Callable
    # library_function(attrs, standard key) -> the NumPy-style name torch and jax.numpy share (isnan, isinf,
    # isposinf, isneginf), or None where no such function is the operator at these attributes
    library_function: Callable
    elementwise = False  # not an operator of spec/ops/: the element-wise checks' keys do not apply

    def reference(self, x, attrs: dict | None = None, standard: str | None = None) -> np.ndarray:
        std = self.standard(standard)
        return self.reference_fn(x, self.attributes_for(std, attrs or {}), std.key)

    def implementation(self, x, attrs: dict | None = None, standard: str | None = None) -> np.ndarray:
        std = self.standard(standard)
        return self.implementation_fn(x, self.attributes_for(std, attrs or {}), std.key)

    def standard(self, key: str | None) -> PredicateStandard:
        return standard_of(self, key)

    def properties_of(self, key: str) -> tuple[PredicateProperty, ...]:
        return tuple(p for p in self.properties if not p.standards or key in p.standards)

    def attribute(self, std: PredicateStandard, name: str) -> PredicateAttribute:
        """The standard's attribute called `name` (opcert's spelling or the standard's, any case)."""
        for a in self.attributes:
            if a.standard == std.key and name.lower() in {a.name.lower(), *(s.lower() for s in a.aliases)}:
                return a
        have = ", ".join(std.attribute_names) or "none"
        raise UsageError(f"{self.name} ({std.key}) has no attribute {name!r}; its attributes: {have}")

    def attributes_for(self, std: PredicateStandard, given: dict) -> dict[str, int]:
        """Every attribute of the standard, at its default unless given (by opcert's name or the standard's; a value
        as an int, a numeric string, or a name of the value); UsageError for a name or value it does not have."""
        out = {k: int(v) for k, v in (std.defaults or {}).items()}
        for k, v in given.items():
            a = self.attribute(std, k)
            out[a.name] = attribute_value(a, v)
        return out


def attribute_value(a: PredicateAttribute, v) -> int:
    """An attribute's value as an int, checked against the values it may take."""
    if isinstance(v, bool):
        v = int(v)
    if isinstance(v, str):
        t = v.strip()
        names = {n.lower(): i for n, i in (a.value_names or {}).items()}
        key = t.lower().removeprefix("dml_is_infinity_mode_")
        if key in names:
            v = names[key]
        else:
            try:
                v = int(t, 0)
            except ValueError:
                named = f" or one of {', '.join(a.value_names)}" if a.value_names else ""
                raise UsageError(f"attribute {a.name}={t!r}: give an integer{named}") from None
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    if not isinstance(v, (int, np.integer)) or int(v) not in a.values:
        named = " (" + ", ".join(f"{n} = {i}" for n, i in a.value_names.items()) + ")" if a.value_names else ""
        raise UsageError(f"attribute {a.name}={v!r}: allowed {', '.join(map(str, a.values))}{named}: {a.doc}")
    return int(v)


# ---- the bits ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Fields:
    """The masks of a binary format's fields: sign, exponent, significand, and the significand's top bit (IEEE
    754's quiet bit: a NaN with it set is quiet, with it clear signalling)."""

    sign: int
    exponent: int
    significand: int
    quiet: int


def fields(fmt: FloatFormat) -> Fields:
    m = fmt.p - 1
    sign = 1 << (fmt.bits - 1)
    return Fields(sign, (sign - 1) & ~((1 << m) - 1), (1 << m) - 1, 1 << (m - 1))


def classes(x: np.ndarray, fmt: FloatFormat) -> dict[str, np.ndarray]:
    """Each input's class from its bits: nan, quiet, inf, negative (the sign bit), zero, subnormal."""
    f = fields(fmt)
    u = np.ascontiguousarray(x).view(fmt.uint)
    t = fmt.uint.type
    e = u & t(f.exponent)
    s = u & t(f.significand)
    top = e == t(f.exponent)
    return {
        "nan": top & (s != 0),
        "quiet": top & ((u & t(f.quiet)) != 0),
        "inf": top & (s == 0),
        "negative": (u & t(f.sign)) != 0,
        "zero": (e == 0) & (s == 0),
        "subnormal": (e == 0) & (s != 0),
    }


def nan_bits(x: np.ndarray, fmt: FloatFormat) -> np.ndarray:
    """Where x is a NaN, from its bits: the magnitude (the sign bit cleared) above the infinity's pattern (the
    exponent field all ones and the significand not zero)."""
    f = fields(fmt)
    t = fmt.uint.type
    return (np.asarray(x).view(fmt.uint) & t(f.exponent | f.significand)) > t(f.exponent)


def inf_bits(x: np.ndarray, fmt: FloatFormat, positive: bool = True, negative: bool = True) -> np.ndarray:
    """Where x is an infinity of a sign asked for, from its bits: +inf and -inf are one pattern each."""
    f = fields(fmt)
    t = fmt.uint.type
    u = np.asarray(x).view(fmt.uint)
    if positive and negative:
        return (u & t(f.exponent | f.significand)) == t(f.exponent)
    if positive or negative:
        return u == t(f.exponent | (0 if positive else f.sign))
    return np.zeros(u.shape, dtype=bool)


def class_name(bits: int, fmt: FloatFormat) -> str:
    """One pattern's IEEE 754 class, in words (results and `opcert ref` print it)."""
    f = fields(fmt)
    sign = "-" if bits & f.sign else "+"
    e, s = bits & f.exponent, bits & f.significand
    if e == f.exponent:
        if s == 0:
            return f"{sign}inf"
        kind = "quiet" if bits & f.quiet else "signalling"
        return f"{sign}{kind} NaN (payload 0x{s & (f.quiet - 1):x})"
    if e == 0:
        return f"{sign}zero" if s == 0 else f"{sign}subnormal"
    return f"{sign}normal"


# ---- the catalog ------------------------------------------------------------------------------------------

_PACKAGE = "opcert.spec.predicate_ops"


@functools.cache
def predicate_catalog() -> dict[str, PredicateOperator]:
    """Every predicate operator, by name: one module per operator under spec/predicate_ops/ (imported here, at
    the first question, by name: the operators' files import this module)."""
    package = importlib.import_module(_PACKAGE)
    found = {}
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda i: i.name):
        if info.name.startswith("_"):
            continue
        op = importlib.import_module(f"{_PACKAGE}.{info.name}").OPERATOR
        if op.name in found:
            raise RuntimeError(f"operator {op.name} is declared twice (predicate_ops/{info.name}.py)")
        if op.primary not in {s.key for s in op.standards}:
            raise RuntimeError(f"{op.name}: primary standard {op.primary} is not declared")
        for a in op.attributes:
            if not any(s.key == a.standard and s.has(a.name) for s in op.standards):
                raise RuntimeError(f"{op.name}: attribute {a.name} is no attribute of standard {a.standard}")
        found[op.name] = op
    return dict(sorted(found.items()))


def predicate_operators() -> list[PredicateOperator]:
    return list(predicate_catalog().values())


@functools.cache
def _lookup() -> dict:
    out = {}
    for op in predicate_catalog().values():
        out[op.name.lower()] = op
        for s in op.standards:
            out[s.op_name.lower()] = op
            out[(s.op_name + "_OPERATOR_DESC").lower()] = op
    return out


def is_predicate_operator(name) -> bool:
    if isinstance(name, PredicateOperator):
        return True
    return str(name).lower() in _lookup()


def get_predicate_operator(name) -> PredicateOperator:
    """The predicate operator called `name`: its ONNX name or a standard's (DML_ELEMENT_WISE_IS_NAN, with or
    without _OPERATOR_DESC), any case."""
    if isinstance(name, PredicateOperator):
        return name
    hit = _lookup().get(str(name).lower())
    if hit is None:
        close = difflib.get_close_matches(str(name).lower(), list(_lookup()), n=1, cutoff=0.75)
        near = f" (did you mean {_lookup()[close[0]].name!r}?)" if close else ""
        raise UsageError(f"unknown predicate operator {name!r}{near}; allowed: {choices(predicate_catalog())}")
    return hit
