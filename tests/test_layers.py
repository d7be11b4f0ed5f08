"""The package's structure: the layer contracts of pyproject.toml (import-linter), and what they cannot say:
no import cycle between modules, no private name imported from another module, and the package's own
`__init__` (the public facade) imported only from the top layer. Function-level imports count: they are
imports too."""

import ast
import sys
import tomllib
from pathlib import Path

import grimp
import pytest
from importlinter.cli import lint_imports

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "opcert"


@pytest.fixture(scope="module")
def graph():
    return grimp.build_graph("opcert", include_external_packages=False)


def test_the_layer_contracts_hold(capsys):
    code = lint_imports(config_filename=str(ROOT / "pyproject.toml"), no_cache=True)
    out = capsys.readouterr().out
    assert code == 0, out[out.find("Broken contracts") :]
    assert "0 broken" in out and "KEPT" in out


def test_every_module_is_in_a_layer():
    """A new top-level module must be placed in the layers, or the contract says nothing about it."""
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"][0]
    named = {m.strip() for layer in cfg["layers"] for m in layer.replace(":", "|").split("|")}
    here = {f"opcert.{p.stem}" for p in PACKAGE.glob("*.py") if p.stem != "__init__"} | {
        f"opcert.{p.parent.name}" for p in PACKAGE.glob("*/__init__.py")
    }
    assert here - named == set(), "modules in no layer of pyproject.toml's contract"


def test_every_room_of_verify_is_in_its_contract():
    cfg = next(
        c
        for c in tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
        if c.get("containers") == ["opcert.verify"]
    )
    named = {m.strip() for layer in cfg["layers"] for m in layer.split("|")}
    here = {p.stem for p in (PACKAGE / "verify").glob("*.py") if p.stem != "__init__"} | {
        p.parent.name for p in (PACKAGE / "verify").glob("*/__init__.py")
    }
    assert here - named == set(), "rooms of opcert.verify in no layer of its contract"


def _lines(paths) -> int:
    return sum(len(p.read_text().splitlines()) for p in paths)


def test_no_package_holds_most_of_the_house():
    """A package that grows past 40% of the lines is a room that should be split (issue 51). Measured for
    the top-level packages (with their subpackages) and for every package alone (its own modules)."""
    total = _lines(PACKAGE.rglob("*.py"))
    top = {d.name: _lines(d.rglob("*.py")) for d in PACKAGE.iterdir() if (d / "__init__.py").exists()}
    alone = {
        str(d.relative_to(PACKAGE)): _lines(d.glob("*.py")) for d in PACKAGE.rglob("*") if (d / "__init__.py").exists()
    }
    assert max(top.values()) < 0.4 * total, sorted(top.items(), key=lambda kv: -kv[1])[:3]
    assert max(alone.values()) < 0.4 * total, sorted(alone.items(), key=lambda kv: -kv[1])[:3]


def test_no_import_cycle(graph):
    adj = {m: graph.find_modules_directly_imported_by(m) for m in graph.modules}
    index, low, stack, on, cycles, counter = {}, {}, [], set(), [], [0]

    def visit(v):  # Tarjan's strongly connected components
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in adj[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                cycles.append(sorted(comp))

    for m in sorted(adj):
        if m not in index:
            visit(m)
    assert cycles == []


def test_the_public_facade_is_imported_only_from_the_top(graph):
    """`opcert/__init__.py` imports the layers to offer the public API: a module below that imports it
    imports every layer (the version is in opcert._version)."""
    assert graph.find_modules_that_directly_import("opcert") <= {
        "opcert.cli",
        "opcert.pytest_plugin",
        "opcert.__main__",
    }


def _imports_of_private_names():
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        mod = ".".join(parts[:-1] if path.name == "__init__.py" else parts)
        package = mod if path.name == "__init__.py" else mod.rsplit(".", 1)[0]
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.ImportFrom):
                continue
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1])
                target = base + ("." + node.module if node.module else "")
            else:
                target = node.module or ""
            if not target.startswith("opcert"):
                continue
            private_module = any(p.startswith("_") and not p.startswith("__") for p in target.split("."))
            for alias in node.names:
                if private_module or (alias.name.startswith("_") and not alias.name.startswith("__")):
                    yield f"{mod}:{node.lineno} imports {alias.name} from {target}"


