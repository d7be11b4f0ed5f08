"""The gate: exit codes, JUnit, configuration errors, reports, baselines, the pytest plugin."""

import json
import xml.etree.ElementTree as ET

import pytest

import opcert

PASSING = """
[[check]]
op = "Tanh"
dtypes = ["float16"]
mode = "exhaustive"
max_ulp = 0.5
proofs = ["range", "nan"]
"""
FAILING = """
[[check]]
op = "Tanh"
dtypes = ["float16"]
target = "numpy:tanh"
mode = "exhaustive"
max_ulp = 0.0
"""


def write(tmp_path, text, name="opcert.toml"):
    p = tmp_path / name
    p.write_text(text)
    return str(p)


def test_passing_gate_exits_0_and_writes_everything(cli, tmp_path):
    cfg = write(tmp_path, PASSING)
    code, out, _ = cli(
        "gate",
        "--config",
        cfg,
        "--json",
        tmp_path / "g.json",
        "--junit",
        tmp_path / "j.xml",
        "--report",
        tmp_path / "rep",
        "--workers",
        "1",
    )
    assert code == 0 and "1 passed, 0 failed" in out
    g = json.loads((tmp_path / "g.json").read_text())
    assert g["schema"] == "opcert.gate/1" and g["ok"] and g["checks"][0]["proofs"][0]["status"] == "proved"
    assert (tmp_path / "rep" / "report.md").exists() and (tmp_path / "rep" / "report.html").exists()
    suite = ET.parse(tmp_path / "j.xml").getroot()
    assert suite.get("tests") == "1" and suite.get("failures") == "0"


def test_budget_broken_exits_1_with_junit_failure(cli, tmp_path):
    cfg = write(tmp_path, FAILING)
    code, out, _ = cli("gate", "--config", cfg, "--junit", tmp_path / "j.xml", "--workers", "1")
    assert code == 1 and "reproduce: opcert accuracy Tanh --dtype float16 --target numpy:tanh --exhaustive" in out
    failure = ET.parse(tmp_path / "j.xml").getroot().find("testcase/failure")
    msg = failure.get("message")
    # the operator, the dtype, the worst input and its error, as MPFR computes them
    import numpy as np
    from conftest import all_16bit
    from oracle import worst_ulp

    x = all_16bit("float16")
    with np.errstate(invalid="ignore"):  # tanh of the NaN inputs
        err, worst = worst_ulp("Tanh", x, np.tanh(x), {})
    assert "Tanh float16" in msg and f"max ULP error {err:.12g}"[:-2] in msg and f"x = {worst!r}" in msg
    assert "reproduce:" in failure.text


def test_crashing_target_fails_the_gate(cli, tmp_path):
    cfg = write(tmp_path, FAILING.replace("numpy:tanh", "bad_targets:crashes"))
    code, out, _ = cli("gate", "--config", cfg, "--workers", "1")
    assert code == 1 and "target crashed" in out and "kernel exploded" in out


def test_unsupported_is_skipped_with_its_reason(cli, tmp_path):
    skipped = FAILING.replace("numpy:tanh", "torch").replace('"Tanh"', '"ScaledTanh"')
    # alone, the skipped check leaves a gate that verified nothing: it fails
    code, out, _ = cli("gate", "--config", write(tmp_path, skipped), "--workers", "1")
    assert code == 1 and "maps no torch function to ScaledTanh" in out and "verified nothing" in out
    # beside a check that passes, a skip says why and does not fail the gate
    code, out, _ = cli("gate", "--config", write(tmp_path, PASSING + skipped, "both.toml"), "--workers", "1")
    assert code == 0 and "skipped ScaledTanh float16 torch" in out and "1 passed, 0 failed, 1 skipped" in out


def test_signed_zero_and_flush_policies(cli, tmp_path):
    base = """
[[check]]
op = "Tanh"
dtypes = ["float16"]
target = "bad_targets:flush_tiny"
mode = "exhaustive"
max_ulp = 0.5
"""
    code, out, _ = cli("gate", "--config", write(tmp_path, base), "--workers", "1")
    assert code == 1 and "signed-zero mismatches (policy strict)" in out and "flushed to zero (policy strict)" in out
    relaxed = base + 'signed_zero = "ignore"\nsubnormals = "flush-allowed"\n'
    code, out, _ = cli("gate", "--config", write(tmp_path, relaxed, "relaxed.toml"), "--workers", "1")
    assert code == 0, out


