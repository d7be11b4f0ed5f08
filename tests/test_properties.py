"""Properties of any target (issue 9): complete checks over every 16-bit and
float32 input, samples for float64, and a gate that passes only what it established."""

import json
import math
from fractions import Fraction

import numpy as np
import pytest

from opcert.verify.accuracy.measure import measure

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
    code, out, _ = cli(
        "gate", "--config", cfg, "--json", tmp_path / "g.json", "--junit", tmp_path / "j.xml", "--workers", "1"
    )
    g = json.loads((tmp_path / "g.json").read_text())
    (c,) = g["checks"]
    assert code == 1 and c["accuracy"]["max_ulp"] < 3  # within its ULP budget ...
    (why,) = [r for r in c["reasons"] if r.startswith("property monotonic")]
    # ... and the failure names the adjacent pair with both outputs
    assert (
        "x1 = 0.5 (0x3800) -> 0.46240234375 (0x3766)" in why
        and "x2 = 0.50048828125 (0x3801) -> 0.4619140625 (0x3764)" in why
    )
    assert "property monotonic: refuted" in (tmp_path / "j.xml").read_text()


def test_a_kernel_outside_its_range_fails_with_the_input(cli, tmp_path):
    cfg = tmp_path / "g.toml"
    cfg.write_text(MONO.replace("tanh_not_monotone", "tanh_out_of_range").replace("max_ulp = 3", "max_ulp = 1e9"))
    code, out, _ = cli("gate", "--config", cfg, "--workers", "1")
    assert code == 1 and "property range: refuted by 1 input" in out and "-1.0009765625 (0xbc01)" in out


def test_numpy_tanh_float16_has_every_property_proved_by_enumeration(cli, tmp_path):
    cfg = tmp_path / "g.toml"
    cfg.write_text(
        '[[check]]\nop = "Tanh"\ndtypes = ["float16"]\ntarget = "numpy:tanh"\nmode = "exhaustive"\n'
        'max_ulp = 0.5\nproofs = "all"\n'
    )
    code, out, _ = cli("gate", "--config", cfg, "--json", tmp_path / "g.json", "--workers", "1")
    (c,) = json.loads((tmp_path / "g.json").read_text())["checks"]
    names = {"range", "monotonic", "odd", "zero", "nan", "limits"}
    assert {p["name"] for p in c["proofs"]} == names | {"layout"}
    assert all(
        p["status"] == "proved" and "every input enumerated on target numpy:tanh" in p["method"]
        for p in c["proofs"]
        if p["name"] in names
    )
    # a NumPy callable is called once per call from Python: its short calls are sampled, so the layout
    # property is checked, not proved, and proofs = "all" fails on it alone, saying so
    (layout,) = [p for p in c["proofs"] if p["name"] == "layout"]
    assert layout["status"] == "checked" and "cannot be enumerated" in layout["note"]
    assert code == 1 and len(c["reasons"]) == 1 and c["reasons"][0].startswith("property layout: checked")


def test_hard_sigmoid_without_its_upper_clamp_is_a_finding_not_a_crash(cli):
    code, out, err = cli(
        "accuracy",
        "HardSigmoid",
        "--dtype",
        "float16",
        "--target",
        "bad_targets:hard_sigmoid_no_upper_clamp",
        "--exhaustive",
    )
    assert code == 1 and "worst input" in out and "inf (0x7c00)" in out
    assert "property range refuted" in out and "property limits refuted" in out
    assert "refuted on bad_targets:hard_sigmoid_no_upper_clamp: range, saturated_low, saturated_high, limits" in err


def test_an_in_place_kernel_is_measured_on_what_it_was_given():
    r = measure("Tanh", "bad_targets:tanh_in_place", "float16", "exhaustive")
    assert r.correctly_rounded == 65536 and r.max_ulp <= 0.5 and r.target_modified_input
    claimed = [p for p in r.properties if p["expected"] != "not claimed"]  # DirectML's scale-bias forms: not ONNX's
    assert all(p["status"] == ("checked" if p["name"] == "layout" else "proved") for p in claimed)


SPECIAL_KERNELS = [
    ("wrong_at_inf", "limits"),
    ("wrong_at_negative_zero", "odd"),
    ("wrong_at_subnormals", "monotonic"),
    ("wrong_at_nan", "nan"),
    ("wrong_at_largest", "range"),
    ("returns_nan_payloads", None),
]


