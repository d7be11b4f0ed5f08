"""Properties of any target (issue 9): complete checks over every 16-bit and
float32 input, samples for float64, and a gate that passes only what it established."""
import json

import numpy as np
import pytest

from opcert.verify.accuracy import measure

MONO = """
[[check]]
op = "Tanh"
dtypes = ["float16"]
target = "bad_targets:tanh_not_monotone"
mode = "exhaustive"
max_ulp = 3
proofs = ["monotonic", "range"]
"""


def by_name(result) -> dict:
    return {p["name"]: p for p in result.properties}


def test_a_kernel_within_budget_but_not_monotone_fails_the_gate(cli, tmp_path):
    cfg = tmp_path / "g.toml"
    cfg.write_text(MONO)
    code, out, _ = cli("gate", "--config", cfg, "--json", tmp_path / "g.json", "--junit", tmp_path / "j.xml",
                       "--workers", "1")
    g = json.loads((tmp_path / "g.json").read_text())
    (c,) = g["checks"]
    assert code == 1 and c["accuracy"]["max_ulp"] < 3          # within its ULP budget ...
    (why,) = [r for r in c["reasons"] if r.startswith("property monotonic")]
    # ... and the failure names the adjacent pair with both outputs
    assert "x1 = 0.5 (0x3800) -> 0.46240234375 (0x3766)" in why and "x2 = 0.50048828125 (0x3801) -> " \
        "0.4619140625 (0x3764)" in why
    assert "property monotonic: refuted" in (tmp_path / "j.xml").read_text()


def test_a_kernel_outside_its_range_fails_with_the_input(cli, tmp_path):
    cfg = tmp_path / "g.toml"
    cfg.write_text(MONO.replace("tanh_not_monotone", "tanh_out_of_range").replace("max_ulp = 3", "max_ulp = 1e9"))
    code, out, _ = cli("gate", "--config", cfg, "--workers", "1")
    assert code == 1 and "property range: refuted by 1 input" in out and "-1.0009765625 (0xbc01)" in out


def test_numpy_tanh_float16_has_every_property_proved_by_enumeration(cli, tmp_path):
    cfg = tmp_path / "g.toml"
    cfg.write_text('[[check]]\nop = "Tanh"\ndtypes = ["float16"]\ntarget = "numpy:tanh"\nmode = "exhaustive"\n'
                   'max_ulp = 0.5\nproofs = "all"\n')
    code, out, _ = cli("gate", "--config", cfg, "--json", tmp_path / "g.json", "--workers", "1")
    (c,) = json.loads((tmp_path / "g.json").read_text())["checks"]
    assert code == 0 and {p["name"] for p in c["proofs"]} == {"range", "monotonic", "odd", "zero", "nan", "limits"}
    assert all(p["status"] == "proved" and "every input enumerated on target numpy:tanh" in p["method"]
               for p in c["proofs"])


def test_hard_sigmoid_without_its_upper_clamp_is_a_finding_not_a_crash(cli):
    code, out, err = cli("accuracy", "HardSigmoid", "--dtype", "float16", "--target",
                         "bad_targets:hard_sigmoid_no_upper_clamp", "--exhaustive")
    assert code == 1 and "worst input" in out and "inf (0x7c00)" in out
    assert "property range refuted" in out and "property limits refuted" in out
    assert "refuted on bad_targets:hard_sigmoid_no_upper_clamp: range, saturated_low, saturated_high, limits" in err


def test_an_in_place_kernel_is_measured_on_what_it_was_given():
    r = measure("Tanh", "bad_targets:tanh_in_place", "float16", "exhaustive")
    assert r.correctly_rounded == 65536 and r.max_ulp <= 0.5 and r.target_modified_input
    assert all(p["status"] == "proved" for p in r.properties)


@pytest.mark.parametrize("kernel,where", [
    ("wrong_at_inf", "limits"), ("wrong_at_negative_zero", "odd"), ("wrong_at_subnormals", "monotonic"),
    ("wrong_at_nan", "nan"), ("wrong_at_largest", "range"), ("returns_nan_payloads", None)])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_kernels_wrong_only_at_special_inputs_are_reported(kernel, where, dtype):
    r = measure("Tanh", f"bad_targets:{kernel}", dtype, "exhaustive")
    assert r.status == "ok" and r.worst_reverified is not None
    props = by_name(r)
    if where is None:      # another NaN payload is still NaN: nothing wrong
        assert all(p["status"] == "proved" for p in props.values()) and r.nan_mismatches == 0
        return
    p = props[where]
    assert p["status"] == "refuted" and p["counterexample"]["replayed"] is True
    assert p["counterexample"]["reference"] and p["violations"] >= 1


