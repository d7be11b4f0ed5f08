"""Forged, nested and hostile inputs of the reports (issue 50, "Reports and files").

`opcert report` and `opcert diff` read a gate result as evidence: a check whose status its figures contradict
is refused (exit 2, naming the check and the field), as are figures that are NaN, infinite or negative, a
schema this opcert does not write, and nesting beyond report.validate.MAX_DEPTH. Text that comes from a target
(an exception message) is escaped in Markdown, HTML, JUnit and the CI log, and clipped at 2,000 characters
with a note. A target that hangs while it is being loaded fails within its check's target_timeout.
"""

import json
import time
import xml.etree.ElementTree as ET

import pytest

LIMIT = 2000  # the documented clip of one text from a target
HOSTILE = "::error::pwned\n| a | b |\n|:-|:-|\n<script>alert(1)</script> [link](http://evil.example) `x`"


def _gate(**check_overrides) -> dict:
    """A small, consistent gate result: one passing Tanh float16 check with one required, proved property."""
    acc = {
        "op": "Tanh",
        "dtype": "float16",
        "target": "kernels:tanh",
        "standard": "onnx",
        "attrs": {},
        "inputs_checked": 100,
        "exhaustive": False,
        "mode": "sample",
        "max_ulp": 0.25,
        "max_ulp_distance": 0,
        "worst_input": 0.5,
        "worst_input_bits": "0x3800",
        "worst_output": 0.46215,
        "worst_output_bits": "0x3765",
        "worst_reference": 0.46215,
        "worst_reference_bits": "0x3765",
        "worst_exact": "0.4621171572600097",
        "histogram": {"0": 60, "(0, 0.5]": 40},
        "correctly_rounded": 100,
        "nan_mismatches": 0,
        "inf_mismatches": 0,
        "signed_zero_mismatches": 0,
        "subnormal_flushes": 0,
        "examples": {},
        "properties": [],
        "status": "ok",
        "error": None,
        "elapsed_s": 0.5,
        "command": "opcert accuracy Tanh --dtype float16 --target kernels:tanh --samples 100 --seed 0",
        "notes": [],
    }
    check = {
        "key": "k0",
        "identity": {"op": "Tanh"},
        "name": "Tanh float16 kernels:tanh",
        "op": "Tanh",
        "dtype": "float16",
        "target": "kernels:tanh",
        "mode": "sample",
        "attrs": {},
        "standard": None,
        "policy": {
            "max_ulp": 1.0,
            "signed_zero": "strict",
            "subnormals": "strict",
            "proofs": ["monotonic"],
            "accept_sampled_evidence": False,
            "proofs_left_out": [],
        },
        "status": "pass",
        "reasons": [],
        "command": acc["command"] + " --max-ulp 1.0 --require monotonic",
        "elapsed_s": 0.6,
        "accuracy": acc,
        "proofs": [{"name": "monotonic", "status": "proved", "ok": True, "method": "enumeration", "elapsed_s": 0.1}],
        "proof_note": None,
    }
    for k, v in check_overrides.items():
        check[k] = v
    return {
        "schema": "opcert.gate/1",
        "opcert": "0",
        "config": "opcert.toml",
        "ok": True,
        "counts": {"pass": 1, "fail": 0, "skipped": 0},
        "verdict_note": None,
        "elapsed_s": 1.0,
        "command": "opcert gate",
        "provenance": {},
        "checks": [check],
    }


def _write(tmp_path, data, name="g.json") -> str:
    p = tmp_path / name
    p.write_text(data if isinstance(data, str) else json.dumps(data))
    return str(p)


def _refused(cli, tmp_path, path, *wanted):
    """report, and diff with the file on either side: exit 2, one line naming what is wrong, no traceback."""
    good = _write(tmp_path, _gate(), "good.json")
    for args in (("report", path, "--out", tmp_path / "out"), ("diff", good, path), ("diff", path, good)):
        code, out, err = cli(*args)
        assert code == 2, (args, code, err[-500:])
        assert "Traceback" not in err and path in err
        for w in wanted:
            assert w in err, (w, err[:2000])
    return err


def test_the_schemas_read_are_the_one_written():
    from opcert.gating.run import SCHEMA
    from opcert.report.validate import SCHEMAS

    assert SCHEMAS == (SCHEMA,)


