"""Python callables as targets (opcert.targets.function): in the API and in the pytest plugin.

A callable that module:qualname names runs in a worker, as the string does; any other (a lambda, a closure, a
bound method, a partial, a function of __main__) runs in the caller's process, and its result says so. The
expected figures come from facts outside opcert: the MPFR oracle (tests/oracle.py) and where the kernel ran
(the process id it records).
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from conftest import all_16bit, same_bits
from oracle import oracle, oracle_scalar

import opcert
from opcert.errors import UsageError
from opcert.targets import check_name
from opcert.targets.function import FunctionTarget, display_name, importable


def _tanh_up(x):
    """np.tanh moved one float16 up: never correctly rounded where np.tanh is."""
    with np.errstate(invalid="ignore"):
        return np.nextafter(np.tanh(x), np.float16(np.inf))


class _Kernel:
    def tanh(self, x):
        return np.tanh(x)


def test_which_callables_a_worker_can_import():
    # a ufunc a module names: the same target as the string
    assert check_name(np.tanh) == "numpy:tanh"
    # a module-level function of this (importable) test module
    assert check_name(_tanh_up) == f"{__name__}:_tanh_up"

    def inner(x):
        return x

    main_ns = {"__name__": "__main__"}
    exec("def from_main(x):\n    return x\n", main_ns)  # noqa: S102 - a function of __main__, as a script's
    cases = {
        "lambda": (lambda x: x, "a lambda cannot be sent to a worker process"),
        "closure": (inner, "defined inside another function"),
        "method": (_Kernel().tanh, "a bound method"),
        "partial": (functools.partial(_tanh_up), "functools.partial"),
        "main": (main_ns["from_main"], "__main__"),
    }
    for what, (fn, why) in cases.items():
        name, reason = importable(fn)
        assert name is None and why in reason, what
        tgt = check_name(fn)
        assert isinstance(tgt, FunctionTarget) and tgt.info.isolated is False, what
        assert why in tgt.in_process and tgt.no_command.startswith("none: the command line cannot name"), what
    # readable names: module.qualname, <lambda> with its file and line
    lam = lambda x: x  # noqa: E731 - the lambda is what is named
    assert display_name(lam) == f"<lambda> at {__file__}:{lam.__code__.co_firstlineno}"
    assert display_name(inner).startswith(f"{__name__}.test_which_callables_a_worker_can_import.<locals>.inner at ")
    assert display_name(_Kernel().tanh).startswith(f"bound method {__name__}._Kernel.tanh of a _Kernel object at ")
    assert display_name(functools.partial(_tanh_up)).startswith(f"functools.partial of {__name__}._tanh_up at ")


@pytest.mark.parametrize("bad", [3, None, "", 2.5, [np.tanh]])
def test_a_target_that_is_neither_a_name_nor_a_callable_is_refused_once(bad):
    with pytest.raises(UsageError) as err:
        opcert.measure("Tanh", bad, "float16", "sample", samples=100)
    text = str(err.value)
    assert "a callable f(x, **attrs) -> ndarray" in text and "module:function" in text
    assert text.count("target must be") == 1 and "check[" not in text


def test_operator_and_function_in_either_order():
    a = opcert.measure("Tanh", lambda x: np.tanh(x), "float16", "sample", samples=200, seed=3)
    b = opcert.measure(lambda x: np.tanh(x), "Tanh", "float16", "sample", samples=200, seed=3)
    assert (a.op, a.inputs_checked, a.correctly_rounded) == (b.op, b.inputs_checked, b.correctly_rounded)
    with pytest.raises(UsageError, match="operator"):
        opcert.measure(lambda x: np.tanh(x))


def test_lambda_outside_the_repository_runs_in_process(tmp_path):
    """A user's script, run from a directory of its own: the lambda is measured in that process (the pid it
    records is the script's), every float16 input correctly rounded as MPFR says np.tanh's outputs are, and
    the result says in-process and gives no command."""
    script = tmp_path / "user_script.py"
    script.write_text(
        textwrap.dedent(
            """
            import json, os, sys
            import numpy as np
            import opcert

            pids = set()

            def record(x):
                pids.add(os.getpid())
                return np.tanh(x)

            r = opcert.measure(lambda x: record(x), "Tanh", "float16", "exhaustive")
            print(json.dumps({"result": r.to_dict(), "pids": sorted(pids), "me": os.getpid()}))
            """
        )
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    r = out["result"]
    assert out["pids"] == [out["me"]]  # it ran in the script's process, nowhere else
    x = all_16bit("float16")
    with np.errstate(invalid="ignore"):
        agree = int(same_bits(np.tanh(x), oracle("Tanh", x, {}).astype(np.float16)).sum())
    assert r["status"] == "ok" and r["inputs_checked"] == x.size
    assert r["correctly_rounded"] == agree
    assert r["isolation"] == "none" and r["target_info"]["isolated"] is False
    assert r["target"].startswith(f"<lambda> at {script}:")
    assert any(n.startswith("in-process: <lambda>") and "a lambda cannot be sent to a worker" in n for n in r["notes"])
    assert r["command"].startswith("none: the command line cannot name <lambda>")
    assert "--target" not in r["command"].split("(")[0]


def test_module_level_function_runs_in_a_worker(tmp_path, monkeypatch):
    """A module-level function of a module on sys.path is the target module:function: it runs in a worker
    process (the pid it records is not this one), and the command line reproduces it."""
    (tmp_path / "fnt_user_kernels.py").write_text(
        textwrap.dedent(
            f"""
            import os
            import numpy as np

            def tanh16(x):
                with open({str(tmp_path / "pid")!r}, "a") as fh:
                    fh.write(f"{{os.getpid()}}\\n")
                return np.tanh(x)
            """
        )
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    import fnt_user_kernels

    r = opcert.measure("Tanh", fnt_user_kernels.tanh16, "float16", "sample", samples=300)
    pids = {int(p) for p in (tmp_path / "pid").read_text().split()}
    assert pids and os.getpid() not in pids
    assert r.status == "ok" and r.target == "fnt_user_kernels:tanh16"
    assert r.isolation == "process" and r.target_info["isolated"] is True
    assert "--target fnt_user_kernels:tanh16" in r.command
    assert not any(n.startswith("in-process") for n in r.notes)


def test_a_wrong_function_is_a_finding_with_replayed_inputs():
    r = opcert.measure("Tanh", lambda x: _tanh_up(x), "float16", "exhaustive")
    assert r.status == "ok" and r.isolation == "none"
    # independently: MPFR's correctly rounded tanh at the reported input is not what the kernel returned
    x = np.float16(r.worst_input)
    assert r.worst_input_bits == f"0x{int(np.array([x]).view(np.uint16)[0]):04x}"
    correct = oracle_scalar("Tanh", float(x), {}, "float16")
    assert float(_tanh_up(np.array([x]))[0]) == r.worst_output != correct
    assert r.max_ulp > 0.5
    # the whole input array was run again and gave the same bits; the refuted properties name the inputs,
    # replayed on the kernel
    assert r.replay["inputs"] == 65536 and r.replay["differ"] == 0
    refuted = {p["name"]: p for p in r.properties if p["status"] == "refuted"}
    assert "range" in refuted  # tanh <= 1, and np.nextafter(1, inf) > 1
    ce = refuted["range"]["counterexample"]
    assert ce["replayed"] is True and ce["outputs"]["f(x)"]["value"] > 1.0


@pytest.mark.parametrize(
    ("kernel", "says"),
    [
        (lambda x: np.tanh(x).astype(np.float32), "returned dtype float32; expected float16"),
        (lambda x: np.tanh(x)[:-1], "returned shape"),
        (lambda x: 1 / 0, "raised ZeroDivisionError"),
        (lambda x: list(np.tanh(x)), "returned list, not a numpy array"),
    ],
)
def test_a_function_that_breaks_the_contract_fails_its_check(kernel, says):
    r = opcert.measure("Tanh", kernel, "float16", "sample", samples=100)
    assert r.status == "crashed" and says in r.error and r.error.startswith("target <lambda> at ")


def test_a_float32_sweep_refuses_a_function_no_worker_can_import():
    with pytest.raises(UsageError, match="worker"):
        opcert.measure("Tanh", lambda x: np.tanh(x), "float32", "exhaustive")


def test_pytest_fixture_with_functions(pytester):
    pytester.makepyfile(
        test_user_kernels="""
        import os
        import numpy as np

        def my_tanh(x):
            return np.tanh(x)

        def test_module_function(opcert_check):
            r = opcert_check("Tanh", my_tanh, "float16", max_ulp=0.5)
            assert r.target == "test_user_kernels:my_tanh" and r.isolation == "process"

        def test_lambda(opcert_check):
            r = opcert_check("Tanh", lambda x: np.tanh(x), "float16", max_ulp=0.5)
            assert r.isolation == "none"

        def test_lambda_one_ulp_up(opcert_check):
            opcert_check("Tanh", lambda x: np.nextafter(np.tanh(x), np.float16(np.inf)), "float16", max_ulp=0.5)

        def test_not_a_target(opcert_check):
            opcert_check("Tanh", 3, "float16")
        """
    )
    result = pytester.runpytest_subprocess("-q", "-rN", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2, failed=2)
    out = result.stdout.str()
    result.stdout.fnmatch_lines(
        [
            "*opcert: Tanh float16 <lambda> at *test_user_kernels.py:*",
            "*max ULP error * > budget 0.5*",
            "*in-process: <lambda> at * a lambda cannot be sent to a worker process*",
            "*reproduce: none: the command line cannot name <lambda>*",
        ]
    )
    # one clear error for a target that is neither a name nor a callable, printed once, naming no check[0]
    assert out.count("target must be a name") == 1 and "check[0]" not in out
    assert "During handling of the above exception" not in out


def test_outputs_computed_elsewhere_are_measured_as_a_table():
    """opcert.given_outputs(x, y): a kernel's outputs from elsewhere (a GPU run, a file) measured against the
    reference; MPFR says which of them are correctly rounded. No kernel is called: the layout property is
    skipped, saying why. An input the table does not hold is the target's failure, naming it."""
    from conftest import all_16bit
    from oracle import oracle

    x = all_16bit("float16")
    with np.errstate(invalid="ignore"):
        y = np.tanh(x)
    r = opcert.measure("Tanh", opcert.given_outputs(x, y, "tanh on my device"), "float16", "exhaustive")
    with np.errstate(invalid="ignore"):
        want = oracle("Tanh", x, {}).astype(np.float16)
    right = (y == want) | (np.isnan(y) & np.isnan(want))
    assert r.status == "ok" and r.inputs_checked == 65536 and r.correctly_rounded == int(right.sum())
    layout = next(p for p in r.properties if p["kind"] == "layout")
    assert layout["status"] == "skipped" and "table of outputs" in layout["note"]
    assert r.isolation == "none" and r.target == "tanh on my device"

    short = opcert.measure("Tanh", opcert.given_outputs(x[:100], y[:100]), "float16", "exhaustive")
    assert short.status == "crashed" and "no output for the input" in short.error
    with pytest.raises(opcert.UsageError, match="one dtype and shape"):
        opcert.given_outputs(x, y.astype(np.float32))


def test_a_table_is_named_as_given_and_keyed_by_its_outputs():
    x = np.array([0.5, 1.0, 2.0], dtype=np.float16)
    y = np.tanh(x)
    a, b = opcert.given_outputs(x, y, "run A"), opcert.given_outputs(x, np.nextafter(y, np.float16(0)), "run B")
    assert a.name == "run A" and b.name == "run B"
    assert a.info.fingerprint != b.info.fingerprint  # other outputs, another target
    assert opcert.given_outputs(x, y, "run A").info.fingerprint == a.info.fingerprint