# Every kernel in float16; in bfloat16 in CI the two whose wrong inputs are the format's own (its subnormals, its
# largest value: tests/bad_targets.py reads them from the format): an infinity, -0 and the NaNs are the same inputs
# to the same checks in either format (and the NaN payloads kernel is float16's alone), run in the slow run
@pytest.mark.parametrize(
    "dtype,kernel,where",
    [
        pytest.param(
            dtype,
            kernel,
            where,
            marks=[pytest.mark.slow]
            if dtype == "bfloat16" and kernel not in ("wrong_at_subnormals", "wrong_at_largest")
            else [],
        )
        for dtype in ("float16", "bfloat16")
        for kernel, where in SPECIAL_KERNELS
    ],
)
def test_kernels_wrong_only_at_special_inputs_are_reported(kernel, where, dtype):
    r = measure("Tanh", f"bad_targets:{kernel}", dtype, "exhaustive")
    assert r.status == "ok" and r.worst_reverified is not None
    props = by_name(r)
    if where is None:  # another NaN payload is still NaN: nothing wrong
        claimed = {n: p for n, p in props.items() if p["expected"] != "not claimed"}
        assert all(p["status"] == ("checked" if n == "layout" else "proved") for n, p in claimed.items())
        assert r.nan_mismatches == 0
        return
    p = props[where]
    assert p["status"] == "refuted" and p["counterexample"]["replayed"] is True
    assert p["counterexample"]["reference"] and p["violations"] >= 1


def test_float64_properties_are_checked_not_proved(cli, tmp_path):
    r = measure("Tanh", "numpy:tanh", "float64", "sample", samples=4000)
    props = by_name(r)
    assert props["monotonic"]["status"] == "checked" and "evidence, not a proof" in props["monotonic"]["method"]
    assert props["odd"]["inputs_checked"] > 1000
    base = (
        '[[check]]\nop = "Tanh"\ndtypes = ["float64"]\ntarget = "numpy:tanh"\nsamples = 4000\nmax_ulp = 1\n'
        'proofs = ["monotonic"]\n'
    )
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


SPAN = (0x3F000000, 0x3F010000)  # magnitudes; chunks of 2**15 in these tests: the edge is 0x3f008000


def test_float32_sweep_checks_properties_across_chunks_and_signs(tmp_path):
    from opcert.targets import describe_target
    from opcert.verify.accuracy.sweep import SweepConfig, sweep

    for kernel, name in (("tanh_step_back_at_chunk_edge", "monotonic"), ("tanh_not_odd_at_one_point", "odd")):
        t = f"bad_targets:{kernel}"
        cfg = SweepConfig(
            "Tanh",
            t,
            (),
            None,
            *SPAN,
            chunk=1 << 15,
            target_fingerprint=describe_target(t).fingerprint,
            properties=("range", "monotonic", "odd"),
        )
        _, checker, _ = sweep(cfg, workers=2, checkpoint=tmp_path / kernel)
        acc = checker.acc
        assert acc[name].violations >= 1, kernel
        assert acc["range"].violations == 0


def test_float32_sweep_reports_the_pair_across_a_chunk_boundary(tmp_path):
    r = measure(
        "Tanh",
        "bad_targets:tanh_step_back_at_chunk_edge",
        "float32",
        "exhaustive",
        magnitude_range=SPAN,
        workers=2,
        checkpoint=tmp_path / "c",
    )
    mono = by_name(r)["monotonic"]
    assert mono["status"] == "refuted" and mono["violations"] == 1
    ce = mono["counterexample"]
    assert ce["inputs"]["x1"]["bits"] == "0x3f007fff" and ce["inputs"]["x2"]["bits"] == "0x3f008000"
    assert ce["outputs"]["f(x1)"]["value"] == pytest.approx(0.47)


def test_a_partial_float32_range_is_checked_not_proved(tmp_path):
    r = measure(
        "Tanh", "numpy:tanh", "float32", "exhaustive", magnitude_range=SPAN, workers=1, checkpoint=tmp_path / "c"
    )
    assert {p["status"] for p in r.properties} <= {"checked", "skipped"}


