"""Kernels with one fault each on a path of their own (issue 50, first bullet group of its acceptance).

Each kernel below is Tanh, honest everywhere but on one path: calls shorter than 64 elements, the loop's
remainder, its 11th call on (a Python callable), 8-lane blocks that mix magnitude classes or signs, calls
longer than 2^16 or 2^20 elements, a thread other than the process's main one. Every front end measures
the same paths for a check whatever `proofs` lists, so:

- the short-call, remainder and stateful kernels fail a budget-only check (max_ulp = 1, no `proofs`) in
  the gate and in the pytest plugin, and the reproduce command the gate prints gives the same verdict;
- the mixed-lane, sign-mixed, long-call and second-thread kernels fail `proofs = "all"` with the layout
  that shows them;
- the honest kernel passes `proofs = "all"`, its layout established over every float16 input.

The expected figures come from the faults built into the kernels (which inputs, which paths, which wrong
value: computed here with NumPy from the same formulas), never from opcert's output.
"""

import json
import math
import os
import re
import shlex
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest

has_cc = shutil.which("cc") is not None

# float16 kernels of the C ABI (targets.c_abi): void f(const uint16_t *x, uint16_t *y, size_t n, const float *a),
# x and y holding float16 bits. Each output is looked up in a table made once when the library is loaded:
# GOOD[b] = tanh(x) computed in binary64 and rounded to float16 (x the float16 of bits b), CRUDE[b] = the
# rational approximation x (27 + x^2) / (27 + 9 x^2) in binary32, rounded to float16. A table keeps every
# kernel a few nanoseconds an element: opcert calls each one with ~10^9 elements per float16 check.
KERNELS = r"""
#define _GNU_SOURCE
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>

typedef uint16_t h16;
static h16 GOOD[65536], CRUDE[65536];

__attribute__((constructor)) static void tables(void) {
    for (uint32_t b = 0; b < 65536; b++) {
        _Float16 h, g, c;
        h16 u = (h16)b;
        memcpy(&h, &u, 2);
        float x = (float)h, x2 = x * x;
        g = (_Float16)tanh((double)x);
        c = (_Float16)(x * (27.0f + x2) / (27.0f + 9.0f * x2));
        memcpy(&GOOD[b], &g, 2);
        memcpy(&CRUDE[b], &c, 2);
    }
}

#define MAG(b) ((b) & 0x7fff)
#define IS_NAN(b) (MAG(b) > 0x7c00)

/* 8: honest on every path */
void tanh_honest(const h16 *x, h16 *y, size_t n, const float *a) {
    for (size_t i = 0; i < n; i++) y[i] = GOOD[x[i]];
}

/* 1: calls of fewer than 64 elements take a scalar path that saturates at |x| >= 3 (1 instead of 0.99505 at 3) */
static h16 scalar(h16 b) { return MAG(b) >= 0x4200 && !IS_NAN(b) ? (h16)((b & 0x8000) | 0x3c00) : GOOD[b]; }
void tanh_small(const h16 *x, h16 *y, size_t n, const float *a) {
    for (size_t i = 0; i < n; i++) y[i] = n < 64 ? scalar(x[i]) : GOOD[x[i]];
}

/* 2: an 8-wide body; the remainder (n % 8 elements) uses the rational approximation below |x| = 1 */
void tanh_remainder(const h16 *x, h16 *y, size_t n, const float *a) {
    size_t body = n - n % 8, i;
    for (i = 0; i < body; i++) y[i] = GOOD[x[i]];
    for (; i < n; i++) y[i] = MAG(x[i]) < 0x3c00 ? CRUDE[x[i]] : GOOD[x[i]];
}

/* 4: 8-lane blocks; a block holding a lane with |x| < 1 and a lane outside [-9, 9] (NaN lanes aside) takes
   the slow path, the rational approximation, for all its lanes */
void tanh_mixed(const h16 *x, h16 *y, size_t n, const float *a) {
    for (size_t s = 0; s < n; s += 8) {
        size_t e = s + 8 < n ? s + 8 : n;
        int in = 0, out = 0;
        for (size_t i = s; i < e; i++) {
            in |= MAG(x[i]) < 0x3c00;
            out |= MAG(x[i]) > 0x4880 && !IS_NAN(x[i]);
        }
        for (size_t i = s; i < e; i++) y[i] = in && out ? CRUDE[x[i]] : GOOD[x[i]];
    }
}

/* 5: 8-lane blocks; a block whose lanes (NaN lanes aside) have both signs takes the rational approximation */
void tanh_signs(const h16 *x, h16 *y, size_t n, const float *a) {
    for (size_t s = 0; s < n; s += 8) {
        size_t e = s + 8 < n ? s + 8 : n;
        int neg = 0, pos = 0;
        for (size_t i = s; i < e; i++) {
            if (IS_NAN(x[i])) continue;
            neg |= x[i] >> 15;
            pos |= !(x[i] >> 15);
        }
        for (size_t i = s; i < e; i++) y[i] = neg && pos ? CRUDE[x[i]] : GOOD[x[i]];
    }
}

/* 6: calls longer than 2^16 elements (and, the second, than 2^20) take the rational approximation */
void tanh_long16(const h16 *x, h16 *y, size_t n, const float *a) {
    for (size_t i = 0; i < n; i++) y[i] = n > 65536 ? CRUDE[x[i]] : GOOD[x[i]];
}
void tanh_long20(const h16 *x, h16 *y, size_t n, const float *a) {
    for (size_t i = 0; i < n; i++) y[i] = n > 1048576 ? CRUDE[x[i]] : GOOD[x[i]];
}

/* 7: called from a thread other than the process's main one (gettid() != getpid()): the rational approximation */
static __thread int thread_kind;      /* 0: not known yet, 1: the main thread, 2: another */
void tanh_thread(const h16 *x, h16 *y, size_t n, const float *a) {
    if (!thread_kind) thread_kind = syscall(SYS_gettid) == getpid() ? 1 : 2;
    for (size_t i = 0; i < n; i++) y[i] = thread_kind == 1 ? GOOD[x[i]] : CRUDE[x[i]];
}
"""

