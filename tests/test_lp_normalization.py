"""LpNormalization (issue 53): the reference against MPFR and ONNX's own backend cases, p as an attribute
through the CLI, opcert's implementation, the range property proved over the reals, and a gate that fails a
kernel whose squares underflow (tests/norm_kernels.py) while a careful binary64 one passes."""

import json
from fractions import Fraction

import gmpy2
import numpy as np
import pytest
from gmpy2 import mpfr
from oracle import _ziv

from opcert.spec.row_reference import reference
from opcert.verify.tensor.measure import RowOptions, measure_rows


def _mpfr_row(row: np.ndarray, p: str, dtype: str) -> list[float]:
    """Each output by MPFR: the L1 norm exact (a rational), the L2 norm's square root and the division at
    increasing precision until the rounding is decided (oracle._ziv); 0 where the norm is 0 (ONNX's cases)."""
    q = [Fraction(float(v)) for v in row.astype(np.float64)]
    s = sum((abs(v) for v in q), Fraction(0)) if p == "1" else sum((v * v for v in q), Fraction(0))
    if s == 0:
        return [0.0] * len(q)
    out = []
    for v in q:

        def at(prec, v=v):
            with gmpy2.context(precision=prec):
                norm = mpfr(gmpy2.mpq(s.numerator, s.denominator))
                norm = norm if p == "1" else gmpy2.sqrt(norm)
                return mpfr(gmpy2.mpq(v.numerator, v.denominator)) / norm

        out.append(_ziv(at, dtype) if v != 0 else 0.0)
    return out


def _rows(dtype: str) -> list[np.ndarray]:
    import ml_dtypes  # noqa: F401 - bfloat16 as a NumPy dtype

    rng = np.random.default_rng(9)
    tiny = {"float16": 1e-7, "bfloat16": 1e-37, "float32": 1e-37, "float64": 1e-300}[dtype]
    big = {"float16": 3e4, "bfloat16": 1e38, "float32": 1e38, "float64": 1e307}[dtype]
    rows = [rng.standard_normal(n) * s for n, s in ((1, 1), (2, 3), (3, 1), (7, 10), (33, 2))]
    rows += [
        rng.standard_normal(6) * tiny,  # squares below the format's smallest value
        rng.standard_normal(6) * big,  # squares above its largest
        np.array([3.0, -4.0, 0.0]),
        np.zeros(4),  # norm 0: zeros
    ]
    return [r.astype(np.dtype(dtype)) for r in rows]


@pytest.mark.parametrize("p", ["1", "2"])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_reference_is_mpfr_rounded(p, dtype):
    for row in _rows(dtype):
        got = reference("LpNormalization", row[None, :], attrs={"p": p})[0].astype(np.float64)
        assert got.tolist() == _mpfr_row(row, p, dtype), (p, row.tolist()[:6], got[:6])


def test_onnx_backend_cases(cli):
    """ONNX's own test cases (onnx/backend/test/case/node/lpnormalization.py), as `opcert ref` prints them:
    [[3, 4], [6, 8]] along axis 1 is 3/5, 4/5 (p = 2) and 3/7, 4/7 (p = 1); along axis 0 of the 2x2x3 case a
    column of zeros gives 0."""
    code, out, err = cli("ref", "LpNormalization", "--shape", "2,2", "--json", "--", 3, 4, 6, 8)
    assert code == 0, err
    y = json.loads(out)["results"]
    assert [v["result"] for v in y] == [float(np.float32(v)) for v in (0.6, 0.8, 0.6, 0.8)]
    code, out, _ = cli("ref", "LpNormalization", "--attr", "p=1", "--shape", "2,2", "--json", "--", 3, 4, 6, 8)
    assert [v["result"] for v in json.loads(out)["results"]] == [float(np.float32(v)) for v in (3 / 7, 4 / 7) * 2]
    x = np.array([[[1.0, 2.0, 2.0], [3.0, 4.0, 0.0]], [[0.0, 5.0, 5.0], [6.0, 8.0, 0.0]]], dtype=np.float32)
    with np.errstate(invalid="ignore"):
        norm = np.sqrt(np.sum(x.astype(np.float64) ** 2, axis=0, keepdims=True))
        want = np.where(norm == 0, 0, x / norm).astype(np.float32)
    assert np.array_equal(reference("LpNormalization", x, axis=0), want)
    code, _, err = cli("ref", "LpNormalization", "--attr", "p=3", "--shape", "1,2", "--", 1, 2)
    assert code == 2 and "allowed '1', '2'" in err


@pytest.mark.parametrize("p", ["1", "2"])
def test_opcerts_implementation_is_correctly_rounded_and_its_range_holds(p):
    r = measure_rows("LpNormalization", "opcert", "float32", RowOptions(samples=2000, attrs=(("p", p),)))
    assert r.status == "ok" and r.max_ulp <= 0.5, r.max_ulp
    assert {q["name"]: q["status"] for q in r.to_dict()["properties"]}["range"] == "checked"
    assert f"--attr p={p}" in r.command


def test_the_range_is_proved_over_the_reals_and_a_false_one_is_not():
    from opcert.spec import get_tensor_operator
    from opcert.spec.tensor import RowProperty
    from opcert.verify.proofs import prove_tensor
    from opcert.verify.proofs.rows import attribute_terms, prove_rows

    verdicts = {p.name: p.status for p in prove_tensor("LpNormalization", "real").properties if ":" not in p.name}
    assert verdicts["range"] == verdicts["permutation"] == "proved", verdicts
    op = get_tensor_operator("LpNormalization")[0]
    too_tight = RowProperty("tight", "range", "-0.9 <= y_i <= 0.9", lower=-0.9, upper=0.9)  # [1]: y = 1
    r = prove_rows(op, too_tight, op.standards[0].formula, attribute_terms(op), None, "onnx")
    assert r.status != "proved", r


FAULTS = """
[[check]]
name = "{name}"
op = "LpNormalization"
dtypes = ["float32"]
target = "norm_kernels:{kernel}"
mode = "sample"
samples = 300
max_ulp = 1
"""


def test_a_gate_fails_squares_that_underflow_and_passes_a_careful_kernel():
    import tomllib

    from opcert.gating.config import parse
    from opcert.gating.run import run_gate

    text = "".join(FAULTS.format(name=k, kernel=k) for k in ("lp_squares_in_format", "lp_careful"))
    by = {r.check.name: r for r in run_gate(parse(tomllib.loads(text), "lp.toml"), workers=1).results}
    assert by["lp_careful"].status == "pass", by["lp_careful"].reasons
    bad = by["lp_squares_in_format"]
    assert bad.status == "fail" and bad.accuracy["max_ulp"] > 1e6
    assert bad.accuracy["worst"]["case"] in bad.reasons[0]
