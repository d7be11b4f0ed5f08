"""Attribute values: binary32, by ONNX or DirectML name, checked against their domains."""

from __future__ import annotations

import decimal
import math
from fractions import Fraction

from opcert.errors import UsageError, choices
from opcert.formats import FLOAT_FORMATS, hex_bits, round_fraction
from opcert.numbers import FORMS, Huge, Tiny, parse_real
from opcert.spec.model import Operator

BINARY32 = FLOAT_FORMATS["float32"]


def to_binary32(name: str, value) -> Fraction:
    """The exact value of `value` rounded to binary32 (nearest, ties to even).

    Decimal strings are rounded once, from their exact value. Refused: booleans,
    non-finite values, values that overflow binary32, and nonzero values that
    round to zero (the smallest positive binary32 value is 2^-149, about 1.4e-45)."""
    what = f"attribute {name}"
    if isinstance(value, bool) or not isinstance(value, (str, int, float, Fraction)):
        raise UsageError(f"{what}={value!r} is not a number; attributes are finite binary32 values, written as {FORMS}")
    try:
        if isinstance(value, str):
            text = value.strip()
            if text.lower().lstrip("+-") in ("nan", "inf", "infinity"):
                raise UsageError(f"{what}={value!r} is not finite; attributes are finite binary32 values")
            q = parse_real(text, what)
        elif isinstance(value, Fraction):
            q = value
        else:
            f = float(value)
            if not math.isfinite(f):
                raise UsageError(f"{what}={value!r} is not finite; attributes are finite binary32 values")
            q = Fraction(f)
    except Huge:
        raise UsageError(f"{what}={value!r} overflows binary32 (largest finite: 3.4028235e38)") from None
    except Tiny:
        raise UsageError(
            f"{what}={value!r} rounds to zero in binary32 (smallest positive value: "
            "2^-149, about 1.4e-45); write 0 if zero is meant"
        ) from None
    r = round_fraction(q, BINARY32, negative_zero=str(value).strip().startswith("-"))
    if math.isinf(r):
        raise UsageError(f"{what}={value!r} overflows binary32 (largest finite: 3.4028235e38)")
    if r == 0 and q != 0:
        raise UsageError(
            f"{what}={value!r} rounds to zero in binary32 (smallest positive value: "
            "2^-149, about 1.4e-45); write 0 if zero is meant"
        )
    return Fraction(r) if r != 0 else Fraction(0)


def canonical_name(op: Operator, key: str) -> str:
    for a in op.attributes:
        if key == a.name or key.lower() in [a.name.lower()] + [s.lower() for s in a.aliases]:
            return a.name
    if not op.attributes:
        raise UsageError(f"{op.name} has no attributes (got {key!r})")
    allowed = [a.name for a in op.attributes] + [s for a in op.attributes for s in a.aliases]
    raise UsageError(f"unknown attribute {key!r} for {op.name}; allowed: {choices(allowed)}")


def attribute_keys(op: Operator) -> set[str]:
    """Every name canonical_name takes for an attribute of op (names and aliases, lower case)."""
    return {n.lower() for a in op.attributes for n in (a.name, *a.aliases)}


def _value(op: Operator, a, value) -> Fraction:
    if a.kind == "choice":
        if isinstance(value, (int, float)) and not isinstance(value, bool) and float(value).is_integer():
            value = str(int(value))  # a choice named by a number (LpNormalization's p = 2, a TOML integer)
        if not isinstance(value, str) or value not in a.choices:
            raise UsageError(
                f"attribute {a.name}={value!r} of {op.name}: allowed {choices(repr(c) for c in a.choices)}"
            )
        return Fraction(a.choices.index(value))
    return to_binary32(a.name, value)


def resolve(op: Operator, attrs: dict | None = None, standard: str | None = None) -> dict[str, Fraction]:
    """Every attribute the standard gives `op` as an exact value (binary32, or a
    choice's index): the given ones, the standard's defaults for the rest, and
    opcert's example value where the standard gives none. Raises UsageError on
    unknown names, attributes the standard does not have, non-finite values and
    values outside the domain."""
    std = op.standard(standard)
    given = {}
    if attrs is not None and not isinstance(attrs, dict):
        raise UsageError(f"attributes of {op.name} must be a table of name = value (got {type(attrs).__name__})")
    for key, value in (attrs or {}).items():
        if not isinstance(key, str):
            raise UsageError(f"attribute names are strings (got {key!r})")
        name = canonical_name(op, key)
        if name in given:
            raise UsageError(f"attribute {name} given twice (as {key!r} too)")
        if not std.has(name):
            where = [s.key for s in op.standards if s.has(name)]
            raise UsageError(
                f"{op.name} as defined by {std.key} has no attribute {name!r}"
                + (f"; it belongs to {choices(where)} (--standard {where[0]})" if where else "")
            )
        given[name] = _value(op, op.attribute(name), value)
    out = {}
    for a in op.attributes:
        if not std.has(a.name):
            continue
        if a.name in given:
            v = given[a.name]
        elif a.name in std.defaults:
            v = _value(op, a, std.defaults[a.name])
        elif a.example is not None:
            v = _value(op, a, a.example)
        else:
            raise UsageError(f"{op.name} ({std.key}) needs attribute {a.name}: the standard gives no default")
        if a.kind == "float" and not a.domain.contains(v):
            raise UsageError(
                f"attribute {a.name}={float(v)!r} of {op.name} is outside its domain: allowed is {a.domain.description}"
            )
        out[a.name] = v
    return out


def exact_decimal(q: Fraction) -> str:
    """The exact decimal expansion of a dyadic rational (every binary32 value has one)."""
    if q == 0:
        return "0"
    with decimal.localcontext() as ctx:
        ctx.prec = 2000
        d = decimal.Decimal(q.numerator) / decimal.Decimal(q.denominator)
    s = format(d.normalize(), "f")
    return s


def describe(attrs: dict[str, Fraction], op: Operator | None = None) -> dict[str, dict]:
    """Attributes as reports record them: value, exact decimal, binary32 bits (a choice: its name)."""
    out = {}
    for k, v in attrs.items():
        a = next((a for a in op.attributes if a.name == k), None) if op is not None else None
        if a is not None and a.kind == "choice":
            out[k] = {"value": a.choices[int(v)], "exact": a.choices[int(v)], "bits": None}
        else:
            out[k] = {"value": float(v), "exact": exact_decimal(v), "bits": hex_bits(float(v), "float32")}
    return out


def user_value(op: Operator, name: str, v: Fraction):
    """An attribute as a target receives it: a float, or a choice's name."""
    a = op.attribute(name)
    return a.choices[int(v)] if a.kind == "choice" else float(v)


def choice_number(value) -> int | None:
    """The number a choice's name is, where it is one (LpNormalization's p = "2": 2): the C ABI and ONNX's INT
    attributes take that number; None for another value."""
    return int(value) if isinstance(value, str) and value.lstrip("-").isdigit() else None


def standard_for(op, attrs, standard=None) -> str:
    """The standard whose attributes these are (its implementation may differ: Softplus)."""
    if standard:
        return standard
    keys = set(attrs)
    fits = [s.key for s in op.standards if set(s.attribute_names) == keys]
    return op.primary if op.primary in fits or not fits else fits[0]