# 3: a Python callable, right for its first 10 calls, then 1.5 x tanh (about 1,024 ULP off near saturation)
STATEFUL_MODULE = "kernel_paths_stateful"
STATEFUL = textwrap.dedent("""\
    import numpy as np

    CALLS = 0


    def tanh(x):
        global CALLS
        CALLS += 1
        y = np.tanh(x)
        if CALLS > 10:
            y = (y.astype(np.float32) * np.float32(1.5)).astype(x.dtype)
        return y
    """)

BUDGET_FAULTY = ("small", "remainder", "stateful")
# The command line and the pytest plugin build their check with the gate's own code (parse_check, run_check):
# CI holds each to the gate's verdict on the small-call kernel; the remainder and stateful kernels, whose paths
# the gate's own test above covers in CI (and test_front_ends' API test the stateful one), in the slow run.
FRONT_END_KERNELS = [pytest.param(k, marks=[pytest.mark.slow] if k != "small" else []) for k in BUDGET_FAULTY]
PATH_FAULTY = ("mixed", "signs", "long16", "long20", "thread")


# ---- what the kernels compute, from the same formulas ------------------------------------------------------

BITS = np.arange(65536, dtype=np.uint32).astype(np.uint16)
X = BITS.view(np.float16)
MAG = BITS & 0x7FFF
FINITE = np.isfinite(X)
with np.errstate(all="ignore"):
    _x32 = X.astype(np.float32)
    _x2 = _x32 * _x32
    CRUDE = (_x32 * (np.float32(27) + _x2) / (np.float32(27) + np.float32(9) * _x2)).astype(np.float16)
    EXACT = np.tanh(X.astype(np.float64))  # to ~1e-16: enough for ULP errors of float16 outputs
    GOOD = EXACT.astype(np.float16)
    SMALL = np.where((MAG >= 0x4200) & FINITE, np.copysign(np.float16(1), X), GOOD).astype(np.float16)
    REMAINDER = np.where(MAG < 0x3C00, CRUDE, GOOD)
    STATE = (np.tanh(X).astype(np.float32) * np.float32(1.5)).astype(np.float16)


def ulp_errors(y: np.ndarray) -> np.ndarray:
    """|y - tanh(x)| in float16 ULPs of tanh(x), for every finite x (NaN inputs: 0)."""
    with np.errstate(all="ignore"):
        e = np.maximum(np.floor(np.log2(np.abs(EXACT))), -14)
        err = np.abs(y.astype(np.float64) - EXACT) / np.exp2(e - 10)
    err[~FINITE] = 0.0
    return err


def worst(y: np.ndarray) -> tuple[float, set]:
    """The largest ULP error of outputs y and the inputs (bits) where it is reached."""
    err = ulp_errors(y)
    top = float(err.max())
    return top, {int(b) for b in BITS[err == top]}


