"""ISA levels compared bit for bit (opcert.isa): `--isa all` and the gate's isa key run the check at every
level the host has, and the levels' outputs on the same inputs are compared with each other; where two levels
differ, the layout property is refuted with an input replayed at both levels and both levels' outputs.

The expected values come from outside opcert: the levels' outputs computed here in processes of our own with
the library's switch set, and the reference from math.erf rounded to float16."""

import importlib.util
import json
import math
import os
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

from opcert.isa import levels

# found, not imported: collecting the suite loads no multithreaded runtime (tests/test_layers.py)
has_torch = importlib.util.find_spec("torch") is not None

FAST = ["--samples", "64", "--layout-samples", "16", "--in-process"]  # each level's own measurement: small

ERF_AT_LEVEL = textwrap.dedent("""
    import sys, numpy as np, torch
    x = np.arange(65536, dtype=np.uint16).view(np.float16)
    np.save(sys.argv[1], torch.erf(torch.from_numpy(x.copy())).numpy().view(np.uint16))
    print(torch.backends.cpu.get_cpu_capability())
""")

LEVEL_MODULE = textwrap.dedent('''
    import numpy as np

    def relu64(x):
        """Relu in binary64, rounded: the same bits whatever NumPy dispatches for."""
        return np.maximum(x.astype(np.float64), 0.0).astype(x.dtype)

    def relu_v4_high(x):
        """Relu whose x86-64-v4 path (NumPy's X86_V4 dispatch on) is one ULP high above 1."""
        from numpy._core._multiarray_umath import __cpu_features__
        y = np.maximum(x.astype(np.float64), 0.0).astype(x.dtype)
        if __cpu_features__.get("X86_V4"):
            big = np.isfinite(y) & (y > 1)
            y[big] = np.nextafter(y[big], np.inf)
        return y
''')


def _bits(value: float) -> int:
    return int(np.array([value], np.float16).view(np.uint16)[0])


def _each_level_is_its_own_result(doc, stderr: str) -> None:
    """Each level ran in its own environment and measured inputs; the closing line says, per level, what its
    JSON result says (and nothing empty between)."""
    for lv in doc["levels"]:
        isa = lv["result"]["target_info"]["details"]["isa"]
        assert f"ATEN_CPU_CAPABILITY={lv['environment']['ATEN_CPU_CAPABILITY']}" in isa
        assert lv["result"]["inputs_checked"] > 0
    summary = next(line for line in stderr.splitlines() if " ISA level(s): " in line)
    for lv in doc["levels"]:
        r = lv["result"]
        said = [f"max ULP {r['max_ulp']!r}"] + [
            f"{p['name']} refuted" for p in r["properties"] if p["status"] == "refuted"
        ]
        assert f"{lv['level']}: {', '.join(said)}" in summary, summary
    assert ", ;" not in summary and not summary.rstrip().endswith(","), summary


