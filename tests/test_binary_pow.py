"""Pow, the binary operator (spec/binary_ops/pow.py), through every front end: the catalog, `opcert ref`, the pair
measurement (sampled and the exhaustive sweep's blocks), the gate. Expected values come from MPFR (gmpy2), IEEE 754's
table of pow's special cases written out here, and how the kernels of tests/pow_kernels.py are written; never from
opcert's outputs."""

import json
import math

import gmpy2
import numpy as np
import pytest

import opcert
from opcert.errors import UsageError
from opcert.formats import get_format
from opcert.gating.config import parse_check
from opcert.gating.run import run_check
from opcert.verify.binary import measure as M
from opcert.verify.binary import pairs as P


def mpfr_pow(a: float, b: float, fmt) -> float:
    """MPFR's pow rounded to fmt (subnormals emulated), the independent oracle."""
    ctx = gmpy2.context(
        precision=fmt.p, emin=fmt.emin - fmt.p + 2, emax=fmt.emax + 1, subnormalize=True, round=gmpy2.RoundToNearest
    )
    with gmpy2.context(ctx):
        return float(gmpy2.mpfr(a) ** gmpy2.mpfr(b))


def _run(target, dtype="float32", **kw):
    kw.setdefault("samples", 3000)
    return M.measure_pairs("Pow", target, dtype, isolation="none", **kw)


def _prop(res, name):
    return next(p for p in res.properties if p["name"] == name)


def test_the_catalog_names_pow_the_binary_operator_and_constant_pow_its_constant_form():
    assert opcert.spec.get_binary_operator("pow").name == "Pow"
    assert opcert.spec.get_binary_operator("DML_ELEMENT_WISE_POW").name == "Pow"
    assert opcert.get_operator("ConstantPow").name == "ConstantPow"
    with pytest.raises(UsageError, match="two tensors"):
        opcert.get_operator("Pow")


def test_ops_lists_pow(cli):
    code, out, _ = cli("ops", "--json")
    assert code == 0
    names = {r["name"]: r for r in json.loads(out)}
    assert names["Pow"]["kind"] == "binary" and names["Pow"]["inputs"] == ["X", "Y"]
    assert {s["key"] for s in names["Pow"]["standards"]} == {"onnx", "directml"}


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_ref_against_mpfr(cli, dtype):
    fmt = get_format(dtype)
    pairs = [(2.0, 0.5), (-8.0, 3.0), (1.5, 2.0), (0.75, -3.0), (10.0, 2.5), (-0.5, -5.0), (3.0, 7.0)]
    args = [str(v) for p in pairs for v in p]
    code, text, err = cli("ref", "Pow", "--dtype", dtype, "--json", "--", *args)
    assert code == 0, err
    out = json.loads(text)
    for (a, b), row in zip(pairs, out["results"]):
        xa = float(np.asarray(a).astype(fmt.dtype))
        want = mpfr_pow(xa, float(np.asarray(b).astype(fmt.dtype)), fmt)
        assert float(row["result"]) == want, (a, b, row)


# IEEE 754-2008 9.2.1, written out: (x, y, result)
IEEE = [
    (math.nan, 0.0, 1.0),
    (math.nan, -0.0, 1.0),
    (1.0, math.nan, 1.0),
    (2.0, math.nan, math.nan),
    (0.0, -3.0, math.inf),
    (-0.0, -3.0, -math.inf),
    (-0.0, -2.0, math.inf),
    (-0.0, 3.0, -0.0),
    (-0.0, 2.0, 0.0),
    (0.0, -math.inf, math.inf),
    (-0.0, math.inf, 0.0),
    (-1.0, math.inf, 1.0),
    (-1.0, -math.inf, 1.0),
    (0.5, -math.inf, math.inf),
    (2.0, -math.inf, 0.0),
    (0.5, math.inf, 0.0),
    (-2.0, math.inf, math.inf),
    (-math.inf, -3.0, -0.0),
    (-math.inf, -2.0, 0.0),
    (-math.inf, 3.0, -math.inf),
    (-math.inf, 2.5, math.inf),
    (math.inf, -1.0, 0.0),
    (-8.0, 1.0 / 3.0, math.nan),
]


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_the_reference_keeps_ieee_special_cases(dtype):
    fmt = get_format(dtype)
    x = np.array([t[0] for t in IEEE]).astype(fmt.dtype)
    y = np.array([t[1] for t in IEEE]).astype(fmt.dtype)
    z = opcert.spec.get_binary_operator("Pow").reference(x, y, fmt, "onnx").astype(np.float64)
    for (a, b, want), got in zip(IEEE, z):
        if math.isnan(want):
            assert math.isnan(got), (a, b, got)
        else:
            assert got == want and math.copysign(1, got) == math.copysign(1, want), (a, b, got, want)


