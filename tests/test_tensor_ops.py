"""Softmax, LogSoftmax and Hardmax: the reference against MPFR, opcert's implementation against the reference,
the axis rules against ONNX's own evaluator and DirectML's documented examples, the rule for infinite entries."""

import importlib.util
import math

import gmpy2
import numpy as np
import pytest
from gmpy2 import mpfr
from oracle import _round

import opcert
from opcert.errors import UsageError
from opcert.formats import get_format
from opcert.spec import get_tensor_operator, tensor_operators
from opcert.spec.row_reference import reference_rows
from opcert.workers import run_isolated

DTYPES = ("float16", "bfloat16", "float32", "float64")


def oracle_row(op: str, row, dtype: str) -> list[float]:
    """MPFR at 320 bits from the textual definitions, each element rounded by MPFR to dtype (finite rows)."""
    with gmpy2.context(gmpy2.context(precision=320, emin=-(10**7), emax=10**7)):
        xs = [mpfr(float(v)) for v in row]
        if op == "Hardmax":
            first = max(range(len(xs)), key=lambda j: (xs[j], -j))
            return [1.0 if j == first else 0.0 for j in range(len(xs))]
        total = sum((gmpy2.exp(v) for v in xs), mpfr(0))
        vals = [gmpy2.exp(v) / total for v in xs]
        if op == "LogSoftmax":  # ln(exp(x_i) / sum): the definition as written (a row of one: ln 1 = +0)
            vals = [gmpy2.log(v) for v in vals]
    return [_round(v, dtype) for v in vals]


def _rows(dtype, rng, count, lengths, scale):
    out = []
    for _ in range(count):
        n = int(rng.choice(lengths))
        out.append((rng.standard_normal(n) * scale).astype(get_format(dtype).dtype))
    return out


def _same(a, b) -> bool:
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return bool(np.all((a == b) & (np.signbit(a) == np.signbit(b)) | (np.isnan(a) & np.isnan(b))))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", ["Softmax", "LogSoftmax", "Hardmax"])
def test_reference_is_mpfr_rounded(name, dtype):
    rng = np.random.default_rng(7)
    rows = _rows(dtype, rng, 40, [1, 2, 3, 7, 16, 33], 4.0) + _rows(dtype, rng, 6, [2, 5], 40.0)
    if dtype != "bfloat16":  # huge dynamic range: one dominant element, subnormal others
        rows.append(np.array([30.0, -20.0, 1e-7, 0.0], dtype=get_format(dtype).dtype))
    for row in rows:
        got = opcert.reference(name, row[None, :])[0]
        assert _same(got, oracle_row(name, row, dtype)), (row, got)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_exact_path_gives_the_fast_paths_values(dtype):
    """Every element through Arb (the fast path off) gives the same bits as the balls, on rows the balls decide."""
    op, _ = get_tensor_operator("Softmax")
    fmt = get_format(dtype)
    rng = np.random.default_rng(3)
    rows = (rng.standard_normal((6, 9)) * 3).astype(fmt.dtype).astype(np.float64)
    fast, slow_fast = reference_rows(op, rows, fmt)
    exact, slow = reference_rows(op, rows, fmt, fast=False)
    assert slow == rows.size and slow_fast < rows.size
    assert _same(fast, exact)


def test_a_long_row_and_its_sum():
    """A row of 10^5 float32 values: every element correctly rounded (sampled against MPFR), the rounded
    outputs summing to 1 within n half-ULPs of 2^-24 (each output within half an ULP <= 2^-25)."""
    rng = np.random.default_rng(11)
    row = (rng.standard_normal(100_000) * 2).astype(np.float32)
    got = opcert.reference("Softmax", row)
    pick = rng.choice(row.size, 6, replace=False)
    want = oracle_row("Softmax", row, "float32")
    assert _same(got[pick], np.array(want)[pick])
    assert abs(math.fsum(float(v) for v in got) - 1) <= row.size * 2.0**-25


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32"])
@pytest.mark.parametrize("name", ["Softmax", "LogSoftmax", "Hardmax"])
def test_implementation_is_correctly_rounded(name, dtype):
    """opcert's binary64 evaluation, rounded once, against the reference: 16-bit pairs (every pair of a grid
    of 256 values), float32 rows of lengths 1 to 4,096."""
    fmt = get_format(dtype)
    rng = np.random.default_rng(5)
    if dtype == "float32":
        rows = [(rng.standard_normal(n) * 5).astype(np.float32)[None, :] for n in (1, 2, 3, 17, 255, 1024, 4096)]
    else:
        grid = (rng.standard_normal(256) * 6).astype(fmt.dtype)
        a, b = np.meshgrid(grid, grid)
        rows = [np.stack([a.ravel(), b.ravel()], axis=1)]
    for x in rows:
        assert _same(opcert.run(name, x), opcert.reference(name, x)), name


