"""The command line: outputs, exit codes, and every bad-input path (exit 2, no traceback)."""

import json
import os
import subprocess
import sys

import pytest


def test_ops_json_lists_the_catalog(cli):
    code, out, _ = cli("ops", "--json")
    data = json.loads(out)
    names = [d["name"] for d in data]
    # one operator per module of the catalog's folders (spec/ops, tensor_ops, binary_ops, predicate_ops), on disk
    spec = os.path.join(os.path.dirname(__file__), "..", "opcert", "spec")
    folders = ("ops", "tensor_ops", "binary_ops", "predicate_ops")
    modules = [f for d in folders for f in os.listdir(os.path.join(spec, d))]
    expected = sum(1 for f in modules if f.endswith(".py") and not f.startswith("_"))
    assert code == 0 and names == sorted(names) and len(names) == expected
    tensor = {d["name"]: d for d in data if d["kind"] == "tensor"}
    assert set(tensor) == {
        "Softmax",
        "LogSoftmax",
        "Hardmax",
        "LayerNormalization",
        "LpNormalization",
        "RMSNormalization",
        "MeanVarianceNormalization",
        "InstanceNormalization",
        "GroupNormalization",
        "ReduceLogSumExp",
        "ReduceLogSum",
        "ReduceL2",
        "ReduceSumSquare",
    }
    # every standard's form of Softmax's family: ONNX opsets 1, 11, 13, DirectML plain and 1 forms
    for d in [tensor[n] for n in ("Softmax", "LogSoftmax", "Hardmax")]:
        assert [(s["key"], s["axes"]["rule"]) for s in d["standards"]] == [
            ("onnx-1", "coerce-2d"),
            ("onnx-11", "coerce-2d"),
            ("onnx", "single"),
            ("directml", "last"),
            ("directml-1", "list"),
        ]
    assert tensor["Softmax"]["standards"][4]["name"] == "DML_ACTIVATION_SOFTMAX1"
    assert tensor["Softmax"]["standards"][4]["support"] == [
        {"since": "5.1", "dtypes": ["float16", "float32"], "ranks": [1, 8]}
    ]
    # the normalizations: ONNX's axis rule (the trailing axes from axis), epsilon with its default
    ln = tensor["LayerNormalization"]
    assert [(s["key"], s["axes"]["rule"], s["name"]) for s in ln["standards"]] == [
        ("onnx", "coerce-2d", "LayerNormalization"),
        ("ort-skip", "last", "com.microsoft SkipLayerNormalization"),  # ONNX Runtime's own kernel
    ]
    assert [(a["name"], a["defaults"]) for a in ln["attributes"]] == [
        ("epsilon", {"onnx": 1e-5, "ort-skip": 1e-12}),
        ("scale", {"onnx": 1.0, "ort-skip": 1.0}),  # the standards' Scale (gamma) of ones
        ("B", {"onnx": 0.0, "ort-skip": 0.0}),  # B (beta) absent
    ]
    # the seed documents' five and the catalog the issue lists
    assert {
        "Tanh",
        "ScaledTanh",
        "HardSigmoid",
        "Shrink",
        "Celu",
        "Relu",
        "Sigmoid",
        "Gelu",
        "Swish",
        "Softplus",
        "Elu",
    } <= set(names)
    by = {d["name"]: d for d in data}
    hs = by["HardSigmoid"]
    assert hs["attributes"][0]["defaults"] == {"onnx": 0.2, "directml": 0.2}
    assert {s["key"] for s in hs["standards"]} == {"onnx", "directml"}
    shrink_dml = next(s for s in by["Shrink"]["standards"] if s["key"] == "directml")
    assert shrink_dml["support"][-1] == {
        "since": "5.1",
        "ranks": [1, 8],
        "dtypes": ["float16", "float32", "int32", "int16", "int8", "uint32", "uint16", "uint8"],
    }


def test_ops_op_shows_one_operator_with_its_standards_attributes_and_properties(cli):
    import onnx.defs

    code, out, _ = cli("ops", "elu", "--json")
    r = json.loads(out)
    assert code == 0 and r["name"] == "Elu" and [s["key"] for s in r["standards"]] == ["onnx", "directml"]
    (alpha,) = r["attributes"]
    # ONNX's own schema is the independent source of the default; DirectML's name is its descriptor's field
    assert (
        alpha["name"] == "alpha"
        and alpha["defaults"]["onnx"] == onnx.defs.get_schema("Elu").attributes["alpha"].default_value.f
    )
    assert {s["key"]: s["attribute_names"]["alpha"] for s in r["standards"]} == {"onnx": "alpha", "directml": "Alpha"}
    assert {"range", "monotonic", "nan", "layout"} <= {p["name"] for p in r["properties"]}
    code, out, _ = cli("ops", "Elu")
    assert code == 0 and "DML_ACTIVATION_ELU" in out and "monotonic" in out and "Alpha" in out
    code, out, _ = cli("ops", "Softmax", "--json")
    assert code == 0 and json.loads(out)["kind"] == "tensor"


