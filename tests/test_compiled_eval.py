"""The compiled implementation (expr.compiled_eval) gives numpy_eval's bits: on every operator's
implementation, every standard, at its defaults, ONNX's test attributes and the attribute grid, for inputs
of binary16, bfloat16, binary32 and binary64 precision; through impl.run on every binary16 and bfloat16
input; on blocks where a select's condition has one value (a primitive no element reaches is not called);
on each side of impl.run's MIN_SIZE. NaN payloads are not compared (nothing reads them: see the module)."""

import importlib

import numpy as np
import pytest
from conftest import all_16bit, first_of_each_kind, same_bits

import opcert
from opcert.errors import UsageError
from opcert.expr import compiled_eval
from opcert.expr.numpy_eval import eval_numpy, uses_x
from opcert.impl import run
from opcert.impl.run import MIN_SIZE
from opcert.spec.attrs import resolve
from opcert.verify.accuracy.attr_sweep import attribute_sets

OPS = [op.name for op in opcert.operators()]
SPECIALS = [
    0.0,
    -0.0,
    np.inf,
    -np.inf,
    np.nan,
    5e-324,
    -5e-324,
    1e-310,
    -1e-310,
    2.0**-1022,
    1.0,
    -1.0,
    700.5,
    -700.5,
    709.8,
    -745.2,
    40.0,
    -40.0,
    1000.0,
    -1000.0,
    20.0,
    -20.0,
    2.0**-27,
    -(2.0**-27),
    1.7976931348623157e308,
    -1.7976931348623157e308,
]


def _inputs(bits: int, rng) -> np.ndarray:
    """Random values of that precision (all exponents), the specials, and dense runs around the
    operators' break points."""
    if bits == 53:
        x = rng.integers(0, 2**64, 12000, dtype=np.uint64).view(np.float64)
    else:
        with np.errstate(invalid="ignore"):  # the NaN patterns
            x = rng.integers(0, 2**32, 12000, dtype=np.uint64).astype(np.uint32).view(np.float32).astype(np.float64)
    dense = np.concatenate([np.linspace(-1200, 1200, 4000), np.linspace(-3, 3, 2000), np.linspace(-50, -30, 500)])
    x = np.concatenate([x, dense, SPECIALS])
    if bits < 53:
        # values of the format: bits significant bits (a binary32 value rounded to them)
        m, e = np.frexp(x)
        with np.errstate(invalid="ignore", over="ignore"):
            x = np.where(np.isfinite(x), np.ldexp(np.round(m * 2.0**bits) / 2.0**bits, e), x)
    return x


def _attr_sets(op, std):
    out = []
    for s in attribute_sets(op, std.key):
        try:
            out.append({k: float(v) for k, v in resolve(op, s.attrs, std.key).items()})
        except UsageError:  # a grid value outside the attribute's domain
            continue
    return out


def _implementation_kinds(name: str) -> frozenset:
    """The kinds of node of an operator's implementations, one per standard, and the standards' names."""
    op = opcert.get_operator(name)
    kinds = set()
    for std in op.standards:
        kinds |= {n.op for n in op.implementation_for(std.key).nodes()} | {f"standard:{std.key}"}
    return frozenset(kinds)


# CI: the operators that bring a kind of node or a standard (conftest.first_of_each_kind), each compiled at four
# precisions; every operator in the slow run. Every operator's compiled kernel meets numpy_eval in CI all the same,
# on every 16-bit input (test_run_gives_the_same_bits_either_way_on_every_16_bit_input).
_CI_OPS = first_of_each_kind([(n, _implementation_kinds(n)) for n in OPS])


