"""Whether a binary64 sum or product is exact, compiled (numba ufuncs).

The ball evaluator asks this of every sum and product of every block, so that
an exact result (an exact midpoint such as Linear's 0.5 x + 0.25) carries no
rounding radius. In NumPy each test is a dozen temporaries over the block;
compiled it is one pass (bench/README.md, 'Figures behind choices in the code').
tests/test_errorfree.py checks both against rational arithmetic.
"""

from __future__ import annotations

import threading

import numpy as np

from opcert.expr.fma_kernel import llvm_fma
from opcert.jit import numba

SPLIT = 134217729.0  # 2^27 + 1: Veltkamp's splitter for binary64


@numba.njit(cache=True, nogil=True, inline="always")
def product_exact(a, b):
    """a * b == the real product (Dekker's error-free product; False where the
    splitting could overflow or the product reaches the subnormal range)."""
    p = a * b
    if a == 0.0 or b == 0.0:
        return a - a == 0.0 and b - b == 0.0  # 0 * inf is NaN
    # a zero p here is an underflow, not an exact zero (the NumPy version this
    # replaced took it for one)
    if not (abs(a) < 2.0**990 and abs(b) < 2.0**990 and abs(p) > 2.0**-960):
        return False
    c = SPLIT * a
    ah = c - (c - a)
    al = a - ah
    c = SPLIT * b
    bh = c - (c - b)
    bl = b - bh
    return ((ah * bh - p) + ah * bl + al * bh) + al * bl == 0.0


@numba.njit(cache=True, nogil=True, inline="always")
def product_exact_fma(a, b):
    """product_exact(a, b), the same answer on every pair, with one fused multiply-add in
    place of Dekker's product: under the same guards the rounding error a b - p is a
    binary64 number (|p| > 2^-960 keeps it above the subnormal range), which the fused
    operation gives exactly, so it is zero exactly when Dekker's sum is. One instruction
    where the CPU has FMA (the generated ball's products: Dekker's took a quarter of Gelu's
    vectorised kernel); elsewhere llvm.fma is a C library call, so the generator uses
    this only where the CPU reports FMA (tests/test_errorfree.py checks both agree)."""
    p = a * b
    if a == 0.0 or b == 0.0:
        return a - a == 0.0 and b - b == 0.0
    if not (abs(a) < 2.0**990 and abs(b) < 2.0**990 and abs(p) > 2.0**-960):
        return False
    return llvm_fma(a, b, -p) == 0.0


@numba.njit(cache=True, nogil=True, inline="always")
def product_exact_pow2(a, b):
    """product_exact(a, b) where a is +-2^k or 0 (known when the code is generated):
    the same answer without Dekker's product. Scaling by a power of two is exact
    whenever the result is normal and finite; with product_exact's guards, and
    |a b| < 2^1000 (where Dekker's own partial products cannot overflow), the two
    agree (tests/test_errorfree.py); above it this one says "not exact"."""
    if a == 0.0 or b == 0.0:
        return a - a == 0.0 and b - b == 0.0
    p = abs(a * b)
    return abs(a) < 2.0**990 and abs(b) < 2.0**990 and 2.0**-960 < p < 2.0**1000


@numba.njit(cache=True, nogil=True, inline="always")
def sum_exact(a, b):
    """a + b == the real sum (Knuth's TwoSum: the rounding error is exactly zero;
    False where a, b or the sum is not finite)."""
    s = a + b
    if not (s - s == 0.0 and a - a == 0.0 and b - b == 0.0):
        return False
    bb = s - a
    return (a - (s - bb)) + (b - bb) == 0.0


def exact_difference(a, b):
    """(d, d_lo): a - b rounded, and what the rounding left out (TwoSum: d + d_lo = a - b exactly, for finite
    a, b whose difference does not overflow). Plain arithmetic: over NumPy arrays as it is (verify.tensor.pairs),
    compiled where a kernel inlines exact_difference_inline (the pair check's)."""
    d = a - b
    z = d - a
    return d, (a - (d - z)) - (b + z)


exact_difference_inline = numba.njit(inline="always")(exact_difference)


# the same tests over arrays (numerics.ball); the scalar ones are called by the compiled ball (numerics.ball_compiled)
def product_is_exact(a, b):
    return _ufuncs()[0](a, b)


def sum_is_exact(a, b):
    return _ufuncs()[1](a, b)


def _product(a, b):
    return product_exact(a, b)


def _sum(a, b):
    return sum_exact(a, b)


_MADE: list = []
_MAKING = threading.Lock()


def _ufuncs():
    # built at the first use: a vectorize with a signature compiles (or loads its cache) when applied
    # (bench/README.md, 'Figures behind choices in the code'), and every sweep worker imports this module
    # for the scalar tests alone. Built and applied once under a lock: the reference's fast path runs on
    # several threads, and numba's first compilation in two threads at once races in numba's own registries
    # ("duplicate registration")
    if not _MADE:
        with _MAKING:
            if not _MADE:
                sig = ["boolean(float64, float64)"]
                made = tuple(numba.vectorize(sig, cache=True, nopython=True)(f) for f in (_product, _sum))
                for f in made:
                    f(np.zeros(1), np.zeros(1))
                _MADE.append(made)
    return _MADE[0]
