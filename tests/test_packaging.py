"""opcert as a package: the wheel, installed into a new virtual environment outside the repository, gives a
working CLI, pytest plugin and API; a target whose library is missing names the extra that installs it."""

import os
import shutil
import site
import subprocess
import sys
import sysconfig
import tomllib
from pathlib import Path

import pytest

from opcert.errors import UsageError

ROOT = Path(__file__).resolve().parents[1]

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


def _build_wheel(tmp: Path) -> Path:
    """The wheel, built from a copy of the sources (the build writes build/ and egg-info beside them)."""
    src = tmp / "src"
    shutil.copytree(ROOT / "opcert", src / "opcert", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for f in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / f, src / f)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            str(tmp / "dist"),
            str(src),
        ],
        check=True,
        capture_output=True,
    )
    (wheel,) = (tmp / "dist").glob("opcert-*.whl")
    return wheel


def _venv(tmp: Path, wheel: Path, deps: bool) -> Path:
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    py = venv / "bin" / "python"
    cmd = [sys.executable, "-m", "pip", "--python", str(py), "install", "--quiet", str(wheel)]
    # with its dependencies: and pytest, which the plugin's users have
    subprocess.run(cmd + (["pytest"] if deps else ["--no-deps"]), check=True, capture_output=True)
    if not deps:
        # The dependencies (not opcert) from this environment: a path after the new venv's own site-packages;
        # .pth files there are not read, so this environment's editable opcert is not importable
        purelib = subprocess.run(
            [str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        Path(purelib, "zz_opcert_test_deps.pth").write_text(
            "\n".join([sysconfig.get_paths()["purelib"], *site.getsitepackages()]) + "\n"
        )
    return venv


def _check_installed(tmp: Path, venv: Path) -> None:
    work = tmp / "work"  # outside the repository: nothing of the checkout is importable
    work.mkdir()
    (work / "userkernel.py").write_text(KERNEL)
    (work / "gate.toml").write_text(GATE)
    (work / "test_user.py").write_text(PLUGIN_TEST)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env.update(PYTHONPATH=str(work), OPCERT_PROGRESS_SECONDS="0")

    def run(*cmd):
        return subprocess.run(cmd, cwd=work, env=env, capture_output=True, text=True, timeout=600)

    bin_ = venv / "bin"
    r = run(
        str(bin_ / "python"),
        "-c",
        "import opcert; print(opcert.__file__); "
        "import numpy as np; print(opcert.reference('Tanh', np.array([0.5], np.float32)))",
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[0].startswith(str(venv)), r.stdout  # the wheel's opcert, not the checkout's
    assert r.stdout.splitlines()[1].strip() == "[0.46211717]", r.stdout  # tanh(0.5) = 0.46211715726...
    r = run(str(bin_ / "opcert"), "ops", "--json")
    assert r.returncode == 0 and '"Softplus"' in r.stdout, r.stderr
    r = run(str(bin_ / "opcert"), "gate", "--config", "gate.toml", "--json", "gate.json", "--report", "report")
    assert r.returncode == 0, r.stdout + r.stderr
    assert (work / "report" / "report.html").stat().st_size > 0
    r = run(str(bin_ / "python"), "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_user.py")
    assert r.returncode == 0 and "1 passed" in r.stdout, r.stdout + r.stderr


def test_the_wheel_works_in_a_new_venv_outside_the_repository(tmp_path):
    """Fast (every run): the wheel without dependencies, which come from this environment."""
    _check_installed(tmp_path, _venv(tmp_path, _build_wheel(tmp_path), deps=False))


@pytest.mark.slow
def test_the_wheel_installs_with_its_dependencies_into_a_new_venv(tmp_path):
    """The whole install, dependencies resolved by pip from the package index."""
    _check_installed(tmp_path, _venv(tmp_path, _build_wheel(tmp_path), deps=True))


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
