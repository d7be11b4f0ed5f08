"""Wrong kernels and bad inputs: one case per class of the verdict-integrity review (issue 8).

Deliberately wrong kernels (tests/bad_targets.py, and modules written here) and
deliberately bad inputs. Each case asserts the exit code, the message, and
that no result is lost.
"""

import json
import os
import shutil
import sys
import textwrap

import numpy as np
import pytest

from opcert.verify.accuracy.measure import measure

MAG = (0x3F000000, 0x3F010000)  # 65,536 magnitudes around 0.5 (both signs swept): one chunk


def kernel_module(tmp_path, name, body):
    (tmp_path / f"{name}.py").write_text("import numpy as np\n" + textwrap.dedent(body))
    return f"{name}:f"


# ---- 1. stale checkpoints --------------------------------------------------------------------

# The sweeps of this section load their target in this process (isolation="none"), and only the sweep's own
# worker runs it in another: a checkpoint is opened, verified, keyed and merged in this process whatever the
# isolation, and the probe and the replays would otherwise each start a worker (spawned, not forked, once a
# test of the same pytest process has loaded a multithreaded runtime).
SWEEP = dict(magnitude_range=MAG, workers=1, isolation="none")


def test_editing_the_kernel_changes_the_next_exhaustive_verdict(tmp_path, monkeypatch, request):
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("OPCERT_CACHE", str(tmp_path / "cache"))
    request.addfinalizer(lambda: sys.modules.pop("editable", None))
    target = kernel_module(tmp_path, "editable", "def f(x):\n    return np.tanh(x)\n")

    def run():
        # each run imports the kernel's module afresh, as the next run's process does: what the target's
        # first call loads is part of the checkpoints' key, and a forked sweep worker inherits this
        # process's modules (the edited kernel must be the one swept)
        sys.modules.pop("editable", None)
        return measure("Tanh", target, "float32", "exhaustive", **SWEEP)

    first = run()
    assert first.status == "ok" and first.max_ulp < 2
    # the same kernel again resumes from its checkpoint ...
    again = run()
    assert again.sweep["resumed_chunks"] == 1 and again.max_ulp == first.max_ulp
    # ... an edited one does not: it is measured afresh, and is wrong on ~half the inputs
    kernel_module(tmp_path, "editable", "def f(x):\n    y = np.tanh(x)\n    y[x > 0.5] = 0\n    return y\n")
    edited = run()
    assert edited.sweep["resumed_chunks"] == 0 and edited.max_ulp > 1e6
    assert edited.sweep["key"] != first.sweep["key"]


def test_editing_a_module_the_kernel_imports_changes_the_key(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "helper_math.py").write_text("import numpy as np\ndef g(x):\n    return np.tanh(x)\n")
    target = kernel_module(tmp_path, "uses_helper", "import helper_math\ndef f(x):\n    return helper_math.g(x)\n")
    from opcert.targets import describe_target

    before = describe_target(target).fingerprint
    (tmp_path / "helper_math.py").write_text("import numpy as np\ndef g(x):\n    return -np.tanh(x)\n")
    assert describe_target(target).fingerprint != before


@pytest.fixture(scope="module")
def tanh_checkpoint(tmp_path_factory):
    """NumPy's tanh swept over MAG, and its checkpoint directory: the sweep the tests below start from,
    made once; each test takes a copy of the directory (they write into it, or may if a refusal fails)."""
    d = tmp_path_factory.mktemp("tanh") / "ckpt"
    return measure("Tanh", "numpy:tanh", "float32", "exhaustive", checkpoint=d, **SWEEP), d


def test_a_checkpoint_directory_of_another_sweep_is_refused(cli, tmp_path, tanh_checkpoint):
    r, finished = tanh_checkpoint
    assert r.status == "ok"
    d = shutil.copytree(finished, tmp_path / "ckpt")
    from opcert.errors import UsageError

    for other in (dict(op="Celu", target="numpy:tanh"), dict(op="Tanh", target="opcert")):
        with pytest.raises(UsageError, match="holds another sweep"):
            measure(other["op"], other["target"], "float32", "exhaustive", checkpoint=d, **SWEEP)
    (tmp_path / "afile").write_text("x")
    code, _, err = cli("accuracy", "Tanh", "--dtype", "float32", "--exhaustive", "--checkpoint", tmp_path / "afile")
    assert code == 2 and "not a directory" in err


