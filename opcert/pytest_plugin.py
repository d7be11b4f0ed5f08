"""pytest plugin (entry point `opcert`): assert opcert checks on your own kernels.

    def test_my_tanh(opcert_check):
        opcert_check("Tanh", "mypkg.kernels:tanh", "float16", max_ulp=1.0, proofs=["monotonic"])

    @pytest.mark.opcert(op="Celu", target="mypkg.kernels:celu", dtype="float16", max_ulp=2, alpha=1.0)
    def test_my_celu():
        pass

    def test_my_softmax(opcert_check):     # a tensor operator: sampled rows, every declared row property
        opcert_check("Softmax", "mypkg.kernels:softmax", "float32", max_ulp=2.0, proofs="all",
                     accept_sampled_evidence=True)

Every keyword is a key of the gate configuration ([[check]] in opcert.toml)
and goes through the same validator; attributes are the remaining keywords.
A check is judged by the gate's own rules (opcert.gating.run.judge): a failure
names the worst input, its error, any property refuted with its
counterexample, and the command that reproduces it.
"""

from __future__ import annotations

import pytest

from opcert.errors import UsageError
from opcert.options import clashes
from opcert.spec import get_operator, is_tensor_operator
from opcert.spec.attrs import attribute_keys

_CHECK_KEYS = (
    "mode",
    "samples",
    "max_ulp",
    "signed_zero",
    "subnormals",
    "proofs",
    "standard",
    "seed",
    "accept_sampled_evidence",
    "isolation",
    "target_timeout",
    "name",
)


def check(op=None, target=None, dtype=None, *, attrs=None, **kwargs):
    """Measure and assert; returns the AccuracyResult. Keywords are a gate check's keys (max_ulp, proofs,
    ...) where they name one, else the operator's attributes; attrs={...} gives attributes explicitly, and a
    keyword that names a key and an attribute at once is refused."""
    # lazy: pytest loads this plugin in every session on a host where opcert is installed; the measurement
    # (numba, the runtimes' loaders) loads when a test asks for a check
    from opcert.gating import config, run  # lazy: see above
    from opcert.verify.accuracy.measure import AccuracyResult  # lazy: see above

    if op is None or target is None or dtype is None:
        pytest.fail(
            "opcert check: give op, target and dtype (positionally or by name), e.g. "
            'opcert_check("Tanh", "numpy:tanh", "float16", max_ulp=1.0)',
            pytrace=False,
        )
    if not isinstance(dtype, str):
        pytest.fail(f'opcert check: dtype must be one dtype name, such as "float16" (got {dtype!r})', pytrace=False)
    tensor = isinstance(op, str) and is_tensor_operator(op)
    try:
        keys = () if tensor else attribute_keys(get_operator(op))  # a tensor operator has no attributes
    except UsageError as exc:
        pytest.fail(f"opcert check: {exc}", pytrace=False)
    both = clashes(kwargs, _CHECK_KEYS, keys)
    if both:
        pytest.fail(
            f"opcert check: {', '.join(both)}: both a check key and an attribute of {op}; "
            "pass attributes as attrs={...}",
            pytrace=False,
        )
    raw = {"op": op, "target": target, "dtypes": [dtype]}
    # a 16-bit element-wise check enumerates every input by default (seconds); a tensor operator's exhaustive
    # pass is every pair of 16-bit values (minutes to most of an hour): sampled rows unless asked
    raw["mode"] = kwargs.pop("mode", None) or (
        "exhaustive" if dtype in ("float16", "bfloat16") and not tensor else "sample"
    )
    for k in _CHECK_KEYS[1:]:
        if k in kwargs:
            raw[k] = kwargs.pop(k)
    raw["attrs"] = {**(attrs or {}), **kwargs}
    try:
        (policy,) = config.parse_check(raw, 0, "opcert check")
        verdict = run.run_check(policy, dtype)
    except UsageError as exc:
        text = str(exc)
        pytest.fail(text if text.startswith("opcert check:") else f"opcert check: {text}", pytrace=False)
    if verdict.status == "skipped":
        pytest.skip("; ".join(verdict.reasons))
    if verdict.status == "fail":
        pytest.fail(
            f"opcert: {policy.op} {dtype} {target}:\n  "
            + "\n  ".join(verdict.reasons)
            + f"\n  reproduce: {verdict.command}",
            pytrace=False,
        )
    if tensor:  # the row measurement's result, as a dict (verify.tensor.measure)
        return dict(verdict.accuracy)
    acc = dict(verdict.accuracy)
    return AccuracyResult(**{k: v for k, v in acc.items() if k in AccuracyResult.__dataclass_fields__})


@pytest.fixture
def opcert_check():
    """A function: opcert_check(op, target, dtype, max_ulp=..., proofs=[...], **attrs) measures and asserts."""
    return check


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        "opcert(op, target, dtype, max_ulp=1.0, proofs=(), **attrs): assert an "
        "opcert check (the keys of a gate [[check]]) before the test body runs",
    )


def pytest_runtest_call(item):
    for m in item.iter_markers(name="opcert"):
        if len(m.args) > 3:
            pytest.fail(
                "@pytest.mark.opcert takes at most three positional arguments (op, target, dtype); "
                "give the rest by name",
                pytrace=False,
            )
        check(*m.args, **m.kwargs)
