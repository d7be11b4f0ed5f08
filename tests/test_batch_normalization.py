"""BatchNormalization in inference form (issue 53): one channel's y = scale (x - mean) / sqrt(var + epsilon) + B.

Expected values come from MPFR through gmpy2 (the exact value, rounded by MPFR into each format) and from ONNX's
own test case (onnx/backend/test/case/node/batch_normalization.py), never from opcert's code."""

from __future__ import annotations

import json
import tomllib

import ml_dtypes
import numpy as np
import pytest
from conftest import all_16bit
from oracle import catalog_scalar

import opcert
from opcert.formats import FLOAT_FORMATS

NAMES = ("scale", "B", "input_mean", "input_var", "epsilon")
DTYPES = {"float16": np.float16, "bfloat16": ml_dtypes.bfloat16, "float32": np.float32, "float64": np.float64}
# (scale, B, mean, var, epsilon): the declaration's examples, B cancelling much of the rest, a negative scale, a
# variance + epsilon of exactly 1 (scale (x - mean) + B: exact zeros), a zero scale, tiny and huge parameters
SETS = [
    (1.25, -0.5, 0.75, 2.0, 1e-5),
    (3.0, 1000.0, -2.5, 0.0625, 1e-3),
    (-0.7, 0.3, 0.1, 5.5, 1e-5),
    (1.0, -0.5, 0.0, 1.0 - 2.0**-24, 2.0**-24),
    (0.0, 2.5, 1.0, 1.0, 1e-5),
    (2.0**-20, 2.0**-30, 3e4, 1e-30, 1e-38),
    (6e4, -1e30, -7e-3, 3e38, 1.0),
    # B = 0 (the float64 error relative), at k near its largest (scale 3.4e38 over sqrt(1.4e-45): 9e60)
    (1.25, 0.0, 0.75, 2.0, 1e-5),
    (3.4e38, 0.0, -1.0, 0.0, 1.4e-45),
]


def mpfr_batch_norm(x: float, p: tuple, dtype: str) -> float:
    """MPFR's value at a finite x, rounded into dtype (tests/oracle.py: x - mean and var + epsilon exact in
    rationals, the quotient raised in precision where it lands on a midpoint), the parameters as binary32."""
    return catalog_scalar("BatchNormalization", x, _attrs(p), dtype)


def _attrs(p):
    return dict(zip(NAMES, (float(np.float32(v)) for v in p)))


def _inputs(dtype: str, n: int, rng) -> np.ndarray:
    fmt = FLOAT_FORMATS[dtype]
    if fmt.bits == 16:
        x = all_16bit(dtype)
    else:
        x = rng.integers(0, 1 << fmt.bits, n, dtype=np.uint64).astype(fmt.uint).view(fmt.dtype)
    with np.errstate(invalid="ignore"):
        return x[np.isfinite(x.astype(np.float64))]


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
@pytest.mark.parametrize("p", SETS[:4], ids=lambda p: ",".join(f"{v:g}" for v in p))
def test_the_reference_is_mpfr_rounded(dtype, p):
    """On a spread of finite inputs (every 64th 16-bit pattern; 400 random ones wider), and at inputs next to
    the zero of (x - mean) k + B, where B cancels the rest."""
    rng = np.random.default_rng(5)
    x = _inputs(dtype, 400, rng)
    if FLOAT_FORMATS[dtype].bits == 16:
        x = x[::64]
    attrs = _attrs(p)
    root = attrs["input_mean"] - attrs["B"] * np.sqrt(attrs["input_var"] + attrs["epsilon"]) / attrs["scale"]
    near = np.array([root], dtype=np.float64).astype(DTYPES[dtype])
    for _ in range(8):  # its neighbours, both ways
        near = np.concatenate(
            [near, np.nextafter(near, DTYPES[dtype](np.inf)), np.nextafter(near, DTYPES[dtype](-np.inf))]
        )
    x = np.concatenate([x, np.unique(near)])
    want = np.array([mpfr_batch_norm(float(v), p, dtype) for v in x.astype(np.float64)])
    got = opcert.reference("BatchNormalization", x, **attrs).astype(np.float64)
    bad = np.flatnonzero(~((got == want) & (np.signbit(got) == np.signbit(want))))
    assert bad.size == 0, [(float(x[i]), got[i], want[i]) for i in bad[:5]]


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("p", SETS, ids=lambda p: ",".join(f"{v:g}" for v in p))
def test_opcerts_code_is_the_reference_on_every_16_bit_input(dtype, p):
    x = all_16bit(dtype)
    attrs = _attrs(p)
    got, want = opcert.run("BatchNormalization", x, **attrs), opcert.reference("BatchNormalization", x, **attrs)
    nan = np.isnan(want.astype(np.float32))
    assert np.array_equal(nan, np.isnan(got.astype(np.float32)))  # NaN at NaN inputs only, any payload
    assert np.array_equal(got.view(np.uint16)[~nan], want.view(np.uint16)[~nan])


