"""pytest plugin (entry point `opcert`): assert opcert checks on your own kernels.

    def test_my_tanh(opcert_check):
        opcert_check("Tanh", "mypkg.kernels:tanh", "float16", max_ulp=1.0)

    @pytest.mark.opcert(op="Celu", target="mypkg.kernels:celu", dtype="float16", max_ulp=2, alpha=1.0)
    def test_my_celu():
        pass

A failure names the worst input, its error, and the command that reproduces it.
"""
from __future__ import annotations

import pytest


def check(op, target, dtype, *, max_ulp=1.0, mode=None, samples=None, signed_zero="strict",
          subnormals="strict", **attrs):
    """Measure and assert; returns the AccuracyResult."""
    from .verify.accuracy import measure
    mode = mode or ("exhaustive" if dtype in ("float16", "bfloat16") else "sample")
    r = measure(op, target, dtype, mode, samples=samples, flush_allowed=subnormals == "flush-allowed", **attrs)
    problems = []
    if r.status == "unsupported":
        pytest.skip(r.error)
    if r.status != "ok":
        problems.append(f"target {r.status}: {r.error}")
    else:
        if r.max_ulp is not None and r.max_ulp > max_ulp:
            problems.append(f"max ULP error {r.max_ulp!r} > {max_ulp!r} at x = {r.worst_input!r} ({r.worst_input_bits}):"
                            f" output {r.worst_output!r}, correctly rounded {r.worst_reference!r}")
        if r.nan_mismatches:
            problems.append(f"{r.nan_mismatches} NaN mismatches: {r.examples['nan_mismatch']}")
        if r.inf_mismatches:
            problems.append(f"{r.inf_mismatches} infinity mismatches: {r.examples['inf_mismatch']}")
        if r.signed_zero_mismatches and signed_zero == "strict":
            problems.append(f"{r.signed_zero_mismatches} signed-zero mismatches: {r.examples['signed_zero_mismatch']}")
        if r.subnormal_flushes and subnormals == "strict":
            problems.append(f"{r.subnormal_flushes} subnormal outputs flushed: {r.examples['subnormal_flush']}")
    if problems:
        raise AssertionError(f"opcert: {op} {dtype} {target}:\n  " + "\n  ".join(problems) +
                             f"\n  reproduce: {r.command}")
    return r


@pytest.fixture
def opcert_check():
    """A function: opcert_check(op, target, dtype, max_ulp=..., **attrs) measures and asserts."""
    return check


def pytest_configure(config):
    config.addinivalue_line("markers", "opcert(op, target, dtype, max_ulp=1.0, **attrs): assert an opcert "
                                       "accuracy check before the test body runs")


def pytest_runtest_call(item):
    for m in item.iter_markers(name="opcert"):
        check(**m.kwargs)