# The slow run's: every torch level in a process of its own, twice (17-25 s on 2 cores); CI keeps the level
# comparison and its replay through NumPy's dispatch levels below (a callable, and the gate's path)
@pytest.mark.slow
@pytest.mark.skipif(not has_torch, reason="torch is not installed (opcert[torch])")
def test_torch_float16_erf_is_refuted_across_isa_levels_with_a_replayed_input(tmp_path):
    want = levels("torch")
    if len(want) < 2:
        pytest.skip(f"this host has one torch ISA level ({want[0][0]}): nothing to compare")
    t0 = time.perf_counter()
    # the levels' outputs, computed outside opcert, at the same time as opcert runs
    mine = {
        name: subprocess.Popen(
            [sys.executable, "-c", ERF_AT_LEVEL, str(tmp_path / f"{name}.npy")],
            env=dict(os.environ, **env),
            stdout=subprocess.PIPE,
            text=True,
        )
        for name, env in want
    }
    out = tmp_path / "isa.json"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "opcert",
            "accuracy",
            "Erf",
            "--dtype",
            "float16",
            "--target",
            "torch",
            "--isa",
            "all",
            *FAST,
            "--json",
            str(out),
        ],
        capture_output=True,
        text=True,
    )
    reported = {name: p.communicate()[0].strip() for name, p in mine.items()}
    ys = {name: np.load(tmp_path / f"{name}.npy") for name in mine}
    assert reported["default"] == "DEFAULT"
    assert proc.returncode in (0, 1), proc.stderr[-3000:]
    doc = json.loads(out.read_text())
    _each_level_is_its_own_result(doc, proc.stderr)
    x = np.arange(65536, dtype=np.uint16).view(np.float16)

    def differ(a, b):
        return (ys[a] != ys[b]) & ~(np.isnan(ys[a].view(np.float16)) & np.isnan(ys[b].view(np.float16)))

    pairs = {(a, b): int(differ(a, b).sum()) for i, (a, _) in enumerate(want) for b, _ in want[i + 1 :]}
    if not any(pairs.values()):
        pytest.skip(f"torch's float16 erf gives the same bits at every level on this host: {pairs}")

    assert proc.returncode == 1, proc.stderr[-3000:]
    cmp = doc["comparison"]
    assert cmp["levels"] == [n for n, _ in want]
    assert cmp["scope"] == "every float16 input (65,536)" and cmp["inputs"] == 65536 and cmp["complete"]
    assert {tuple(p["levels"]): p["differ"] for p in cmp["pairs"]} == pairs
    assert cmp["differ"] == int(np.any([differ(a, b) for a, b in pairs], axis=0).sum())
    # the counterexample: an input where two levels differ, their outputs as computed here, replayed
    ce = cmp["counterexample"]
    a, b = (lv["level"] for lv in ce["levels"])
    k = int(ce["inputs"]["x"]["bits"], 16)
    assert differ(a, b)[k]
    for lv in ce["levels"]:
        assert int(lv["output"]["bits"], 16) == ys[lv["level"]][k]
        assert lv["replayed"] == lv["output"]  # run again at that level, in a fresh process
        assert lv["environment"] == {"ATEN_CPU_CAPABILITY": lv["level"]}
        assert lv["dispatched"].endswith(reported[lv["level"]])
    assert ce["replayed"] is True and "run again at" in ce["replay"]
    assert int(ce["reference"]["f(x)"]["bits"], 16) == _bits(math.erf(float(x[k])))
    assert ce["outputs"]["f(x)"] == ce["levels"][1]["output"] and ce["base"]["output"] == ce["levels"][0]["output"]
    # the layout property of the levels together is refuted by it; each level's own figures stay
    lay = doc["properties"][0]
    assert lay["kind"] == "layout" and lay["status"] == "refuted" and lay["counterexample"] == ce
    fam = next(f for f in lay["layouts"] if f["family"] == "isa levels")
    assert fam["differ"] == cmp["differ"] and fam["complete"]
    assert [lv["level"] for lv in doc["levels"]] == [n for n, _ in want]
    assert all(lv["result"]["inputs_checked"] > 0 for lv in doc["levels"])
    assert "layout refuted across ISA levels: x = " in proc.stderr and f"ISA level {a}" in proc.stderr
    print(f"torch float16 Erf: {pairs}; {time.perf_counter() - t0:.1f} s")


def _level_module(tmp_path, monkeypatch):
    (tmp_path / "isa_level_targets.py").write_text(LEVEL_MODULE)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")]))
    want = levels("isa_level_targets:relu64")
    if len(want) < 2:
        pytest.skip(f"NumPy has one dispatch level on this host ({want[0][0]}): nothing to compare")
    return want


def test_a_numpy_callable_with_the_same_bits_at_every_level_is_not_refuted_across_levels(tmp_path, monkeypatch):
    want = _level_module(tmp_path, monkeypatch)
    out = tmp_path / "isa.json"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "opcert",
            "accuracy",
            "Relu",
            "--dtype",
            "float16",
            "--target",
            "isa_level_targets:relu64",
            "--isa",
            "all",
            *FAST,
            "--json",
            str(out),
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode in (0, 1), proc.stderr[-3000:]
    doc = json.loads(out.read_text())
    cmp = doc["comparison"]
    names = [n for n, _ in want]
    assert cmp["levels"] == names and not cmp["missing"]
    assert cmp["differ"] == 0 and cmp["counterexample"] is None and cmp["complete"]
    assert len(cmp["pairs"]) == len(names) * (len(names) - 1) // 2 and all(p["differ"] == 0 for p in cmp["pairs"])
    assert cmp["scope"] == "every float16 input (65,536)"
    # each level really ran with its own dispatch targets
    assert len(set(cmp["dispatched"].values())) == len(names)
    lay = doc["properties"][0]
    fam = next(f for f in lay["layouts"] if f["family"] == "isa levels")
    assert fam["differ"] == 0 and fam["complete"] and fam["inputs"] == 65536
    assert f"ISA levels {', '.join(names)} give the same bits on every float16 input (65,536)" in lay["note"]
    assert "layout refuted across ISA levels" not in proc.stderr
    assert "ISA levels compared bit for bit on every float16 input (65,536)" in proc.stderr