def test_float64_implementation_within_its_budget():
    """The stated bound (TensorOperator.budget64, ULPs at an element of a row of n) over rows of lengths 2 to
    4,096 and magnitudes 1 to 300 (before the exact x - max, 512 ULPs at 300)."""
    from opcert.verify.ulp import ulp_error

    rng = np.random.default_rng(9)
    f64 = get_format("float64")
    for name in ("Softmax", "LogSoftmax"):
        op, _ = get_tensor_operator(name)
        for n, scale in ((2, 30), (64, 4), (64, 300), (4096, 4)):
            x = rng.standard_normal((8 if n > 64 else 40, n)) * scale
            ref = opcert.reference(name, x)
            err = np.nanmax(ulp_error(opcert.run(name, x), ref, np.zeros_like(ref), f64))
            assert err <= op.budget64(n) - 0.5, (name, n, scale, err)  # from the rounded reference: +0.5


def test_infinite_entries_follow_the_limit_rule():
    """+-inf entries are +-M in the limit M -> inf: the expected values are worked by hand."""
    inf, nan = np.inf, np.nan
    third = float(np.float32(1 / 3))
    cases = {
        "Softmax": [
            ([inf, 1, inf], [0.5, 0, 0.5]),
            ([0, 0, -inf], [0.5, 0.5, 0]),
            ([-inf, -inf, -inf], [third] * 3),
            ([nan, 1, 2], [nan] * 3),
            ([inf, -inf], [1, 0]),
        ],
        "LogSoftmax": [([inf, 1, inf], [-math.log(2), -inf, -math.log(2)]), ([5, -inf], [0, -inf])],
        "Hardmax": [([1, inf, inf], [0, 1, 0]), ([-inf, -inf], [1, 0]), ([nan, 3], [nan, nan]), ([2, 7, 7], [0, 1, 0])],
    }
    for name, rows in cases.items():
        for row, want in rows:
            x = np.array([row], dtype=np.float32)
            w = np.array([want], dtype=np.float32)
            assert _same(opcert.reference(name, x), w), (name, row)
            assert _same(opcert.run(name, x), w), (name, row)


def test_empty_rows_and_tensors():
    assert opcert.run("Softmax", np.zeros((3, 0), np.float32)).shape == (3, 0)
    assert opcert.reference("Softmax", np.zeros((0, 4), np.float32)).shape == (0, 4)


def _onnx_model(name, opset, axis, shape):
    from onnx import TensorProto, helper

    node = helper.make_node(name, ["X"], ["Y"], axis=axis)
    g = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, shape)],
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 9
    return m


def _close_or_same(name, got, want, words):
    if name == "Hardmax":
        assert _same(got, want), words
    else:
        # float32 arithmetic in the runtimes (onnx.reference's LogSoftmax cancels: 8e-6 near 0); wrong rows are 1e-1 off
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6, err_msg=words)


def _installed(*modules):
    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    return pytest.mark.skipif(bool(missing), reason=f"not installed: {', '.join(missing)} (make test installs them)")


@_installed("onnx", "onnxruntime")
def test_axis_rules_agree_with_onnx_runtime_and_onnx_reference():
    """Each opset's rows as ONNX Runtime makes them (opsets 1 and 11: coerced to 2-D at axis; 13: one axis)
    and, for opset 13, as ONNX's own evaluator does: Hardmax bit for bit, the others within float32
    arithmetic. (onnx.reference runs opsets 1 and 11 with opset 13's rule: the first check below shows it.)
    In a worker: ONNX Runtime loaded in this process would make it spawn its workers, not fork them."""
    run_isolated(_axis_rules_against_onnx_runtime)


def _axis_rules_against_onnx_runtime():
    import onnxruntime as ort
    from onnx.reference import ReferenceEvaluator

    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    x[0, 1, :2] = 5.0  # ties for Hardmax
    coerced = opcert.reference("Softmax", x, standard="onnx-11", axis=1)
    onnx_ref = ReferenceEvaluator(_onnx_model("Softmax", 11, 1, x.shape)).run(None, {"X": x})[0]
    assert not np.allclose(coerced, onnx_ref, rtol=1e-3)
    for name in ("Softmax", "Hardmax", "LogSoftmax"):
        for opset, key in ((1, "onnx-1"), (11, "onnx-11"), (13, "onnx")):
            for axis in [0, 1, 2] + ([-1, -2] if opset >= 11 else []):
                m = _onnx_model(name, opset, axis, x.shape)
                got = opcert.reference(name, x, standard=key, axis=axis)
                so = ort.SessionOptions()
                so.log_severity_level = 3
                sess = ort.InferenceSession(m.SerializeToString(), so, providers=["CPUExecutionProvider"])
                _close_or_same(name, got, sess.run(None, {"X": x})[0], f"{name} {opset} {axis} onnxruntime")
                if opset == 13:
                    _close_or_same(
                        name, got, ReferenceEvaluator(m).run(None, {"X": x})[0], f"{name} {opset} {axis} onnx.reference"
                    )


