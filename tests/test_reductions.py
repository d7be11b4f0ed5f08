"""The reductions (issue 53): ReduceLogSumExp, ReduceLogSum, ReduceL2 and ReduceSumSquare, one output per row
with the reduced axes kept. The reference against MPFR in every format, ONNX's own backend cases, opcert's
implementation, the properties proved over the reals, targets that return either shape, and a gate that fails
log(sum(exp(x))) without the row maximum (tests/norm_kernels.py) while a careful binary64 kernel passes."""

import json
import math
import tomllib
import warnings
from fractions import Fraction

import gmpy2
import numpy as np
import pytest
from gmpy2 import mpfr, mpq
from oracle import _ziv

from opcert.impl.tensor_run import run
from opcert.spec.row_reference import reference
from opcert.verify.tensor.measure import RowOptions, measure_rows

OPS = ("ReduceLogSumExp", "ReduceLogSum", "ReduceL2", "ReduceSumSquare")


def _mpfr(op: str, row: np.ndarray, dtype: str) -> float:
    """One row's value by MPFR at increasing precision until its rounding into dtype is decided (oracle._ziv):
    sums of rationals exact; NaN and infinite entries by IEEE arithmetic on the formula, -inf entries dropping out
    of LogSumExp."""
    v = row.astype(np.float64)
    if np.isnan(v).any():
        return math.nan
    if op == "ReduceLogSumExp":
        if np.isposinf(v).any():
            return math.inf
        v = v[np.isfinite(v)]
        if not v.size:
            return -math.inf
    elif not np.isfinite(v).all():
        with np.errstate(all="ignore"):
            s = np.sum(v * v) if op != "ReduceLogSum" else np.sum(v)
            return float({"ReduceSumSquare": s, "ReduceL2": np.sqrt(s), "ReduceLogSum": np.log(s)}[op])
    q = [Fraction(float(t)) for t in v]
    if op == "ReduceLogSum":
        s = sum(q, Fraction(0))
        if s <= 0:
            return -math.inf if s == 0 else math.nan
    elif op != "ReduceLogSumExp":
        s = sum((t * t for t in q), Fraction(0))
        if s == 0:
            return 0.0

    def at(prec):
        with gmpy2.context(precision=prec, emin=-(2**30), emax=2**30):
            if op == "ReduceLogSumExp":  # the maximum m out: exp(1e38) is beyond even MPFR's exponent range
                m = max(q)
                terms = [gmpy2.exp(mpfr(mpq((t - m).numerator, (t - m).denominator))) for t in q]
                return gmpy2.log(gmpy2.fsum(terms)) + mpfr(mpq(m.numerator, m.denominator))
            r = mpfr(mpq(s.numerator, s.denominator))
            return {"ReduceLogSum": gmpy2.log, "ReduceL2": gmpy2.sqrt, "ReduceSumSquare": lambda a: +a}[op](r)

    return _ziv(at, dtype)


def _rows(op: str, dtype: str) -> list[np.ndarray]:
    import ml_dtypes  # noqa: F401 - bfloat16 as a NumPy dtype

    rng = np.random.default_rng(5)
    big = {"float16": 3e4, "bfloat16": 1e38, "float32": 1e38, "float64": 1e307}[dtype]
    tiny = {"float16": 1e-7, "bfloat16": 1e-37, "float32": 1e-37, "float64": 1e-300}[dtype]
    rows = [rng.standard_normal(n) * s for n, s in ((1, 1), (2, 3), (3, 1), (7, 10), (33, 2))]
    rows += [rng.standard_normal(6) * big, rng.standard_normal(6) * tiny, np.zeros(3)]
    if op == "ReduceLogSumExp":
        rows += [np.array([100.0, 100.0, 99.0]), np.array([-1e4, -1e4 + 1]), np.array([-math.log(2)] * 2)]
        rows += [np.array([-np.inf, 1.0, 2.0]), np.array([-np.inf] * 3), np.array([np.inf, 1.0])]
    if op == "ReduceLogSum":
        rows = [np.abs(r) for r in rows] + [np.array([2.0, -1.0]), np.array([1.0, -1.0]), np.array([1.0, -3.0])]
    rows += [np.array([np.nan, 1.0])]
    with np.errstate(over="ignore"):
        return [r.astype(np.dtype(dtype)) for r in rows]


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_reference_is_mpfr_rounded(op, dtype):
    for row in _rows(op, dtype):
        got = reference(op, row[None, :], axes=[1])
        assert got.shape == (1, 1)
        want = _mpfr(op, row, dtype)
        g = float(got[0, 0])
        assert g == want or (math.isnan(g) and math.isnan(want)), (op, dtype, row.tolist()[:6], g, want)


