"""pytest plugin (entry point `opcert`): assert opcert checks on your own kernels.

    def test_my_tanh(opcert_check):
        opcert_check("Tanh", "mypkg.kernels:tanh", "float16", max_ulp=1.0, proofs=["monotonic"])

    def test_my_tanh_function(opcert_check):  # the function itself (opcert.targets.function)
        opcert_check("Tanh", my_tanh, "float16", max_ulp=1.0)

    @pytest.mark.opcert(op="Celu", target="mypkg.kernels:celu", dtype="float16", max_ulp=2, alpha=1.0)
    def test_my_celu():
        pass

    def test_my_softmax(opcert_check):     # a tensor operator: sampled rows, every declared row property
        opcert_check("Softmax", "mypkg.kernels:softmax", "float32", max_ulp=2.0, proofs="all",
                     accept_sampled_evidence=True)

A target is a name (as `target = ...` in opcert.toml) or a Python callable: a module-level function of an
importable module runs in a supervised worker, as its `module:function` name does; any other callable (a
lambda, a closure, a bound method, a partial, a function of a module no fresh process imports by its
name, as test modules are under --import-mode=importlib) runs in the test's process, and a failure says so and that no command line reproduces it.

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
    "waive",
    "against",
    "max_ulp_apart",
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
    problem = None  # pytest.fail outside the except clauses: inside, pytest prints the message twice (chained)
    try:
        keys = () if tensor else attribute_keys(get_operator(op))  # a tensor operator has no attributes
        # a callable: its module:qualname string where a worker can import it, else a FunctionTarget measured
        # in this process (targets.function); validated here, so that an error names the target, not check[0]
        target = config.check_name(target)  # targets.check_name, as the configuration's validator reads it
    except UsageError as exc:
        problem = f"opcert check: {exc}"
    if problem:
        pytest.fail(problem, pytrace=False)
    local = getattr(target, "in_process", None) is not None  # a targets.function.FunctionTarget
    if local and tensor:
        pytest.fail(
            f"opcert check: {op} is a tensor operator, whose targets run by name: give {target.name} as "
            "module:function (a module-level function of an importable module)",
            pytrace=False,
        )
    if local and kwargs.get("isolation", "none") != "none":
        pytest.fail(
            f"opcert check: isolation={kwargs['isolation']!r}: {target.name} cannot run in a worker process "
            f"({target.why}); give a module-level function of an importable module, or leave isolation out",
            pytrace=False,
        )
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
    if local:
        raw["isolation"] = "none"  # what it gets (the result's notes say why), recorded as such in the check
    try:
        (policy,) = config.parse_check(raw, 0, "opcert check")
        verdict = run.run_check(policy, dtype)
    except UsageError as exc:
        text = str(exc)
        problem = text if text.startswith("opcert check:") else f"opcert check: {text}"
    if problem:
        pytest.fail(problem, pytrace=False)
    if verdict.status == "skipped":
        pytest.skip("; ".join(verdict.reasons))
    if verdict.status == "fail":
        # no command line names a callable run in this process: its result's command says so, in words
        command = target.no_command if local else verdict.command
        pytest.fail(
            f"opcert: {policy.op} {dtype} {target}:\n  "
            + "\n  ".join(verdict.reasons + ([target.in_process] if local else []))
            + f"\n  reproduce: {command}",
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
