"""LayerNormalization and RMSNormalization (issue 53): the reference against MPFR, opcert's implementation, the
rule for rows with NaN and infinite entries, epsilon as an attribute, the proofs over the reals, and a gate that
fails the known bug classes (tests/norm_kernels.py) with the row that shows each."""

import json
import math
import shutil
import subprocess
from fractions import Fraction

import gmpy2
import numpy as np
import pytest
from gmpy2 import mpfr
from oracle import _ziv

import opcert
from opcert.spec import get_tensor_operator
from opcert.spec.row_reference import reference
from opcert.verify.tensor.measure import measure_rows

EPS = float(np.float32(1e-5))  # the default epsilon as binary32, as the standards hold attributes


def _mpfr_row(name: str, row: np.ndarray, eps: float, dtype: str, scale: float = 1.0, bias: float = 0.0) -> list[float]:
    """Each output of the row by MPFR: the mean and the variance exact (rationals), the square root, the division
    and the affine step (scale times it plus bias: binary32 values, exact in MPFR) at increasing precision until the
    rounding is decided (oracle._ziv)."""
    q = [Fraction(float(v)) for v in row.astype(np.float64)]
    n = len(q)
    if name in ("LayerNormalization", "MeanVarianceNormalization", "InstanceNormalization"):
        mean = sum(q, Fraction(0)) / n
        dev = [v - mean for v in q]
    else:
        dev = q
    after = name == "MeanVarianceNormalization"  # ONNX's function body: 1e-9 (binary32) after the square root
    second = sum((d * d for d in dev), Fraction(0)) / n + (0 if after else Fraction(eps))
    out = []
    for d in dev:
        if d == 0:  # scale 0 + B: B itself, rounded
            out.append(_ziv(lambda prec: mpfr(bias), dtype) if bias else 0.0)
            continue

        def at(prec, d=d):
            with gmpy2.context(precision=prec):
                num = mpfr(gmpy2.mpq(d.numerator, d.denominator))
                root = gmpy2.sqrt(mpfr(gmpy2.mpq(second.numerator, second.denominator)))
                if after:
                    root = root + mpfr(float(np.float32(1e-9)))
                return num / root * mpfr(scale) + mpfr(bias)

        out.append(_ziv(at, dtype))
    return out


def _rows(dtype: str) -> list[np.ndarray]:
    rng = np.random.default_rng(5)
    fmt = np.dtype(dtype) if dtype != "bfloat16" else None
    rows = [rng.standard_normal(n) * s for n, s in ((1, 1), (2, 3), (3, 1), (7, 10), (16, 0.01), (33, 2))]
    rows += [
        np.array([40000.0, 40001.0, 40002.0, 40003.0]),
        32768 + rng.integers(0, 8, 6) * 2.0**-8,  # a large mean, a spread of a few float32 values
        np.concatenate([[1000.0], rng.uniform(-1e-3, 1e-3, 199)]),  # one outlier
        1.0 + 3e-3 * rng.standard_normal(12),  # variance of the order of epsilon
        np.full(5, 7.0),  # variance 0
    ]
    import ml_dtypes  # noqa: F401 - bfloat16 as a NumPy dtype

    target = fmt if fmt is not None else np.dtype("bfloat16")
    return [r.astype(target) for r in rows]


@pytest.mark.parametrize(
    "name", ["LayerNormalization", "RMSNormalization", "MeanVarianceNormalization", "InstanceNormalization"]
)
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_reference_is_mpfr_rounded(name, dtype):
    axes = {"axes": [1]} if name == "MeanVarianceNormalization" else {}
    for row in _rows(dtype):
        x = row[None, None, :] if name == "InstanceNormalization" else row[None, :]  # (N, C, D): one row
        got = reference(name, x, **axes).reshape(-1).astype(np.float64)
        want = _mpfr_row(name, row, EPS, dtype)
        assert got.tolist() == want, (row.tolist()[:8], got[:8], want[:8])


