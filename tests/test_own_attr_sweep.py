"""opcert's own implementation over its own attribute sweep (issue 30, item 5).

Before: 31 of 516 attribute sets failed in float16/bfloat16 (IEEE's 0 * inf = NaN where an attribute is
0 and the input infinite; zeros of the wrong sign where an attribute is 0 or negative), and the float32
proofs crashed (exit 3) where a bound or a domain lies at or beyond the largest binary32.
"""

import math

import ml_dtypes
import numpy as np
import pytest

import opcert
from opcert.gating.config import DEFAULT_BUDGET, parse
from opcert.gating.run import run_gate

INF = math.inf


def _swept_operators():
    return [op.name for op in opcert.operators() if any(op.standard(None).has(a.name) for a in op.attributes)]


@pytest.mark.slow  # 516 exhaustive 16-bit checks (24 s of the suite on 2 cores): CASES below pin what it found
def test_every_16bit_attribute_set_passes_the_gate_on_opcerts_implementation():
    checks = [
        {
            "op": name,
            "dtypes": ["float16", "bfloat16"],
            "mode": "exhaustive",
            "attr_sweep": True,
            "proofs": "all",
            "max_ulp": DEFAULT_BUDGET["float16"],
        }
        for name in _swept_operators()
    ]
    gate = run_gate(parse({"check": checks}, "own attribute sweep"))
    failed = [(r.check.op, r.dtype, dict(r.check.attrs), r.reasons[:2]) for r in gate.results if r.status != "pass"]
    assert len(gate.results) > 500 and not failed, failed[:5]


# The values each standard's formula and the declared limits give, by hand (IEEE arithmetic at finite x,
# the limit of the real function at +-inf, a zero limit with the sign the formula has next to it).
CASES = [
    ("LeakyRelu", {"alpha": 0.0}, "float16", -INF, -0.0),  # 0 * x -> -0 for x < 0; the limit
    ("PRelu", {"slope": 0.0}, "float16", -INF, -0.0),
    ("Linear", {"alpha": 0.0, "beta": 0.25}, "float16", INF, 0.25),
    ("Linear", {"alpha": 0.0, "beta": 0.25}, "bfloat16", -INF, 0.25),
    ("HardSigmoid", {"alpha": 0.0, "beta": 0.5}, "float16", INF, 0.5),
    ("HardSigmoid", {"alpha": 0.0, "beta": 0.5}, "float16", -INF, 0.5),
    ("Selu", {"gamma": 0.0}, "float16", INF, 0.0),
    ("Swish", {"alpha": 0.0}, "float16", INF, INF),  # x * sigmoid(0) = x / 2
    ("ScaledTanh", {"alpha": 1.0, "beta": 0.0}, "float16", INF, 0.0),
    ("ScaledTanh", {"alpha": 1.0, "beta": 0.0}, "float16", -INF, -0.0),  # tanh(0 * x) = -0 for x < 0
    ("ScaledTanh", {"alpha": 0.0, "beta": 0.5}, "float16", -INF, -0.0),  # 0 * tanh(negative) = -0
    ("ScaledTanh", {"alpha": 0.0, "beta": 0.0}, "float16", -INF, -0.0),  # +0 * tanh(0 * x) = +0 * -0 = -0
    ("ScaledTanh", {"alpha": 0.0, "beta": 0.0}, "float16", INF, 0.0),
    ("ScaledTanh", {"alpha": -1.0, "beta": 0.0}, "float16", INF, -0.0),  # -1 * tanh(+0) = -0
    ("Selu", {"alpha": 0.0, "gamma": 0.0}, "float16", -INF, 0.0),  # 0 * (0 * 0 - 0) = 0 * +0
    ("Selu", {"gamma": -1.0}, "float16", 0.0, -0.0),  # gamma * (alpha e^0 - alpha) = -1 * +0
    ("Selu", {"gamma": -1.0}, "float16", -0.0, -0.0),
    ("Selu", {"alpha": 0.0}, "float16", -1.0, 0.0),  # gamma * (0 * e^x - 0) = gamma * +0
    ("Selu", {"alpha": 0.0}, "float16", -INF, 0.0),
    ("Elu", {"alpha": 0.0}, "bfloat16", -9.183549615799121e-41, 0.0),  # exp(x) rounds to 1: 0 * (1 - 1) = +0
    ("Elu", {"alpha": 0.0}, "bfloat16", -1.0, -0.0),  # 0 * (e^-1 - 1) = -0
]
DT = {"float16": np.float16, "bfloat16": ml_dtypes.bfloat16}


@pytest.mark.parametrize("op,attrs,dtype,x,want", CASES, ids=[f"{c[0]}-{c[1]}-{c[3]}" for c in CASES])
def test_the_implementation_and_the_reference_give_the_formulas_value(op, attrs, dtype, x, want):
    from opcert.spec.attrs import resolve
    from opcert.spec.reference import reference_detailed

    xs = np.array([x], dtype=DT[dtype])
    got = opcert.run(op, xs, **attrs).astype(np.float64)[0]
    ref = reference_detailed(op, xs, resolve(opcert.get_operator(op), attrs)).rounded.astype(np.float64)[0]
    for v in (got, ref):
        assert v == want and math.copysign(1, v) == math.copysign(1, want), (v, want)


