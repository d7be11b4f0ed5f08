"""The contract the implementation-level proofs assume of the platform's binary64
exp/expm1/tanh (opcert.verify.proofs.contracts.PLATFORM_CONTRACT), checked on
every binary64 value widened from float16 and bfloat16, and 10**6 random ones."""

import numpy as np
import pytest
from conftest import all_16bit


def _arguments():
    rng = np.random.default_rng(3)
    with np.errstate(invalid="ignore"):
        parts = [all_16bit("float16").astype(np.float64), all_16bit("bfloat16").astype(np.float64)]
    parts.append(rng.integers(0, 2**64, 10**6, dtype=np.uint64).view(np.float64))
    parts.append(rng.normal(0, 10, 10**5))
    t = np.concatenate(parts)
    t = t[~np.isnan(t)]
    return np.unique(t)  # sorted, +-0 merged


T = _arguments()


@pytest.mark.parametrize("name", ["tanh", "expm1", "exp"])
def test_monotone_and_nan(name):
    f = getattr(np, name)
    with np.errstate(all="ignore"):
        y = f(T)
        assert not np.isnan(y).any()
        assert (y[1:] >= y[:-1]).all()  # np.diff would give inf - inf = NaN
        assert np.isnan(f(np.array([np.nan, -np.nan]))).all()


def test_tanh_contract():
    y = np.tanh(T)
    assert ((y >= -1) & (y <= 1)).all()
    assert np.array_equal(np.tanh(-T), -y)
    assert (np.sign(y) == np.sign(T)).all() or ((y == 0) == (T == 0)).all()
    assert np.all((T > 0) <= (y >= 0)) and np.all((T < 0) <= (y <= 0))
    z = np.tanh(np.array([0.0, -0.0, np.inf, -np.inf]))
    assert z.tolist() == [0.0, -0.0, 1.0, -1.0] and np.signbit(z[1])


def test_expm1_contract():
    with np.errstate(over="ignore"):
        y = np.expm1(T)
    assert (y >= -1).all()
    assert np.all((T > 0) <= (y >= 0)) and np.all((T < 0) <= (y <= 0))
    z = np.expm1(np.array([0.0, -0.0, -np.inf]))
    assert z.tolist() == [0.0, -0.0, -1.0] and np.signbit(z[1])


def test_exp_contract():
    with np.errstate(over="ignore"):
        assert (np.exp(T) >= 0).all()
    assert np.exp(np.array([0.0, -0.0])).tolist() == [1.0, 1.0]