def test_directml_examples():
    """DML_ACTIVATION_HARDMAX1's documented example: input {2, 2, 2}, Axes {1}; the plain descriptor is
    SOFTMAX1 with Axes = {DimensionCount - 1} (its document's remark)."""
    x = np.array([[[12, 0], [-101, 11]], [[3, 234], [0, -101]]], dtype=np.float32)
    want = np.array([[[1, 0], [0, 1]], [[1, 1], [0, 0]]], dtype=np.float32)
    assert _same(opcert.reference("DML_ACTIVATION_HARDMAX1", x, axes=[1]), want)
    y = (np.arange(24, dtype=np.float32).reshape(1, 1, 4, 6) % 7) / 3
    assert _same(
        opcert.reference("DML_ACTIVATION_SOFTMAX", y), opcert.reference("DML_ACTIVATION_SOFTMAX1", y, axes=[3])
    )


@pytest.mark.parametrize(
    "call, words",
    [
        (lambda x: opcert.run("Softmax", x, axis=3), "axis 3 is out of range for a tensor of rank 3; allowed: -3 to 2"),
        (lambda x: opcert.run("Softmax", x, standard="onnx-1", axis=-1), "allowed: 0 to 2"),
        (lambda x: opcert.run("DML_ACTIVATION_SOFTMAX1", x), "needs Axes"),
        (lambda x: opcert.run("DML_ACTIVATION_SOFTMAX1", x, axes=[1, 1]), "repeat an axis"),
        (lambda x: opcert.run("DML_ACTIVATION_SOFTMAX1", x, axes=[3]), "out of range; allowed: 0 to 2"),
        (lambda x: opcert.run("DML_ACTIVATION_SOFTMAX", x, axis=1), "takes no axis attribute"),
        (lambda x: opcert.run("Softmax", x.astype(np.int32)), "allowed: float16, bfloat16, float32, float64"),
        (lambda x: opcert.run("Softmax", np.float32(1.0)), "a 0-d tensor has no axis"),
    ],
)
def test_bad_axes_are_named(call, words):
    with pytest.raises(UsageError, match=None) as exc:
        call(np.zeros((2, 3, 4), np.float32))
    assert words in str(exc.value)


def test_element_wise_layers_refuse_tensor_operators_by_name():
    with pytest.raises(UsageError) as exc:
        opcert.get_operator("Softmax")
    assert "reduces over axes" in str(exc.value)
    assert {op.name for op in tensor_operators()} == {
        "Softmax",
        "LogSoftmax",
        "Hardmax",
        "LayerNormalization",
        "RMSNormalization",
        "MeanVarianceNormalization",
        "LpNormalization",
        "InstanceNormalization",
        "GroupNormalization",
        "ReduceLogSumExp",
        "ReduceLogSum",
        "ReduceL2",
        "ReduceSumSquare",
    }


def test_axis_rules_are_proved_and_the_parting_shape_replays():
    """z3 relates the standards' axis rules; the shape it names where opsets 11 and 13 part makes
    opcert's two implementations give different values there (replayed), and where it proves they agree
    (axis = rank - 1) they give the same bits."""
    from opcert.verify.proofs import prove

    report = prove("Softmax")
    by = {p.name: p for p in report.properties}
    for name in (
        "agrees:onnx-11=onnx at the last axis",
        "parts:onnx-11|onnx",
        "agrees:directml=directml-1",
        "agrees:onnx=directml-1",
        "agrees:onnx-11=directml-1",
    ):
        assert by[name].status == "proved", (name, by[name])
    assert by["range"].status == "proved" and by["nan"].status == "skipped" and report.ok
    f16 = prove("Softmax", "float16")
    assert {p.status for p in f16.properties} == {"unknown"} and not f16.ok  # undecided is never a pass
    assert "--exhaustive" in f16.properties[0].note
    note = by["parts:onnx-11|onnx"].note
    shape = [int(v) for v in note.split("shape [")[1].split("]")[0].split(",")]
    axis = int(note.split("axis ")[1].split(":")[0])
    x = np.random.default_rng(4).standard_normal(shape).astype(np.float32)
    assert not _same(
        opcert.run("Softmax", x, standard="onnx-11", axis=axis), opcert.run("Softmax", x, standard="onnx", axis=axis)
    )
    y = np.random.default_rng(5).standard_normal((2, 3, 5)).astype(np.float32)
    assert _same(
        opcert.run("Softmax", y, standard="onnx-11", axis=2), opcert.run("Softmax", y, standard="onnx", axis=-1)
    )


def test_a_false_axis_claim_is_refuted_by_z3():
    """The model can fail: opsets 11 and 13 everywhere equal is refuted with a shape."""
    import z3

    from opcert.verify.proofs.axes import _query, _Shape

    sh = _Shape()
    check, s = _query(sh.facts, sh.same_row(sh.coerced) != sh.same_row(sh.single), 10_000)
    assert check == z3.sat


