"""GroupNormalization (issue 53): each sample's channels in num_groups groups, each group a row. The reference
against MPFR (tests/test_normalizations.py's oracle, on the rows the groups make by hand), the rows through the
CLI and its refusals, num_groups reaching a kernel, runtimes measured, and a gate that fails the variance bug."""

import json
import math

import numpy as np
import pytest
from test_normalizations import EPS, FAULTS, _mpfr_row, _rows

from opcert.spec.row_reference import reference
from opcert.verify.tensor.measure import measure_rows


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
@pytest.mark.parametrize("groups", [1, 2, 3])
def test_reference_is_mpfr_rounded_over_each_group(dtype, groups):
    """A (2, 3 * G, k) tensor of test_normalizations' hard rows: each group is 3 consecutive channels of k
    elements of one sample, i.e. a row of 3k, cut by hand here (not by opcert's to_rows). Each group holds the row
    times its own factor (+-1, +-1/2, +-1/4, ...): a reference that took the groups together, or the channels in
    another order, would give other values."""
    rows = [r for r in _rows(dtype) if r.size % 3 == 0 or r.size == 1]
    for row in rows:
        k = max(1, row.size // 3)
        base = np.resize(row, (3 * k,)).astype(np.float64)
        parts = [base * (-1) ** j * 2.0 ** -(j // 2) for j in range(2 * groups)]  # sample s, group g: j = s G + g
        x = np.concatenate(parts).astype(row.dtype).reshape(2, 3 * groups, k)
        got = reference("GroupNormalization", x, attrs={"num_groups": str(groups)}).astype(np.float64)
        for s in range(2):
            for g in range(groups):
                part = x[s, 3 * g : 3 * (g + 1), :].reshape(-1)
                want = _mpfr_row("LayerNormalization", part, EPS, dtype)
                assert got[s, 3 * g : 3 * (g + 1), :].reshape(-1).tolist() == want, (dtype, groups, s, g)


def test_rows_through_the_cli_and_its_refusals(cli):
    """`opcert ref GroupNormalization --attr num_groups=2 --shape 1,4,1 -- 1 2 40000 40003`: rows [1, 2] and
    [40000, 40003], as MPFR rounds them; an axis, a count that does not divide the channels, a count opcert does
    not know, and a tensor without a channel axis are refused, saying what is allowed."""
    code, out, err = cli(
        "ref", "GroupNormalization", "--attr", "num_groups=2", "--shape", "1,4,1", "--json", "--", 1, 2, 40000, 40003
    )
    assert code == 0, err
    got = json.loads(out)
    assert [r["row"] for r in got["results"]] == [0, 0, 1, 1]
    want = [_mpfr_row("LayerNormalization", np.array(r, np.float32), EPS, "float32") for r in ([1, 2], [40000, 40003])]
    assert [r["result"] for r in got["results"]] == want[0] + want[1]
    code, _, err = cli("ref", "GroupNormalization", "--attr", "num_groups=3", "--shape", "1,4,1", "--", 1, 2, 3, 4)
    assert code == 2 and "does not divide the 4 channels" in err, err
    code, _, err = cli("ref", "GroupNormalization", "--attr", "num_groups=5", "--shape", "1,5", "--", 1, 2, 3, 4, 5)
    assert code == 2 and "num_groups" in err and "64" in err, err
    code, _, err = cli("ref", "GroupNormalization", "--axis", "1", "--shape", "1,2", "--", 1, 2)
    assert code == 2 and "takes no axis" in err, err
    code, _, err = cli("ref", "GroupNormalization", "--shape", "4", "--", 1, 2, 3, 4)
    assert code == 2 and "no channel axis" in err, err


def test_num_groups_reaches_the_kernel():
    """A kernel that normalizes each sample's channels together (one group) is far off where the check holds
    num_groups = 3; the careful one is correctly rounded there, and both agree at num_groups = 1."""
    attrs = {"num_groups": "3"}
    good = measure_rows("GroupNormalization", "norm_kernels:gn_careful", "float32", samples=300, attrs=attrs)
    assert good.status == "ok" and good.max_ulp <= 0.5, (good.error, good.max_ulp)
    bad = measure_rows("GroupNormalization", "norm_kernels:gn_one_group", "float32", samples=300, attrs=attrs)
    assert bad.status == "ok" and bad.max_ulp > 1e3, bad.max_ulp
    one = measure_rows(
        "GroupNormalization", "norm_kernels:gn_one_group", "float32", samples=300, attrs={"num_groups": "1"}
    )
    assert one.status == "ok" and one.max_ulp <= 0.5, one.max_ulp


def test_torch_and_onnxruntime_are_measured():
    """torch's group_norm and ONNX Runtime's GroupNormalization-21 and -18 over the same rows, with several channels
    per group in the shaped cases; ONNX Runtime's refusal of an empty tensor, and torch's of a group of one element
    ("Expected more than 1 value per channel"), are their failures on those cases, named (onnx.reference and
    OpenVINO: bench/normalizations.py)."""
    for target, standard in (("torch", "onnx"), ("onnxruntime", "onnx"), ("onnxruntime", "onnx-18")):
        r = measure_rows(
            "GroupNormalization", target, "float32", samples=200, attrs={"num_groups": "2"}, standard=standard
        )
        assert r.status == "ok" and r.elements > 0 and r.standard == standard, (target, r.error)
        for f in r.call_failures:
            one = math.prod(f["shape"][1:]) == 2  # (m, 2, 1): two groups of one element each
            assert f["case"] == "empty rows" or (target == "torch" and one and "per channel" in f["error"]), f


def test_a_gate_fails_the_variance_bug_with_the_row_that_shows_it():
    import tomllib

    from opcert.gating.config import parse
    from opcert.gating.run import run_gate

    text = "".join(
        FAULTS.format(name=n, op="GroupNormalization", dtypes='["float32"]', kernel=k)
        + '[check.attrs]\nnum_groups = "3"\n'
        for n, k in (("group: variance as E[x^2] - E[x]^2", "gn_naive_variance"), ("careful group", "gn_careful"))
    )
    result = run_gate(parse(tomllib.loads(text), "groups.toml"), workers=2)
    by = {r.check.name: r for r in result.results}
    bad, good = by["group: variance as E[x^2] - E[x]^2"], by["careful group"]
    assert good.status == "pass", good.reasons
    assert bad.status == "fail" and bad.accuracy["max_ulp"] > 1 and bad.accuracy["worst"]["replayed"] is True
    assert bad.reasons[0].startswith("max ULP error") and bad.accuracy["worst"]["case"] in bad.reasons[0]


def test_a_kernel_without_num_groups_is_refused_saying_what_it_lacks(tmp_path, monkeypatch):
    """A Python kernel whose signature has no num_groups keyword cannot be given the check's group count: the check
    says so (the count by its name), not an error of opcert's."""
    (tmp_path / "no_groups.py").write_text("def f(x, axis=None, epsilon=1e-5):\n    return x\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    r = measure_rows("GroupNormalization", "no_groups:f", "float32", samples=50, attrs={"num_groups": "2"})
    assert r.status == "unsupported" and "takes no keyword num_groups" in r.error and "num_groups = '2'" in r.error


def test_the_filled_groups_are_computed_but_not_counted():
    """A block of 5 rows with num_groups = 2 runs as (3, 2, n), its sixth row a copy of the first: the counts are
    the block's own rows (every element of the hard and random cases once), whatever num_groups is."""
    one = measure_rows("GroupNormalization", "opcert", "float32", samples=300, attrs={"num_groups": "1"})
    many = measure_rows("GroupNormalization", "opcert", "float32", samples=300, attrs={"num_groups": "3"})
    assert one.status == many.status == "ok"
    own = [c for c in one.cases if not c["label"].startswith("shape")]
    again = [c for c in many.cases if not c["label"].startswith("shape")]
    assert [(c["label"], c["rows"]) for c in own] == [(c["label"], c["rows"]) for c in again]