@pytest.mark.parametrize("p", SETS, ids=lambda p: ",".join(f"{v:g}" for v in p))
def _near_root(attrs, dtype, rng, n=20000, steps=200):
    """n random finite inputs, and where (x - mean) k + B = 0 has a finite root in dtype: it and the `steps` values
    above it, and the one below."""
    x = _inputs(dtype, n, rng)
    if attrs["scale"] == 0:
        return x
    t = DTYPES[dtype]
    with np.errstate(over="ignore"):
        root = attrs["input_mean"] - attrs["B"] * np.sqrt(attrs["input_var"] + attrs["epsilon"]) / attrs["scale"]
        r = np.array([root]).astype(t)
    if not np.isfinite(r[0]):
        return x
    near = [np.nextafter(r, t(-np.inf)), r]
    for _ in range(steps):
        near.append(np.nextafter(near[-1], t(np.inf)))
    return np.concatenate([x, *near])


@pytest.mark.parametrize("p", SETS, ids=lambda p: ",".join(f"{v:g}" for v in p))
def test_opcerts_float32_and_float64_are_correctly_rounded(p):
    """On random inputs and next to the zero of (x - mean) k + B, where the binary64 value cancels: float32 is the
    reference bit for bit (20,000 random inputs and 202 near the zero); float64 (numerics.affine64, the exact value
    where it cannot decide) is MPFR's value on 1,000 random inputs and the 202 near the zero, and the reference's
    on 20,000 more."""
    attrs = _attrs(p)
    rng = np.random.default_rng(11)
    x = _near_root(attrs, "float32", rng)
    got, want = opcert.run("BatchNormalization", x, **attrs), opcert.reference("BatchNormalization", x, **attrs)
    assert np.array_equal(got.view(np.uint32), want.view(np.uint32))
    x = _near_root(attrs, "float64", rng, n=1000)
    got = opcert.run("BatchNormalization", x, **attrs)
    mp = np.array([mpfr_batch_norm(float(v), p, "float64") for v in x])
    bad = np.flatnonzero(~((got == mp) & (np.signbit(got) == np.signbit(mp))))
    assert bad.size == 0, [(float(x[i]), got[i], mp[i]) for i in bad[:5]]
    x = _inputs("float64", 20000, rng)
    got, want = opcert.run("BatchNormalization", x, **attrs), opcert.reference("BatchNormalization", x, **attrs)
    assert np.array_equal(got.view(np.uint64), want.view(np.uint64))


def test_the_float64_evaluation_decides_nearly_every_input_and_defers_the_rest():
    """numerics.affine64 leaves few inputs to the exact path: none of 10^5 random ones at the example parameters.
    x = mean gives B exactly, decided; an exact zero is left to the exact path (its sign is the formula's)."""
    from opcert.numerics import affine64
    from opcert.spec.attrs import resolve

    op = opcert.get_operator("BatchNormalization")
    a = resolve(op, {})
    kh, kl = affine64.coefficient(a["scale"], a["input_var"], a["epsilon"])
    x = np.random.default_rng(3).standard_normal(10**5) * 4
    _, undecided = affine64.rounded(x, float(a["input_mean"]), kh, kl, float(a["B"]))
    assert not undecided.any()
    # x = mean: the value is B exactly, decided; k = 1, x = 1.25, mean 0.75, B = -0.5: the value is 0, deferred
    _, und = affine64.rounded(np.array([0.75, 1.25]), 0.75, 1.0, 0.0, -0.5)
    assert und.tolist() == [False, True]