def test_black_box_enumeration_agrees_with_the_proofs_of_opcert():
    import opcert

    black = opcert.prove("Tanh", "float16", target="bad_targets:opcert_tanh")
    white = opcert.prove("Tanh", "float16")
    # layout is decided on outputs only: checked on the black box (a Python callable), not z3's to decide
    values = {p.name: p.status for p in black.properties if p.kind != "layout"}
    assert values == {p.name: p.status for p in white.properties if p.kind != "layout"}
    claimed = {p.name for p in white.properties if p.expected != "not claimed"}  # not the scale-bias forms'
    assert claimed >= {"range", "monotonic", "odd", "zero", "nan", "limits"}
    assert all(s == "proved" for n, s in values.items() if n in claimed)
    assert {p.name: p.status for p in white.properties}["layout"] == "skipped"
    assert {p.name: p.status for p in black.properties}["layout"] == "checked"


def test_prove_with_a_target_needs_a_dtype(cli):
    code, _, err = cli("prove", "Tanh", "--target", "numpy:tanh")
    assert code == 2 and "--target needs --dtype" in err


def test_prove_with_a_target_prints_and_writes_verdicts(cli, tmp_path):
    code, out, _ = cli(
        "prove",
        "Tanh",
        "--dtype",
        "float16",
        "--target",
        "bad_targets:tanh_not_monotone",
        "--json",
        tmp_path / "p.json",
    )
    data = json.loads((tmp_path / "p.json").read_text())
    (rep,) = data["reports"]
    assert code == 1 and rep["target"] == "bad_targets:tanh_not_monotone"
    statuses = {p["name"]: p["status"] for p in rep["properties"]}
    assert statuses["monotonic"] == "refuted" and statuses["range"] == "proved"
    assert "1 of 63,489 violate it" in out


def _oracle(c, x, y, bits, ybits, sign):
    """The property's counts, first and worst violation, by a plain loop over
    the inputs in value order (independent of the compiled scans)."""
    viol = []  # (key, inputs, magnitude)

    def inside(v):
        return not math.isnan(v) and (c.dom_lo is None or v >= c.dom_lo) and (c.dom_hi is None or v <= c.dom_hi)

    evaluated = 0
    if c.kind == "monotonic":
        order = sorted((i for i in range(len(x)) if inside(x[i])), key=lambda i: (x[i], not math.copysign(1, x[i]) < 0))
        for i, j in zip(order, order[1:]):
            evaluated += 1
            if x[i] == 0 and x[j] == 0:
                if not y[i] == y[j]:
                    viol.append((min(bits[i], bits[j]), [bits[i], bits[j]], abs(y[i] - y[j])))
            elif not y[i] <= y[j]:
                viol.append((min(bits[i], bits[j]), [bits[i], bits[j]], y[i] - y[j]))
    elif c.kind == "odd":
        at = {b: i for i, b in enumerate(bits)}
        for i in range(len(x)):
            if bits[i] & sign or math.isnan(x[i]):
                continue
            j = at[bits[i] | sign]
            evaluated += 1
            if not (math.isnan(y[i]) and math.isnan(y[j])) and int(ybits[j]) != ybits[i] ^ sign:
                viol.append((bits[i], [bits[i], bits[j]], abs(y[i] + y[j])))
    else:
        for i in range(len(x)):
            if c.kind == "nan_propagation":
                if not math.isnan(x[i]):
                    continue
                evaluated += 1
                if not math.isnan(y[i]):
                    viol.append((bits[i], [bits[i]], math.inf))
                continue
            if not inside(x[i]):
                continue
            evaluated += 1
            if c.kind == "constant":
                if not y[i] == c.value:
                    viol.append((bits[i], [bits[i]], abs(y[i] - c.value)))
            elif math.isnan(y[i]):
                viol.append((bits[i], [bits[i]], math.inf))
            elif c.lower is not None and y[i] < c.lower:
                viol.append((bits[i], [bits[i]], c.lower - y[i]))
            elif c.upper is not None and y[i] > c.upper:
                viol.append((bits[i], [bits[i]], y[i] - c.upper))
    if not viol:
        return evaluated, 0, None, None
    first = min(viol, key=lambda v: v[0])
    mag = lambda v: math.inf if math.isnan(v[2]) else v[2]  # noqa: E731
    worst = min(viol, key=lambda v: (-mag(v), v[0]))
    return (
        evaluated,
        len(viol),
        [int(first[0]), [int(b) for b in first[1]]],
        [mag(worst), int(worst[0]), [int(b) for b in worst[1]]],
    )