@pytest.mark.parametrize("op,empty", [("ReduceLogSumExp", -math.inf), ("ReduceLogSum", -math.inf), ("ReduceL2", 0.0)])
def test_an_empty_row_and_every_axis_by_default(op, empty):
    """ONNX: a reduction over no element gives -inf (LogSumExp, LogSum) or 0 (L2, SumSquare); with no axes given,
    every axis is reduced (noop_with_empty_axes = 0)."""
    assert reference(op, np.zeros((2, 0), dtype=np.float32), axes=[1]).tolist() == [[empty], [empty]]
    x = np.arange(1.0, 7.0, dtype=np.float32).reshape(2, 3)
    assert reference(op, x).shape == (1, 1)
    assert reference(op, x).tolist() == reference(op, x.reshape(1, 6), axes=[1]).tolist()


def _onnx_cases(module: str) -> list:
    """ONNX's own backend cases of one operator, as its exporters build them (onnx/backend/test/case/node),
    captured from their expect() calls: (name, data, axes, keepdims, expected output)."""
    import importlib

    seen = []

    def expect(node, inputs, outputs, name, **kw):
        keepdims = next((a.i for a in node.attribute if a.name == "keepdims"), 1)
        seen.append((name, inputs[0], inputs[1], keepdims, outputs[0]))

    # its empty sets take log(0), NumPy's divide-by-zero warning, when their module is imported (ONNX runs every
    # exporter as it registers the case classes) and below
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        mod = importlib.import_module(f"onnx.backend.test.case.node.{module}")
        mod.expect = expect
        cls = next(c for c in vars(mod).values() if isinstance(c, type) and c.__module__ == mod.__name__)
        np.random.seed(0)
        for export in sorted(k for k in vars(cls) if k.startswith("export")):
            getattr(cls, export)()
    return seen


@pytest.mark.parametrize(
    "op,module",
    [
        ("ReduceLogSumExp", "reduce_log_sum_exp"),
        ("ReduceLogSum", "reduce_log_sum"),
        ("ReduceL2", "reducel2"),
        ("ReduceSumSquare", "reducesumsquare"),
    ],
)
def test_onnx_backend_cases(op, module):
    """ONNX's examples and its case over no element: their data are small integers, and their expected outputs
    exact (sums of integers and their squares), correctly rounded by NumPy (a square root), or computed in binary64
    (LogSumExp: rounded once to float32, none within binary64's error of a float32 midpoint); in the kept or the
    dropped shape as keepdims says; over no element -inf or 0. The random cases, computed by NumPy in float32
    (sums and logarithms that are not correctly rounded), are not an exact source: left out."""
    ran = 0
    for name, data, axes, keepdims, want in _onnx_cases(module):
        x = np.asarray(data, dtype=np.float32)
        if not name.endswith(("_example", "_empty_set")) or not np.array_equal(x, data):
            continue
        got = reference(op, x, axes=[int(a) for a in axes] or None)  # none given: every axis
        assert got.size == want.size, (name, got.shape, want.shape)
        got = got.reshape(want.shape) if not keepdims else got
        assert got.shape == want.shape, (name, got.shape, want.shape)
        assert np.array_equal(got, want.astype(np.float32)), (name, got.ravel()[:6], want.ravel()[:6])
        ran += 1
    assert ran >= (1 if op == "ReduceLogSum" else 4), ran  # ReduceLogSum has no example: its empty set


@pytest.mark.parametrize("op", OPS)
def test_opcerts_implementation_is_the_reference_up_to_float32(op):
    r = measure_rows(op, "opcert", "float32", RowOptions(samples=1500))
    assert r.status == "ok" and r.max_ulp <= 0.5 and r.special_mismatches == 0, (r.max_ulp, r.error)
    props = r.to_dict()["properties"]
    assert all(p["status"] == "checked" for p in props), [(p["name"], p["status"]) for p in props]
    x = np.random.default_rng(1).standard_normal((3, 4, 5)).astype(np.float16)
    y = run(op, np.abs(x) if op == "ReduceLogSum" else x, axes=[0, 2])
    assert y.shape == (1, 4, 1)


