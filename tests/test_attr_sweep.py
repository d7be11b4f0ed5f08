"""Attribute sweeps: the sets, the CLI (--attr-sweep), the gate key (attr_sweep), and the
ONNX backend test values they take from the installed onnx package."""

import json
import xml.etree.ElementTree as ET

import pytest

import opcert
from opcert.spec.onnx_backend_attrs import ATTRS
from opcert.verify.accuracy.attr_sweep import F32_MAX, F32_TINY, attribute_sets

NS = "{http://www.w3.org/2000/svg}"

# The sweeps here are judged on their rows (which sets ran, which were skipped and why, the worst set), not on
# the layout verdict each set also gets: 64 inputs per layout instead of the default (test_layout tests layouts).
FEW_LAYOUT_INPUTS = ("--layout-samples", "64")


def test_the_onnx_test_values_are_those_of_the_installed_onnx():
    import sys

    sys.path.insert(0, "tools")
    try:
        from onnx_backend_attrs import extract
    finally:
        sys.path.pop(0)
    live = extract()
    assert {k: v for k, v in live.items()} == {k: v for k, v in ATTRS.items() if k in live}
    assert ATTRS["Selu"] == [{"alpha": 2.0, "gamma": 3.0}] and {"alpha": 0.5} in ATTRS["Swish"]


def test_sets_cover_defaults_of_each_standard_onnx_tests_and_a_grid():
    sets = attribute_sets("Selu")
    labels = [s.label for s in sets]
    assert "default (onnx)" in labels and "default (directml)" in labels
    assert any(s.label == "onnx test" and s.attrs == {"alpha": 2.0, "gamma": 3.0} for s in sets)
    alphas = [s.attrs["alpha"] for s in sets if s.grid == "alpha"]
    for v in (-F32_MAX, -1.0, 0.0, F32_TINY, 1e-20, 1e4, F32_MAX):
        assert v in alphas
    gelu = [s.attrs["approximate"] for s in attribute_sets("Gelu") if s.grid == "approximate"]
    assert gelu == ["none", "tanh"]


def test_a_kernel_right_only_at_the_default_is_caught(cli, tmp_path):
    out, svg = tmp_path / "s.json", tmp_path / "s.svg"
    code, _, err = cli(
        "accuracy",
        "Elu",
        "--dtype",
        "float16",
        "--target",
        "bad_targets:elu_ignores_alpha",
        "--exhaustive",
        "--attr-sweep",
        "--max-ulp",
        "1",
        "--json",
        out,
        "--plot",
        svg,
        *FEW_LAYOUT_INPUTS,
    )
    r = json.loads(out.read_text())
    default = next(row for row in r["rows"] if row["label"] == "default (onnx)")
    assert default["verdict"] == "pass" and default["max_ulp"] < 1
    assert code == 1 and r["worst"]["attrs"]["alpha"] != 1.0 and r["worst"]["verdict"] == "fail"
    assert "worst attribute set" in err and "--attr alpha=" in err
    _check_plot(svg.read_text(), r["rows"])


def _check_plot(text, rows):
    """The plot draws the sweep's rows: a panel per grid attribute, a point per set of its grid in order, each
    with its tooltip (label, attributes, max ULP, status), coloured by verdict, higher the larger its max ULP."""
    root = ET.fromstring(text)
    grids = list(dict.fromkeys(row["grid"] for row in rows if row["grid"]))
    panels = root.findall(f"{NS}g[@class='panel']")
    assert [p.get("data-attr") for p in panels] == grids == ["alpha"]
    for panel in panels:
        mine = [row for row in rows if row["grid"] == panel.get("data-attr")]
        points = [e for e in panel.iter() if (e.get("class") or "").startswith("set ")]
        assert len(points) == len(mine) == 15
        for e, row in zip(points, mine):
            status = "skipped" if row["status"] == "skipped" else row["verdict"]
            tip = e.find(NS + "title").text
            assert e.get("class") == f"set {status}", (tip, row)
            assert tip.startswith(row["label"] + ": ") and f"max ULP {row.get('max_ulp')!r}; {status}" in tip, tip
            assert all(f"{k}={v:.9g}" in tip for k, v in row["attrs"].items()), tip
        drawn = sorted((row["max_ulp"], float(e.get("cy"))) for e, row in zip(points, mine) if e.tag == NS + "circle")
        assert [cy for _, cy in drawn] == sorted((cy for _, cy in drawn), reverse=True)
    assert "budget 1" in text  # --max-ulp 1


