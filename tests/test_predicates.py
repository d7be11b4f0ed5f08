"""The predicate operators (opcert.spec.predicate: IsNaN, IsInf) and their checks (opcert.verify.predicate):
opcert's own implementation exact on every float16 and bfloat16 pattern and on float64 samples, kernels with known
faults (tests/predicate_kernels.py) refuted with the inputs that show them, each runtime exact on every float16
and bfloat16 pattern, and the commands of cli_predicate.

Expectations come from IEEE 754's classification written here: the bit masks of each format's fields, and
math.isnan / math.isinf on Python floats, never from opcert's output. The runtimes run in a worker
(opcert.workers.run_isolated): loaded into the test process, they would make its later workers spawn rather than
fork (tests/conftest.py)."""

import importlib.util
import json
import math
import sys

import ml_dtypes
import numpy as np
import pytest

from opcert import cli, cli_predicate
from opcert.errors import UsageError
from opcert.runtime_table import RUNTIMES, predicate_target_names, threaded_modules
from opcert.spec.predicate import get_predicate_operator, is_predicate_operator, predicate_operators
from opcert.targets.predicate import NAMES, load_predicate
from opcert.targets.runtimes import resolve
from opcert.verify.predicate import measure as M
from opcert.verify.predicate.measure import measure_predicate
from opcert.workers import run_isolated

ISNAN, ISINF = get_predicate_operator("IsNaN"), get_predicate_operator("IsInf")
# (exponent mask, significand mask, sign bit) of each format, from IEEE 754 and bfloat16's definition
FIELDS = {
    "float16": (0x7C00, 0x03FF, 0x8000),
    "bfloat16": (0x7F80, 0x007F, 0x8000),
    "float32": (0x7F800000, 0x007FFFFF, 0x80000000),
    "float64": (0x7FF0000000000000, 0x000FFFFFFFFFFFFF, 0x8000000000000000),
}
DTYPES = {"float16": np.float16, "bfloat16": ml_dtypes.bfloat16, "float32": np.float32, "float64": np.float64}
UINT = {2: np.uint16, 4: np.uint32, 8: np.uint64}
# ONNX's IsInf attribute sets, and which infinities each makes true: (+inf, -inf)
INF_CASES = [((), (True, True)), ((("detect_negative", 0),), (True, False)),
             ((("detect_positive", 0),), (False, True)), ((("detect_positive", 0), ("detect_negative", 0)), (False, False))]  # fmt: skip


def every(dtype: str) -> np.ndarray:
    return np.arange(1 << 16, dtype=np.uint16).view(DTYPES[dtype])


def expected(x: np.ndarray, dtype: str, op: str, pos: bool = True, neg: bool = True) -> np.ndarray:
    """IEEE 754's classification from the bits: NaN where the exponent field is all ones and the significand is
    not zero; +-inf where it is zero, the sign bit telling which."""
    exp, sig, sign = FIELDS[dtype]
    u = x.view(UINT[x.dtype.itemsize]).astype(np.uint64)
    top = (u & np.uint64(exp)) == np.uint64(exp)
    zero_sig = (u & np.uint64(sig)) == 0
    if op == "IsNaN":
        return top & ~zero_sig
    negative = (u & np.uint64(sign)) != 0
    return top & zero_sig & ((~negative & pos) | (negative & neg))


def test_the_masks_agree_with_python_floats():
    """The expectations' bit masks against math.isnan and math.isinf, on every float16 pattern (float16 widens to
    a Python float exactly, NaN staying NaN)."""
    x = every("float16")
    values = [float(v) for v in x.astype(np.float64)]
    assert expected(x, "float16", "IsNaN").tolist() == [math.isnan(v) for v in values]
    assert expected(x, "float16", "IsInf").tolist() == [math.isinf(v) for v in values]
    assert expected(x, "float16", "IsInf", neg=False).tolist() == [v == math.inf for v in values]
    assert int(expected(x, "float16", "IsNaN").sum()) == 2 * (2**10 - 1)  # 1,023 payloads, two signs