def test_the_row_properties_are_proved_over_the_reals_and_a_false_bound_is_not():
    from opcert.spec import get_tensor_operator
    from opcert.spec.tensor import RowProperty
    from opcert.verify.proofs import prove_tensor
    from opcert.verify.proofs.rows import prove_rows

    verdicts = {p.name: p.status for p in prove_tensor("ReduceLogSumExp", "real").properties if ":" not in p.name}
    assert verdicts["max_log_bounds"] == verdicts["permutation"] == "proved", verdicts
    for op in ("ReduceL2", "ReduceSumSquare"):
        v = {p.name: p.status for p in prove_tensor(op, "real").properties if ":" not in p.name}
        assert v["range"] == "proved", (op, v)
    op = get_tensor_operator("ReduceLogSumExp")[0]
    above = RowProperty("above", "range", "y >= 0", lower=0.0)  # [-1]: y = -1
    assert prove_rows(op, above, op.standards[0].formula, {}, None, "onnx").status != "proved"


def test_a_target_may_drop_the_reduced_axes_and_a_wrong_shape_is_its_failure(tmp_path, monkeypatch):
    (tmp_path / "shapes.py").write_text(
        "import numpy as np\n"
        "def dropped(x, axis):\n"
        "    return np.sqrt(np.sum(x.astype(np.float64) ** 2, axis=axis)).astype(x.dtype)\n"
        "def whole(x, axis):\n"
        "    return x.copy()\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    ok = measure_rows("ReduceL2", "shapes:dropped", "float32", RowOptions(samples=300))
    assert ok.status == "ok" and not ok.call_failures and ok.max_ulp <= 1, (ok.call_failures[:1], ok.max_ulp)
    bad = measure_rows("ReduceL2", "shapes:whole", "float32", RowOptions(samples=300))
    assert bad.call_failures and "(the reduced axes kept with size 1)" in bad.call_failures[0]["error"]


def test_torch_and_onnxruntime_are_measured_and_torch_says_what_it_lacks():
    r = measure_rows("ReduceLogSumExp", "torch", "float32", RowOptions(samples=600))
    assert r.status == "ok" and r.elements > 0 and not r.call_failures, (r.status, r.error, r.call_failures[:1])
    o = measure_rows("ReduceSumSquare", "onnxruntime", "float32", RowOptions(samples=600))
    assert o.status == "ok" and o.elements > 0 and not o.call_failures, (o.status, o.error, o.call_failures[:1])
    s = measure_rows("ReduceSumSquare", "torch", "float32", RowOptions(samples=100))
    assert s.status == "unsupported" and "has no ReduceSumSquare function" in s.error


def test_ref_prints_one_value_per_row(cli):
    code, out, err = cli("ref", "ReduceLogSumExp", "--shape", "1,4", "--json", "--", 40000, 40001, 40002, 40003)
    assert code == 0, err
    got = json.loads(out)
    assert got["output_shape"] == [1, 1] and len(got["results"]) == 1
    want = 40003 + math.log(1 + math.exp(-1) + math.exp(-2) + math.exp(-3))
    assert got["results"][0]["result"] == float(np.float32(want))


CHECKS = """
[[check]]
name = "{kernel}"
op = "ReduceLogSumExp"
dtypes = ["float32"]
target = "norm_kernels:{kernel}"
mode = "sample"
samples = 300
max_ulp = 1
"""


def test_a_gate_fails_log_sum_exp_without_the_maximum_and_passes_a_careful_kernel():
    from opcert.gating.config import parse
    from opcert.gating.run import run_gate

    text = "".join(CHECKS.format(kernel=k) for k in ("lse_without_max", "lse_careful"))
    by = {r.check.name: r for r in run_gate(parse(tomllib.loads(text), "lse.toml"), workers=1).results}
    assert by["lse_careful"].status == "pass", by["lse_careful"].reasons
    bad = by["lse_without_max"]
    assert bad.status == "fail", bad.reasons
    example = bad.accuracy["special_examples"][0]
    assert example["got"] in ("inf", math.inf) and math.isfinite(float(example["want"])), example
    assert any(example["case"] in r for r in bad.reasons), (example["case"], bad.reasons)


SUM_SQUARE_C = r"""
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
/* ReduceSumSquare over any axes of a contiguous float tensor, accumulated in double: y has x's rank, each reduced
   axis of size 1 (the tensor ABI of opcert.targets.c_abi) */
void sum_square(const float *x, float *y, const int64_t *sizes, size_t rank, const uint32_t *axes, size_t naxes,
                const float *attrs) {
    int64_t total = 1, outn = 1, kept[8], stride[8];
    for (size_t d = 0; d < rank; d++) {
        int reduced = 0;
        for (size_t k = 0; k < naxes; k++) reduced |= axes[k] == d;
        kept[d] = reduced ? 1 : sizes[d];
        total *= sizes[d];
        outn *= kept[d];
    }
    for (size_t d = rank; d-- > 0;) stride[d] = d + 1 < rank ? stride[d + 1] * kept[d + 1] : 1;
    double *acc = calloc(outn ? outn : 1, sizeof(double));
    for (int64_t i = 0; i < total; i++) {
        int64_t rest = i, o = 0;
        for (size_t d = rank; d-- > 0;) {
            int64_t c = rest % sizes[d];
            rest /= sizes[d];
            if (kept[d] != 1 || sizes[d] == 1) o += c * stride[d];
        }
        acc[o] += (double)x[i] * (double)x[i];
    }
    for (int64_t o = 0; o < outn; o++) y[o] = (float)acc[o];
    free(acc);
}
"""


def test_a_c_kernel_writes_one_value_per_row(tmp_path):
    """The C tensor ABI for a reduction: y has each reduced axis of size 1. A sum of squares in double, rounded
    once, is within 1 ULP of the reference on every case (every axis set the check makes) and calls none wrong."""
    import shutil
    import subprocess

    if shutil.which("cc") is None:
        pytest.skip("no C compiler (cc) on this machine")
    (tmp_path / "ss.c").write_text(SUM_SQUARE_C)
    so = tmp_path / "libss.so"
    subprocess.run(["cc", "-shared", "-fPIC", "-O2", "-o", str(so), str(tmp_path / "ss.c")], check=True)
    r = measure_rows("ReduceSumSquare", f"c:{so}:sum_square", "float32", RowOptions(samples=600))
    assert r.status == "ok" and not r.call_failures, (r.status, r.error, r.call_failures[:1])
    assert r.max_ulp <= 1 and r.special_mismatches == 0, (r.max_ulp, r.worst)


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_opcerts_log_sum_takes_the_reference_where_binary64_cancels(dtype):
    """A row of finite values whose binary64 sum cancels to 0 or changes sign (its log -inf or NaN there) is the
    exact reference's: [1e30, 1, -1e30] sums to 1 exactly (log 0), [1e30, -1e30, 1, -2] to -1 (NaN)."""
    import ml_dtypes  # noqa: F401

    x = np.array([[1e30, 1, -1e30, 0], [1e30, -1e30, 1, -2], [1e30, 2, -1e30, 0]]).astype(dtype)
    got = run("ReduceLogSum", x, axes=[1]).ravel().astype(np.float64)
    assert got[0] == 0.0 and np.isnan(got[1]) and got[2] == float(np.float32(math.log(2)).astype(dtype)), got


def test_a_reduction_descriptor_keeps_the_rank_and_reduces_to_size_1():
    """DirectML's reduce descriptor: the output has the input's rank, each reduced axis of size 1 (the document's
    constraint); equal sizes are refused; ONNX's empty axes input reduces every axis."""
    from opcert.errors import UsageError
    from opcert.impl import validate
    from opcert.impl.descriptor import TensorDesc

    validate(
        "ReduceL2",
        TensorDesc("float32", (2, 3, 4)),
        TensorDesc("float32", (2, 1, 4)),
        standard="directml",
        level="3.0",
        axes=[1],
    )
    with pytest.raises(UsageError, match="each reduced axis of size 1"):
        validate(
            "ReduceL2",
            TensorDesc("float32", (2, 3, 4)),
            TensorDesc("float32", (2, 3, 4)),
            standard="directml",
            level="3.0",
            axes=[1],
        )
    x = np.arange(1.0, 7.0, dtype=np.float32).reshape(2, 3)
    assert reference("ReduceL2", x, axes=[]).tolist() == reference("ReduceL2", x).tolist()


def test_the_row_checks_fail_kernels_that_break_them(tmp_path, monkeypatch):
    """Each new property can fail on a target: log(sum(exp(x))) in float32 without the maximum lands outside
    [max(x), max(x) + log(n)] (max_log_bounds refuted, with the row that shows it: already log(exp(x)) of one
    element rounds above x); a norm returned negated breaks y >= 0 (range)."""
    (tmp_path / "negated.py").write_text(
        "import numpy as np\n"
        "def l2(x, axis):\n"
        "    return (-np.sqrt(np.sum(x.astype(np.float64) ** 2, axis=axis, keepdims=True))).astype(x.dtype)\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    r = measure_rows("ReduceLogSumExp", "norm_kernels:lse_without_max", "float32", RowOptions(samples=300))
    bounds = next(p for p in r.properties if p["name"] == "max_log_bounds")
    assert bounds["status"] == "refuted", bounds
    ce = bounds["counterexample"]
    row = [v for v in ce["row"] if v != "..."]
    assert len(row) == len(ce["row"]) and all(math.isfinite(v) for v in row), ce  # a whole row, every entry finite
    got, top = ce["got"][0], max(row)
    assert got < top or got > top + math.log(len(row)), ce
    n = measure_rows("ReduceL2", "negated:l2", "float32", RowOptions(samples=300))
    rng = next(p for p in n.properties if p["name"] == "range")
    assert rng["status"] == "refuted" and rng["counterexample"]["got"][0] < 0, rng


@pytest.mark.parametrize("name", ["ReduceLogSumExp", "ReduceLogSum", "ReduceL2", "ReduceSumSquare"])
def test_the_opsets_before_18_take_axes_as_an_attribute(name):
    """`--standard onnx-13` (opsets 1, 11, 13): the same rows and reference as opset 18's, the runtimes given a model
    of opset 13 whose axes are an attribute, not an input."""
    from opcert.spec import get_tensor_operator
    from opcert.targets.runtimes.onnx_reference import OnnxReferenceTensor

    op, _ = get_tensor_operator(name)
    old, new = op.standard("onnx-13"), op.standard("onnx")
    assert old.formula == new.formula and old.versions == ("1", "11", "13")
    x = np.array([[3.0, -1.0, 40000.0], [0.5, 0.25, -2.0]], np.float32)
    for axes in ([1], [0, 1], None):
        assert np.array_equal(
            reference(name, x, standard="onnx-13", axes=axes), reference(name, x, axes=axes), equal_nan=True
        )
    model = OnnxReferenceTensor().model(op, old, x, (1,))
    (node,) = model.graph.node
    assert model.opset_import[0].version == 13 and list(node.input) == ["X"]
    assert {a.name: list(a.ints) or a.i for a in node.attribute} == {"keepdims": 1, "axes": [1]}
    if name == "ReduceLogSumExp":  # one runtime measured on it (the model's other operators are the same code)
        r = measure_rows(name, "onnxruntime", "float32", samples=200, standard="onnx-13")
        assert r.status == "ok" and r.elements > 0 and r.standard == "onnx-13", r.error


def test_onnx_runtimes_bfloat16_outputs_are_read():
    """ONNX Runtime has a bfloat16 ReduceLogSumExp kernel: its outputs are read as bits (an OrtValue of bfloat16
    has no NumPy type), not taken for its refusal, which the check once reported ("unsupported")."""
    r = measure_rows("ReduceLogSumExp", "onnxruntime", "bfloat16", samples=200)
    assert r.status == "ok" and r.elements > 0, r.error


def test_only_onnx_runtimes_own_status_errors_are_its_refusals():
    """The refusal probe takes ONNX Runtime's status errors (NOT_IMPLEMENTED ...) for its refusal of a case, with its
    message; any other error of the call propagates instead of becoming an "unsupported" verdict."""
    from runtime_helpers import ort_refusals_of_raised_errors

    from opcert.workers import run_isolated

    reason, error = run_isolated(ort_refusals_of_raised_errors)
    assert reason is not None and "NOT_IMPLEMENTED : no kernel" in reason, reason
    assert error is not None and "No corresponding Numpy type" in error, error
