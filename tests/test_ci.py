"""A gate in CI: GitHub's job summary and one ::error annotation per failing check (report.ci)."""

import json
import os
import subprocess
import sys

from opcert.report.ci import annotations

# a failing check and a passing one; the failing kernel is wrong everywhere (-x), so that the gate's time is
# opcert's, not a slow kernel's (the exact reference per input, on the layout check's calls, took most of it)
CONFIG = (
    '[[check]]\nop = "Tanh"\ndtypes = ["float32"]\ntarget = "bad_targets:negated"\n'
    'samples = 300\nmax_ulp = 1\nproofs = []\nisolation = "none"\n\n'
    '[[check]]\nop = "Relu"\ndtypes = ["float16"]\ntarget = "opcert"\nmode = "exhaustive"\nmax_ulp = 0.5\n'
    "proofs = []\n"
)


def _gate(tmp_path, env_extra, *extra):
    cfg = tmp_path / "opcert.toml"
    cfg.write_text(CONFIG)
    env = {k: v for k, v in os.environ.items() if k not in ("GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY")}
    env.update(env_extra)
    env["PYTHONPATH"] = os.pathsep.join([os.path.dirname(__file__)] + [p for p in sys.path if p])
    return subprocess.run(
        [sys.executable, "-m", "opcert", "gate", "--config", str(cfg), *extra],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )


def test_under_github_actions_the_gate_writes_the_summary_and_annotates_each_failure(tmp_path):
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n")
    proc = _gate(
        tmp_path, {"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(summary)}, "--json", str(tmp_path / "g.json")
    )
    assert proc.returncode == 1, proc.stderr[-2000:]
    gate = json.loads((tmp_path / "g.json").read_text())
    failing = [c for c in gate["checks"] if c["status"] == "fail"]
    assert [c["op"] for c in failing] == ["Tanh"]
    text = summary.read_text()
    assert text.startswith("earlier step\n")  # appended, not overwritten
    assert "Result: **FAIL**: 1 passed, 1 failed" in text and failing[0]["command"] in text
    assert "| Relu |" in text and "| Tanh |" in text
    errors = [line for line in proc.stdout.splitlines() if line.startswith("::error")]
    assert len(errors) == 1
    assert errors[0].startswith("::error title=opcert%3A Tanh float32 ")
    assert "reproduce%3A" not in errors[0] and "%0Areproduce: " + failing[0]["command"] in errors[0]


def test_with_json_on_stdout_the_annotations_go_to_stderr(tmp_path):
    proc = _gate(tmp_path, {"GITHUB_ACTIONS": "true"}, "--json", "-")
    assert proc.returncode == 1
    json.loads(proc.stdout)  # standard output stays pure JSON
    assert sum(line.startswith("::error") for line in proc.stderr.splitlines()) == 1


def test_outside_ci_nothing_is_said_to_it(tmp_path):
    proc = _gate(tmp_path, {})
    assert proc.returncode == 1 and "::error" not in proc.stdout + proc.stderr


def test_annotation_text_is_escaped_as_github_reads_it():
    gate = {
        "checks": [
            {"status": "fail", "name": "A: b, c", "reasons": ["100% off\nnext line"], "command": "opcert accuracy A"}
        ]
    }
    (line,) = annotations(gate)
    assert line == "::error title=opcert%3A A%3A b%2C c::100%25 off%0Anext line%0Areproduce: opcert accuracy A"