def test_huge_even_exponents_of_minus_inf():
    """The largest binary32 value is an even integer: pow(-inf, it) is +inf, pow(-inf, -it) is +0."""
    fmt = get_format("float32")
    big = np.float32(3.4028234663852886e38)
    z = opcert.spec.get_binary_operator("Pow").reference(
        np.array([-np.inf, -np.inf], np.float32), np.array([big, -big]), fmt, "onnx"
    )
    assert z[0] == np.inf and z[1] == 0 and not np.signbit(z[1])


def test_directml_minus_inf_to_a_non_integer_power_is_nan():
    fmt = get_format("float32")
    z = opcert.spec.get_binary_operator("Pow").reference(
        np.array([-np.inf], np.float32), np.array([2.5], np.float32), fmt, "directml"
    )
    assert np.isnan(z[0])


def test_opcert_is_correctly_rounded_on_sampled_float32_pairs():
    res = _run("opcert")
    assert res.status == "ok"
    assert res.correctly_rounded == res.pairs and res.special_mismatches == 0
    assert all(p["status"] == "checked" for p in res.properties), res.properties


def test_a_binary64_kernel_passes_and_exp_of_log_fails_the_gate():
    def check(target):
        (c,) = parse_check({"op": "Pow", "target": target, "dtypes": ["float32"], "samples": 2000,
                            "max_ulp": 1.0, "isolation": "none"}, 0, "test")  # fmt: skip
        return run_check(c, "float32")

    good = check("pow_kernels:in_binary64")
    assert good.status == "pass", good.reasons
    bad = check("pow_kernels:exp_of_log_float32")
    assert bad.status == "fail"
    assert any("max ULP error" in r for r in bad.reasons), bad.reasons
    assert any("special values" in r for r in bad.reasons), bad.reasons  # NaN for (-2)^3


def test_nan_to_the_zero_refutes_special_cases():
    res = _run("pow_kernels:nan_to_the_zero_is_nan")
    p = _prop(res, "special_cases")
    assert p["status"] == "refuted"
    assert math.isnan(p["counterexample"]["x"]) and p["counterexample"]["y"] == 0
    assert res.special_mismatches > 0


def test_absolute_base_refutes_parity():
    res = _run("pow_kernels:absolute_base")
    p = _prop(res, "parity")
    assert p["status"] == "refuted"
    assert p["counterexample"]["x"] < 0 or p["counterexample"]["output_at_minus_x"] is not None


def test_one_value_off_an_exact_power_is_one_ulp():
    res = _run("pow_kernels:one_step_back", dtype="float16")
    assert res.max_ulp == 1.0  # one value of float16 below 6.25, which is exact: exactly 1 ULP
    assert res.worst["x"] == 2.5 and res.worst["y"] == 2.0 and res.worst["replayed"]


def test_broadcast_bits_refute_layout():
    res = _run("pow_kernels:other_bits_broadcast")
    p = _prop(res, "layout")
    assert p["status"] == "refuted" and p["violations"] > 0


def test_flushed_subnormals_are_counted_apart():
    res = _run("pow_kernels:flushes_subnormals")
    assert res.subnormal_flushes > 0 and res.flush_example is not None
    fmt = get_format("float32")
    e = res.flush_example
    want = mpfr_pow(e["x"], e["y"], fmt)
    assert want == e["want"] and 0 < abs(want) < 2.0**fmt.emin


def test_a_wrong_dtype_is_a_crash_result_not_opcerts():
    res = _run("pow_kernels:returns_float64")
    assert res.status == "crashed" and "float64" in res.error


