"""The monotonic property's non-increasing form (`Property.decreasing`) at every level: over the reals, on opcert's
code in each format (enumeration, composition of monotone steps, the rounding abstraction), and on black-box targets
through every front end. Acos declares it on [-1, 1], Reciprocal on each side of its pole, Cosh on (-inf, 0], and
DirectML's Acos on the x where x * scale + bias is in [-1, 1]. Expected verdicts come from facts about the functions
(acos, 1/x and cosh fall where they are declared to, tanh rises) and from how the broken kernels are written,
never from opcert's own outputs."""

import dataclasses
import json
import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from conftest import all_16bit

import opcert
from opcert.expr import acos, const, eq, select, var
from opcert.spec.model import KINDS, Property
from opcert.verify.proofs import prove

x = var("x")
WRONG = "math_kernels:acos_up_at_half"  # acos in binary64, rounded, but 3 at x = 0.5
RIGHT = "math_kernels:acos_in_binary64"
# float16's values in [-1, 1]: magnitudes 0 .. 0x3c00 on each side, 0x3c00 adjacent pairs on each side and the pair
# (-0, +0) where the sides meet
F16_UNIT_PAIRS = 2 * 0x3C00 + 1

DECLARED = [  # (operator, property, standard, attributes for the formats); all non-increasing but the last
    ("Acos", "monotonic", None, None),
    ("Reciprocal", "monotonic_positive", None, None),
    ("Reciprocal", "monotonic_negative", None, None),
    ("Cosh", "monotonic_negative", None, None),
    ("Acos", "monotonic_scaled", "directml", {"scale": 0.75, "bias": -0.125}),
    ("Acos", "monotonic_negative_scale", "directml", {"scale": -2.5, "bias": 0.25}),
]


def _with(op, **changes):
    return dataclasses.replace(opcert.get_operator(op), **changes)


def _exact(text) -> Fraction:
    """A value as the spec level prints it: '1.82 (exactly 91/50)', or a binary64 value."""
    text = str(text)
    if "(exactly " in text:
        return Fraction(text.split("(exactly ")[1].rstrip(")"))
    return Fraction(float(text.split()[0]))


def _below(v: float, dtype) -> float:
    """The value of the format just below v."""
    a = np.asarray(v, dtype=dtype)
    return float(np.nextafter(a, np.asarray(-np.inf, dtype=dtype)))


def test_decreasing_is_a_field_of_the_monotonic_kind():
    assert "non-increasing" in KINDS["monotonic"]
    p = Property("m", "monotonic", "non-increasing", decreasing=True)
    assert p.decreasing and not Property("m", "monotonic", "non-decreasing").decreasing
    with pytest.raises(ValueError, match="decreasing"):
        Property("odd", "odd", "odd", decreasing=True)
    (p,) = [p for p in opcert.get_operator("Acos").properties if p.name == "monotonic"]
    assert p.decreasing and p.standards == ("onnx",) and "non-increasing" in p.statement


def test_the_declarations_say_non_increasing_where_they_are(cli):
    code, out, _ = cli("ops", "Reciprocal", "--json")
    props = {p["name"]: p for p in json.loads(out)["properties"]}
    assert code == 0 and props["monotonic_positive"]["decreasing"] is True
    assert "non-increasing" in props["monotonic_negative"]["statement"] and props["odd"]["decreasing"] is False
    code, out, _ = cli("ops", "Cosh")
    assert code == 0 and "monotonic (non-increasing)" in out


# ---- specification ---------------------------------------------------------------------------


@pytest.mark.parametrize(("op", "name", "standard", "_"), DECLARED)
def test_declared_non_increasing_is_proved_over_the_reals(op, name, standard, _):
    (p,) = prove(op, properties=[name]).properties
    assert p.status == "proved" and p.expected == "holds", (p.note, p.counterexample)


def test_an_increasing_function_declared_non_increasing_is_refuted_over_the_reals():
    op = _with(
        "Tanh", properties=(Property("monotonic", "monotonic", "Tanh is non-increasing (false)", decreasing=True),)
    )
    (p,) = prove(op, properties=["monotonic"]).properties
    ce = p.counterexample
    assert p.status == "refuted" and ce["replayed"] is True, p.note
    x1, x2 = (_exact(ce["inputs"][k]) for k in ("x1", "x2"))
    mpmath.mp.prec = 200
    # tanh is strictly increasing: x1 < x2 and tanh(x1) < tanh(x2), which a non-increasing tanh forbids
    assert x1 < x2 and mpmath.tanh(mpmath.mpf(x1.numerator) / x1.denominator) < mpmath.tanh(
        mpmath.mpf(x2.numerator) / x2.denominator
    )


