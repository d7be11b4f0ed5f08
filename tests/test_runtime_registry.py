"""One table of runtimes (opcert.runtime_table): a runtime is one file under opcert/targets/runtimes/ and one
row of the table, and every list of runtimes opcert keeps is derived from the rows.

The first test adds a runtime the way docs/targets.md says to, in a copy of the package: a NumPy stand-in
(its element-wise side computes tanh in binary64, rounded once, and returns one output an ULP high; its
tensor side computes Softmax in binary64, rounded once), then measures it element-wise and on a tensor
operator through the API the CLI and the gate use, in a process whose PYTHONPATH is that copy."""

import ast
import filecmp
import json
import os
import shutil
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import numpy as np

import opcert.isa
import opcert.targets
import opcert.targets.tensor
import opcert.workers
from opcert.runtime_table import RUNTIMES, isa_switches, runtime_of, target_names, tensor_target_names, threaded_modules
from opcert.targets.runtimes import resolve

ROOT = Path(__file__).resolve().parents[1]

STAND_IN = textwrap.dedent('''
    """numpy-standin: a runtime of NumPy's, both sides in binary64 rounded once to the input's format."""
    from __future__ import annotations

    import numpy as np

    from opcert.targets.layouts import LayoutSupport
    from opcert.targets.protocol import TensorTarget

    VERSION = "0.1-standin"


    class StandInElementWise:
        name = "numpy-standin"
        version = VERSION
        details = {"numpy": np.__version__}

        def unsupported(self, op, dtype, attrs):
            if op.name != "Tanh":
                return f"numpy-standin has no {op.name}"
            return None if dtype in ("float16", "float32", "float64") else f"numpy-standin: no {dtype}"

        def __call__(self, op, x, attrs):
            y = np.asarray(np.tanh(x.astype(np.float64))).astype(x.dtype)
            # one output an ULP high, at x = 0.5: the measurement must find it
            return np.where(x == 0.5, np.nextafter(y, y.dtype.type(np.inf)), y)

        def layouts(self):
            return LayoutSupport(views=True, rows=True, offsets=True,
                                 cannot={"threads": "NumPy runs on one thread", "in place": "no in-place form"})


    class StandInTensor(TensorTarget):
        name = "numpy-standin"
        version = VERSION
        no_threads = "NumPy runs on one thread"

        def unsupported(self, op, std, dtype, reduced, rank):
            return None if op.name == "Softmax" else f"numpy-standin has no {op.name}"

        def call(self, op, std, x, reduced):
            if x.size == 0:
                return x.copy()
            x64 = x.astype(np.float64)
            with np.errstate(all="ignore"):
                e = np.exp(x64 - np.max(x64, axis=reduced, keepdims=True))
                return (e / np.sum(e, axis=reduced, keepdims=True)).astype(x.dtype)
''')

ROW = """    Runtime(name="numpy-standin", extra="numpy-standin", concurrent=True,
            elementwise="opcert.targets.runtimes.numpy_standin:StandInElementWise",
            tensor="opcert.targets.runtimes.numpy_standin:StandInTensor"),
"""

MEASURE = textwrap.dedent("""
    import json
    import numpy as np
    import opcert
    from opcert.targets import RUNTIME_NAMES, check_name
    from opcert.targets.tensor import NAMES
    from opcert.verify.tensor.measure import measure_rows

    assert check_name("numpy-standin") == "numpy-standin"
    e = opcert.measure("Tanh", "numpy-standin", "float16", "exhaustive")
    t = measure_rows("Softmax", "numpy-standin", "float32", samples=300)
    ref = opcert.reference("Tanh", np.array([0.5], np.float16))
    print(json.dumps({"names": list(RUNTIME_NAMES), "tensor_names": list(NAMES), "element_wise": e.to_dict(),
                      "tensor": t.to_dict(), "reference_at_half": int(ref.view(np.uint16)[0])}, default=str))
""")


