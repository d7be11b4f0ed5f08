"""The documentation: the site builds in strict mode (a broken link or a missing page fails), the
generated reference names every configuration key, and every code example runs.

Examples run page by page, in order, in a fresh directory that sees the repository's `tests`,
`examples` and `.venv` (so the commands read as a user types them): a block whose first line names a
file (`# gate.toml`, `/* kernels.c */`) is written to it; each `$ ` line of a console block is run by
the shell and must exit with the status its `# exit N` comment states (0 without one); a python block
is executed. Commands that sweep all 2^32 float32 inputs or sweep attributes are slow tests
(run with -m slow)."""
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = sorted((ROOT / "docs").glob("*.md")) + [ROOT / "README.md"]
BLOCK = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)
FILE_NAME = re.compile(r"^(?:#|/\*)\s*([\w.-]+\.(?:toml|c|py))\s*(?:\*/)?\s*$")


def _slow(command: str) -> bool:
    # all 2^32 float32 inputs, or an attribute sweep (33 exhaustive checks: 400 s on 2 cores here)
    return ("--dtype float32" in command and "--exhaustive" in command) or "--attr-sweep" in command


def _examples(page: Path):
    """(kind, payload) in page order: ("file", (name, text)), ("command", (line, exit)), ("python", code)."""
    for lang, body in BLOCK.findall(page.read_text()):
        first = body.split("\n", 1)[0]
        named = FILE_NAME.match(first)
        if named and lang in ("toml", "c", "python"):
            yield "file", (named.group(1), body)
        elif lang == "python":
            yield "python", body
        elif lang in ("", "console", "text", "shell"):
            for line in body.splitlines():
                if line.startswith("$ "):
                    cmd = line[2:]
                    m = re.search(r"#\s*exit (\d+)\s*$", cmd)
                    yield "command", (cmd.split("  #")[0].strip(), int(m.group(1)) if m else 0)


def _cases(slow: bool):
    out = []
    for page in PAGES:
        steps = list(_examples(page))
        commands = [s for s in steps if s[0] == "command"]
        if not any(k in ("python", "command") for k, _ in steps):
            continue
        if slow != any(_slow(c[1][0]) for c in commands):
            continue
        out.append(pytest.param(page, steps, id=page.name,
                                marks=[pytest.mark.slow] if slow else []))
    return out


def _workdir(tmp_path: Path) -> Path:
    for name in ("tests", "examples", ".venv"):
        if (ROOT / name).exists():
            (tmp_path / name).symlink_to(ROOT / name)
    return tmp_path


def _run(page, steps, tmp_path):
    work = _workdir(tmp_path)
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env.pop("GITHUB_ACTIONS", None)
    env.pop("GITHUB_STEP_SUMMARY", None)
    for kind, payload in steps:
        if kind == "file":
            name, text = payload
            (work / name).write_text(text)
        elif kind == "python":
            cwd = os.getcwd()
            os.chdir(work)
            try:
                exec(compile(payload, str(page.name), "exec"), {"pytest": pytest})   # noqa: S102 - our docs
            finally:
                os.chdir(cwd)
        else:
            cmd, want = payload
            if cmd.split()[0] in ("cc", "gcc") and shutil.which("cc") is None:
                pytest.skip(f"{page.name}: `{cmd}` needs a C compiler, and this machine has none")
            r = subprocess.run(cmd, shell=True, cwd=work, env=env, capture_output=True, text=True, timeout=900)
            assert r.returncode == want, (f"{page.name}: `{cmd}` exited {r.returncode}, the page says {want}\n"
                                          f"{r.stdout[-3000:]}\n{r.stderr[-3000:]}")


@pytest.mark.parametrize("page, steps", _cases(slow=False))
def test_every_example_runs(page, steps, tmp_path):
    _run(page, steps, tmp_path)


@pytest.mark.parametrize("page, steps", _cases(slow=True))
def test_every_long_example_runs(page, steps, tmp_path):
    _run(page, steps, tmp_path)


def test_the_site_builds_strictly(tmp_path):
    pytest.importorskip("mkdocs", reason="the docs extra is not installed (make test installs it)")
    r = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                       cwd=ROOT, capture_output=True, text=True, timeout=600,
                       env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-4000:]
    for page in ("configuration", "cli-reference", "catalog", "performance"):
        assert (tmp_path / "site" / page / "index.html").exists(), f"generated page {page} missing"


def test_the_configuration_reference_names_every_key():
    from opcert.gating.config import KEYS
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        import docs_pages
    finally:
        sys.path.pop(0)
    text = docs_pages.configuration()
    for key in KEYS:
        assert f"| `{key}` |" in text


def test_the_readme_fits_on_a_screen():
    assert len((ROOT / "README.md").read_text().splitlines()) < 200
