"""The normalizations' Scale and B (issue 53): y = scale z + B after the normalization z, each one binary32 value over
the row. The reference against MPFR where scale z cancels B, opcert's implementation correctly rounded there, the
row properties restated about B and in units of scale (checked and proved), a kernel with the affine step in the
tensor's format or without B failing a gate, and the runtimes given tensors of those values."""

import numpy as np
import pytest
from test_normalizations import FAULTS as NORM_FAULTS
from test_normalizations import _mpfr_row

import opcert
from opcert.spec import get_tensor_operator
from opcert.spec.row_reference import reference
from opcert.verify.tensor.measure import measure_rows

EPS = float(np.float32(1e-5))
# scale z cancels B next to z = 0.4: y within a few ULPs of B's own size there is tiny
AFFINE = (("scale", 1.25), ("B", -0.5))


def _rows(dtype: str) -> list[np.ndarray]:
    """Rows whose outputs land next to 0 at scale 1.25, B -0.5 or -1.25: [0, 2] gives z = +-1 / sqrt(1 + eps), so
    1.25 z - 1.25 is -1.25 (1 - 1 / sqrt(1 + eps)), about -6e-6; a row of 5 with z = 0.4 exactly is rational (no
    exact zero: epsilon moves it); the issue's [40000, ..., 40003]; random rows."""
    rng = np.random.default_rng(53)
    out = [
        np.array([0.0, 2.0]),
        np.array([-2.0, -1.0, 0.0, 1.0, 2.0]) * 0.4 * np.sqrt(2.0),
        np.array([40000.0, 40001, 40002, 40003]),
        rng.standard_normal(7),
        rng.standard_normal(33) * 3 + 1,
    ]
    if dtype != "float16":
        # binary64's mean of [1, 2, 1, -2^-100] is 1: element 0's deviation is 0 there and 2^-102 exactly, so y is B
        # in binary64 and just above it exactly (above a tie where B is one: the band must send it to the reference)
        out.append(np.array([1.0, 2.0, 1.0, -(2.0**-100)]))
    return [r.astype(np.float32).astype(opcert.formats.get_format(dtype).dtype) for r in out]


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
@pytest.mark.parametrize("bias", [-0.5, -1.25])
def test_the_reference_is_mpfrs_where_the_bias_cancels(dtype, bias):
    for row in _rows(dtype):
        got = reference("LayerNormalization", row[None, :], attrs={"scale": 1.25, "B": bias}).reshape(-1)
        want = _mpfr_row("LayerNormalization", row, EPS, dtype, 1.25, bias)
        assert got.astype(np.float64).tolist() == want, (row.tolist(), got.tolist(), want)


@pytest.mark.parametrize(
    "name, standard, attrs, mpfr_as",
    [
        ("RMSNormalization", None, {"scale": -3.0}, "RMSNormalization"),
        ("InstanceNormalization", None, {"scale": 1.25, "B": -1.25}, "LayerNormalization"),
        ("GroupNormalization", None, {"scale": 1.25, "B": -1.25, "num_groups": "1"}, "LayerNormalization"),
        ("MeanVarianceNormalization", "directml-1", {"scale": 1.25, "B": -1.25}, "LayerNormalization"),
    ],
)
def test_every_normalization_with_an_affine_step_is_mpfrs(name, standard, attrs, mpfr_as):
    """One row each, as each standard's rows are made of a tensor: InstanceNormalization's (1, 1, n), one group of
    one channel (1, 1, n), DirectML's MVN1 over its Axes."""
    for row in _rows("float32"):
        x = row[None, None, :] if name in ("InstanceNormalization", "GroupNormalization") else row[None, :]
        kw = {"axes": [1]} if standard == "directml-1" else {}
        got = reference(name, x, standard=standard, attrs=attrs, **kw).reshape(-1)
        want = _mpfr_row(mpfr_as, row, EPS, "float32", attrs["scale"], attrs.get("B", 0.0))
        assert got.astype(np.float64).tolist() == want, (name, row.tolist())


@pytest.mark.parametrize("name", ["LayerNormalization", "RMSNormalization", "InstanceNormalization"])
@pytest.mark.parametrize("dtype", ["float16", "float32"])
def test_opcerts_implementation_is_correctly_rounded_with_scale_and_b(name, dtype):
    attrs = AFFINE if name != "RMSNormalization" else (("scale", -3.0),)
    r = measure_rows(name, "opcert", dtype, samples=2000, attrs=attrs)
    assert r.status == "ok" and r.correctly_rounded == r.elements and r.special_mismatches == 0, r.worst
    claimed = [p for p in r.properties if p["expected"] == "holds"]  # scaling: claimed where epsilon = 0 only
    assert {p["status"] for p in claimed} == {"checked"}, [p for p in claimed if p["status"] != "checked"]
    assert {p["name"] for p in r.properties if p["expected"] != "holds"} <= {"scaling"}
    assert "--attr scale=" in r.command