@pytest.mark.parametrize(
    "standard, sizes, axes, words",
    [
        ("directml", (2, 3, 4), None, "effective rank 3"),
        ("directml", (1, 1, 3, 4), None, None),
        ("directml-1", (2, 3), [0, 0], "repeat an axis"),
        ("directml-1", (2, 3), [], "AxisCount is 0"),
        ("directml-1", (2, 3, 4, 5, 6, 7, 8, 9, 10), [0], "dimension count 9 is not supported"),
    ],
)
def test_tensor_descriptors(standard, sizes, axes, words):
    from opcert.impl.descriptor import TensorDesc, tensor_violations

    t = TensorDesc("float32", sizes)
    found = tensor_violations("Softmax", t, t, standard=standard, axes=axes)
    if words is None:
        assert found == []
    else:
        assert any(words in f for f in found), found


def test_cli_ref_and_prove(cli):
    import json

    code, out, _ = cli("ref", "Softmax", "--dtype", "float16", "--shape", "2,2", "--json", "--", "0", "0", "inf", "1")
    rows = json.loads(out)["results"]
    assert code == 0 and [r["result_bits"] for r in rows] == ["0x3800", "0x3800", "0x3c00", "0x0000"]
    code, _, err = cli("ref", "Softmax", "--dtype", "float32", "--axis", "4", "1", "2")
    assert code == 2 and "axis 4 is out of range" in err
    code, out, _ = cli("prove", "Hardmax", "--json", "-")
    assert code == 0  # over the reals: one_hot, shift, permutation proved; NaN and infinities skipped (why)
    code, out, _ = cli("prove", "Hardmax", "--dtype", "float16", "--json", "-")
    assert code == 1  # opcert's code over rows: undecided here, unknown, never a pass


FAULTS = """
[[check]]
name = "no max subtracted"
op = "Softmax"
dtypes = ["float16"]
target = "tensor_kernels:softmax_no_max"
proofs = "all"
max_ulp = 1
accept_sampled_evidence = true

[[check]]
name = "float16 sum"
op = "Softmax"
dtypes = ["float16"]
target = "tensor_kernels:softmax_float16_sum"
max_ulp = 1

[[check]]
name = "last maximum"
op = "Hardmax"
dtypes = ["float16"]
target = "tensor_kernels:hardmax_last"
proofs = ["one_hot"]
max_ulp = 0.5
accept_sampled_evidence = true

[[check]]
name = "careful"
op = "Softmax"
dtypes = ["float16", "float32"]
target = "tensor_kernels:softmax_careful"
proofs = "all"
max_ulp = 0.5
accept_sampled_evidence = true
"""


def test_a_gate_fails_the_softmax_bugs_with_the_row_that_shows_them(tmp_path):
    """Three kernels with the bugs runtimes have had fail a float16 gate check, each naming the row and
    replayed; the careful kernel passes."""
    import tomllib

    from opcert.gating.config import parse
    from opcert.gating.run import run_gate

    cfg = parse(tomllib.loads(FAULTS.replace("\n\n", "\nsamples = 4000\n\n")), "faults.toml")
    result = run_gate(cfg, workers=2)
    by = {r.check.name: r for r in result.results}
    no_max = by["no max subtracted"]
    assert no_max.status == "fail"
    text = " ".join(no_max.reasons)
    assert "gave nan, declared" in text  # exp overflowed: NaN where a value is due (the row is named)
    assert all(e["replayed"] for e in no_max.accuracy["special_examples"])
    f16 = by["float16 sum"]
    assert f16.status == "fail" and "max ULP error" in f16.reasons[0] and f16.accuracy["max_ulp"] > 100
    assert "equal elements" in f16.reasons[0] or "long row" in f16.reasons[0]
    assert f16.accuracy["worst"]["replayed"] is True
    last = by["last maximum"]
    assert last.status == "fail"
    one_hot = next(p for p in last.proofs if p["name"] == "one_hot")
    assert one_hot["status"] == "refuted" and one_hot["counterexample"]["replayed"] is True
    row, got = one_hot["counterexample"]["row"], one_hot["counterexample"]["got"]
    top = [j for j, v in enumerate(row) if v == max(row)]
    assert len(top) >= 2 and got[top[-1]] == 1.0 and got[top[0]] == 0.0  # a tie, resolved to the last
    careful = [r for r in result.results if r.check.name == "careful"]
    assert [r.status for r in careful] == ["pass", "pass"], [r.reasons for r in careful]
    assert all(p["accepted"] for r in careful for p in r.proofs)  # sampled evidence, accepted and said so


def test_a_target_that_raises_on_one_case_fails_that_case_and_the_rest_are_measured():
    import sys

    from opcert.verify.tensor.measure import measure_rows

    r = measure_rows("Hardmax", "tensor_kernels:hardmax_last", "float32", samples=2000, isolation="none")
    assert r.status == "ok" and not r.ok
    assert [f["case"] for f in r.call_failures] == ["empty rows"]  # np.argmax of an empty row raises
    assert r.elements > 10_000 and r.max_ulp > 0  # the other cases ran (ties: wrong)
    assert "tensor_kernels" in sys.modules