# ---- building and running -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def lib(tmp_path_factory):
    if not has_cc:
        pytest.skip("no C compiler (cc) on this machine")
    d = tmp_path_factory.mktemp("kernel_paths")
    (d / "kernels.c").write_text(KERNELS)
    so = d / "libkernels.so"
    # no contraction into FMAs: the tables' binary32 arithmetic is the one NumPy does here
    proc = subprocess.run(
        ["cc", "-shared", "-fPIC", "-O2", "-ffp-contract=off", "-o", str(so), str(d / "kernels.c"), "-lm"],
        capture_output=True,
        text=True,
    )
    if proc.returncode and "_Float16" in proc.stderr:
        pytest.skip(f"this C compiler has no _Float16: {proc.stderr[-300:]}")
    assert proc.returncode == 0, proc.stderr
    return so


@pytest.fixture(scope="module")
def stateful_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("kernel_paths_py")
    (d / f"{STATEFUL_MODULE}.py").write_text(STATEFUL)
    return d


def target_of(lib, name: str) -> str:
    return f"{STATEFUL_MODULE}:tanh" if name == "stateful" else f"c:{lib}:tanh_{name}"


def run_gate(d, checks: str, pythonpath=None) -> dict:
    """One `opcert gate` (a process of its own) over the [[check]] tables given: {kernel: check}, and the
    gate's exit code under "exit code"."""
    cfg = d / "opcert.toml"
    cfg.write_text(checks)
    out = d / "gate.json"
    env = dict(os.environ)
    if pythonpath:
        env["PYTHONPATH"] = os.pathsep.join([str(pythonpath)] + [p for p in [env.get("PYTHONPATH")] if p])
    proc = subprocess.run(
        [sys.executable, "-m", "opcert", "gate", "--config", str(cfg), "--json", str(out)],
        capture_output=True,
        text=True,
        env=env,
    )
    assert proc.returncode in (0, 1), proc.stderr[-3000:]  # a verdict, not an error of opcert or of its use
    doc = json.loads(out.read_text())
    assert doc["ok"] == (proc.returncode == 0)
    checks = {
        c["target"].rsplit(":", 1)[-1].removeprefix("tanh_") if c["target"].startswith("c:") else "stateful": c
        for c in doc["checks"]
    }
    checks["exit code"] = proc.returncode
    return checks


@pytest.fixture(scope="module")
def budget_gate(lib, stateful_dir, tmp_path_factory):
    """The README's kind of check: a budget, no `proofs` key; every float16 input."""
    checks = "".join(
        f'[[check]]\nop = "Tanh"\ndtypes = ["float16"]\ntarget = "{target_of(lib, k)}"\n'
        f'mode = "exhaustive"\nmax_ulp = 1\n\n'
        for k in BUDGET_FAULTY
    )
    return run_gate(tmp_path_factory.mktemp("budget_gate"), checks, pythonpath=stateful_dir)


@pytest.fixture(scope="module")
def proofs_gate(lib, tmp_path_factory):
    checks = "".join(
        f'[[check]]\nop = "Tanh"\ndtypes = ["float16"]\ntarget = "{target_of(lib, k)}"\n'
        f'mode = "exhaustive"\nmax_ulp = 1\nproofs = "all"\n\n'
        for k in PATH_FAULTY + ("honest",)
    )
    return run_gate(tmp_path_factory.mktemp("proofs_gate"), checks)


def _reason(check, prefix: str) -> str:
    found = [r for r in check["reasons"] if r.startswith(prefix)]
    assert found, check["reasons"]
    return found[0]


# the worst error each budget-faulty C kernel has, and where: its wrong path's outputs against tanh
EXPECTED_WORST = {"small": worst(SMALL), "remainder": worst(REMAINDER)}


def test_the_expected_figures_are_those_of_the_faults_built_in():
    # the short-call path saturates from |x| = 3: 1 against tanh(3) = 0.99505 (ULP 2^-11 there)
    top, where = EXPECTED_WORST["small"]
    assert top == pytest.approx((1 - math.tanh(3.0)) * 2048, rel=1e-12) and where == {0x4200, 0xC200}
    # the remainder's rational approximation is worst just below |x| = 1 (about 33 ULP)
    top, where = EXPECTED_WORST["remainder"]
    assert 30 < top < 40 and all(0x3B00 <= (b & 0x7FFF) < 0x3C00 for b in where)
    # the honest path is correctly rounded; the wrong ones are wrong on more than a few inputs
    assert ulp_errors(GOOD).max() <= 0.5
    assert (ulp_errors(SMALL) > 1).sum() > 1000 and (ulp_errors(REMAINDER) > 1).sum() > 1000
    assert (ulp_errors(STATE) > 1000).sum() > 1000


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    """Bit for bit, any NaN equal to any NaN."""
    a, b = a.view(np.uint16), b.view(np.uint16)
    nan = ((a & 0x7FFF) > 0x7C00) & ((b & 0x7FFF) > 0x7C00)
    return bool(np.all((a == b) | nan))