def test_a_non_decreasing_claim_on_acos_is_refuted_over_the_reals():
    """The direction matters: Acos declared non-decreasing on [-1, 1] is refuted by a pair where acos falls."""
    wrong = Property(
        "monotonic", "monotonic", "Acos is non-decreasing on [-1, 1] (false)", domain=(const(-1), const(1))
    )
    (p,) = prove(_with("Acos", properties=(wrong,)), properties=["monotonic"]).properties
    ce = p.counterexample
    assert p.status == "refuted" and ce["replayed"] is True
    x1, x2 = (float(_exact(ce["inputs"][k])) for k in ("x1", "x2"))
    assert -1 <= x1 < x2 <= 1 and math.acos(x1) > math.acos(x2)


def test_declared_not_to_hold_a_rising_pair_refutes_it():
    """Cosh 'is not non-increasing' (holds=False): the exact evaluation finds where cosh rises."""
    claim = Property("monotonic", "monotonic", "Cosh is not non-increasing", decreasing=True, holds=False)
    (p,) = prove(_with("Cosh", properties=(claim,)), properties=["monotonic"]).properties
    ce = p.counterexample
    assert p.status == "refuted" and p.expected == "fails" and ce["replayed"] is True
    x1, x2 = (float(_exact(ce["inputs"][k])) for k in ("x1", "x2"))
    assert x1 < x2 and math.cosh(x1) < math.cosh(x2)  # cosh rises on [0, inf)
    lo, hi = (float(ce["values"][k].split("[")[1].split(",")[0]) for k in ("f(x1)", "f(x2)"))
    assert lo == pytest.approx(math.cosh(x1)) and hi == pytest.approx(math.cosh(x2))


# ---- opcert's implementation ------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
@pytest.mark.parametrize(("op", "name", "standard", "attrs"), DECLARED)
def test_opcerts_code_is_non_increasing_in_every_format(op, name, standard, attrs, dtype):
    (p,) = prove(op, dtype, attrs=attrs, properties=[name], standard=standard).properties
    assert p.status == "proved" and p.expected == "holds", (p.note, p.counterexample)
    if dtype in ("float16", "bfloat16"):
        assert p.method == f"every {dtype} input enumerated on the code (complete)"
    elif p.method.startswith("composition"):
        prop = next(q for q in opcert.get_operator(op).properties if q.name == name)
        assert ("applied to -f" in p.method) == prop.decreasing


def test_the_bit_precise_models_cross_check_leaves_monotonicity_to_the_enumeration():
    (p,) = prove("Acos", "float16", properties=["monotonic"], cross_check=True).properties
    assert p.status == "proved" and p.method == "every float16 input enumerated on the code (complete)"


# acos, but 3 at x = 0.5: the pair (the value below 0.5, 0.5) rises (acos < pi/2 + 1 < 3 above 0), every other
# pair on [-1, 1] falls or is level
UP_AT_HALF = select(eq(x, const(0.5)), const(3), acos(x))


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_a_code_that_rises_once_is_refuted_at_that_pair(dtype):
    op = _with("Acos", implementation=UP_AT_HALF)
    (p,) = prove(op, dtype, properties=["monotonic"]).properties
    ce = p.counterexample
    assert p.status == "refuted" and ce["replayed"] is True, p.note
    below = _below(0.5, dtype)
    assert ce["inputs"]["x1"]["value"] == below and ce["inputs"]["x2"]["value"] == 0.5
    y1, y2 = ce["outputs"]["f(x1)"]["value"], ce["outputs"]["f(x2)"]["value"]
    assert y2 == 3.0 and y1 == pytest.approx(math.acos(below), rel=1e-3) and y1 < y2
    if dtype == "float16":
        assert p.violations == 1 and p.inputs_checked == F16_UNIT_PAIRS


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_declared_not_to_hold_a_rising_pair_of_the_code_refutes_it(dtype):
    claim = Property("monotonic", "monotonic", "Tanh is not non-increasing", decreasing=True, holds=False)
    (p,) = prove(_with("Tanh", properties=(claim,)), dtype, properties=["monotonic"]).properties
    ce = p.counterexample
    assert p.status == "refuted" and p.expected == "fails" and "an increasing pair" in p.method
    x1, x2 = ce["inputs"]["x1"]["value"], ce["inputs"]["x2"]["value"]
    y1, y2 = ce["outputs"]["f(x1)"]["value"], ce["outputs"]["f(x2)"]["value"]
    assert x1 < x2 and y1 < y2 and y1 == pytest.approx(math.tanh(x1), rel=1e-6)