def test_onnx_backend_case_per_channel():
    """ONNX's test_batchnorm_example and test_batchnorm_epsilon: X (2, 3, 4, 5) and one scale, B, mean, var per
    channel, the expected output ONNX's formula in float32 NumPy. opcert's reference, channel by channel, is
    within ONNX's own float32 roundings of it and equal to MPFR's."""
    from onnx.backend.test.case.node.batch_normalization import _batchnorm_test_mode

    rng = np.random.default_rng(0)
    for eps in (1e-5, 1e-2):
        x = rng.standard_normal((2, 3, 4, 5)).astype(np.float32)
        s, b, m = (rng.standard_normal(3).astype(np.float32) for _ in range(3))
        v = rng.random(3).astype(np.float32)
        onnx_y = _batchnorm_test_mode(x, s, b, m, v, eps).astype(np.float32)
        for c in range(3):
            attrs = dict(scale=float(s[c]), B=float(b[c]), input_mean=float(m[c]), input_var=float(v[c]), epsilon=eps)
            got = opcert.reference("BatchNormalization", x[:, c], **attrs)
            assert got.shape == x[:, c].shape
            # ONNX's float32 steps are off by their roundings of the terms, many ULPs of y where B cancels them:
            # within 4 float32 roundings of the terms' size, the tolerance its own backend tests are far above
            terms = np.abs(s[c] * (x[:, c] - m[c]) / np.sqrt(v[c] + eps)) + abs(b[c])
            assert np.all(np.abs(got.astype(np.float64) - onnx_y[:, c]) <= 4 * 2.0**-24 * terms)
            p = (s[c], b[c], m[c], v[c], eps)
            want = [mpfr_batch_norm(float(t), p, "float32") for t in x[:, c].reshape(-1)]
            assert got.reshape(-1).astype(np.float64).tolist() == want


def test_through_the_cli_and_the_attribute_domains(cli):
    code, out, err = cli(
        "ref", "BatchNormalization", "--attr", "scale=2", "--attr", "B=1", "--attr", "input_mean=0.5",
        "--attr", "input_var=3.99999", "--json", "--", 0.5, 2.5,
    )  # fmt: skip
    assert code == 0, err
    res = [r["result"] for r in json.loads(out)["results"]]
    assert res[0] == 1.0  # x = mean: B
    assert res[1] == float(
        np.float32(1 + 2 * 2 / np.sqrt(np.float64(np.float32(3.99999)) + np.float64(np.float32(1e-5))))
    )
    code, _, err = cli("ref", "BatchNormalization", "--attr", "input_var=-1", "--", 1)
    assert code == 2 and "input_var" in err and ">= 0" in err
    code, _, err = cli("ref", "BatchNormalization", "--attr", "epsilon=0", "--", 1)
    assert code == 2 and "epsilon" in err and "> 0" in err


FAULTS = """
[[check]]
name = "{name}"
op = "BatchNormalization"
dtypes = ["float16"]
target = "norm_kernels:{kernel}"
max_ulp = 1
attrs = {{ scale = 3.0, B = 991.1026611328125, input_mean = -2.5, input_var = 0.0625, epsilon = 0.001 }}
"""
KERNELS = [
    ("careful", "bn_careful"),
    ("in float16", "bn_in_format"),
    ("folded in float32", "bn_folded_float32"),
    ("epsilon after the square root", "bn_epsilon_after_sqrt"),
]


def test_a_gate_fails_each_bug_class_and_passes_the_careful_kernel():
    """Every float16 input, at parameters where B (binary32 of 3 (85.75 - 2.5) / sqrt(0.0625 + 0.001)) cancels the
    rest at x = -85.75 to about 3e-5: the careful binary64 kernel
    passes; computing in float16, folding k and c in float32, or adding epsilon to the standard deviation each
    fail with the input that shows it."""
    from opcert.gating.config import parse
    from opcert.gating.run import run_gate

    text = "".join(FAULTS.format(name=n, kernel=k) for n, k in KERNELS)
    result = run_gate(parse(tomllib.loads(text), "bn.toml"), workers=2)
    by = {r.check.name: r for r in result.results}
    assert by["careful"].status == "pass", by["careful"].reasons
    for name, _ in KERNELS[1:]:
        r = by[name]
        assert r.status == "fail", (name, r.reasons)
        assert r.accuracy["max_ulp"] > 1, (name, r.accuracy["max_ulp"])
        # the input that shows it, with its output and the correctly rounded one, in the reason a reader sees
        why = r.reasons[0]
        assert why.startswith("max ULP error") and f"at x = {r.accuracy['worst_input']!r}" in why, why