def test_the_issues_row_through_the_cli(cli):
    """`opcert ref LayerNormalization --shape 1,4 -- 40000 40001 40002 40003` (the issue's acceptance, float32
    by default): the correctly rounded row, as MPFR rounds it."""
    code, out, _ = cli(
        "ref", "LayerNormalization", "--shape", "1,4", "--json", "--", "40000", "40001", "40002", "40003"
    )
    assert code == 0
    got = [r["result"] for r in json.loads(out)["results"]]
    want = _mpfr_row("LayerNormalization", np.array([40000.0, 40001, 40002, 40003], np.float32), EPS, "float32")
    assert got == want and want[0] == -want[3] and abs(want[0] + 1.3416355) < 1e-7
    assert json.loads(out)["attrs"]["epsilon"]["bits"] == "0x3727c5ac"  # 1e-5 rounded to binary32


def test_the_library_takes_a_tensor_operators_attributes_as_keywords():
    """opcert.run and opcert.reference take epsilon= as the element-wise operators take theirs (it was a TypeError
    from the tensor code's signature). [40000, ..., 40003] at epsilon 1: variance 5/4, sqrt(5/4 + 1) = 3/2, so the
    row is (x - 40001.5) / 1.5 = -1, -1/3, 1/3, 1, by hand; an unknown name is a UsageError naming the allowed."""
    x = np.array([[40000, 40001, 40002, 40003]], np.float32)
    want = np.array([[-1, -1 / 3, 1 / 3, 1]], np.float32)
    assert np.array_equal(opcert.run("LayerNormalization", x, epsilon=1.0), want)
    assert np.array_equal(opcert.reference("LayerNormalization", x, axis=-1, epsilon=1.0), want)
    with pytest.raises(opcert.UsageError, match="allowed: epsilon"):
        opcert.run("LayerNormalization", x, eps=1.0)


def test_epsilon_is_an_attribute_of_its_domain(cli):
    x = np.array([[3.0, 3.0, 3.0]], np.float32)
    assert np.isnan(reference("LayerNormalization", x, attrs={"epsilon": 0})).all()  # 0 / 0, as the formula
    assert (reference("LayerNormalization", x) == 0).all()
    # epsilon 1: the row [0, 2] has variance 1, so y = -+1 / sqrt(2), rounded
    y = reference("LayerNormalization", np.array([[0.0, 2.0]], np.float32), attrs={"epsilon": 1})
    assert y.tolist() == [[-np.float32(1 / math.sqrt(2)), np.float32(1 / math.sqrt(2))]]
    code, _, err = cli("ref", "LayerNormalization", "--attr", "epsilon=-1", "--", "1", "2")
    assert code == 2 and "outside its domain" in err and ">= 0" in err
    code, _, err = cli("ref", "LayerNormalization", "--attr", "eps=1", "--", "1", "2")
    assert code == 2 and "unknown attribute 'eps'" in err and "epsilon" in err
    code, _, err = cli("ref", "Softmax", "--attr", "epsilon=1", "--", "1", "2")
    assert code == 2 and "Softmax has no attributes" in err
    code, _, err = cli("ref", "LayerNormalization", "--standard", "onnx+ieee", "--", "1", "2")
    assert code == 2 and "one rule for rows with NaN or infinite entries" in err


def test_mean_variance_normalization_reduces_over_its_default_axes_and_refuses_bad_ones(cli):
    """ONNX's axes default to 0, 2, 3 (a rank-4 tensor's batch and spatial axes); negative axes count from the
    back; a rank too small for the default is a usage error naming what is allowed."""
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 3, 2, 2)).astype(np.float32)
    y = reference("MeanVarianceNormalization", x)
    assert (y == reference("MeanVarianceNormalization", x, axes=[0, -2, -1])).all()
    channel = x[:, 1].reshape(-1)  # the row of channel 1: every batch and spatial position
    want = _mpfr_row("MeanVarianceNormalization", channel, EPS, "float32")
    assert y[:, 1].reshape(-1).tolist() == want
    code, _, err = cli("ref", "MeanVarianceNormalization", "--shape", "2,2", "--", "1", "2", "3", "4")
    assert code == 2 and "Axes [0, 2, 3] hold [2, 3], out of range; allowed: -2 to 1" in err
    code, out, _ = cli(
        "ref", "MeanVarianceNormalization", "--shape", "2,2", "--axes", "1", "--json", "--", "1", "2", "3", "4"
    )
    assert code == 0 and [r["result"] for r in json.loads(out)["results"]] == [-1.0, 1.0, -1.0, 1.0]