def _onnx_tensor_cases():
    """ONNX registers a module's cases when it is imported: the three modules alone take 0.5 s where
    collect_testcases() takes 12 s (it imports every operator's); that, where an earlier filtered collection
    imported them without recording theirs."""
    import importlib
    import warnings

    import onnx.backend.test.case.node as node_cases

    def ours():
        return [
            c
            for c in node_cases._NodeTestCases
            if len(c.model.graph.node) == 1 and c.model.graph.node[0].op_type in ("Softmax", "LogSoftmax", "Hardmax")
        ]

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for m in ("softmax", "logsoftmax", "hardmax"):
            importlib.import_module(f"onnx.backend.test.case.node.{m}")
        if len(ours()) < 21:
            node_cases.collect_testcases()
    return ours()


def test_onnx_backend_cases():
    """ONNX's own node tests (opset 13): the expected outputs, computed by ONNX in float32 NumPy, against the
    reference and opcert's implementation (Hardmax exactly; the others within float32 arithmetic's error)."""
    pytest.importorskip("onnx")
    cases = _onnx_tensor_cases()
    assert len(cases) >= 21
    for case in cases:
        node = case.model.graph.node[0]
        axis = next((a.i for a in node.attribute if a.name == "axis"), None)
        for inputs, outputs in case.data_sets:
            x, want = inputs[0], outputs[0]
            for got in (opcert.reference(node.op_type, x, axis=axis), opcert.run(node.op_type, x, axis=axis)):
                if node.op_type == "Hardmax":
                    assert _same(got, want), case.name
                else:
                    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, err_msg=case.name)


@pytest.mark.parametrize("name, dtype", [("Softmax", "float16"), ("LogSoftmax", "bfloat16"), ("Hardmax", "float16")])
def test_the_pair_sweep_reference_is_the_reference(name, dtype):
    """The pair sweep's own reference (the exact difference through a fast sigmoid or softplus under the
    primitives' contracts, a table for infinite entries) gives the bits of the general row reference on
    every pair of 220 values (every sign, binade and special), and opcert's implementation passes it."""
    from opcert.impl.tensor_run import run
    from opcert.spec.row_reference import reference_rows
    from opcert.verify.tensor.pairs import PairSweep, _all_values

    op, _ = get_tensor_operator(name)
    fmt = get_format(dtype)
    every = _all_values(fmt)
    pick = np.unique(np.concatenate([np.linspace(0, 65535, 200).astype(int), np.arange(31720, 31740)]))
    values = every[pick]
    seen = {}

    def call(X):
        seen["x"] = X
        seen["y"] = run(op, X, axis=1)
        return seen["y"]

    sweep = PairSweep(op, fmt, call, 0.5, values=values)
    sweep.run()
    assert sweep.pairs == values.size**2 and sweep.special_wrong == 0 and sweep.max_err <= 0.5
    verdicts = {v["name"]: v["status"] for v in sweep.verdicts()}
    assert set(verdicts.values()) == {"proved"}, verdicts
    X = seen["x"][::7]  # rows of the last block through the general reference: the same bits
    want = reference_rows(op, X.astype(np.float64), fmt)[0].astype(fmt.dtype)
    assert _same(seen["y"][::7], want)


@pytest.mark.parametrize("name, dtype", [("Softmax", "float16"), ("LogSoftmax", "bfloat16")])
def test_the_compiled_pair_check_finds_each_planted_fault(name, dtype):
    """The compiled check (verify.tensor.pairs_kernel: thresholds of the rounding, no transcendental function
    where the output is right) against the general row reference with four planted faults: one output a
    ULP up, a NaN row given numbers, an output NaN, an output zeroed that the next a's row has above zero.
    Each is counted where it belongs, and nothing else is."""
    from opcert.spec.row_reference import reference_rows
    from opcert.verify.tensor.pairs import PairSweep, _all_values

    op, _ = get_tensor_operator(name)
    fmt = get_format(dtype)
    every = _all_values(fmt)
    one = int(np.flatnonzero(every.view(fmt.uint) == np.array([1.0], dtype=fmt.dtype).view(fmt.uint)[0])[0])
    values = every[
        np.unique(
            np.concatenate(
                [np.linspace(0, 65535, 160).astype(int), np.arange(31720, 31740), np.arange(one - 6, one + 6)]
            )
        )
    ]
    n = values.size
    finite = np.isfinite(values.astype(np.float64))
    near = [i for i in range(1, n) if finite[i] and finite[i - 1] and 0.25 < abs(float(values[i])) < 4]
    b_at, a_up, a_zero = near[0], near[1], near[3]  # the row [values[a], values[b_at]]
    nan_a = n - 1  # NaNs come last
    planted = {}

    def call(X):
        Y = reference_rows(op, X.astype(np.float64), fmt)[0].astype(fmt.dtype)
        for r in range(0, X.shape[0], n):
            if X[r, 1].astype(np.float64) != values[b_at].astype(np.float64):
                continue
            up, zero, nan_row = r + a_up, r + a_zero, r + nan_a
            Y[up, 0] = np.nextafter(Y[up, 0], fmt.dtype.type(np.inf))
            Y[zero, 0] = 0
            Y[nan_row] = fmt.dtype.type(0.5)
            Y[r + a_zero + 1, 1] = np.nan
            planted.update(up=X[up], zero=X[zero], nan=X[nan_row], nan_out=X[r + a_zero + 1])
        return Y

    sweep = PairSweep(op, fmt, call, 1.0, values=values)
    sweep.run()
    assert sweep.pairs == n * n
    # one output a ULP up (error within (0.5, 1.5)), one zeroed (far off), two NaN-row outputs and one NaN
    # output against the rule
    assert sweep.correctly_rounded == 2 * n * n - 5, (sweep.correctly_rounded, 2 * n * n)
    assert sweep.special_wrong == 3 and sweep.flushes == 0
    assert sweep.worst["row"] == [float(v) for v in planted["zero"].astype(np.float64)]
    assert sweep.worst["replayed"] is True and sweep.special_example["replayed"] is True
    verdicts = {v["kind"]: v for v in sweep.verdicts()}
    assert verdicts["nan_row"]["status"] == "refuted" and verdicts["nan_row"]["violations"] == 1
    assert verdicts["nan_row"]["counterexample"]["row"][0] != verdicts["nan_row"]["counterexample"]["row"][0]
    assert verdicts["range"]["status"] == "refuted" and verdicts["range"]["violations"] == 1
    assert verdicts["row_monotonic"]["status"] == "refuted"
    assert verdicts["row_monotonic"]["counterexample"]["related_row"] == [
        float(v) for v in planted["zero"].astype(np.float64)
    ] or verdicts["row_monotonic"]["counterexample"]["row"] == [float(v) for v in planted["zero"].astype(np.float64)]
    assert verdicts["infinite_entries"]["status"] == "proved"
    swapped = verdicts["permutation"]  # the NaN output and the zeroed one, against their swapped rows
    assert swapped["status"] == "refuted" and swapped["counterexample"]["replayed"] is True
    assert swapped["counterexample"]["row"] in (
        [float(v) for v in planted[w].astype(np.float64)] for w in ("zero", "nan_out")
    )