@pytest.mark.parametrize("tamper", ["edit-counts", "drop-key", "garbage"])
def test_a_tampered_chunk_is_recomputed_not_merged(tmp_path, tanh_checkpoint, tamper):
    good, finished = tanh_checkpoint
    d = shutil.copytree(finished, tmp_path / "ckpt")
    (chunk,) = d.glob("chunk-*.json")
    data = json.loads(chunk.read_text())
    if tamper == "edit-counts":
        data["stats"]["correctly_rounded"] = data["stats"]["n"]  # valid JSON, but not what was measured
    elif tamper == "drop-key":
        del data["stats"]["histogram"]
    chunk.write_text("{not json" if tamper == "garbage" else json.dumps(data))
    again = measure("Tanh", "numpy:tanh", "float32", "exhaustive", checkpoint=d, **SWEEP)
    assert again.sweep["resumed_chunks"] == 0 and len(again.sweep["rejected_chunks"]) == 1
    assert again.correctly_rounded == good.correctly_rounded and "failed verification" in again.notes[0]


# ---- 2. a target cannot end opcert --------------------------------------------------------------

EXITS = ["exits_0", "raises_systemexit", "os_exit_0"]


@pytest.mark.parametrize("kernel", EXITS)
def test_a_target_that_exits_fails_its_check(cli, kernel, tmp_path):
    code, out, err = cli(
        "accuracy",
        "Tanh",
        "--dtype",
        "float16",
        "--target",
        f"bad_targets:{kernel}",
        "--exhaustive",
        "--json",
        tmp_path / "r.json",
    )
    assert code == 1 and "crashed" in out
    data = json.loads((tmp_path / "r.json").read_text())
    assert data["status"] == "crashed" and ("SystemExit" in data["error"] or "exit status 0" in data["error"])


# raises_systemexit is exits_0's SystemExit raised directly (the command line's test above runs all three)
@pytest.mark.parametrize(
    "kernel", [pytest.param(k, marks=[pytest.mark.slow] if k == "raises_systemexit" else []) for k in EXITS]
)
def test_the_gate_writes_its_reports_when_a_target_exits(cli, kernel, tmp_path):
    cfg = tmp_path / "g.toml"
    cfg.write_text(
        f'[[check]]\nop = "Tanh"\ndtypes = ["float16"]\nmode = "exhaustive"\nmax_ulp = 0.5\n\n'
        f'[[check]]\nop = "Tanh"\ndtypes = ["float16", "bfloat16"]\ntarget = "bad_targets:{kernel}"\n'
        f'mode = "exhaustive"\n'
    )
    code, out, _ = cli(
        "gate", "--config", cfg, "--json", tmp_path / "g.json", "--report", tmp_path / "rep", "--workers", "2"
    )
    assert code == 1
    g = json.loads((tmp_path / "g.json").read_text())
    assert [c["status"] for c in g["checks"]] == ["pass", "fail", "fail"]  # the passing check is kept
    assert all("crashed" in c["reasons"][0] for c in g["checks"][1:])
    assert (tmp_path / "rep" / "report.html").exists()


def test_an_exit_in_a_sweep_worker_fails_the_sweep_without_hanging(tmp_path):
    r = measure(
        "Tanh",
        "bad_targets:os_exit_0",
        "float32",
        "exhaustive",
        magnitude_range=MAG,
        workers=2,
        checkpoint=tmp_path / "c",
    )
    assert r.status == "crashed" and "exit status 0" in r.error and "0x3f000000" in r.error


def test_a_module_that_exits_at_import(cli, tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "exits_at_import.py").write_text("import os\nos._exit(0)\ndef f(x):\n    return x\n")
    code, _, err = cli("accuracy", "Tanh", "--dtype", "float16", "--target", "exits_at_import:f", "--exhaustive")
    assert code == 1 and "exit status 0" in err
    (tmp_path / "sysexit_at_import.py").write_text("import sys\nsys.exit(0)\n")
    code, _, err = cli("accuracy", "Tanh", "--dtype", "float16", "--target", "sysexit_at_import:f", "--exhaustive")
    assert code == 1 and "SystemExit(0)" in err


