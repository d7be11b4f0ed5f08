"""The property kind "even", f(-x) = f(x), at every level: over the reals, on opcert's code in each format
(enumeration, the bit-precise model, the rounding abstraction), and on black-box targets. Abs declares it for
ONNX's definition. Expected verdicts come from facts about the functions (|-x| = |x|, tanh(-x) = -tanh(x),
where a broken kernel differs by its construction), never from opcert's own outputs."""

import dataclasses
import math
from fractions import Fraction

import numpy as np
import pytest
import z3
from conftest import all_16bit

import opcert
from opcert.expr import absolute, const, select, var
from opcert.spec.model import KINDS, Property
from opcert.verify.proofs import prove

x = var("x")
F16_NAN_PAIRS = 1023  # magnitudes 0x7c01 .. 0x7fff: not evaluated


def _with(op, **changes):
    return dataclasses.replace(opcert.get_operator(op), **changes)


def _value(text) -> float:
    return float(str(text).split()[0])


def test_even_is_a_kind():
    assert "even" in KINDS
    (p,) = [p for p in opcert.get_operator("Abs").properties if p.kind == "even"]
    assert p.standards == ("onnx",) and p.zero_sign  # |-0| = +0 = |+0|: bit for bit


# ---- specification ---------------------------------------------------------------------------


def test_abs_is_even_over_the_reals():
    (p,) = prove("Abs", properties=["even"]).properties
    assert p.status == "proved" and p.expected == "holds" and "z3 over the reals" in p.method


def test_directmls_abs_is_not_even_where_its_bias_is_not_zero():
    """|x * scale + bias| is why the property is ONNX's only: declared for DirectML's definition, it is
    refuted, at a bias other than 0 (with bias 0, |-x s| = |x s|), and the values differ exactly."""
    (p,) = prove("Abs", properties=["even"], standard="directml").properties
    assert p.status == "skipped" and "declared for onnx" in p.note
    wrong = Property("even", "even", "DirectML's Abs is even (false)", standards=("directml",))
    (p,) = prove(_with("Abs", properties=(wrong,)), properties=["even"]).properties
    ce = p.counterexample
    assert p.status == "refuted" and ce["replayed"] is True
    s, b = (Fraction(_value(ce["attrs"][k])) for k in ("scale", "bias"))
    xv = Fraction(_value(ce["inputs"]["x"]))
    assert b != 0 and abs(-xv * s + b) != abs(xv * s + b)


def test_an_odd_function_declared_even_is_refuted_over_the_reals():
    op = _with("Tanh", properties=(Property("even", "even", "Tanh is even (false)"),))
    (p,) = prove(op, properties=["even"]).properties
    assert p.status == "refuted" and p.counterexample["replayed"] is True
    xv = _value(p.counterexample["inputs"]["x"])
    assert xv != 0 and math.tanh(-xv) != math.tanh(xv)  # tanh is odd and non-zero away from 0


# ---- opcert's implementation ------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_opcerts_abs_is_even_in_every_format(dtype):
    (p,) = prove("Abs", dtype, properties=["even"]).properties
    assert p.status == "proved", (p.note, p.counterexample)
    if dtype in ("float16", "bfloat16"):
        assert p.method == f"every {dtype} input enumerated on the code (complete)"
        assert p.statement.endswith("(bit for bit)")
    else:
        assert p.method.startswith("z3 rounding abstraction")
        assert p.statement.endswith("(zeros' signs compared at x = +-0 and +-inf; the other inputs as values: +0 = -0)")


class _Code:
    """A stand-in for a proof's subject: its code at +0, -0, +inf, -inf."""

    def __init__(self, *outputs):
        self.outputs = outputs

    def run(self, xs):
        return np.array(self.outputs, dtype=np.float32)


@pytest.mark.parametrize("zero_sign", [True, False])
def test_the_binary32_parity_prover_compares_zeros_signs_where_the_property_is_bit_for_bit(zero_sign):
    """f(+0) = f(-0) = +0 is odd as values and not bit for bit: the prover's evaluation at +-0 (where the
    z3 abstraction, over the reals, has no -0) refutes only the bit-for-bit claim; f(+-inf) = -+1 is odd."""
    from opcert.spec.model import Property
    from opcert.verify.proofs.impl_level import _special_violation

    prop = Property("odd", "odd", "f(-x) = -f(x)", zero_sign=zero_sign)
    bad = _special_violation(_Code(0.0, 0.0, -1.0, 1.0), prop, None, (None, None))
    assert (bad is not None) == zero_sign
    assert _special_violation(_Code(0.0, -0.0, -1.0, 1.0), prop, None, (None, None)) is None
    even = Property("even", "even", "f(-x) = f(x)", zero_sign=zero_sign)
    assert (_special_violation(_Code(0.0, -0.0, 1.0, 1.0), even, None, (None, None)) is not None) == zero_sign