def test_an_honest_file_is_rendered(cli, tmp_path):
    path = _write(tmp_path, _gate())
    code, _, err = cli("report", path, "--out", tmp_path / "out")
    assert code == 0, err
    assert "Result: **PASS**" in (tmp_path / "out" / "report.md").read_text()
    code, out, _ = cli("diff", path, path)
    assert code == 0 and "0 regression(s)" in out


def test_a_pass_over_the_budget_is_refused(cli, tmp_path):
    c = _gate()["checks"][0]
    c["accuracy"]["max_ulp"] = 5000.0  # the budget is 1.0; the status still says pass
    err = _refused(
        cli,
        tmp_path,
        _write(tmp_path, _gate(accuracy=c["accuracy"])),
        "checks[0].status",
        "'pass'",
        "'fail'",
        "5000.0 > budget 1.0",
        "Tanh float16 kernels:tanh",
    )
    assert "inconsistent" in err


def test_a_pass_with_a_refuted_required_proof_is_refused(cli, tmp_path):
    proofs = [{"name": "monotonic", "status": "refuted", "ok": False, "method": "enumeration"}]
    _refused(cli, tmp_path, _write(tmp_path, _gate(proofs=proofs)), "checks[0].status", "property monotonic: refuted")
    # the same verdict said to be ok
    proofs = [{"name": "monotonic", "status": "refuted", "ok": True, "method": "enumeration"}]
    _refused(cli, tmp_path, _write(tmp_path, _gate(proofs=proofs)), "checks[0].proofs[0].ok")
    # a required property without a verdict
    _refused(cli, tmp_path, _write(tmp_path, _gate(proofs=[])), "checks[0].status", "property monotonic: no verdict")


def test_other_forged_statuses_are_refused(cli, tmp_path):
    acc = _gate()["checks"][0]["accuracy"]
    _refused(
        cli,
        tmp_path,
        _write(tmp_path, _gate(accuracy={**acc, "nan_mismatches": 3})),
        "checks[0].status",
        "3 NaN mismatches",
    )
    # a failing check said to be skipped would leave the gate's verdict a pass
    _refused(
        cli,
        tmp_path,
        _write(tmp_path, _gate(status="skipped", accuracy={**acc, "max_ulp": 7.0})),
        "checks[0].status",
        "'skipped'",
    )
    # a pass with no measurement at all
    _refused(cli, tmp_path, _write(tmp_path, _gate(accuracy=None)), "checks[0].status", "accuracy is null")
    # a skip over figures that pass claims less than they show: it stands
    code, _, err = cli("report", _write(tmp_path, _gate(status="skipped", reasons=["why"])), "--out", tmp_path / "o1")
    assert code == 0, err
    # a recorded failure stands: it opens nothing
    code, _, err = cli(
        "report", _write(tmp_path, _gate(status="fail", reasons=["worker lost"])), "--out", tmp_path / "o2"
    )
    assert code == 0, err


@pytest.mark.parametrize(
    "where, value",
    [
        (("accuracy", "max_ulp"), float("nan")),
        (("accuracy", "max_ulp"), float("-inf")),
        (("accuracy", "max_ulp"), -1.0),
        (("policy", "max_ulp"), float("nan")),
        (("policy", "max_ulp"), -0.5),
        (("accuracy", "nan_mismatches"), -1),
        (("accuracy", "inputs_checked"), -100),
        (("accuracy", "elapsed_s"), float("-inf")),
        (("elapsed_s",), float("nan")),
        (("elapsed_s",), -2.0),
        (("proofs", 0, "elapsed_s"), float("nan")),
    ],
)
def test_nan_infinite_and_negative_figures_are_refused(cli, tmp_path, where, value):
    data = _gate()
    obj = data["checks"][0]
    for k in where[:-1]:
        obj = obj[k]
    obj[where[-1]] = value
    field = "checks[0]." + ".".join(f"[{k}]" if isinstance(k, int) else k for k in where).replace(".[", "[")
    err = _refused(cli, tmp_path, _write(tmp_path, data), field + ":")
    assert "finite number >= 0" in err or "non-negative integer" in err


