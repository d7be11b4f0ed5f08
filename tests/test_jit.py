"""opcert's compiled kernels are cached under a key of all of opcert's source (opcert.jit): a kernel that
inlines another module's function is compiled again when that module changes, not loaded as it was."""

import importlib
import json
import os
import pkgutil
import subprocess
import sys
import textwrap

from numba.core.caching import NullCache
from numba.core.registry import CPUDispatcher

import opcert
from opcert.jit import keyed

PROBE = """
import importlib.util, json, os, sys, time
import opcert.fingerprint
if len(sys.argv) > 3:     # start together with the other processes: when this file appears
    while not os.path.exists(sys.argv[3]):
        time.sleep(0.001)
if sys.argv[2] != "-":
    opcert.fingerprint._FINGERPRINT.append(sys.argv[2])   # as if opcert's source had changed
spec = importlib.util.spec_from_file_location("opcert_probe_kernel", sys.argv[1])
mod = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = mod      # as ball_compiled loads its generated kernels
spec.loader.exec_module(mod)
out = mod.twice_ulp(1.0)
from opcert.jit import keyed
print(json.dumps({"out": out, "hits": sum(mod.twice_ulp.stats.cache_hits.values()),
                  "misses": sum(mod.twice_ulp.stats.cache_misses.values()), "keyed": keyed(mod.twice_ulp)}))
"""

KERNEL = """
from opcert.jit import numba
from opcert.verify.ulp import ulp_inline


@numba.njit(cache=True)
def twice_ulp(x):
    # inlines verify.ulp's function: this file does not change when ulp.py does
    return 2.0 * ulp_inline(x, -126, 24)
"""


def _caches(dispatcher) -> bool:
    """Whether numba caches this function on disk (cache=True)."""
    return not isinstance(dispatcher._cache, NullCache)


def _run(cache_dir, path, fingerprint="-"):
    env = dict(os.environ, OPCERT_KERNEL_CACHE=str(cache_dir))
    env.pop("NUMBA_CACHE_DIR", None)
    r = subprocess.run(
        [sys.executable, "-c", PROBE, str(path), fingerprint], env=env, capture_output=True, text=True, timeout=120
    )
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_a_kernel_is_compiled_again_when_opcert_source_changes(tmp_path):
    """A generated kernel in the kernel cache that inlines verify.ulp: compiled again by a process whose code
    fingerprint differs (its own file and numba's record of it unchanged), and again when the first fingerprint
    comes back (replaced, not kept); loaded from numba's cache by the next process with that same opcert."""
    path = tmp_path / "opcert_probe_kernel.py"
    path.write_text(textwrap.dedent(KERNEL))
    first = _run(tmp_path, path)
    assert first["keyed"] and first["misses"] == 1 and first["hits"] == 0
    assert first["out"] == 2.0**-22  # twice binary32's ULP at 1, 2^-23
    other = _run(tmp_path, path, "0" * 64)
    assert other["hits"] == 0 and other["misses"] == 1
    back = _run(tmp_path, path)
    assert back["hits"] == 0 and back["misses"] == 1
    again = _run(tmp_path, path)  # the same fingerprint as the last: loaded, not compiled
    assert again["hits"] == 1 and again["misses"] == 0


def test_processes_asking_for_the_same_kernel_at_once_compile_it_once(tmp_path):
    """Three processes on a cold cache call the same kernel at the same moment (as a sweep's workers do):
    one compiles it, under the lock beside numba's index, and the others load what it saved."""
    path = tmp_path / "opcert_probe_kernel.py"
    path.write_text(textwrap.dedent(KERNEL))
    go = tmp_path / "go"
    env = dict(os.environ, OPCERT_KERNEL_CACHE=str(tmp_path))
    env.pop("NUMBA_CACHE_DIR", None)
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", PROBE, str(path), "-", str(go)], env=env, stdout=subprocess.PIPE, text=True
        )
        for _ in range(3)
    ]
    go.touch()
    runs = [json.loads(p.communicate(timeout=120)[0].strip().splitlines()[-1]) for p in procs]
    assert all(p.returncode == 0 for p in procs)
    assert [r["out"] for r in runs] == [2.0**-22] * 3
    assert sorted(r["misses"] for r in runs) == [0, 0, 1]
    assert sorted(r["hits"] for r in runs) == [0, 1, 1]


def test_a_kernel_outside_opcert_is_left_to_numba(tmp_path):
    """A user's own cached function (a file not named opcert_ in the kernel cache, nor in opcert's
    package) keeps numba's own key."""
    path = tmp_path / "user_kernel.py"
    path.write_text("import numba\n\n@numba.njit(cache=True)\ndef f(x):\n    return x + 1.0\n")
    sys.path.insert(0, str(tmp_path))
    try:
        mod = importlib.import_module("user_kernel")
        assert mod.f(1.0) == 2.0
        assert not keyed(mod.f)
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("user_kernel", None)


def test_every_cached_kernel_of_opcert_is_keyed():
    """Every module of the package imported, every numba function it caches on disk is keyed by the code
    fingerprint (a module that imports numba itself, not from opcert.jit, would escape it)."""
    cached, loose = [], []
    for info in pkgutil.walk_packages(opcert.__path__, "opcert."):
        if info.name.endswith("__main__"):
            continue
        mod = importlib.import_module(info.name)
        for name, v in vars(mod).items():
            if isinstance(v, CPUDispatcher) and _caches(v):
                (cached if keyed(v) else loose).append(f"{info.name}.{name}")
    assert loose == []
    assert len(cached) >= 10  # the sweep's, the property scans', errorfree's, ulp's, ...


def test_a_generated_ball_kernel_is_keyed():
    """The ball kernels generated into the kernel cache inline numerics.errorfree and numerics.ball_rules."""
    from opcert.numerics.ball_compiled import compiled
    from opcert.spec import get_operator
    from opcert.spec.attrs import resolve

    op = get_operator("Tanh")
    assert compiled(op.reference_form(None), {k: float(v) for k, v in resolve(op).items()}) is not None
    kernels = [
        v
        for name, mod in list(sys.modules.items())
        if name.startswith("opcert_ball_")
        for v in vars(mod).values()
        if isinstance(v, CPUDispatcher) and _caches(v)
    ]
    assert kernels and all(keyed(k) for k in kernels)  # evaluate, and errorfree's functions it imports


def test_numbas_registries_load_without_scipy_linalg_and_answer_its_blas_probe_as_numba_does():
    """opcert.numba_registries answers numba.np.arraymath's BLAS probe from SciPy's files: the same answer as
    numba's own probe (which imports scipy.linalg), with scipy.linalg not imported, and a kernel compiles and
    runs after it; a kernel that calls BLAS (np.dot) still gets it."""
    probe = textwrap.dedent(
        """
        import json, sys
        import numpy as np
        from opcert import numba_registries
        from opcert.jit import numba
        numba_registries.load()
        from numba.np import arraymath, linalg
        after_load = "scipy.linalg" in sys.modules
        try:
            linalg.ensure_blas()  # numba's own probe: imports scipy.linalg
            own = True
        except ImportError:
            own = False
        f = numba.njit(lambda a, b: np.dot(a, b) + a.sum())
        print(json.dumps([after_load, bool(arraymath._HAVE_BLAS), own, float(f(np.ones(3), np.ones(3)))]))
        """
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    after_load, ours, own, value = json.loads(out.stdout.strip().splitlines()[-1])
    assert after_load is False
    assert ours == own
    assert value == 6.0  # 3 (the dot product) + 3
