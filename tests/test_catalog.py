"""The activation catalog beyond the seed operators: spec-level refutations and
bounds the issue asks for, extreme float64 inputs the reference must survive,
and the runtime targets that read the catalog's declarations."""

import numpy as np
import pytest

import opcert
from opcert.verify.proofs import prove


@pytest.mark.parametrize("op", ["Gelu", "Mish", "Swish"])
def test_not_monotone_with_a_replayed_counterexample_and_a_proved_lower_bound(op):
    r = prove(op)
    by = {p.name: p for p in r.properties}
    mono = by["monotonic"]
    assert mono.status == "refuted" and mono.expected == "fails" and mono.counterexample["replayed"] is True
    x1, x2 = (float(mono.counterexample["inputs"][k]) for k in ("x1", "x2"))
    assert x1 < x2
    # independent check of the witness: the exact function decreases between the two inputs (mpmath)
    import mpmath as mp

    mp.mp.prec = 200
    f = {
        "Gelu": lambda t: t * (1 + mp.erf(t / mp.sqrt(2))) / 2,
        "Mish": lambda t: t * mp.tanh(mp.log(1 + mp.exp(t))),
        "Swish": lambda t: t / (1 + mp.exp(-t)),
    }[op]
    assert f(mp.mpf(x1)) > f(mp.mpf(x2))
    lower = [p for p in r.properties if p.kind == "range" and p.status == "proved"]
    assert lower, [(p.name, p.status, p.note) for p in r.properties]


def test_gelu_is_proved_non_decreasing_above_zero_by_composition():
    (p,) = prove("Gelu", properties=["monotonic_positive"]).properties
    assert p.status == "proved" and "composition rules" in p.method


@pytest.mark.parametrize(
    "op,x,expected",
    [
        ("Celu", 1.603036314281124e77, 1.603036314281124e77),  # x > 0: Celu(x) = x
        ("Mish", -1e300, -0.0),  # x tanh(softplus(x)) ~ -1e300 e^-1e300
        ("Gelu", -3532393.877226793, -0.0),  # 0.5 x erfc(2.5e6): below any subnormal
        ("Swish", -1e300, -0.0),
        ("Selu", 1.7976931348623157e308, np.inf),  # gamma > 1: beyond the largest finite value
        ("Softplus", 1e300, 1e300),  # ln(1 + e^x) = x + ln(1 + e^-x)
    ],
)
def test_extreme_float64_inputs_have_a_reference(op, x, expected):
    y = opcert.reference(op, np.array([x]))
    assert y[0] == expected and np.signbit(y[0]) == np.signbit(expected)


def _have(mod):
    # found, not imported: a test process that imports jax or openvino spawns its workers instead of forking
    # them (opcert.workers), which costs the whole suite minutes
    import importlib.util

    return importlib.util.find_spec(mod) is not None


@pytest.mark.skipif(not (_have("jax") and _have("openvino")), reason="needs opcert[jax] and opcert[openvino]")
# JAX's every-input one-element calls take 16-20 s (a dispatch each): the slow run's; CI runs JAX through
# tests/test_front_ends.py's float32 Gelu check
@pytest.mark.parametrize("target", [pytest.param("jax", marks=pytest.mark.slow), "openvino"])
def test_jax_and_openvino_run_the_catalog_functions(target):
    r = opcert.measure("Tanh", target, "float16", "exhaustive")
    assert r.status == "ok" and r.inputs_checked == 65536 and r.max_ulp < 2
    r = opcert.measure("HardSigmoid", target, "float16", "exhaustive")
    if target == "jax":  # jax.nn has no HardSigmoid with ONNX's alpha: skipped, with the reason
        assert r.status == "unsupported" and "maps no jax function to HardSigmoid" in r.error
    else:
        assert r.status == "ok" and r.inputs_checked == 65536
