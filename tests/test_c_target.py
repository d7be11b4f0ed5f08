"""`c:PATH:SYMBOL` targets: C kernels compiled here with `cc -shared`, measured,
proved by enumeration, gated, and crashing without taking opcert down."""

import json
import shutil
import subprocess

import numpy as np
import pytest

pytestmark = pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler (cc) on this machine")

KERNELS = r"""
#include <math.h>
#include <stddef.h>
#include <stdint.h>

void tanh_f32(const float *x, float *y, size_t n, const float *attrs) {
    for (size_t i = 0; i < n; i++) y[i] = tanhf(x[i]);
}
void tanh_f64(const double *x, double *y, size_t n, const float *attrs) {
    for (size_t i = 0; i < n; i++) y[i] = tanh(x[i]);
}
/* LeakyRelu: attrs[0] is alpha; a single rounding, so correctly rounded */
void leaky_relu_f32(const float *x, float *y, size_t n, const float *attrs) {
    float alpha = attrs[0];
    for (size_t i = 0; i < n; i++) y[i] = x[i] >= 0.0f ? x[i] : alpha * x[i];
}
/* Relu on float16 bit patterns: negative numbers (and -0) to +0, NaN kept */
void relu_f16(const uint16_t *x, uint16_t *y, size_t n, const float *attrs) {
    for (size_t i = 0; i < n; i++) {
        uint16_t b = x[i];
        int nan = (b & 0x7fff) > 0x7c00;
        y[i] = (!nan && (b & 0x8000)) ? 0 : b;
    }
}
/* Relu on float16 bits, wrong at exactly one input: 1.0 (0x3c00) gives the next value up */
void relu_f16_one_wrong(const uint16_t *x, uint16_t *y, size_t n, const float *attrs) {
    relu_f16(x, y, n, attrs);
    for (size_t i = 0; i < n; i++) if (x[i] == 0x3c00) y[i] = 0x3c01;
}
/* HardSigmoid that forgets the upper clamp: max(0, alpha x + beta) */
void hard_sigmoid_noclamp(const float *x, float *y, size_t n, const float *attrs) {
    for (size_t i = 0; i < n; i++) {
        float v = attrs[0] * x[i] + attrs[1];
        y[i] = v < 0.0f ? 0.0f : v;
    }
}
/* tanh that dereferences NULL on inputs above 100 */
void null_deref(const float *x, float *y, size_t n, const float *attrs) {
    volatile float *p = NULL;
    for (size_t i = 0; i < n; i++) y[i] = x[i] > 100.0f ? *p : tanhf(x[i]);
}
"""


@pytest.fixture(scope="module")
def lib(tmp_path_factory):
    d = tmp_path_factory.mktemp("ckernels")
    (d / "kernels.c").write_text(KERNELS)
    so = d / "libkernels.so"
    subprocess.run(["cc", "-shared", "-fPIC", "-O2", "-o", str(so), str(d / "kernels.c"), "-lm"], check=True)
    return so


def _accuracy(cli, tmp_path, *args):
    out = tmp_path / "r.json"
    code, _, err = cli("accuracy", *args, "--json", out)
    return code, (json.loads(out.read_text()) if out.exists() else None), err


def test_a_c_kernel_is_measured(cli, tmp_path, lib):
    code, r, _ = _accuracy(
        cli, tmp_path, "Tanh", "--dtype", "float32", "--target", f"c:{lib}:tanh_f32", "--samples", "20000"
    )
    res = r["results"][0] if "results" in r else r
    assert code == 0 and res["status"] == "ok", res
    assert res["target_info"]["kind"] == "c" and res["target_info"]["version"].startswith("sha256:")
    assert 0 < res["max_ulp"] < 4  # glibc's tanhf: a few ULPs at most, not correctly rounded everywhere
    code, r, _ = _accuracy(
        cli, tmp_path, "Tanh", "--dtype", "float64", "--target", f"c:{lib}:tanh_f64", "--samples", "20000"
    )
    res = r["results"][0] if "results" in r else r
    assert code == 0 and res["max_ulp"] < 4