def test_no_private_name_is_imported_across_modules():
    # opcert._version is the one private module others read (its name keeps it out of the public API)
    found = [x for x in _imports_of_private_names() if not x.endswith("__version__ from opcert._version")]
    assert found == []


def test_the_private_name_check_can_fail(tmp_path, monkeypatch):
    """The AST reading above finds a private import when one is there (it is not vacuous)."""
    fake = tmp_path / "opcert"
    (fake / "sub").mkdir(parents=True)
    (fake / "__init__.py").write_text("")
    (fake / "sub" / "__init__.py").write_text("")
    (fake / "sub" / "a.py").write_text("def f():\n    from ..b import _hidden\n")
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    monkeypatch.setattr(sys.modules[__name__], "PACKAGE", fake)
    assert [x for x in _imports_of_private_names()] == ["opcert.sub.a:2 imports _hidden from opcert.b"]


def test_collecting_the_suite_loads_no_multithreaded_runtime():
    # Once a process has loaded torch, jax, ONNX Runtime or OpenVINO, opcert spawns its workers rather than
    # forking them (opcert.workers): a test module that imports one at collection slows every later test
    # of its xdist worker (the suite took minutes longer when test_catalog imported jax to decide a skip).
    # conftest.py records what this process had loaded when its collection finished.
    import conftest

    assert conftest.THREADED_AT_COLLECTION == [], conftest.THREADED_AT_COLLECTION


# Heavy optional dependencies a module may import where it needs them (each loads in seconds, or starts threads);
# everything else is imported at the top of its module.
LAZY_ALLOWED = {
    "z3",
    "numba",
    "llvmlite",
    "torch",
    "jax",
    "jaxlib",
    "openvino",
    "onnxruntime",
    "onnx",
    "dask",
    "distributed",
    "tensorflow",
}


def _function_local_imports():
    for path in sorted(PACKAGE.rglob("*.py")):
        lines = path.read_text().splitlines()
        for fn in ast.walk(ast.parse("\n".join(lines))):
            if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for node in ast.walk(fn):
                    if isinstance(node, (ast.Import, ast.ImportFrom)):
                        module = node.module if isinstance(node, ast.ImportFrom) else node.names[0].name
                        yield f"{path.relative_to(ROOT)}:{node.lineno}", module or "", lines[node.end_lineno - 1]


def test_imports_are_at_module_level_but_the_heavy_and_the_explained():
    """opcert's own modules imported inside a function: fewer than 20, each saying why on its line ("lazy: ...");
    other modules only where they are heavy optional dependencies (issue 51)."""
    own = [(where, line) for where, module, line in _function_local_imports() if module.startswith("opcert")]
    assert len(own) < 20, own
    assert [where for where, line in own if "# lazy" not in line] == []
    other = [
        f"{where} {module}"
        for where, module, _ in _function_local_imports()
        if not module.startswith("opcert") and module.split(".")[0] not in LAZY_ALLOWED
    ]
    assert other == []


def test_importing_opcert_and_its_pytest_plugin_loads_neither_numba_nor_z3():
    """pytest loads the plugin in every session on a host where opcert is installed: it and `import opcert`
    load the measurement's heavy dependencies only when a check runs (the lazy imports say so)."""
    import subprocess

    probe = (
        "import sys, opcert, opcert.pytest_plugin, opcert.fingerprint as f; "
        "print(sorted(m for m in ('numba', 'z3', 'opcert.jit', 'torch', 'jax') if m in sys.modules), "
        "len(f._FINGERPRINT))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT)
    assert out.stdout.strip() == "[] 0", out.stdout + out.stderr[-2000:]
