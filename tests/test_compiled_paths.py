"""Compiled and fused paths (issue 54): the torch.compile and ONNX Runtime subgraph targets, the path matrix
(`opcert paths`, opcert.path_matrix) and the gate's `against` key.

In CI: the matrix and `against` on two NumPy paths whose difference the test makes (tests/path_kernels.py),
ONNX Runtime's subgraph run in this process, and the configuration's errors. Compiling with TorchInductor
costs 20-30 s on a cold cache, so every torch.compile measurement is in the slow run."""

import importlib.util
import json
import os

import numpy as np
import pytest

from opcert.errors import ConfigErrors, UsageError
from opcert.formats import bits_differ, get_format
from opcert.gating.config import parse_check
from opcert.gating.run import against_reasons
from opcert.isa import LevelOutputs
from opcert.path_matrix import _groups, _pair, parse_paths
from opcert.report.render import markdown
from opcert.spec import get_operator
from opcert.spec.attrs import resolve
from opcert.spec.reference import reference_detailed

HERE = os.path.dirname(__file__)


def needs(module: str) -> None:
    """Skip where the runtime is absent (make test installs it); asked with find_spec, which loads nothing into
    the test process (conftest: no multithreaded runtime here)."""
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"{module} is not installed (make test installs it: pip install '.[runtimes]')")


@pytest.fixture
def kernels_on_path(monkeypatch):
    """tests/ on the PYTHONPATH of the processes `opcert accuracy` starts for each path."""
    monkeypatch.setenv(
        "PYTHONPATH", os.pathsep.join([HERE] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])
    )


def test_paths_are_targets_or_isa_levels_and_bad_ones_are_named():
    p = parse_paths("torch,torch.compile")
    assert [(x.name, x.target, x.env) for x in p] == [("torch", "torch", {}), ("torch.compile", "torch.compile", {})]
    levels = parse_paths("torch@all,numpy:tanh")
    assert [x.name for x in levels][0] == "torch@default" and levels[0].env == {"ATEN_CPU_CAPABILITY": "default"}
    for bad, says in (
        ("torch", "two paths or more"),
        ("torch,,onnxruntime", "two paths or more"),
        ("torch,nosuch", "unknown target 'nosuch'"),
        ("torch@avx9,torch", "not an ISA level of torch"),
        ("onnxruntime@all,torch", "has no ISA switch"),
        ("torch,torch", "twice"),
    ):
        with pytest.raises(UsageError, match=says):
            parse_paths(bad)


def _outputs(name, x, y, fmt):
    return LevelOutputs(name, {}, x.view(fmt.uint), np.ascontiguousarray(y).view(fmt.uint))


def test_a_pair_counts_the_differences_and_their_distance_and_shows_the_first_replayed_one():
    op, fmt = get_operator("Tanh"), get_format("float16")
    x = np.array([0.0, 0.5, 1.0, 2.0, np.nan, 3.0], np.float16)
    y = np.tanh(x)
    moved = y.copy()
    moved[2] = np.nextafter(np.nextafter(y[2], np.float16(9)), np.float16(9))  # two representable values up
    moved[3] = np.float16(np.nan)  # a NaN against a number
    moved[4] = np.float16(-np.nan)  # another NaN against a NaN: the same
    a, b = _outputs("a", x, y, fmt), _outputs("b", x, moved, fmt)
    again = {"a": _outputs("a", x, y, fmt), "b": _outputs("b", x, moved, fmt)}
    resolved = resolve(op, {}, None)
    d = bits_differ(a.y, b.y, fmt)
    pr = _pair(op, fmt, resolved, None, x.view(fmt.uint), a, b, d, again)
    assert (pr["differ"], pr["max_apart"], pr["nan_differ"]) == (2, 2, 1)
    ex = pr["example"]
    assert ex["x"]["bits"] == "0x3c00" and ex["replayed"]
    want = reference_detailed(op, x[2:3], resolved, None).rounded
    assert ex["correctly_rounded"]["bits"] == f"0x{int(np.asarray(want).view(np.uint16)[0]):04x}"
    assert [o["output"]["bits"] for o in ex["outputs"]] == [
        f"0x{int(y.view(np.uint16)[2]):04x}",
        f"0x{int(moved.view(np.uint16)[2]):04x}",
    ]
    # not reproduced: the replay of b gave other bits
    pr = _pair(op, fmt, resolved, None, x.view(fmt.uint), a, b, d, {"a": again["a"], "b": _outputs("b", x, y, fmt)})
    assert pr["example"]["replayed"] is False
    assert _groups(["a", "b", "c"], [{"paths": ["a", "b"], "differ": 3}, {"paths": ["a", "c"], "differ": 0}]) == [
        ["a", "c"],
        ["b"],
    ]