def _differing(a: Path, b: Path) -> set[str]:
    """Paths (relative) of the files that differ between two trees, or are in one only; __pycache__ aside."""
    out = set()
    cmp = filecmp.dircmp(a, b, ignore=["__pycache__"])
    stack = [(cmp, Path())]
    while stack:
        c, rel = stack.pop()
        out |= {str(rel / n) for n in c.left_only + c.right_only + c.diff_files + c.funny_files}
        _, mismatch, errors = filecmp.cmpfiles(c.left, c.right, c.common_files, shallow=False)
        out |= {str(rel / n) for n in mismatch + errors}
        stack += [(sub, rel / name) for name, sub in c.subdirs.items()]
    return out


def test_a_runtime_is_one_new_file_and_one_row(tmp_path):
    copy = tmp_path / "opcert"
    shutil.copytree(ROOT / "opcert", copy, ignore=shutil.ignore_patterns("__pycache__"))
    (copy / "targets" / "runtimes" / "numpy_standin.py").write_text(STAND_IN)
    table = copy / "runtime_table.py"
    text = table.read_text()
    assert text.count("RUNTIMES = (\n") == 1
    table.write_text(text.replace("RUNTIMES = (\n", "RUNTIMES = (\n" + ROW))
    assert _differing(ROOT / "opcert", copy) == {"runtime_table.py", "targets/runtimes/numpy_standin.py"}

    env = dict(os.environ, PYTHONPATH=str(tmp_path), PYTHONDONTWRITEBYTECODE="1")
    r = subprocess.run(
        [sys.executable, "-c", MEASURE], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
    )
    assert r.returncode == 0, r.stderr[-3000:]
    got = json.loads(r.stdout.strip().splitlines()[-1])
    assert "numpy-standin" in got["names"] and "numpy-standin" in got["tensor_names"]

    e = got["element_wise"]
    assert e["status"] == "ok" and e["exhaustive"] and e["inputs_checked"] == 65536, (e["status"], e["error"])
    assert e["target_info"]["name"] == "numpy-standin" and e["target_info"]["version"] == "0.1-standin"
    # every output is tanh rounded once from binary64 (correctly rounded: binary64's error is 2^-29 of a
    # float16 ULP) but the one at x = 0.5, which is the next float16 up: its error is 1 ULP minus the
    # rounding error there, in (0.5, 1.5); it is the worst input
    assert 0.5 < e["max_ulp"] < 1.5, e["max_ulp"]
    assert e["worst_input"] == 0.5, e["worst_input"]
    assert e["worst_output_bits"] == f"0x{got['reference_at_half'] + 1:04x}", e["worst_output_bits"]
    assert e["worst_reference_bits"] == f"0x{got['reference_at_half']:04x}", e["worst_reference_bits"]
    verdicts = {p["name"]: p for p in e["properties"]}
    odd = verdicts["odd"]  # tanh(-0.5) is not the high output's negation
    assert odd["status"] == "refuted" and abs(odd["counterexample"]["inputs"]["x"]["value"]) == 0.5, odd
    assert verdicts["layout"]["status"] in ("proved", "checked"), verdicts["layout"]["note"]

    t = got["tensor"]
    assert t["status"] == "ok" and t["target_version"] == "0.1-standin" and t["rows"] >= 300, t
    assert not t["call_failures"], t["call_failures"]
    # the stand-in takes no limits: a row holding +inf is NaN there (inf - inf), where the standard's is the
    # limit; those outputs are counted apart, each in a row with an infinity
    assert t["special_examples"] and all(np.isinf(ex["row"]).any() for ex in t["special_examples"]), t[
        "special_examples"
    ]
    # binary64 softmax rounded once to binary32: within half an ULP plus binary64's own error (~2^-24 ULP of
    # binary32 for these rows: far below the 0.01 allowed here)
    assert 0 < t["max_ulp"] <= 0.51, t["max_ulp"]


# ---- every list is the table's -------------------------------------------------------------------------------


