"""Verdicts that survive the target's environment, state and history (the fault injection of issue 30).

Each test holds a kernel of the kind that made a verdict lie (an -Ofast C library, a kernel wrong
from its n-th call, a reused output buffer, a rebuilt linked library, ...) and asserts the verdict
that is right for it, with the input that shows it.
"""

import importlib.util
import json
import os
import platform
import shutil
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

from opcert.formats import get_format
from opcert.verify.accuracy.measure import measure

MAG = (0x3F000000, 0x3F010000)  # 65,536 magnitudes around 0.5, both signs: one chunk, one block a sign
X86 = platform.machine().lower() in ("x86_64", "amd64")
needs_cc = pytest.mark.skipif(
    shutil.which("cc") is None and shutil.which("gcc") is None, reason="no C compiler on this host"
)


def cc(tmp_path, name, source, *flags):
    src = tmp_path / f"{name}.c"
    src.write_text(textwrap.dedent(source))
    out = tmp_path / f"lib{name}.so"
    subprocess.run(
        [shutil.which("cc") or "gcc", "-shared", "-fPIC", "-O2", *flags, "-o", str(out), str(src), "-lm"], check=True
    )
    return out


def module(tmp_path, name, body):
    (tmp_path / f"{name}.py").write_text("import numpy as np\n" + textwrap.dedent(body))
    return f"{name}:f"


BF16_TANH = """
    #include <math.h>
    #include <stdint.h>
    #include <string.h>
    #include <stddef.h>
    static float from_bf16(uint16_t b) { uint32_t u = (uint32_t)b << 16; float f; memcpy(&f, &u, 4); return f; }
    static uint16_t to_bf16(float f) {
        uint32_t u; memcpy(&u, &f, 4);
        if ((u & 0x7fffffff) > 0x7f800000) return (uint16_t)((u >> 16) | 0x40);
        u += 0x7fff + ((u >> 16) & 1);
        return (uint16_t)(u >> 16);
    }
    void bf16_tanh(const uint16_t *x, uint16_t *y, size_t n, const float *attrs) {
        for (size_t i = 0; i < n; i++) y[i] = to_bf16(tanhf(from_bf16(x[i])));
    }
"""


F32_TANH = """
    #include <math.h>
    #include <stddef.h>
    #include <xmmintrin.h>
    void f32_tanh(const float *x, float *y, size_t n, const float *attrs) {
        for (size_t i = 0; i < n; i++) y[i] = tanhf(x[i]);
        %s
    }
"""


# ---- 1. the floating-point environment ----------------------------------------------------------


@needs_cc
@pytest.mark.skipif(not X86, reason="-Ofast's flush-to-zero is set in MXCSR: x86-64 only")
def test_an_ofast_library_does_not_flush_opcerts_own_arithmetic(tmp_path):
    """gcc links crtfastmath.o into an -Ofast library: loading it turns FTZ and DAZ on. The kernel then
    reads bfloat16 subnormal inputs as 0 (tanh gives 0, not x): 254 wrong results that opcert must see."""
    lib = cc(tmp_path, "fast", BF16_TANH, "-Ofast")
    # every bfloat16 value as an array of inputs: one call of each, in a worker (the exhaustive check, with
    # every layout, is the gate's below)
    every = np.arange(1 << 16, dtype=np.uint16).view(get_format("bfloat16").dtype)
    r = measure("Tanh", f"c:{lib}:bf16_tanh", "bfloat16", every, properties=())
    assert r.status == "ok"
    assert r.correctly_rounded < 65536 - 250 and r.max_ulp > 1
    assert any("flush-to-zero turned on" in e for e in r.fp_environment), r.fp_environment
    assert any("flush-to-zero" in n and "measured under the mode it set" in n for n in r.notes)
    # the same kernel built without -Ofast is correctly rounded but for tanhf's own error, and says nothing
    plain = measure("Tanh", f"c:{cc(tmp_path, 'plain', BF16_TANH)}:bf16_tanh", "bfloat16", every, properties=())
    assert plain.max_ulp <= 0.5000001 and plain.fp_environment == []


@needs_cc
@pytest.mark.skipif(not X86, reason="-Ofast's flush-to-zero is set in MXCSR: x86-64 only")
def test_the_gate_fails_the_ofast_kernel_and_its_report_says_what_it_did(cli, tmp_path):
    lib = cc(tmp_path, "fastgate", BF16_TANH, "-Ofast")
    cfg = tmp_path / "g.toml"
    cfg.write_text(
        f'[[check]]\nop = "Tanh"\ndtypes = ["bfloat16"]\ntarget = "c:{lib}:bf16_tanh"\n'
        'mode = "exhaustive"\nproofs = ["odd", "nan"]\nmax_ulp = 1\n'
    )
    code, _, _ = cli("gate", "--config", cfg, "--report", tmp_path / "rep")
    md = (tmp_path / "rep" / "report.md").read_text()
    assert code == 1 and "254 subnormal outputs flushed to zero" in md
    assert "the target's load: flush-to-zero turned on, denormals-are-zero turned on" in md


