"""Proofs: every declared property proved; false properties and broken
implementations refuted with counterexamples that replay."""

import dataclasses
import json
from fractions import Fraction

import numpy as np
import pytest

import opcert
from opcert.errors import UsageError
from opcert.expr import attr, const, expm1, isnan, maximum, minimum, select, var
from opcert.spec.model import Property
from opcert.verify.proofs import impl_level, prove

OPS = ["Tanh", "ScaledTanh", "HardSigmoid", "Shrink", "Celu"]
x = var("x")


@pytest.mark.parametrize("op", OPS)
def test_every_declared_property_of_the_specification(op):
    r = prove(op)
    assert r.ok, [(p.name, p.status, p.note) for p in r.properties if not p.ok]
    assert {p.status for p in r.properties} <= {"proved", "skipped", "refuted"}
    assert all(p.status != "unknown" for p in r.properties)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
@pytest.mark.parametrize("op", OPS)
def test_every_declared_property_of_the_implementation(op, dtype):
    r = prove(op, dtype)
    assert r.ok, [(p.name, p.status, p.note, p.counterexample) for p in r.properties if not p.ok]
    assert all(p.status in ("proved", "skipped") for p in r.properties)


def test_hardsigmoid_float32_range_and_monotonic():
    r = prove("HardSigmoid", "float32", properties=["range", "monotonic"])
    assert [(p.name, p.status) for p in r.properties] == [("range", "proved"), ("monotonic", "proved")]
    assert r.elapsed_s < 60


def test_hardsigmoid_monotone_iff_alpha_nonnegative():
    (p,) = prove("HardSigmoid", properties=["monotonic"]).properties
    assert p.status == "proved" and str(opcert.get_operator("HardSigmoid").properties[1].condition) == "(alpha >= 0)"
    out = p.outside_condition
    assert out["status"] == "refuted" and out["counterexample"]["replayed"] is True
    assert float(out["counterexample"]["attrs"]["alpha"]) < 0


def test_celu_lower_bound_for_every_alpha():
    (p,) = prove("Celu", properties=["range"]).properties
    assert p.status == "proved" and p.statement == "Celu(x) >= -alpha"


def test_shrink_bias_1_lambd_half_is_not_monotone():
    (p,) = prove("Shrink", attrs={"bias": 1.0, "lambd": 0.5}, properties=["monotonic"]).properties
    ce = p.counterexample
    assert p.status == "refuted" and p.expected == "not claimed" and ce["replayed"] is True
    x1, x2 = float(ce["inputs"]["x1"].split()[0]), float(ce["inputs"]["x2"].split()[0])
    y = opcert.reference("Shrink", np.array([x1, x2]), bias=1.0, lambd=0.5)
    assert x1 <= x2 and y[0] > y[1]  # the counterexample, replayed on the reference too


def test_cross_standard_shrink_region():
    r = prove("Shrink")
    (p,) = [p for p in r.properties if p.name == "agrees:directml=onnx" or p.name == "agrees:onnx=directml"]
    assert p.status == "refuted" and p.counterexample["replayed"]
    assert "((lambd < 0) and ((bias < 0) or (bias > 0)))" in p.note and "equivalence proved" in p.note
    # HardSigmoid and Celu: the standards agree everywhere
    for op in ("HardSigmoid", "Celu"):
        agree = [p for p in prove(op).properties if p.name.startswith("agrees")]
        assert agree and all(p.status == "proved" for p in agree)


def _with(op, **changes):
    return dataclasses.replace(opcert.get_operator(op), **changes)


def test_false_property_is_refuted_with_a_replayed_counterexample():
    wrong = Property("range", "range", "Tanh(x) >= 0 (false)", lower=const(0))
    op = _with("Tanh", properties=(wrong,))
    (p,) = prove(op, properties=["range"]).properties
    assert p.status == "refuted" and p.counterexample["replayed"] is True
    assert float(p.counterexample["inputs"]["x"].split()[0]) < 0
    (q,) = prove(op, "float32", properties=[wrong.name]).properties
    assert q.status == "refuted" and q.counterexample["replayed"] is True
    (r,) = prove(
        op, "float64", properties=[wrong.name]
    ).properties  # binary64: z3's abstraction is asked first, then intervals
    assert r.status == "refuted" and r.counterexample["replayed"] is True
    assert float(str(r.counterexample["inputs"]["x"]).split()[0]) < 0


