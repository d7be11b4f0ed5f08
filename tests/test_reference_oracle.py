"""The reference against MPFR (gmpy2): every float16 and bfloat16 input, at the
default attributes and two other attribute sets per operator, and random
float32 and float64 inputs."""

import numpy as np
import pytest
from conftest import DTYPES, all_16bit, same_bits
from oracle import oracle

import opcert
from opcert.spec.attrs import resolve

ATTR_SETS = {
    "Tanh": [{}],
    "ScaledTanh": [{}, {"alpha": 1.7159, "beta": 0.6666667}, {"alpha": -2.5, "beta": 3.0}],
    "HardSigmoid": [{}, {"alpha": 1 / 6, "beta": 0.5}, {"alpha": -0.75, "beta": 0.1}],
    "Shrink": [{}, {"bias": 1.5, "lambd": 1.0}, {"bias": -0.3, "lambd": 0.0}],
    "Celu": [{}, {"alpha": 2.0}, {"alpha": 0.1}],
}
CASES = [(op, a) for op, sets in ATTR_SETS.items() for a in sets]


def _binary32_attrs(op, attrs):
    return {k: float(v) for k, v in resolve(opcert.get_operator(op), attrs).items()}


def _sixteen_bit_cases():
    """float16 for every case; bfloat16 for Tanh in CI, the others in the slow run (tests/test_catalog_oracle.py
    checks every operator in bfloat16 too, against the other oracle)."""
    ids = [f"{o}-{i}" for o, a in ATTR_SETS.items() for i in range(len(a))]
    return [
        pytest.param(op, attrs, dtype, id=f"{i}-{dtype}", marks=[pytest.mark.slow] if slow else [])
        for dtype in ("float16", "bfloat16")
        for (op, attrs), i in zip(CASES, ids)
        for slow in [dtype == "bfloat16" and op != "Tanh"]
    ]


@pytest.mark.parametrize("op,attrs,dtype", _sixteen_bit_cases())
def test_every_16bit_input(op, attrs, dtype):
    if op == "Shrink" and dtype == "bfloat16":
        pass  # opcert takes bfloat16 for every operator, whatever the standards list
    x = all_16bit(dtype)
    got = opcert.reference(op, x, **attrs)
    want = oracle(op, x, _binary32_attrs(op, attrs))
    bad = ~same_bits(got.astype(np.float64), want)
    assert not bad.any(), f"{bad.sum()} mismatches, first at x={x[bad][:5]}: got {got[bad][:5]}, MPFR {want[bad][:5]}"


def _random(dtype, n, seed):
    rng = np.random.default_rng(seed)
    bits = rng.integers(0, 2 ** (8 * DTYPES[dtype].itemsize), size=n, dtype=np.uint64)
    return bits.astype(f"uint{8 * DTYPES[dtype].itemsize}").view(DTYPES[dtype])


@pytest.mark.parametrize("op", list(ATTR_SETS))
def test_random_float32(op):
    # 20,000 random bit patterns per operator: 100,000 in all.
    x = _random("float32", 20_000, 32)
    attrs = ATTR_SETS[op][-1]
    got = opcert.reference(op, x, **attrs)
    want = oracle(op, x, _binary32_attrs(op, attrs))
    bad = ~same_bits(got.astype(np.float64), want)
    assert not bad.any(), f"x={x[bad][:5]} got={got[bad][:5]} want={want[bad][:5]}"


@pytest.mark.parametrize("op", list(ATTR_SETS))
def test_random_float64(op):
    # Random bit patterns land mostly at huge or tiny magnitudes; half the
    # inputs are drawn near the interesting range instead.
    n = 20_000
    rng = np.random.default_rng(64)
    x = np.concatenate([_random("float64", n // 2, 64), rng.normal(0, 4, n // 2)])
    attrs = ATTR_SETS[op][1] if len(ATTR_SETS[op]) > 1 else {}
    got = opcert.reference(op, x, **attrs)
    want = oracle(op, x, _binary32_attrs(op, attrs))
    bad = ~same_bits(got, want)
    assert not bad.any(), f"x={x[bad][:5]} got={got[bad][:5]} want={want[bad][:5]}"