@pytest.mark.parametrize("name", [pytest.param(n, marks=() if n in _CI_OPS else [pytest.mark.slow]) for n in OPS])
def test_same_bits_as_numpy_eval(name):
    op = opcert.get_operator(name)
    rng = np.random.default_rng(11)
    checked = 0
    for std in op.standards:
        e = op.implementation_for(std.key)
        if not compiled_eval.worth_compiling(e):
            continue
        for bits in (8, 11, 24, 53):
            x = _inputs(bits, rng)
            parts = (x, x[x > 0], x[x < 0], x[(x > -50) & (x < -41)], x[x < -2000], x[(x > 1) & (x < 2)])
            for a in _attr_sets(op, std):
                for part in parts:
                    got = compiled_eval.evaluate(e, part, a, bits)
                    assert got is not None, (name, std.key)
                    with np.errstate(all="ignore"):
                        want = np.broadcast_to(eval_numpy(e, part, a, input_bits=bits), part.shape)
                    same = same_bits(got, want)
                    assert same.all(), (name, std.key, bits, a, part[~same][:5], got[~same][:5], want[~same][:5])
                    checked += 1
    assert checked or name in ("Erf", "Identity", "Tanh")


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("name", OPS)
def test_run_gives_the_same_bits_either_way_on_every_16_bit_input(name, dtype, monkeypatch):
    op = opcert.get_operator(name)
    x = all_16bit(dtype)
    if dtype not in op.dtypes:
        pytest.skip(f"{name} does not take {dtype}")
    assert x.size >= MIN_SIZE
    got = run(name, x)
    monkeypatch.setattr(compiled_eval, "_ENABLED", False)
    want = run(name, x)
    assert got.dtype == want.dtype == x.dtype
    assert same_bits(got, want).all()


def test_a_primitive_no_element_reaches_is_not_called():
    """Mish on a block of negative inputs: its tanh (of the positive side) is not called, as numpy_eval
    does not call it; on a block of both signs it is."""
    from opcert.expr import PRIMITIVES

    op = opcert.get_operator("Mish")
    calls = []
    tanh = PRIMITIVES["tanh"]
    real = tanh.numpy

    def counted(t, *args, **kw):
        calls.append(np.size(t))
        return real(t, *args, **kw)

    object.__setattr__(tanh, "numpy", counted)  # a frozen record: put back below
    try:
        x = -np.linspace(0.5, 30.0, 8192)
        y = compiled_eval.evaluate(op.implementation, x, {}, 24)
        assert calls == []
        assert same_bits(y, eval_numpy(op.implementation, x, {}, 24)).all()
        compiled_eval.evaluate(op.implementation, np.concatenate([x, -x]), {}, 24)
        assert calls == [2 * x.size]
    finally:
        object.__setattr__(tanh, "numpy", real)


@pytest.mark.parametrize("name", ["HardSigmoid", "Mish", "Gelu", "Swish", "Celu"])
def test_calls_on_each_side_of_min_size_agree(name, monkeypatch):
    rng = np.random.default_rng(3)
    x = rng.integers(0, 2**32, MIN_SIZE, dtype=np.uint64).astype(np.uint32).view(np.float32)
    compiled = []
    real = compiled_eval.evaluate

    def spy(*a, **kw):
        y = real(*a, **kw)
        compiled.append(y is not None)
        return y

    monkeypatch.setattr(importlib.import_module("opcert.impl.run"), "evaluate", spy)  # impl.run's name for it
    whole = run(name, x)
    assert compiled == [True]  # the loops computed it
    parts = [run(name, x[i : i + 1000]) for i in range(0, x.size, 1000)]
    assert compiled == [True]  # numpy_eval computed these
    assert same_bits(whole, np.concatenate(parts)).all()


def test_what_it_does_not_run():
    """A reduction over rows (Softmax) and an expression with nothing to fuse (Tanh: its primitive of x
    is all) go to numpy_eval: evaluate says so with None."""
    from opcert.spec import get_tensor_operator

    softmax = get_tensor_operator("Softmax")[0]
    x = np.linspace(-3, 3, 8192)
    assert compiled_eval.evaluate(softmax.implementation, x.reshape(64, 128), {}, 24) is None
    assert compiled_eval.evaluate(opcert.get_operator("Tanh").implementation, x, {}, 24) is None