def test_float64_range_by_the_abstraction_first():
    """Softplus(x) >= 0 in binary64: the interval prover ran out of its 60 s on it; z3's
    rounding abstraction, asked first, proves it; a bound just above the minimum is refuted."""
    (p,) = prove("Softplus", "float64", properties=["range"]).properties
    assert p.status == "proved" and "abstraction" in p.method and p.elapsed_s < 20
    wrong = Property(
        "range", "range", "Softplus(x) >= 2^-1000 (false: it underflows to 0)", lower=const(Fraction(1, 2**1000))
    )
    (q,) = prove(_with("Softplus", properties=(wrong,)), "float64", properties=[wrong.name]).properties
    assert q.status == "refuted" and q.counterexample["replayed"] is True


def test_celu_is_not_odd():
    op = _with("Celu", properties=(Property("odd", "odd", "Celu is odd (false)"),))
    assert prove(op, properties=["odd"]).properties[0].status == "refuted"
    assert prove(op, "float16").properties[0].status == "refuted"
    assert prove(op, "float64").properties[0].status == "refuted"


def test_clamps_that_lose_nan_are_refuted():
    alpha, beta = attr("alpha"), attr("beta")
    y = alpha * x + beta
    # y <= 1 is false for NaN, so NaN becomes 1
    broken = select(y <= 1, select(y >= 0, y, 0), 1)
    op = _with("HardSigmoid", implementation=broken)
    for dtype in ("float16", "float32"):
        (p,) = prove(op, dtype, properties=["nan"]).properties
        assert p.status == "refuted" and p.counterexample["outputs"]["f(x)"]["value"] == 1.0


def test_ge_at_the_threshold_is_refuted():
    lambd, bias = attr("lambd"), attr("bias")
    broken = select(isnan(x), x, select(x <= -lambd, x + bias, select(x >= lambd, x - bias, 0)))
    op = _with("Shrink", implementation=broken)
    for dtype in ("float16", "float32", "float64"):
        (p,) = prove(op, dtype, properties=["dead_zone"]).properties
        assert p.status == "refuted" and abs(p.counterexample["inputs"]["x"]["value"]) == 0.5


def test_sign_error_in_a_branch_is_refuted():
    lambd, bias = attr("lambd"), attr("bias")
    broken = select(isnan(x), x, select(x < -lambd, x - bias, select(x > lambd, x - bias, 0)))
    op = _with("Shrink", implementation=broken)
    for dtype in ("bfloat16", "float32"):
        (p,) = prove(op, dtype, attrs={"bias": 0.25}, properties=["odd"]).properties
        assert p.status == "refuted" and p.counterexample["replayed"] is True
    alpha = attr("alpha")
    celu = maximum(0, x) + minimum(0, -alpha * expm1(x / alpha))
    op = _with("Celu", implementation=celu)
    (p,) = prove(op, "float32", properties=["monotonic"]).properties
    assert p.status == "refuted" and p.counterexample["replayed"] is True


def test_descriptor_proofs_are_part_of_the_specification_report():
    r = prove("Shrink")
    d = {p.name: p for p in r.properties if p.kind == "descriptors"}
    assert set(d) == {"descriptors:onnx", "descriptors:directml"} and all(p.status == "proved" for p in d.values())
    assert "level 3.0 rejects what 5.1 accepts: int8 rank 1-8" in d["descriptors:directml"].note


def test_cli_prove_json_and_exit_codes(cli, tmp_path):
    f = tmp_path / "p.json"
    code, out, _ = cli("prove", "HardSigmoid", "--dtype", "float32", "--json", f)
    data = json.loads(f.read_text())
    (rep,) = data["reports"]
    assert code == 0 and rep["op"] == "HardSigmoid" and rep["dtype"] == "float32"
    for p in rep["properties"]:
        assert {"name", "status", "method", "elapsed_s", "counterexample"} <= set(p)
        assert p["counterexample"] is None or p["status"] == "refuted"
    code, out, err = cli("prove", "Shrink", "--attr", "bias=1.0", "--attr", "lambd=0.5", "--property", "monotonic")
    assert code == 0 and "refuted" in out  # the condition does not hold: not claimed, so not a failure
    code, _, err = cli("prove", "Shrink", "--property", "convex")
    assert code == 2 and "declares no property 'convex'" in err
    code, _, err = cli("prove", "--all", "--dtype", "float16")
    assert code == 2