@pytest.mark.parametrize(
    "text,message",
    [
        ('[[check]]\nop = "Tanhh"\n', "check[0].op: unknown operator 'Tanhh'"),
        (
            '[[check]]\nop = "Tanh"\nmax_ulps = 1\n',
            "check[0].max_ulps: unknown key (did you mean 'max_ulp'?); allowed:",
        ),
        (
            '[[check]]\nop = "Tanh"\nmode = "fast"\n',
            "check[0].mode: 'fast' is not allowed; allowed: exhaustive, sample",
        ),
        ('[[check]]\nop = "Tanh"\ndtypes = ["float8"]\n', "check[0].dtypes: unknown dtype 'float8'"),
        (
            '[[check]]\nop = "Celu"\n[check.attrs]\nalpha = 0\n',
            "check[0].attrs: attribute alpha=0.0 of Celu is outside",
        ),
        ('[[check]]\nop = "Tanh"\nproofs = ["convex"]\n', "check[0].proofs: Tanh declares no property 'convex'"),
        ('[[check]]\nop = "Tanh"\nmax_ulp = -1\n', "check[0].max_ulp: must be a finite number >= 0"),
        ('[[check]]\nop = "Tanh"\ntarget = "tpu"\n', "check[0].target: unknown target 'tpu'"),
        ('[[check]\nop = "Tanh"\n', "not valid TOML"),
        ("[gate]\nx = 1\n", "gate: unknown key; allowed: check"),
        ("", "no [[check]] tables"),
    ],
)
def test_configuration_errors_exit_2(cli, tmp_path, text, message):
    cfg = write(tmp_path, text)
    code, out, err = cli("gate", "--config", cfg)
    assert code == 2 and message in err and cfg in err and "Traceback" not in err