def test_every_pair_blocks_against_mpfr(monkeypatch):
    """The exhaustive sweep's machinery over its first blocks (every float16 x against 64 exponents each): a kernel
    off at one pair is found there, and opcert's own code is correct at every pair of those blocks."""
    fmt = get_format("float16")
    xs = P.all_values(fmt)
    # the blocks of exponents 1.5 .. and of 2.0 ..: where pow_kernels:one_step_back is off (x = 1.5, y = 2)
    b = int(np.flatnonzero(xs.astype(np.float64) == 2.0)[0]) // P.BLOCK_ROWS
    monkeypatch.setattr(M, "_block_range", lambda nb: range(b, b + 1))
    res = M.measure_pairs("Pow", "opcert", "float16", exhaustive=True, isolation="none")
    assert res.pairs == P.BLOCK_ROWS * 65536 and res.correctly_rounded == res.pairs
    ys = xs[b * P.BLOCK_ROWS : (b + 1) * P.BLOCK_ROWS].astype(np.float64)
    rng = np.random.default_rng(3)
    z = opcert.spec.get_binary_operator("Pow").reference
    for i in rng.integers(0, 65536, 40):
        for yv in ys[::16]:
            a = float(xs[i])
            want = mpfr_pow(a, yv, fmt)
            got = float(z(np.array([a], np.float16), np.array([yv], np.float16), fmt, "onnx")[0])
            assert (math.isnan(want) and math.isnan(got)) or got == want, (a, yv)


def test_the_gates_reproduce_command_gives_its_verdict(cli):
    """The command a gate report prints for a Pow check (--require, --accept-sampled-evidence) is the gate's judgment."""
    code, _, err = cli(
        "accuracy", "Pow", "--dtype", "float16", "--target", "opcert", "--samples", "2000", "--max-ulp", "0.5",
        "--require", "all", "--accept-sampled-evidence",
    )  # fmt: skip
    assert code == 0 and "check pass" in err, err
    code, _, err = cli(
        "accuracy", "Pow", "--dtype", "float16", "--target", "pow_kernels:nan_to_the_zero_is_nan", "--samples", "2000",
        "--max-ulp", "0.5", "--require", "special_cases", "--accept-sampled-evidence", "--in-process",
    )  # fmt: skip
    assert code == 1 and "special_cases: refuted" in err, err


def test_directml_special_cases_are_those_of_g_not_of_x():
    """At scale 0.5 and bias 1, x = 1 and x = 0 are no special pairs (g = 1.5 and 1): a kernel off the correctly
    rounded value by its binary64 rounding there is measured in ULPs, not counted as wrong at a special value. Its
    binary64 g is wrong where it matters: g = 2^-149 * 0.5 + 1 rounds to 1, and pow(1, inf) = 1 where the exact
    g > 1 gives +inf (IEEE's table), which special_cases finds."""
    res = _run("pow_kernels:scaled_in_binary64", standard="directml", attrs=(("bias", 1.0), ("scale", 0.5)))
    assert res.status == "ok", res.error
    assert res.special_examples and all(math.isinf(e["y"]) for e in res.special_examples), res.special_examples
    ce = _prop(res, "special_cases")["counterexample"]
    assert math.isinf(ce["y"]) and ce["output"] == 1.0 and ce["x"] != 0
    assert res.max_ulp < 1.0


def test_prove_pow_over_the_reals(cli):
    """`opcert prove Pow`: the monotonicities and the sign over the reals by z3, what the reals cannot say
    skipped with its reason; the same facts cannot prove a false claim (the reversed order in y)."""
    import z3

    from opcert.verify.proofs import pow_reals, prove

    r = prove("Pow")
    got = {p.name: p.status for p in r.properties}
    assert got == {
        "special_cases": "skipped",
        "monotonic_base": "proved",
        "monotonic_exponent": "proved",
        "parity": "skipped",
        "nonnegative": "proved",
        "layout": "skipped",
    }
    assert all(p.note for p in r.properties if p.status == "skipped")
    claim, facts, _ = pow_reals._queries()["monotonic_exponent"]
    E = z3.Function("exp", z3.RealSort(), z3.RealSort())
    L = z3.Function("log", z3.RealSort(), z3.RealSort())
    x, y1, y2 = z3.Reals("x y1 y2")
    reversed_ = z3.Implies(z3.And(y1 <= y2, x > 1), E(y1 * L(x)) >= E(y2 * L(x)))
    assert pow_reals._decide(reversed_, facts, None)[0] == "refuted"
    assert pow_reals._decide(claim, [], None)[0] != "proved"  # without the primitive table's facts: no proof
    code, out, _ = cli("prove", "Pow")
    assert code == 0 and "monotonic_exponent" in out
    code, _, err = cli("prove", "Pow", "--dtype", "float16")
    assert code == 2 and "over the reals" in err and "--exhaustive" in err