@pytest.mark.parametrize("flags, enumerated", [((), True), (("--no-enumerate",), False), (("--enumerate",), True)])
def test_prove_all_enumerates_float32_unknowns_by_default(cli, monkeypatch, flags, enumerated):
    """`prove --all` leaves no `unknown` by default: what the provers leave in float32 is decided on every
    input; --no-enumerate opts out. (The suite itself is measured in bench/README.md, not run here.)"""
    import opcert.verify.proofs as P

    seen = {}

    def fake(rlimit, progress=None, enumerate_float32=None):
        seen["enumerate"] = enumerate_float32
        return []

    monkeypatch.setattr(P, "prove_all", fake)
    code, _, _ = cli("prove", "--all", *flags)
    assert seen["enumerate"] is enumerated


# ---- --enumerate: opcert's own float32 unknowns decided on every input ------------------------


def test_an_unknown_float32_verdict_says_how_to_decide_it():
    rep = prove("Sigmoid", "float32", properties=["symmetry"])
    (p,) = rep.properties
    assert p.status == "unknown"
    assert "`opcert prove Sigmoid --dtype float32 --property symmetry --enumerate`" in p.note


def _fake_sweep(status, note=None, error=None):
    from opcert.verify.proofs import ProofReport, PropertyResult

    def run(op, dtype, attrs, names, *rest):
        rep = ProofReport(op.name, dtype, "defaults", target="opcert")
        rep.error = error
        rep.properties = [
            PropertyResult(n, "point_symmetry", "s", status, "every input enumerated on target opcert", note=note)
            for n in names
        ]
        return rep

    return run


def test_enumerate_replaces_unknown_by_the_sweeps_verdict(monkeypatch):
    import opcert.verify.proofs as P

    monkeypatch.setattr(P, "_prove_target", _fake_sweep("refuted"))
    (p,) = prove("Sigmoid", "float32", properties=["symmetry"], enumerate_float32=True).properties
    assert p.status == "refuted" and p.expected == "holds"
    assert "the provers left it unknown" in p.note and "every float32 input" in p.note


def test_enumerate_that_cannot_decide_leaves_unknown_with_the_reason(monkeypatch):
    import opcert.verify.proofs as P

    monkeypatch.setattr(P, "_prove_target", _fake_sweep("unknown", error="target crashed: boom"))
    (p,) = prove("Sigmoid", "float32", properties=["symmetry"], enumerate_float32=True).properties
    assert p.status == "unknown" and "did not decide it: target crashed: boom" in p.note


def test_enumerate_leaves_decided_verdicts_and_other_formats_alone(monkeypatch):
    import opcert.verify.proofs as P

    calls = []
    monkeypatch.setattr(P, "_prove_target", lambda *a: calls.append(a))
    rep = prove("Relu", "float32", enumerate_float32=True)  # every verdict decided: no sweep
    assert calls == [] and all(p.status != "unknown" for p in rep.properties)
    prove("Sigmoid", "float64", properties=["symmetry"], enumerate_float32=True)
    assert calls == []


@pytest.mark.parametrize(
    "args,message",
    [
        (["prove", "Sigmoid", "--enumerate"], "give --dtype float32"),
        (["prove", "Sigmoid", "--dtype", "float16", "--enumerate"], "give --dtype float32"),
        (["prove", "Sigmoid", "--dtype", "float32", "--target", "numpy:tanh", "--enumerate"], "no --target"),
    ],
)
def test_enumerate_usage_errors(cli, args, message):
    code, out, err = cli(*args)
    assert code == 2 and message in err and "Traceback" not in out + err


@pytest.mark.slow
def test_enumerate_proves_sigmoid_symmetry_in_float32():
    (p,) = prove("Sigmoid", "float32", properties=["symmetry"], enumerate_float32=True).properties
    assert p.status == "proved" and "every input" in p.method


def test_sigmoid_float64_symmetry_is_refuted_by_a_replayed_search():
    """opcert's binary64 Sigmoid breaks f(-x) = 1 - f(x) within half an ULP of each output: the
    search finds it, and the counterexample is checked here in rational arithmetic on the code's
    own outputs (run again)."""
    import math

    from opcert.impl import run

    (p,) = prove("Sigmoid", "float64", properties=["symmetry"]).properties
    assert p.status == "refuted" and p.violations > 0
    x = p.counterexample["inputs"]["x"]["value"]
    yp, yn = (float(run("Sigmoid", np.array([v]))[0]) for v in (x, -x))
    assert yp == p.counterexample["outputs"]["f(x)"]["value"] and yn == p.counterexample["outputs"]["f(-x)"]["value"]
    tol = (Fraction(math.ulp(yp)) + Fraction(math.ulp(yn))) / 2
    assert abs(Fraction(yp) + Fraction(yn) - 1) > tol


