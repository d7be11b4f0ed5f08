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
    from .gate.config import Check
    from .gate.run import judge
    policy = Check(op, (dtype,), target, mode, samples, float(max_ulp), signed_zero, subnormals)
    verdict = judge(policy, dtype, r, None, None, r.elapsed_s)   # the gate's policies, word for word
    if verdict.status == "skipped":
        pytest.skip(r.error)
    if verdict.status == "fail":
        raise AssertionError(f"opcert: {op} {dtype} {target}:\n  " + "\n  ".join(verdict.reasons) +
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
