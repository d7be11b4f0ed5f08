"""DirectML's ScaleBias rounded in the tensor's type, the `+rounded` variant of a standard (spec/scale_bias.py).
Expected values come from MPFR (gmpy2: the rounding of the exact rational x * scale + bias, and e^ of it) and from
how tests/sb_kernels.py's kernels are written; never from opcert's outputs."""

import json
import math
from fractions import Fraction

import gmpy2
import numpy as np
import pytest
from conftest import all_16bit

import opcert
from opcert.errors import UsageError
from opcert.formats import get_format
from opcert.gating.config import parse_check
from opcert.gating.run import run_check
from opcert.spec.scale_bias import rounded_argument
from opcert.verify.accuracy.measure import measure

SB = {"scale": 0.5, "bias": 1.0}


def _context(fmt):
    return gmpy2.context(
        precision=fmt.p, emin=fmt.emin - fmt.p + 2, emax=fmt.emax + 1, subnormalize=True, round=gmpy2.RoundToNearest
    )


def mpfr_round(q: Fraction, fmt) -> float:
    with gmpy2.context(_context(fmt)):
        return float(gmpy2.mpfr(gmpy2.mpq(q.numerator, q.denominator)))


@pytest.mark.parametrize(
    "dtype, scale, bias",
    [("float16", 0.5, 1.0), ("float16", -2.5, 0.1), ("bfloat16", 3.0, -1e-3), ("float16", 1e-4, 1.0)],
)
def test_the_rounded_argument_is_mpfrs_rounding_of_the_exact_sum(dtype, scale, bias):
    fmt = get_format(dtype)
    x = all_16bit(dtype)
    s, b = float(np.float32(scale)), float(np.float32(bias))
    got = rounded_argument(x, {"scale": s, "bias": b}, fmt).astype(np.float64)
    with np.errstate(invalid="ignore"):  # ml_dtypes warns when widening NaN
        x64 = x.astype(np.float64)
    for xi, gi in zip(x64[::7], got[::7]):
        if math.isnan(xi):
            assert math.isnan(gi)
        elif math.isinf(xi):
            assert gi == (xi if s > 0 else -xi)
        else:
            want = mpfr_round(Fraction(xi) * Fraction(s) + Fraction(b), fmt)
            assert gi == want, (xi, gi, want)


def test_float32_and_float64_arguments_on_midpoints():
    """Sums that land on a rounding midpoint of the format, and beside one by less than binary64 can hold."""
    for dtype in ("float32", "float64"):
        fmt = get_format(dtype)
        one = np.asarray(1.0, dtype=fmt.dtype)
        ulp = float(np.nextafter(one, np.asarray(2.0, dtype=fmt.dtype))) - 1.0
        xs = np.array([1.0, 1.0 + ulp, 3.0, -1.0, 1e-30], dtype=fmt.dtype)
        for bias in (ulp / 2, ulp / 2 + 2.0**-60, -(ulp / 2), float(np.float32(1e-8))):
            b = float(np.float32(bias)) if dtype == "float32" else bias
            a = {"scale": 1.0, "bias": float(np.float32(b))}
            got = rounded_argument(xs, a, fmt).astype(np.float64)
            for xi, gi in zip(xs.astype(np.float64), got):
                want = mpfr_round(Fraction(float(xi)) + Fraction(a["bias"]), fmt)
                assert gi == want, (dtype, xi, a, gi, want)


def test_the_overflow_threshold_is_a_midpoint_too():
    """32768 * 1.99951171875 = 65520, float16's overflow threshold: a bias of +-2^-100 puts the exact sum on either
    side of it (+inf above, the largest finite value 65504 below), which binary64's sum cannot hold."""
    fmt = get_format("float16")
    x = np.array([32768.0], dtype=np.float16)
    for bias, want in ((2.0**-100, math.inf), (-(2.0**-100), 65504.0)):
        a = {"scale": 1.99951171875, "bias": bias}
        assert mpfr_round(Fraction(32768) * Fraction(a["scale"]) + Fraction(bias), fmt) == want
        assert float(rounded_argument(x, a, fmt)[0]) == want


