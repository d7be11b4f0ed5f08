"""measure(): exhaustive and sampled sweeps, targets, and deliberately wrong implementations."""

import json

import numpy as np
import pytest

from opcert.errors import UsageError
from opcert.verify.accuracy.inputs import sample
from opcert.verify.accuracy.measure import measure

KEYS = {
    "op",
    "dtype",
    "target",
    "attrs",
    "inputs_checked",
    "exhaustive",
    "max_ulp",
    "worst_input_bits",
    "worst_input",
    "worst_output",
    "worst_reference",
    "correctly_rounded",
    "nan_mismatches",
    "inf_mismatches",
    "signed_zero_mismatches",
    "elapsed_s",
}


def test_exhaustive_float16_opcert():
    r = measure("Tanh", "opcert", "float16", "exhaustive")
    assert r.inputs_checked == 65536 and r.exhaustive and r.status == "ok"
    assert r.max_ulp <= 0.5 and r.correctly_rounded == 65536
    assert KEYS <= set(r.to_dict()) and json.dumps(r.to_dict())


def test_numpy_tanh_is_audited():
    r = measure("Tanh", "numpy:tanh", "float16", "exhaustive")
    assert r.inputs_checked == 65536 and r.status == "ok"
    assert r.provenance["target_version"] == np.__version__
    assert r.nan_mismatches == 0 and r.inf_mismatches == 0


def test_nan_is_one_is_caught_with_its_input():
    r = measure("Tanh", "bad_targets:tanh_nan_is_one", "float16", "exhaustive")
    assert r.nan_mismatches == 2046  # every float16 NaN pattern: 2 signs x (2**10 - 1) payloads
    ex = r.examples["nan_mismatch"]
    assert ex["output"]["value"] == 1.0 and ex["reference"]["value"] == "nan"
    assert ex["input"]["bits"] == "0x7c01"  # the first NaN in bit order


def test_shrink_ge_at_threshold_is_caught_with_its_input():
    r = measure("Shrink", "bad_targets:shrink_ge", "float16", "exhaustive")
    # At x = +-0.5 the correct result is 0 and the wrong one +-0.5: 0.5 / 2**-24 ULP.
    assert r.max_ulp == 0.5 / 2**-24
    assert r.worst_input_bits in ("0x3800", "0xb800") and abs(r.worst_input) == 0.5
    assert r.worst_reference == 0.0 and abs(r.worst_output) == 0.5
    s = measure("Shrink", "bad_targets:shrink_ge", "float32", "sample", samples=2000)
    assert abs(s.worst_input) == 0.5  # the sample includes the thresholds and their neighbours


@pytest.mark.parametrize(
    "name,message",
    [
        ("bad_targets:crashes", "RuntimeError: kernel exploded"),
        ("bad_targets:wrong_dtype", "returned dtype float64"),
        ("bad_targets:wrong_shape", "returned shape"),
    ],
)
def test_broken_targets_fail(name, message):
    r = measure("Tanh", name, "float16", "exhaustive")
    assert r.status == "crashed" and message in r.error


@pytest.mark.parametrize(
    "target,message",
    [
        ("nosuchmodule:f", "cannot import module"),
        ("numpy:nosuchfunc", "has no 'nosuchfunc'"),
        ("numpy:pi", "not callable"),
        ("tensorrt", "unknown target"),
    ],
)
def test_bad_targets_are_usage_errors(target, message):
    with pytest.raises(UsageError, match=message):
        measure("Tanh", target, "float16", "exhaustive")


def test_float64_cannot_be_exhaustive():
    with pytest.raises(UsageError, match="float64 is sampled"):
        measure("Tanh", "opcert", "float64", "exhaustive")


def test_sample_covers_binades_specials_and_branch_points():
    import opcert
    from opcert.formats import get_format
    from opcert.spec.attrs import resolve

    op = opcert.get_operator("HardSigmoid")
    fmt = get_format("float32")
    x = sample(op, fmt, resolve(op, {}), 4000, seed=1)
    with np.errstate(invalid="ignore"):
        x64 = x.astype(np.float64)
    assert np.isnan(x64).any() and np.isinf(x64).sum() == 2 and (x64 == 0).sum() == 2
    exps = np.frexp(np.abs(x64[np.isfinite(x64) & (x64 != 0)]))[1]
    assert len(np.unique(exps)) >= 250  # every binade of binary32 (normal and subnormal)
    # the saturation points -2.5 and 2.5 (alpha = 0.2, beta = 0.5), with neighbours
    assert -2.5 in x64 and np.nextafter(np.float32(2.5), np.float32(3)) in x