def test_the_source_does_not_depend_on_the_attributes():
    """One kernel serves every attribute value (a sweep over the attribute grid compiles nothing more):
    the attributes' subexpressions are read from an array."""
    op = opcert.get_operator("HardSigmoid")
    plan = compiled_eval.source(op.implementation, 24)[1]
    assert plan.slots and all(not uses_x(s) for s in plan.slots)
    x = np.linspace(-10, 10, 8192)
    kernel = compiled_eval.kernel(op.implementation, 24)
    for alpha, beta in ((0.2, 0.5), (1.0, 0.0), (-2.5, 1e4)):
        a = {k: float(v) for k, v in resolve(op, {"alpha": alpha, "beta": beta}).items()}
        assert same_bits(
            compiled_eval.evaluate(op.implementation, x, a, 24), eval_numpy(op.implementation, x, a, 24)
        ).all()
        assert compiled_eval.kernel(op.implementation, 24) is kernel


def test_minimum_and_maximum_on_every_pair_of_specials():
    """compiled_ops' IEEE minimum and maximum against numpy_eval's, bit for bit (NaN results: the default
    quiet NaN in both): signed zeros in either order, infinities, NaNs with payloads and signs, subnormals.
    The catalog only takes them against +0 and 1, where a wrong zero rule would not show."""
    from opcert.expr import compiled_ops
    from opcert.expr import numpy_eval as ne

    sp = np.concatenate(
        [
            [0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, -np.nan, 5e-324, -5e-324, 2.5],
            np.array([0x7FF8000000000123, 0xFFF0000000000001], np.uint64).view(np.float64),
        ]
    )
    a, b = (m.ravel() for m in np.meshgrid(sp, sp))
    with np.errstate(all="ignore"):
        for compiled, numpy_one in ((compiled_ops.ieee_min, ne._minimum), (compiled_ops.ieee_max, ne._maximum)):
            got = np.array([compiled(float(p), float(q)) for p, q in zip(a, b)])
            want = numpy_one(a, b)
            assert np.array_equal(got.view(np.uint64), want.view(np.uint64))


def test_every_kind_of_node():
    """Expressions beyond the catalog's: a fused multiply-add of a product that is not of two leaves (the
    CPU's fma, not a*b + c), isnan, and, or, not, abs, every comparison, a select of truth values, a
    primitive of a primitive, a primitive of the attributes alone, division by zero; at inputs of 24 and
    53 bits, against numpy_eval."""
    from opcert.expr import (
        absolute,
        attr,
        both,
        const,
        either,
        eq,
        exp,
        expm1,
        fma,
        isnan,
        log1p,
        maximum,
        minimum,
        negate,
        select,
        tanh,
        var,
    )

    x, a = var(), attr("alpha")
    cases = [
        fma(x * x, x, const(1)),
        fma(x, attr("alpha"), x * x),
        select(either(isnan(x), x >= 2), absolute(x) - 1, -x / (x - const(3))),
        select(both(negate(x < 0), x <= 5), log1p(exp(x)), tanh(exp(a) * x)),
        select(select(eq(a, const(0)), x > 1, x < -1), expm1(x), minimum(x, a) / const(0)),
        maximum(-const(0), minimum(x, const(0))) + maximum(x * 0, -const(0)),
    ]
    rng = np.random.default_rng(5)
    for bits in (24, 53):
        xs = _inputs(bits, rng)
        for alpha in (0.0, 1.5, -2.0):
            for e in cases:
                got = compiled_eval.evaluate(e, xs, {"alpha": alpha}, bits)
                assert got is not None, str(e)
                with np.errstate(all="ignore"):
                    want = np.broadcast_to(eval_numpy(e, xs, {"alpha": alpha}, input_bits=bits), xs.shape)
                assert same_bits(got, want).all(), (str(e), bits, alpha)