def _exp_float16(target, standard):
    return measure("Exp", target, "float16", "exhaustive", attrs=SB, standard=standard)


def test_a_float16_scale_bias_is_told_apart_from_an_exact_one():
    """The kernel that rounds x * 0.5 + 1 in float16 is correctly rounded under directml+rounded and several ULPs off
    under the exact directml reading; the exact kernel the other way round."""
    in_f16 = "sb_kernels:exp_scale_bias_in_float16"
    exact = "sb_kernels:exp_scale_bias_exact"
    a = _exp_float16(in_f16, "directml+rounded")
    b = _exp_float16(in_f16, "directml")
    c = _exp_float16(exact, "directml")
    d = _exp_float16(exact, "directml+rounded")
    assert a.correctly_rounded == a.inputs_checked == 65536 and a.max_ulp <= 0.5
    assert c.correctly_rounded == c.inputs_checked == 65536 and c.max_ulp <= 0.5
    assert b.max_ulp > 4 and d.max_ulp > 4
    assert a.standard == "directml+rounded" and "--standard directml+rounded" in a.command


def test_the_reference_of_the_variant_is_e_to_the_rounded_argument():
    fmt = get_format("float16")
    x = np.array([0.0, 1.0, 3.0, -7.5, 11.0, 0.0999755859375], dtype=np.float16)
    got = opcert.reference("Exp", x, standard="directml+rounded", **SB)
    with gmpy2.context(_context(fmt)):
        for xi, gi in zip(x.astype(np.float64), got.astype(np.float64)):
            u = mpfr_round(Fraction(xi) * Fraction(SB["scale"]) + Fraction(SB["bias"]), fmt)
            assert gi == float(gmpy2.exp(gmpy2.mpfr(u))), (xi, gi)


def test_opcerts_code_runs_the_variant_too():
    x = all_16bit("float16")
    got = opcert.run("Exp", x, standard="directml+rounded", **SB)
    ref = opcert.reference("Exp", x, standard="directml+rounded", **SB)
    assert np.array_equal(got.view(np.uint16)[~np.isnan(ref)], ref.view(np.uint16)[~np.isnan(ref)])


def test_the_variant_is_only_for_a_scale_bias_and_not_proved():
    with pytest.raises(UsageError, match="no ScaleBias"):
        opcert.reference("Exp", np.zeros(2, np.float16), standard="onnx+rounded")
    rep = opcert.prove("Exp", "float16", attrs=SB, standard="directml+rounded")
    assert rep.properties and all(p.status == "skipped" and "rounds x * scale + bias" in p.note for p in rep.properties)


def test_the_gate_and_the_cli_take_the_variant(cli):
    (c,) = parse_check(
        {"op": "Exp", "target": "sb_kernels:exp_scale_bias_in_float16", "dtypes": ["float16"], "mode": "exhaustive",
         "standard": "directml+rounded", "attrs": SB, "max_ulp": 0.5, "isolation": "none"}, 0, "test",
    )  # fmt: skip
    assert run_check(c, "float16").status == "pass"
    code, out, err = cli(
        "accuracy", "Exp", "--dtype", "float16", "--target", "opcert", "--standard", "directml+rounded",
        "--attr", "scale=0.5", "--attr", "bias=1", "--exhaustive", "--json", "-",
    )  # fmt: skip
    assert code == 0, err
    assert json.loads(out)["standard"] == "directml+rounded"
    code, _, err = cli(
        "accuracy", "Exp", "--dtype", "float32", "--target", "opcert", "--standard", "directml+rounded",
        "--attr", "scale=0.5", "--attr", "bias=1", "--exhaustive",
    )  # fmt: skip
    assert code == 2 and "exact reading" in err