def test_a_code_rising_at_the_infinities_is_refuted_there():
    """1/|x| declared non-increasing on (0, inf) is; on (-inf, 0) it rises: at -inf (0) against -max (tiny)."""
    from opcert.expr import absolute

    op = _with("Reciprocal", implementation=1 / absolute(x))
    (p,) = prove(op, "float32", properties=["monotonic_positive"]).properties
    assert p.status == "proved"
    (p,) = prove(op, "float32", properties=["monotonic_negative"]).properties
    ce = p.counterexample
    assert p.status == "refuted" and ce["inputs"]["x1"]["value"] == -math.inf
    assert ce["inputs"]["x2"]["value"] == -float(np.finfo(np.float32).max)
    assert ce["outputs"]["f(x1)"]["value"] == 0.0 < ce["outputs"]["f(x2)"]["value"]


# ---- black-box targets ------------------------------------------------------------------------


def _pair_at_half(ce, dtype):
    """The counterexample names (the value below 0.5, 0.5), f rising from acos of the one to 3, as the kernel is
    written (np.arccos in binary64 rounded to the format, 3 at 0.5)."""
    below = _below(0.5, dtype)
    assert ce["replayed"] is True
    assert ce["inputs"]["x1"]["value"] == below and ce["inputs"]["x2"]["value"] == 0.5
    assert ce["outputs"]["f(x1)"]["value"] == float(np.asarray(math.acos(below), dtype=dtype))
    assert ce["outputs"]["f(x2)"]["value"] == 3.0


def test_a_correct_kernel_is_non_increasing_on_every_float16_input():
    (p,) = opcert.prove("Acos", "float16", target=RIGHT, properties=["monotonic"]).properties
    assert p.status == "proved" and p.violations == 0 and p.inputs_checked == F16_UNIT_PAIRS
    xs = all_16bit("float16")  # the same fact by NumPy alone: arccos falls along the ascending values of [-1, 1]
    xs = np.unique(xs[np.abs(xs.astype(np.float64)) <= 1].astype(np.float64))
    assert np.all(np.diff(np.arccos(xs).astype(np.float16).astype(np.float64)) <= 0)


def test_a_kernel_rising_at_one_pair_is_refuted_by_every_front_end(cli, tmp_path):
    # the API
    (p,) = opcert.prove("Acos", "float16", target=WRONG, properties=["monotonic"]).properties
    assert p.status == "refuted" and p.violations == 1 and p.inputs_checked == F16_UNIT_PAIRS
    _pair_at_half(p.counterexample, "float16")
    assert p.worst["magnitude"] == 3.0 - p.counterexample["outputs"]["f(x1)"]["value"]  # how far f(x2) rises
    r = opcert.measure("Acos", WRONG, "float16", "exhaustive")
    status = {q["name"]: q["status"] for q in r.properties}
    assert status.pop("monotonic") == "refuted" and status.pop("layout") == "checked"
    assert status.pop("monotonic_scaled") == status.pop("monotonic_negative_scale") == "skipped"  # DirectML's
    assert set(status.values()) == {"proved"}  # 3 is inside [0, pi]: the range still holds
    # `opcert prove --target --json`
    code, out, _ = cli(
        "prove",
        "Acos",
        "--dtype",
        "float16",
        "--target",
        WRONG,
        "--property",
        "monotonic",
        "--json",
        tmp_path / "p.json",
    )
    (q,) = json.loads((tmp_path / "p.json").read_text())["reports"][0]["properties"]
    assert code == 1 and q["status"] == "refuted" and q["violations"] == 1
    _pair_at_half(q["counterexample"], "float16")
    assert "x1 = 0.499755859375 (0x37ff) -> 1.0478515625 (0x3c31)" in out and "x2 = 0.5 (0x3800) -> 3.0 (0x4200)" in out
    # `opcert accuracy --require --json`
    code, _, _ = cli(
        "accuracy", "Acos", "--dtype", "float16", "--target", WRONG, "--exhaustive", "--max-ulp", "1e9",
        "--require", "monotonic", "--json", tmp_path / "a.json",
    )  # fmt: skip
    (q,) = [q for q in json.loads((tmp_path / "a.json").read_text())["properties"] if q["name"] == "monotonic"]
    assert code == 1 and q["status"] == "refuted" and q["violations"] == 1
    _pair_at_half(q["counterexample"], "float16")
    # the gate
    cfg = tmp_path / "opcert.toml"
    cfg.write_text(
        f'[[check]]\nop = "Acos"\ndtypes = ["float16"]\ntarget = "{WRONG}"\nmode = "exhaustive"\nmax_ulp = 1e9\n'
        'proofs = ["monotonic"]\n'
    )
    code, out, _ = cli("gate", "--config", cfg, "--json", tmp_path / "g.json", "--workers", "1")
    (q,) = [q for q in json.loads((tmp_path / "g.json").read_text())["checks"][0]["proofs"] if q["name"] == "monotonic"]
    assert code == 1 and "0 passed, 1 failed" in out and q["status"] == "refuted" and q["violations"] == 1
    _pair_at_half(q["counterexample"], "float16")