# ---- opcert's own ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_opcert_is_exact_on_every_16_bit_pattern(dtype):
    x = every(dtype)
    t = load_predicate("opcert")
    for op, cases in ((ISNAN, [((), (True, True))]), (ISINF, INF_CASES)):
        std = op.standard("onnx")
        for given, (pos, neg) in cases:
            attrs = op.attributes_for(std, dict(given))
            want = expected(x, dtype, op.name, pos, neg)
            got = t.call(op, std, x.copy(), attrs)
            assert got.dtype == np.bool_ and got.tolist() == want.tolist(), (op.name, given)
            assert op.reference(x, attrs).tolist() == want.tolist(), (op.name, given)
            res = measure_predicate(op, "opcert", dtype, attrs=given)
            assert res.ok and res.exhaustive and res.inputs == 1 << 16, res.to_dict()
            assert {p["name"]: p["status"] for p in res.properties} == {
                "exact": "proved", "output_type": "proved", "layout": "proved"
            }  # fmt: skip


def test_opcert_on_float64_samples_and_directml():
    res = measure_predicate(ISNAN, "opcert", "float64", samples=20_000, seed=3)
    assert res.ok and not res.exhaustive and res.inputs == 20_000 + len(M.specials(M.get_format("float64")))
    assert {p["status"] for p in res.properties} == {"checked"}
    # the samples hold both kinds of NaN, both infinities and both zeros; opcert's outputs are math.isnan's
    batches = M.sampled_batches(M.get_format("float64"), 20_000, 3)
    x = np.concatenate([b for _, b in batches])
    u = x.view(np.uint64)
    nan = [math.isnan(v) for v in x.tolist()]
    quiet = (u & np.uint64(1 << 51)) != 0
    assert any(n and q for n, q in zip(nan, quiet)) and any(n and not q for n, q in zip(nan, quiet))
    assert {math.inf, -math.inf} <= set(x.tolist()) and set(np.signbit(x[x == 0]).tolist()) == {False, True}
    t = load_predicate("opcert")
    std = ISNAN.standard("onnx")
    assert t.call(ISNAN, std, x.copy(), {}).tolist() == nan
    # DirectML: uint8 0/1, InfinityMode by name or number
    dml = ISINF.standard("directml")
    y = t.call(ISINF, dml, np.array([np.inf, -np.inf, np.nan, 1.0], np.float32), {"infinity_mode": 2})
    assert y.dtype == np.uint8 and y.tolist() == [0, 1, 0, 0]
    res = measure_predicate(ISINF, "opcert", "float16", standard="directml", attrs=(("InfinityMode", "POSITIVE"),))
    assert res.ok and res.attrs == {"infinity_mode": 1} and res.output_dtype == "uint8"


def test_every_float32_pattern_through_blocks(monkeypatch):
    """The float32 sweep's own code on a few blocks: those of the zeros and subnormals, of the positive infinity
    and signalling NaNs, of the negative quiet NaNs (opcert proved there); of 65520, float16's overflow threshold
    (a float16 cast refuted there); of the signalling NaNs (a kernel that misses them refuted)."""
    blocks = [0, 510, 1023]
    monkeypatch.setattr(M, "block_range", lambda nb: blocks)
    res = measure_predicate(ISNAN, "opcert", "float32", exhaustive=True)
    assert res.ok and res.inputs == len(blocks) << 22 and res.command.endswith("--exhaustive")
    assert {p["status"] for p in res.properties} == {"proved"}
    monkeypatch.setattr(M, "block_range", lambda nb: [285])
    res = measure_predicate(ISINF, "predicate_kernels:isinf_through_float16", "float32", exhaustive=True,
                            isolation="none")  # fmt: skip
    assert res.status == "ok" and res.false_negatives == 0 and res.false_positives == 0x47800000 - 0x477FF000
    first = res.examples[0]
    assert first["bits"] == "0x477ff000" and first["x"] == 65520.0 and first["output"] is True
    assert first["due"] is False and first["replayed"] is True
    statuses = {p["name"]: p["status"] for p in res.properties}
    assert statuses == {"exact": "refuted", "output_type": "proved", "layout": "proved"}
    monkeypatch.setattr(M, "block_range", lambda nb: [510])
    res = measure_predicate(ISNAN, "predicate_kernels:isnan_quiet_only", "float32", exhaustive=True, isolation="none")
    # block 510 holds 0x7f800000 (+inf) to 0x7fbfffff: every positive signalling NaN
    assert res.false_negatives == (1 << 22) - 1 and res.false_positives == 0
    assert res.examples[0]["bits"] == "0x7f800001" and "signalling NaN" in res.examples[0]["class"]