def test_rows_with_nan_or_infinite_entries_take_the_formula_in_ieee_arithmetic():
    inf, nan = np.inf, np.nan
    x = np.array([[inf, 1.0, -2.0], [-inf, 1.0, 2.0], [nan, 1.0, 2.0]], np.float32)
    ln = reference("LayerNormalization", x)
    assert np.isnan(ln).all()  # x - mean is inf - inf (or NaN) at every element
    rms = reference("RMSNormalization", x)
    assert np.isnan(rms[:, 0]).all() and np.isnan(rms[2]).all()
    assert rms[:2, 1:].tolist() == [[0.0, -0.0], [0.0, 0.0]] and np.signbit(rms[0, 2])  # x / inf: signed zeros


@pytest.mark.parametrize("name", ["LayerNormalization", "RMSNormalization", "MeanVarianceNormalization"])
@pytest.mark.parametrize("dtype", ["float16", "float32"])
def test_opcerts_implementation_is_correctly_rounded_on_every_generated_row(name, dtype):
    r = measure_rows(name, "opcert", dtype, samples=2000)
    assert r.status == "ok" and r.correctly_rounded == r.elements and r.special_mismatches == 0, r.worst
    claimed = [p for p in r.properties if p["expected"] == "holds"]  # scaling: claimed where epsilon = 0 only
    assert {p["status"] for p in claimed} == {"checked"}, [p for p in claimed if p["status"] != "checked"]
    assert {p["name"] for p in r.properties if p["expected"] != "holds"} <= {"scaling"}


