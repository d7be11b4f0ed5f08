"""Attribute values: binary32, by ONNX or DirectML name, checked against their domains."""
from __future__ import annotations

import decimal
import math
from fractions import Fraction

from ..errors import UsageError, choices
from ..formats import FLOAT_FORMATS, hex_bits, round_fraction
from .model import Operator

BINARY32 = FLOAT_FORMATS["float32"]


def to_binary32(name: str, value) -> Fraction:
    """The exact value of `value` rounded to binary32 (nearest, ties to even).

    Decimal strings are rounded once, from their exact value."""
    try:
        if isinstance(value, str):
            text = value.strip()
            if text.lower() in ("nan", "+nan", "-nan", "inf", "+inf", "-inf", "infinity", "-infinity"):
                raise UsageError(f"attribute {name}={value!r} is not finite; attributes are finite binary32 values")
            q = Fraction(float.fromhex(text)) if text.lower().lstrip("+-").startswith("0x") else Fraction(text)
        elif isinstance(value, Fraction):
            q = value
        else:
            f = float(value)
            if not math.isfinite(f):
                raise UsageError(f"attribute {name}={value!r} is not finite; attributes are finite binary32 values")
            q = Fraction(f)
    except (ValueError, TypeError, ZeroDivisionError) as exc:
        if isinstance(exc, UsageError):
            raise
        raise UsageError(f"attribute {name}={value!r} is not a number") from None
    r = round_fraction(q, BINARY32, negative_zero=str(value).strip().startswith("-"))
    if math.isinf(r):
        raise UsageError(f"attribute {name}={value!r} overflows binary32 (largest finite: 3.4028235e38)")
    return Fraction(r) if r != 0 else Fraction(0)


def canonical_name(op: Operator, key: str) -> str:
    for a in op.attributes:
        if key == a.name or key.lower() in [a.name.lower()] + [s.lower() for s in a.aliases]:
            return a.name
    if not op.attributes:
        raise UsageError(f"{op.name} has no attributes (got {key!r})")
    allowed = [a.name for a in op.attributes] + [s for a in op.attributes for s in a.aliases]
    raise UsageError(f"unknown attribute {key!r} for {op.name}; allowed: {choices(allowed)}")


def resolve(op: Operator, attrs: dict | None = None, standard: str | None = None) -> dict[str, Fraction]:
    """Every attribute of `op` as an exact binary32 value: the given ones, the
    standard's defaults for the rest. Raises UsageError on unknown names,
    non-finite values and values outside the domain."""
    std = op.standard(standard)
    given = {}
    for key, value in (attrs or {}).items():
        name = canonical_name(op, key)
        if name in given:
            raise UsageError(f"attribute {name} given twice (as {key!r} too)")
        given[name] = to_binary32(name, value)
    out = {}
    for a in op.attributes:
        v = given[a.name] if a.name in given else to_binary32(a.name, std.defaults[a.name])
        if not a.domain.contains(v):
            raise UsageError(f"attribute {a.name}={float(v)!r} of {op.name} is outside its domain: "
                             f"allowed is {a.domain.description}")
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


def describe(attrs: dict[str, Fraction]) -> dict[str, dict]:
    """Attributes as reports record them: value, exact decimal, binary32 bits."""
    return {k: {"value": float(v), "exact": exact_decimal(v), "bits": hex_bits(float(v), "float32")}
            for k, v in attrs.items()}