@pytest.mark.parametrize("broken_blocks", [None, (2, 5, 7), "nan"])
@pytest.mark.parametrize("op_name", ["HardSwish", "Tanh"])
def test_compiled_property_scans_agree_with_a_plain_loop(op_name, broken_blocks):
    """Every float16 input, outputs near the operator's with 2% of them broken
    (random bits: NaN, infinities, signed zeros, steps backwards), everywhere or
    in three blocks only (the others then take the scans' branch-free counting
    path), fed in blocks: each kernel-backed property's counts, first and worst
    violation equal a plain loop's in value order. "nan": nothing broken but three
    NaN outputs (inside a block, at the end of one, at the start of one on the
    negative side), the only violations of their blocks."""
    from opcert.formats import FLOAT_FORMATS
    from opcert.spec import get_operator
    from opcert.spec.attrs import resolve
    from opcert.verify.properties.checks import PropertyChecker, compile_all

    fmt = FLOAT_FORMATS["float16"]
    op = get_operator(op_name)
    rng = np.random.default_rng(7)
    bits = np.arange(1 << 16, dtype=np.uint16)
    with np.errstate(all="ignore"):
        x = bits.view(np.float16).astype(np.float64)
        good = np.tanh(x) if op_name == "Tanh" else x * np.clip(x + 3, 0, 6) / 6
    y16 = good.astype(np.float16)
    broken = rng.random(bits.size) < 0.02
    if broken_blocks == "nan":
        broken[:] = False
        y16[[2 * 4096 + 17, 4 * 4096 - 1, (5 * 4096) | 0x8000]] = np.nan
    elif broken_blocks:
        broken &= np.isin((bits & 0x7FFF) // 4096, broken_blocks)
    y16[broken] = rng.integers(0, 1 << 16, int(broken.sum()), dtype=np.uint16).view(np.float16)
    compiled = [
        c
        for c in compile_all(op, fmt, resolve(op), op.primary)
        if c.kind in ("range", "constant", "nan_propagation", "odd", "monotonic") and c.skip is None
    ]
    assert {c.kind for c in compiled} >= (
        {"range", "constant", "monotonic", "nan_propagation"} if op_name == "HardSwish" else {"odd", "monotonic"}
    )
    checker = PropertyChecker(compiled, fmt)
    mags = np.arange(1 << 15, dtype=np.uint64)
    for b0 in range(0, 1 << 15, 4096):
        m = mags[b0 : b0 + 4096]
        checker.add_block(m, y16[m.astype(np.int64)], y16[(m | 0x8000).astype(np.int64)])
    checker.finish_chains()
    xs, ys = x.tolist(), y16.astype(np.float64).tolist()
    for c in compiled:
        got = checker.acc[c.name]
        want = _oracle(c, xs, ys, bits.tolist(), y16.view(np.uint16).tolist(), 0x8000)
        assert (got.evaluated, got.violations, got.first, got.worst) == want, c.name
        if broken_blocks != "nan" or c.kind in ("monotonic", "range"):
            assert got.violations > 0, c.name  # the broken outputs make every one of them fail somewhere


@pytest.mark.parametrize("op_name", ["Tanh", "HardSigmoid"])
def test_property_scans_take_the_negative_bits_given_as_they_compute_them(op_name):
    """The float32 sweep hands add_block the bit patterns of -m it already has (negb): every
    property's counts, first and worst violation and monotonic chain ends are those of add_block
    computing them, on outputs with 2% broken, blocks up to infinity and the NaNs (HardSigmoid's
    saturation properties hold on a domain: the inputs' values at -m are read)."""
    from opcert.formats import FLOAT_FORMATS
    from opcert.spec import get_operator
    from opcert.spec.attrs import resolve
    from opcert.verify.properties.checks import PropertyChecker, compile_all

    fmt = FLOAT_FORMATS["float32"]
    op = get_operator(op_name)
    rng = np.random.default_rng(11)

    def f(x):
        return np.tanh(x) if op_name == "Tanh" else np.clip(np.float32(0.2) * x + np.float32(0.5), 0, 1)

    compiled = [c for c in compile_all(op, fmt, resolve(op), op.primary) if c.skip is None]
    checkers = [PropertyChecker(compiled, fmt), PropertyChecker(compiled, fmt)]
    for lo in (0x3F000000, 0x40100000, 0x7F7FE000, 0x7FFFE000):  # 0.5, 2.25 (saturating at 2.5), the top
        for b0 in range(lo, lo + 0x4000, 0x1000):
            mags = np.arange(b0, b0 + 0x1000, dtype=np.uint32)
            negb = mags | np.uint32(0x80000000)
            with np.errstate(all="ignore"):
                yp, yn = f(mags.view(np.float32)), f(negb.view(np.float32))
            for y in (yp, yn):
                broken = rng.random(y.size) < 0.02
                y[broken] = (
                    rng.integers(0, 1 << 32, int(broken.sum()), dtype=np.uint64).astype(np.uint32).view(np.float32)
                )
            checkers[0].add_block(mags, yp, yn, limits=(0x3F800000, 0xBF800000))
            checkers[1].add_block(mags, yp, yn, limits=(0x3F800000, 0xBF800000), negb=negb)
    assert checkers[0].chain_ends() == checkers[1].chain_ends()
    for c in compiled:
        a, b = checkers[0].acc[c.name], checkers[1].acc[c.name]
        assert (a.evaluated, a.violations, a.first, a.worst) == (b.evaluated, b.violations, b.first, b.worst), c.name
    assert sum(checkers[1].acc[c.name].violations > 0 for c in compiled) >= 3


def _ulp_definition(v: float, fmt) -> Fraction:
    """ulp(v) = 2^(max(floor(log2 |v|), emin) - p + 1); ulp(0) the smallest subnormal (DESIGN.md)."""
    e = math.frexp(abs(v))[1] - 1 if v != 0 else fmt.emin
    return Fraction(2) ** (max(e, fmt.emin) - fmt.p + 1)


@pytest.mark.parametrize("dtype, center", [("float32", 1.0), ("float16", 1.0), ("float32", 0.0)])
def test_point_symmetry_violations_agree_with_rational_arithmetic(dtype, center):
    """symmetry_violations (a compiled binary64 pass, exact arithmetic where it is within 2^-40 of the tolerance)
    decides |f(x) + f(-x) - c| <= (ulp(f(x)) + ulp(f(-x))) / 2 as rational arithmetic does, on pairs at and
    around the tolerance (f(-x) = c - f(x) moved by -3..3 steps of the format), zeros, subnormals and
    non-finite outputs (always a violation)."""
    from opcert.formats import get_format
    from opcert.verify.properties.checks import symmetry_violations

    fmt = get_format(dtype)
    rng = np.random.default_rng(7)
    a = rng.uniform(0, 1, 4000).astype(fmt.dtype)
    a = np.concatenate([a, np.array([0.0, 1.0, 0.5, fmt.min_subnormal, 3 * fmt.min_subnormal], dtype=fmt.dtype)])
    base = (np.float64(center) - a.astype(np.float64)).astype(fmt.dtype)
    pairs_a, pairs_b = [], []
    for k in range(-3, 4):
        b = base.copy()
        toward = np.full_like(b, np.inf if k > 0 else -np.inf)
        for _ in range(abs(k)):
            b = np.nextafter(b, toward)
        pairs_a.append(a)
        pairs_b.append(b)
    yp = np.concatenate(pairs_a + [np.array([np.nan, np.inf, 1.0, -np.inf], dtype=fmt.dtype)]).astype(np.float64)
    yn = np.concatenate(pairs_b + [np.array([0.0, 0.0, np.nan, np.inf], dtype=fmt.dtype)]).astype(np.float64)
    bad, excess = symmetry_violations(yp, yn, center, fmt)
    assert bad.shape == yp.shape == excess.shape
    want = []
    for p, n in zip(yp.tolist(), yn.tolist()):
        if not (math.isfinite(p) and math.isfinite(n)):
            want.append(True)
            continue
        tol = (_ulp_definition(p, fmt) + _ulp_definition(n, fmt)) / 2
        want.append(abs(Fraction(p) + Fraction(n) - Fraction(center)) > tol)
    want = np.array(want)
    assert np.array_equal(bad, want), (yp[bad != want][:4], yn[bad != want][:4])
    assert 0 < want.sum() < want.size  # both kinds are present


def test_chunks_meeting_where_both_outputs_overflow_merge_without_a_warning():
    """Two chunks of Sinh's float16 sweep meeting at 16, where both chain ends are +inf: the pair across the
    boundary is in order (inf <= inf), not a violation, and its gap inf - inf is no warning on the user's terminal
    (`opcert accuracy Sinh --dtype float32 --exhaustive` printed NumPy's RuntimeWarning)."""
    import warnings

    import opcert
    from opcert.formats import get_format
    from opcert.spec.attrs import resolve
    from opcert.verify.properties.checks import PropertyChecker, compile_property

    op, fmt = opcert.get_operator("Sinh"), get_format("float16")
    prop = next(p for p in op.properties if p.name == "monotonic")
    c = compile_property(op, prop, fmt, resolve(op), op.primary)
    bits = np.arange(1 << 16, dtype=np.uint16)
    with np.errstate(over="ignore", invalid="ignore"):
        y = np.sinh(bits.view(np.float16).astype(np.float64)).astype(np.float16)
    split = int(np.array([16.0], np.float16).view(np.uint16)[0])
    assert np.isinf(y[split - 1]) and np.isinf(y[split])

    def chunk(lo, hi):
        checker = PropertyChecker([c], fmt)
        m = np.arange(lo, hi, dtype=np.uint64)
        checker.add_block(m, y[m.astype(np.int64)], y[(m | 0x8000).astype(np.int64)])
        return checker.to_json()

    merged = PropertyChecker([c], fmt)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        merged.merge_chunks([chunk(0, split), chunk(split, 0x7C01)])
        merged.finish_chains()
    acc = merged.acc[prop.name]
    assert acc.evaluated > 0 and acc.violations == 0


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_a_sides_domain_is_the_run_a_pass_would_find(dtype):
    """kernels._domain finds the elements of a side inside [dlo, dhi] by bisection; here every such run is
    the one a comparison of each element finds, on sides as add_block gets them (unique ascending magnitudes,
    +m and -m, NaN payloads last), with bounds at the elements themselves, between them, at the zeros, at the
    infinities and not representable in the side's format."""
    from opcert.verify.properties import kernels

    rng = np.random.default_rng(11)
    uint = {np.float16: np.uint16, np.float32: np.uint32, np.float64: np.uint64}[dtype]
    bits = 8 * np.dtype(uint).itemsize
    inf = int(np.array([np.inf], dtype).view(uint)[0])
    for trial in range(60):
        n = int(rng.integers(1, 300))
        top = (inf + 3) if trial % 3 == 0 else inf + 1
        drawn = rng.integers(0, top, size=n, dtype=np.uint64)
        # +-0, the infinity and two NaN payloads in every side: the NaN tail and the zero are the edges
        edges = np.array([0, inf, inf + 1, inf + 2][: 2 + 2 * (trial % 2)], dtype=np.uint64)
        mags = np.unique(np.concatenate([drawn, edges])).astype(uint)
        for negative in (False, True):
            b = mags | uint(1 << (bits - 1)) if negative else mags
            with np.errstate(invalid="ignore"):
                x = b.view(dtype).astype(np.float64) if dtype == np.float16 else b.view(dtype)
                wide = x.astype(np.float64)  # the kernel compares in binary64 (NumPy would round a bound to x's)
            finite = wide[~np.isnan(wide)]
            picks = [-np.inf, np.inf, 0.0, -0.0, 1e-300, -1e-300, 0.1, -0.1]
            if finite.size:
                picks += [float(v) for v in rng.choice(finite, 4)] + [float(np.nextafter(finite[0], np.inf))]
            for dlo in picks:
                for dhi in picks:
                    inside = np.flatnonzero((wide >= dlo) & (wide <= dhi))
                    i0, i1 = kernels._domain(x, dlo, dhi)
                    assert np.array_equal(np.arange(i0, i1), inside), (dtype, negative, dlo, dhi)


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "float64"])
def test_point_symmetry_in_a_sweeps_blocks_counts_as_symmetry_violations_does(dtype):
    """add_block's compiled symmetry scan (kernels.scan_symmetry, the pairs at the tolerance's edge decided
    exactly) counts, and picks the first and the worst violation, as symmetry_violations over the block's pairs
    whose input is not NaN does (itself checked against rational arithmetic above), block by block: Sigmoid's
    outputs with f(-x) moved -3..3 steps off 1 - f(x) (pairs exactly at the tolerance), random bit patterns,
    infinities and NaN (in the blocks from 0 only, so that elsewhere a finite worst is compared), over blocks of
    zeros and subnormals, around 0.5, of the largest values, of infinity and NaN inputs, an empty one and a
    quiet one. In
    binary64 a pair at the edge can be a violation (1 - 2^-53 and 2^-53 + 2^-54 + 2^-105, by 2^-106): some are
    put in each of its blocks."""
    from fractions import Fraction

    from opcert.formats import FLOAT_FORMATS
    from opcert.spec import get_operator
    from opcert.spec.attrs import resolve
    from opcert.verify.properties.checks import Acc, PropertyChecker, compile_all, symmetry_violations

    fmt = FLOAT_FORMATS[dtype]
    op = get_operator("Sigmoid")
    (c,) = [c for c in compile_all(op, fmt, resolve(op), op.primary) if c.kind == "point_symmetry"]
    center = float(Fraction(c.center))
    rng = np.random.default_rng(5)
    top = 1 << (fmt.bits - 1)
    size = 0x800 if fmt.bits == 16 else 0x1000

    def bits(v):
        return int(np.array([v], dtype=fmt.dtype).view(fmt.uint)[0])

    inf = bits(np.inf)
    # None: an empty block; the quiet one has no violation but the edge pairs (its worst is one of them)
    quiet = bits(0.25)
    for lo in [0, size, bits(0.5), inf - size, inf, None, quiet]:
        mags = np.arange(0 if lo is None else lo, 0 if lo is None else min(lo + size, top), dtype=np.uint64)
        mags = mags.astype(fmt.uint)
        negb = mags | fmt.uint.type(top)
        with np.errstate(all="ignore"):
            x = mags.view(fmt.dtype).astype(np.float64)
            yp = (1 / (1 + np.exp(-x))).astype(fmt.dtype)
            yn = (1 - yp.astype(np.float64)).astype(fmt.dtype)
        steps = rng.integers(-3, 4, yn.size) * (lo != quiet)
        for k in (1, 2, 3):
            for sign in (1, -1):
                m = steps == sign * k
                yn[m] = np.nextafter(yn[m], np.array(sign * np.inf, dtype=fmt.dtype))
        for y in (yp, yn):
            broken = (rng.random(y.size) < 0.01) & (lo != quiet)
            y[broken] = (
                rng.integers(0, 1 << fmt.bits, int(broken.sum()), dtype=np.uint64).astype(fmt.uint).view(fmt.dtype)
            )
            if lo == 0:
                y[rng.random(y.size) < 0.002] = np.inf
                y[rng.random(y.size) < 0.002] = np.nan
            else:
                with np.errstate(invalid="ignore"):
                    y[~np.isfinite(y.astype(np.float64))] = 0
        at = rng.choice(mags.size, min(8, mags.size), replace=False)
        if dtype == "float64":
            yp[at], yn[at] = 1 - 2.0**-53, 2.0**-53 + 2.0**-54 + 2.0**-105
        checker, want = PropertyChecker([c], fmt), Acc()
        checker.add_block(mags, yp, yn, negb=negb)
        sel = ~np.isnan(x)
        with np.errstate(invalid="ignore"):  # the NaN outputs' casts
            bad, excess = symmetry_violations(yp.astype(np.float64), yn.astype(np.float64), center, fmt)
        want.add(sel.sum(), sel & bad, mags, [mags, negb], excess)
        got = checker.acc[c.name]
        assert (got.evaluated, got.violations, got.first, got.worst) == (
            want.evaluated,
            want.violations,
            want.first,
            want.worst,
        ), lo
        if lo is None:
            assert want.evaluated == 0
        elif lo == inf:
            assert 0 < want.evaluated < mags.size  # infinity evaluated, the NaN inputs not
        elif lo == quiet:
            assert want.violations == (8 if dtype == "float64" else 0)
        else:
            assert want.evaluated == mags.size and want.violations > 0
            if lo != 0:
                assert np.isfinite(want.worst[0])  # a finite worst compared
            if dtype == "float64":  # the edge pairs put in are violations, decided exactly
                assert bad[at].all() and (np.abs(excess[at]) <= 2.0**-100).all()
