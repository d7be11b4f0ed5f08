"""Reading numbers people type: attribute values and `ref` inputs.

Accepted: decimals (`0.2`, `-1e-3`), hex floats with a binary exponent
(`0x1.8p-3`), and, for inputs, unsigned bit patterns (`0x3c00`), `inf` and
`nan`. Refused, with the reason: fractions (`1/3`), digit separators (`1_0`),
signed bit patterns (`-0x3c00`: write the pattern of the negative value), and
anything else. Exponents are looked at before any exact arithmetic, so
`1e999999999` is an overflow at once, never a hang.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from fractions import Fraction

from opcert.errors import UsageError

_DECIMAL = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")
_HEXFLOAT = re.compile(r"^([+-]?)0[xX]([0-9a-fA-F]*)(?:\.([0-9a-fA-F]*))?[pP]([+-]?\d+)$")
_BITS = re.compile(r"^0[xX][0-9a-fA-F]+$")
# Beyond these decimal exponents every format opcert knows overflows, or rounds to zero.
_HUGE, _TINY = 400, -400
FORMS = "a decimal (0.2, -1e-3) or a hex float with a binary exponent (0x1.8p-3)"


class Huge(Exception):
    """The value's magnitude is beyond every finite value of every format."""

    def __init__(self, negative: bool):
        self.negative = negative


class Tiny(Exception):
    """The value is nonzero and below every format's smallest subnormal."""

    def __init__(self, negative: bool):
        self.negative = negative


def is_bit_pattern(text: str) -> bool:
    return bool(_BITS.match(text.strip()))


def parse_real(text: str, what: str) -> Fraction:
    """The exact value of a decimal or hex-float string. Raises Huge or Tiny for
    magnitudes beyond any format, UsageError for anything that is not such a number."""
    t = text.strip()
    neg = t.startswith("-")
    if _DECIMAL.match(t):
        try:
            d = Decimal(t)
        except InvalidOperation:
            raise UsageError(f"{what} {text!r} is not a number; write {FORMS}") from None
        if d.is_zero():
            return Fraction(0)
        e = d.adjusted()
        if e > _HUGE:
            raise Huge(neg)
        if e < _TINY:
            raise Tiny(neg)
        return Fraction(d)
    m = _HEXFLOAT.match(t)
    if m:
        sign, whole, frac, exp = m.groups()
        frac = frac or ""
        if not whole and not frac:
            raise UsageError(f"{what} {text!r} is not a number; write {FORMS}")
        mant = int((whole or "0") + frac, 16)
        e2 = int(exp) - 4 * len(frac)
        if mant == 0:
            return Fraction(0)
        top = mant.bit_length() + e2
        if top > 4 * _HUGE:
            raise Huge(neg)
        if top < 4 * _TINY:
            raise Tiny(neg)
        q = Fraction(mant) * Fraction(2) ** e2
        return -q if sign == "-" else q
    hint = ""
    if "/" in t:
        hint = " (fractions are not accepted: write the decimal value)"
    elif "_" in t:
        hint = " (digit separators are not accepted)"
    elif t.lstrip("+-").lower().startswith("0x") and t[:1] in "+-":
        hint = " (a bit pattern has no sign: write the pattern of the negative value, or a hex float such as -0x1p0)"
    elif t.lower().startswith("0x") and not re.fullmatch(r"0[xX][0-9a-fA-F.]+", t):
        hint = " (after 0x come hex digits: a bit pattern such as 0x3c00, or a hex float such as 0x1.8p-3)"
    elif t.lower().startswith("0x"):
        hint = " (a hex float needs a binary exponent, such as 0x1.8p-3)"
    raise UsageError(f"{what} {text!r} is not a number{hint}; write {FORMS}")