def test_the_kernels_compute_what_the_figures_say(lib):
    """Called here through ctypes, outside opcert: each path gives the outputs the expected figures use."""
    import ctypes
    import threading

    so = ctypes.CDLL(str(lib))

    def run(name, x, in_thread=False):
        x = np.ascontiguousarray(x, dtype=np.uint16)
        y = np.empty_like(x)
        f = getattr(so, f"tanh_{name}")
        f.restype, f.argtypes = None, [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p]
        call = lambda: f(x.ctypes.data, y.ctypes.data, x.size, None)  # noqa: E731
        if in_thread:
            t = threading.Thread(target=call)
            t.start()
            t.join()
        else:
            call()
        return y

    def in_calls(name, n):  # every input, in calls of n elements
        return np.concatenate([run(name, BITS[i : i + n]) for i in range(0, BITS.size, n)])

    good, crude = GOOD.view(np.uint16), CRUDE.view(np.uint16)
    for name in ("honest", "small", "remainder", "mixed", "signs", "long16", "long20", "thread"):
        assert _same(run(name, BITS), good), name  # one call of the 65,536 inputs: the honest path
    assert _same(in_calls("small", 64), good) and _same(in_calls("small", 63), SMALL)
    assert _same(in_calls("remainder", 8), good) and _same(in_calls("remainder", 7), REMAINDER)
    assert _same(in_calls("remainder", 1), REMAINDER) and _same(in_calls("honest", 1), good)
    long16 = np.concatenate([BITS, BITS[:1]])
    assert _same(run("long16", long16), np.concatenate([crude, crude[:1]]))
    long20 = np.tile(BITS, 17)[: (1 << 20) + 1]
    assert _same(run("long20", long20[:-1]), good[long20[:-1]]) and _same(run("long20", long20), crude[long20])
    assert _same(run("thread", BITS, in_thread=True), crude) and _same(run("thread", BITS), good)
    # a vector of 8 lanes mixing the classes (or the signs) takes the other path for all its lanes
    for name, a, b in (("mixed", 0x3800, 0x4C00), ("signs", 0x3800, 0xB800), ("mixed", 0x7C00, 0x0000)):
        x = np.array([a, b] * 4 + [a] * 8, np.uint16)
        assert _same(run(name, x), np.concatenate([crude[x[:8]], good[x[8:]]])), (name, hex(a), hex(b))
    assert _same(run("mixed", np.array([0x7E00, 0x0000] * 4, np.uint16)), good[[0x7E00, 0x0000] * 4])  # NaN lanes


# ---- budget-only checks: the gate, the reproduce command, the pytest plugin ----------------------------------


def _max_ulp_in(text: str) -> float:
    m = re.search(r"max ULP error (\S+) > ", text)
    assert m, text
    return float(m.group(1))


@pytest.mark.parametrize("kernel", BUDGET_FAULTY)
def test_a_budget_only_gate_check_fails_a_kernel_wrong_on_one_path(budget_gate, kernel):
    check = budget_gate[kernel]
    assert check["policy"]["proofs"] == []
    assert check["status"] == "fail", (check["reasons"], check["accuracy"]["max_ulp"])
    assert budget_gate["exit code"] == 1
    # it fails for its budget: the wrong path's error is the check's max ULP; no property was required
    reason = _reason(check, "max ULP error")
    assert not [r for r in check["reasons"] if r.startswith("property ")], check["reasons"]
    acc = check["accuracy"]
    assert acc["max_ulp"] > 1 and _max_ulp_in(reason) == acc["max_ulp"]
    if kernel in EXPECTED_WORST:
        top, where = EXPECTED_WORST[kernel]
        assert acc["max_ulp"] == pytest.approx(top, rel=1e-9), acc
        assert int(acc["worst_input_bits"], 16) in where, acc
    else:  # from its 11th call, 1.5 x tanh: the worst over the inputs it got then, at most the worst of all
        assert acc["max_ulp"] <= ulp_errors(STATE).max() * (1 + 1e-12), acc


