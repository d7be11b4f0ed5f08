"""ruff keeps the code lint- and format-clean (pyproject.toml's [tool.ruff]): make test runs both checks."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RUFF = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
PATHS = ["opcert", "tests", "bench", "tools", "examples"]


@pytest.mark.parametrize("check", [["check"], ["format", "--check"]], ids=["lint", "format"])
def test_ruff_is_clean(check):
    assert RUFF is not None, "ruff is not installed: it is in the test extra (pip install '.[test]'; make test does)"
    out = subprocess.run([RUFF, *check, *PATHS], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, (out.stdout + out.stderr)[-4000:]