def test_the_gate_elapsed_time_is_a_figure_too(cli, tmp_path):
    data = _gate()
    data["elapsed_s"] = float("nan")
    _refused(cli, tmp_path, _write(tmp_path, data), "gate.elapsed_s:")


def test_an_unknown_schema_is_refused(cli, tmp_path):
    data = _gate()
    data["schema"] = "opcert.gate/99"
    _refused(cli, tmp_path, _write(tmp_path, data), "schema", "opcert.gate/99", "allowed: opcert.gate/1")


def test_deep_nesting_is_refused(cli, tmp_path):
    n = 100_000
    _refused(cli, tmp_path, _write(tmp_path, "[" * n + "]" * n, "deep.json"), "nested deeper than 64 levels")
    _refused(cli, tmp_path, _write(tmp_path, '{"a":' * n + "1" + "}" * n, "deep2.json"), "nested deeper than 64")
    # inside a gate result, shallow enough for the parser: refused with where it goes too deep
    data = _gate()
    nested = []
    for _ in range(100):
        nested = [nested]
    data["checks"][0]["accuracy"]["notes"] = nested
    _refused(
        cli, tmp_path, _write(tmp_path, data, "deep3.json"), "$.checks[0].accuracy.notes[0][0]", "nested deeper than 64"
    )


def _assert_markdown_escaped(md: str, text: str) -> None:
    """No line of the text starts a Markdown line (a table, a heading), and its HTML, links and code are
    escaped."""
    first = text.split("\n")[0]
    for line in text.split("\n")[1:]:
        assert not any(m.startswith(line) for m in md.splitlines()), line
    assert first in md
    assert "<script>" not in md and "\\<script\\>" in md
    assert "[link](" not in md and "\\[link\\]" in md and "http:\\/\\/evil" in md


def test_target_text_is_escaped_in_every_output(cli, tmp_path):
    """A hand-made failing result whose reasons, name and notes hold hostile text."""
    from opcert.report.ci import annotations, step_summary
    from opcert.report.junit import junit_xml

    acc = {**_gate()["checks"][0]["accuracy"], "max_ulp": 7.0, "notes": [HOSTILE]}
    data = _gate(status="fail", accuracy=acc, reasons=["target crashed: " + HOSTILE])
    path = _write(tmp_path, data)
    code, _, err = cli("report", path, "--out", tmp_path / "out", "--summary", tmp_path / "s.md")
    assert code == 0, err
    for md in ((tmp_path / "out" / "report.md").read_text(), (tmp_path / "s.md").read_text(), step_summary(data)):
        _assert_markdown_escaped(md, HOSTILE)
    page = (tmp_path / "out" / "report.html").read_text()
    assert "<script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    root = ET.fromstring(junit_xml(data).split("\n", 1)[1])
    (failure,) = root.iter("failure")
    assert ("target crashed: " + HOSTILE) in failure.text and not list(failure)  # text, not elements
    (line,) = annotations(data)
    assert "\n" not in line and "::error::pwned%0A| a | b |" in line


def test_a_huge_text_is_clipped_with_a_note(cli, tmp_path):
    from opcert.report.ci import annotations
    from opcert.report.junit import junit_xml

    big = "B" * 10_000_000
    data = _gate(status="fail", reasons=[big])
    path = _write(tmp_path, data)
    code, _, err = cli("report", path, "--out", tmp_path / "out")
    assert code == 0, err
    note = f"({len(big) - LIMIT:,} characters left out)"
    for text in (
        (tmp_path / "out" / "report.md").read_text(),
        (tmp_path / "out" / "report.html").read_text(),
        junit_xml(data),
    ):
        assert note in text and len(text) < 100_000
    assert all(len(a) < 10_000 for a in annotations(data))


HOSTILE_MODULE = f"""
import numpy as np

def crash(x):
    raise RuntimeError({HOSTILE!r})

def crash_mid_line(x):
    raise RuntimeError("begins\\n   ::error::pwned2\\n::warning::x")

def huge(x):
    raise RuntimeError("C" * 10_000_000)
"""