@pytest.mark.parametrize(
    "n,dtype", [(65536, np.float32), (16384, np.float16), (1001, np.float32), (4097, np.float16), (2048, np.float64)]
)
def test_a_changed_input_is_seen_wherever_one_bit_changes(n, dtype):
    """Target.run compares the inputs it gave with the caller's, bit for bit (compiled 64 bits
    at a time for large blocks): one bit flipped anywhere, a NaN's payload or a zero's sign, is seen."""
    from opcert.targets.base import _same_bits

    rng = np.random.default_rng(n)
    a = rng.standard_normal(n).astype(dtype)
    assert _same_bits(a, a.copy())
    width = np.dtype(f"uint{8 * a.itemsize}")
    for i in (0, 1, n // 2, n - 2, n - 1):
        for bit in (0, 8 * a.itemsize - 1):
            b = a.copy()
            b.view(width)[i] ^= width.type(1 << bit)
            assert not _same_bits(a, b) and not _same_bits(b, a), (i, bit)


# ---- 3. the reference never sees what a target did to its inputs --------------------------------


def test_a_kernel_that_zeroes_its_input_is_measured_on_what_it_was_given():
    r = measure("Tanh", "bad_targets:zeroes_its_input", "float16", "exhaustive")
    assert r.correctly_rounded < 100 and r.max_ulp > 1000 and r.target_modified_input
    x = np.linspace(-2, 2, 101).astype(np.float16)
    keep = x.copy()
    r = measure("Tanh", "bad_targets:zeroes_its_input", "float16", x, isolation="none")
    assert np.array_equal(x.view(np.uint16), keep.view(np.uint16)) and r.max_ulp > 1000


# ---- 4. required proofs that were not done, or are not claimed -----------------------------------


@pytest.mark.parametrize(
    "text,message",
    [
        ('op = "Celu"\nproofs = ["continuity"]', "a property of the exact definition"),
        (
            'op = "Shrink"\nproofs = ["monotonic"]\n[check.attrs]\nbias = 1.0\nlambd = 0.5',
            "monotonic is not claimed: claimed only when",
        ),
    ],
)
def test_a_required_property_that_cannot_be_established_is_a_configuration_error(cli, tmp_path, text, message):
    cfg = tmp_path / "g.toml"
    cfg.write_text('[[check]]\ndtypes = ["float16"]\nmode = "exhaustive"\n' + text + "\n")
    code, _, err = cli("gate", "--config", cfg)
    assert code == 2 and message in err and "check[0].proofs" in err


def test_proofs_all_leaves_out_what_is_not_claimed_and_says_so(cli, tmp_path):
    cfg = tmp_path / "g.toml"
    cfg.write_text(
        '[[check]]\nop = "Shrink"\ndtypes = ["float16"]\nmode = "exhaustive"\nmax_ulp = 0.5\n'
        'proofs = "all"\n[check.attrs]\nbias = 1.0\nlambd = 0.5\n'
    )
    code, out, _ = cli("gate", "--config", cfg, "--json", tmp_path / "g.json", "--workers", "1")
    g = json.loads((tmp_path / "g.json").read_text())
    (c,) = g["checks"]
    assert code == 0 and "monotonic" not in c["policy"]["proofs"]
    assert any("monotonic is not claimed: claimed only when" in why for why in c["policy"]["proofs_left_out"])
    assert all(p["status"] == "proved" for p in c["proofs"])


# ---- 5. one validator for every policy -----------------------------------------------------------


def test_cli_refuses_a_nan_budget(cli):
    code, _, err = cli(
        "accuracy", "Tanh", "--dtype", "float16", "--target", "bad_targets:negated", "--exhaustive", "--max-ulp", "nan"
    )
    assert code == 2 and "--max-ulp: must be a finite number >= 0" in err


def test_pytest_plugin_refuses_bad_policies(pytester):
    pytester.makepyfile(
        test_policies="""
        import pytest

        @pytest.mark.parametrize("kw", [dict(max_ulp=float("nan")), dict(signed_zero="lenient"),
                                        dict(subnormals="whatever"), dict(samples=0)])
        def test_bad(opcert_check, kw):
            opcert_check("Tanh", "bad_targets:flush_tiny", "float16", **kw)
    """
    )
    pytester.syspathinsert(os.path.dirname(__file__))
    result = pytester.runpytest_subprocess("-q")
    result.assert_outcomes(failed=4)
    result.stdout.fnmatch_lines(
        [
            "*max_ulp: must be a finite number*",
            "*signed_zero: 'lenient' is not allowed*",
            "*subnormals: 'whatever' is not allowed*",
            "*samples: must be an integer*",
        ]
    )
    assert "Traceback" not in result.stdout.str()


# ---- 6. diff sees every regression ----------------------------------------------------------------


def _gate(cli, tmp_path, text, name):
    cfg = tmp_path / f"{name}.toml"
    cfg.write_text(text)
    cli("gate", "--config", cfg, "--json", tmp_path / f"{name}.json", "--workers", "1")
    return tmp_path / f"{name}.json"


def test_diff_keys_on_mode_and_flags_every_regression(cli, tmp_path):
    two = (
        '[[check]]\nop = "Tanh"\ndtypes = ["float16"]\nmode = "exhaustive"\nmax_ulp = 0.5\n'
        '[[check]]\nop = "Tanh"\ndtypes = ["float16"]\nmode = "sample"\nsamples = 500\nmax_ulp = 0.5\n'
    )
    old = _gate(cli, tmp_path, two, "old")
    data = json.loads(old.read_text())
    keys = [c["key"] for c in data["checks"]]
    assert len(set(keys)) == 2  # checks differing only in mode do not collide

    def variant(mutate):
        new = json.loads(old.read_text())
        mutate(new["checks"][1])
        p = tmp_path / "new.json"
        p.write_text(json.dumps(new))
        code, out, _ = cli("diff", old, p)
        return code, out

    code, out = variant(lambda c: c.update(status="fail", reasons=["broken"]))
    assert code == 1 and "passed, now fails" in out
    code, out = variant(lambda c: c.update(status="skipped", reasons=["gone"]))
    assert code == 1 and "now skipped" in out
    code, out = variant(lambda c: c["accuracy"].update(inputs_checked=10))
    assert code == 1 and "inputs checked down" in out
    # a NaN figure is refused (tests/test_report_inputs.py); an unknown one (null) fails the check
    code, out = variant(lambda c: (c["accuracy"].update(max_ulp=None), c.update(status="fail", reasons=["x"])))
    assert code == 1 and "now unknown" in out
    skipped = json.loads(old.read_text())
    skipped["checks"][1].update(status="skipped")
    (tmp_path / "skipped.json").write_text(json.dumps(skipped))
    failed = json.loads(old.read_text())
    failed["checks"][1].update(status="fail", reasons=["x"])
    (tmp_path / "failed.json").write_text(json.dumps(failed))
    code, out, _ = cli("diff", tmp_path / "skipped.json", tmp_path / "failed.json")
    assert code == 1 and "was skipped, now fails" in out


def test_diff_refuses_a_result_with_bad_content(cli, tmp_path):
    p = tmp_path / "bad.json"
    p.write_text(json.dumps({"schema": "opcert.gate/1", "checks": [{"key": 1, "name": "x", "status": "pass"}]}))
    code, _, err = cli("diff", p, p)
    assert code == 2 and "checks[0].key: must be a string" in err
    code, _, err = cli("report", p, "--out", tmp_path / "out")
    assert code == 2 and "Traceback" not in err


# ---- 7. a correctly rounded infinity is exact -----------------------------------------------------


def test_a_correctly_rounded_infinity_is_not_charged(cli, tmp_path):
    r = measure("ScaledTanh", "opcert", "float16", "exhaustive", alpha=1e5)
    assert r.correctly_rounded == 65536 and r.max_ulp <= 0.5
    cfg = tmp_path / "g.toml"
    cfg.write_text(
        '[[check]]\nop = "ScaledTanh"\ndtypes = ["float16"]\nmode = "exhaustive"\nmax_ulp = 0.5\n'
        "[check.attrs]\nalpha = 1e5\n"
    )
    code, out, _ = cli("gate", "--config", cfg, "--workers", "1")
    assert code == 0 and "1 passed" in out


# ---- 8. a gate that verified nothing fails --------------------------------------------------------


def test_a_gate_where_every_check_is_skipped_fails(cli, tmp_path):
    cfg = tmp_path / "g.toml"
    cfg.write_text(
        '[[check]]\nop = "ScaledTanh"\ndtypes = ["float16"]\ntarget = "onnx-reference"\nmode = "exhaustive"\n'
    )
    code, out, _ = cli("gate", "--config", cfg, "--json", tmp_path / "g.json", "--workers", "1")
    g = json.loads((tmp_path / "g.json").read_text())
    assert code == 1 and not g["ok"] and "verified nothing" in out and g["counts"]["skipped"] == 1


# ---- 9. a segfault in a target --------------------------------------------------------------------


def test_a_segfault_fails_the_check_and_keeps_the_others(cli, tmp_path):
    code, out, err = cli("accuracy", "Tanh", "--dtype", "float16", "--target", "bad_targets:segfault", "--exhaustive")
    assert code == 1 and "SIGSEGV" in err
    cfg = tmp_path / "g.toml"
    cfg.write_text(
        '[[check]]\nop = "Tanh"\ndtypes = ["float16", "bfloat16"]\nmode = "exhaustive"\nmax_ulp = 0.5\n'
        '[[check]]\nop = "Tanh"\ndtypes = ["float16"]\ntarget = "bad_targets:segfault"\n'
        'mode = "exhaustive"\n'
    )
    code, out, _ = cli("gate", "--config", cfg, "--json", tmp_path / "g.json", "--workers", "2")
    g = json.loads((tmp_path / "g.json").read_text())
    assert code == 1 and [c["status"] for c in g["checks"]] == ["pass", "pass", "fail"]
    assert "SIGSEGV" in g["checks"][2]["reasons"][0] and "0x0000..0xffff" in g["checks"][2]["reasons"][0]


def test_a_hang_is_stopped_by_the_target_timeout(cli):
    code, out, err = cli(
        "accuracy",
        "Tanh",
        "--dtype",
        "float16",
        "--target",
        "bad_targets:hangs",
        "--exhaustive",
        "--target-timeout",
        "1",
    )
    assert code == 1 and "did not return within 1 s" in err


# ---- 10-13. bad input: exit 2, a message, no traceback, no hang ------------------------------------


def _toml(tmp_path, text):
    p = tmp_path / "c.toml"
    p.write_text(text)
    return p


BAD_INPUTS = [
    (["accuracy", "Tanh", "--dtype", "float16", "--json", "/proc/opcert/r.json"], "cannot write --json"),
    (["accuracy", "Tanh", "--dtype", "float16", "--json", "/etc/passwd/r.json"], "is not a directory"),
    (["gate", "--config", "CFG", "--junit", "/etc/passwd/j.xml"], "is not a directory"),
    (["gate", "--config", "CFG", "--report", "/etc/passwd"], "not a directory"),
    (["accuracy", "Tanh", "--dtype", "float32", "--seed", "-1"], "--seed: must be an integer from 0"),
    (["accuracy", "Tanh", "--dtype", "float32", "--samples", "1000000000000"], "--samples: must be an integer"),
    (["accuracy", "Tanh", "--dtype", "float32", "--samples", "0"], "--samples: must be an integer from 1"),
    (["accuracy", "Tanh", "--dtype", "float32", "--samples", "-5"], "--samples: must be an integer from 1"),
    (["accuracy", "Tanh", "--dtype", "float16", "--max-ulp", "-1"], "--max-ulp: must be a finite number >= 0"),
    (["prove", "Tanh", "--timeout", "30"], "--timeout was removed"),
    (["prove", "Tanh", "--rlimit", "0"], "--rlimit: must be an integer from 1"),
    (["prove", "Tanh", "--rlimit", "x"], "--rlimit"),
    (["gate", "--workers", "0"], "--workers: must be an integer from 1"),
    (["gate", "--workers", "-1"], "--workers: must be an integer from 1"),
    (["ref", "Tanh", "--dtype", "float16", "0x"], "after 0x come hex digits"),
    (["ref", "Tanh", "--dtype", "float16", "0xG"], "after 0x come hex digits"),
    (["ref", "Tanh", "--dtype", "float16", "--", "-0x3c00"], "a bit pattern has no sign"),
    (["ref", "Shrink", "--dtype", "int8", "300"], "outside int8: allowed -128 to 127"),
    (["accuracy", "Celu", "--dtype", "float16", "--attr", "alpha=1e999999999"], "overflows binary32"),
    (["accuracy", "Celu", "--dtype", "float16", "--attr", "alpha=1e-50"], "rounds to zero in binary32"),
    (["accuracy", "Celu", "--dtype", "float16", "--attr", "alpha=1/3"], "fractions are not accepted"),
    (["accuracy", "Celu", "--dtype", "float16", "--attr", "alpha=1_0"], "digit separators are not accepted"),
    (["accuracy", "Tanh", "--dtype", "float16", "--target-timeout", "0"], "--target-timeout: must be a finite"),
    (["accuracy", "Tanh", "--dtype", "float16", "--target", "bad_targets_missing_module:f"], "cannot import module"),
    (["accuracy", "Tanh", "--dtype", "float16", "--target", "bad_import_error:f"], "failed with ZeroDivisionError"),
    (["diff", "OLDDIR", "OLDDIR"], "is a directory"),
    (["gate", "--config", "CFG", "--baseline", "BADJSON"], "not JSON"),
    (["report", "BADJSON", "--out", "/etc/passwd/out"], "--out /etc/passwd/out: cannot be written"),
    (["report", "BADJSON", "--out", "OLDDIR"], "not JSON"),
]


@pytest.mark.parametrize("args,message", BAD_INPUTS, ids=[" ".join(a)[:60] for a, _ in BAD_INPUTS])
def test_bad_input_exits_2(cli, tmp_path, monkeypatch, args, message):
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "bad_import_error.py").write_text("1 / 0\n")
    cfg = _toml(tmp_path, '[[check]]\nop = "Tanh"\ndtypes = ["float16"]\nmode = "exhaustive"\n')
    (tmp_path / "bad.json").write_text("{not json")
    args = [
        str(cfg)
        if a == "CFG"
        else str(tmp_path)
        if a == "OLDDIR"
        else str(tmp_path / "bad.json")
        if a == "BADJSON"
        else a
        for a in args
    ]
    code, out, err = cli(*args)
    assert code == 2 and message in err and "Traceback" not in out + err