def test_a_symmetric_code_is_not_refuted_by_the_search():
    (p,) = prove("Sigmoid", "float32", properties=["symmetry"]).properties
    assert p.status == "unknown" and "no violation among" in p.note


# ---- a bound the code attains: the abstraction plus the values next to its spurious counterexamples ----


def _hardswish64():
    op = opcert.get_operator("HardSwish")
    return impl_level.Subject(op, impl_level.F64, {}, "onnx"), op


def test_hardswish_float64_lower_bound_is_proved_where_the_code_attains_it():
    """x * ((x + 3) / 6) >= -0.375 in binary64: the code attains -0.375 at -1.5, and within
    about 2^-26 of it the roundings move the product by more than the real margin, so neither
    enclosures nor the abstraction alone decide it. The values there are run on the code."""
    (p,) = prove("HardSwish", "float64", properties=["lower_bound"]).properties
    assert p.status == "proved" and "neighbourhood" in p.method and "run on the code" in p.method, (p.status, p.note)
    # independent of the prover: the tight inputs x = -1.5 + k 2^-52, k = 1 mod 3, in exact
    # arithmetic: (x + 3) is exact, / 6 rounds to 1/4 + j 2^-54 with j = round(2k/3), and the
    # exact product lies above the midpoint below -0.375 by k j 2^-106: the code gives -0.375
    from opcert.formats import round_fraction
    from opcert.impl import run

    for k in (1, 4, 7, 1000, 3 * 2**20 + 1):
        xk = -1.5 + k * 2.0**-52
        j = round(Fraction(2 * k, 3))
        t = Fraction(1, 4) + j * Fraction(1, 2**54)
        assert t == Fraction(float((xk + 3) / 6))
        exact = Fraction(xk) * t
        assert exact - (Fraction(-3, 8) - Fraction(1, 2**55)) == k * j * Fraction(1, 2**106)
        assert round_fraction(exact, impl_level.F64) == -0.375 == float(run("HardSwish", np.array([xk]))[0])


def test_a_bound_broken_next_to_a_spurious_counterexample_is_refuted():
    """A bound one ULP above HardSwish's minimum: the code breaks it only at and next to -1.5.
    Started from a spurious counterexample 2^20 values away, the neighbourhood finds it."""
    s, _ = _hardswish64()
    above = float(np.nextafter(-0.375, 0.0))
    res = impl_level.PropertyResult("lower_bound", "range", "f >= -0.375 + 1 ULP (false)", "unknown", "-")
    ce = {"inputs": {"x": impl_level._point(-1.5 + 2.0**-32, impl_level.F64)}}
    impl_level._range_with_holes(s, res, (above, None), (None, None), ce, None)
    assert res.status == "refuted" and res.counterexample["replayed"] is True
    x = res.counterexample["inputs"]["x"]["value"]
    assert abs(x + 1.5) < 2.0**-30 and float(res.counterexample["outputs"]["f(x)"]["value"]) < above


def test_a_neighbourhood_over_its_budget_leaves_the_verdict_unknown(monkeypatch):
    s, _ = _hardswish64()
    monkeypatch.setattr(impl_level, "HOLE_BUDGET", 1 << 16)
    res = impl_level.PropertyResult("lower_bound", "range", "f >= -0.375", "unknown", "-")
    ce = {"inputs": {"x": impl_level._point(-1.5 + 2.0**-26, impl_level.F64)}}
    impl_level._range_with_holes(s, res, (-0.375, None), (None, None), ce, None)
    assert res.status == "unknown" and "exceed the budget" in res.note


# ---- monotonicity through the abstraction: two inputs of the format are at least one spacing apart ----