def test_attributes_reach_the_kernel_in_declared_order(cli, tmp_path, lib):
    code, r, _ = _accuracy(
        cli,
        tmp_path,
        "LeakyRelu",
        "--dtype",
        "float32",
        "--target",
        f"c:{lib}:leaky_relu_f32",
        "--attr",
        "alpha=0.3",
        "--samples",
        "20000",
    )
    res = r["results"][0] if "results" in r else r
    assert code == 0 and res["correctly_rounded"] == res["inputs_checked"] > 10000


def test_float16_bits_and_every_property_proved(cli, tmp_path, lib):
    out = tmp_path / "p.json"
    code, _, err = cli("prove", "Relu", "--dtype", "float16", "--target", f"c:{lib}:relu_f16", "--json", out)
    rows = json.loads(out.read_text())["reports"][0]["properties"]
    assert code == 0 and len(rows) >= 5 and all(r["status"] == "proved" for r in rows), rows
    assert all("every input enumerated on target c:" in r["method"] for r in rows)


def test_a_wrong_c_kernel_fails_the_gate_with_the_input(cli, tmp_path, lib):
    cfg = tmp_path / "g.toml"
    cfg.write_text(
        f'[[check]]\nop = "HardSigmoid"\ndtypes = ["float32"]\ntarget = "c:{lib}:hard_sigmoid_noclamp"\n'
        'samples = 20000\nmax_ulp = 1\nproofs = ["range"]\naccept_sampled_evidence = true\n'
    )
    code, out, err = cli("gate", "--config", cfg, "--json", tmp_path / "g.json")
    check = json.loads((tmp_path / "g.json").read_text())["checks"][0]
    assert code == 1 and check["status"] == "fail"
    assert any("range" in reason for reason in check["reasons"]), check["reasons"]


def test_a_segfaulting_c_kernel_is_a_failure_with_its_block(cli, tmp_path, lib):
    code, r, err = _accuracy(
        cli, tmp_path, "Tanh", "--dtype", "float32", "--target", f"c:{lib}:null_deref", "--samples", "5000"
    )
    assert code == 1 and "SIGSEGV" in err and "float32 inputs" in err
    res = r["results"][0] if "results" in r else r
    assert res["status"] == "crashed"


@pytest.mark.parametrize(
    "spec,message",
    [
        ("c:/nonexistent/libk.so:f", "no shared library at"),
        ("c:LIB:no_such_symbol", "exports no symbol 'no_such_symbol'"),
        ("c:LIB", "is not of the form c:PATH:SYMBOL"),
        ("c:LIB:1bad", "is not of the form c:PATH:SYMBOL"),
    ],
)
def test_bad_c_targets_exit_2(cli, lib, spec, message):
    code, out, err = cli("accuracy", "Tanh", "--dtype", "float16", "--target", spec.replace("LIB", str(lib)))
    assert code == 2 and message in err and "Traceback" not in err


def test_a_dtype_without_a_c_type_is_skipped_with_the_reason(lib):
    from opcert.verify.accuracy.measure import measure

    res = measure("Relu", f"c:{lib}:relu_f16", "int8", inputs=np.arange(-128, 128, dtype=np.int8))
    assert res.status == "unsupported" and "int8 has no C type" in res.error


def test_rebuilding_the_library_changes_its_fingerprint(tmp_path, lib):
    from opcert.targets.c_abi import load

    a = load(f"c:{lib}:tanh_f32").info.fingerprint
    other = tmp_path / "libk2.so"
    (tmp_path / "k.c").write_text(KERNELS + "\nint extra_symbol(void) { return 1; }\n")
    subprocess.run(["cc", "-shared", "-fPIC", "-O2", "-o", str(other), str(tmp_path / "k.c"), "-lm"], check=True)
    b = load(f"c:{other}:tanh_f32").info.fingerprint
    assert a != b and len(a) == 32
    x = np.linspace(-3, 3, 7, dtype=np.float32)
    import opcert

    y = load(f"c:{other}:tanh_f32").run(opcert.get_operator("Tanh"), x, {})
    assert np.array_equal(y, np.tanh(x))