TOML_ERRORS = [
    ("seed = -1", "check[0].seed: must be an integer from 0"),
    ("seed = true", "check[0].seed: must be an integer"),
    ("samples = 1000000000000", "check[0].samples: must be an integer from 1"),
    ('dtypes = [["float16"]]', "check[0].dtypes: must be a non-empty list of dtype names"),
    ("max_ulp = nan", "check[0].max_ulp: must be a finite number"),
    ("max_ulp = inf", "check[0].max_ulp: must be a finite number"),
    ('signed_zero = "lenient"', "check[0].signed_zero: 'lenient' is not allowed"),
    ("accept_sampled_evidence = 1", "check[0].accept_sampled_evidence: must be true or false"),
    ("target_timeout = 0", "check[0].target_timeout: must be a finite number > 0"),
    ('op = "Celu"\n[check.attrs]\nalpha = true', "attribute alpha=True is not a number"),
    ('op = "Celu"\n[check.attrs]\nalpha = "1/3"', "fractions are not accepted"),
    ('op = "Celu"\n[check.attrs]\nalpha = "1_0"', "digit separators are not accepted"),
    ('op = "Celu"\n[check.attrs]\nalpha = "1e999999999"', "overflows binary32"),
    ('op = ["Tanh", "Celu"]\n[check.attrs]\nalpha = 1.0', "attributes apply to one operator"),
]