def test_shift_over_the_pairs_is_refuted_by_two_rows_of_one_difference():
    """Every 8th float16 value in [1, 2): many rows share a difference. One output a value up in one row and
    a value down in another row of the same difference are 2 values apart (1 allowed at 0.5 ULP): shift
    invariance over the pairs is refuted with those two rows; each alone is 1 from its swapped row, so
    permutation holds."""
    from opcert.verify.tensor.pairs import PairSweep

    op, _ = get_tensor_operator("Softmax")
    fmt = get_format("float16")
    values = (1 + np.arange(0, 1024, 8) / 1024).astype(np.float16)
    n = values.size
    rows = {"up": (10, 3), "down": (20, 13)}  # (index of a, index of b): the same difference

    def call(X):
        Y = reference_rows(op, X.astype(np.float64), fmt)[0].astype(fmt.dtype)
        for name, (ia, ib) in rows.items():
            for r in range(0, X.shape[0], n):
                if X[r, 1] == values[ib]:
                    Y[r + ia, 0] = np.nextafter(Y[r + ia, 0], fmt.dtype.type(np.inf if name == "up" else -np.inf))
        return Y

    sweep = PairSweep(op, fmt, call, 0.5, values=values)
    sweep.run()
    verdicts = {v["kind"]: v for v in sweep.verdicts()}
    shift = verdicts["shift_invariance"]
    assert shift["status"] == "refuted" and shift["violations"] == 2, shift
    ce = shift["counterexample"]
    assert {tuple(ce["row"]), tuple(ce["related_row"])} == {
        (float(values[ia]), float(values[ib])) for ia, ib in rows.values()
    }
    assert ce["distance_ulps"] == 2 and ce["replayed"] is True
    assert verdicts["permutation"]["status"] == "proved"


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_pairs_whose_difference_is_a_midpoint_are_decided_without_arb(dtype):
    """LogSoftmax of [2048, 0.5] is -2047.5 - ln(1 + e^-2047.5) for output 1: a hair below a midpoint of
    float16, so it rounds down to -2048. The pair sweep's tight steps decide such rows exactly (no Arb), and
    agree with the general row reference (bfloat16: [2048, -8], 2056 a midpoint); so do the rows at the
    overflow threshold (-65520 in float16)."""
    from opcert.spec.row_reference import reference_rows
    from opcert.verify.tensor.pairs import PairSweep

    op, _ = get_tensor_operator("LogSoftmax")
    fmt = get_format(dtype)
    big = float(fmt.max_finite)
    values = np.array(
        sorted(
            {
                -big,
                -2048.0,
                -16.0,
                -8.0,
                -1.0,
                -0.5,
                0.5,
                1.0,
                3.0,
                8.0,
                16.0,
                2048.0,
                2049.0 if dtype == "float16" else 2056.0,
                big,
            }
        ),
        dtype=fmt.dtype,
    )
    sweep = PairSweep(
        op, fmt, lambda X: reference_rows(op, X.astype(np.float64), fmt)[0].astype(fmt.dtype), 0.5, values=values
    )
    sweep.run()
    assert sweep.undecided == 0
    assert sweep.correctly_rounded == 2 * values.size**2 and sweep.special_wrong == 0


