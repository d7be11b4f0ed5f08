"""The operator catalog: every operator, declared once as data, one module per
operator in opcert/spec/ops/ (as ONNX's onnx/reference/ops/ has one file per
operator). Adding an operator is adding a module there (and its tests).

The catalog is checked when it loads: every expression uses only operations
every interpreter knows, every attribute an expression or a mapping names is
declared, and every standard's defaults name its own attributes.
"""

from __future__ import annotations

import difflib
import importlib
import pkgutil

from opcert.errors import UsageError, choices
from opcert.expr import ARITY, reduces
from opcert.expr.primitives import check_registry
from opcert.spec import binary_ops, ops, tensor_ops
from opcert.spec.binary import BinaryOperator
from opcert.spec.model import Attribute, AttributeDomain, Limit, Operator, Property, RuntimeMap, Standard, Support
from opcert.spec.predicate import (
    get_predicate_operator,
    is_predicate_operator,
    predicate_catalog,
    predicate_operators,
)
from opcert.spec.tensor import TensorOperator


def _load() -> dict[str, Operator]:
    found = {}
    for info in sorted(pkgutil.iter_modules(ops.__path__), key=lambda i: i.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{ops.__name__}.{info.name}")
        op = module.OPERATOR
        if op.name in found:
            raise RuntimeError(f"operator {op.name} is declared twice (ops/{info.name}.py)")
        found[op.name] = op
    return dict(sorted(found.items()))


def _expressions(op: Operator):
    yield "implementation", op.implementation
    for s in op.standards:
        yield f"{s.key} formula", s.formula
        if s.implementation is not None:
            yield f"{s.key} implementation", s.implementation
        if s.reference_form is not None:
            yield f"{s.key} reference form", s.reference_form
    for p in op.properties:
        for field in ("condition", "lower", "upper", "value", "center"):
            e = getattr(p, field)
            if e is not None:
                yield f"property {p.name}.{field}", e
        for e in p.domain:
            if e is not None:
                yield f"property {p.name}.domain", e
    for lim in op.limits:
        if not isinstance(lim.value, str):
            yield "limit", lim.value
        if lim.condition is not None:
            yield "limit condition", lim.condition


def check_catalog(catalog: dict[str, Operator]) -> None:
    """Raise RuntimeError naming the first inconsistency of the declarations."""
    check_registry()
    for op in catalog.values():
        names = {a.name for a in op.attributes}
        for where, e in _expressions(op):
            for n in e.nodes():
                if n.op not in ARITY:
                    raise RuntimeError(f"{op.name} {where}: unknown operation {n.op}")
                if n.op == "attr" and n.name not in names:
                    raise RuntimeError(f"{op.name} {where}: undeclared attribute {n.name}")
        for s in op.standards:
            for k in list(s.defaults) + list(s.attribute_names):
                if k not in names:
                    raise RuntimeError(f"{op.name} {s.key}: unknown attribute {k}")
            for n in s.formula.nodes():
                if n.op == "attr" and not s.has(n.name):
                    raise RuntimeError(f"{op.name} {s.key}: its formula uses {n.name}, which it does not have")
        if op.primary not in {s.key for s in op.standards}:
            raise RuntimeError(f"{op.name}: primary standard {op.primary} is not declared")
        for lib, maps in op.runtimes.items():
            for m in maps if isinstance(maps, tuple) else (maps,):
                for kw, src in m.kwargs.items():
                    ref = src[1] if isinstance(src, tuple) and src[0] == "tensor" else src
                    if isinstance(ref, str) and ref not in names:
                        raise RuntimeError(f"{op.name} {lib} mapping: {kw} names unknown attribute {ref}")


CATALOG: dict[str, Operator] = _load()
check_catalog(CATALOG)


def _load_tensor() -> dict:
    found = {}
    for info in sorted(pkgutil.iter_modules(tensor_ops.__path__), key=lambda i: i.name):
        if info.name.startswith("_"):
            continue
        op = importlib.import_module(f"{tensor_ops.__name__}.{info.name}").OPERATOR
        if op.name in found or op.name in CATALOG:
            raise RuntimeError(f"operator {op.name} is declared twice (tensor_ops/{info.name}.py)")
        for where, e in [("implementation", op.implementation), ("reference form", op.reference_form)] + [
            (f"{s.key} formula", s.formula) for s in op.standards
        ]:
            declared = {a.name for a in op.attributes}
            bad = [
                n.op if n.op != "attr" else f"attribute {n.name} (not declared)"
                for n in e.nodes()
                if n.op not in ARITY or (n.op == "attr" and n.name not in declared)
            ]
            if bad:
                raise RuntimeError(f"{op.name} {where}: {bad[0]} is not an operation of a tensor operator")
            if not reduces(e):
                raise RuntimeError(f"{op.name} {where}: reduces over no row (an element-wise operator: spec/ops/)")
        for s in op.standards:  # what a standard runs and is measured against reads only the attributes it holds
            for e in (s.formula, s.implementation or op.implementation, s.reference_form or op.reference_form):
                missing = sorted({n.name for n in e.nodes() if n.op == "attr" and not s.has(n.name)})
                if missing:
                    raise RuntimeError(f"{op.name} {s.key}: its forms use {', '.join(missing)}, which it does not have")
        if op.primary not in {s.key for s in op.standards}:
            raise RuntimeError(f"{op.name}: primary standard {op.primary} is not declared")
        found[op.name] = op
    return dict(sorted(found.items()))


# the operators that reduce over axes (spec.tensor): opcert.tensor runs, references and validates them
TENSOR_CATALOG: dict = _load_tensor()


def _load_binary() -> dict:
    found = {}
    for info in sorted(pkgutil.iter_modules(binary_ops.__path__), key=lambda i: i.name):
        if info.name.startswith("_"):
            continue
        op = importlib.import_module(f"{binary_ops.__name__}.{info.name}").OPERATOR
        if op.name in found or op.name in CATALOG or op.name in TENSOR_CATALOG:
            raise RuntimeError(f"operator {op.name} is declared twice (binary_ops/{info.name}.py)")
        names = {a.name for a in op.attributes} | {op.second}
        for s in op.standards:
            for n in s.implementation.nodes():
                if n.op not in ARITY:
                    raise RuntimeError(f"{op.name} {s.key} implementation: unknown operation {n.op}")
                if n.op == "attr" and n.name not in names:
                    raise RuntimeError(f"{op.name} {s.key} implementation: undeclared attribute {n.name}")
        if op.primary not in {s.key for s in op.standards}:
            raise RuntimeError(f"{op.name}: primary standard {op.primary} is not declared")
        found[op.name] = op
    return dict(sorted(found.items()))


# the operators of two tensor inputs (spec.binary): opcert.verify.binary measures them over pairs
BINARY_CATALOG: dict = _load_binary()
# the operators whose outputs are booleans (spec.predicate: IsNaN, IsInf): opcert.verify.predicate measures them
PREDICATE_CATALOG: dict = predicate_catalog()
for _name in PREDICATE_CATALOG:
    if _name in CATALOG or _name in TENSOR_CATALOG or _name in BINARY_CATALOG:
        raise RuntimeError(f"operator {_name} is declared twice (predicate_ops/)")


def _spellings(op: Operator) -> list[tuple[str, str | None]]:
    names = [(op.name, None)]
    for s in op.standards:
        names += [(s.op_name, s.key), (s.op_name + "_OPERATOR_DESC", s.key)]
    return names


_LOOKUP = {name.lower(): (op, std) for op in CATALOG.values() for name, std in _spellings(op)}
_TENSOR_LOOKUP = {name.lower(): (op, std) for op in TENSOR_CATALOG.values() for name, std in _spellings(op)}
_BINARY_LOOKUP = {name.lower(): (op, std) for op in BINARY_CATALOG.values() for name, std in _spellings(op)}
for _name in _BINARY_LOOKUP:  # ONNX's Pow is the binary operator; ConstantPow is its one-element-exponent form
    _LOOKUP.pop(_name, None)


def get_operator(name) -> Operator:
    """The operator called `name`: its ONNX name (any case) or a standard's name."""
    if isinstance(name, Operator):
        return name
    hit = _LOOKUP.get(str(name).lower())
    if hit is None:
        tensor = _TENSOR_LOOKUP.get(str(name).lower())
        if tensor is not None:
            raise UsageError(
                f"{tensor[0].name} reduces over axes (a tensor operator): opcert.tensor runs it, gives "
                "its reference and validates its descriptors (opcert ops, opcert ref --axis); accuracy "
                "checks, proofs and gates cover the element-wise operators: "
                f"{choices(CATALOG)}"
            )
        if is_predicate_operator(name):
            p = get_predicate_operator(name)
            raise UsageError(
                f"{p.name} gives booleans (a predicate operator): opcert ops, ref and accuracy take it, every input of "
                f"a 16-bit format and, with --exhaustive, of float32 (opcert accuracy {p.name} --dtype float32 --target "
                f"opcert --exhaustive); z3's proofs and the element-wise checks cover the one-input operators of a "
                f"number: {choices(CATALOG)}"
            )
        binary = _BINARY_LOOKUP.get(str(name).lower())
        if binary is not None:
            raise UsageError(
                f"{binary[0].name} takes two tensors (a binary operator): opcert ops, ref and accuracy take it; "
                f"`opcert prove {binary[0].name}` proves its properties over the reals (no format, no attributes), "
                "and on the code and the targets they are decided over pairs, proved by enumeration over every "
                f"pair of a 16-bit format (opcert accuracy {binary[0].name} --dtype float16 --target opcert "
                "--exhaustive; its properties in x for one exponent are ConstantPow's, which opcert prove "
                f"ConstantPow proves for every exponent); the element-wise checks and the proofs in a format cover "
                f"the one-input operators: {choices(CATALOG)}"
            )
        known = (
            list(_LOOKUP)
            + list(_TENSOR_LOOKUP)
            + list(_BINARY_LOOKUP)
            + [o.name.lower() for o in predicate_operators()]
        )
        # the same letters in another order first (a transposed pair: Tahn is Tanh, though Tan is one letter off)
        swapped = [k for k in known if sorted(k) == sorted(str(name).lower())]
        close = difflib.get_close_matches(str(name).lower(), swapped or known, n=1, cutoff=0.75)
        hit = (_LOOKUP.get(close[0]) or _TENSOR_LOOKUP.get(close[0]) or _BINARY_LOOKUP.get(close[0])) if close else None
        near = hit[0].name if hit else get_predicate_operator(close[0]).name if close else None
        raise UsageError(
            f"unknown operator {name!r}"
            + (f" (did you mean {near!r}?)" if near else "")
            + f"; allowed: {choices(CATALOG)}, the tensor operators "
            f"{choices(TENSOR_CATALOG)}, the binary operators {choices(BINARY_CATALOG)} and the predicate operators "
            f"{choices(o.name for o in predicate_operators())} (any case; DirectML names such as "
            "DML_ACTIVATION_SCALED_TANH too)"
        )
    return hit[0]


def get_tensor_operator(name):
    """The tensor operator called `name` (its ONNX name, any case, or a standard's name), and the standard
    that name selects (None: the primary)."""
    if isinstance(name, TensorOperator):
        return name, None
    hit = _TENSOR_LOOKUP.get(str(name).lower())
    if hit is None:
        raise UsageError(
            f"unknown tensor operator {name!r}; allowed: {choices(TENSOR_CATALOG)} (any case; DirectML "
            "names such as DML_ACTIVATION_SOFTMAX1 too)"
        )
    op, std = hit
    return op, (std if std != op.primary and op.name.lower() != str(name).lower() else None)


def get_binary_operator(name) -> BinaryOperator:
    """The binary operator called `name` (its ONNX name, any case, or a standard's name)."""
    if isinstance(name, BinaryOperator):
        return name
    hit = _BINARY_LOOKUP.get(str(name).lower())
    if hit is None:
        raise UsageError(f"unknown binary operator {name!r}; allowed: {choices(BINARY_CATALOG)}")
    return hit[0]


def is_binary_operator(name) -> bool:
    return isinstance(name, BinaryOperator) or str(name).lower() in _BINARY_LOOKUP


def binary_operators() -> list:
    return list(BINARY_CATALOG.values())


def is_tensor_operator(name) -> bool:
    return isinstance(name, TensorOperator) or str(name).lower() in _TENSOR_LOOKUP


def tensor_operators() -> list:
    return list(TENSOR_CATALOG.values())


def standard_named(name) -> str | None:
    """The standard whose own name for the operator is `name` (DML_ACTIVATION_SOFTPLUS: "directml"), if any."""
    if isinstance(name, Operator):
        return None
    hit = _LOOKUP.get(str(name).lower())
    if hit is None or hit[1] is None:
        return None
    op, std = hit
    return std if std != op.primary and op.name.lower() != str(name).lower() else None


def operators() -> list[Operator]:
    return list(CATALOG.values())


__all__ = [
    "Attribute",
    "CATALOG",
    "AttributeDomain",
    "BINARY_CATALOG",
    "PREDICATE_CATALOG",
    "binary_operators",
    "get_binary_operator",
    "get_predicate_operator",
    "is_binary_operator",
    "is_predicate_operator",
    "predicate_operators",
    "Limit",
    "Operator",
    "Property",
    "RuntimeMap",
    "Standard",
    "Support",
    "TENSOR_CATALOG",
    "get_operator",
    "get_tensor_operator",
    "is_tensor_operator",
    "operators",
    "standard_named",
    "tensor_operators",
]