def _command(check) -> list:
    """The check's reproduce command as arguments: `opcert accuracy ...` carrying the check's budget (a command
    without it judges another check: one wrong by 2 ULP on every path would pass it)."""
    argv = shlex.split(check["command"])
    assert argv[:2] == ["opcert", "accuracy"], check["command"]
    assert "--max-ulp" in argv and float(argv[argv.index("--max-ulp") + 1]) == check["policy"]["max_ulp"], argv
    return argv


@pytest.mark.parametrize("kernel", FRONT_END_KERNELS)
def test_the_reproduce_command_of_a_budget_only_check_gives_its_verdict(
    budget_gate, stateful_dir, cli, tmp_path, monkeypatch, kernel
):
    check = budget_gate[kernel]
    argv = _command(check)
    monkeypatch.syspath_prepend(str(stateful_dir))
    out = tmp_path / "r.json"
    code, _, err = cli(*argv[1:], "--json", out)
    assert code == (1 if check["status"] == "fail" else 0), err[-3000:]
    res = json.loads(out.read_text())
    assert res["max_ulp"] > 1
    if kernel in EXPECTED_WORST:  # the same paths measured: the same worst error, at the same input
        assert res["max_ulp"] == check["accuracy"]["max_ulp"], (res["max_ulp"], check["accuracy"]["max_ulp"])
        assert res["worst_input_bits"] == check["accuracy"]["worst_input_bits"]


@pytest.mark.parametrize("kernel", FRONT_END_KERNELS)
def test_a_pytest_check_fails_a_kernel_wrong_on_one_path(opcert_check, lib, stateful_dir, monkeypatch, kernel):
    monkeypatch.syspath_prepend(str(stateful_dir))
    with pytest.raises(pytest.fail.Exception) as failed:
        opcert_check("Tanh", target_of(lib, kernel), "float16", max_ulp=1.0)
    text = str(failed.value)
    assert "reproduce: opcert accuracy Tanh" in text, text
    got = _max_ulp_in(text)
    if kernel in EXPECTED_WORST:
        assert got == pytest.approx(EXPECTED_WORST[kernel][0], rel=1e-9), text
    else:
        assert 1 < got <= ulp_errors(STATE).max() * (1 + 1e-12), text


# ---- proofs = "all": kernels wrong in mixed vectors, long calls, other threads ---------------------------------


def _layout(check) -> dict:
    return next(p for p in check["proofs"] if p["name"] == "layout")


def _families(lay, word: str) -> list:
    return [f for f in lay["layouts"] if word in f["family"].lower()]


def _differ(f) -> bool:
    return bool(f["differ"] or f["errors"])


# the word that names, in the verdict, the family each kernel's fault needs
FAMILY = {"mixed": "mixed", "signs": "mixed", "long16": "long", "long20": "long", "thread": "thread"}
# families made of windows of the bit-ordered inputs (every length and position, offsets, in place): no 8-lane
# block there mixes the classes or the signs those two kernels look at (1,024 NaNs stand between +inf and -0,
# 3,200 values between 1 and 9), and no call there is longer than 2^16 or made from another thread
WINDOWS = ("calls", "lengths", "offsets", "in place")


def _neighbour_consistent(kernel: str, x_bits: int, layout: str) -> None:
    """A mixed vector holds the input, its bit-order neighbours and one neighbour value: the kernel's fault needs
    the neighbour value in one class and an input of the vector in the other."""
    m = re.search(r"neighbour (0x[0-9a-f]{4})", layout)
    if not m or "the neighbour at position" in layout:  # (the neighbour value's own output: inputs unnamed)
        return
    c = int(m.group(1), 16)
    assert (c & 0x7FFF) <= 0x7C00, layout  # a NaN lane never decides the path
    near = [(x_bits + d) & 0xFFFF for d in range(-3, 4)]
    near = [b for b in near if (b & 0x7FFF) <= 0x7C00]
    if kernel == "mixed":
        inside, outside = (lambda b: (b & 0x7FFF) < 0x3C00), (lambda b: (b & 0x7FFF) > 0x4880)
        assert (inside(c) and any(map(outside, near))) or (outside(c) and any(map(inside, near))), layout
    else:
        assert any((b >> 15) != (c >> 15) for b in near), layout