def test_an_unknown_operator_is_refused_with_the_nearest_name(cli):
    code, _, err = cli("ops", "Tahn")
    assert code == 2 and "unknown operator 'Tahn' (did you mean 'Tanh'?)" in err and "allowed:" in err
    code, _, err = cli("accuracy", "softmx", "--dtype", "float16")
    assert code == 2 and "did you mean 'Softmax'?" in err


def test_ops_table(cli):
    code, out, _ = cli("ops")
    assert code == 0 and "ScaledTanh" in out
    assert "DML_ACTIVATION_HARDMAX1" in out and "LogSoftmax" in out


def test_ref_prints_values_and_bits(cli):
    code, out, _ = cli("ref", "Tanh", "--dtype", "float16", "--json", "1", "0x3c00", "-0", "inf", "nan")
    rows = json.loads(out)["results"]
    assert code == 0
    assert rows[0]["result_bits"] == rows[1]["result_bits"] == "0x3a18"  # tanh(1) = 0.76171875 in float16
    assert rows[0]["result"] == 0.76171875
    assert rows[2]["result_bits"] == "0x8000" and rows[3]["result"] == 1.0 and rows[4]["result"] == "nan"


def test_ref_with_directml_attribute_name(cli):
    code, out, _ = cli(
        "ref",
        "DML_ACTIVATION_SHRINK",
        "--dtype",
        "float32",
        "--attr",
        "Threshold=1",
        "--attr",
        "Bias=0.5",
        "--json",
        "2",
        "0.5",
    )
    rows = json.loads(out)["results"]
    assert code == 0 and [r["result"] for r in rows] == [1.5, 0.0]


def test_accuracy_json_file(cli, tmp_path):
    f = tmp_path / "r.json"
    code, out, _ = cli("accuracy", "Tanh", "--dtype", "float16", "--target", "opcert", "--exhaustive", "--json", f)
    data = json.loads(f.read_text())
    assert code == 0 and data["inputs_checked"] == 65536 and data["exhaustive"] is True
    assert data["worst_input_bits"].startswith("0x") and "reproduce" in out


def test_accuracy_exit_1_on_nan_mismatch(cli):
    code, out, _ = cli(
        "accuracy", "Tanh", "--dtype", "float16", "--target", "bad_targets:tanh_nan_is_one", "--exhaustive"
    )
    assert code == 1 and "0x7c01" in out


def test_accuracy_exit_1_on_crash(cli):
    code, out, err = cli("accuracy", "Tanh", "--dtype", "float16", "--target", "bad_targets:crashes", "--exhaustive")
    assert code == 1 and "kernel exploded" in out and "kernel exploded" in err


def test_accuracy_max_ulp_budget(cli):
    code, _, _ = cli(
        "accuracy",
        "Shrink",
        "--dtype",
        "float16",
        "--target",
        "bad_targets:shrink_ge",
        "--exhaustive",
        "--max-ulp",
        "1",
    )
    assert code == 1


@pytest.mark.parametrize(
    "args,message",
    [
        (["accuracy", "Tanhh", "--dtype", "float16"], "unknown operator 'Tanhh'"),
        (["accuracy", "Tanh", "--dtype", "float8"], "unknown dtype 'float8'"),
        (["accuracy", "Tanh", "--dtype", "float16", "--target", "cuda"], "unknown target 'cuda'"),
        (["accuracy", "Celu", "--dtype", "float16", "--attr", "alpha=0"], "outside its domain"),
        (["accuracy", "Celu", "--dtype", "float16", "--attr", "alpha=nan"], "not finite"),
        (["accuracy", "Celu", "--dtype", "float16", "--attr", "alpha"], "not of the form name=value"),
        (["accuracy", "Celu", "--dtype", "float16", "--attr", "beta=1"], "unknown attribute 'beta'"),
        (["accuracy", "Tanh", "--dtype", "float16", "--exhaustive", "--samples", "5"], "exclude each other"),
        (["accuracy", "Tanh", "--dtype", "float64", "--exhaustive"], "float64 is sampled"),
        (["accuracy", "Tanh", "--dtype", "float16", "--exhaustive", "--workers", "2"], "apply to exhaustive float32"),
        (["accuracy", "Tanh", "--dtype", "float32", "--exhaustive", "--scheduler", "yarn://x"], "allowed is dask://"),
        (["accuracy", "Tanh"], "required: --dtype"),
        (["ref", "Tanh", "--dtype", "float16", "abc"], "not a number"),
        (["ref", "Tanh", "--dtype", "float16"], "at least one input"),
        (["ref", "Tanh", "--dtype", "float16", "0x10000"], "more than 16 bits"),
        (["ref", "Tanh", "--dtype", "int8", "1"], "Tanh does not take int8"),
        (["prove-everything"], "invalid choice"),
        (["ops", "--bogus"], "unrecognized arguments: --bogus"),
    ],
)
def test_bad_input_exits_2_with_a_message(cli, args, message):
    code, out, err = cli(*args)
    assert code == 2 and message in err and "Traceback" not in err + out


