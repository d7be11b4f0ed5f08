"""The catalog against its sources: ONNX's own schemas (onnx.defs), the seed documents."""

import re
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

import opcert
from opcert.errors import UsageError
from opcert.spec import CATALOG, get_operator
from opcert.spec.attrs import describe, exact_decimal, resolve

SEEDS = Path(__file__).resolve().parents[2] / "shared" / "seeds"
ONNX_TYPE = {
    "tensor(float16)": "float16",
    "tensor(bfloat16)": "bfloat16",
    "tensor(float)": "float32",
    "tensor(double)": "float64",
    **{f"tensor({t})": t for t in ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")},
}


def test_the_catalog_holds_the_seed_operators_and_the_activation_family():
    assert {
        "Tanh",
        "ScaledTanh",
        "HardSigmoid",
        "Shrink",
        "Celu",
        "Relu",
        "Sigmoid",
        "Gelu",
        "Swish",
        "Softplus",
        "Elu",
        "Selu",
        "LeakyRelu",
        "PRelu",
        "ThresholdedRelu",
        "HardSwish",
        "Mish",
        "Softsign",
    } <= set(CATALOG)


@pytest.mark.parametrize("name", ["Tanh", "HardSigmoid", "Shrink", "Celu"])
def test_onnx_types_and_defaults_match_onnx_defs(name):
    from onnx import defs

    std = get_operator(name).standard("onnx")
    for row in std.support:
        schema = defs.get_schema(name, max_inclusive_version=int(row.since))
        assert schema.since_version == int(row.since), (name, row.since)
        types = {ONNX_TYPE[t] for t in schema.type_constraints[0].allowed_type_strs}
        assert types == set(row.dtypes), (name, row.since)
    latest = defs.get_schema(name)
    assert latest.since_version == int(std.support[-1].since)
    for attr_name, a in latest.attributes.items():
        # the same binary32 value (the catalog writes 0.2; the schema stores binary32 0.2)
        assert np.float32(std.defaults[attr_name]) == np.float32(a.default_value.f), attr_name


def _seed_tables(path: Path):
    """(feature level, dimension counts, data types) rows of a seed's tensor-support tables."""
    text = path.read_text()
    rows = []
    for m in re.finditer(
        r"DML_FEATURE_LEVEL_(\d+)_(\d+) and above\n\|.*\n\|.*\n\| InputTensor \| Input \| ([^|]+)\| ([^|]+)\|", text
    ):
        rows.append((f"{m.group(1)}.{m.group(2)}", m.group(3).strip(), m.group(4).strip()))
    return rows


DML_TYPE = {
    "FLOAT32": "float32",
    "FLOAT16": "float16",
    "INT32": "int32",
    "INT16": "int16",
    "INT8": "int8",
    "UINT32": "uint32",
    "UINT16": "uint16",
    "UINT8": "uint8",
}


@pytest.mark.skipif(not SEEDS.exists(), reason="the seed documents are in ../shared/seeds, beside the repository")
@pytest.mark.parametrize("name,seed", [("ScaledTanh", "000"), ("HardSigmoid", "001"), ("Shrink", "002")])
def test_directml_tables_match_the_seed_documents(name, seed):
    path = next(SEEDS.glob(f"{seed}_*.txt"))
    rows = _seed_tables(path)
    assert rows, "no table found in the seed"
    std = get_operator(name).standard("directml")
    for level, dims, types in rows:
        sup = std.support_at(level)
        lo, _, hi = dims.partition(" to ")
        assert sup.ranks == (int(lo), int(hi or lo)), (level, dims)
        assert set(sup.dtypes) == {DML_TYPE[t.strip()] for t in types.split(",")}, (level, types)
    intro = re.search(r"introduced in `DML_FEATURE_LEVEL_(\d+)_(\d+)`", path.read_text())
    assert std.support[0].since == f"{intro.group(1)}.{intro.group(2)}"


@pytest.mark.skipif(not SEEDS.exists(), reason="the seed documents are in ../shared/seeds")
def test_celu_table_matches_its_seed():
    text = next(SEEDS.glob("004_*.txt")).read_text()
    assert "DML_FEATURE_LEVEL_3_0" in text and "1 to 8" in text
    std = get_operator("Celu").standard("directml")
    assert std.support == (std.support[0],) and std.support[0].since == "3.0"
    assert std.support[0].ranks == (1, 8) and set(std.support[0].dtypes) == {"float16", "float32"}


@pytest.mark.parametrize(
    "spelling",
    [
        "ScaledTanh",
        "scaledtanh",
        "SCALEDTANH",
        "DML_ACTIVATION_SCALED_TANH",
        "dml_activation_scaled_tanh_operator_desc",
    ],
)
def test_lookup_by_any_spelling(spelling):
    assert get_operator(spelling).name == "ScaledTanh"


def test_unknown_operator_names_the_allowed_ones():
    with pytest.raises(UsageError, match="unknown operator 'Hardtanh'.*Tanh"):
        get_operator("Hardtanh")


def test_attributes_are_exact_binary32():
    a = resolve(get_operator("HardSigmoid"), {})
    assert a["alpha"] == Fraction(13421773, 2**26)
    assert exact_decimal(a["alpha"]) == "0.20000000298023223876953125"
    assert describe(a)["alpha"]["bits"] == "0x3e4ccccd"


def test_directml_attribute_names_are_accepted():
    a = resolve(get_operator("Shrink"), {"Threshold": "1.5", "Bias": 0.25})
    assert a == {"bias": Fraction(1, 4), "lambd": Fraction(3, 2)}


@pytest.mark.parametrize(
    "op,attrs,message",
    [
        ("Celu", {"alpha": 0}, "outside its domain"),
        ("Celu", {"alpha": -1}, "outside its domain"),
        ("HardSigmoid", {"alpha": "nan"}, "not finite"),
        ("HardSigmoid", {"alpha": float("inf")}, "not finite"),
        ("HardSigmoid", {"alpha": "1e39"}, "overflows binary32"),
        ("HardSigmoid", {"gamma": 1}, "unknown attribute 'gamma'.*allowed: alpha, beta"),
        ("Mish", {"alpha": 1}, "no attributes"),
        ("Shrink", {"lambd": "abc"}, "not a number"),
        ("Shrink", {"lambd": 1, "Threshold": 2}, "given twice"),
    ],
)
def test_bad_attributes(op, attrs, message):
    with pytest.raises(UsageError, match=message):
        resolve(get_operator(op), attrs)


def test_defaults_per_standard_are_recorded():
    for op in CATALOG.values():
        for std in op.standards:
            assert set(std.defaults) <= set(std.attribute_names), (op.name, std.key)
            # an attribute without a default in the standard (PRelu's slope) has opcert's stated example
            for a in op.attributes:
                if std.has(a.name) and a.name not in std.defaults:
                    assert a.example is not None, (op.name, std.key, a.name)
    assert get_operator("ScaledTanh").standard("directml").defaults == {"alpha": 1.0, "beta": 0.5}


def test_reference_of_integer_shrink_rounds_half_even_and_saturates():
    # Hand-computed: bias 1.5, lambd 0.5. 5 - 1.5 = 3.5 -> 4; 4 - 1.5 = 2.5 -> 2; -5 + 1.5 = -3.5 -> -4;
    # 0 is in the dead zone; -128 + 1.5 = -126.5 -> -126; with bias -100: 100 + 100 saturates to 127.
    x = np.array([5, 4, -5, 0, -128], dtype=np.int8)
    assert opcert.reference("Shrink", x, bias=1.5, lambd=0.5).tolist() == [4, 2, -4, 0, -126]
    assert opcert.reference("Shrink", np.array([100], np.int8), bias=-100, lambd=0.5).tolist() == [127]
    assert opcert.reference("Shrink", np.array([1, 200], np.uint8), bias=3, lambd=0.5).tolist() == [0, 197]


def test_an_expressions_cached_hash_is_not_pickled():
    """Expr caches its hash (the NumPy interpreter hashes subexpressions per block); string
    hashes are salted per process, so a worker must compute its own, never receive one."""
    import pickle

    e = opcert.get_operator("Mish").implementation
    h = hash(e)
    state = pickle.loads(pickle.dumps(e)).__dict__
    assert "_hash" not in state
    e2 = pickle.loads(pickle.dumps(e))
    assert e2 == e and hash(e2) == h and {e: 1}[e2] == 1


def test_parity_rules():
    from opcert.expr import absolute, attr, const, exp, maximum, parity, select, tanh, var

    x = var()
    assert parity(x) == "odd" and parity(const(2)) == "even" and parity(attr("alpha")) == "even"
    assert parity(attr("alpha") * tanh(attr("beta") * x)) == "odd"
    assert parity(x / (1 + absolute(x))) == "odd"
    assert parity(x * x) == "even" and parity(exp(x * x)) == "even" and parity(tanh(absolute(x))) == "even"
    assert parity(x + 1) is None and parity(exp(x)) is None and parity(x * exp(x)) is None
    assert parity(-x) == "odd" and parity(x - tanh(x)) == "odd" and parity(x + x * x) is None
    assert parity(maximum(x, -x)) is None and parity(select(x > 0, x, -x)) is None
    # r on x > 0 extended as an odd function (Round's forms), and selects on a condition even in x
    from opcert.expr import eq, floor

    def signed(r):
        return select(x < 0, -r(-x), select(x > 0, r(x), x))

    assert parity(signed(lambda t: floor(t + const(0.5)))) == "odd" and parity(signed(exp)) == "odd"
    assert parity(select(x < 0, -exp(-x), select(x > 0, tanh(x), x))) is None  # not one r on both sides
    assert parity(select(x < 0, exp(-x), select(x > 0, exp(x), x))) is None  # -r(-x) lacks its negation
    assert parity(select(x < 0, -exp(-x), select(x > 0, exp(x), const(0)))) is None  # 0, not x: -0 -> +0
    assert parity(select(absolute(x) >= 4, x, tanh(x))) == "odd" and parity(select(x >= 4, x, tanh(x))) is None
    assert parity(select(eq(attr("mode"), 0), tanh(x), x * x)) is None
    assert parity(select(eq(attr("mode"), 0), x * x, exp(absolute(x)))) == "even"


def _parity_claims():
    from opcert.expr import parity

    return [
        (op.name, s.key, parity(op.reference_form(s.key)))
        for op in CATALOG.values()
        for s in op.standards
        if parity(op.reference_form(s.key))
    ]


def test_parity_is_found_where_the_sweep_relies_on_it():
    assert {name for name, _, _ in _parity_claims()} == {
        "Abs",
        "Asin",
        "Asinh",
        "Atan",
        "Atanh",
        "Cos",
        "Cosh",
        "Erf",
        "Identity",
        "Neg",
        "Reciprocal",
        "Round",
        "ScaledTanh",
        "Sin",
        "Sinh",
        "Softsign",
        "Tan",
        "Tanh",
    }


@pytest.mark.parametrize("name,key,p", _parity_claims())
def test_parity_holds_for_the_real_functions_by_mpfr(name, key, p):
    """Where parity() calls an operator's reference form odd (or even), MPFR's value at -x is
    the negated (or the same) value at x (the float32 sweep reuses one side's reference for the
    other on that word), at the default attributes and at others of the other sign."""
    import gmpy2
    from oracle import catalog_scalar

    op = get_operator(name)
    variants = [resolve(op, None, key)]
    if variants[0]:
        variants.append({k: -v if k != "approximate" else v for k, v in variants[0].items()})
    for fr in variants:
        try:
            a = {k: float(v) for k, v in resolve(op, {k: float(v) for k, v in fr.items()}, key).items()}
        except UsageError:  # outside the attribute's domain
            continue
        for x in (2.0**-140, 1e-30, 0.3, 0.5089993968964391, 1.0, 3.75, 20.0, 1e30):
            f, g = catalog_scalar(name, x, a, "mpfr200"), catalog_scalar(name, -x, a, "mpfr200")
            # compared exactly (a negation in gmpy2's default context would round to 53 bits)
            same_size = gmpy2.cmp_abs(f, g) == 0
            assert same_size and gmpy2.sign(g) == (-1 if p == "odd" else 1) * gmpy2.sign(f), (name, key, a, x, f, g)


@pytest.mark.parametrize("name,key,p", _parity_claims())
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_the_reference_of_a_negated_half_is_the_mirror_of_the_first(name, key, p, dtype, monkeypatch):
    """reference_detailed computes the fast path once for a sample closed under negation of an
    odd (even) function, and takes the second half from the first: every field equal, bit for bit
    (exact zeros' signs included), to the reference computed on both halves."""
    from opcert.formats import get_format
    from opcert.spec import reference as R
    from opcert.verify.accuracy.inputs import sample

    op = get_operator(name)
    fmt = get_format(dtype)
    attrs = resolve(op, None, key)
    x = (
        np.arange(1 << 16, dtype=np.uint16).view(np.float16)
        if dtype == "float16"
        else sample(op, fmt, attrs, 4000 if dtype == "float64" else 20000, seed=3)
    )
    assert R._negated_half(x.reshape(-1), fmt) == x.size // 2
    mirrored = R.reference_detailed(op, x, attrs, key)
    monkeypatch.setattr(R, "parity", lambda e: None)
    both = R.reference_detailed(op, x, attrs, key)
    for field in ("rounded", "exact_hi", "exact_lo", "ambiguous_binade"):
        a, b = np.asarray(getattr(mirrored, field)), np.asarray(getattr(both, field))
        assert a.tobytes() == b.tobytes(), field
    assert mirrored.slow_path == both.slow_path
    if p == "odd":
        assert (mirrored.rounded == 0).any()  # the zeros, with their signs, are among them


def test_only_a_negated_second_half_is_mirrored():
    from opcert.formats import get_format
    from opcert.spec.reference import _negated_half

    f32 = get_format("float32")
    x = np.array([0.5, 2.0, 0.0, -0.5, -2.0, 0.0], np.float32)
    assert _negated_half(x, f32) == 0  # +0 where -0, the negation of +0, belongs
    x[5] = -0.0
    assert _negated_half(x, f32) == 3
    assert _negated_half(np.array([0.5, -0.0, -0.5, 0.0], np.float32), f32) == 2  # -(-0) is +0
    assert _negated_half(x[[0, 1, 2, 4, 3, 5]], f32) == 0 and _negated_half(x[:5], f32) == 0  # out of order
    y = x.copy()
    y[4] = np.nextafter(np.float32(-2.0), np.float32(0))
    assert _negated_half(y, f32) == 0
    # already negative in the first half: its twin is positive (hypothesis found [-1, -1] taken as one)
    assert _negated_half(np.array([-1.0, -1.0], np.float32), f32) == 0
    assert _negated_half(np.array([-1.0, 1.0], np.float32), f32) == 1