def test_hardswish_float32_monotone_above_its_minimum_is_proved():
    (p,) = prove("HardSwish", "float32", properties=["monotonic_above_minimum"]).properties
    assert p.status == "proved" and "abstraction" in p.method
    # corroborated on the code, independently of the prover: every adjacent pair on [-1.5, -1]
    from opcert.impl import run

    xs = np.arange(np.float32(-1.5).view(np.int32), np.float32(-1.0).view(np.int32) - 1, -1, dtype=np.int32).view(
        np.float32
    )
    assert xs[0] == -1.5 and xs[-1] == -1.0 and np.all(np.diff(xs) > 0)
    ys = run("HardSwish", xs)
    assert np.all(np.diff(ys.astype(np.float64)) >= 0)


def test_a_step_down_between_two_adjacent_inputs_is_still_refuted():
    """The spacing constraint must not hide a real decrease: a code that drops by 2^-10
    relative at x = -1.25 (one float32 step) is refuted, its counterexample replayed."""
    hs = x * maximum(0, minimum(1, (x + 3) / 6))
    bent = select(x < const(Fraction(-5, 4)), hs, hs * const(1 + Fraction(1, 1024)))
    op = _with("HardSwish", implementation=bent)
    (p,) = prove(op, "float32", properties=["monotonic_above_minimum"]).properties
    assert p.status == "refuted" and p.counterexample["replayed"] is True
    x1 = p.counterexample["inputs"]["x1"]["value"]
    x2 = p.counterexample["inputs"]["x2"]["value"]
    assert x1 < x2 and x1 < -1.25 <= x2


# ---- z3 under resource limits, not time: the same verdict on an idle and a loaded host ----------------


def test_a_query_out_of_its_budget_is_unknown_with_the_units_spent_not_seconds():
    import re

    (p,) = prove("Shrink", properties=["odd"], rlimit=1).properties
    assert p.status == "unknown" and p.rlimit_count >= 1, (p.status, p.note)
    assert "resource limit reached" in p.note and "rlimit units" in p.note and not re.search(r"\d s\b", p.note)
    (q,) = prove("Shrink", properties=["odd"]).properties  # each family's calibrated budget
    assert q.status == "proved" and q.rlimit_count > 0 and q.to_dict()["rlimit_count"] == q.rlimit_count
    with pytest.raises(opcert.UsageError, match="resource units"):
        prove("Shrink", properties=["odd"], rlimit=30.0)


def test_cli_prove_takes_rlimit_and_refuses_the_removed_timeout(cli):
    code, _, err = cli("prove", "Tanh", "--timeout", "30")
    assert code == 2 and "--timeout was removed" in err and "--rlimit" in err
    for bad in ("0", str(2**32)):
        code, _, err = cli("prove", "Tanh", "--rlimit", bad)
        assert code == 2 and "--rlimit: must be an integer" in err, err
    code, out, _ = cli("prove", "Shrink", "--property", "odd", "--rlimit", "1")
    assert code == 1 and "unknown" in out


_PROOFS_IN_A_PROCESS = """
import json, sys
from opcert.verify.proofs import prove, prove_all
wanted = json.loads(sys.argv[1])
reports = prove_all(enumerate_float32=False) if wanted == "all" else [
    prove(op, dtype, properties=names) for op, dtype, names in wanted]
print(json.dumps([(r.op, r.dtype, p.name, p.status, p.rlimit_count) for r in reports for p in r.properties]))
"""


def _alone_and_beside_two_busy_loops(proofs) -> tuple:
    """The verdicts and z3 units of the proofs, run in a fresh process alone, then again with two
    CPU-bound processes beside it (on 2 cores: every core busy)."""
    import subprocess
    import sys

    cmd = [sys.executable, "-c", _PROOFS_IN_A_PROCESS, json.dumps(proofs)]

    def run():
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
        assert r.returncode == 0, r.stderr[-2000:]
        return [tuple(v) for v in json.loads(r.stdout.splitlines()[-1])]

    alone = run()
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
    try:
        loaded = run()
    finally:
        for b in busy:
            b.kill()
            b.wait()
    return alone, loaded


def test_a_verdict_and_its_z3_units_do_not_depend_on_the_hosts_load():
    """z3 runs under resource limits, with strategies that have no clock: beside two busy loops the
    proofs spend the same units and are decided the same. The longest proof of the catalog until z3
    ran without a clock: LogSoftmax's monotonicity in each element over rows of 1 to 4 (15 s and 12-20
    million units under z3's default strategy for nonlinear arithmetic, whose members are cut off by
    time; 10^5 units here), and Shrink's specification (its properties, the standards' agreement and the
    region where they part, the descriptor tables). The whole suite: the slow test below."""
    alone, loaded = _alone_and_beside_two_busy_loops([["LogSoftmax", None, ["monotonic"]], ["Shrink", None, None]])
    assert loaded == alone
    assert all(v[3] in ("proved", "refuted", "skipped") for v in alone), alone
    assert [v[3] for v in alone if v[0] == "LogSoftmax"] == ["proved"] and sum(v[4] or 0 for v in alone) > 100_000


