"""opcert as users get it: the sdist and the wheel, built by the standard front end (`python -m build`) from a
copy of the clone, hold what the package needs; each, installed into a new virtual environment outside the
repository, gives a working CLI, pytest plugin and API; the core metadata is complete; every extra resolves;
the README's install lines give torch's CPU build, no CUDA package; a target whose library is missing names
the extra that installs it.

Where a test takes a shortcut to stay fast (the suite has 8 minutes on 2 cores), its comment says what the
shortcut does and does not prove."""

import ast
import email.parser
import importlib.metadata
import json
import os
import platform
import re
import shlex
import shutil
import site
import subprocess
import sys
import sysconfig
import tarfile
import tomllib
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name

from opcert._version import __version__
from opcert.errors import UsageError

ROOT = Path(__file__).resolve().parents[1]
LICENSE_GLOBS = ("LICEN[CS]E*", "COPYING*", "NOTICE*", "AUTHORS*")  # what setuptools ships by default

KERNEL = """
import numpy as np

def relu(x):
    return np.where(x <= 0, np.zeros_like(x), x)     # +0 at -0, NaN kept
"""

GATE = """
[[check]]
op = "Relu"
dtypes = ["float16"]
mode = "exhaustive"
proofs = "all"

[[check]]
op = "Relu"
dtypes = ["float16"]
target = "userkernel:relu"
mode = "exhaustive"
proofs = ["range", "monotonic", "nan"]
"""

PLUGIN_TEST = """
def test_relu(opcert_check):
    r = opcert_check("Relu", "userkernel:relu", "float16", mode="exhaustive", max_ulp=0)
    assert r.inputs_checked == 65536
"""


# ---------------------------------------------------------------------------------------------- building


def _clone_files() -> list[str]:
    """The files a clone of the repository has (tracked, and new files git does not ignore), relative to ROOT."""
    try:
        out = subprocess.run(
            ["git", "-C", str(ROOT), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            capture_output=True,
            check=True,
        ).stdout
        names = [n for n in out.decode().split("\0") if n]
    except (OSError, subprocess.CalledProcessError):  # not a git checkout: the tree, less what .gitignore names
        skip = {".git", ".venv", "build", "dist", "__pycache__", ".pytest_cache", ".hypothesis", ".ruff_cache"}
        names = [
            str(p.relative_to(ROOT))
            for p in ROOT.rglob("*")
            if p.is_file()
            and not any(part in skip or part.endswith(".egg-info") or part.startswith(".opcert") for part in p.parts)
            and p.suffix != ".pyc"
        ]
    return sorted(n for n in names if (ROOT / n).is_file())  # a file deleted but not yet committed is not there


@dataclass(frozen=True)
class Dists:
    sdist: Path
    wheel: Path
    src: Path  # the copy of the clone they were built from (the checkout may change meanwhile: others edit it)
    sources: tuple[str, ...]  # its files, relative to src


@pytest.fixture(scope="module")
def dists(tmp_path_factory) -> Dists:
    """`python -m build`: the sdist from a copy of the clone, then the wheel from the unpacked sdist (so the sdist is
    enough to build the wheel). The copy keeps build/ and egg-info out of the checkout.

    Shortcut: --no-isolation builds with this environment's setuptools rather than a new environment with
    build-system.requires from the index. build still checks that this environment satisfies
    build-system.requires; the isolated build is what pip does when the sdist test installs the sdist."""
    tmp = tmp_path_factory.mktemp("dists")
    sources = []
    for name in _clone_files():
        (tmp / "src" / name).parent.mkdir(parents=True, exist_ok=True)
        try:
            shutil.copy2(ROOT / name, tmp / "src" / name)
            sources.append(name)
        except FileNotFoundError:  # deleted since it was listed (others edit the checkout): not in the clone
            pass
    r = subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(tmp / "dist"), str(tmp / "src")],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    (sdist,) = (tmp / "dist").glob("opcert-*.tar.gz")
    (wheel,) = (tmp / "dist").glob("opcert-*.whl")
    return Dists(sdist, wheel, tmp / "src", tuple(sources))