# ---- kernels with known faults -------------------------------------------------------------------------------


def _measure(op, kernel, dtype, **kw):
    return measure_predicate(op, f"predicate_kernels:{kernel}", dtype, isolation="none", **kw)


def _bits(e: dict) -> int:
    return int(e["bits"], 16)


def test_isnan_true_at_the_infinities():
    res = _measure(ISNAN, "isnan_true_for_infinities", "float16")
    assert res.mismatches == res.false_positives == 2 and res.false_negatives == 0
    assert sorted(_bits(e) for e in res.examples) == [0x7C00, 0xFC00]  # +inf and -inf, from the masks
    assert all(e["output"] is True and e["due"] is False for e in res.examples)
    exact = next(p for p in res.properties if p["name"] == "exact")
    assert exact["status"] == "refuted" and exact["violations"] == 2 and not res.ok


def test_isnan_that_misses_signalling_nans_on_float64_samples():
    res = _measure(ISNAN, "isnan_quiet_only", "float64", samples=5_000)
    assert res.false_negatives > 0 and res.false_positives == 0
    for e in res.examples:
        u = _bits(e)
        assert (u & FIELDS["float64"][0]) == FIELDS["float64"][0] and u & FIELDS["float64"][1]  # a NaN
        assert not u & (1 << 51) and e["class"].endswith(f"(payload 0x{u & ((1 << 51) - 1):x})")  # signalling
    res = _measure(ISNAN, "isnan_quiet_only", "bfloat16")  # every bfloat16 signalling NaN: 63 payloads, two signs
    assert res.false_negatives == 2 * 63 and res.mismatches == 2 * 63


def test_isinf_that_ignores_detect_negative():
    res = _measure(ISINF, "isinf_ignores_detect_negative", "float16", attrs=(("detect_negative", 0),))
    assert res.mismatches == 1 and res.examples[0]["bits"] == "0xfc00" and res.examples[0]["output"] is True
    assert "--attr detect_negative=0" in res.command
    assert _measure(ISINF, "isinf_ignores_detect_negative", "float16").ok  # at the defaults it is IsInf


def test_a_uint8_output_where_onnx_says_bool():
    res = _measure(ISNAN, "isnan_as_uint8", "float16")
    assert res.mismatches == 0 and res.output_dtype == "uint8" and res.due_dtype == "bool"
    statuses = {p["name"]: p for p in res.properties}
    assert statuses["exact"]["status"] == "proved" and statuses["output_type"]["status"] == "refuted"
    assert statuses["output_type"]["counterexample"]["output_dtype"] == "uint8" and not res.ok
    # DirectML's output is uint8: the same kernel is right there, and a bool output is the finding
    assert _measure(ISNAN, "isnan_as_uint8", "float16", standard="directml").ok
    res = measure_predicate(ISNAN, "numpy:isnan", "float32", standard="directml", samples=500, isolation="none")
    assert res.mismatches == 0 and res.refuted == ["output_type"]
    # 2 is no truth value: wrong at every NaN, and no output of the standard's type
    res = _measure(ISNAN, "isnan_as_twos", "float16", standard="directml")
    assert res.mismatches == res.not_truth_values == 2 * 1023 and set(res.refuted) == {"exact", "output_type"}


def test_layouts_refuted_by_a_kernel_that_reads_2d_inputs_by_columns_or_refuses_views():
    res = _measure(ISNAN, "isnan_column_major", "float16")
    assert res.mismatches == 0 and res.refuted == ["layout"]
    ce = next(p for p in res.properties if p["name"] == "layout")["counterexample"]
    assert ce["layout"].startswith("2-D shape") and ce["output"] != ce["flat_output"]
    res = _measure(ISNAN, "isnan_contiguous_only", "float32", samples=200)
    assert res.status == "ok" and res.refuted == ["layout"]
    ce = next(p for p in res.properties if p["name"] == "layout")["counterexample"]
    assert "contiguous arrays only" in ce["error"] and "strided" in ce["layout"]


