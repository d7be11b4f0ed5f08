"""Every code path of a kernel: the `layout` property (verify.paths.layout).

Kernels right in their vector body and wrong only on another path (the loop's
remainder, short calls, the elements before an aligned address, in place,
strided views, empty arrays) fail; the same kernel made position-independent
passes. Where a real runtime is layout-dependent, the example opcert reports
is replayed here with the runtime itself, outside opcert.
"""

import contextlib
import importlib
import importlib.util
import json
import math
import re
import shutil
import subprocess
import sys
import textwrap
import time
from fractions import Fraction

import numpy as np
import pytest

from opcert.formats import get_format
from opcert.spec import operators
from opcert.verify.accuracy.measure import measure
from opcert.verify.paths.layout import byte_offsets, longest

has_cc = shutil.which("cc") is not None
has_torch = importlib.util.find_spec("torch") is not None

PATHS = r"""
#include <math.h>
#include <stddef.h>
#include <stdint.h>
static float good(float x) { return (float)tanh((double)x); }
static float crude(float x) { float x2 = x * x; return x * (27.0f + x2) / (27.0f + 9.0f * x2); }
void tanh_good(const float *x, float *y, size_t n, const float *a) {
    for (size_t i = 0; i < n; i++) y[i] = good(x[i]);
}
/* right in its 8-wide body, 1 - 2/(e^2x + 1) in the remainder */
void tanh_remainder(const float *x, float *y, size_t n, const float *a) {
    size_t body = n - n % 8, i;
    for (i = 0; i < body; i++) y[i] = good(x[i]);
    for (; i < n; i++) y[i] = 1.0f - 2.0f / (expf(2.0f * x[i]) + 1.0f);
}
/* a crude rational approximation for calls shorter than 64 elements */
void tanh_short(const float *x, float *y, size_t n, const float *a) {
    for (size_t i = 0; i < n; i++) y[i] = n < 64 ? crude(x[i]) : good(x[i]);
}
/* the elements before the first 32-byte-aligned address take the crude path */
void tanh_unaligned(const float *x, float *y, size_t n, const float *a) {
    size_t i = 0;
    while (i < n && ((uintptr_t)(x + i) & 31)) { y[i] = crude(x[i]); i++; }
    for (; i < n; i++) y[i] = good(x[i]);
}
/* wrong only when called in place (x == y) */
void tanh_aliased(const float *x, float *y, size_t n, const float *a) {
    int same = (const float *)y == x;
    for (size_t i = 0; i < n; i++) y[i] = same ? crude(x[i]) : good(x[i]);
}
"""


@pytest.fixture(scope="module")
def paths(tmp_path_factory):
    if not has_cc:
        pytest.skip("no C compiler (cc) on this machine")
    d = tmp_path_factory.mktemp("paths")
    (d / "paths.c").write_text(PATHS)
    so = d / "libpaths.so"
    subprocess.run(["cc", "-shared", "-fPIC", "-O2", "-o", str(so), str(d / "paths.c"), "-lm"], check=True)
    return so


def _layout_reason(check) -> str:
    found = [r for r in check["reasons"] if r.startswith("property layout: refuted")]
    assert found, check["reasons"]
    return found[0]


def test_every_operator_declares_layout_invariance_and_all_requires_it():
    from opcert import policy
    from opcert.spec.attrs import resolve

    for op in operators():
        kinds = [p.kind for p in op.properties]
        assert kinds.count("layout") == 1, op.name
        required, _ = policy.required_properties(op, "all", resolve(op))
        assert "layout" in required, op.name


def test_lengths_cover_two_64_byte_vectors_of_binary32_lanes():
    # the bar: L >= 129 for 16-bit formats; offsets break 16-, 32- and 64-byte alignment
    assert longest(get_format("float16")) >= 129 and longest(get_format("bfloat16")) >= 129
    assert longest(get_format("float32")) >= 2 * 16 + 1 and longest(get_format("float64")) >= 2 * 8 + 1
    for dt, size in (("float16", 2), ("float32", 4), ("float64", 8)):
        offs = byte_offsets(get_format(dt))
        assert all(o % size == 0 and 0 < o < 64 for o in offs)
        assert any(o % 16 for o in offs) or size == 16
        assert 16 in offs and 32 in offs and 48 in offs


SYMBOLS = ("tanh_good", "tanh_remainder", "tanh_short", "tanh_unaligned", "tanh_aliased")