def test_the_sample_takes_the_special_points_of_the_standard_measured(monkeypatch):
    """The sample's neighbours of branch points, thresholds and saturation points are those of the standard the
    check measures, not of the one its attributes would name (for every operator today the two give the same
    points: this keeps them from parting silently)."""
    from opcert.verify.accuracy import inputs

    asked = []
    real = inputs.special_points
    monkeypatch.setattr(inputs, "special_points", lambda *a: asked.append(a[3:]) or real(*a))
    res = measure("Tanh", "opcert", "float32", samples=500, standard="sonnx", properties=())
    assert res.status == "ok" and asked and all(a == ("sonnx",) for a in asked), asked


def test_signed_zero_and_flush_are_counted_apart():
    r = measure("Tanh", "bad_targets:flush_and_flip", "float16", "exhaustive")
    assert r.signed_zero_mismatches == 1  # -0 -> +0
    assert r.subnormal_flushes == 2 * 1023  # every nonzero subnormal, both signs
    assert r.examples["signed_zero_mismatch"]["input"]["bits"] == "0x8000"


def test_float64_worst_case_with_the_sign_bit_set():
    # Every input negative: the worst input's 64-bit pattern has its top bit set.
    x = -np.abs(np.random.default_rng(9).normal(0, 3, 500))
    r = measure("Celu", "bad_targets:negated", "float64", x)  # -x: wrong everywhere
    assert r.worst_input < 0 and int(r.worst_input_bits, 16) >= 2**63
    assert r.max_ulp > 1e10 and r.worst_reverified


def test_an_infinity_for_a_finite_exact_value_is_an_infinity_mismatch():
    # inf where the exact value is tiny (about 2**2098 ULP by the formula) or 0.46: no rounding of a value of
    # the finite range gives an infinity (DESIGN: an infinity must match), so it is counted apart, not a crash
    r = measure("Tanh", "bad_targets:negated_inf", "float64", np.array([1e-300, 0.5]))
    assert r.status == "ok" and r.inf_mismatches == 2 and r.max_ulp is None
    assert r.examples["inf_mismatch"]["input"]["value"] == 1e-300


def test_relu_of_the_largest_half_is_not_infinity():
    # Relu(65504) = 65504 exactly: an infinite output is an infinity mismatch, never "1 ULP" (fault round 2)
    x = np.array([65504.0, -65504.0, 1.0], dtype=np.float16)
    r = measure("Relu", "bad_targets:relu_max_to_inf", "float16", x)
    assert r.inf_mismatches == 1 and r.max_ulp == 0.0
    assert r.examples["inf_mismatch"]["input"]["bits"] == "0x7bff"


def test_float_stats_agrees_with_the_rational_definition_on_every_float16_input():
    """The compiled classification against DESIGN.md's definition in rationals,
    with MPFR's tanh (320 bits) as the exact value: every float16 input, outputs
    that are the correctly rounded one, one or many steps off, NaN, infinite, the
    other zero, or flushed to zero."""
    from fractions import Fraction

    import gmpy2

    from opcert.formats import FLOAT_FORMATS
    from opcert.spec.reference import reference_detailed
    from opcert.verify.accuracy.stats import float_stats
    from opcert.verify.ulp import ulp_error_exact

    fmt = FLOAT_FORMATS["float16"]
    bits = np.arange(1 << 16, dtype=np.uint16)
    x = bits.view(np.float16)
    ref = reference_detailed("Tanh", x, {})
    rng = np.random.default_rng(5)
    kind = rng.integers(0, 8, x.size)
    rb = ref.rounded.view(np.uint16).astype(np.int64)
    yb = np.where(kind == 1, rb + 1, np.where(kind == 2, rb - rng.integers(1, 300, x.size), rb))
    yb = np.where(kind == 3, 0x7E00, np.where(kind == 4, 0x7C00 | (rb & 0x8000), yb))  # NaN, +-inf
    yb = np.where(kind == 5, rb ^ 0x8000, np.where(kind == 6, 0, yb))  # sign flipped, +0
    y = (yb & 0xFFFF).astype(np.uint16).view(np.float16)
    keep = []
    s = float_stats(x, y, ref, fmt, keep=keep)
    err = keep[0]
    nan_mm = cr = amb_wrong = inf_mm = 0
    with gmpy2.context(gmpy2.context(precision=320)):
        for i in range(x.size):
            xi, yi, ri = float(x[i]), float(y[i]), float(ref.rounded[i])
            if np.isnan(yi) != np.isnan(ri):
                nan_mm += 1
                assert np.isnan(err[i])
                continue
            cr += int(y.view(np.uint16)[i] == ref.rounded.view(np.uint16)[i] or (np.isnan(yi) and np.isnan(ri)))
            if np.isnan(xi) or np.isnan(yi):
                assert np.isnan(err[i])
                continue
            v = Fraction(*gmpy2.tanh(gmpy2.mpfr(xi)).as_integer_ratio())
            if np.isinf(yi) and abs(v) <= 65504:  # an infinity for a value of the finite range
                inf_mm += 1
                assert np.isnan(err[i])
                continue
            want = float(ulp_error_exact(yi, v, fmt))
            if ref.ambiguous_binade[i]:  # the exact value's binade unknown to the fast path: an upper bound
                below = float(ulp_error_exact(yi, v, fmt) * 2)
                assert want - 1e-9 <= err[i] <= below * (1 + 1e-9) + 1e-9, (xi, yi, err[i], want)
                amb_wrong += yi != ri
            else:
                assert err[i] == pytest.approx(want, rel=1e-9, abs=1e-12), (xi, yi, err[i], want)
    assert (s.nan_mismatches, s.inf_mismatches, s.correctly_rounded, s.n) == (nan_mm, inf_mm, cr, x.size)
    assert inf_mm > 1000
    assert amb_wrong > 1000  # tanh saturates: wrong outputs where the midpoint is 1 were exercised
    assert s.signed_zero_mismatches == int(
        np.sum((y == 0) & (ref.rounded == 0) & (np.signbit(y) != np.signbit(ref.rounded)))
    )

    # the largest distance in representable values, from the outputs built above
    def ordinal(b):
        b = b & 0xFFFF
        return np.where(b & 0x8000, -(b & 0x7FFF), b)

    d = np.abs(ordinal(yb) - ordinal(rb))[~np.isnan(err)]
    assert s.max_distance == int(d.max())