def test_float64_is_the_reference_and_rms_within_its_bound():
    """LayerNormalization in binary64 is the reference (no bound in ULPs holds next to a row's mean); the
    RMSNormalization expression within its stated bound (no cancellation)."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((4, 300)) + 5
    assert (opcert.run("LayerNormalization", x) == reference("LayerNormalization", x)).all()
    y, want = opcert.run("RMSNormalization", x), reference("RMSNormalization", x)
    bound = get_tensor_operator("RMSNormalization")[0].budget64(x.shape[1])
    assert np.max(np.abs(y - want) / np.spacing(np.abs(want))) <= bound


def test_the_row_properties_are_proved_over_the_reals_and_a_false_bound_is_not():
    from opcert.spec import get_tensor_operator
    from opcert.spec.tensor import RowProperty
    from opcert.verify.proofs import prove_tensor
    from opcert.verify.proofs.rows import attribute_terms, prove_rows

    for name in ("LayerNormalization", "RMSNormalization", "MeanVarianceNormalization"):
        report = prove_tensor(name, "real")
        verdicts = {p.name: p.status for p in report.properties if ":" not in p.name}
        assert verdicts["permutation"] == verdicts["bound"] == verdicts["moments"] == "proved", verdicts
        assert verdicts["nonfinite"] == verdicts["layout"] == "skipped"
        if name == "RMSNormalization":
            assert verdicts.get("shift") is None  # RMSNormalization declares no shift invariance: it has none
    op = get_tensor_operator("LayerNormalization")[0]
    formula = op.standards[0].formula
    too_tight = RowProperty("tight", "row_bound", "|y_i| <= sqrt(n - 2)", bound_less=2)  # [1, 0]: |y| = 1 > 0
    r = prove_rows(op, too_tight, formula, attribute_terms(op), None, "onnx")
    assert r.status != "proved", r


FAULTS = """
[[check]]
name = "{name}"
op = "{op}"
dtypes = {dtypes}
target = "norm_kernels:{kernel}"
max_ulp = 1
samples = 2000
proofs = "all"
accept_sampled_evidence = true
"""

KERNELS = [
    ("variance as E[x^2] - E[x]^2", "LayerNormalization", ["float32"], "ln_naive_variance"),
    ("float16 accumulation", "LayerNormalization", ["float16"], "ln_float16_accumulation"),
    ("stash_type ignored", "LayerNormalization", ["float16"], "ln_stash_ignored"),
    ("epsilon after the square root", "LayerNormalization", ["float32"], "ln_epsilon_after_sqrt"),
    ("squares in float16", "RMSNormalization", ["float16"], "rms_in_format"),
    ("careful", "LayerNormalization", ["float16", "float32"], "ln_careful"),
    ("careful rms", "RMSNormalization", ["float16", "float32"], "rms_careful"),
    # InstanceNormalization's rows are the trailing axes from 2: the LayerNormalization kernels take them
    ("instance: variance as E[x^2] - E[x]^2", "InstanceNormalization", ["float32"], "ln_naive_variance"),
    ("careful instance", "InstanceNormalization", ["float16", "float32"], "ln_careful"),
]


def test_a_gate_fails_each_bug_class_with_the_row_that_shows_it():
    import tomllib

    from opcert.gating.config import parse
    from opcert.gating.run import run_gate

    text = "".join(FAULTS.format(name=n, op=o, dtypes=json.dumps(d), kernel=k) for n, o, d, k in KERNELS)
    result = run_gate(parse(tomllib.loads(text), "norms.toml"), workers=2)
    by = {}
    for r in result.results:
        by.setdefault(r.check.name, []).append(r)
    for name, _, _, kernel in KERNELS:
        runs = by[name]
        if kernel.endswith("careful"):
            assert [r.status for r in runs] == ["pass", "pass"], [r.reasons for r in runs]
            continue
        (r,) = runs
        assert r.status == "fail", (name, r.reasons)
        worst = r.accuracy["worst"]
        assert r.accuracy["max_ulp"] > 1 and worst["replayed"] is True, (name, r.accuracy["max_ulp"])
        # the row that shows it: its case, its length and the element, in the reasons a reader sees
        why = r.reasons[0]
        assert why.startswith("max ULP error") and worst["case"] in why and f"element {worst['position']}" in why


def test_the_epsilon_of_a_gate_check_reaches_the_kernel_and_a_bad_one_is_a_config_error(tmp_path):
    import tomllib

    from opcert.errors import ConfigErrors
    from opcert.gating.config import parse

    base = FAULTS.format(name="c", op="LayerNormalization", dtypes='["float32"]', kernel="ln_careful")
    (check,) = parse(tomllib.loads(base + "attrs = { epsilon = 0.5 }\n"), "e.toml").checks
    assert dict(check.attrs) == {"epsilon": 0.5}
    with pytest.raises(ConfigErrors, match="outside its domain"):
        parse(tomllib.loads(base + "attrs = { epsilon = -2 }\n"), "e.toml")
    r = measure_rows("LayerNormalization", "norm_kernels:ln_careful", "float32", samples=500, attrs=(("epsilon", 0.5),))
    assert r.max_ulp <= 0.5 and r.attrs["epsilon"]["value"] == 0.5 and "--attr epsilon=0.5 " in r.command + " "
    # a kernel that ignores the check's epsilon is measured against it: wrong wherever the variance is near it
    r = measure_rows(
        "LayerNormalization", "norm_kernels:ln_fixed_epsilon", "float32", samples=500, attrs=(("epsilon", 0.5),)
    )
    assert r.max_ulp > 1000


C_LAYER_NORM = r"""
#include <math.h>
#include <stddef.h>
#include <stdint.h>
/* LayerNormalization over the trailing axes from axes[0], in double, rounded once; epsilon is attrs[0] */
void ln(const float *x, float *y, const int64_t *sizes, size_t rank, const uint32_t *axes, size_t count,
        const float *attrs) {
    int64_t n = 1, rows = 1;
    for (size_t k = 0; k < rank; k++) {
        if (k >= axes[0]) n *= sizes[k]; else rows *= sizes[k];
    }
    for (int64_t r = 0; r < rows; r++) {
        const float *a = x + r * n;
        double m = 0, c = 0, v = 0;
        for (int64_t j = 0; j < n; j++) m += a[j];
        m /= n;
        for (int64_t j = 0; j < n; j++) c += a[j] - m;
        m += c / n;
        for (int64_t j = 0; j < n; j++) v += (a[j] - m) * (a[j] - m);
        double s = sqrt(v / n + (double)attrs[0]);
        for (int64_t j = 0; j < n; j++) y[r * n + j] = (float)((a[j] - m) / s);
    }
}
"""


@pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler (cc) on this machine")
def test_a_c_kernel_is_given_the_checks_epsilon(tmp_path):
    """The tensor ABI's attrs: the check's epsilon, binary32, in the declaration's order (a kernel given NULL, or
    1e-5, where the check asks for 0.5 would be measured against the wrong function)."""
    (tmp_path / "ln.c").write_text(C_LAYER_NORM)
    so = tmp_path / "ln.so"
    subprocess.run(["cc", "-shared", "-fPIC", "-O2", "-o", str(so), str(tmp_path / "ln.c"), "-lm"], check=True)
    for eps in (0.5, 1e-5):
        r = measure_rows("LayerNormalization", f"c:{so}:ln", "float32", samples=300, attrs=(("epsilon", eps),))
        assert r.status == "ok" and not r.call_failures, (r.error, r.call_failures)
        assert r.max_ulp < 1, (eps, r.worst)  # double, rounded once: the corrected mean loses little


def test_a_kernel_with_nan_rows_where_the_formula_gives_zeros_is_refuted():
    """RMSNormalization of [inf, 1, 2] is [nan, 0, 0] (x / inf): a kernel that gives NaN throughout refutes
    `nonfinite`, with that row, and is otherwise the careful one."""
    r = measure_rows("RMSNormalization", "norm_kernels:rms_nan_rows", "float32", samples=300)
    p = {q["name"]: q for q in r.properties}["nonfinite"]
    assert p["status"] == "refuted", p
    ex = p["counterexample"]
    assert ex["row"] == [np.inf, 1.0, 2.0] and ex["want"][1:] == [0.0, 0.0] and ex["replayed"] is True, ex
    assert {q["name"]: q["status"] for q in r.properties}["bound"] == "checked"


def _jax_tensor(x):
    """In a worker (JAX starts threads): the jax target's LayerNormalization of x's rows at the default epsilon,
    and its reason for RMSNormalization."""
    from opcert.spec import get_tensor_operator
    from opcert.targets.runtimes.jax import JaxTensor

    side = JaxTensor()
    ln, rms = get_tensor_operator("LayerNormalization")[0], get_tensor_operator("RMSNormalization")[0]
    y = side.call(ln, ln.with_values(ln.standard("onnx")), x, [1])
    return y, side.unsupported(rms, rms.standard("onnx"), "float32", [1], 2)


def test_jax_standardize_is_layer_normalization_and_its_variance_cancels():
    """jax.nn.standardize (its default algorithm, the variance as mean(x^2) - mean(x)^2 clipped at 0) is the jax
    target's LayerNormalization, given the standard's epsilon: the issue's row [40000, 40001, 40002, 40003] is far
    off in float32 (the variance cancels), where the reference is within an ULP of MPFR's; RMSNormalization has no
    function in jax.nn, said as the reason. (The whole check: bench/normalizations.py, docs/results.md.)"""
    from opcert.workers import run_isolated

    x = np.array([[40000.0, 40001.0, 40002.0, 40003.0]], dtype=np.float32)
    y, why = run_isolated(_jax_tensor, x)
    want = _mpfr_row("LayerNormalization", x[0], EPS, "float32")
    assert y.dtype == np.float32 and y.shape == x.shape
    assert np.max(np.abs(y[0].astype(np.float64) - want)) > 0.1, (y, want)
    assert "no RMSNormalization function in jax.nn" in why


@pytest.mark.parametrize("dtype", ["float16", "float32"])
def test_directml_mvn1_takes_epsilon_under_the_square_root(dtype):
    """DML_MEAN_VARIANCE_NORMALIZATION1 (NormalizeVariance TRUE, no Scale or Bias) is (x - mean) / sqrt(var +
    Epsilon): LayerNormalization's form over the Axes, held to MPFR at its recommended Epsilon and at 0.5; ONNX's
    function body (1e-9 after the square root) gives other values on the same row."""
    for eps in (EPS, 0.5):
        for row in _rows(dtype):
            got = reference(
                "MeanVarianceNormalization", row[None, :], standard="directml-1", axes=[1], attrs={"epsilon": eps}
            )[0].astype(np.float64)
            assert got.tolist() == _mpfr_row("LayerNormalization", row, eps, dtype), (eps, row.tolist()[:6])
    row = np.array([[0.0, 0.01, 0.02, 0.03]], dtype=dtype)  # a variance of the order of Epsilon
    dml = reference("MeanVarianceNormalization", row, standard="directml-1", axes=[1])
    assert not np.array_equal(dml, reference("MeanVarianceNormalization", row, axes=[1]))


def test_directml_mvn1_on_opcert_and_refused_by_the_onnx_runtimes_with_the_reason():
    from opcert.verify.tensor.measure import RowOptions

    r = measure_rows("MeanVarianceNormalization", "opcert", "float32", RowOptions(standard="directml-1", samples=300))
    assert r.status == "ok" and r.max_ulp <= 0.5, (r.status, r.error, r.max_ulp)
    assert "--standard directml-1" in r.command and "--attr epsilon=1e-05" in r.command
    ort = measure_rows("MeanVarianceNormalization", "onnxruntime", "float32", RowOptions(standard="directml-1"))
    assert ort.status == "unsupported" and "no ONNX runtime runs it" in ort.error


def test_instance_normalization_rows_are_each_samples_channel(cli):
    """InstanceNormalization's row is one sample's channel over the spatial axes: a (1, 2, 2) tensor holds two rows
    (as MPFR rounds them); it takes no axis, and a tensor without a spatial axis is refused, saying why."""
    code, out, err = cli("ref", "InstanceNormalization", "--shape", "1,2,2", "--json", "--", 1, 2, 40000, 40003)
    assert code == 0, err
    got = json.loads(out)
    assert got["reduced_axes"] == [2] and [r["row"] for r in got["results"]] == [0, 0, 1, 1]
    want = [_mpfr_row("LayerNormalization", np.array(r, np.float32), EPS, "float32") for r in ([1, 2], [40000, 40003])]
    assert [r["result"] for r in got["results"]] == want[0] + want[1]
    code, _, err = cli("ref", "InstanceNormalization", "--axis", "1", "--shape", "1,2,2", "--", 1, 2, 3, 4)
    assert code == 2 and "takes no axis" in err
    code, _, err = cli("ref", "InstanceNormalization", "--shape", "2,2", "--", 1, 2, 3, 4)
    assert code == 2 and "no spatial axis" in err and "3 to 8" in err


def test_instance_normalization_on_torch_and_onnx_runtime():
    """Both measured over the same rows (as (m, 1, n) tensors and in 4-D shapes); torch's instance_norm refuses a
    channel of one spatial element, which is its failure on that case, named, not opcert's."""
    o = measure_rows("InstanceNormalization", "onnxruntime", "float32", samples=600)
    assert o.status == "ok" and o.elements > 0 and not o.call_failures, (o.error, o.call_failures[:1])
    t = measure_rows("InstanceNormalization", "torch", "float32", samples=600)
    assert t.status == "ok" and t.elements > 0, t.error
    assert t.call_failures and all(math.prod(f["shape"][2:]) == 1 for f in t.call_failures), t.call_failures
    assert "spatial element" in t.call_failures[0]["error"]