@pytest.mark.parametrize("kernel", PATH_FAULTY)
def test_a_kernel_wrong_on_a_path_fails_proofs_all_with_the_layout_that_shows_it(proofs_gate, kernel):
    check = proofs_gate[kernel]
    assert check["status"] == "fail", (check["reasons"], [(p["name"], p["status"]) for p in check["proofs"]])
    assert proofs_gate["exit code"] == 1
    reason = _reason(check, "property layout: refuted")
    lay = _layout(check)
    assert lay["status"] == "refuted"
    ce = lay["counterexample"]
    assert ce["replayed"] is True, ce
    where = ce["layout"]
    assert where in reason
    # the layout named is one where the kernel's fault is: its family, its lengths, its threads
    lengths = [int(n.replace(",", "")) for n in re.findall(r"call of ([\d,]+) element", where)]
    if kernel in ("mixed", "signs"):
        assert re.search(r"mixed|alternat|neighbour", where), where
    elif kernel == "long16":
        assert any(n > 1 << 16 for n in lengths), where
    elif kernel == "long20":
        assert any(n > 1 << 20 for n in lengths), where
    else:
        assert "thread" in where, where
    # the two outputs are the kernel's two paths for that input: the rational approximation in the layout,
    # tanh correctly rounded in the measurement's call
    b = int(ce["inputs"]["x"]["bits"], 16)
    assert int(ce["outputs"]["f(x)"]["bits"], 16) == int(CRUDE.view(np.uint16)[b]), ce
    assert int(ce["base"]["output"]["bits"], 16) == int(GOOD.view(np.uint16)[b]), ce
    if kernel in ("mixed", "signs"):
        _neighbour_consistent(kernel, b, where)
    # the family the fault needs refutes it; those that cannot show it do not
    fams = _families(lay, FAMILY[kernel])
    assert fams and any(_differ(f) for f in fams), lay["layouts"]
    for f in lay["layouts"]:
        if f["family"] in WINDOWS:
            assert not _differ(f), f
        if kernel == "thread" and "thread" not in f["family"]:
            assert not _differ(f), f
        if kernel == "long20" and "mixed" in f["family"]:  # vectors of 2 x 65,536 elements: below 2^20
            assert not _differ(f), f
    if kernel in ("long16", "long20"):
        parts = {p["layout"]: p["differ"] for f in fams for p in f.get("parts", [])}
        for name, n in parts.items():  # every call longer than the threshold, none shorter
            m = re.search(r"call of ([\d,]+) element", name)
            if m and "path-dependent" not in name:
                size = int(m.group(1).replace(",", ""))
                limit = 1 << (16 if kernel == "long16" else 20)
                assert (n > 0) == (size > limit), (name, n)
    # the accuracy of the check is the worst over its paths: the wrong path's error, far above the budget; and
    # that path gives NaN for x = +-inf (the rational approximation's inf / inf; tanh(+-inf) = +-1), in every
    # layout of that path that holds an infinity: no finite figure stands for it
    assert int(CRUDE.view(np.uint16)[0x7C00]) & 0x7FFF > 0x7C00
    acc = check["accuracy"]
    assert acc["max_ulp"] > 1
    _reason(check, "max ULP error")
    assert math.isinf(acc["max_ulp"]) or acc.get("nan_mismatches"), (
        acc["max_ulp"],
        acc["worst_input"],
        acc.get("worst_layout"),
        acc.get("nan_mismatches"),
    )


def test_the_honest_kernel_passes_proofs_all_with_every_family_enumerated(proofs_gate):
    check = proofs_gate["honest"]
    assert check["status"] == "pass", check["reasons"]
    assert check["accuracy"]["max_ulp"] <= 0.5
    lay = _layout(check)
    assert lay["status"] in ("proved", "enumerated") and lay["violations"] == 0, lay
    for word in ("mixed", "long", "thread"):
        fams = _families(lay, word)
        assert fams, [f["family"] for f in lay["layouts"]]
        for f in fams:
            assert f["evaluated"] > 0 and f["complete"] and not _differ(f), f
    calls = next(f for f in lay["layouts"] if f["family"] in ("calls", "lengths"))
    assert calls["complete"] and calls["evaluated"] == 65536 * 129 * 130 // 2
    for p in check["proofs"]:
        assert p["status"] in ("proved", "enumerated", "holds"), p


def test_the_reproduce_command_of_the_honest_check_passes(proofs_gate, cli, tmp_path):
    check = proofs_gate["honest"]
    argv = _command(check)
    out = tmp_path / "r.json"
    code, _, err = cli(*argv[1:], "--json", out)
    assert code == 0, err[-3000:]
    res = json.loads(out.read_text())
    assert res["max_ulp"] == check["accuracy"]["max_ulp"]