def test_the_bit_precise_model_agrees_on_abs():
    (p,) = prove("Abs", "float16", properties=["even"], cross_check=True).properties
    assert p.status == "proved" and "z3 bit-precise floating point" in p.method and "proved it" in p.method


# doubled on the negative side: f(-x) = 2|x| != |x| = f(x) at every x != 0 (inf where 2|x| overflows), and no
# rounding brings 2|x| back to |x|, so every pair the abstraction names replays; |-0| = +0 keeps the zeros even
DOUBLED_BELOW_0 = select(x < 0, const(-2) * x, absolute(x))
F16_FINITE_NONZERO = (1 << 15) - F16_NAN_PAIRS - 2  # magnitudes less the NaNs, inf and 0


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_a_code_not_even_is_refuted_with_a_replayed_pair(dtype):
    op = _with("Abs", implementation=DOUBLED_BELOW_0)
    (p,) = prove(op, dtype, properties=["even"]).properties
    ce = p.counterexample
    assert p.status == "refuted" and ce["replayed"] is True, p.note
    xv = ce["inputs"]["x"]["value"]

    def code(v):  # the kernel as written: binary64, rounded once to the format
        return float(np.asarray(-2 * v if v < 0 else abs(v), dtype=dtype))

    assert xv != 0 and {k: ce["outputs"][k]["value"] for k in ("f(-x)", "f(x)")} == {
        "f(-x)": code(-xv),
        "f(x)": code(xv),
    }
    if dtype == "float16":
        assert p.violations == F16_FINITE_NONZERO and p.inputs_checked == (1 << 15) - F16_NAN_PAIRS
        (q,) = prove(op, dtype, properties=["even"], cross_check=True).properties
        assert q.status == "refuted"


def test_nan_at_both_of_x_and_minus_x_is_consistent():
    """|x| - |x|: +0 for every finite x, NaN at both infinities (inf - inf): even at every level, the
    bit-precise model included."""
    op = _with("Abs", implementation=absolute(x) - absolute(x))
    for dtype in ("float16", "float32", "float64"):
        (p,) = prove(op, dtype, properties=["even"]).properties
        assert p.status == "proved", (dtype, p.note, p.counterexample)
    (p,) = prove(op, "float16", properties=["even"], cross_check=True).properties
    assert p.status == "proved" and "proved it" in p.method


def test_a_code_not_even_at_infinity_is_refuted_there():
    op = _with("Abs", implementation=x)  # the identity: f(-inf) = -inf, f(+inf) = inf (and -0 = +0 as values)
    for dtype in ("float32", "float64"):
        (p,) = prove(op, dtype, properties=["even"]).properties
        assert p.status == "refuted" and p.method == "evaluation of the code at +-0 and +-inf"
        assert p.counterexample["outputs"]["-inf"] == -math.inf


# ---- black-box targets ------------------------------------------------------------------------


def test_numpy_abs_is_even_on_every_float16_input():
    (p,) = opcert.prove("Abs", "float16", target="numpy:abs", properties=["even"]).properties
    assert p.status == "proved" and p.violations == 0
    assert p.inputs_checked == (1 << 15) - F16_NAN_PAIRS and "every input enumerated on target numpy:abs" in p.method
    y = np.abs(all_16bit("float16"))  # the same fact, bit for bit, by NumPy alone
    assert np.array_equal(y[:0x8000].view(np.uint16), y[0x8000:].view(np.uint16))


def _pair_at_one(ce, fmt_dtype):
    """The counterexample names the pair (1, -1), with f(-1) one ULP above 1, as the kernel is written."""
    one = fmt_dtype(1)
    assert ce["replayed"] is True
    assert ce["inputs"]["x"]["value"] == 1.0 and ce["inputs"]["-x"]["value"] == -1.0
    assert ce["outputs"]["f(x)"]["value"] == 1.0
    assert ce["outputs"]["f(-x)"]["value"] == float(one + np.finfo(fmt_dtype).eps)


def test_a_kernel_not_even_at_one_pair_is_refuted_there(cli):
    t = "math_kernels:abs_not_even_at_minus_one"
    (p,) = opcert.prove("Abs", "float16", target=t, properties=["even"]).properties
    assert p.status == "refuted" and p.violations == 1
    _pair_at_one(p.counterexample, np.float16)
    # the accuracy check decides it beside the others, which this kernel keeps
    r = opcert.measure("Abs", t, "float16", "exhaustive")
    status = {q["name"]: q["status"] for q in r.properties}
    assert status.pop("even") == "refuted" and status.pop("layout") == "checked"
    assert set(status.values()) == {"proved"}
    code, out, _ = cli("prove", "Abs", "--dtype", "float16", "--target", t, "--property", "even")
    assert code == 1 and "1 of 31,745 violate it" in out and "-x = -1.0 (0xbc00) -> 1.0009765625 (0x3c01)" in out