def test_the_path_matrix_finds_the_path_that_moves_outputs(cli, kernels_on_path):
    code, out, err = cli(
        "paths", "Tanh", "--dtype", "float32", "--samples", "2000",
        "--paths", "path_kernels:tanh,path_kernels:tanh_moved", "--json", "-",
    )  # fmt: skip
    m = json.loads(out)
    assert code == 1, err  # a pair differs
    assert m["groups"] == [["path_kernels:tanh"], ["path_kernels:tanh_moved"]]
    (pair,) = m["pairs"]
    assert pair["max_apart"] == 1 and pair["nan_differ"] == 0 and pair["differ"] > 0
    ex = pair["example"]
    x = np.float32(ex["x"]["value"])
    assert 0.25 <= x < 0.75 and ex["replayed"]
    assert ex["outputs"][0]["output"]["value"] == float(np.tanh(x))
    assert ex["outputs"][1]["output"]["value"] == float(np.nextafter(np.tanh(x), np.float32(1)))
    for p in m["paths"]:
        assert p["command"].startswith("opcert accuracy Tanh --dtype float32 --target ")
        assert p["inputs"] == m["inputs"]  # each path measured on the inputs the matrix compares


def test_the_gate_key_against_fails_past_its_distance_and_prints_a_command_that_says_so(cli, kernels_on_path):
    base = (
        "accuracy", "Tanh", "--dtype", "float32", "--samples", "2000", "--target", "path_kernels:tanh_moved",
        "--max-ulp", "4", "--against", "path_kernels:tanh",
    )  # fmt: skip
    code, out, err = cli(*base, "--json", "-")
    check = json.loads(out)["check"]
    assert code == 1 and check["status"] == "fail"
    assert any("1 representable value apart > max_ulp_apart 0" in r for r in check["reasons"]), check["reasons"]
    assert check["command"].endswith("--against path_kernels:tanh --max-ulp-apart 0")
    assert check["against"]["max_apart"] == 1
    # the reports show the comparison beside the reason
    gate = {"checks": [check], "counts": {"pass": 0, "fail": 1, "skipped": 0}, "ok": False, "provenance": {}}
    page = markdown({**gate, "config": "test", "elapsed_s": 1.0, "command": "opcert gate", "verdict_note": None})
    assert "**against path_kernels:tanh**: " in page and "at most 1 representable value apart" in page
    # the same comparison, judged at a distance of 1: nothing to say
    (one_apart,) = parse_check(
        {"op": "Tanh", "dtypes": ["float32"], "target": "path_kernels:tanh_moved", "against": "path_kernels:tanh",
         "max_ulp_apart": 1}, 0, "test",
    )  # fmt: skip
    assert against_reasons(one_apart, check["against"]) == []


def test_against_is_checked_where_the_configuration_is_read():
    def errors(**raw):
        with pytest.raises(ConfigErrors) as e:
            parse_check({"op": "Tanh", "dtypes": ["float16"], "target": "torch.compile", **raw}, 0, "test")
        return str(e.value)

    assert "own target" in errors(against="torch.compile")
    assert "unknown target" in errors(against="torhc")
    assert "integer >= 0" in errors(against="torch", max_ulp_apart=-1)
    assert "applies with against" in errors(max_ulp_apart=2)
    assert "not a callable" in errors(against=lambda x: x)
    with pytest.raises(ConfigErrors, match="element-wise operators"):
        parse_check({"op": "Softmax", "dtypes": ["float16"], "target": "torch", "against": "onnxruntime"}, 0, "t")
    (c,) = parse_check({"op": "Tanh", "dtypes": ["float16"], "target": "torch.compile", "against": "torch"}, 0, "t")
    assert (c.against, c.max_ulp_apart) == ("torch", 0) and c.identity("float16")["against"] == "torch"