@needs_cc
@pytest.mark.skipif(not X86, reason="-Ofast's flush-to-zero is set in MXCSR: x86-64 only")
def test_an_ofast_library_in_a_float32_sweep_is_judged_on_subnormal_inputs(tmp_path):
    lib = cc(tmp_path, "fast32", F32_TANH % "", "-Ofast")
    # the smallest 65,536 magnitudes, both signs: subnormal inputs, which DAZ reads as 0
    r = measure(
        "Tanh",
        f"c:{lib}:f32_tanh",
        "float32",
        "exhaustive",
        magnitude_range=(0, 1 << 16),
        workers=1,
        checkpoint=tmp_path / "c",
    )
    assert r.status == "ok" and r.subnormal_flushes == 2 * ((1 << 16) - 1)
    assert r.correctly_rounded == 2  # +-0 alone
    assert any("flush-to-zero turned on" in e for e in r.fp_environment)


@needs_cc
@pytest.mark.skipif(not X86, reason="MXCSR is x86-64's")
def test_a_correct_kernel_that_leaves_ftz_on_is_counted_right_and_its_history_seen(tmp_path):
    lib = cc(tmp_path, "leaves", F32_TANH % "_mm_setcsr(_mm_getcsr() | 0x8040);   /* FTZ and DAZ on, left on */")
    # properties=(): no property verdict asked for, but every path still runs (the layouts come after the
    # measurement's own call, under the mode the kernel left)
    r = measure("Tanh", f"c:{lib}:f32_tanh", "float32", "sample", samples=20000, properties=())
    assert r.status == "ok"
    # opcert's comparison ran under its own mode: the first call's results are all within tanhf's error (its
    # counts are that call's), and the check's worst is a later call's flushed output, with its layout named
    assert r.nan_mismatches == 0 and r.subnormal_flushes == 0
    assert r.max_ulp > 2 and r.worst_layout
    assert 0 < int(r.worst_input_bits, 16) & 0x7FFFFFFF < 0x00800000
    assert any("call: flush-to-zero turned on" in e for e in r.fp_environment)
    # its second call ran under the mode it left: subnormal inputs read as 0; a finding of its own
    assert r.replay["differ"] > 0
    first = int(r.replay["first"]["input"]["bits"], 16)
    assert 0 < first & 0x7FFFFFFF < 0x00800000  # a subnormal input
    # the layout check's calls come after the first too: the history shows there, at a subnormal input,
    # and the check's accuracy (the worst over every layout) is the flushed output's
    r = measure("Tanh", f"c:{lib}:f32_tanh", "float32", "sample", samples=20000, properties=("layout",))
    (lay,) = r.properties
    assert lay["status"] == "refuted" and r.max_ulp > 2 and r.worst_layout
    assert 0 < int(lay["counterexample"]["inputs"]["x"]["bits"], 16) & 0x7FFFFFFF < 0x00800000


# ---- 2. verdicts from what was measured -----------------------------------------------------------

WRONG_FROM_THIRD_CALL = """
    calls = [0]
    def f(x):
        calls[0] += 1
        y = np.tanh(x)
        if calls[0] >= 3:          # wrong from its third call in a process on
            y = y * np.float32(1.5)
        return y
"""