# B at a rounding midpoint of each 16-bit format (1 + half an ULP of 1): where z is 0 exactly y is B itself, a tie;
# float32's ties are no binary32 values, so there B is the next value above 1
MIDPOINT = {"float16": 1 + 2.0**-11, "bfloat16": 1 + 2.0**-8, "float32": 1 + 2.0**-23}


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32"])
@pytest.mark.parametrize("bias", [-1.25, "midpoint"])
def test_opcerts_implementation_is_mpfrs_where_the_bias_cancels(dtype, bias):
    """opcert.run itself (its binary64 fma and the band it sends to the reference), element by element against MPFR,
    on the rows whose outputs cancel next to 0 and where z = 0 gives B at a tie of the format."""
    b = float(np.float32(MIDPOINT[dtype])) if bias == "midpoint" else bias
    for row in _rows(dtype):
        got = opcert.run("LayerNormalization", row[None, :], scale=1.25, B=b).reshape(-1)
        want = _mpfr_row("LayerNormalization", row, EPS, dtype, 1.25, b)
        assert got.astype(np.float64).tolist() == want, (row.tolist(), got.tolist(), want)


def test_float64_with_scale_and_b():
    """LayerNormalization in binary64 (the reference) against MPFR on the cancelling rows; RMSNormalization times its
    scale within its stated bound."""
    for row in _rows("float64"):
        got = opcert.run("LayerNormalization", row[None, :], scale=1.25, B=-1.25).reshape(-1)
        assert got.tolist() == _mpfr_row("LayerNormalization", row, EPS, "float64", 1.25, -1.25), row.tolist()
    rng = np.random.default_rng(4)
    x = rng.standard_normal((4, 300)) + 5
    y = opcert.run("RMSNormalization", x, scale=-3.0)
    want = reference("RMSNormalization", x, attrs={"scale": -3.0})
    bound = get_tensor_operator("RMSNormalization")[0].budget64(x.shape[1])
    assert np.max(np.abs(y - want) / np.spacing(np.abs(want))) <= bound


def test_the_properties_are_restated_about_b_in_units_of_scale():
    """A kernel that drops B keeps every output within sqrt(n - 1) of 0, not of B, and its mean is 0, not B: both
    refuted; the careful kernel's hold, and the row's proofs over the reals hold for every scale and B."""
    from opcert.verify.proofs import prove

    bad = measure_rows("LayerNormalization", "norm_kernels:ln_bias_ignored", "float32", samples=600, attrs=AFFINE)
    verdicts = {p["name"]: p["status"] for p in bad.properties}
    assert verdicts["moments"] == "refuted" and verdicts["shift"] == "checked", verdicts
    good = measure_rows("LayerNormalization", "norm_kernels:ln_affine_careful", "float32", samples=600, attrs=AFFINE)
    assert {p["name"]: p["status"] for p in good.properties}["moments"] == "checked"
    report = prove("LayerNormalization")
    got = {p.name: p.status for p in report.properties if p.name in ("bound", "moments")}
    assert got == {"bound": "proved", "moments": "proved"}, got


# test_normalizations' gate check, with the check's attributes
FAULTS = NORM_FAULTS + "attrs = {attrs}\n"

KERNELS = [
    ("affine in float16", "LayerNormalization", ["float16"], "ln_affine_in_format", "{ scale = 1.25, B = -0.5 }"),
    ("bias ignored", "LayerNormalization", ["float32"], "ln_bias_ignored", "{ scale = 1.25, B = -0.5 }"),
    ("careful affine", "LayerNormalization", ["float16", "float32"], "ln_affine_careful", "{ scale = 1.25, B = -0.5 }"),
    ("careful rms", "RMSNormalization", ["float16", "float32"], "rms_affine_careful", "{ scale = -3 }"),
    ("careful groups", "GroupNormalization", ["float32"], "gn_affine_careful", "{ scale = 1.25, B = -1.25 }"),
]


