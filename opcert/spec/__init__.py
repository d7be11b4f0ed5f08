"""The operator catalog: every operator, declared once as data."""
from __future__ import annotations

from ..errors import UsageError, choices
from . import exponential, piecewise_linear, tanh_family
from .model import Attribute, Domain, Operator, Property, Standard, Support

CATALOG: dict[str, Operator] = {
    op.name: op
    for module in (tanh_family, piecewise_linear, exponential)
    for op in module.OPERATORS
}


def _spellings(op: Operator) -> list[str]:
    names = [op.name]
    for s in op.standards:
        names += [s.op_name, s.op_name + "_OPERATOR_DESC"]
    return names


_LOOKUP = {name.lower(): op for op in CATALOG.values() for name in _spellings(op)}


def get_operator(name) -> Operator:
    """The operator called `name`: its ONNX name (any case) or DirectML name."""
    if isinstance(name, Operator):
        return name
    op = _LOOKUP.get(str(name).lower())
    if op is None:
        raise UsageError(f"unknown operator {name!r}; allowed: {choices(CATALOG)} "
                         "(any case; DirectML names such as DML_ACTIVATION_SCALED_TANH too)")
    return op


def operators() -> list[Operator]:
    return list(CATALOG.values())


__all__ = ["Attribute", "CATALOG", "Domain", "Operator", "Property", "Standard", "Support",
           "get_operator", "operators"]