@pytest.mark.parametrize(
    "name,standard,kernel",
    [
        ("LayerNormalization", "ort-skip", "SkipLayerNormalization"),
        ("RMSNormalization", "ort-simplified", "SimplifiedLayerNormalization"),
        ("RMSNormalization", "ort-skip-simplified", "SkipSimplifiedLayerNormalization"),
    ],
)
def test_onnx_runtimes_own_kernels_are_standards_it_alone_runs(name, standard, kernel):
    """ONNX Runtime's fused kernels (SkipLayerNormalization with a skip of zeros, SimplifiedLayerNormalization) are
    standards of their own, measured on ONNX Runtime against the same exact rows; opcert's implementation holds to
    them; onnx.reference, which has no such operator, says so."""
    from opcert.spec import get_tensor_operator

    op, _ = get_tensor_operator(name)
    std = op.standard(standard)
    assert kernel in std.op_name and std.formula == op.standard("onnx").formula
    r = measure_rows(name, "onnxruntime", "float32", samples=600, standard=standard)
    assert r.status == "ok" and r.elements > 0 and r.standard == standard, (r.status, r.error)
    assert all(f["case"] == "empty rows" for f in r.call_failures), r.call_failures[:1]  # ONNX Runtime's refusal
    own = measure_rows(name, "opcert", "float32", samples=600, standard=standard)
    assert own.status == "ok" and own.max_ulp <= 0.5, own.max_ulp
    ref = measure_rows(name, "onnx-reference", "float32", samples=100, standard=standard)
    assert ref.status == "unsupported" and "only the onnxruntime target runs it" in ref.error, ref.error