@pytest.mark.parametrize("line,message", TOML_ERRORS, ids=[t for t, _ in TOML_ERRORS])
def test_bad_configuration_values_exit_2(cli, tmp_path, line, message):
    base = "[[check]]\n" + ("" if line.startswith("dtypes") else 'dtypes = ["float16"]\n')
    text = base + line + "\n" if line.startswith("op") else base + 'op = "Tanh"\n' + line + "\n"
    code, out, err = cli("gate", "--config", _toml(tmp_path, text))
    assert code == 2 and message in err and "Traceback" not in err


def test_unreadable_configurations_exit_2(cli, tmp_path):
    code, _, err = cli("gate", "--config", tmp_path)
    assert code == 2 and "is a directory" in err
    p = tmp_path / "latin1.toml"
    p.write_bytes(b'[[check]]\nop = "Tanh"\nname = "caf\xe9"\n')
    code, _, err = cli("gate", "--config", p)
    assert code == 2 and "not UTF-8" in err


def test_huge_exponents_do_not_hang(cli):
    code, out, _ = cli("ref", "Tanh", "--dtype", "float16", "--json", "1e99999999", "-1e-99999999")
    rows = json.loads(out)["results"]
    assert code == 0 and rows[0]["input_bits"] == "0x7c00" and rows[1]["input_bits"] == "0x8000"