# The other standards' sets, by hand as above: at an attribute of 0, alpha * x is 0 at +-inf too
OTHER_STANDARDS = [
    ("HardSwish", "directml", {"alpha": 0.0, "beta": 0.5}, INF, INF),  # x * 0.5 (NaN before)
    ("HardSwish", "directml", {"alpha": 0.0, "beta": 0.5}, -INF, -INF),
    ("Softplus", "directml-parametric", {"alpha": 0.0, "beta": 1.0}, INF, 0.0),  # 0 * anything (NaN; ref inf)
    ("Softplus", "directml-parametric", {"alpha": 0.0, "beta": 1.0}, -INF, 0.0),
    ("Softplus", "directml-parametric", {"alpha": 1.0, "beta": 0.0}, INF, 0.693359375),  # ln 2 in float16 (NaN)
    ("Softplus", "directml-parametric", {"alpha": 1.0, "beta": 0.0}, -INF, 0.693359375),
    # ceil of a sum in (-1, 0) is IEEE's -0, though -1 + 1e-20 rounds to -1 in binary64 (the reference said +0)
    ("Ceil", "directml", {"scale": 1.0, "bias": 1e-20}, -1.0, -0.0),
    # -0 times a hard sigmoid of 0 (beta <= 0) is -0 (opcert's code said +0)
    ("HardSwish", "directml", {"alpha": 1 / 6, "beta": -2.5}, -0.0, -0.0),
]


@pytest.mark.parametrize("op,standard,attrs,x,want", OTHER_STANDARDS)
def test_the_other_standards_give_the_formulas_value_at_an_attribute_of_zero(op, standard, attrs, x, want):
    xs = np.array([x], dtype=np.float16)
    got = opcert.run(op, xs, standard=standard, **attrs).astype(np.float64)[0]
    ref = opcert.reference(op, xs, standard=standard, **attrs).astype(np.float64)[0]
    for v in (got, ref):
        assert v == want and math.copysign(1, v) == math.copysign(1, want), (v, want)


def test_a_check_whose_only_numbers_equal_the_references_passes():
    """Acosh at a scale of -2^-149 is NaN at every float16 input but -inf, where it is +inf, the reference's too: no
    output is off, so no ULP figure is owed (the gate failed it: "the worst case could not be re-verified")."""
    check = {"op": "Acosh", "standard": "directml", "dtypes": ["float16"], "mode": "exhaustive", "proofs": []}
    check["attrs"] = {"scale": -1.401298464324817e-45, "bias": 0.0}
    (r,) = run_gate(parse({"check": [dict(check, max_ulp=DEFAULT_BUDGET["float16"])]}, "acosh")).results
    assert r.status == "pass" and r.accuracy["max_ulp"] is None and r.accuracy["histogram"]["0"] == 1, r.reasons


@pytest.mark.slow  # every other standard's attribute sets, every 16-bit input: 'opcert gate' as the user runs it
def test_every_16bit_attribute_set_of_the_other_standards_passes_the_gate_on_opcerts_implementation():
    checks = [
        {
            "op": op.name,
            "standard": s.key,
            "dtypes": [d for d in ("float16", "bfloat16") if any(d in sp.dtypes for sp in s.support)],
            "mode": "exhaustive",
            "attr_sweep": True,
            "proofs": [],
            "max_ulp": DEFAULT_BUDGET["float16"],
        }
        for op in opcert.operators()
        for s in op.standards
        if s.key != op.primary and not s.rounded_scale_bias and any(s.has(a.name) for a in op.attributes)
    ]
    gate = run_gate(parse({"check": [c for c in checks if c["dtypes"]]}, "other standards' attribute sweep"))
    failed = [(r.check.op, r.dtype, dict(r.check.attrs), r.reasons[:2]) for r in gate.results if r.status != "pass"]
    assert len(gate.results) > 100 and not failed, failed


@pytest.mark.parametrize(
    "op,attrs,prop",
    [
        ("Celu", {"alpha": 3.4028234663852886e38}, "range"),  # the bound -alpha is -max: its neighbour is -inf
        ("HardSigmoid", {"alpha": 1.401298464324817e-45}, "saturated_high"),  # a domain beyond every binary32
        ("HardSigmoid", {"beta": 3.4028234663852886e38}, "range"),
    ],
)
def test_float32_proofs_at_the_extreme_attributes_decide(op, attrs, prop):
    from opcert.verify.proofs import prove

    rep = prove(op, "float32", attrs, [prop])
    assert [(p.name, p.status) for p in rep.properties] == [(prop, "proved")]