def test_directml_mvn_without_cross_channel_is_instance_normalization():
    """DirectML's DML_MEAN_VARIANCE_NORMALIZATION (CrossChannel FALSE) is InstanceNormalization's formula over the
    same rows, Epsilon under the square root: its reference is ONNX's (the rows MPFR rounds), its descriptor takes
    4-D tensors only (feature level 1.0), and ONNX Runtime is measured against it."""
    from opcert.errors import UsageError
    from opcert.impl import validate
    from opcert.impl.descriptor import TensorDesc

    op, _ = get_tensor_operator("InstanceNormalization")
    dml = op.standard("directml")
    assert dml.formula == op.standard("onnx").formula
    assert dml.attribute_names == {"epsilon": "Epsilon", "scale": "ScaleTensor", "B": "BiasTensor"}
    x = np.array([1, 2, 40000, 40003], np.float32).reshape(1, 2, 1, 2)
    got = reference("InstanceNormalization", x, standard="directml", attrs={"epsilon": 0.5})
    want = [_mpfr_row("LayerNormalization", r, float(np.float32(0.5)), "float32") for r in x.reshape(2, 2)]
    assert got.reshape(-1).tolist() == want[0] + want[1]
    validate(
        "InstanceNormalization",
        TensorDesc("float32", (1, 2, 3, 4)),
        TensorDesc("float32", (1, 2, 3, 4)),
        standard="directml",
    )
    with pytest.raises(UsageError, match="dimension count 3 is not supported"):
        validate(
            "InstanceNormalization",
            TensorDesc("float32", (2, 3, 4)),
            TensorDesc("float32", (2, 3, 4)),
            standard="directml",
        )
    r = measure_rows("InstanceNormalization", "onnxruntime", "float32", samples=300, standard="directml")
    assert r.status == "ok" and r.elements > 0 and r.standard == "directml", r.error