def _subgraph_sides():
    """In a worker (ONNX Runtime is multithreaded): what each subgraph target ran, and its outputs' distance from
    the correctly rounded Gelu where 1 + erf does not cancel."""
    from opcert.targets.runtimes.onnxruntime_subgraph import OnnxRuntimeSubgraph, OnnxRuntimeSubgraphUnfused

    op = get_operator("Gelu")
    attrs = resolve(op, {}, None)
    x = np.linspace(-0.5, 3, 4097, dtype=np.float32)
    ref = np.asarray(reference_detailed(op, x, attrs, None).rounded)
    out = []
    for side in (OnnxRuntimeSubgraph(), OnnxRuntimeSubgraphUnfused()):
        why = side.unsupported(op, "float32", attrs)
        y = side(op, x, attrs)
        far = np.abs(y.view(np.int32).astype(np.int64) - ref.view(np.int32).astype(np.int64))
        out.append((why, list(side.observed["kernels"].values()), y.dtype.name, int(far.max())))
    tanh = get_operator("Tanh")
    return out, OnnxRuntimeSubgraph().unsupported(tanh, "float32", resolve(tanh, {}, None))


def test_onnx_runtime_runs_the_gelu_subgraph_fused_or_not_and_says_which_kernels_ran():
    needs("onnxruntime")
    from opcert.workers import run_isolated

    sides, refused = run_isolated(_subgraph_sides)
    unfused = ["ai.onnx:Div", "ai.onnx:Erf", "ai.onnx:Add", "ai.onnx:Mul", "ai.onnx:Mul"]
    for (why, seen, dtype, far), kernels in zip(sides, (["com.microsoft:Gelu"], unfused)):
        assert why is None and dtype == "float32"
        (one,) = seen
        assert one["nodes_run"] == kernels and one["form"].startswith("erf")
        assert far <= 4, far  # the subgraph is Gelu: within a few representable values of the correctly rounded one
    assert "no decomposed subgraph of Tanh" in refused


def _openvino_subgraph():
    """In a worker: what OpenVINO's compiled subgraph ran, and its distance from the correctly rounded Gelu."""
    from opcert.targets.runtimes.openvino_subgraph import OpenVinoSubgraph

    op = get_operator("Gelu")
    attrs = resolve(op, {}, None)
    x = np.linspace(-0.5, 3, 4097, dtype=np.float32)
    ref = np.asarray(reference_detailed(op, x, attrs, None).rounded)
    side = OpenVinoSubgraph()
    why = side.unsupported(op, "float32", attrs)
    y = side(op, x, attrs)
    far = np.abs(y.view(np.int32).astype(np.int64) - ref.view(np.int32).astype(np.int64))
    return why, list(side.observed["kernels"].values()), int(far.max())


def test_openvino_compiles_the_gelu_subgraph_and_says_which_nodes_ran():
    needs("openvino")
    from opcert.workers import run_isolated

    why, seen, far = run_isolated(_openvino_subgraph)
    (one,) = seen
    assert why is None and one["form"].startswith("erf") and one["nodes_run"], one
    # the subgraph is Gelu: within a few representable values of the correctly rounded one (OpenVINO's erf
    # differs by host: at most 4 measured with AVX-512, 8 on a Zen 3 host with AVX2 alone)
    assert far <= 16, far


def test_each_isa_level_of_torch_compile_has_its_own_inductor_cache_unless_the_user_set_one(monkeypatch):
    """Inductor's cache does not tell apart code generated for different ISA levels (bench/torch_compile_cache_isa.py:
    a lower level was handed a higher one's code), so each level of the target compiles into a directory of its
    own; a user's TORCHINDUCTOR_CACHE_DIR is kept, and the details say it is shared. (torch is not imported here:
    the module imports it where the target is made.)"""
    from opcert.targets.runtimes import torch_compile as tc

    monkeypatch.setattr(tc, "USER_CACHE", None)
    seen = []
    for level in ("avx2", "default", None):
        if level:
            monkeypatch.setenv("ATEN_CPU_CAPABILITY", level)
        else:
            monkeypatch.delenv("ATEN_CPU_CAPABILITY", raising=False)
        seen.append(tc.cache_directory("/tmp/inductor-default")[0])
    assert seen == [f"/tmp/inductor-default/opcert-isa-{v}" for v in ("avx2", "default", "host")]
    monkeypatch.setattr(tc, "USER_CACHE", "/tmp/my-inductor")
    mine, why = tc.cache_directory("/tmp/inductor-default")
    assert mine == "/tmp/my-inductor" and "shared by every ISA level" in why