def _venv(tmp: Path, dist: Path, deps: bool) -> Path:
    """A new venv with `dist` installed by pip (an sdist: pip builds its wheel, in an isolated environment whose
    setuptools comes from the package index, as for any user)."""
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    py = venv / "bin" / "python"
    cmd = [sys.executable, "-m", "pip", "--python", str(py), "install", "--quiet", str(dist)]
    # with its dependencies: and pytest, which the plugin's users have
    r = subprocess.run(cmd + (["pytest"] if deps else ["--no-deps"]), capture_output=True, text=True)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    if not deps:
        # Shortcut: the dependencies (not opcert) from this environment, a path after the new venv's own
        # site-packages; .pth files there are not read, so this environment's editable opcert is not importable.
        # Proves opcert's own files are complete and work from the install; not that pip resolves its
        # dependencies (the slow test, and test_every_extra_resolves_from_the_index for the resolution).
        Path(_purelib(py), "zz_opcert_test_deps.pth").write_text(
            "\n".join([sysconfig.get_paths()["purelib"], *site.getsitepackages()]) + "\n"
        )
    return venv


def _purelib(py: Path) -> str:
    return subprocess.run(
        [str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()


def _runner(work: Path, **extra_env):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env.update(PYTHONPATH=str(work), OPCERT_PROGRESS_SECONDS="0", **extra_env)

    def run(*cmd, **more_env):
        return subprocess.run(
            [str(c) for c in cmd], cwd=work, env={**env, **more_env}, capture_output=True, text=True, timeout=600
        )

    return run


def _assert_is_the_installed_copy(run, venv: Path) -> None:
    r = run(
        venv / "bin" / "python",
        "-c",
        "import opcert; print(opcert.__file__); "
        "import numpy as np; print(opcert.reference('Tanh', np.array([0.5], np.float32)))",
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[0].startswith(str(venv)), r.stdout  # the installed opcert, not the checkout's
    assert r.stdout.splitlines()[1].strip() == "[0.46211717]", r.stdout  # tanh(0.5) = 0.46211715726...


# ------------------------------------------------------------------------------------- installed, in use


def _check_installed(tmp: Path, venv: Path) -> None:
    work = tmp / "work"  # outside the repository: nothing of the checkout is importable
    work.mkdir()
    (work / "userkernel.py").write_text(KERNEL)
    (work / "gate.toml").write_text(GATE)
    (work / "test_user.py").write_text(PLUGIN_TEST)
    run = _runner(work)
    bin_ = venv / "bin"
    _assert_is_the_installed_copy(run, venv)
    r = run(bin_ / "opcert", "ops", "--json")
    assert r.returncode == 0 and '"Softplus"' in r.stdout, r.stderr
    r = run(bin_ / "opcert", "gate", "--config", "gate.toml", "--json", "gate.json", "--report", "report")
    assert r.returncode == 0, r.stdout + r.stderr
    assert (work / "report" / "report.html").stat().st_size > 0
    r = run(bin_ / "python", "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_user.py")
    assert r.returncode == 0 and "1 passed" in r.stdout, r.stdout + r.stderr


@pytest.mark.slow
def test_the_wheel_installs_with_its_dependencies_into_a_new_venv(dists, tmp_path):
    """The whole install, dependencies resolved by pip from the package index."""
    _check_installed(tmp_path, _venv(tmp_path, dists.wheel, deps=True))


def _numpy_tanh_float16_independently() -> tuple[float, int, int]:
    """numpy's float16 tanh against float64 tanh (not opcert's reference: a libm-grade value, ~1e-16 relative, far
    below the 1e-9 ULP asked of the comparison), errors in ULPs of float16 at the exact value (2^(e - 10), e the
    exponent, at least -14): (max error, its input's bits, inputs correctly rounded)."""
    bits = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)
    x = bits.view(np.float16)
    with np.errstate(invalid="ignore"):  # tanh(NaN)
        got = np.tanh(x)
    finite = np.isfinite(x)
    exact = np.tanh(x[finite].astype(np.float64))
    mag = np.abs(exact)
    e = np.maximum(np.floor(np.log2(mag, out=np.full_like(mag, -30.0), where=mag > 0)), -14)
    err = np.abs(got[finite].astype(np.float64) - exact) / np.exp2(e - 10)
    i = int(np.argmax(err))
    # the others: +-inf -> +-1 exactly, NaN -> NaN
    others_right = np.sum(np.isnan(x) & np.isnan(got)) + np.sum(np.isinf(x) & (got == np.sign(x)))
    return float(err[i]), int(bits[finite][i]), int(np.sum(err < 0.5) + others_right)


# The slow run: a venv, pip building the wheel from the sdist, and the user's checks in it took 19-22 s of CI's 480;
# CI keeps test_the_sdist_and_the_wheel_hold_what_the_package_needs (the two artifacts' files) and the suite's own
# gate, pytest plugin and user kernels
@pytest.mark.slow
def test_the_sdist_installs_into_a_new_venv_and_works(dists, tmp_path):
    """pip builds the wheel from the sdist (isolated: setuptools from the index) and installs it; the installed
    copy measures a kernel with the figures an independent computation gives, lists the checkout's whole catalog,
    and compiles its C library from the installed sources. Dependencies from this environment, as in the fast
    wheel test (what that shortcut does and does not prove: `_venv`). It also runs the user's checks the fast wheel
    test ran in a venv of its own (_check_installed: a gate, the pytest plugin, a user's kernel)."""
    venv = _venv(tmp_path, dists.sdist, deps=False)
    # what the wheel's own test checked in a venv of its own (the wheel pip builds from the sdist is built as
    # dists.wheel was: from the unpacked sdist; test_the_sdist_and_the_wheel_hold_what_the_package_needs
    # compares the two artifacts' files)
    (tmp_path / "user").mkdir()
    _check_installed(tmp_path / "user", venv)
    work = tmp_path / "work"
    work.mkdir()
    run = _runner(work)
    bin_ = venv / "bin"

    # a float16 accuracy check of numpy's Tanh, every input, against opcert's correctly rounded reference
    r = run(bin_ / "opcert", "accuracy", "Tanh", "--dtype", "float16", "--target", "numpy:tanh", "--exhaustive",
            "--json", "tanh.json")  # fmt: skip
    assert r.returncode == 0 and "max ULP error" in r.stdout, r.stdout + r.stderr
    got = json.loads((work / "tanh.json").read_text())
    worst, worst_bits, right = _numpy_tanh_float16_independently()
    assert got["inputs_checked"] == 1 << 16 and got["exhaustive"], got  # every float16 bit pattern
    assert got["max_ulp"] == pytest.approx(worst, abs=1e-9), (got["max_ulp"], worst)  # 0.49994... here
    assert int(got["worst_input_bits"], 16) == worst_bits, (got["worst_input_bits"], hex(worst_bits))
    assert got["correctly_rounded"] == right, (got["correctly_rounded"], right)

    # the catalog: the installed copy's operators are the checkout's (an operator module missing from the sdist
    # would drop out of the catalog, which is found by listing the package)
    from opcert.spec import binary_operators, operators, predicate_operators, tensor_operators

    r = run(bin_ / "opcert", "ops", "--json")
    assert r.returncode == 0, r.stderr
    installed = {rec["name"] for rec in json.loads(r.stdout)}
    every = operators() + tensor_operators() + binary_operators() + predicate_operators()
    assert installed == {op.name for op in every}
    assert {"Tanh", "Softmax", "Pow", "IsNaN"} <= installed

    # the installed copy is what ran (not the checkout's), and the C library opcert compiles at first use on glibc
    # x86-64 compiles from the source in it (a new kernel cache: compiled here, not found from an earlier run)
    cache = tmp_path / "kernels"
    r = run(
        bin_ / "python",
        "-c",
        "import opcert; from opcert.expr import libm_arrays as m; print(opcert.__file__); print(m.status())",
        OPCERT_KERNEL_CACHE=str(cache),
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith(str(venv)), r.stdout
    glibc_x86 = platform.system() == "Linux" and platform.machine() == "x86_64" and platform.libc_ver()[0] == "glibc"
    if glibc_x86 and shutil.which(os.environ.get("CC", "cc")):
        assert "glibc" in r.stdout and "not built" not in r.stdout, r.stdout
        assert list(cache.glob("opcert_libm_*.so")), list(cache.iterdir())


# ------------------------------------------------------------------------------------------- contents


def test_the_sdist_and_the_wheel_hold_what_the_package_needs(dists):
    """Every file of the package directory in the clone (modules, the C sources they carry, py.typed or data
    were there any) is in the sdist and the wheel; the sdist also has what builds it and the license files; nothing
    else (no tests without their helpers, no bytecode or compiled kernels); and no module of the package imports
    the repository's tests, benchmarks, tools or examples, which an install does not have."""
    root = f"opcert-{__version__}/"
    with tarfile.open(dists.sdist) as tar:
        sdist = {m.name.removeprefix(root) for m in tar.getmembers() if m.isfile()}
    with zipfile.ZipFile(dists.wheel) as whl:
        wheel = set(whl.namelist())
    package = {n for n in dists.sources if n.startswith("opcert/")}
    licenses = {p.name for g in LICENSE_GLOBS for p in dists.src.glob(g) if p.is_file()}
    if (dists.src / "opcert" / "py.typed").exists():
        assert "opcert/py.typed" in package
    assert package - sdist == set(), "in the package directory, not in the sdist"
    assert package - wheel == set(), "in the package directory, not in the wheel"
    builds = {"PKG-INFO", "pyproject.toml", "README.md", "setup.cfg", "MANIFEST.in"}
    assert {"PKG-INFO", "pyproject.toml", "README.md"} <= sdist
    assert licenses <= sdist
    extra = {n for n in sdist - package - builds - licenses if not n.startswith("opcert.egg-info/")}
    assert extra == set(), "in the sdist, not needed by the package"
    info = f"opcert-{__version__}.dist-info/"
    assert {f"{info}licenses/{n}" for n in licenses} <= wheel
    assert {n for n in wheel - package if not n.startswith(info)} == set(), "in the wheel, not in the package"

    outside = {"tests", "bench", "tools", "examples", "conftest", "docs", "reports"}
    for name in sorted(n for n in package if n.endswith(".py")):
        for node in ast.walk(ast.parse((dists.src / name).read_text(), name)):
            mods = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom) and node.level == 0
                else []
            )
            for m in mods:
                assert m.split(".")[0] not in outside, f"{name}:{node.lineno} imports {m}: not in an install"


def _metadata(text: str):
    return email.parser.Parser().parsestr(text)


def test_the_wheel_metadata_is_complete(dists):
    """The wheel's METADATA (what PyPI shows and pip reads): name, version, summary, Python versions, license,
    readme, keywords, classifiers (each in PyPI's list, consistent with requires-python); the sdist's PKG-INFO says
    the same. Project URLs and authors: none is known in the repository (no repository URL, only placeholder git
    identities), so none is declared; any declared later must not be a placeholder."""
    project = tomllib.loads((dists.src / "pyproject.toml").read_text())["project"]
    with zipfile.ZipFile(dists.wheel) as whl:
        meta = _metadata(whl.read(f"opcert-{__version__}.dist-info/METADATA").decode())
    with tarfile.open(dists.sdist) as tar:
        pkg_info = _metadata(tar.extractfile(f"opcert-{__version__}/PKG-INFO").read().decode())

    assert meta["Name"] == "opcert" and meta["Version"] == __version__
    assert set(meta.get_all("Provides-Extra")) == set(project["optional-dependencies"])
    assert meta["Summary"] == project["description"] and len(meta["Summary"]) > 20
    assert meta["Requires-Python"] == project["requires-python"] == ">=3.11"
    assert meta["License-Expression"] == project["license"] == "Apache-2.0"
    licenses = sorted(p.name for g in LICENSE_GLOBS for p in dists.src.glob(g) if p.is_file())
    assert sorted(meta.get_all("License-File") or []) == licenses
    assert meta["Description-Content-Type"] == "text/markdown"
    assert meta.get_payload().strip() == (dists.src / "README.md").read_text().strip()  # the long description
    keywords = [k.strip() for k in meta["Keywords"].split(",")]
    assert {"onnx", "floating point", "formal verification"} <= set(keywords), keywords

    import trove_classifiers

    classifiers = meta.get_all("Classifier")
    assert set(classifiers) <= trove_classifiers.classifiers, set(classifiers) - trove_classifiers.classifiers
    assert not set(classifiers) & set(trove_classifiers.deprecated_classifiers)
    for prefix in ("Development Status ::", "Operating System ::", "Topic ::", "Intended Audience ::"):
        assert any(c.startswith(prefix) for c in classifiers), prefix
    assert sum(c.startswith("Development Status ::") for c in classifiers) == 1
    assert not any(c.startswith("License ::") for c in classifiers)  # the License-Expression says it (PEP 639)
    pythons = [m[1] for c in classifiers if (m := re.fullmatch(r"Programming Language :: Python :: (3\.\d+)", c))]
    allowed = SpecifierSet(meta["Requires-Python"])
    assert pythons and all(v in allowed for v in pythons), pythons
    assert f"{sys.version_info[0]}.{sys.version_info[1]}" in pythons  # the Python this suite runs on

    urls = [u.split(",", 1)[-1].strip() for u in meta.get_all("Project-URL") or []] + meta.get_all("Home-page", [])
    for link in urls:
        assert link.startswith("https://") and not re.search(r"OWNER|example\.|\.invalid|localhost", link), link
    for field in ("Author", "Author-email", "Maintainer", "Maintainer-email"):
        assert not re.search(r"\.invalid|example\.|noreply", meta[field] or ""), (field, meta[field])

    for field in ("Name", "Version", "Summary", "Requires-Python", "License-Expression", "Keywords"):
        assert pkg_info[field] == meta[field], field
    for field in ("Classifier", "Requires-Dist", "Provides-Extra", "Project-URL"):
        assert pkg_info.get_all(field) == meta.get_all(field), field


# ------------------------------------------------------------------------------ extras and the README


def _is_cuda(name: str) -> bool:
    """A package of NVIDIA's CUDA stack, as PyPI's Linux torch wheel requires them (nvidia-cublas, nvidia-cudnn-cu13,
    cuda-bindings, cuda-toolkit; triton, the GPU compiler that wheel also brings)."""
    n = canonicalize_name(name)
    return n.startswith(("nvidia-", "cuda-")) or n == "triton" or re.search(r"-cu\d+$", n) is not None


@pytest.fixture(scope="module")
def torch_venv(tmp_path_factory) -> Path:
    """A new venv in which pip sees torch installed as this environment has it (the README's first line, done):
    a .pth names a folder holding only the torch distribution's METADATA, which is all pip reads of an installed
    distribution when it resolves. Installing torch for real is minutes: the point is what pip would add to it.

    The stand-in proves what pip resolves given this torch; not what download.pytorch.org serves today (offline)."""
    try:
        torch = importlib.metadata.distribution("torch")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("torch is not installed in this environment: no stand-in for the README's first line")
    tmp = tmp_path_factory.mktemp("torch_venv")
    info = tmp / "dists" / f"torch-{torch.version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(torch.read_text("METADATA"))
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    Path(_purelib(venv / "bin" / "python"), "zz_torch.pth").write_text(f"{tmp / 'dists'}\n")
    return venv


def _dry_run(venv: Path, *args: str) -> dict[str, str]:
    """pip install --dry-run into venv, with pip's configuration (index, find-links) as it is: {name: version} of
    what pip would install. Resolves from the package index, downloads no wheel for metadata it can read remotely,
    installs nothing."""
    r = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install", "--dry-run", "--quiet",
         "--report", "-", *args],
        capture_output=True,
        text=True,
    )  # fmt: skip
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    report = json.loads(r.stdout)
    return {canonicalize_name(i["metadata"]["name"]): i["metadata"]["version"] for i in report["install"]}