def test_runtimes_run_it_as_one_channel():
    """ONNX Runtime, onnx.reference and torch each run the one-channel form of every shape (X viewed as
    (1, 1, n)), in float32 within a few ULPs; OpenVINO in float16 where the parameters are float16 values, and
    says why not where one is not."""
    attrs = _attrs(SETS[0])
    x = np.linspace(-4, 4, 24, dtype=np.float32).reshape(2, 3, 4)
    want = opcert.reference("BatchNormalization", x, **attrs)
    for target in ("onnxruntime", "onnx-reference", "torch"):
        r = opcert.measure("BatchNormalization", target, "float32", x, attrs=attrs)
        # the inputs cross the zero of (x - mean) k + B: a float32 kernel's folding is a few ULPs off there
        assert r.status == "ok" and r.inputs_checked == 24 and r.max_ulp <= 16, (target, r.status, r.error, r.max_ulp)
    r = opcert.measure("BatchNormalization", "openvino", "float16", x.astype(np.float16), attrs=attrs)
    assert r.status == "ok", r.error
    r = opcert.measure("BatchNormalization", "openvino", "float16", x.astype(np.float16), attrs={**attrs, "B": 0.1})
    assert r.status == "unsupported" and "B=0.10000000149011612 is not a float16 value" in r.error
    r = opcert.measure("BatchNormalization", "openvino", "float16", x.astype(np.float16), attrs={**attrs, "scale": 1e5})
    assert r.status == "unsupported" and "scale=100000.0 is not a float16 value" in r.error
    assert want.shape == x.shape


def _torch_parameters() -> list:
    """In a worker (torch stays out of the test process): what batch_norm_one_channel gives torch's batch_norm,
    for a float16 x of shape (2, 3) and a float64 one."""
    import torch

    from opcert.targets.runtimes import torch as torch_target

    seen, real = [], torch.nn.functional.batch_norm

    def spy(x, mean, var, weight, bias, **kw):
        seen.append((tuple(x.shape), str(mean.dtype), str(weight.dtype), float(bias[0])))
        return real(x, mean, var, weight, bias, **kw)

    torch.nn.functional.batch_norm = spy
    try:
        x = torch.zeros((2, 3), dtype=torch.float16)
        y = torch_target.batch_norm_one_channel(
            x, mean=0.75, var=2.0, weight=1e5, bias=float(np.float32(0.1)), eps=1e-5
        )
        seen.append((tuple(y.shape), str(y.dtype)))
        torch_target.batch_norm_one_channel(x.double(), mean=0.75, var=2.0, weight=1.0, bias=0.0, eps=1e-5)
    finally:
        torch.nn.functional.batch_norm = real
    return seen


def test_the_parameters_reach_the_runtimes_in_binary32_beside_a_float16_x():
    """A float16 check does not round a parameter to float16 first: the ONNX model's initializers are binary32
    (ONNX-15's T1 and T2), holding the attributes' binary32 values, and torch's batch_norm is given float32
    tensors of them (float64 ones beside a float64 x)."""
    from onnx import numpy_helper

    from opcert.spec.attrs import resolve
    from opcert.targets.runtimes.onnx_models import ONNX_ELEM, onnx_model
    from opcert.workers import run_isolated

    op = opcert.get_operator("BatchNormalization")
    model = onnx_model(op, "float16", resolve(op, {"B": 0.1, "scale": 1e5}))
    inits = {t.name: t for t in model.graph.initializer}
    assert inits["opcert_B"].data_type == ONNX_ELEM["float32"] and list(inits["opcert_B"].dims) == [1]
    assert float(numpy_helper.to_array(inits["opcert_B"])[0]) == float(np.float32(0.1))
    assert float(numpy_helper.to_array(inits["opcert_scale"])[0]) == 1e5
    seen = run_isolated(_torch_parameters)
    b = float(np.float32(0.1))
    assert seen[:2] == [((1, 1, 6), "torch.float32", "torch.float32", b), ((2, 3), "torch.float16")]
    assert seen[2][1:3] == ("torch.float64", "torch.float64")