def test_the_gate_path_compares_its_level_with_every_other_and_replays_the_difference(tmp_path, monkeypatch):
    from opcert.isa import measure_at_level
    from opcert.options import Options

    want = [n for n, _ in _level_module(tmp_path, monkeypatch)]
    if "X86_V4" not in want:
        pytest.skip(f"NumPy's X86_V4 dispatch is not a level on this host ({want})")
    res = measure_at_level(
        "X86_V4",
        "Relu",
        "isa_level_targets:relu_v4_high",
        "float16",
        "sample",
        options=Options(samples=64, layout_samples=16, isolation="none"),
    )
    lay = next(p for p in res.properties if p["kind"] == "layout")
    assert lay["status"] == "refuted" and not lay["ok"]
    fam = next(f for f in lay["layouts"] if f["family"] == "isa levels")
    # independently: above 1, every finite output of the v4 path is one ULP high, and v4 is on from X86_V4 up
    x = np.arange(65536, dtype=np.uint16).view(np.float16)
    with np.errstate(invalid="ignore"):
        high = int((np.isfinite(x) & (x > 1)).sum())
    assert fam["differ"] == high == 0x7BFF - 0x3C01 + 1
    lower = want[: want.index("X86_V4")]
    ce = lay["counterexample"]
    assert [lv["level"] for lv in ce["levels"]] == [lower[0], "X86_V4"]
    assert ce["inputs"]["x"]["bits"] == "0x3c01"  # the first input above 1, in bit order
    assert [lv["output"]["bits"] for lv in ce["levels"]] == ["0x3c01", "0x3c02"]
    assert [lv["replayed"]["bits"] for lv in ce["levels"]] == ["0x3c01", "0x3c02"] and ce["replayed"] is True
    assert ce["reference"]["f(x)"]["bits"] == "0x3c01"
    assert [lv["ulp"] for lv in ce["levels"]] == [0.0, 1.0]
    assert any(n.startswith("ISA levels compared bit for bit on every float16 input (65,536)") for n in res.notes)
    # only pairs with X86_V4 are compared (each gate check is one level's); the levels above agree with it
    assert all("X86_V4" in pair for pair in fam["how"].split(": ", 1)[1].split("; ")), fam["how"]
    for above in want[want.index("X86_V4") + 1 :]:
        assert f"X86_V4 vs {above}: 0 differ" in fam["how"], fam["how"]


# The slow run's (9-11 s): CI compares levels on every float16 input through the CLI and the gate (above)
@pytest.mark.slow
def test_float64_levels_are_compared_on_one_draw_of_the_checks_samples(tmp_path):
    # opcert's sampler places inputs beside the operator's special points, computed with NumPy: at another
    # NumPy level it can draw other inputs, so the compared inputs are drawn once and given to every level
    want = [n for n, _ in levels("numpy:tanh")]
    if len(want) < 2:
        pytest.skip(f"NumPy has one dispatch level on this host ({want[0]}): nothing to compare")
    out = tmp_path / "isa.json"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "opcert",
            "accuracy",
            "Tanh",
            "--dtype",
            "float64",
            "--target",
            "numpy:tanh",
            "--isa",
            "all",
            "--samples",
            "200",
            "--layout-samples",
            "16",
            "--in-process",
            "--json",
            str(out),
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode in (0, 1), proc.stderr[-3000:]
    cmp = json.loads(out.read_text())["comparison"]
    assert cmp["levels"] == want and not cmp["missing"] and not cmp["complete"]
    assert cmp["scope"] == f"the check's {cmp['inputs']:,} sampled float64 inputs (seed 0)" and cmp["inputs"] > 200
    ce = cmp["counterexample"]
    if ce is None:
        return  # NumPy's tanh gives the same bits at every level here
    import mpmath

    x = ce["inputs"]["x"]["value"]
    mpmath.mp.prec = 200
    assert ce["reference"]["f(x)"]["value"] == float(mpmath.tanh(mpmath.mpf(x)))
    a, b = ce["levels"]
    assert a["output"]["bits"] != b["output"]["bits"] and ce["replayed"]
    assert [a["replayed"], b["replayed"]] == [a["output"], b["output"]]