def test_the_float32_sweep_refutes_it_at_the_pair(tmp_path):
    from opcert.verify.accuracy.measure import measure

    t = "math_kernels:abs_not_even_at_minus_one"
    span = (0x3F7F0000, 0x3F810000)  # magnitudes around 1.0 (0x3f800000), over two chunks
    r = measure("Abs", t, "float32", "exhaustive", magnitude_range=span, workers=1, checkpoint=tmp_path / "c")
    (p,) = [q for q in r.properties if q["name"] == "even"]
    assert p["status"] == "refuted" and p["violations"] == 1 and p["inputs_checked"] == span[1] - span[0]
    _pair_at_one(p["counterexample"], np.float32)


@pytest.mark.parametrize("zero_sign", [True, False])
def test_the_compiled_scan_compares_bits_or_values(zero_sign):
    """np.abs over every float16 input, broken at four pairs: f(-0) = -0 (a violation of the bits only),
    f(-2) = 3 (of both), NaN at both of +-3 (none), NaN at -4 only (of both)."""
    from opcert.formats import FLOAT_FORMATS
    from opcert.spec.attrs import resolve
    from opcert.verify.properties.checks import PropertyChecker, compile_property

    fmt = FLOAT_FORMATS["float16"]
    op = opcert.get_operator("Abs")
    prop = dataclasses.replace(next(p for p in op.properties if p.kind == "even"), zero_sign=zero_sign)
    c = compile_property(op, prop, fmt, resolve(op), "onnx")
    xs = all_16bit("float16")
    y = np.abs(xs)
    for v, out in ((-0.0, -0.0), (-2.0, 3.0), (3.0, np.nan), (-3.0, np.nan), (-4.0, np.nan)):
        y[int(np.array([v], np.float16).view(np.uint16)[0])] = out  # xs[i] has the bits i
    checker = PropertyChecker([c], fmt)
    mags = np.arange(1 << 15, dtype=np.uint64)
    for b0 in range(0, 1 << 15, 4096):
        m = mags[b0 : b0 + 4096]
        checker.add_block(m, y[m.astype(np.int64)], y[(m | 0x8000).astype(np.int64)])
    acc = checker.acc[prop.name]
    assert acc.evaluated == (1 << 15) - F16_NAN_PAIRS
    assert acc.violations == (3 if zero_sign else 2)
    assert acc.first[1] == ([0x0000, 0x8000] if zero_sign else [0x4000, 0xC000])  # x = 0 and x = 2
    assert c.statement.endswith("(bit for bit)" if zero_sign else "(as values)")


# ---- the provers' facts about primitives ---------------------------------------------------------


@pytest.fixture
def even_exp(monkeypatch):
    """exp's record, declared even and monotone nowhere (as cos is): the facts each prover instantiates on
    two of its applications follow the record, whatever exp is."""
    from opcert.expr.primitives import REGISTRY

    monkeypatch.setitem(REGISTRY, "exp", dataclasses.replace(REGISTRY["exp"], odd=False, even=True, increasing=None))
    return "exp"


def _sat(facts, *query) -> bool:
    s = z3.Solver()
    s.add(*facts, *query)
    return s.check() == z3.sat


def test_the_real_models_facts_of_an_even_primitive(even_exp):
    from opcert.verify.proofs.real_model import RealModel

    t1, t2, f1, f2 = z3.Reals("t1 t2 f1 f2")
    for exact in (True, False):
        facts = RealModel(exact=exact)._pair_axioms(even_exp, [(t1, f1), (t2, f2)])
        assert not _sat(facts, t1 == -t2, f1 != f2)
        # no order: f may rise or fall between two arguments
        assert _sat(facts, t1 < t2, f1 < f2) and _sat(facts, t1 < t2, f1 > f2)


def test_the_bit_precise_models_facts_of_an_even_primitive(even_exp):
    from opcert.verify.proofs.fp_model import F64, FPModel

    m = FPModel()
    t1, t2 = z3.FP("t1", F64), z3.FP("t2", F64)
    f1, f2 = m.apply(even_exp, t1), m.apply(even_exp, t2)
    facts = m.axioms()
    assert not _sat(facts, t1 == z3.fpNeg(t2), z3.Not(f1 == f2))
    finite = [z3.Not(z3.fpIsInf(t)) for t in (t1, t2)] + [z3.Not(z3.fpIsNaN(t)) for t in (t1, t2)]
    assert _sat(facts, *finite, z3.fpLT(t1, t2), z3.fpLT(f1, f2))
    assert _sat(facts, *finite, z3.fpLT(t1, t2), z3.fpGT(f1, f2))


def test_the_row_proofs_facts_of_a_primitive_monotone_nowhere(even_exp):
    from opcert.verify.proofs.real_model import RealModel
    from opcert.verify.proofs.rows import _axioms

    m = RealModel(exact=True)
    t1, t2, f1, f2 = z3.Reals("t1 t2 f1 f2")
    m.apps[even_exp] = [(t1, f1), (t2, f2)]
    facts = _axioms(m)
    assert not _sat(facts, t1 == t2, f1 != f2)
    assert _sat(facts, t1 < t2, f1 < f2) and _sat(facts, t1 < t2, f1 > f2)
