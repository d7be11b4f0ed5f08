"""What opcert knows of pow(a, b), the one binary function of the expression language (expr.power): its real
definition, its exact values, its enclosures, and what opcert assumes of the platform's binary64 pow. Every
interpreter's `power` (expr.fold) reads it, as they read a primitive's record in expr.primitives.

Over the reals a^b is defined for a > 0; at a = 0 for b >= 0 (0^0 = 1, C's and IEEE 754's pow); for a < 0
where b is an integer, as (-1)^b |a|^b. At a = 0 with b < 0 it has a pole (IEEE: +inf, or -inf at -0 for an
odd integer b). Elsewhere (a < 0, b not an integer) IEEE 754's pow is NaN: outside the domain.

The exponents opcert meets are binary32 attributes (DirectML's CONSTANT_POW Exponent) or values of a format:
dyadic rationals, so that a^(m / 2^k) is rational exactly where a is a perfect 2^k-th power. Those exact
values matter: the squares of binary32 values land on binary32 rounding midpoints ((1 + 2^-12)^2 = 1 + 2^-11 +
2^-24), where a precision loop would never decide.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
from flint import arb, fmpq, fmpz

# the platform contract, as reports state it (tests/test_contracts.py checks each clause on the platform)
CONTRACT = (
    "pow(a, b) is within 1 binary64 ULP of a^b for finite a, b where a^b is finite and normal",
    "pow(a, 0) = 1, pow(1, b) = 1, pow(a, 1) = a",
    "for b > 0, pow(., b) is non-decreasing on [0, inf); for b < 0, non-increasing on (0, inf)",
    "for an integer b and a < 0, pow(a, b) is not NaN, negative exactly for an odd b (no parity bit for bit: NumPy's "
    "AVX-512 pow gives pow(-a, 3) and -pow(a, 3) an ULP apart)",
    "pow(a, b) is NaN for a < 0 and b not an integer",
)
ULPS = 1.0  # glibc's pow: within 0.52 ULP since 2.28; tests/test_contracts.py measures it
LONG_DOUBLE_ULPS = 8.0  # glibc's powl (x86-64: the x87 format), as the primitives' long double contracts
LIBM = "math.pow"  # what the compiled ball calls where it takes no precomputed value
# the largest |b| * (bits of a) for which a rational a^b is computed exactly: beyond it the exact tier leaves it to
# Arb (a binary32 a to the power 3.4e38 has no rational value of any use)
MAX_EXACT_BITS = 1 << 16


class OutsideDomain(ValueError):
    """a < 0 with b not an integer: IEEE's NaN."""


def is_integer(b: Fraction) -> bool:
    return b.denominator == 1


def is_odd_integer(b: Fraction) -> bool:
    return b.denominator == 1 and b.numerator % 2 != 0


def exact_power(a: Fraction, b: Fraction) -> Fraction | None:
    """a^b as a rational where it is one; None where it is irrational (or too large to hold). Raises OutsideDomain
    (a < 0, b not an integer) and ZeroDivisionError (the pole: a = 0, b < 0)."""
    if a == 0:
        if b < 0:
            raise ZeroDivisionError("0 to a negative power")
        return Fraction(1) if b == 0 else Fraction(0)
    if a < 0 and not is_integer(b):
        raise OutsideDomain(f"{a} to the non-integer power {b}")
    if b == 0 or a == 1:
        return Fraction(1)
    num, den = abs(a.numerator), a.denominator
    q = b.denominator
    bits = max(num.bit_length(), den.bit_length())
    if abs(b) * bits > MAX_EXACT_BITS:
        return None
    if q != 1:  # a rational a^(m/q) is rational iff num and den are perfect q-th powers
        rn, rd = _root(num, q), _root(den, q)
        if rn is None or rd is None:
            return None
        num, den = rn, rd
    m = b.numerator
    v = Fraction(num, den) ** abs(m)
    if m < 0:
        v = 1 / v
    return -v if (a < 0 and m % 2) else v


def _root(n: int, q: int) -> int | None:
    if n in (0, 1):
        return n
    if q >= n.bit_length():  # a root r >= 2 has r^q >= 2^q > n (and q may be too large for fmpz.root: 2^100)
        return None
    r = int(fmpz(n).root(q))
    return r if r**q == n else None


def arb_power(a, b):
    """An enclosure of a^b for balls a and b (b exact where it is an attribute). Raises OutsideDomain where a is
    wholly negative and b no integer; ValueError where the ball cannot decide (a holding 0, or a on both sides
    of 0 with a non-integer b): the caller refines or says undecided."""
    if a.is_exact() and a == 0 and b > 0:
        return arb(0)
    if b.is_exact() and b == 0:
        return arb(1)
    if b.is_exact() and b.is_integer():
        n = int(b.unique_fmpz())
        if n < 0 and 0 in a:
            raise ValueError("a ball holding 0 to a negative power")
        return a**n
    if a > 0:
        return a**b
    if a < 0:
        raise OutsideDomain("a negative base to a non-integer power")
    raise ValueError("a ball holding 0 to a non-integer power")


def numpy_power(a, b, out=None):
    """The platform's binary64 pow, element by element (NumPy's loop: SVML's with AVX-512, else C's pow)."""
    with np.errstate(all="ignore"):
        return np.power(a, b) if out is None else np.power(a, b, out=out)


# the platform pow of the reference's ball over arrays (numerics.ball): NumPy's; tests compare it with the compiled
# ball, which calls the C library's (math.pow), by setting this to that one
ball_power = numpy_power


def signed_power(a, b, f=None, out=None):
    """f(a, b) (default: ball_power) with an integer b's parity taken from f(|a|, b): NumPy's loop runs the C
    library's scalar pow on negative bases, much slower than its SIMD loop on positive ones (bench/README.md,
    ConstantPow), and its value there is within the same contract either way. -0's sign is kept for an odd b (pow(-0, 3) = -0, pow(-0, -3) =
    -inf)."""
    f = f or ball_power
    b = np.float64(b)
    if not (np.isfinite(b) and b == np.floor(b)):
        return f(a, b) if out is None else f(a, b, out=out)
    y = f(np.abs(a), b) if out is None else f(np.abs(a), b, out=out)
    if b % 2 == 1:
        y = np.copysign(y, a, out=y if isinstance(y, np.ndarray) else None)
    return y


def arb_of_fraction(q: Fraction):
    return arb(fmpq(q.numerator, q.denominator))