def test_just_below_a_midpoint_at_the_overflow_threshold():
    """IEEE 754 rounds as if 2^(emax+1) were the next value: float16's -65520 is the midpoint between
    -65504 and -inf, so a value just below it overflows and one just below +65520 does not."""
    from fractions import Fraction

    from opcert.spec.tensor import round_just_below

    f16 = get_format("float16")
    assert round_just_below(Fraction(-65520), f16) == -np.inf
    assert round_just_below(Fraction(65520), f16) == 65504.0
    assert round_just_below(Fraction(-2047.5), f16) == -2048.0 and round_just_below(Fraction(2047.5), f16) == 2047.0


@pytest.mark.parametrize(
    "kernel, kind",
    [
        ("softmax_first_output_off", "permutation"),
        ("softmax_high_rows_off", "shift_invariance"),
        ("softmax_first_parity", "row_monotonic"),
        ("softmax_nan_as_zero", "nan_row"),
        ("softmax_sum_high", "row_sum"),
    ],
)
def test_each_sampled_row_property_refutes_a_kernel_that_breaks_it(kernel, kind):
    """A kernel that breaks one declared property (tests/tensor_kernels.py says how) has it refuted on the
    sampled rows, with a counterexample that the target gave again; the careful kernel has it checked."""
    from opcert.verify.tensor.measure import measure_rows

    bad = measure_rows("Softmax", f"tensor_kernels:{kernel}", "float32", samples=3000, isolation="none")
    verdict = next(p for p in bad.properties if p["kind"] == kind and not p["name"].endswith("(pairs)"))
    assert verdict["status"] == "refuted", verdict
    assert verdict["violations"] >= 1 and verdict["counterexample"]["replayed"] is True
    good = measure_rows("Softmax", "tensor_kernels:softmax_careful", "float32", samples=3000, isolation="none")
    assert next(p for p in good.properties if p["kind"] == kind)["status"] == "checked"


def test_an_interrupted_tensor_measurement_does_not_promise_a_resume():
    """Only the element-wise sweeps keep finished chunks: an interrupted Softmax measurement (its pair sweep
    included) says nothing of resuming."""
    from argparse import Namespace

    from opcert.cli import _resumable

    assert _resumable(Namespace(command="accuracy", op="Tanh")) is True
    assert _resumable(Namespace(command="accuracy", op="Softmax")) is False
    assert _resumable(Namespace(command="accuracy", op="DML_ACTIVATION_LOG_SOFTMAX1")) is False
    assert _resumable(Namespace(command="ops")) is False and _resumable(None) is False


@_installed("openvino")
def test_openvino_runs_the_onnx_models_and_says_what_it_cannot():
    """OpenVINO's CPU plugin on the one-node models: Softmax of [0, -30] is e^-30 / (1 + e^-30) within an
    ULP (float32), opset 11's coerced rows match its opset 13 rows where the rules agree (the last axis),
    and bfloat16 is skipped with the reason. In a worker, as above."""
    run_isolated(_openvino_runs_the_onnx_models)


def _openvino_runs_the_onnx_models():
    from opcert.targets.tensor import load

    op, _ = get_tensor_operator("Softmax")
    ov = load("openvino")
    x = np.array([[0.0, -30.0]], dtype=np.float32)
    y = ov.call(op, op.standard("onnx"), x, (1,))
    e = math.exp(-30.0)
    assert abs(float(y[0, 1]) - e / (1 + e)) <= float(np.spacing(np.float32(e))) and y[0, 0] == 1.0
    x3 = np.random.default_rng(3).standard_normal((2, 3, 5)).astype(np.float32)
    assert _same(ov.call(op, op.standard("onnx-11"), x3, (2,)), ov.call(op, op.standard("onnx"), x3, (2,)))
    assert "no bfloat16" in ov.unsupported(op, op.standard("onnx"), "bfloat16", (1,), 2)


def test_exhaustive_is_for_16_bit_rows_of_two(cli):
    code, _, err = cli("accuracy", "Softmax", "--dtype", "float32", "--exhaustive")
    assert code == 2 and "2^64" in err
    code, _, err = cli("accuracy", "Softmax", "--dtype", "float16", "--attr", "alpha=1")
    assert code == 2 and "--attr applies to the element-wise operators" in err