# ---- 14. output streams and files ----------------------------------------------------------------


def test_json_to_stdout_is_only_json(cli):
    code, out, err = cli("accuracy", "Tanh", "--dtype", "float16", "--exhaustive", "--json", "-")
    assert code == 0 and json.loads(out)["inputs_checked"] == 65536 and "max ULP error" in err


def test_json_through_a_symlink_keeps_the_link(cli, tmp_path):
    real = tmp_path / "real.json"
    real.write_text("{}")
    link = tmp_path / "link.json"
    link.symlink_to(real)
    code, _, _ = cli("accuracy", "Tanh", "--dtype", "float16", "--exhaustive", "--json", link)
    assert code == 0 and link.is_symlink() and json.loads(real.read_text())["inputs_checked"] == 65536


def test_report_images_are_written_atomically(tmp_path, monkeypatch):
    from opcert import files as io

    written = []
    real = io.write_bytes_atomic
    monkeypatch.setattr(io, "write_bytes_atomic", lambda p, d: (written.append(p), real(p, d)))
    from opcert.report import render

    monkeypatch.setattr(render, "write_bytes_atomic", io.write_bytes_atomic)
    import opcert

    g = opcert.gate(_toml(tmp_path, '[[check]]\nop = "Tanh"\ndtypes = ["float16"]\nmode = "exhaustive"\n'), workers=1)
    render.write_reports(g.to_dict(), str(tmp_path / "rep"), {0: ("chunks", [0.5, 0.25])})
    assert any(p.endswith(".svg") for p in written)
    assert not list((tmp_path / "rep").rglob(".opcert-*.tmp"))