def test_tool_opcert_in_pyproject(cli, tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text(
        "[tool.opcert]\n" + PASSING.replace("[[check]]", "[[tool.opcert.check]]").replace("[tool.opcert]\n", "")
    )
    monkeypatch.chdir(tmp_path)
    code, out, _ = cli("gate", "--workers", "1")
    assert code == 0 and "pyproject.toml [tool.opcert]" in out


def test_missing_config_file(cli):
    code, _, err = cli("gate", "--config", "/nonexistent/opcert.toml")
    assert code == 2 and "no such configuration file" in err


def test_interrupted_report_write_leaves_the_previous_report(tmp_path, monkeypatch):
    from opcert import files as io

    target = tmp_path / "gate.json"
    io.write_json_atomic(str(target), {"old": True})

    def broken_replace(src, dst):
        raise KeyboardInterrupt  # the process is stopped between writing and renaming

    monkeypatch.setattr(io.os, "replace", broken_replace)
    with pytest.raises(KeyboardInterrupt):
        io.write_json_atomic(str(target), {"new": True})
    assert json.loads(target.read_text()) == {"old": True}
    assert [p.name for p in tmp_path.iterdir()] == ["gate.json"]  # no temporary left behind


def test_html_report_structure(cli, tmp_path):
    cli("gate", "--config", write(tmp_path, PASSING + FAILING), "--report", tmp_path / "rep", "--workers", "1")
    page = (tmp_path / "rep" / "report.html").read_text()
    assert page.startswith("<!doctype html>") and "id='summary'" in page and "id='verdict' class='FAIL'" in page
    assert page.count("<section class='check'") == 2
    assert page.count("<svg ") == 4  # error plot and histogram per check, inline
    assert (
        "Provenance" in page and "Reproduce:" in page and "http" not in page.split("<body>")[1].split("Provenance")[0]
    )
    md = (tmp_path / "rep" / "report.md").read_text()
    assert "| Tanh | PASS 0.5 ULP; proofs 2/2 | FAIL 0.5 ULP |" in md
    for line in md.splitlines():
        if line.startswith("!["):
            assert (tmp_path / "rep" / line.split("(")[1].rstrip(")")).exists()


def test_diff_flags_regressions(cli, tmp_path):
    good = write(tmp_path, PASSING.replace('proofs = ["range", "nan"]', ""), "good.toml")
    cli("gate", "--config", good, "--json", tmp_path / "old.json", "--workers", "1")
    worse = PASSING.replace('proofs = ["range", "nan"]', "").replace(
        'mode = "exhaustive"', 'mode = "exhaustive"\ntarget = "numpy:tanh"'
    )
    old = json.loads((tmp_path / "old.json").read_text())
    new = json.loads(json.dumps(old))
    new["checks"][0]["accuracy"]["max_ulp"] = 0.75
    new["checks"][0]["accuracy"]["nan_mismatches"] = 3
    # a file whose check still said "pass" over these figures is refused (tests/test_report_inputs.py)
    new["checks"][0]["status"], new["checks"][0]["reasons"] = "fail", ["3 NaN mismatches"]
    (tmp_path / "new.json").write_text(json.dumps(new))
    code, out, _ = cli("diff", tmp_path / "old.json", tmp_path / "new.json")
    assert code == 1 and f"max ULP error up from {old['checks'][0]['accuracy']['max_ulp']!r} to 0.75" in out
    assert "nan mismatches up" in out
    code, out, _ = cli("diff", tmp_path / "old.json", tmp_path / "old.json")
    assert code == 0 and "0 regression(s)" in out
    # the gate's --baseline: a proof lost
    base = json.loads((tmp_path / "old.json").read_text())
    base["checks"][0]["proofs"] = [{"name": "range", "status": "proved", "ok": True}]
    (tmp_path / "base.json").write_text(json.dumps(base))
    code, _, err = cli("gate", "--config", good, "--baseline", tmp_path / "base.json", "--workers", "1")
    assert code == 1 and "proof range lost" in err
    del worse
    code, _, err = cli("diff", tmp_path / "old.json", tmp_path / "nope.json")
    assert code == 2 and "no such file" in err


def test_default_config_covers_the_catalog():
    from opcert.gating import default_config

    cfg = default_config()
    cells = {(c.op, d) for c in cfg.checks for d in c.dtypes}
    from opcert.spec import binary_operators, predicate_operators, tensor_operators

    every = list(opcert.operators()) + tensor_operators() + binary_operators() + predicate_operators()
    assert cells == {(op.name, d) for op in every for d in ("float16", "bfloat16", "float32", "float64")}
    assert all(c.target == "opcert" for c in cfg.checks)
    assert all(c.mode == "exhaustive" for c in cfg.checks if set(c.dtypes) <= {"float16", "bfloat16"})
    tensor = [c for c in cfg.checks if c.op in {"Softmax", "LogSoftmax", "Hardmax"}]
    # their rows are sampled and their row properties checked on samples: accepted, and said so in each check
    assert tensor and all(c.mode == "sample" and c.accept_sampled_evidence and c.proofs_left_out for c in tensor)


def test_pytest_plugin(pytester):
    pytester.makepyfile(
        test_kernels="""
        import pytest

        def test_numpy_tanh(opcert_check):
            r = opcert_check("Tanh", "numpy:tanh", "float16", max_ulp=0.5)
            assert r.inputs_checked == 65536

        def test_too_tight(opcert_check):
            opcert_check("Tanh", "numpy:tanh", "float16", max_ulp=0.1)

        @pytest.mark.opcert(op="Shrink", target="opcert", dtype="float16", max_ulp=0.5, lambd=1.0)
        def test_marker():
            pass
    """
    )
    result = pytester.runpytest_subprocess("-q")  # the plugin loads through its pytest11 entry point
    result.assert_outcomes(passed=2, failed=1)
    import numpy as np
    from conftest import all_16bit
    from oracle import worst_ulp

    x = all_16bit("float16")
    with np.errstate(invalid="ignore"):  # tanh of the NaN inputs
        err, worst = worst_ulp("Tanh", x, np.tanh(x), {})  # MPFR's figure, not opcert's
    result.stdout.fnmatch_lines(
        [
            f"*max ULP error {err:.12g}*> budget 0.1 at x = {worst!r}*",
            "*reproduce: opcert accuracy Tanh --dtype float16 --target numpy:tanh --exhaustive*",
        ]
    )


def test_pytest_plugin_tensor_operators(pytester):
    """The plugin checks a tensor operator as the gate does (sampled rows by default, the declared row
    properties): tests/tensor_kernels.py's faulty kernels fail with the row that shows it, an attribute is
    refused by name, opcert's own Softmax passes."""
    from pathlib import Path

    pytester.makepyfile(tensor_kernels=(Path(__file__).parent / "tensor_kernels.py").read_text())
    pytester.makepyfile(
        test_rows="""
        import pytest

        def test_opcert_softmax(opcert_check):
            r = opcert_check("Softmax", "opcert", "float32", max_ulp=1.0, samples=2000)
            assert r["op"] == "Softmax" and r["elements"] > 2000 and r["max_ulp"] <= 0.5

        def test_no_max(opcert_check):
            opcert_check("Softmax", "tensor_kernels:softmax_no_max", "float16", max_ulp=1.0, samples=2000)

        def test_an_attribute_is_refused(opcert_check):
            opcert_check("Softmax", "opcert", "float32", alpha=1.0)

        @pytest.mark.opcert(op="Hardmax", target="tensor_kernels:hardmax_last", dtype="float16", proofs=["one_hot"],
                            accept_sampled_evidence=True, samples=2000)
        def test_hardmax_last():
            pass
    """
    )
    result = pytester.runpytest_subprocess("-q", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=3)
    result.stdout.fnmatch_lines_random(
        [
            "*Softmax float16 tensor_kernels:softmax_no_max*",
            "*max ULP error*",
            "*property one_hot: refuted*row*",
            "*a tensor operator has no attributes*",
            "*reproduce: opcert accuracy Hardmax --dtype float16*",
        ]
    )


def test_short_ulp_rounds_up_and_handles_infinity():
    from opcert.report.render import short_ulp

    assert [short_ulp(v) for v in (0.5000000000000001, 0.5, 0.77259, 104.0, 0.0, float("inf"), 2.3792e285)] == [
        "0.5001",
        "0.5",
        "0.7726",
        "104",
        "0",
        "inf",
        "2.380e+285",
    ]


def test_report_summary_page(cli, tmp_path):
    """`opcert report RESULT --summary FILE`: the short page `make reports` commits (reports/README.md)."""
    code, _, _ = cli(
        "gate", "--config", write(tmp_path, PASSING + FAILING), "--json", tmp_path / "g.json", "--workers", "1"
    )
    assert code == 1
    code, out, _ = cli("report", tmp_path / "g.json", "--summary", tmp_path / "s.md")
    page = (tmp_path / "s.md").read_text()
    assert code == 0 and str(tmp_path / "s.md") in out
    assert "Result: **FAIL**: 1 passed, 1 failed" in page and "## Provenance" in page
    assert "| Tanh | PASS 0.5 ULP; proofs 2/2 | FAIL 0.5 ULP |" in page
    assert (
        "### Failing checks" in page and "reproduce: `opcert accuracy Tanh --dtype float16 --target numpy:tanh" in page
    )
    assert "<svg" not in page and len(page) < 5000
    code, _, err = cli("report", tmp_path / "g.json")
    assert code == 2 and "--out DIR" in err and "--summary FILE" in err


SELECT_CONFIG = (
    '[[check]]\nop = "Relu"\ndtypes = ["float32", "float64"]\ntarget = "opcert"\nsamples = 64\n'
    "layout_samples = 16\nmax_ulp = 0.5\nproofs = []\n\n"
    '[[check]]\nop = "LeakyRelu"\ndtypes = ["float32"]\ntarget = "opcert"\nsamples = 64\n'
    "layout_samples = 16\nmax_ulp = 0.5\nproofs = []\n"
)


@pytest.mark.parametrize(
    "expr, want",
    [
        ("relu and not leaky", ["Relu float32 opcert", "Relu float64 opcert"]),
        ("LEAKY or float64", ["Relu float64 opcert", "LeakyRelu float32 opcert"]),
        ("(relu and float32) and not leaky", ["Relu float32 opcert"]),
    ],
)
def test_gate_k_runs_the_checks_whose_names_match(cli, tmp_path, expr, want):
    cfg = tmp_path / "opcert.toml"
    cfg.write_text(SELECT_CONFIG)
    code, _, err = cli("gate", "--config", cfg, "-k", expr, "--json", tmp_path / "g.json")
    assert code == 0, err
    assert [c["name"] for c in json.loads((tmp_path / "g.json").read_text())["checks"]] == want


@pytest.mark.parametrize(
    "expr, words",
    [
        ("softmax", "no check of"),
        ("relu and", "ends where a word was expected"),
        ("(relu", "'(' is not closed"),
        ("or relu", "'or' where a word was expected"),
        ("", "an empty expression"),
    ],
)
def test_gate_k_that_selects_nothing_or_does_not_parse_exits_2(cli, tmp_path, expr, words):
    cfg = tmp_path / "opcert.toml"
    cfg.write_text(SELECT_CONFIG)
    code, _, err = cli("gate", "--config", cfg, "-k", expr)
    assert code == 2 and words in err and "Traceback" not in err, err
    if words == "no check of":
        assert "Relu float32 opcert; Relu float64 opcert; LeakyRelu float32 opcert" in err


def test_the_api_gate_takes_the_same_keyword(tmp_path):
    cfg = tmp_path / "opcert.toml"
    cfg.write_text(SELECT_CONFIG)
    result = opcert.gate(str(cfg), keyword="leaky")
    assert [c["name"] for c in result.to_dict()["checks"]] == ["LeakyRelu float32 opcert"] and result.ok