def test_every_list_of_runtimes_is_derived_from_the_table():
    names = tuple(r.name for r in RUNTIMES)
    assert (
        opcert.targets.RUNTIME_NAMES
        == target_names()
        == names + tuple(f"{r.name}:{d}" for r in RUNTIMES for d in r.devices)
    )
    assert opcert.targets.BUILTIN == ("opcert",) + target_names()
    assert opcert.targets.tensor.NAMES == ("opcert",) + tensor_target_names()
    assert opcert.workers._THREADED == threaded_modules()
    assert set(threaded_modules()) >= {m for r in RUNTIMES for m in r.modules}
    assert opcert.isa.SWITCHES == {s.library: s.variable for s in isa_switches()}
    assert {r.isa for r in RUNTIMES if r.isa} <= set(isa_switches())
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert {r.extra for r in RUNTIMES} <= set(extras)
    for r in RUNTIMES:
        assert runtime_of(r.name) is r and all(runtime_of(f"{r.name}:{d}") is r for d in r.devices)
        want = r.isa.library if r.isa else None
        assert opcert.isa.switch_for(r.name) == want
        assert all(opcert.isa.switch_for(f"{r.name}:{d}") is None for d in r.devices)


def _declares_functions(node) -> bool:
    """An operator's `runtimes={"torch": RuntimeMap(...), ...}`: each library's function, data about the
    operator (which runtimes have one), not a list of runtimes."""
    return isinstance(node, ast.Dict) and all(
        isinstance(v, ast.Call) and getattr(v.func, "id", "") == "RuntimeMap" or isinstance(v, ast.Tuple)
        for v in node.values
    )


def _runtime_literals():
    """Every collection literal in opcert's source, outside the table, that names two runtimes or more."""
    names = {r.name for r in RUNTIMES} | set(target_names())
    for path in sorted((ROOT / "opcert").rglob("*.py")):
        if path == ROOT / "opcert" / "runtime_table.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.Tuple, ast.List, ast.Set, ast.Dict)) and not _declares_functions(node):
                items = node.keys if isinstance(node, ast.Dict) else node.elts
                found = {n.value for n in items if isinstance(n, ast.Constant) and n.value in names}
                if len(found) >= 2:
                    yield f"{path.relative_to(ROOT)}:{node.lineno}: {sorted(found)}"


def test_no_second_list_of_runtimes_remains():
    # the names the lists had before the table, defined anywhere but from the table
    old = ("RUNTIME_NAMES", "RUNTIMES", "EXTRAS", "NAMES", "SWITCHES", "_THREADED", "_CAPPED")
    for path in sorted((ROOT / "opcert").rglob("*.py")):
        if path == ROOT / "opcert" / "runtime_table.py":
            continue
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id in old for t in node.targets):
                assert not isinstance(node.value, (ast.Tuple, ast.List, ast.Set, ast.Dict)), (
                    f"{path.relative_to(ROOT)}:{node.lineno} writes a list of its own"
                )
    assert list(_runtime_literals()) == []


def test_the_literal_check_finds_a_second_list(tmp_path, monkeypatch):
    """The reading above is not vacuous: a tuple naming two runtimes is found."""
    fake = tmp_path / "opcert"
    fake.mkdir()
    (fake / "runtime_table.py").write_text("")
    (fake / "m.py").write_text(
        'KNOWN = ("torch", "jax")\nUSES = {"torch": RuntimeMap("torch.tanh"), '
        '"jax": RuntimeMap("jax.numpy.tanh")}\nLIBS = {"torch": 1, "openvino": 2}\n'
    )
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    assert list(_runtime_literals()) == ["opcert/m.py:1: ['jax', 'torch']", "opcert/m.py:3: ['openvino', 'torch']"]


def test_each_row_names_sides_that_keep_the_protocols_and_import_no_runtime():
    before = {m for m in threaded_modules() if m in sys.modules}
    for r in RUNTIMES:
        side = resolve(r.elementwise)
        assert all(callable(getattr(side, m, None)) for m in ("unsupported", "__call__", "layouts")), r.name
        assert side.name == r.name
        if r.tensor is not None:
            tensor = resolve(r.tensor)
            assert all(callable(getattr(tensor, m, None)) for m in ("unsupported", "call", "threads")), r.name
            assert tensor.name == r.name and isinstance(tensor.no_threads, str)
    # the files hold the runtimes' sides; their libraries are imported when a target is made, not before
    assert {m for m in threaded_modules() if m in sys.modules} == before


def test_a_missing_runtime_is_no_target():
    assert runtime_of("torch:cpu") is None and runtime_of("numpy:tanh") is None and runtime_of("numpy") is None
    assert np.all([runtime_of(n) is not None for n in target_names()])