# ---- 15. the pytest plugin's messages ------------------------------------------------------------


def test_pytest_plugin_messages_are_short(pytester):
    pytester.makepyfile(
        test_plugin_msgs="""
        import pytest

        def test_misspelled_operator(opcert_check):
            opcert_check("Tanhh", "numpy:tanh", "float16")

        def test_misspelled_attribute(opcert_check):
            opcert_check("Celu", "opcert", "float16", alphaa=1.0)

        @pytest.mark.opcert("Tanh", "numpy:tanh", "float16", max_ulp=0.5)
        def test_positional_marker():
            pass
    """
    )
    result = pytester.runpytest_subprocess("-q")
    result.assert_outcomes(passed=1, failed=2)
    out = result.stdout.str()
    assert "unknown operator 'Tanhh'" in out and "unknown attribute 'alphaa'" in out
    assert "Traceback" not in out and "opcert/spec" not in out


# ---- 16. the public API is what the README says ----------------------------------------------------


def test_public_api():
    import opcert

    assert {"reference", "run", "measure", "prove", "gate", "operators", "get_operator"} <= set(opcert.__all__)
    for name in opcert.__all__:
        assert hasattr(opcert, name), name


@pytest.mark.slow  # CI runs these blocks in tests/test_docs.py (every example of README.md, in page order)
def test_the_readme_python_examples_run():
    import pathlib
    import re

    text = (pathlib.Path(__file__).parent.parent / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert len(blocks) >= 2
    for code in blocks:
        namespace = {"pytest": pytest}
        exec(compile(code, "README.md", "exec"), namespace)  # noqa: S102 - our own documentation


def test_a_closed_pipe_is_not_an_internal_error():
    """`opcert ops --json | head -1`: the reader goes away; opcert stops as a shell's SIGPIPE (141), with
    nothing on standard error (it used to say "internal error: BrokenPipeError", exit 3)."""
    import subprocess
    import sys

    r = subprocess.run(
        f"'{sys.executable}' -m opcert ops --json | head -c 100 > /dev/null; echo ${{PIPESTATUS[0]}} 1>&2",
        shell=True,
        executable="/bin/bash",
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.stderr.strip() == "141", r.stderr