def test_a_kernel_wrong_from_its_nth_call_is_judged_on_what_it_returned(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    target = module(tmp_path, "nth_call", WRONG_FROM_THIRD_CALL)
    # 2 blocks a sign: the worker's calls 1..4; the worst cases come from calls 3 and 4
    r = measure(
        "Tanh",
        target,
        "float32",
        "exhaustive",
        magnitude_range=(0x3F000000, 0x3F020000),
        workers=1,
        checkpoint=tmp_path / "c",
    )
    assert r.status == "ok"
    assert r.histogram["> 65536"] + r.histogram["(256, 65536]"] > 0
    assert r.max_ulp > 1e5  # was 0.55: the worst case was run again in a fresh process
    # run again in a fresh process (calls 1 and 2: right): a different output, reported as such
    assert r.replay["differ"] > 0 and r.replay["first"]["output"] != r.replay["first"]["replayed"]


def test_a_noisy_kernel_reports_its_measured_worst(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    target = module(
        tmp_path,
        "noisy",
        """
        rng = np.random.default_rng()
        def f(x):
            y = np.tanh(x)
            i = rng.integers(0, x.size, 40)
            y[i] = -y[i]                       # 40 random outputs negated in every call
            return y
    """,
    )
    r = measure("Tanh", target, "float16", "exhaustive")
    assert r.max_ulp > 1000 and r.histogram["> 65536"] + r.histogram["(256, 65536]"] >= 30
    assert r.replay["differ"] > 0


def test_the_gate_fails_a_kernel_whose_output_depends_on_its_call_history(cli, tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    module(
        tmp_path,
        "history",
        """
        calls = [0]
        def f(x):
            calls[0] += 1
            return np.tanh(x) if calls[0] == 1 else np.tanh(x) * np.float16(0.5)
    """,
    )
    cfg = tmp_path / "g.toml"
    cfg.write_text(
        '[[check]]\nop = "Tanh"\ndtypes = ["float16"]\ntarget = "history:f"\nmode = "exhaustive"\nmax_ulp = 1\n'
    )
    code, out, _ = cli("gate", "--config", cfg, "--json", tmp_path / "g.json")
    g = json.loads((tmp_path / "g.json").read_text())
    assert code == 1 and g["checks"][0]["status"] == "fail"
    assert any("other bits for the same input on a second call" in r for r in g["checks"][0]["reasons"])


# ---- 3. outputs copied out of the target's buffer ---------------------------------------------------

REUSED = """
    _buf = np.empty(1 << 17, np.float32)
    def f(x):
        out = _buf[:x.size]
        np.tanh(x, out=out)
        {extra}
        return out
"""


def test_a_reused_output_buffer_does_not_break_the_property_scans(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    target = module(tmp_path, "reused", REUSED.format(extra="pass"))
    r = measure("Tanh", target, "float32", "exhaustive", magnitude_range=MAG, workers=1, checkpoint=tmp_path / "c")
    verdicts = {p["name"]: p["status"] for p in r.properties}
    assert verdicts["monotonic"] == "checked" and verdicts["odd"] == "checked", verdicts


def test_a_reused_buffer_leaving_the_range_is_refuted(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    target = module(tmp_path, "reused_bad", REUSED.format(extra="out[x > 8] = 2.0"))
    r = measure(
        "Tanh",
        target,
        "float32",
        "exhaustive",
        magnitude_range=(0x41080000, 0x41090000),
        workers=1,
        checkpoint=tmp_path / "c",
    )
    rng = {p["name"]: p for p in r.properties}["range"]
    assert rng["status"] == "refuted" and rng["violations"] == 65536
    assert rng["counterexample"]["outputs"]["f(x)"]["value"] == 2.0


def test_a_float32_sweep_measures_an_in_place_kernel_on_what_it_was_given(tmp_path):
    """The sweep gives the target a buffer of its own and checks it after the call: a kernel that writes
    zeros into its input is wrong on every nonzero input and named as writing into it; an in-place tanh is
    named too, and measured as right as NumPy's float32 tanh is out of place."""
    z = measure(
        "Tanh",
        "bad_targets:zeroes_its_input",
        "float32",
        "exhaustive",
        magnitude_range=MAG,
        workers=1,
        checkpoint=tmp_path / "z",
    )
    assert z.target_modified_input and z.inputs_checked == 2 * 65536 and z.correctly_rounded == 0
    ok = measure(
        "Tanh", "numpy:tanh", "float32", "exhaustive", magnitude_range=MAG, workers=1, checkpoint=tmp_path / "ok"
    )
    ip = measure(
        "Tanh",
        "bad_targets:tanh_in_place",
        "float32",
        "exhaustive",
        magnitude_range=MAG,
        workers=1,
        checkpoint=tmp_path / "ip",
    )
    assert ip.target_modified_input and not ok.target_modified_input
    assert (ip.correctly_rounded, ip.max_ulp) == (
        ok.correctly_rounded,
        ok.max_ulp,
    ) and ip.inputs_checked == ok.inputs_checked == 2 * 65536


KEPT = """
    _kept = []
    def f(x):
        if _kept:
            _kept[0][:] = 7.0        # writes into the whole array it returned before
        out = np.tanh(x)
        _kept[:] = [out]
        return out
"""


def test_an_output_array_the_target_keeps_is_copied_out(tmp_path, monkeypatch):
    """An output that owns its memory is used without a copy only where nothing but the caller refers to
    it: one the target keeps (here, a whole array, not a view) and writes into at its next call is copied
    out, so what the first call returned stays what it was."""
    from opcert.spec import get_operator
    from opcert.spec.attrs import resolve
    from opcert.targets import load_target

    monkeypatch.syspath_prepend(str(tmp_path))
    tgt = load_target(module(tmp_path, "kept", KEPT), None, None)
    op = get_operator("Tanh")
    x = np.linspace(-2, 2, 1001, dtype=np.float32)
    first = tgt.run(op, x, resolve(op))
    second = tgt.run(op, x, resolve(op))
    assert not np.any(first == 7.0) and not np.any(second == 7.0)
    assert np.array_equal(first, second)


# ---- 4. checkpoints bound to everything the kernel runs ---------------------------------------------


def _twice(tmp_path, target, change):
    ck = tmp_path / "ck"
    first = measure("Tanh", target, "float32", "exhaustive", magnitude_range=MAG, workers=1, checkpoint=ck)
    assert first.status == "ok" and first.max_ulp < 2, first.error
    change()
    try:
        second = measure("Tanh", target, "float32", "exhaustive", magnitude_range=MAG, workers=1, checkpoint=ck)
    except Exception as exc:  # a changed key refuses the old directory: a stale verdict is not possible either
        assert "holds another sweep" in str(exc)
        second = measure(
            "Tanh", target, "float32", "exhaustive", magnitude_range=MAG, workers=1, checkpoint=tmp_path / "ck2"
        )
    assert second.sweep["resumed_chunks"] == 0
    assert second.max_ulp > 1e6 and second.correctly_rounded < first.correctly_rounded
    return first, second


@needs_cc
def test_a_rebuilt_library_that_the_c_kernel_links_is_not_resumed(tmp_path):
    helper = """
        #include <math.h>
        float helper(float x) { return %s; }
    """
    cc(tmp_path, "helper", helper % "tanhf(x)")
    kernel = tmp_path / "kernel.c"
    kernel.write_text(
        "#include <stddef.h>\nfloat helper(float);\nvoid k(const float *x, float *y, size_t n, "
        "const float *a) { for (size_t i = 0; i < n; i++) y[i] = helper(x[i]); }\n"
    )
    lib = tmp_path / "libkernel.so"
    subprocess.run(
        [
            shutil.which("cc") or "gcc",
            "-shared",
            "-fPIC",
            "-o",
            str(lib),
            str(kernel),
            f"-L{tmp_path}",
            "-lhelper",
            f"-Wl,-rpath,{tmp_path}",
        ],
        check=True,
    )
    _, second = _twice(tmp_path, f"c:{lib}:k", lambda: cc(tmp_path, "helper", helper % "-tanhf(x)"))
    assert second.target_info["details"]["dependencies"]["shared_objects"]


@needs_cc
def test_a_rebuilt_library_a_python_kernel_loads_through_ctypes_is_not_resumed(tmp_path, monkeypatch):
    src = (
        "#include <math.h>\n#include <stddef.h>\nvoid k(const float *x, float *y, size_t n) "
        "{ for (size_t i = 0; i < n; i++) y[i] = %s; }\n"
    )
    cc(tmp_path, "viactypes", src % "tanhf(x[i])")
    monkeypatch.syspath_prepend(str(tmp_path))
    target = module(
        tmp_path,
        "uses_ctypes",
        f"""
        import ctypes
        _lib = ctypes.CDLL({str(tmp_path / "libviactypes.so")!r})
        def f(x):
            x = np.ascontiguousarray(x)        # the C function takes a contiguous array
            y = np.empty_like(x)
            _lib.k(x.ctypes.data_as(ctypes.c_void_p), y.ctypes.data_as(ctypes.c_void_p), ctypes.c_size_t(x.size))
            return y
    """,
    )
    _twice(tmp_path, target, lambda: cc(tmp_path, "viactypes", src % "-tanhf(x[i])"))


def test_a_helper_imported_inside_the_kernel_is_part_of_the_key(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "late_helper.py").write_text("import numpy as np\ndef g(x):\n    return np.tanh(x)\n")
    target = module(tmp_path, "imports_late", "def f(x):\n    import late_helper\n    return late_helper.g(x)\n")

    def edit():
        (tmp_path / "late_helper.py").write_text("import numpy as np\ndef g(x):\n    return -np.tanh(x)\n")

    _twice(tmp_path, target, edit)


def test_a_data_file_the_kernel_reads_is_part_of_the_key(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    data = tmp_path / "scale.txt"
    data.write_text("1.0")
    target = module(
        tmp_path,
        "reads_data",
        f"""
        def f(x):
            with open({str(data)!r}) as fh:
                s = np.float32(float(fh.read()))
            return np.tanh(x) * s
    """,
    )
    first, second = _twice(tmp_path, target, lambda: data.write_text("-1.0"))
    assert str(data) in first.target_info["details"]["dependencies"]["files"]


def test_what_a_first_call_reads_of_a_distributions_metadata_is_not_in_the_key(tmp_path, monkeypatch):
    """importlib.metadata's reads (numba's first compilation in a process reads every distribution's entry
    points) happen once a process, in whichever call comes first: counted, they made the first in-process
    probe's key differ from every later one's, and an in-process sweep did not resume. The module is
    imported afresh for each probe, as in a new process; the read happens at the first only."""
    from opcert.targets import describe_target

    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(np, "_metadata_read_by_test", [], raising=False)  # once a process, like numba's
    dist = tmp_path / "fakedist-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: fakedist\nVersion: 1.0\n")
    target = module(
        tmp_path,
        "reads_metadata_once",
        """
        import importlib.metadata
        def f(x):
            if not np._metadata_read_by_test:
                np._metadata_read_by_test.append(importlib.metadata.distribution("fakedist").read_text("METADATA"))
            return np.tanh(x)
    """,
    )
    call = ("Tanh", "float32", (), None, MAG)
    probes = []
    for _ in range(2):
        monkeypatch.delitem(sys.modules, "reads_metadata_once", raising=False)
        probes.append(describe_target(target, "none", call=call))
    assert "fakedist" in np._metadata_read_by_test[0]  # the first probe's call did read it
    first, second = probes
    assert first.fingerprint == second.fingerprint and first.dependencies == second.dependencies, first.details


def test_a_resumed_chunk_is_replayed_and_discarded_when_the_target_changed(tmp_path, monkeypatch):
    """What no fingerprint sees (here: an environment variable the kernel reads) is caught by the replay."""
    monkeypatch.syspath_prepend(str(tmp_path))
    target = module(
        tmp_path,
        "reads_env",
        """
        import os
        def f(x):
            return np.tanh(x) * np.float32(os.environ.get("KERNEL_SCALE", "1"))
    """,
    )
    ck = tmp_path / "ck"
    first = measure("Tanh", target, "float32", "exhaustive", magnitude_range=MAG, workers=1, checkpoint=ck)
    monkeypatch.setenv("KERNEL_SCALE", "-1")
    second = measure("Tanh", target, "float32", "exhaustive", magnitude_range=MAG, workers=1, checkpoint=ck)
    assert first.max_ulp < 2 and second.max_ulp > 1e6 and second.sweep["resumed_chunks"] == 0
    assert "differ from the checkpoint" in second.sweep["rejected_chunks"][0]
    monkeypatch.delenv("KERNEL_SCALE")
    third = measure("Tanh", target, "float32", "exhaustive", magnitude_range=MAG, workers=1, checkpoint=ck)
    assert third.max_ulp > 1e6 or third.sweep["resumed_chunks"] == 0  # never the first verdict from stale chunks


# ---- 5. diff keys ------------------------------------------------------------------------------------


def test_checks_that_differ_in_time_limit_or_isolation_have_different_keys(cli, tmp_path):
    from opcert.gating.config import parse

    base = {"op": "Tanh", "dtypes": ["float16"], "target": "numpy:tanh", "mode": "exhaustive"}
    cfg = parse({"check": [base, dict(base, target_timeout=5), dict(base, isolation="none")]}, "t")
    keys = {c.identity("float16")["target_timeout"] for c in cfg.checks}
    ids = [json.dumps(c.identity("float16"), sort_keys=True) for c in cfg.checks]
    assert len(set(ids)) == 3 and keys == {None, 5.0}


# ---- 6. the standard reaches opcert's own implementation ---------------------------------------------


def test_the_opcert_target_runs_the_standard_asked_for(cli):
    code, out, err = cli(
        "accuracy",
        "Shrink",
        "--dtype",
        "float16",
        "--target",
        "opcert",
        "--attr",
        "lambd=-1",
        "--attr",
        "bias=0.5",
        "--standard",
        "directml",
        "--exhaustive",
        "--json",
        "-",
    )
    data = json.loads(out)
    assert code == 0 and data["max_ulp"] <= 0.5, (data["max_ulp"], err)


# ---- 7 and the internal errors: every fault is a finding or a clear error ------------------------------


def test_os_exit_in_process_fails_the_check_instead_of_ending_opcert(cli):
    code, out, err = cli(
        "accuracy", "Tanh", "--dtype", "float16", "--target", "bad_targets:os_exit_0", "--exhaustive", "--in-process"
    )
    assert code == 1 and "os._exit(0)" in err


@pytest.mark.parametrize("isolation", [[], ["--in-process"]])
def test_a_target_raising_keyboardinterrupt_fails_its_check(cli, tmp_path, monkeypatch, isolation):
    monkeypatch.syspath_prepend(str(tmp_path))
    module(tmp_path, "interrupts", "def f(x):\n    raise KeyboardInterrupt\n")
    code, _, err = cli("accuracy", "Tanh", "--dtype", "float16", "--target", "interrupts:f", "--exhaustive", *isolation)
    assert code == 1 and "KeyboardInterrupt" in err


def test_a_target_raising_generatorexit_fails_its_check(cli, tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    module(tmp_path, "genexit", "def f(x):\n    raise GeneratorExit\n")
    code, _, err = cli("accuracy", "Tanh", "--dtype", "float16", "--target", "genexit:f", "--exhaustive")
    assert code == 1 and "GeneratorExit" in err


def test_a_target_raising_keyboardinterrupt_fails_one_pytest_test_not_the_session(pytester):
    pytester.makepyfile(interrupting_kernel="def f(x):\n    raise KeyboardInterrupt\n")
    pytester.makepyfile("""
        def test_interrupting(opcert_check):
            opcert_check("Tanh", "interrupting_kernel:f", "float16")

        def test_after_it():
            assert True
    """)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1, passed=1)
    assert "KeyboardInterrupt" in result.stdout.str()


def test_a_target_raising_keyboardinterrupt_in_the_gate(cli, tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    module(tmp_path, "interrupts2", "def f(x):\n    raise KeyboardInterrupt\n")
    cfg = tmp_path / "g.toml"
    cfg.write_text(
        '[[check]]\nop = "Tanh"\ndtypes = ["float16"]\nmode = "exhaustive"\n\n'
        '[[check]]\nop = "Tanh"\ndtypes = ["float16"]\ntarget = "interrupts2:f"\nmode = "exhaustive"\n'
    )
    code, _, _ = cli("gate", "--config", cfg, "--json", tmp_path / "g.json")
    g = json.loads((tmp_path / "g.json").read_text())
    assert code == 1 and [c["status"] for c in g["checks"]] == ["pass", "fail"]
    assert "KeyboardInterrupt" in g["checks"][1]["reasons"][0]


@pytest.mark.parametrize("when", ["call", "import"])
def test_a_target_that_replaces_a_numpy_function_is_reported_and_undone(cli, tmp_path, monkeypatch, when):
    monkeypatch.syspath_prepend(str(tmp_path))
    patch = "np.tanh = lambda *a, **k: 0\n"
    body = (
        (patch + "def f(x):\n    return x\n")
        if when == "import"
        else ("def f(x):\n    y = np.tanh(x)\n    " + patch + "    return y\n")
    )
    module(tmp_path, f"patches_{when}", body)
    for extra in ([], ["--in-process"]):
        code, _, err = cli(
            "accuracy", "Tanh", "--dtype", "float16", "--target", f"patches_{when}:f", "--exhaustive", *extra
        )
        assert code == 1 and "replaced numpy.tanh" in err, err
    assert np.tanh(np.float32(1.0)) != 0  # put back in this process too


def test_a_forked_child_that_outlives_the_call_is_stopped_and_reported(cli, tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    module(
        tmp_path,
        "forks",
        """
        import os, time
        def f(x):
            if os.fork() == 0:
                time.sleep(600)
                os._exit(0)
            return np.tanh(x)
    """,
    )
    code, _, err = cli("accuracy", "Tanh", "--dtype", "float16", "--target", "forks:f", "--exhaustive")
    assert code == 1 and "child process" in err


def test_a_forked_child_that_returns_from_the_call_does_not_go_on_as_opcert(cli, tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    module(tmp_path, "forks_and_returns", "import os\ndef f(x):\n    os.fork()\n    return np.tanh(x)\n")
    code, out, err = cli(
        "accuracy",
        "Tanh",
        "--dtype",
        "float16",
        "--target",
        "forks_and_returns:f",
        "--exhaustive",
        "--json",
        tmp_path / "r.json",
    )
    data = json.loads((tmp_path / "r.json").read_text())
    # the child ends where it returns (it never runs opcert's code: no UnpicklingError, no orphan holding
    # the pipes); the parent's call is a kernel that forks the caller's process: a finding, with its reason
    assert code == 1 and data["status"] == "crashed" and "child process" in data["error"]
    assert "UnpicklingError" not in err


def test_a_tensor_kernels_forked_child_that_returns_does_not_go_on_as_opcert(tmp_path, monkeypatch):
    """The tensor, binary and predicate operators' targets are called without an Isolation: a child a kernel
    forks there that returns from the call (or raises out of it) is ended where it returns, and one that
    raises SystemExit is a finding, not the end of opcert. Measured in this process: a child going on as
    opcert would finish the measurement a second time and write its marker file."""
    monkeypatch.syspath_prepend(str(tmp_path))
    done = tmp_path / "done"
    module(
        tmp_path,
        "tensor_forks",
        """
        import os, sys
        def softmax(x, axis):
            if os.fork() == 0:
                if x.size % 2:
                    raise ValueError("the child raises")
                return np.exp(x) / np.exp(x).sum(axis=axis, keepdims=True)
            return np.exp(x) / np.exp(x).sum(axis=axis, keepdims=True)
        def exits(x, axis):
            sys.exit(3)
    """,
    )
    from opcert.verify.tensor.measure import measure_rows

    pid = os.getpid()
    r = measure_rows("Softmax", "tensor_forks:softmax", "float32", samples=200, isolation="none")
    if os.getpid() != pid:  # a child that went on as opcert: mark it and end without pytest's teardown
        done.write_text("a child went on")
        os._exit(0)
    for _ in range(50):  # the children end at once; give any that did not a moment to write its mark
        if done.exists():
            break
        time.sleep(0.01)
    assert not done.exists() and r.status in ("ok", "failed"), r.status
    r = measure_rows("Softmax", "tensor_forks:exits", "float32", samples=200, isolation="none")
    assert not r.ok and r.call_failures and "SystemExit: 3" in r.call_failures[0]["error"], r.call_failures[:1]


def test_a_module_that_hangs_at_import_honours_the_time_limit(cli, tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "hangs_at_import.py").write_text("import time\ntime.sleep(600)\ndef f(x):\n    return x\n")
    code, _, err = cli(
        "accuracy",
        "Tanh",
        "--dtype",
        "float16",
        "--target",
        "hangs_at_import:f",
        "--exhaustive",
        "--target-timeout",
        "2",
    )
    assert code == 1 and "did not return within 2 s" in err and "loading target" in err


def test_a_kernel_that_never_returns_meets_the_default_limit(tmp_path, monkeypatch):
    monkeypatch.setenv("OPCERT_DEFAULT_LIMIT_S", "1")  # inherited by the worker, forked or spawned
    monkeypatch.syspath_prepend(str(tmp_path))
    module(tmp_path, "sleeps", "import time\ndef f(x):\n    time.sleep(600)\n    return x\n")
    r = measure("Tanh", "sleeps:f", "float16", np.array([0.5, -0.5], dtype=np.float16))
    assert r.status == "crashed" and "did not return within 1.004 s" in r.error
    assert "default time limit for a call of 2 inputs" in r.error and "--target-timeout" in r.error


def test_default_limit_scales_with_the_call():
    from opcert.targets.base import default_timeout

    assert default_timeout(0)[0] == 60.0 and default_timeout(65536)[0] == pytest.approx(60 + 131.072)
    assert "--target-timeout" in default_timeout(10)[1]


@pytest.fixture(scope="module")
def passing_gate(tmp_path_factory):
    """One passing gate's result file and its content: the cases below differ in the hand edit, not the gate."""
    from opcert.cli import main

    d = tmp_path_factory.mktemp("passing_gate")
    return d / "g.json", _small_gate(lambda *args: main([str(a) for a in args]), d)


@pytest.mark.parametrize(
    "edit,key",
    [
        (lambda g: g["checks"][0].pop("policy"), "checks[0].policy"),
        (lambda g: g["checks"][0].pop("mode"), "checks[0].mode"),
        (lambda g: g["checks"][0].pop("reasons"), "checks[0].reasons"),
        (lambda g: g["checks"][0]["accuracy"].pop("worst_input"), "checks[0].accuracy.worst_input"),
        (lambda g: g["checks"][0]["accuracy"].__setitem__("histogram", "many"), "checks[0].accuracy.histogram"),
        (lambda g: g.pop("config"), "gate.config"),
    ],
)
def test_report_and_diff_refuse_a_hand_edited_result_with_the_key_at_fault(cli, tmp_path, passing_gate, edit, key):
    result, g = passing_gate
    g = json.loads(json.dumps(g))  # each case edits its own copy
    edit(g)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(g))
    for args in (["report", bad, "--out", tmp_path / "rep"], ["diff", result, bad]):
        code, _, err = cli(*args)
        assert code == 2 and key in err, err


def test_a_forged_ok_is_not_believed(cli, tmp_path):
    g = _small_gate(cli, tmp_path, fail=True)
    assert g["ok"] is False
    g["ok"] = True
    g["counts"] = {"pass": 1, "fail": 0, "skipped": 0}
    forged = tmp_path / "forged.json"
    forged.write_text(json.dumps(g))
    code, _, _ = cli("report", forged, "--out", tmp_path / "rep")
    assert code == 0
    html = (tmp_path / "rep" / "report.html").read_text()
    assert "Result: FAIL" in html and "Result: PASS" not in html


def _small_gate(cli, tmp_path, fail=False):
    cfg = tmp_path / "g.toml"
    cfg.write_text(
        f'[[check]]\nop = "Tanh"\ndtypes = ["float16"]\nmode = "exhaustive"\n'
        f'target = "{"bad_targets:negated" if fail else "numpy:tanh"}"\n'
    )
    cli("gate", "--config", cfg, "--json", tmp_path / "g.json")
    return json.loads((tmp_path / "g.json").read_text())


@pytest.mark.parametrize("text", ["[tool]\nopcert = 5\n", "tool = 3\n"])
def test_a_pyproject_with_a_malformed_tool_table_exits_2(cli, tmp_path, monkeypatch, text):
    (tmp_path / "pyproject.toml").write_text(text)
    monkeypatch.chdir(tmp_path)
    code, _, err = cli("gate")
    assert code == 2 and "tool" in err


# ---- the smaller ones ----------------------------------------------------------------------------------


def test_gelu_approximate_reaches_python_targets_by_its_name(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    target = module(
        tmp_path,
        "gelu_onnx",
        """
        import math
        def f(x, approximate="none"):
            assert approximate in ("none", "tanh"), approximate
            v = x.astype(np.float64)
            if approximate == "tanh":
                y = 0.5 * v * (1 + np.tanh(math.sqrt(2 / math.pi) * (v + 0.044715 * v ** 3)))
            else:
                from math import erf
                y = 0.5 * v * (1 + np.vectorize(erf)(v / math.sqrt(2)))
            return y.astype(x.dtype)
    """,
    )
    for form in ("none", "tanh"):
        r = measure("Gelu", target, "float16", "exhaustive", approximate=form)
        assert r.status == "ok" and r.max_ulp < 2, (form, r.error)


def test_a_target_printing_to_stdout_leaves_json_dash_parseable(tmp_path):
    (tmp_path / "chatty.py").write_text(
        "import numpy as np\ndef f(x):\n    print('hello from the kernel')\n    return np.tanh(x)\n"
    )
    env = dict(os.environ, PYTHONPATH=f"{tmp_path}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    for extra in ([], ["--in-process"]):
        p = subprocess.run(
            [
                sys.executable,
                "-m",
                "opcert",
                "accuracy",
                "Tanh",
                "--dtype",
                "float16",
                "--target",
                "chatty:f",
                "--exhaustive",
                "--json",
                "-",
                *extra,
            ],
            capture_output=True,
            text=True,
            env=env,
            cwd=tmp_path,
        )
        assert p.returncode == 0, p.stderr
        assert json.loads(p.stdout)["target"] == "chatty:f" and "hello from the kernel" in p.stderr


def test_a_target_that_changes_directory_does_not_move_the_json(cli, tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "elsewhere").mkdir()
    module(
        tmp_path,
        "moves",
        f"import os\ndef f(x):\n    os.chdir({str(tmp_path / 'elsewhere')!r})\n    return np.tanh(x)\n",
    )
    monkeypatch.chdir(tmp_path)
    code, _, _ = cli(
        "accuracy",
        "Tanh",
        "--dtype",
        "float16",
        "--target",
        "moves:f",
        "--exhaustive",
        "--in-process",
        "--json",
        "r.json",
    )
    assert code == 0 and (tmp_path / "r.json").exists() and not (tmp_path / "elsewhere" / "r.json").exists()
    assert os.getcwd() == str(tmp_path)


def test_pytest_plugin_says_opcert_check_once(pytester):
    pytester.makepyfile("""
        def test_bad(opcert_check):
            opcert_check("Tanh", "numpy:tanh", "float16", max_ulp=-1)
    """)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    text = result.stdout.str()
    assert "opcert check:" in text and "opcert check: opcert check:" not in text


def test_opcerts_own_caches_of_compiled_code_are_not_a_targets_dependency(tmp_path, monkeypatch):
    """A file of opcert's kernel cache or of NUMBA_CACHE_DIR exists and is read or not depending on
    whether an earlier process compiled it: counted, the first sweep on a machine with empty caches got
    another key on its second run, and did not resume. A file elsewhere still counts."""
    from opcert.targets import dependencies

    kc, nc, other = tmp_path / "kernels", tmp_path / "numba", tmp_path / "data"
    for d in (kc, nc, other):
        d.mkdir()
        (d / "f.bin").write_bytes(b"x")
    monkeypatch.setenv("OPCERT_KERNEL_CACHE", str(kc))
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(nc))
    before = dependencies.begin()
    for d in (kc, nc, other):
        with open(d / "f.bin", "rb") as fh:
            fh.read()
    digest, cover = dependencies.end(before)
    assert cover["files"] == [str((other / "f.bin").resolve())]


OPENMP_THEN_TORCH = """
import sys

import numba
import numpy as np
from opcert import measure
from opcert.formats import get_format
from opcert.impl.tensor_run import run
from opcert.spec import get_tensor_operator
from opcert.verify.tensor.pairs import PairSweep, _all_values


@numba.njit(parallel=True)
def users_parallel_kernel(a):
    s = 0.0
    for i in numba.prange(a.size):
        s += a[i]
    return s


def torch_hardsigmoid():
    # sampled: its layout check calls torch from caller threads all the same (where the hang was)
    r = measure("HardSigmoid", "torch", "float16", "sample", samples=2000, alpha=1 / 6, beta=0.5, properties=(),
                target_timeout=60)
    return f"{r.status}:{r.error is None}"


if __name__ == "__main__":
    op, _ = get_tensor_operator("Softmax")
    fmt = get_format("float16")
    values = _all_values(fmt)[np.linspace(0, 65535, 40).astype(int)]
    PairSweep(op, fmt, lambda X: run(op, X, axis=1), 0.5, values=values).run()
    after_pairs = "numba.np.ufunc.omppool" in sys.modules, torch_hardsigmoid()
    users_parallel_kernel(np.ones(1000))
    print(after_pairs[0], after_pairs[1], numba.threading_layer(), torch_hardsigmoid())
"""


def test_torch_runs_from_two_threads_after_opcerts_pair_sweep_and_a_users_openmp_kernel(tmp_path):
    """GNU OpenMP is not fork-safe, and torch's wheel loads the same libgomp.so.1: a worker forked after numba's
    OpenMP pool started hung in torch's first call from two threads (the layout check), and torch was called
    crashed. opcert's pair sweep no longer starts that pool (its workers stay forked); where a user's numba
    kernel started it, workers are spawned."""
    if importlib.util.find_spec("torch") is None:  # not imported here: this process would then spawn its workers
        pytest.skip("torch is not installed (make test installs it)")
    script = tmp_path / "openmp_then_torch.py"
    script.write_text(OPENMP_THEN_TORCH)
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    pool_after_pairs, after_pairs, layer, after_users_kernel = out.stdout.split()[-4:]
    assert pool_after_pairs == "False" and after_pairs == "ok:True", out.stdout
    assert after_users_kernel == "ok:True", (layer, out.stdout)