@pytest.mark.slow
def test_the_jax_chain_applies_its_scale_and_bias_inside_the_jitted_computation(cli):
    """jax-chain computes tanh(x * 2 + 0.25): a few ULP from the exact chain (the plain function would be hundreds
    off), and outside a ScaleBias standard it is skipped, saying why."""
    needs("jax")
    code, out, err = cli(
        "accuracy", "Tanh", "--dtype", "float32", "--samples", "2000", "--target", "jax-chain", "--standard",
        "directml", "--attr", "scale=2", "--attr", "bias=0.25", "--json", "-",
    )  # fmt: skip
    r = json.loads(out)
    assert r["status"] == "ok" and r["max_ulp"] < 8, (r["max_ulp"], err)
    code, out, err = cli("accuracy", "Tanh", "--dtype", "float16", "--target", "jax-chain")
    assert code == 0 and "has no ScaleBias" in err


def _prelu_dtypes():
    """In a worker: torch.compile's PRelu (a tensor attribute, the slope) called in three dtypes, one after another."""
    from opcert.targets.runtimes.torch_compile import TorchCompiledElementWise

    op = get_operator("PRelu")
    side, attrs = TorchCompiledElementWise(), resolve(op, {}, None)
    return [side(op, np.linspace(-2, 2, 9).astype(dt), attrs).dtype.name for dt in ("float32", "float16", "float64")]


@pytest.mark.slow
def test_torch_compile_makes_a_tensor_attribute_in_each_dtype_it_is_called_with():
    """The compiled function is kept per dtype: a float16 call after a float32 one gets a float16 slope, not the
    float32 one (which would promote its output to float32, a wrong dtype blamed on torch)."""
    needs("torch")
    from opcert.workers import run_isolated

    assert run_isolated(_prelu_dtypes) == ["float32", "float16", "float64"]


@pytest.mark.slow
def test_torch_compile_of_gelu_is_measured_as_compiled_code(cli):
    """The issue's acceptance command: the compiled path's worst ULP and properties, its settings stated."""
    needs("torch")
    code, out, err = cli(
        "accuracy", "Gelu", "--dtype", "float32", "--target", "torch.compile", "--samples", "100000", "--json", "-"
    )
    r = json.loads(out)
    assert r["status"] == "ok" and r["max_ulp"] is not None
    d = r["target_info"]["details"]
    assert "dynamic=True, fullgraph=True" in d["compile"] and d["emulate_precision_casts"] is False
    assert {p["name"] for p in r["properties"]} >= {"monotonic", "layout", "nan"}


@pytest.mark.slow
def test_the_gelu_and_tanh_path_matrices_of_torch_in_float16(cli):
    needs("torch")
    for op in ("Gelu", "Tanh"):
        code, out, err = cli(
            "paths", op, "--dtype", "float16", "--paths", "torch,torch.compile,torch.compile-emulate-casts",
            "--json", "-",
        )  # fmt: skip
        m = json.loads(out)
        assert m["complete"] and m["inputs"] == 65536, err
        assert all(p["status"] == "ok" for p in m["paths"])
        for pr in m["pairs"]:
            assert pr["differ"] == 0 or pr["example"]["replayed"]


@pytest.mark.slow
def test_onnx_runtimes_fused_gelu_against_its_subgraph_unfused_on_every_float16_input(cli):
    needs("onnxruntime")
    code, out, err = cli(
        "paths", "Gelu", "--dtype", "float16", "--paths", "onnxruntime-subgraph,onnxruntime-subgraph-unfused",
        "--json", "-",
    )  # fmt: skip
    m = json.loads(out)
    assert m["complete"] and m["inputs"] == 65536, err
    for p in m["paths"]:
        assert p["target_details"]["observed"]["kernels"], p
    code, out, err = cli(
        "accuracy", "Gelu", "--dtype", "float32", "--samples", "3000", "--target", "onnxruntime-subgraph"
    )
    assert "com.microsoft:Gelu" in out  # the fused kernel's name, in the table