def test_a_gate_fails_the_affine_step_in_the_format_and_a_dropped_b():
    import json
    import tomllib

    from opcert.gating.config import parse
    from opcert.gating.run import run_gate

    text = "".join(FAULTS.format(name=n, op=o, dtypes=json.dumps(d), kernel=k, attrs=a) for n, o, d, k, a in KERNELS)
    result = run_gate(parse(tomllib.loads(text), "affine.toml"), workers=2)
    by = {}
    for r in result.results:
        by.setdefault(r.check.name, []).append(r)
    for name, _, dtypes, kernel, _ in KERNELS:
        runs = by[name]
        if "careful" in kernel:
            assert [r.status for r in runs] == ["pass"] * len(dtypes), [r.reasons for r in runs]
            continue
        (r,) = runs
        assert r.status == "fail" and r.accuracy["max_ulp"] > 1, (name, r.reasons)
        assert r.accuracy["worst"]["replayed"] is True and r.reasons[0].startswith("max ULP error"), r.reasons


def test_a_kernel_without_the_keywords_is_measured_at_the_defaults_and_refused_elsewhere():
    """norm_kernels.ln_careful takes no scale or B: at 1 and 0 (the standard without those tensors) it is measured;
    at scale 2 it cannot be given the check's value, and the result says which keyword it lacks."""
    r = measure_rows("LayerNormalization", "norm_kernels:ln_careful", "float32", samples=300)
    assert r.status == "ok" and r.max_ulp <= 0.5
    r = measure_rows("LayerNormalization", "norm_kernels:ln_careful", "float32", samples=300, attrs=(("scale", 2.0),))
    assert r.status == "unsupported" and "takes no keyword scale" in r.error and "scale = 2" in r.error, r.error


def _runtime_outputs(target: str, name: str, standard: str, attrs: dict, shape: tuple) -> tuple:
    """(the target's outputs, the reference's) for the operator at these attributes on a random tensor, in a worker
    (the runtime loaded there, not in the test process)."""
    from opcert.spec.tensor import reduced_axes
    from opcert.targets.tensor import load

    op = get_tensor_operator(name)[0]
    std = op.with_values(op.standard(standard), attrs)
    x = np.random.default_rng(5).standard_normal(shape).astype(np.float32)
    reduced = reduced_axes(op, std, x.ndim)
    y = np.asarray(load(target).call(op, std, x, reduced), dtype=np.float64)
    return y, reference(name, x, standard=standard, attrs=attrs).astype(np.float64)


GIVEN = [
    ("onnxruntime", "LayerNormalization", "onnx", dict(AFFINE), (3, 64)),
    ("onnx-reference", "LayerNormalization", "onnx", dict(AFFINE), (3, 64)),
    ("torch", "LayerNormalization", "onnx", dict(AFFINE), (3, 64)),
    ("onnxruntime", "LayerNormalization", "ort-skip", dict(AFFINE), (3, 64)),  # gamma and beta
    ("onnxruntime", "RMSNormalization", "ort-simplified", {"scale": -3.0}, (3, 64)),
    ("torch", "RMSNormalization", "onnx", {"scale": -3.0}, (3, 64)),
    ("onnxruntime", "InstanceNormalization", "onnx", dict(AFFINE), (2, 3, 32)),
    ("torch", "InstanceNormalization", "onnx", dict(AFFINE), (2, 3, 32)),
    ("onnxruntime", "GroupNormalization", "onnx", {**dict(AFFINE), "num_groups": "2"}, (2, 4, 16)),
    ("onnxruntime", "GroupNormalization", "onnx-18", {**dict(AFFINE), "num_groups": "2"}, (2, 4, 16)),
    ("torch", "GroupNormalization", "onnx", {**dict(AFFINE), "num_groups": "2"}, (2, 4, 16)),
]


@pytest.mark.parametrize("target, name, standard, attrs, shape", GIVEN)
def test_the_runtimes_are_given_tensors_of_scale_and_b(target, name, standard, attrs, shape):
    """Each runtime's kernel with Scale and B tensors of those values (ONNX Runtime's SkipLayerNormalization a gamma
    and a beta, its SimplifiedLayerNormalization a scale; torch's weight and bias): float32 outputs within 1e-5 of
    the exact values on random rows, where a kernel given ones and no B is 0.25 |z| + 0.5 off (4 |z| for scale -3)."""
    from opcert.workers import run_isolated

    y, want = run_isolated(_runtime_outputs, target, name, standard, attrs, shape)
    assert np.max(np.abs(y - want)) < 1e-5, np.max(np.abs(y - want))


@pytest.mark.parametrize("target", ["onnxruntime", "torch"])
def test_a_value_that_is_no_value_of_the_tensors_type_is_not_given_rounded(target):
    r = measure_rows("LayerNormalization", target, "float16", samples=300, attrs=(("B", 0.1),))
    assert r.status == "unsupported" and "B=0.10000000149011612 is not a float16 value" in r.error, r.error