def test_console_script_and_module_entry_points(tmp_path):
    env = dict(os.environ, PYTHONPATH=os.path.dirname(__file__))
    for cmd in ([sys.executable, "-m", "opcert"], [os.path.join(os.path.dirname(sys.executable), "opcert")]):
        p = subprocess.run(
            cmd + ["accuracy", "Tanh", "--dtype", "float16", "--target", "nosuch:f"],
            capture_output=True,
            text=True,
            env=env,
        )
        assert p.returncode == 2 and "cannot import module 'nosuch'" in p.stderr and "Traceback" not in p.stderr


def test_the_printed_reproduce_command_runs_and_gives_the_same_figure(cli):
    """A choice attribute is printed by its name (the CLI takes no index)."""
    import json
    import shlex

    code, out, _ = cli(
        "accuracy",
        "Gelu",
        "--dtype",
        "float16",
        "--target",
        "opcert",
        "--attr",
        "approximate=tanh",
        "--exhaustive",
        "--json",
        "-",
    )
    first = json.loads(out)
    argv = shlex.split(first["command"])
    assert argv[0] == "opcert" and "approximate=tanh" in argv
    code2, out2, _ = cli(*argv[1:], "--json", "-")
    again = json.loads(out2)
    assert (code2, again["max_ulp"], again["worst_input_bits"]) == (code, first["max_ulp"], first["worst_input_bits"])


def test_the_command_ends_with_its_output_whole_and_its_exit_code(tmp_path):
    """opcert's process ends without tearing the interpreter down (cli.entry): what it printed is all there,
    through a file and a pipe, the files it wrote are whole, its atexit handlers ran, and the exit code is
    main's (0, 1 for a refuted check, 2 for a usage error), for `python -m opcert` and the console script."""
    script = os.path.join(os.path.dirname(sys.executable), "opcert")
    for launcher in ([sys.executable, "-m", "opcert"], [script]):  # both call cli.entry
        out = tmp_path / "ops.json"
        with out.open("w") as f:  # a file, not a pipe: block-buffered, flushed only at the end
            r = subprocess.run([*launcher, "ops", "--json"], stdout=f, stderr=subprocess.PIPE, timeout=120)
        assert r.returncode == 0, r.stderr
        names = [o["name"] for o in json.loads(out.read_text())]  # parses: nothing cut off
        assert "Tanh" in names and "Softmax" in names and len(names) > 40
        r = subprocess.run([*launcher, "no-such-command"], capture_output=True, text=True, timeout=120)
        assert r.returncode == 2 and "invalid choice" in r.stderr
    # a refuted check, through the console script alone (the launchers share everything after their first
    # line, and this check is most of the test's time)
    report = tmp_path / "r.json"
    r = subprocess.run(
        [script, "accuracy", "Relu", "--dtype", "float16", "--target", "bad_targets:relu_max_to_inf"]
        + ["--exhaustive", "--json", str(report)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=os.path.dirname(__file__),
        env={**os.environ, "PYTHONPATH": os.path.dirname(__file__)},
    )
    assert r.returncode == 1, r.stderr
    got = json.loads(report.read_text())  # parses: written whole
    assert got["op"] == "Relu" and got["inputs_checked"] == 1 << 16
    assert any(p["status"] == "refuted" for p in got["properties"]), r.stderr  # why the exit code is 1
    code = "import atexit, sys; atexit.register(lambda: print('handler ran', file=sys.stderr)); "
    code += "sys.argv = ['opcert', 'ops', '--json']; from opcert.cli import entry; entry()"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and "handler ran" in r.stderr and json.loads(r.stdout)