def test_float64_default_samples_follow_the_fast_path(monkeypatch):
    """10^6 float64 samples by default where the reference has its long double fast
    path; 10^4, with the reason in the result, where every input takes the exact path
    (erf without glibc's erfl here, or a platform whose long double is binary64)."""
    import opcert
    from opcert.expr.primitives import long_double_array
    from opcert.numerics import ball
    from opcert.verify.accuracy.measure import default_samples

    small = {op.name for op in opcert.operators() if default_samples(op, "float64")[0] < 10**6}
    if ball.WIDE is None:
        assert small == {op.name for op in opcert.operators()}
    else:
        assert small == (set() if long_double_array("erf") is not None else {"Erf", "Gelu"})
    from opcert.spec import get_operator

    assert default_samples(get_operator("Tanh"), "float32") == (100_000, None)
    monkeypatch.setattr(ball, "WIDE", None)  # as where long double is binary64
    n, why = default_samples(get_operator("Tanh"), "float64")
    assert n == 10_000 and "exact path" in why and "--samples" in why
    r = measure("Tanh", "opcert", "float64", "sample")
    assert r.samples == 10_000 and any("float64 samples by default" in n for n in r.notes)
    assert "--samples 10000" in r.command
    r = measure("Tanh", "opcert", "float64", "sample", samples=50)
    assert not any("float64 samples by default" in n for n in r.notes)


def test_the_largest_errors_are_selected_as_a_full_sort_selects_them():
    """stats' selection of the TOP largest errors (a bound from a strided sample, then the values at or
    above it) gives the k-th largest value that sorting everything gives, ties and all."""
    from opcert.verify.accuracy.stats import _top_cut

    rng = np.random.default_rng(4)
    arrays = [
        rng.random(10**6),
        np.where(rng.random(300_000) < 0.97, 0.0, rng.random(300_000)),
        np.full(200_000, 0.5),
        rng.integers(0, 3, 500_000) * 0.25,
        rng.random(40),
        rng.random(9_000),
        np.concatenate([np.zeros(999_990), np.arange(10.0)]),
        np.sort(rng.random(100_000))[::-1].copy(),
    ]
    for v in arrays:
        for k in (1, 8, 33):
            if v.size > 4 * k:
                assert _top_cut(v, k) == np.sort(v)[v.size - k], (v.size, k)


def test_sorted_unique_is_numpys_unique_on_runs_and_on_random_bits():
    from opcert.verify.accuracy.inputs import sorted_unique

    rng = np.random.default_rng(8)
    run = np.sort(rng.integers(0, 1 << 40, 50_000, dtype=np.uint64))
    for a in (
        np.concatenate([run, run + np.uint64(1), run[:7]]),
        rng.integers(0, 1000, 20_000, dtype=np.uint64),
        np.zeros(0, np.uint64),
        np.array([5], np.uint64),
    ):
        assert np.array_equal(sorted_unique(a), np.unique(a))