def test_the_float32_sweep_refutes_it_at_the_pair(tmp_path):
    from opcert.verify.accuracy.measure import measure

    span = (0x3EFF0000, 0x3F010000)  # magnitudes around 0.5 (0x3f000000)
    r = measure("Acos", WRONG, "float32", "exhaustive", magnitude_range=span, workers=1, checkpoint=tmp_path / "c")
    (p,) = [q for q in r.properties if q["name"] == "monotonic"]
    # each side's magnitudes make span - 1 adjacent pairs, and the two sides meet at their smallest magnitudes (the
    # swept inputs' neighbours across zero)
    assert p["status"] == "refuted" and p["violations"] == 1
    assert p["inputs_checked"] == 2 * (span[1] - span[0] - 1) + 1
    _pair_at_half(p["counterexample"], "float32")


def _oracle(xs, ys, bits, lo, hi):
    """(evaluated, violations, first, worst) of non-increasing over [lo, hi], by a plain loop over the inputs in
    value order (-0 before +0, one point: their outputs must be equal): independent of the compiled scans."""
    order = sorted(
        (i for i in range(len(xs)) if lo <= xs[i] <= hi), key=lambda i: (xs[i], not math.copysign(1, xs[i]) < 0)
    )
    viol = []  # (key, [x1 bits, x2 bits], magnitude)
    for i, j in zip(order, order[1:]):
        if xs[i] == 0 and xs[j] == 0:
            if not ys[i] == ys[j]:
                viol.append((min(bits[i], bits[j]), [bits[i], bits[j]], abs(ys[i] - ys[j])))
        elif not ys[i] >= ys[j]:
            viol.append((min(bits[i], bits[j]), [bits[i], bits[j]], ys[j] - ys[i]))
    first = min(viol, key=lambda v: v[0])
    mag = [math.inf if math.isnan(v[2]) else v[2] for v in viol]
    worst = min(zip(viol, mag), key=lambda vm: (-vm[1], vm[0][0]))
    return len(order) - 1, len(viol), [first[0], first[1]], [worst[1], worst[0][0], worst[0][1]]


def test_the_compiled_scan_turns_every_comparison():
    """np.arccos over every float16 input, broken at: 0.5 (3, above its neighbour below), 0.125 (3, where a block
    of 4096 starts), 0.75 (NaN: both of its pairs), -0.5 (0, below its neighbour above, across the chunk split
    below), -0 (1, not +0's pi/2). In blocks, in one pass and in two chunks split at magnitude 0x3800 (0.5), merged:
    the counts, first and worst equal a plain loop's."""
    from opcert.formats import FLOAT_FORMATS
    from opcert.spec.attrs import resolve
    from opcert.verify.properties.checks import PropertyChecker, compile_property

    fmt = FLOAT_FORMATS["float16"]
    op = opcert.get_operator("Acos")
    prop = next(p for p in op.properties if p.name == "monotonic")
    c = compile_property(op, prop, fmt, resolve(op), "onnx")
    xs = all_16bit("float16")
    with np.errstate(invalid="ignore"):
        y = np.arccos(xs.astype(np.float64)).astype(np.float16)
    broken = {0.5: 3.0, 0.125: 3.0, 0.75: np.nan, -0.5: 0.0, -0.0: 1.0}
    for v, out in broken.items():
        y[int(np.array([v], np.float16).view(np.uint16)[0])] = out  # xs[i] has the bits i

    def feed(checker, lo, hi):
        mags = np.arange(lo, hi, dtype=np.uint64)
        for b0 in range(0, mags.size, 4096):
            m = mags[b0 : b0 + 4096]
            checker.add_block(m, y[m.astype(np.int64)], y[(m | 0x8000).astype(np.int64)])

    one = PropertyChecker([c], fmt)
    feed(one, 0, 1 << 15)
    one.finish_chains()
    halves = [PropertyChecker([c], fmt), PropertyChecker([c], fmt)]
    feed(halves[0], 0, 0x3800)
    feed(halves[1], 0x3800, 1 << 15)
    merged = PropertyChecker([c], fmt)
    merged.merge_chunks([h.to_json() for h in halves])
    merged.finish_chains()
    want = _oracle(xs.astype(np.float64).tolist(), y.astype(np.float64).tolist(), list(range(1 << 16)), -1.0, 1.0)
    assert want[:2] == (F16_UNIT_PAIRS, 6)  # one pair at each of 0.5, 0.125, -0.5 and zero, two at 0.75
    for checker in (one, merged):
        acc = checker.acc[prop.name]
        assert (acc.evaluated, acc.violations, acc.first, acc.worst) == want