def test_plot_takes_only_an_svg_name(cli, tmp_path):
    code, _, err = cli("accuracy", "Elu", "--dtype", "float16", "--attr-sweep", "--plot", tmp_path / "s.png")
    assert code == 2 and "--plot" in err and "allowed is a file name ending in .svg" in err
    assert not (tmp_path / "s.png").exists()


def test_values_outside_the_domain_and_unsupported_sets_are_skipped_with_reasons(cli, tmp_path):
    out = tmp_path / "s.json"
    # sampled: docs/gating.md's example sweeps Celu's attribute grid on every float16 input (tests/test_docs.py)
    code, _, err = cli(
        "accuracy", "Celu", "--dtype", "float16", "--attr-sweep", "--samples", "4096", "--json", out, *FEW_LAYOUT_INPUTS
    )
    rows = json.loads(out.read_text())["rows"]
    zero = next(r for r in rows if r["grid"] == "alpha" and r["attrs"]["alpha"] == 0.0)
    assert zero["status"] == "skipped" and "outside its domain" in zero["reason"]
    assert code == 0 and all(r.get("verdict") == "pass" for r in rows if r["status"] == "ok")
    code, _, err = cli(
        "accuracy",
        "HardSigmoid",
        "--dtype",
        "float16",
        "--target",
        "torch",
        "--samples",
        "2048",
        "--attr-sweep",
        "--json",
        out,
        *FEW_LAYOUT_INPUTS,
    )
    rows = json.loads(out.read_text())["rows"]
    ran = [r for r in rows if r["status"] == "ok"]
    assert len(ran) == 1 and ran[0]["attrs"] == {"alpha": 0.1666666716337204, "beta": 0.5}
    assert all("hardsigmoid is HardSigmoid with alpha = 1/6" in r["reason"] for r in rows if r["status"] == "skipped")


def test_gate_attr_sweep_expands_into_one_check_per_set(cli, tmp_path):
    cfg = tmp_path / "g.toml"
    cfg.write_text(
        '[[check]]\nop = "Elu"\ndtypes = ["float16"]\nmode = "exhaustive"\nmax_ulp = 1\n'
        'target = "bad_targets:elu_ignores_alpha"\nattr_sweep = true\nproofs = ["monotonic"]\nlayout_samples = 64\n'
    )
    code, out, _ = cli("gate", "--config", cfg, "--json", tmp_path / "g.json", "--workers", "2")
    checks = json.loads((tmp_path / "g.json").read_text())["checks"]
    n = len([s for s in attribute_sets("Elu") if _in_domain("Elu", s.attrs)])
    assert code == 1 and len(checks) == n
    passed = [c for c in checks if c["status"] == "pass"]
    assert passed and all(c["attrs"] == {"alpha": 1.0} and "alpha=1.0]" in c["name"] for c in passed), passed


def _in_domain(op, attrs):
    from opcert.errors import UsageError
    from opcert.spec.attrs import resolve

    try:
        resolve(opcert.get_operator(op), attrs)
        return True
    except UsageError:
        return False


@pytest.mark.parametrize(
    "line,message",
    [
        ("attr_sweep = 1", "attr_sweep: must be true or false"),
        ("attr_sweep = true\n[check.attrs]\nalpha = 2.0", "give no [check.attrs] with it"),
    ],
)
def test_bad_attr_sweep_configurations_exit_2(cli, tmp_path, line, message):
    cfg = tmp_path / "g.toml"
    cfg.write_text('[[check]]\nop = "Elu"\ndtypes = ["float16"]\n' + line + "\n")
    code, _, err = cli("gate", "--config", cfg)
    assert code == 2 and message in err


def test_cli_refuses_attr_with_attr_sweep(cli):
    code, _, err = cli("accuracy", "Elu", "--dtype", "float16", "--attr-sweep", "--attr", "alpha=2")
    assert code == 2 and "give no --attr with it" in err
    code, _, err = cli("accuracy", "Tanh", "--dtype", "float16", "--attr-sweep")
    assert code == 2 and "no attributes" in err