def test_scaling_is_claimed_where_epsilon_is_0_and_checked_there():
    """LayerNormalization(c x) = LayerNormalization(x) for c > 0 where epsilon = 0 (issue 53's property): checked on
    opcert's code there, refuted on a kernel that keeps its own epsilon (1e-5 beside a variance 16 times larger once
    the row is times 4), not claimed at the default epsilon (skipped, said so, enforced nowhere); proved over the
    reals, and not claimed for ONNX's MeanVarianceNormalization (its 1e-9 after the square root)."""
    from opcert.verify.proofs import prove

    zero = (("epsilon", 0.0),)
    own = measure_rows("LayerNormalization", "opcert", "float32", samples=600, attrs=zero)
    assert {p["name"]: p["status"] for p in own.properties}["scaling"] == "checked"
    for dtype in ("float16", "bfloat16", "float32"):  # the 16-bit formats on the rows of small spread
        bad = measure_rows("LayerNormalization", "norm_kernels:ln_fixed_epsilon", dtype, samples=600, attrs=zero)
        verdict = next(p for p in bad.properties if p["name"] == "scaling")
        assert verdict["status"] == "refuted" and verdict["counterexample"]["how"] == "the row times 4", verdict
    r = measure_rows("LayerNormalization", "opcert", "float32", samples=300)
    (scaling,) = [p for p in r.properties if p["name"] == "scaling"]
    assert scaling["status"] == "skipped" and scaling["expected"] == "not claimed" and "epsilon = 0" in scaling["note"]
    got = {(p.name, p.status, p.expected) for p in prove("MeanVarianceNormalization").properties if p.name == "scaling"}
    assert got == {("scaling", "proved", "holds"), ("scaling", "skipped", "not claimed")}, got


def test_a_gate_requires_scaling_only_where_it_is_claimed():
    import tomllib

    from opcert.errors import ConfigErrors
    from opcert.gating.config import parse

    base = FAULTS.format(name="c", op="LayerNormalization", dtypes='["float32"]', kernel="ln_careful")
    (check,) = parse(tomllib.loads(base), "s.toml").checks  # proofs = "all" at epsilon 1e-5: scaling left out
    assert "scaling" not in check.proofs and "shift" in check.proofs
    assert any(w.startswith("scaling is claimed where epsilon = 0 only") for w in check.proofs_left_out)
    (check,) = parse(tomllib.loads(base + "attrs = { epsilon = 0 }\n"), "s.toml").checks
    assert "scaling" in check.proofs
    named = base.replace('proofs = "all"', 'proofs = ["scaling"]')
    with pytest.raises(ConfigErrors, match="scaling is claimed where epsilon = 0 only"):
        parse(tomllib.loads(named), "s.toml")