def test_a_raising_kernel_or_a_wrong_shape_is_a_crash_not_an_exception():
    res = _measure(ISNAN, "isnan_raises", "float16")
    assert res.status == "crashed" and "always raises" in res.error and not res.ok
    res = _measure(ISNAN, "isnan_one_short", "float32", samples=100)
    assert res.status == "crashed" and "for an input of shape (36,)" in res.error  # the special patterns' batch
    res = measure_predicate(ISNAN, "predicate_kernels:isnan_raises", "float16")  # in a supervised worker
    assert res.status == "crashed" and res.gate_accuracy()["kind"] == "predicate"


# ---- the runtimes --------------------------------------------------------------------------------------------

MODULES = {"onnx-reference": "onnx"}  # the module a target needs, where it is not the target's name


def _classify_on(name: str) -> dict:
    """In a worker: the runtime's outputs (dtype, truth values) on every float16 and bfloat16 pattern, IsNaN and
    IsInf at each ONNX attribute set, or its reason not to run; and its reasons for what it is not given."""
    t = load_predicate(name)
    out = {}
    for dtype in ("float16", "bfloat16"):
        x = every(dtype)
        for op, cases in ((ISNAN, [((), None)]), (ISINF, INF_CASES)):
            std = op.standard("onnx")
            for given, _ in cases:
                attrs = op.attributes_for(std, dict(given))
                why = t.unsupported(op, std, dtype, attrs)
                key = (dtype, op.name, given)
                if why is not None:
                    out[key] = why
                    continue
                y = t.call(op, std, x.copy(), attrs)
                out[key] = (str(y.dtype), y.shape, np.asarray(y).astype(bool))
    out["directml"] = t.unsupported(ISNAN, ISNAN.standard("directml"), "float16", {})
    out["float8"] = t.unsupported(
        ISINF, ISINF.standard("onnx"), "float8e4m3fn", ISINF.attributes_for(ISINF.standard("onnx"), {})
    )
    return out


@pytest.mark.parametrize("name", predicate_target_names())
def test_each_runtime_classifies_every_16_bit_pattern(name):
    module = MODULES.get(name, name)
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"not installed: {module}")
    got = run_isolated(_classify_on, name)
    for dtype in ("float16", "bfloat16"):
        x = every(dtype)
        for op, cases in ((ISNAN, [((), (True, True))]), (ISINF, INF_CASES)):
            for given, (pos, neg) in cases:
                r = got[(dtype, op.name, given)]
                if isinstance(r, str):  # torch and JAX have no function that detects neither infinity
                    assert given and not (pos or neg) and "no" in r and "function" in r, (name, dtype, given, r)
                    continue
                ydtype, shape, y = r
                assert (ydtype, shape) == ("bool", x.shape), (name, dtype, op.name, given)
                want = expected(x, dtype, op.name, pos, neg)
                wrong = np.flatnonzero(y != want)
                assert not wrong.size, (
                    name,
                    dtype,
                    op.name,
                    given,
                    [hex(int(b)) for b in x.view(np.uint16)[wrong[:5]]],
                )
    assert "no runtime here runs DirectML" in got["directml"]
    assert "no format for float8e4m3fn" in got["float8"]


def test_names_rows_and_refusals():
    assert NAMES == ("opcert",) + predicate_target_names()
    with_side = [r for r in RUNTIMES if r.predicate is not None]
    assert set(predicate_target_names()) == {r.name for r in with_side}
    # the rows without one are other paths of a runtime's element-wise functions (torch.compile, the fused
    # subgraphs, jax-chain): no tensor or binary side either
    assert all(r.tensor is None and r.binary is None for r in RUNTIMES if r.predicate is None)
    before = {m for m in threaded_modules() if m in sys.modules}
    for r in with_side:
        side = resolve(r.predicate)
        assert side.name == r.name and all(callable(getattr(side, m, None)) for m in ("unsupported", "call"))
    assert {m for m in threaded_modules() if m in sys.modules} == before  # no runtime imported by the rows
    for bad, match in (("c:./libk.so:k", "no C ABI"), ("nonesuch", "allowed: opcert, onnxruntime"),
                       ("torch:cuda", "CPU only")):  # fmt: skip
        with pytest.raises(UsageError, match=match):
            load_predicate(bad)
    assert load_predicate("numpy:isnan").version == np.__version__
    assert [op.name for op in predicate_operators()] == ["IsInf", "IsNaN"]
    assert is_predicate_operator("dml_element_wise_is_infinity_operator_desc") and not is_predicate_operator("Tanh")
    with pytest.raises(UsageError, match="did you mean 'IsNaN'"):
        get_predicate_operator("IsNan_")
    for given, match in ((("detect_negative", 2),), "allowed 0, 1"), ((("scale", 1),), "no attribute 'scale'"):
        with pytest.raises(UsageError, match=match):
            measure_predicate(ISINF, "opcert", "float16", attrs=given)
    with pytest.raises(UsageError, match="float64's 2\\^64 are sampled"):
        measure_predicate(ISNAN, "opcert", "float64", exhaustive=True)