def test_a_c_kernel_wrong_at_one_input_is_caught_by_the_gate(cli, tmp_path, lib):
    cfg = tmp_path / "g.toml"
    cfg.write_text(
        f'[[check]]\nop = "Relu"\ndtypes = ["float16"]\nmode = "exhaustive"\nmax_ulp = 0.5\n'
        f'target = "c:{lib}:relu_f16_one_wrong"\n'
    )
    code, out, err = cli("gate", "--config", cfg, "--json", tmp_path / "g.json")
    check = json.loads((tmp_path / "g.json").read_text())["checks"][0]
    acc = check["accuracy"]
    assert code == 1 and check["status"] == "fail"
    assert acc["correctly_rounded"] == 65535 and acc["worst_input_bits"] == "0x3c00"
    assert "x = 1.0 (0x3c00)" in out


TENSOR_KERNELS = r"""
#include <math.h>
#include <stddef.h>
#include <stdint.h>

/* Softmax over the trailing axes (the rows contiguous), binary64 inside, one rounding */
void softmax_f32(const float *x, float *y, const int64_t *sizes, size_t rank, const uint32_t *axes,
                 size_t axis_count, const float *attrs) {
    int64_t total = 1, n = 1;
    for (size_t k = 0; k < rank; k++) total *= sizes[k];
    for (size_t k = 0; k < axis_count; k++) n *= sizes[axes[k]];
    for (int64_t r = 0; n > 0 && r < total / n; r++) {
        const float *a = x + r * n;
        float *b = y + r * n;
        double m = -INFINITY, s = 0.0;
        for (int64_t i = 0; i < n; i++) m = a[i] > m ? a[i] : m;
        for (int64_t i = 0; i < n; i++) s += exp((double)a[i] - m);
        for (int64_t i = 0; i < n; i++) b[i] = (float)(exp((double)a[i] - m) / s);
    }
}
/* the same, dereferencing NULL on rows longer than 1,000 */
void softmax_crash(const float *x, float *y, const int64_t *sizes, size_t rank, const uint32_t *axes,
                   size_t axis_count, const float *attrs) {
    volatile float *p = NULL;
    if (sizes[rank - 1] > 1000) y[0] = *p;
    softmax_f32(x, y, sizes, rank, axes, axis_count, attrs);
}
"""


def test_c_tensor_kernels(tmp_path):
    """The tensor ABI: a careful C softmax is measured (within 1 ULP, its row properties hold on the sample);
    one that crashes on long rows fails its check with what it was doing, and opcert goes on."""
    from opcert.verify.tensor.measure import measure_rows

    (tmp_path / "t.c").write_text(TENSOR_KERNELS)
    so = tmp_path / "libt.so"
    subprocess.run(["cc", "-shared", "-fPIC", "-O2", "-o", str(so), str(tmp_path / "t.c"), "-lm"], check=True)
    good = measure_rows("Softmax", f"c:{so}:softmax_f32", "float32", standard="directml", samples=3000, max_ulp=1)
    assert good.status == "ok" and good.max_ulp <= 1 and good.elements > 100_000, good.error
    assert [p["status"] for p in good.properties if p["name"] in ("range", "row_sum", "shift")] == ["checked"] * 3
    # every code path a C kernel can be given: a row alone and in reverse order; DirectML's plain form has no
    # other axis, and the ABI no thread count: each said
    (lay,) = [p for p in good.properties if p["name"] == "layout"]
    fams = {f["family"]: f for f in lay["layouts"]}
    assert lay["status"] == "checked" and fams["alone"]["rows"] > 0 and fams["other position"]["rows"] > 0
    assert "last axis" in fams["other axis"]["not_given"] and "thread" in fams["threads"]["not_given"]
    # the declared rule for +inf entries: this kernel gives exp(inf - inf) = NaN there
    assert good.special_mismatches > 0 and good.special_examples[0]["replayed"]
    bad = measure_rows("Softmax", f"c:{so}:softmax_crash", "float32", standard="directml", samples=3000)
    assert bad.status == "crashed" and "SIGSEGV" in bad.error and "shape (1, 4096)" in bad.error, bad.error