@pytest.fixture(scope="module")
def c_gate(paths, tmp_path_factory):
    """One `opcert gate` over the five kernels (proofs = "all", max_ulp = 1, sample mode): {symbol: check}."""
    d = tmp_path_factory.mktemp("c_gate")
    cfg = d / "opcert.toml"
    cfg.write_text(
        "".join(
            f"""
[[check]]
op = "Tanh"
dtypes = ["float32"]
target = "c:{paths}:{sym}"
samples = 2000
max_ulp = 1
proofs = "all"
accept_sampled_evidence = true
"""
            for sym in SYMBOLS
        )
    )
    out = d / "gate.json"
    proc = subprocess.run(
        [sys.executable, "-m", "opcert", "gate", "--config", str(cfg), "--json", str(out)],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 1, proc.stderr[-2000:]  # some checks fail, none is an error of opcert
    from opcert.report.diff import load_gate

    load_gate(str(out))  # the result is one that opcert report and opcert diff read back
    return {c["target"].rsplit(":", 1)[1]: c for c in json.loads(out.read_text())["checks"]}


@pytest.mark.parametrize(
    "symbol, where",
    [
        ("tanh_remainder", r"a call of (\d+) element\(s\), position (\d+)"),
        ("tanh_short", r"a call of (\d+) element\(s\)"),
        ("tanh_unaligned", r"a call of \d+ element\(s\) at (\d+) bytes past a 64-byte boundary, position (\d+)"),
        ("tanh_aliased", r"a call of \d+ element\(s\) in place"),
    ],
)
def test_a_c_kernel_wrong_on_one_path_fails_the_gate_with_that_layout(c_gate, symbol, where):
    check = c_gate[symbol]
    assert check["status"] == "fail"
    reason = _layout_reason(check)
    m = re.search(where, reason)
    assert m, reason
    if symbol == "tanh_remainder":  # the layout named is a remainder position of the 8-wide loop
        n, p = int(m.group(1)), int(m.group(2))
        assert n % 8 and p >= n - n % 8
    if symbol == "tanh_short":
        assert int(m.group(1)) < 64
    if symbol == "tanh_unaligned":  # before the first 32-byte-aligned address
        off, p = int(m.group(1)), int(m.group(2))
        assert off % 32 and 4 * p < 32 - off % 32
    lay = next(p for p in check["proofs"] if p["name"] == "layout")
    assert lay["status"] == "refuted" and lay["counterexample"]["replayed"] is True
    # the accuracy of the check is the worst over the layouts: the wrong path's error is > 1 ULP
    assert any(r.startswith("max ULP error") for r in check["reasons"]) or symbol == "tanh_aliased"
    acc = check["accuracy"]
    assert acc.get("worst_layout") or symbol != "tanh_short", acc
    if acc.get("worst_layout"):  # the worst is in another layout: its exact value is given too (mpmath's)
        import mpmath

        with mpmath.workdps(50):
            assert acc["worst_exact"] == f"{float(mpmath.tanh(mpmath.mpf(acc['worst_input']))):.17g}", acc


def test_the_same_kernel_position_independent_passes(c_gate):
    check = c_gate["tanh_good"]
    assert check["status"] == "pass", check["reasons"]
    lay = next(p for p in check["proofs"] if p["name"] == "layout")
    assert lay["status"] == "checked" and lay["violations"] == 0
    fams = {f["family"]: f for f in lay["layouts"]}
    L = longest(get_format("float32"))
    n = 2000  # at most the sample's distinct inputs go through each layout
    assert set(fams) == {"calls", "offsets", "in place", "mixed vectors", "long calls", "caller threads"}
    # every length 1..L, every input at every position: sum(n for n in 1..L) outputs per input
    per_input = L * (L + 1) // 2
    assert fams["calls"]["evaluated"] % per_input == 0 and fams["calls"]["evaluated"] // per_input <= n
    assert fams["offsets"]["evaluated"] == len(byte_offsets(get_format("float32"))) * L * (
        fams["calls"]["evaluated"] // per_input
    )


def test_a_c_kernel_is_proved_layout_invariant_by_enumeration_in_float16(tmp_path):
    if not has_cc:
        pytest.skip("no C compiler (cc) on this machine")
    src = tmp_path / "r.c"
    src.write_text(
        "#include <stddef.h>\n#include <stdint.h>\nvoid relu(const uint16_t *x, uint16_t *y, size_t n, "
        "const float *a) { for (size_t i = 0; i < n; i++) { uint16_t b = x[i]; "
        "y[i] = ((b & 0x7fff) <= 0x7c00 && (b & 0x8000)) ? 0 : b; } }\n"
    )
    so = tmp_path / "libr.so"
    subprocess.run(["cc", "-shared", "-fPIC", "-O2", "-o", str(so), str(src)], check=True)
    res = measure("Relu", f"c:{so}:relu", "float16", "exhaustive", properties=("layout",))
    lay = res.properties[-1]
    assert lay["status"] == "proved", lay
    calls = next(f for f in lay["layouts"] if f["family"] == "calls")
    assert calls["evaluated"] == 65536 * 129 * 130 // 2 and calls["complete"]


@contextlib.contextmanager
def _kernel_module(tmp_path, body: str):
    """A module kern_layout whose tanh(x) is `body`, importable inside the block: its target name."""
    mod = tmp_path / "kern_layout.py"
    mod.write_text("import numpy as np\n\n\ndef tanh(x):\n" + textwrap.indent(textwrap.dedent(body), "    "))
    sys.path.insert(0, str(tmp_path))
    try:
        yield "kern_layout:tanh"
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("kern_layout", None)


@pytest.mark.parametrize(
    "body, family",
    [
        (
            "y = np.tanh(x)\nif x.size < 40:\n    y = (x * (27 + x * x) / (27 + 9 * x * x)).astype(x.dtype)\nreturn y",
            "calls",
        ),
        (
            "y = np.tanh(x)\nif not x.flags.c_contiguous:\n    y = np.nextafter(y, np.inf).astype(x.dtype)\nreturn y",
            "lengths",
        ),
        ("if x.size == 0:\n    raise ValueError('empty')\nreturn np.tanh(x)", "strides and shapes"),
    ],
)
def test_a_python_callable_that_depends_on_its_layout_is_refuted(tmp_path, body, family):
    with _kernel_module(tmp_path, body) as name:
        res = measure("Tanh", name, "float16", "exhaustive", properties=("layout",), isolation="none")
    lay = res.properties[-1]
    assert lay["status"] == "refuted"
    fam = next(f for f in lay["layouts"] if f["family"] == family)
    assert fam["differ"] or fam["errors"], lay["layouts"]


def test_rows_go_in_calls_of_bounded_size_and_a_refutation_names_its_row_in_that_call(tmp_path, monkeypatch):
    """The rows of a length go to the target in calls of about ROW_BLOCK elements (a whole number of 32 rows:
    each row keeps the alignment it has in one view of every row). A kernel wrong on row 40 of a call of 320
    rows of 3 is refuted in the lengths family with that row and call named, replayed on that call alone."""
    from opcert.verify.paths import layout

    monkeypatch.setattr(layout, "ROW_BLOCK", 1024)  # 3-element rows: calls of 320 rows (1024 // 3 // 32 * 32)
    shapes = []
    body = (
        "y = np.tanh(x)\nif x.ndim == 2 and x.shape[1] == 3:\n    SHAPES.append(x.shape)\n"
        "if x.shape == (320, 3):\n    y[40] = np.nextafter(y[40], np.float16(np.inf))\nreturn y"
    )
    with _kernel_module(tmp_path, body) as name:
        importlib.import_module("kern_layout").SHAPES = shapes
        res = measure("Tanh", name, "float16", "exhaustive", properties=("layout",), isolation="none")
    lay = res.properties[-1]
    assert lay["status"] == "refuted"
    fam = next(f for f in lay["layouts"] if f["family"] == "lengths")
    nv, rest = divmod(fam["evaluated"], 129 * 130 // 2)  # every input at every position of 1..129
    assert rest == 0 and nv > 320 and fam["differ"] > 0
    assert shapes[:-1] == [(320, 3)] * (nv // 320) + [(nv % 320, 3)] * (nv % 320 > 0)  # then the replay's call
    ce = lay["counterexample"]
    assert "row 40 of a 2-D view of 320 rows of 3 elements (row stride 4), position 0" in ce["layout"], ce
    assert ce["replayed"] is True and shapes[-1] == (320, 3)


def test_a_correct_python_callable_is_checked_not_proved_and_says_why():
    res = measure("Tanh", "numpy:tanh", "float16", "exhaustive", properties=("layout",))
    lay = res.properties[-1]
    assert lay["status"] == "checked" and lay["violations"] == 0
    assert "checked, not proved" in lay["note"] and "cannot be enumerated" in lay["note"]
    assert "threads" in lay["note"]


@pytest.fixture(scope="module")
def torch_gate(tmp_path_factory):
    """One `opcert gate` of torch's float32 Elu and Softplus (proofs = "all"): {op: check}."""
    if not has_torch:
        pytest.skip("torch is not installed (opcert[torch])")
    d = tmp_path_factory.mktemp("torch_gate")
    cfg = d / "opcert.toml"
    cfg.write_text(
        '[[check]]\nop = ["Elu", "Softplus"]\ndtypes = ["float32"]\ntarget = "torch"\nsamples = 2000\n'
        'max_ulp = 1\nproofs = "all"\naccept_sampled_evidence = true\n'
    )
    out = d / "gate.json"
    proc = subprocess.run(
        [sys.executable, "-m", "opcert", "gate", "--config", str(cfg), "--json", str(out)],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 1, proc.stderr[-2000:]
    return {c["op"]: c for c in json.loads(out.read_text())["checks"]}


@pytest.mark.parametrize("op, fn", [("Elu", "elu"), ("Softplus", "softplus")])
def test_torch_float32_elu_and_softplus_fail_layout_invariance_with_a_replayed_example(torch_gate, op, fn):
    from runtime_helpers import torch_alone_and_inside

    from opcert.workers import run_isolated

    check = torch_gate[op]
    assert check["status"] == "fail"
    _layout_reason(check)
    lay = next(p for p in check["proofs"] if p["name"] == "layout")
    ce = lay["counterexample"]
    assert ce["replayed"] is True
    # replayed with torch itself, outside opcert (in a worker: this process does not load torch): the input
    # alone in a call, and at every position of a long one
    alone, inside = run_isolated(torch_alone_and_inside, fn, float(ce["inputs"]["x"]["value"]))
    shown = {int(ce["outputs"]["f(x)"]["bits"], 16), int(ce["base"]["output"]["bits"], 16)}
    assert len(shown) == 2 and shown <= {alone} | set(inside)
    assert len({alone} | set(inside)) >= 2  # torch itself gives two outputs for one input


@pytest.mark.skipif(not has_torch, reason="torch is not installed (opcert[torch])")
def test_torch_float16_tanh_gets_a_layout_verdict_by_enumeration():
    res = measure("Tanh", "torch", "float16", "exhaustive", properties=("layout",))
    lay = res.properties[-1]
    assert lay["status"] in ("proved", "refuted")
    assert "every input enumerated on target torch" in lay["method"]
    lengths = next(f for f in lay["layouts"] if f["family"] == "lengths")
    assert lengths["complete"] and lengths["evaluated"] == 65536 * 129 * 130 // 2
    # the bar is 10 s on 2 cores, measured quiet by bench/layout_paths.py (4.35 s); beside another test worker
    # it took up to 9.5 s, so the test only catches a gross regression
    assert lay["elapsed_s"] < 30, lay["elapsed_s"]


@pytest.mark.skipif(not has_torch, reason="torch is not installed (opcert[torch])")
def test_torch_has_one_isa_level_per_vector_extension_of_the_host():
    """The levels `--isa all` runs for torch (tests/test_isa_levels.py runs them and checks each level's result
    and the closing line's summary of them)."""
    from opcert.isa import levels

    want = [n for n, _ in levels("torch")]
    flags = open("/proc/cpuinfo").read()
    assert len(want) == 1 + ("avx2" in flags) + ("avx512f" in flags and "avx512bw" in flags)


def test_isa_of_a_target_without_a_switch_is_one_result_that_says_so(cli, tmp_path):
    out = tmp_path / "isa.json"
    code, _, err = cli(
        "accuracy",
        "Relu",
        "--dtype",
        "float32",
        "--target",
        "onnxruntime",
        "--isa",
        "all",
        "--samples",
        "500",
        "--layout-samples",
        "64",
        "--json",
        out,
    )
    if "needs its library" in err:
        pytest.skip("onnxruntime is not installed")
    doc = json.loads(out.read_text())
    assert [lv["level"] for lv in doc["levels"]] == ["host"] and "no ISA switch" in doc["note"]


def test_a_level_the_target_does_not_have_is_a_usage_error(cli):
    code, _, err = cli("accuracy", "Tanh", "--dtype", "float32", "--target", "onnxruntime", "--isa", "avx2")
    assert code == 2 and "no ISA switch" in err
    code, _, err = cli("accuracy", "Tanh", "--dtype", "float32", "--target", "numpy:tanh", "--isa", "sse9")
    assert code == 2 and "allowed:" in err


def test_the_gate_key_isa_runs_a_check_once_per_level(cli, tmp_path):
    """isa = "all" is one check per level the host has, each named by its level, with the layout samples
    given (the configuration, every level); a level's check runs in a process started with that level's
    switch (one level run here, selected with -k: each level's run compares its outputs with every other
    level's in processes of their own, which tests/test_isa_levels.py runs)."""
    from opcert.gating.config import load_config
    from opcert.isa import levels

    want = levels("numpy:tanh")
    cfg = tmp_path / "opcert.toml"
    cfg.write_text(
        '[[check]]\nop = "Tanh"\ndtypes = ["float32"]\ntarget = "numpy:tanh"\nsamples = 500\n'
        'layout_samples = 64\nmax_ulp = 1\nisa = "all"\n'
    )
    checks = load_config(str(cfg)).checks
    assert [c.isa for c in checks] == [n for n, _ in want]
    assert all(c.layout_samples == 64 and f"[isa {c.isa}]" in c.label("float32") for c in checks)
    name, env = want[-1]  # the host's best level: NumPy's dispatch targets all on
    out = tmp_path / "gate.json"
    code, _, err = cli("gate", "--config", cfg, "--json", out, "-k", name)
    (c,) = json.loads(out.read_text())["checks"]
    assert c["identity"]["isa"] == name and f"[isa {name}]" in c["name"], err
    isa = c["accuracy"]["target_info"]["details"]["numpy_isa"]
    off = env["NPY_DISABLE_CPU_FEATURES"]
    assert (f"NPY_DISABLE_CPU_FEATURES={off}" in isa) if off else "NPY_DISABLE_CPU_FEATURES" not in isa
    assert c["accuracy"]["command"].startswith("NPY_DISABLE_CPU_FEATURES=")


def test_a_bad_isa_key_names_the_key_and_what_is_allowed(cli, tmp_path):
    cfg = tmp_path / "opcert.toml"
    cfg.write_text('[[check]]\nop = "Tanh"\ndtypes = ["float32"]\ntarget = "numpy:tanh"\nisa = "sse9"\n')
    code, _, err = cli("gate", "--config", cfg)
    assert code == 2 and "isa" in err and "allowed:" in err


def test_a_check_without_the_new_keys_keeps_its_identity():
    # results saved before `isa` and `layout_samples` existed are compared by identity (opcert diff)
    from opcert.gating.config import parse

    (c,) = parse({"check": [{"op": "Tanh", "dtypes": ["float16"], "target": "numpy:tanh"}]}, "t").checks
    ident = c.identity("float16")
    assert "isa" not in ident and "layout_samples" not in ident


def test_run_each_gives_every_call_its_output_in_order_and_a_failing_call_its_failure(tmp_path):
    """Target.run_each (the layout check's row calls): opcert's own implementation one call per core, any
    other target one call after another; either way the outputs come in the order of the inputs, each
    what run() gives for that input alone, and a call that fails is that call's TargetFailure, not the end
    of the others."""
    import numpy as np

    from opcert.errors import TargetFailure
    from opcert.spec import get_operator
    from opcert.spec.attrs import resolve
    from opcert.targets import load_target

    op = get_operator("Tanh")
    attrs = resolve(op)
    rng = np.random.default_rng(3)
    xs = [rng.standard_normal(1000 + 37 * k).astype(np.float32) for k in range(9)]
    fifth_fails = "if x.size == 1000 + 37 * 4:\n    raise ValueError('fifth')\nreturn np.tanh(x)"
    with _kernel_module(tmp_path, fifth_fails) as name:
        for tgt in (load_target("opcert"), load_target(name)):
            want = [tgt.run(op, x, attrs) if x.size != 1148 or tgt.name == "opcert" else None for x in xs]
            got = list(tgt.run_each(op, (x.copy() for x in xs), attrs, [f"call {k}" for k in range(9)]))
            assert len(got) == 9 and tgt.isolation.trusted == (tgt.name == "opcert")
            for k, (g, w) in enumerate(zip(got, want)):
                if w is None:
                    assert isinstance(g, TargetFailure) and "ValueError" in str(g) and "call 4" in str(g)
                else:
                    assert g.dtype == np.float32 and np.array_equal(g.view(np.uint32), w.view(np.uint32)), k


def test_run_calls_holds_each_call_to_runs_contract(tmp_path):
    """Target.run_calls (the layout check's one-element calls, one isolation around a batch): each
    call is given its own copy (a kernel that writes into its input leaves the caller's array alone, and is
    recorded as doing so), each output is copied out of a buffer the kernel reuses, and is what run() gives
    for that input alone; an output that is not an array, or of another dtype or shape, fails as in run(),
    naming its call; a function of numpy replaced during the batch fails it and is put back."""
    import numpy as np

    from opcert.errors import TargetFailure
    from opcert.spec import get_operator
    from opcert.spec.attrs import resolve
    from opcert.targets import load_target

    op = get_operator("Tanh")
    attrs = resolve(op)
    rng = np.random.default_rng(5)
    xs = [rng.standard_normal(n).astype(np.float32) for n in (1, 2, 3, 5, 8, 13)]
    originals = [x.copy() for x in xs]
    labels = [f"call {k}" for k in range(len(xs))]
    # one output buffer per size, written again by every call of that size; the input scribbled on
    reuses = "OUT = globals().setdefault('OUT', {})\ny = OUT.setdefault(x.size, np.empty_like(x))\n" + (
        "np.tanh(x, out=y)\nx[:] = 7\nreturn y"
    )
    with _kernel_module(tmp_path, reuses) as name:
        tgt = load_target(name)
        got = tgt.run_calls(op, xs, attrs, labels, "6 calls")
        again = tgt.run_calls(op, xs, attrs, labels, "6 calls")
        assert tgt.modified_input
    for x, x0, g, h in zip(xs, originals, got, again):
        assert np.array_equal(x.view(np.uint32), x0.view(np.uint32))
        assert g.dtype == np.float32 and g.shape == x.shape
        assert np.array_equal(g.view(np.uint32), np.tanh(x0).view(np.uint32))
        assert g is not h and np.array_equal(g, h)
    for k, (body, words) in enumerate(
        [
            (
                "if x.size == 5:\n    return [0.5] * 5\nreturn np.tanh(x)",
                "returned list, not a numpy array (on call 3)",
            ),
            ("if x.size == 8:\n    return np.tanh(x.astype(np.float64))\nreturn np.tanh(x)", "dtype float64"),
            (
                "if x.size == 13:\n    return np.tanh(x)[:-1]\nreturn np.tanh(x)",
                "shape (12,); expected (13,) (on call 5)",
            ),
            ("if x.size == 2:\n    raise ValueError('two')\nreturn np.tanh(x)", "raised ValueError: two on call 1"),
        ]
    ):
        (tmp_path / str(k)).mkdir()  # a module of its own (one file rewritten within a second keeps its .pyc)
        with _kernel_module(tmp_path / str(k), body) as name:
            with pytest.raises(TargetFailure) as err:
                load_target(name).run_calls(op, xs, attrs, labels, "6 calls")
        assert words in str(err.value), (body, str(err.value))
    real_tanh = np.tanh
    (tmp_path / "patch").mkdir()
    with _kernel_module(tmp_path / "patch", "np.tanh = np.sin\nreturn np.cos(x)") as name:
        with pytest.raises(TargetFailure) as err:
            load_target(name).run_calls(op, xs, attrs, labels, "6 calls")
    assert "replaced numpy.tanh" in str(err.value) and "(on 6 calls)" in str(err.value)
    assert np.tanh is real_tanh


def _calls_under_a_limit(name: str, batched: bool) -> str:
    """In a worker: three calls of target `name` with a time limit of 2 s, one by one (run) or in one batch."""
    import numpy as np

    from opcert.spec import get_operator
    from opcert.spec.attrs import resolve
    from opcert.targets import load_target

    op = get_operator("Tanh")
    attrs = resolve(op)
    tgt = load_target(name, timeout=2.0)
    xs = [np.linspace(-1, 1, n).astype(np.float32) for n in (1, 2, 3)]
    if batched:
        tgt.run_calls(op, xs, attrs, [f"the call of {x.size}" for x in xs], "3 calls")
    else:
        for x in xs:
            tgt.run(op, x, attrs, label=f"the call of {x.size}")
    return "returned"


@pytest.mark.parametrize("batched", [False, True])
def test_a_child_forked_in_a_call_does_not_lift_the_calls_time_limit(tmp_path, batched):
    """A kernel forks; the child returns from the call, the parent goes on past the call's time limit. The child
    is ended before it leaves the call's activity (whose record it shares with the worker that forked it: leaving
    it there wiped the worker's deadline, and the overrun went unseen), so the worker is stopped at the limit."""
    from opcert.workers import WorkerLost, run_isolated

    body = (
        "import os, time\nif x.size == 2:\n    if os.fork() == 0:\n        return np.tanh(x)\n"
        "    time.sleep(30)\nreturn np.tanh(x)"
    )
    with _kernel_module(tmp_path, body) as name:
        t0 = time.monotonic()
        with pytest.raises(WorkerLost) as err:
            run_isolated(_calls_under_a_limit, name, batched)
    assert err.value.timed_out and "the call of 2" in str(err.value), str(err.value)
    assert time.monotonic() - t0 < 20


@pytest.mark.parametrize("batched", [False, True])
def test_a_call_that_fails_after_replacing_a_function_of_numpy_is_put_back_and_named(tmp_path, batched):
    """A call that raises is not checked after it as a call that returns is: the numpy function it replaced is
    put back all the same, and its failure names it; an exception whose message raises is a finding too."""
    import numpy as np

    from opcert.errors import TargetFailure
    from opcert.spec import get_operator
    from opcert.spec.attrs import resolve
    from opcert.targets import load_target

    op = get_operator("Tanh")
    attrs = resolve(op)
    xs = [np.linspace(-1, 1, n).astype(np.float32) for n in (1, 2, 3)]
    real_tanh = np.tanh
    for k, (body, words) in enumerate(
        [
            (
                "if x.size == 2:\n    np.tanh = np.sin\n    raise ValueError('two')\nreturn np.tanh(x)",
                "ValueError: two",
            ),
            (
                "class E(Exception):\n    def __str__(self):\n        raise RuntimeError('no')\n"
                "if x.size == 2:\n    raise E()\nreturn np.tanh(x)",
                "raised E (whose message could not be read",
            ),
            (  # its message is the target's code too: read under the isolation, where os._exit is a finding
                "import os\nclass E(Exception):\n    def __str__(self):\n        os._exit(0)\n"
                "if x.size == 2:\n    raise E()\nreturn np.tanh(x)",
                "raised E (whose message could not be read: its str() raised TargetExit)",
            ),
        ]
    ):
        (tmp_path / str(k)).mkdir()
        with _kernel_module(tmp_path / str(k), body) as name:
            tgt = load_target(name)
            with pytest.raises(TargetFailure) as err:
                if batched:
                    tgt.run_calls(op, xs, attrs, [f"the call of {x.size}" for x in xs], "3 calls")
                else:
                    for x in xs:
                        tgt.run(op, x, attrs, label=f"the call of {x.size}")
        assert words in str(err.value) and "the call of 2" in str(err.value), str(err.value)
        assert ("replaced numpy.tanh" in str(err.value)) == (k == 0), str(err.value)
        assert np.tanh is real_tanh


def test_run_calls_gives_plain_arrays_for_a_kernels_array_subclass(tmp_path):
    """What run_calls returns is opcert's to concatenate and compare: a kernel's ndarray subclass (whose
    __array_function__ refuses numpy's functions) comes back as a plain ndarray of its bits, and one whose dtype
    property lies about its data is judged by its data."""
    import numpy as np

    from opcert.errors import TargetFailure
    from opcert.spec import get_operator
    from opcert.spec.attrs import resolve
    from opcert.targets import load_target

    body = (
        "class Sub(np.ndarray):\n    def __array_function__(self, *a, **k):\n        raise RuntimeError('no')\n"
        "class Liar(Sub):\n    @property\n    def dtype(self):  # binary64 data that says binary32\n"
        "        return np.dtype(np.float32)\n"
        "if x.size == 3:\n    y = Liar(x.shape, np.float64)\n"
        "    np.ndarray.__setitem__(y, slice(None), np.tanh(x.astype(np.float64)))\n    return y\n"
        "y = Sub(x.shape, x.dtype)  # owns its memory: no copy out of a buffer of the target's\n"
        "np.ndarray.__setitem__(y, slice(None), np.tanh(x))\nreturn y"
    )
    op = get_operator("Tanh")
    xs = [np.linspace(-1, 1, n).astype(np.float32) for n in (1, 2)]
    with _kernel_module(tmp_path, body) as name:
        tgt = load_target(name)
        got = tgt.run_calls(op, xs, resolve(op), ["one", "two"], "2 calls")
        with pytest.raises(TargetFailure, match="returned dtype float64; expected float32 \\(on three\\)"):
            tgt.run_calls(op, [*xs, xs[1][:1].repeat(3)], resolve(op), ["one", "two", "three"], "3 calls")
    assert all(type(g) is np.ndarray for g in got)
    assert np.array_equal(np.concatenate(got).view(np.uint32), np.tanh(np.concatenate(xs)).view(np.uint32))


def test_one_element_calls_hold_each_call_to_the_contract(tmp_path, monkeypatch):
    """A target that compiles per shape gets every input in a call of one element; a kernel whose
    one-element call returns a list (where the calls of every other size return arrays) fails that family,
    named, as run() fails such a call (the batch once concatenated what the calls returned, and said only that
    the batch's outputs had another dtype)."""
    from opcert.targets import layouts, python

    monkeypatch.setattr(python, "PYTHON", dict(layouts.PYTHON, compiles_per_shape=True))
    body = "if x.size == 1:\n    return [float(np.tanh(x[0]))]\nreturn np.tanh(x)"
    with _kernel_module(tmp_path, body) as name:
        res = measure("Tanh", name, "float16", "sample", samples=300, properties=("layout",), isolation="none")
    lay = res.properties[-1]
    assert lay["status"] == "refuted", lay
    fam = next(f for f in lay["layouts"] if f["family"] == "one-element calls")
    assert (
        fam["errors"] and "returned list, not a numpy array (on a call of one element, input 0 of" in (fam["errors"][0])
    ), fam


def test_a_binary64_kernel_wrong_in_short_calls_is_refuted_and_its_worst_error_found(tmp_path):
    # binary64 bit patterns as ordinals run up to 2^63: their difference overflowed int64 (an OverflowError
    # in opcert, on torch's float64 Celu), and a NaN marker of 2^40 was itself an ordinal of binary64
    body = "y = np.maximum(x, 0.0)\nif x.size < 40:\n    y = -y\nreturn y"
    with _kernel_module(tmp_path, body) as name:
        res = measure("Relu", name, "float64", "sample", samples=2000, properties=("layout",), isolation="none")
    assert res.status == "ok", res.error
    lay = res.properties[-1]
    assert lay["status"] == "refuted"
    assert next(f for f in lay["layouts"] if f["family"] == "calls")["differ"] > 0
    # the worst over the layouts: -x for the largest x sampled, 2x / ulp(x) from the reference x
    x = res.worst_input
    assert x > 1e307 and res.max_ulp == 2 * Fraction(x) / Fraction(math.ulp(x)), (x, res.max_ulp)  # 2x: inf


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_the_one_pass_count_of_differing_rows_is_bits_differs(dtype):
    """verify.paths.layout.count_window_differ, the layout check's count over rows made of windows (row r: base[r],
    base[r + 1], ...), against formats.bits_differ on the same arrays: NaNs of other payloads and signs equal,
    +0 and -0 not, a value one bit off not, at every row length of the check and at every position."""
    import numpy as np

    from opcert.formats import bits_differ
    from opcert.verify.paths.layout import count_window_differ

    fmt = get_format(dtype)
    rng = np.random.default_rng(7)
    u = fmt.uint
    nan_bits = np.array([np.nan, -np.nan], dtype=np.float64).astype(fmt.dtype).view(u)
    base = rng.integers(0, 2**fmt.bits, 3000, dtype=np.uint64).astype(u)
    base[::50] = nan_bits[0]
    base[7::50] = 0  # +0: where got has -0 (the sign bit flipped) it differs
    mask = (1 << (fmt.bits - 1)) - 1
    inf = int(np.array([np.inf]).astype(fmt.dtype).view(u)[0])
    for n in (1, 2, 7, 33, longest(fmt)):
        rows = base.size - n
        want = np.lib.stride_tricks.as_strided(base, (rows, n), (base.itemsize, base.itemsize))
        got = want.copy()
        assert count_window_differ(got, base, u.type(mask), u.type(inf)) == 0
        nan_at = (got & u.type(mask)) > u.type(inf)
        # other NaN payloads and signs where the base has a NaN: equal
        got[nan_at] = np.where(rng.random(int(nan_at.sum())) < 0.5, u.type(inf + 1), nan_bits[1] | u.type(3))
        # and real differences: the sign bit (-0 against +0 among them), one bit of the significand
        k = rng.choice(got.size, 40, replace=False)
        flip = np.where(rng.random(40) < 0.5, 1 << (fmt.bits - 1), 1).astype(u)
        got.reshape(-1)[k] ^= flip
        got[7, :] ^= u.type(1 << (fmt.bits - 1))
        want_count = int(bits_differ(got, want, fmt).sum())
        assert want_count > 0
        assert count_window_differ(got, base, u.type(mask), u.type(inf)) == want_count, (dtype, n)


@pytest.mark.parametrize("symbol", ["tanh_good", "tanh_remainder", "tanh_aliased", "tanh_unaligned"])
def test_counted_calls_count_what_the_compared_calls_find(paths, symbol):
    """A C kernel's calls of every length are counted as they are made (LayoutSupport.count_calls) where
    nothing differs, and made again to be named where something does: the count is the number of outputs the
    calls made into arrays (LayoutSupport.calls) differ in from the measurement's own outputs, 0 exactly where
    they differ nowhere, at each length, offset and in place."""
    import numpy as np

    import opcert
    from opcert.formats import bits_differ
    from opcert.targets import load_target

    tgt = load_target(f"c:{paths}:{symbol}")
    op = opcert.get_operator("Tanh")
    fmt = get_format("float32")
    rng = np.random.default_rng(3)
    values = rng.standard_normal(500).astype(np.float32) * 3
    base = tgt.run(op, values, {})  # the measurement's call: one call of 500 (its body is 8-wide)
    nan_bits = (np.uint32(0x7FFFFFFF), np.uint32(0x7F800000))
    sup = tgt.layouts
    L = 20
    vext, bext = np.resize(values, values.size + L + 1), np.resize(base, base.size + L + 1)
    found = 0
    for n in (1, 3, 8, 9, 17):
        for offset, in_place in ((0, False), (4, False), (0, True)):
            windows = np.lib.stride_tricks.as_strided(vext, (values.size, n), (4, 4))
            y = sup.calls(op, np.ascontiguousarray(windows), {}, offset, in_place)
            want = np.lib.stride_tricks.as_strided(bext, (values.size, n), (4, 4))
            compared = int(np.count_nonzero(bits_differ(y, want, fmt)))
            counted = sup.count_calls(op, vext, bext, values.size, n, {}, offset, in_place, nan_bits)
            assert counted == compared, (symbol, n, offset, in_place, counted, compared)
            found += counted
    assert (found == 0) == (symbol == "tanh_good"), (symbol, found)


def test_a_count_the_calls_made_again_do_not_reproduce_is_never_a_pass(paths, monkeypatch):
    """Where the counted calls found outputs that differ and the same calls made again find none (a kernel whose
    bits change from one run to the next), the layout property is refuted, saying so: not proved."""
    import opcert.targets.c_abi as c_abi

    monkeypatch.setattr(c_abi, "c_count_calls", lambda func: lambda *a, **k: 1)  # one output differed, each time
    r = measure("Tanh", f"c:{paths}:tanh_good", "float32", samples=512, isolation="none")
    lay = next(p for p in r.properties if p["name"] == "layout")
    assert lay["status"] == "refuted", (lay["status"], lay.get("note"))
    assert "none when the same calls were made again" in (lay.get("note") or ""), lay.get("note")


@pytest.mark.parametrize("nv", [1, 2, 3, 7, 1000, 65537])
def test_long_calls_index_each_pass_one_position_later(nv):
    """layout.passes_shifted builds the long calls' indices from slices: they are (i + i // nv) % nv at every
    i, for calls shorter than one pass, of a pass and a remainder, and of thousands of short passes."""
    from opcert.verify.paths.layout import passes_shifted

    for size in sorted({0, 1, nv, nv + 1, 3 * nv + 77, (1 << 16) + 1}):
        i = np.arange(size, dtype=np.int64)
        assert np.array_equal(passes_shifted(nv, size), (i + i // nv) % nv), (nv, size)