def test_a_gate_escapes_a_target_exception_everywhere(cli, tmp_path, monkeypatch):
    """A live gate under GitHub Actions: the target's exception text never becomes a workflow command in the
    log, nor markup in report.md, the job summary, report.html or the JUnit file; a 10 MB message is clipped."""
    (tmp_path / "rpt_hostile_kernels.py").write_text(HOSTILE_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    checks = "".join(
        f'[[check]]\nop = "Tanh"\ndtypes = ["float16"]\ntarget = "rpt_hostile_kernels:{f}"\n'
        f"samples = 50\nproofs = []\n\n"
        for f in ("crash", "crash_mid_line", "huge")
    )
    cfg = _write(tmp_path, checks, "opcert.toml")
    code, out, err = cli(
        "gate",
        "--config",
        cfg,
        "--workers",
        "1",
        "--json",
        tmp_path / "g.json",
        "--junit",
        tmp_path / "j.xml",
        "--report",
        tmp_path / "rep",
    )
    assert code == 1, err[-2000:]
    log = out + err
    commands = [line for line in log.splitlines() if line.lstrip().startswith("::")]
    assert len(commands) == 3 and all(
        c.startswith("::error title=opcert%3A Tanh float16 rpt_hostile_kernels") for c in commands
    ), commands
    assert len(log) < 60_000  # three 2,000-character reasons, twice, and the tables
    gate = json.loads((tmp_path / "g.json").read_text())
    assert [c["status"] for c in gate["checks"]] == ["fail"] * 3
    for md in ((tmp_path / "rep" / "report.md").read_text(), summary.read_text()):
        _assert_markdown_escaped(md, HOSTILE)
        assert "characters left out" in md and len(md) < 60_000
    page = (tmp_path / "rep" / "report.html").read_text()
    assert "<script>" not in page and "&lt;script&gt;" in page and len(page) < 100_000
    root = ET.parse(tmp_path / "j.xml").getroot()
    texts = [f.text for f in root.iter("failure")]
    assert HOSTILE in texts[0] and "characters left out" in texts[2]
    # the result reads back: report and diff judge its statuses again and agree
    code, _, err = cli("report", tmp_path / "g.json", "--out", tmp_path / "again")
    assert code == 0, err


def test_a_target_that_hangs_while_loading_fails_within_its_timeout(cli, tmp_path, monkeypatch):
    (tmp_path / "rpt_slow_import.py").write_text("import time\ntime.sleep(60)\n\ndef f(x):\n    return x\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    cfg = _write(
        tmp_path,
        '[[check]]\nop = "Tanh"\ndtypes = ["float16"]\ntarget = "rpt_slow_import:f"\n'
        "samples = 50\nproofs = []\ntarget_timeout = 2\n",
        "opcert.toml",
    )
    t0 = time.monotonic()
    code, out, err = cli("gate", "--config", cfg, "--workers", "1", "--json", tmp_path / "g.json")
    elapsed = time.monotonic() - t0
    assert code == 1 and elapsed < 30, (code, elapsed, err[-1000:])
    (check,) = json.loads((tmp_path / "g.json").read_text())["checks"]
    assert check["status"] == "fail"
    assert (
        "did not return within 2 s" in check["reasons"][0] and "loading target rpt_slow_import:f" in check["reasons"][0]
    )


def test_markdown_code_spans_hold_backticks():
    from opcert.report.text import md_code

    assert md_code("a`b") == "``a`b``" and md_code("`x`") == "`` `x` ``"
    assert md_code("p\nq") == "`p q`"


def test_log_text_never_starts_a_line_with_a_command():
    from opcert.report.text import log

    text = log("::error::a\n  ::warning::b\r\n::c")
    assert all(not line.lstrip().startswith("::") for line in text.splitlines())
    assert text.count("\n") == 2


def test_opcert_accuracy_clips_and_neutralises_a_target_exception(cli, tmp_path, monkeypatch):
    (tmp_path / "rpt_huge_error.py").write_text(
        'def f(x):\n    raise RuntimeError("Z" * 10_000_000 + "\\n::error::x")\n'
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    code, out, err = cli("accuracy", "Tanh", "--dtype", "float16", "--target", "rpt_huge_error:f", "--samples", "50")
    assert code == 1 and "characters left out" in out + err and len(out + err) < 30_000
    assert not [line for line in (out + err).splitlines() if line.lstrip().startswith("::")]
