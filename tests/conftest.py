import os
import sys

import ml_dtypes
import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(__file__))  # oracle.py, bad_targets.py
# The suite's gates fail on purpose: under GitHub Actions they must not annotate the run or write its job
# summary (tests/test_ci.py sets these itself, for its own gates).
for _var in ("GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY"):
    os.environ.pop(_var, None)
# The suite's processes (xdist's workers, the pytest runs and CLI commands it starts, the targets' worker
# processes) import opcert and pytest's assertion-rewritten modules again and again: with
# PYTHONDONTWRITEBYTECODE set, each compiles them from source (a pytest run's collection: 6.3-7.9 s instead
# of 2.4-2.6 s, measured). The suite writes bytecode (in __pycache__, which git ignores) whatever the shell says.
if os.environ.pop("PYTHONDONTWRITEBYTECODE", None) is not None:
    sys.dont_write_bytecode = False
# The suite's float32 sweeps compile each ball kernel once, not four ways to keep the fastest: the variants
# compute the same balls (tests/test_ball_compiled.py tunes them itself); on a cold kernel cache (a CI
# machine) the suite compiled 64 kernels instead of 78 (bench/README.md, the test suite's time)
os.environ.setdefault("OPCERT_KERNEL_TUNING", "0")

DTYPES = {
    "float16": np.dtype(np.float16),
    "bfloat16": np.dtype(ml_dtypes.bfloat16),
    "float32": np.dtype(np.float32),
    "float64": np.dtype(np.float64),
}


def all_16bit(dtype: str) -> np.ndarray:
    return np.arange(65536, dtype=np.uint16).view(DTYPES[dtype])


def node_kinds(name: str, standard: str | None = None) -> frozenset:
    """What an operator's reference form is made of: its kinds of node (each primitive, each arithmetic, comparison
    and select), and a ScaleBias standard's name."""
    import opcert

    form = opcert.get_operator(name).reference_form(standard)
    return frozenset({n.op for n in form.nodes()} | ({f"standard:{standard}"} if standard else set()))


def first_of_each_kind(cases: list) -> set:
    """Of (key, kinds) cases, in order, the keys of those that first bring a kind no case before them had, less
    those whose every kind the others kept bring too (dropped from the last back: Abs, Elu or Exp brings a kind
    first only to have a later operator bring it again). The tests that run one compiled or long double kernel
    per operator keep these in CI (every kind of node compiled and checked) and run the rest in the slow run:
    each kernel compiles on its own on a fresh clone."""
    seen, keep = set(), []
    for key, kinds in cases:
        if not kinds <= seen:
            keep.append((key, kinds))
            seen |= kinds
    for item in reversed(list(keep)):
        if item[1] <= set().union(*(other[1] for other in keep if other is not item)):
            keep.remove(item)
    return {key for key, _ in keep}


def same_bits(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Elementwise: identical values, zero signs included; any NaN equals any NaN."""
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    both_nan = np.isnan(a64) & np.isnan(b64)
    eq = (a64 == b64) & (np.signbit(a64) == np.signbit(b64))
    return both_nan | eq


THREADED_AT_COLLECTION: list = []  # multithreaded runtimes loaded by collecting the tests (test_layers)


def pytest_collection_finish(session):
    from opcert.workers import _THREADED

    THREADED_AT_COLLECTION[:] = sorted(m for m in _THREADED if m in sys.modules)


@pytest.fixture(autouse=True)
def no_threaded_runtime_in_the_test_process():
    """A test that loads a multithreaded runtime (torch, ONNX Runtime, JAX, OpenVINO, numba's OpenMP pool) into
    the test process makes every later test of that process spawn its workers instead of forking them, several
    times slower (bench/README.md, 'Workers that start warm'): such code runs in a worker
    (opcert.workers.run_isolated, tests/runtime_helpers.py)."""
    from opcert.workers import _THREADED

    before = {m for m in _THREADED if m in sys.modules}
    yield
    loaded = sorted(m for m in _THREADED if m in sys.modules and m not in before)
    assert not loaded, f"this test loaded {', '.join(loaded)} into the test process: run that code in a worker"


@pytest.fixture
def cli(capsys):
    """Run the CLI in-process: returns (exit code, stdout, stderr)."""
    from opcert.cli import main

    def run(*args):
        code = main([str(a) for a in args])
        out = capsys.readouterr()
        return code, out.out, out.err

    return run


# Tests that run pytest use pytester.runpytest_subprocess, never the in-process runpytest: an in-process
# run restores sys.modules afterwards, dropping the modules numba imported lazily during it (its
# extension registrations), and numba's next compilation in this process then registers them again
# ("duplicate registration for PolynomialType": every later sweep in the process failed, exit 3)
pytest_plugins = ["pytester"]