def test_a_target_that_fails_to_load_is_a_failure_and_a_missing_one_a_usage_error(tmp_path, monkeypatch):
    from opcert.verify.tensor.measure import measure_rows

    (tmp_path / "raises_on_import.py").write_text("raise RuntimeError('boom at import')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    r = measure_rows("Softmax", "raises_on_import:f", "float32", samples=100, isolation="none")
    assert r.status == "crashed" and "boom at import" in r.error
    with pytest.raises(UsageError, match="cannot import module"):
        measure_rows("Softmax", "no_such_module_here:f", "float32", samples=100, isolation="none")


def test_a_zero_of_the_wrong_sign_is_counted_and_judged_by_the_policy(tmp_path):
    """LogSoftmax of a row of one is +0 (ln 1); a kernel that returns -0 there is counted apart and fails a
    check whose signed_zero policy is strict, passes one that ignores the sign."""
    import tomllib

    from opcert.gating.config import parse
    from opcert.gating.run import run_check

    text = (
        '[[check]]\nop = "LogSoftmax"\ndtypes = ["float32"]\ntarget = "tensor_kernels:log_softmax_negative_zero"'
        '\nsamples = 300\nmax_ulp = 0.5\nsigned_zero = "{}"\n'
    )
    strict = run_check(parse(tomllib.loads(text.format("strict")), "t").checks[0], "float32")
    loose = run_check(parse(tomllib.loads(text.format("ignore")), "t").checks[0], "float32")
    assert strict.status == "fail" and "zeros of the wrong sign (policy strict)" in " ".join(strict.reasons)
    assert strict.accuracy["signed_zero_mismatches"] > 0 and loose.status == "pass", loose.reasons


# LogSoftmax's monotonicity at 4 elements takes 14 s of z3 (`opcert prove LogSoftmax`, `prove --all`): 3 here
@pytest.mark.parametrize("name, longest", [("Softmax", 4), ("LogSoftmax", 3), ("Hardmax", 4)])
def test_row_properties_are_proved_over_the_reals(name, longest, monkeypatch):
    """The standards' formula over rows of 1 to `longest` real elements: every declared property proved by
    z3, but the special-value rules (no NaN or infinity in the reals) and the layout property (a kernel's,
    not the function's), skipped with the reason."""
    from opcert.spec import get_tensor_operator
    from opcert.verify.proofs import prove_tensor
    from opcert.verify.proofs import rows as row_proofs

    monkeypatch.setattr(row_proofs, "MAX_LENGTH", longest)
    report = prove_tensor(name, "real")
    rows = [p for p in report.properties if ":" not in p.name]
    assert {p.name for p in rows} == {p.name for p in get_tensor_operator(name)[0].properties}
    for p in rows:
        if p.kind in ("nan_row", "infinite_entries"):
            assert p.status == "skipped" and "no NaN and no infinity" in p.note, p
        elif p.kind == "row_layout":  # a property of kernels' code paths: no real-number content
            assert p.status == "skipped" and "code paths" in p.note, p
        else:
            assert p.status == "proved" and f"1 to {longest} elements" in p.method, p


@pytest.mark.parametrize(
    "formula, kind, claim",
    [
        ("exp(x) / (1 + rowsum(exp(x)))", "shift_invariance", {}),  # not invariant under a shift
        ("exp(-x) / rowsum(exp(-x))", "row_monotonic", {}),  # decreasing in its own element
        ("exp(x) / rowsum(exp(x))", "range", {"upper": 0.5}),  # 0.73 at [1, 0]
        ("exp(x) / (rowsum(exp(x)) + rowmax(x) * rowmax(x))", "row_sum", {}),
    ],
)
def test_a_false_row_claim_is_not_proved(formula, kind, claim):
    """The row prover can fail: a formula without the property, or a false bound, is not `proved`."""
    from opcert.expr import exp, rowmax, rowsum, var
    from opcert.spec.tensor import RowProperty
    from opcert.verify.proofs.rows import prove_rows

    x = var("x")
    e = eval(formula, {"exp": exp, "rowsum": rowsum, "rowmax": rowmax, "x": x})
    from opcert.spec import get_tensor_operator

    op, _ = get_tensor_operator("Softmax")
    r = prove_rows(op, RowProperty("p", kind, "a claim", **claim), e, {}, None, "test")
    assert r.status != "proved" and "rows of" in r.note, r


def test_the_built_in_gates_float64_budgets_hold_for_opcerts_implementation():
    """`make gate` holds opcert's float64 tensor implementations to budget64 at the longest row. Where the
    implementation is the reference (reference_in_binary64), its outputs are correctly rounded: up to half an ULP
    from the exact value, so the budget is at least 0.5 (ReduceLogSumExp and ReduceLogSum said 0 and failed the
    built-in gate). Every tensor operator's float64 outputs on random rows, against the exact value, within the
    built-in gate's budget."""
    from opcert.gating.config import default_config
    from opcert.spec import tensor_operators
    from opcert.spec.row_reference import reference_detailed
    from opcert.verify.tensor.measure import LONGEST_ROW
    from opcert.verify.ulp import ulp_error

    f64 = get_format("float64")
    gate = {c.op: c.max_ulp for c in default_config().checks if c.dtypes == ("float64",)}
    rng = np.random.default_rng(11)
    for op in tensor_operators():
        if op.reference_in_binary64:
            assert op.budget64(LONGEST_ROW) >= 0.5, op.name
        x = rng.standard_normal((5, 2, 3, 7)) * 4  # rank 4, two channels: every axis rule takes it by default
        ref = reference_detailed(op.name, x)
        err = np.nanmax(ulp_error(opcert.run(op.name, x), ref.exact_hi, ref.exact_lo, f64))
        assert err <= gate[op.name], (op.name, err, gate[op.name])