@pytest.mark.slow
def test_the_whole_proof_suite_is_decided_the_same_beside_two_busy_loops():
    """`opcert prove --all --no-enumerate`'s verdicts and units, alone and beside two busy loops (each
    (operator, format) pair is proved in a process of its own, forked from a worker that asks z3 nothing)."""
    alone, loaded = _alone_and_beside_two_busy_loops("all")
    assert loaded == alone
    unknown = [v for v in alone if v[3] == "unknown"]
    assert [v[:3] for v in unknown] == [("Sigmoid", "float32", "symmetry")], unknown  # --enumerate decides it


def test_prove_all_decides_a_pair_as_it_is_decided_alone_whatever_else_it_proves():
    """z3's search depends on what its process asked before; prove_all proves each (operator, format) pair in
    a process of its own, so a pair's verdicts and z3 units do not depend on the other operators of the run,
    on their order, or on the number of workers: Softsign with Elu and Relu before it, on two workers, is
    decided as Softsign alone on one."""
    from opcert.verify.proofs import prove_all

    def units(reports):
        return {
            (r.op, r.dtype, p.name): (p.status, p.rlimit_count)
            for r in reports
            if r.op == "Softsign"
            for p in r.properties
        }

    crowd = units(prove_all(workers=2, only=("Elu", "Relu", "Softsign")))
    alone = units(prove_all(workers=1, only=("Softsign",)))
    assert crowd == alone and len(alone) > 10
    assert any(u for _, u in alone.values()), alone  # z3 was asked: units were spent


def test_the_gates_proofs_do_not_depend_on_what_its_process_asked_z3_before():
    """The gate, `opcert accuracy --require` and the pytest plugin prove through prove_alone, each proof in
    a process forked for it: Softsign's verdicts and z3 units are the same before and after this process
    has proved Elu and Relu in every format (which changes what an in-process proof of Softsign spends)."""
    from opcert.verify.proofs import prove, prove_alone

    def units(rep):
        return [(p.name, p.status, p.rlimit_count) for p in rep.properties]

    before = [units(prove_alone("Softsign", dt)) for dt in ("real", "float32")]
    for op in ("Elu", "Relu"):
        for dt in ("real", "float16", "bfloat16", "float32", "float64"):
            prove(op, dt)
    after = [units(prove_alone("Softsign", dt)) for dt in ("real", "float32")]
    assert after == before and any(u for rows in before for _, _, u in rows)


def test_a_proof_alone_raises_what_the_proof_raises():
    from opcert.verify.proofs import prove_alone

    with pytest.raises(UsageError, match="declares no property 'nope'"):
        prove_alone("Softsign", "float16", None, ["nope"])


def test_where_z3_leaves_standards_unequal_undecided_a_witness_with_one_attribute_moved_refutes():
    """Softplus's ONNX form and DirectML's parametric one agree at alpha = beta = 1; z3 over the reals can leave
    their disagreement unknown (incomplete arithmetic, depending on what its process asked before). The
    fallback finds a witness with one attribute moved, evaluated exactly: at alpha = 2 and x = -8 the forms are
    ln(1 + e^-8) and 2 ln(1 + e^-8)."""
    import math

    from opcert.verify.proofs.spec_level import _witness

    op = opcert.get_operator("Softplus")
    s = {x.key: x for x in op.standards}
    attrs, x, v1, v2 = _witness(op, s["onnx"], s["directml-parametric"])
    one = math.log1p(math.exp(float(x)))
    expected = {a: 1.0 for a in attrs}
    assert {k: float(v) for k, v in attrs.items()} != expected  # one attribute moved
    alpha, beta = float(attrs["alpha"]), float(attrs["beta"])
    mid = [(float(lo) + float(hi)) / 2 for lo, hi in (v1, v2)]
    assert math.isclose(mid[0], one, rel_tol=1e-12)
    assert math.isclose(mid[1], alpha * math.log1p(math.exp(beta * float(x))), rel_tol=1e-12)