# ---- the commands --------------------------------------------------------------------------------------------


def _run(fn, capsys, *argv):
    args, extra = cli.build_parser().parse_known_args([str(a) for a in argv])
    if extra:
        args.x = list(args.x) + [e for e in extra if e != "--"]
    code = fn(cli, args)
    out = capsys.readouterr()
    return code, out.out, out.err


def test_commands(capsys, tmp_path):
    code, out, _ = _run(cli_predicate.cmd_ref, capsys, "ref", "IsNaN", "--dtype", "float16", "--json", "--",
                        "nan", "0x7c01", "0xfc00", "-0")  # fmt: skip
    rows = json.loads(out)["results"]
    assert code == 0 and [r["result"] for r in rows] == [True, True, False, False]
    assert [r["x_bits"] for r in rows] == ["0x7e00", "0x7c01", "0xfc00", "0x8000"]
    assert "signalling NaN" in rows[1]["class"] and rows[2]["class"] == "-inf"
    code, out, _ = _run(cli_predicate.cmd_ref, capsys, "ref", "IsInf", "--dtype", "float32", "--standard",
                        "directml", "--attr", "InfinityMode=NEGATIVE", "--json", "--", "inf", "-inf")  # fmt: skip
    assert code == 0 and [r["result"] for r in json.loads(out)["results"]] == [0, 1]
    code, out, _ = _run(cli_predicate.cmd_ops_one, capsys, "ops", "IsInf", "--json")
    r = json.loads(out)
    assert code == 0 and r["kind"] == "predicate" and [s["output_type"] for s in r["standards"]] == ["bool", "uint8"]
    assert r["standards"][1]["document"].endswith("dml_element_wise_is_infinity_operator_desc")
    path = tmp_path / "r.json"
    code, _, _ = _run(cli_predicate.cmd_accuracy, capsys, "accuracy", "IsNaN", "--dtype", "bfloat16", "--json", path)
    acc = json.loads(path.read_text())
    assert code == 0 and acc["kind"] == "predicate" and acc["inputs_checked"] == 1 << 16 and acc["mismatches"] == 0
    code, _, err = _run(cli_predicate.cmd_accuracy, capsys, "accuracy", "IsNaN", "--dtype", "float16", "--target",
                        "predicate_kernels:isnan_true_for_infinities", "--in-process")  # fmt: skip
    assert code == 1 and "2 wrong outputs" in err and "0x7c00" in err and "refuted" in err
    code, _, err = _run(cli_predicate.cmd_accuracy, capsys, "accuracy", "IsNaN", "--dtype", "bfloat16",
                        "--standard", "directml")  # fmt: skip
    assert code == 0 and "skipped" in err and "lists no bfloat16" in err
    for argv, match in (
        (("--dtype", "float16", "--max-ulp", "1"), "--max-ulp does not apply to IsNaN"),
        (("--dtype", "float16", "--samples", "10"), "every float16 pattern is checked"),
        (("--dtype", "float32", "--samples", "10", "--exhaustive"), "exclude each other"),
        (("--dtype", "float32", "--workers", "2"), "--workers does not apply"),
        (("--dtype", "float32", "--standard", "directml", "--attr", "nonesuch=1"), "has no attribute 'nonesuch'"),
    ):
        with pytest.raises(UsageError, match=match):
            _run(cli_predicate.cmd_accuracy, capsys, "accuracy", "IsNaN", *argv)
