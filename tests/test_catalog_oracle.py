"""The reference of every catalog operator against MPFR (gmpy2, tests/oracle.py): every finite
float16 input at the defaults and at another attribute set, and random finite float32 and float64
inputs. Zeros are compared by value (their sign is the standard's IEEE formula's, checked elsewhere)."""
import numpy as np
import pytest
from oracle import catalog_oracle

import opcert
from opcert.spec.attrs import resolve

OTHER = {"Elu": {"alpha": 2.5}, "LeakyRelu": {"alpha": -0.3}, "PRelu": {"slope": 0.25},
         "ThresholdedRelu": {"alpha": -1.5}, "Selu": {"alpha": 2.0, "gamma": 3.0}, "Swish": {"alpha": 1.702},
         "Linear": {"alpha": 3.0, "beta": -0.1}}
SEEDS = {"Tanh", "ScaledTanh", "HardSigmoid", "Shrink", "Celu"}   # tests/test_reference_oracle.py
OPS = [op.name for op in opcert.operators() if op.name not in SEEDS
       and not any(a.kind == "choice" and a.name != "approximate" for a in op.attributes)]
CASES = [(n, {}) for n in OPS] + [(n, a) for n, a in OTHER.items() if n in OPS]


def _same(got, want):
    got = got.astype(np.float64)
    return (got == want) | (np.isnan(got) & np.isnan(want))


def _check(name, attrs, x):
    op = opcert.get_operator(name)
    a = {k: float(v) for k, v in resolve(op, attrs).items()}
    got = opcert.reference(name, x, **attrs)
    want = catalog_oracle(name, x, a)
    bad = ~_same(got, want)
    assert not bad.any(), f"{name} {attrs}: {bad.sum()} differ; x={x[bad][:4]} got={got[bad][:4]} MPFR={want[bad][:4]}"


@pytest.mark.parametrize("name,attrs", CASES, ids=[f"{n}-{'default' if not a else 'other'}" for n, a in CASES])
def test_every_finite_float16_input(name, attrs):
    x = np.arange(1 << 16, dtype=np.uint16).view(np.float16)
    _check(name, attrs, x[np.isfinite(x)])


@pytest.mark.parametrize("name", OPS)
@pytest.mark.parametrize("dtype,n", [("float32", 3000), ("float64", 400)])
def test_random_float32_and_float64(name, dtype, n):
    rng = np.random.default_rng(11)
    width = 32 if dtype == "float32" else 64
    bits = rng.integers(0, 2 ** width - 1, n, dtype=np.uint64).astype(f"uint{width}")
    x = bits.view(dtype)
    # half of them in [-40, 40], where every operator does something other than saturate
    x = np.concatenate([x, rng.uniform(-40, 40, n).astype(dtype)])
    _check(name, {}, x[np.isfinite(x)])