def test_float64_properties_are_checked_not_proved(cli, tmp_path):
    r = measure("Tanh", "numpy:tanh", "float64", "sample", samples=4000)
    props = by_name(r)
    assert props["monotonic"]["status"] == "checked" and "evidence, not a proof" in props["monotonic"]["method"]
    assert props["odd"]["inputs_checked"] > 1000
    base = '[[check]]\nop = "Tanh"\ndtypes = ["float64"]\ntarget = "numpy:tanh"\nsamples = 4000\nmax_ulp = 1\n' \
           'proofs = ["monotonic"]\n'
    cfg = tmp_path / "g.toml"
    cfg.write_text(base)
    code, out, _ = cli("gate", "--config", cfg, "--workers", "1")
    assert code == 1 and "a sample is not a proof" in out
    cfg.write_text(base + "accept_sampled_evidence = true\n")
    code, out, _ = cli("gate", "--config", cfg, "--workers", "1")
    assert code == 0


def test_a_refuted_float64_property_has_its_counterexample():
    r = measure("Tanh", "bad_targets:negated", "float64", "sample", samples=2000)
    mono = by_name(r)["monotonic"]
    assert mono["status"] == "refuted" and mono["worst"]["magnitude"] > 0


SPAN = (0x3F000000, 0x3F010000)     # magnitudes; chunks of 2**15 in these tests: the edge is 0x3f008000


def test_float32_sweep_checks_properties_across_chunks_and_signs(tmp_path):
    from opcert.targets import describe_target
    from opcert.verify.sweep import SweepConfig, sweep
    for kernel, name in (("tanh_step_back_at_chunk_edge", "monotonic"), ("tanh_not_odd_at_one_point", "odd")):
        t = f"bad_targets:{kernel}"
        cfg = SweepConfig("Tanh", t, (), None, *SPAN, chunk=1 << 15, target_fingerprint=describe_target(t).fingerprint,
                          properties=("range", "monotonic", "odd"))
        _, checker, _ = sweep(cfg, workers=2, checkpoint=tmp_path / kernel)
        acc = checker.acc
        assert acc[name].violations >= 1, kernel
        assert acc["range"].violations == 0


def test_float32_sweep_reports_the_pair_across_a_chunk_boundary(tmp_path):
    r = measure("Tanh", "bad_targets:tanh_step_back_at_chunk_edge", "float32", "exhaustive",
                magnitude_range=SPAN, workers=2, checkpoint=tmp_path / "c")
    mono = by_name(r)["monotonic"]
    assert mono["status"] == "refuted" and mono["violations"] == 1
    ce = mono["counterexample"]
    assert ce["inputs"]["x1"]["bits"] == "0x3f007fff" and ce["inputs"]["x2"]["bits"] == "0x3f008000"
    assert ce["outputs"]["f(x1)"]["value"] == pytest.approx(0.47)


def test_a_partial_float32_range_is_checked_not_proved(tmp_path):
    r = measure("Tanh", "numpy:tanh", "float32", "exhaustive", magnitude_range=SPAN, workers=1,
                checkpoint=tmp_path / "c")
    assert {p["status"] for p in r.properties} <= {"checked", "skipped"}


def test_black_box_enumeration_agrees_with_the_proofs_of_opcert():
    import opcert
    black = opcert.prove("Tanh", "float16", target="bad_targets:opcert_tanh")
    white = opcert.prove("Tanh", "float16")
    assert black.ok and white.ok
    assert {p.name: p.status for p in black.properties} == {p.name: p.status for p in white.properties}


def test_prove_with_a_target_needs_a_dtype(cli):
    code, _, err = cli("prove", "Tanh", "--target", "numpy:tanh")
    assert code == 2 and "--target needs --dtype" in err


def test_prove_with_a_target_prints_and_writes_verdicts(cli, tmp_path):
    code, out, _ = cli("prove", "Tanh", "--dtype", "float16", "--target", "bad_targets:tanh_not_monotone",
                       "--json", tmp_path / "p.json")
    data = json.loads((tmp_path / "p.json").read_text())
    (rep,) = data["reports"]
    assert code == 1 and rep["target"] == "bad_targets:tanh_not_monotone"
    statuses = {p["name"]: p["status"] for p in rep["properties"]}
    assert statuses["monotonic"] == "refuted" and statuses["range"] == "proved"
    assert "1 of 63,489 violate it" in out
