"""The compiled exactness tests of sums and products against rational arithmetic."""

import math
from fractions import Fraction

import numpy as np
import pytest

from opcert.numerics.errorfree import product_is_exact, sum_is_exact


def _cases(seed=7, n=4000):
    rng = np.random.default_rng(seed)
    # random bit patterns (every binade, subnormals, inf, NaN) and short significands (exact cases)
    a = rng.integers(0, 2**64, n, dtype=np.uint64).view(np.float64)
    b = rng.integers(0, 2**64, n, dtype=np.uint64).view(np.float64)
    short_a = np.ldexp(rng.integers(-(2**20), 2**20, n).astype(np.float64), rng.integers(-60, 60, n))
    short_b = np.ldexp(rng.integers(-(2**20), 2**20, n).astype(np.float64), rng.integers(-60, 60, n))
    edge = np.array(
        [
            0.0,
            -0.0,
            1.0,
            0.5,
            0.25,
            3.0,
            2.0**1000,
            2.0**-1000,
            5e-324,
            1.7976931348623157e308,
            np.inf,
            -np.inf,
            np.nan,
            0.1,
            1 / 3,
        ]
    )
    ea, eb = np.meshgrid(edge, edge)
    return (np.concatenate([a, short_a, short_a, ea.ravel()]), np.concatenate([b, short_b, b, eb.ravel()]))


def test_product_is_exact_matches_rationals():
    a, b = _cases()
    with np.errstate(all="ignore"):  # overflowing products are part of the cases
        got = product_is_exact(a, b)
    for x, y, g in zip(a.tolist(), b.tolist(), got.tolist()):
        p = x * y
        exact = math.isfinite(x) and math.isfinite(y) and math.isfinite(p) and Fraction(x) * Fraction(y) == Fraction(p)
        # the test may say "not exact" where the splitting is unsafe; never "exact" where it is not
        assert not g or exact, (x, y)
        if exact and (x == 0 or y == 0 or (abs(x) < 2.0**990 and abs(y) < 2.0**990 and abs(p) > 2.0**-960)):
            assert g, (x, y)
    assert got.sum() > 1000  # the short significands are exact: the test exercised both answers


def test_sum_is_exact_matches_rationals():
    a, b = _cases(8)
    with np.errstate(all="ignore"):
        got = sum_is_exact(a, b)
    for x, y, g in zip(a.tolist(), b.tolist(), got.tolist()):
        s = x + y
        exact = math.isfinite(x) and math.isfinite(y) and math.isfinite(s) and Fraction(x) + Fraction(y) == Fraction(s)
        assert g == exact, (x, y)
    assert 1000 < got.sum() < got.size


@pytest.mark.parametrize("f", [product_is_exact, sum_is_exact])
def test_broadcasts_over_scalars(f):
    x = np.array([0.5, 1 / 3, 3.0])
    assert f(x, 2.0).shape == (3,) and f(np.float64(2.0), x).shape == (3,)


def _answers(other, a, b):
    """product_exact's answer and other's on each pair (a[i], b[i]), as compiled code calls them."""
    import numba

    from opcert.numerics.errorfree import product_exact

    @numba.njit
    def both(a, b, out1, out2):
        for i in range(a.size):
            out1[i] = product_exact(a[i], b[i])
            out2[i] = other(a[i], b[i])

    g1, g2 = np.empty(a.size, dtype=np.bool_), np.empty(a.size, dtype=np.bool_)
    with np.errstate(all="ignore"):
        both(a, b, g1, g2)
    return g1, g2


def test_the_power_of_two_shortcut_agrees_with_the_product_test():
    """product_exact_pow2(a, b), for a = +-2^k (ScaledTanh's 0.5 x, Linear's alpha = 1),
    answers as product_exact does on every case, and as rational arithmetic says."""
    from opcert.numerics.errorfree import product_exact_pow2

    _, b = _cases(9)
    rng = np.random.default_rng(9)
    k = rng.integers(-1074, 1024, b.size)
    a = np.ldexp(np.where(rng.random(b.size) < 0.5, 1.0, -1.0), k)
    a[:8] = [1.0, -1.0, 0.5, 2.0, 0.0, -0.0, 2.0**-1074, 2.0**1023]
    g1, g2 = _answers(product_exact_pow2, a, b)
    with np.errstate(all="ignore"):
        below = ~(np.abs(a * b) >= 2.0**1000)
    assert np.array_equal(g1[below], g2[below]) and below.sum() > b.size // 2
    assert not g2[~below].any()  # above 2^1000 (or overflowing): "not exact", never wrongly "exact"
    for x, y, g in zip(a.tolist(), b.tolist(), g2.tolist()):
        p = x * y
        exact = math.isfinite(x) and math.isfinite(y) and math.isfinite(p) and Fraction(x) * Fraction(y) == Fraction(p)
        assert not g or exact, (x, y)
    assert 1000 < g2.sum() < g2.size


def test_the_fused_multiply_add_test_agrees_with_dekkers():
    """product_exact_fma (the generated ball's test where the CPU has FMA) gives product_exact's
    answer on every case: random bit patterns of every binade, subnormals, infinities and NaNs,
    short significands (exact products) and the edge values; and never says "exact" where
    rational arithmetic says the product is not."""
    from opcert.numerics.errorfree import product_exact_fma

    a, b = _cases(10)
    g1, g2 = _answers(product_exact_fma, a, b)
    assert np.array_equal(g1, g2)
    assert 1000 < g2.sum() < g2.size
    for x, y, g in zip(a.tolist(), b.tolist(), g2.tolist()):
        if g:
            assert math.isfinite(x * y) and Fraction(x) * Fraction(y) == Fraction(x * y), (x, y)