def _cpu_torch() -> str | None:
    """This environment's torch version if it is PyTorch's CPU build (a +cpu local version)."""
    try:
        version = importlib.metadata.version("torch")
    except importlib.metadata.PackageNotFoundError:
        return None
    return version if version.endswith("+cpu") else None


@pytest.mark.slow  # CI: `make test` installs every extra from the index (test, runtimes, dask, docs) before it runs
def test_every_extra_resolves_from_the_index(dists, torch_venv):
    """One resolution of opcert with every extra, from the package index, into a venv that has only torch (not
    torch again: its resolution reads multi-GB CUDA wheels here, and CI has 8 minutes): each requirement of each
    extra is resolved at a version its specifier allows, and with torch's CPU build nothing of CUDA comes in.
    Does not prove the wheels install or import (the Makefile's install, and the suite, do that)."""
    meta = _metadata(zipfile.ZipFile(dists.wheel).read(f"opcert-{__version__}.dist-info/METADATA").decode())
    extras = meta.get_all("Provides-Extra")
    declared = tomllib.loads((dists.src / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert set(extras) == set(declared)
    resolved = _dry_run(torch_venv, f"opcert[{','.join(extras)}] @ {dists.wheel.as_uri()}")
    resolved.setdefault("torch", importlib.metadata.version("torch"))  # installed already: kept
    for line in meta.get_all("Requires-Dist"):
        req = Requirement(line)
        extra = next((e for e in extras if req.marker and req.marker.evaluate({"extra": e})), None)
        if extra is None or canonicalize_name(req.name) == "opcert":
            continue
        name = canonicalize_name(req.name)
        assert name in resolved, (extra, line)
        assert req.specifier.contains(resolved[name], prereleases=True), (extra, line, resolved[name])
    if _cpu_torch():
        assert not [n for n in resolved if _is_cuda(n)], sorted(n for n in resolved if _is_cuda(n))


def _readme_install_commands() -> list[list[str]]:
    """The `pip install` commands of README.md's Install section, as argument lists (comments dropped)."""
    text = (ROOT / "README.md").read_text()
    section = re.search(r"^## Install\n(.*?)(?=^## )", text, re.M | re.S)
    assert section, "README.md has no '## Install' section"
    commands = []
    for block in re.findall(r"^```[^\n]*\n(.*?)^```", section[1], re.M | re.S):
        for line in block.splitlines():
            words = shlex.split(line, comments=True)
            if words[:2] == ["pip", "install"] or words[:4] == ["python", "-m", "pip", "install"]:
                commands.append(words[words.index("install") + 1 :])
    return commands


_VALUED = {"-i", "--index-url", "--extra-index-url", "-f", "--find-links", "-r", "--requirement", "-c",
           "--constraint", "--upgrade-strategy", "-e", "--editable", "--target", "-t", "--prefix", "--root"}  # fmt: skip


def _options_and_requirements(args: list[str]) -> tuple[dict[str, str | None], list[str]]:
    options, reqs, it = {}, [], iter(args)
    for a in it:
        if a.startswith("-"):
            key, _, value = a.partition("=")
            options[key] = value or (next(it) if key in _VALUED else None)
        else:
            reqs.append(a)
    return options, reqs


def test_the_readme_install_gets_torch_without_cuda(dists, torch_venv):
    """README's install: a first line installs torch from PyTorch's CPU index alone (read: --index-url, no other
    index, so PyPI's CUDA build cannot win on version), before the line that installs opcert with the torch extra;
    that line, done by pip (dry run) in a venv that has the CPU torch, keeps it and adds no CUDA package.

    What is not checked offline: what download.pytorch.org/whl/cpu serves. Its builds are the +cpu ones
    (PyTorch's documented CPU index); this environment's torch, one of them, requires no CUDA package (checked
    here), and pip, resolving the second line from the index, takes it as it is."""
    commands = _readme_install_commands()
    torch_at = next((i for i, c in enumerate(commands) if "torch" in _options_and_requirements(c)[1]), None)
    assert torch_at is not None, commands
    options, _ = _options_and_requirements(commands[torch_at])
    index = options.get("--index-url") or options.get("-i")
    assert index and re.fullmatch(r"https://download\.pytorch\.org/whl/cpu/?", index), commands[torch_at]
    assert not {"--extra-index-url", "-f", "--find-links", "--no-index"} & set(options), commands[torch_at]

    cpu = _cpu_torch()
    if cpu is None:
        pytest.skip("this environment's torch is not PyTorch's CPU build: no stand-in for the README's first line")
    torch_reqs = [Requirement(r) for r in importlib.metadata.requires("torch") or []]
    assert not [r for r in torch_reqs if _is_cuda(r.name)], torch_reqs  # the CPU build's own requirements

    opcert_lines = [
        i for i, c in enumerate(commands) if any(re.match(r"(\.|opcert)(\[|$)", r) for r in _options_and_requirements(c)[1])
    ]  # fmt: skip
    assert opcert_lines and all(i > torch_at for i in opcert_lines), commands
    for i in opcert_lines:
        options, reqs = _options_and_requirements(commands[i])
        # what would replace the installed torch with the index's newest (on PyPI, the CUDA build)
        assert not {"-U", "--upgrade", "--force-reinstall", "-I", "--ignore-installed"} & set(options), commands[i]
        assert options.get("--upgrade-strategy", "only-if-needed") == "only-if-needed", commands[i]
        # the clone ('.') or opcert is the package just built (the same metadata: pyproject.toml's)
        args = [re.sub(r"^(?:\.|opcert)(\[[^\]]*\])?$", rf"opcert\1 @ {dists.wheel.as_uri()}", r) for r in reqs]
        resolved = _dry_run(torch_venv, *args)
        assert "opcert" in resolved, resolved
        assert "torch" not in resolved, f"{shlex.join(commands[i])} would replace torch {cpu}: {resolved['torch']}"
        assert not [n for n in resolved if _is_cuda(n)], sorted(n for n in resolved if _is_cuda(n))


# ---------------------------------------------------------------------------------------------- extras


def test_each_runtime_has_an_extra_named_after_it():
    from opcert.runtime_table import RUNTIMES

    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    (everything,) = extras["runtimes"]
    assert everything.startswith("opcert[") and everything.endswith("]"), everything
    assert set(everything[7:-1].split(",")) == {r.extra for r in RUNTIMES} <= set(extras)


def test_a_missing_runtime_names_the_extra_that_installs_it(monkeypatch):
    from opcert.targets import runtimes, tensor
    from opcert.targets.runtimes import openvino

    class Missing:
        def __init__(self, *a):
            raise ModuleNotFoundError("No module named 'openvino'")

    monkeypatch.setattr(openvino, "OpenVinoElementWise", Missing)
    monkeypatch.setattr(openvino, "OpenVinoTensor", Missing)
    with pytest.raises(UsageError, match=r"pip install 'opcert\[openvino\]' \(or 'opcert\[runtimes\]'"):
        runtimes.load("openvino")
    with pytest.raises(UsageError, match=r"target openvino needs openvino, .*pip install 'opcert\[openvino\]'"):
        tensor.load("openvino")
