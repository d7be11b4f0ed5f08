"""The documentation: the site builds in strict mode (a broken link or a missing page fails), the
generated reference names every configuration key, and every code example runs.

Examples run page by page, in order, in a fresh directory that sees the repository's `tests`,
`examples` and `.venv` (so the commands read as a user types them): a block whose first line names a
file (`# gate.toml`, `/* kernels.c */`) is written to it; each `$ ` line of a console block is run by
the shell (one `opcert` call: by opcert.cli.main in a forked child, _opcert_in_fork) and must exit with the status its `# exit N` comment states (0 without one), and every line
quoted under it (up to the next `$ ` line) must be in what it printed: compared after taking out the
table rules and the padding, and with each duration (`4.3 s`, `28s`) read as any duration, so a quoted
line may be a whole row or a part of one, and a long line may be quoted broken at spaces; `...` stands
for lines left out, or inside a line for text left out (a temporary path). A python block is executed (once
where two pages hold the same code, before any file of either is written).
Commands that sweep all 2^32 float32 inputs are slow tests (run with -m slow); the attribute sweep of
gating.md is chosen to take seconds, and runs with the others.

A figure quoted in prose that no example prints is either derived from the code (`<!--fig:NAME-->N
<!--/fig-->`, tools/docs_pages.py FIGURES: the site is built with the value the code gives, and
`test_every_derived_figure_is_current` compares the written one), or labelled with the host and date it
was measured on (results.md, bench/README.md)."""

import ast
import io
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import tokenize
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = sorted((ROOT / "docs").glob("*.md")) + [ROOT / "README.md"]
BLOCK = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)
FILE_NAME = re.compile(r"^(?:#|/\*)\s*([\w.-]+\.(?:toml|c|py))\s*(?:\*/)?\s*$")


def _slow(command: str) -> bool:
    # all 2^32 float32 inputs (the attribute sweep of docs/gating.md is chosen to run in the suite)
    return "--dtype float32" in command and "--exhaustive" in command


def _examples(page: Path):
    """(kind, payload) in page order: ("file", (name, text)), ("command", (line, exit, quoted output
    lines)), ("python", code)."""
    for lang, body in BLOCK.findall(page.read_text()):
        first = body.split("\n", 1)[0]
        named = FILE_NAME.match(first)
        if named and lang in ("toml", "c", "python"):
            yield "file", (named.group(1), body)
        elif lang == "python":
            yield "python", body
        elif lang in ("", "console", "text", "shell"):
            command = None
            for line in body.splitlines() + ["$ "]:
                if line.startswith("$ "):
                    if command and command[0]:
                        yield "command", command
                    cmd = line[2:]
                    m = re.search(r"#\s*exit (\d+)\s*$", cmd)
                    command = (cmd.split("  #")[0].strip(), int(m.group(1)) if m else 0, [])
                elif command is not None and line.strip() not in ("", "..."):
                    command[2].append(line)


# what the comparison of quoted output ignores: the rules and borders of rich's tables, padding, and
# how long a run took
TABLE_RULES = re.compile(r"[\u2500-\u257f]")
DURATION = re.compile(r"\b\d+(?:\.\d+)?\s?(?:s|ms|min)\b")


def _normal(text: str) -> str:
    return " ".join(DURATION.sub("<duration>", TABLE_RULES.sub(" ", text)).split())


def _missing(quoted: list[str], printed: str) -> list[str]:
    """The quoted lines that are not in what the command printed (`...` inside a line: any text)."""
    out = _normal(printed)
    pattern = lambda line: ".*?".join(re.escape(part.strip()) for part in _normal(line).split("..."))  # noqa: E731
    return [line for line in quoted if not re.search(pattern(line), out)]


def _cases(slow: bool):
    out, ran = [], set()
    for page in PAGES:
        steps = list(_examples(page))
        commands = [s for s in steps if s[0] == "command"]
        if not any(k in ("python", "command") for k, _ in steps):
            continue
        if slow != any(_slow(c[1][0]) for c in commands):
            continue
        out.append(pytest.param(page, _once(steps, ran), id=page.name, marks=[pytest.mark.slow] if slow else []))
    return out


def _once(steps: list, ran: set) -> list:
    """The page's steps less each python block an earlier page of the same run executes (the same code, comments
    apart) where neither page has written a file before it: the same code in the same context, run once
    (README.md's measure() example is getting-started.md's, an exhaustive measurement and a torch one)."""
    out = []
    for kind, payload in steps:
        if kind == "file":
            ran = set()  # what follows may read the file: this page's blocks from here on run, and count for no other
        elif kind == "python":
            code = ast.dump(ast.parse(payload))
            if code in ran:
                continue
            ran.add(code)
        out.append((kind, payload))
    return out


_ASSIGNMENT = re.compile(r"[A-Z_][A-Z0-9_]*=\S*")


def _opcert_in_fork(cmd: str, work: Path, env: dict):
    """A command that is one `opcert` call (`opcert ...`, `.venv/bin/opcert ...`, with VAR=value before it and
    no other shell syntax), run as the console script runs it, opcert.cli.main(argv), in a child forked from
    this process: opcert and numba are loaded here already, which a new interpreter pays for at each of the
    pages' commands (about 1.4 s each; tests/test_packaging.py runs the installed console script itself).
    The child takes the command's directory, environment and PYTHONPATH, and its own stdout and stderr; its
    exit status is main's (3 where it raised). None: a command for the shell (`opcert prove` and `opcert gate`
    too: their counterexamples are z3's, which depend on the process's earlier queries)."""
    if not hasattr(os, "fork") or any(c in cmd for c in "|&;<>$`()*?'\"\\"):
        return None
    words = cmd.split()
    extra = {}
    while words and _ASSIGNMENT.fullmatch(words[0]):
        k, _, v = words.pop(0).partition("=")
        extra[k] = v
    if not words or os.path.basename(words[0]) != "opcert":
        return None
    if words[1:2] in (["prove"], ["gate"]):
        # which counterexample z3 gives depends on what its process asked it before (this test process has asked
        # it plenty): a fresh interpreter, as the reader's
        return None
    import tempfile

    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        pid = os.fork()
        if pid == 0:  # the child: never returns
            code = 3
            try:
                os.dup2(out.fileno(), 1)
                os.dup2(err.fileno(), 2)
                sys.stdout = open(1, "w", closefd=False)  # noqa: SIM115 - the child's own, flushed below
                sys.stderr = open(2, "w", closefd=False)  # noqa: SIM115
                os.chdir(work)
                os.environ.clear()
                os.environ.update(env)
                os.environ.update(extra)
                if "PYTHONPATH" in extra:
                    sys.path[:0] = [str(work / p) for p in extra["PYTHONPATH"].split(os.pathsep) if p]
                from opcert.cli import main

                code = main(words[1:])
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
            except BaseException:  # noqa: BLE001 - reported as the console script would: a traceback, exit 3
                import traceback

                traceback.print_exc()
            finally:
                try:
                    sys.stdout.flush()
                    sys.stderr.flush()
                finally:
                    os._exit(code or 0)
        deadline = time.monotonic() + 900  # as the shell's commands: a hung command fails, it does not hang CI
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                break
            if time.monotonic() > deadline:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                raise subprocess.TimeoutExpired(cmd, 900)
            time.sleep(0.02)
        out.seek(0)
        err.seek(0)
        return subprocess.CompletedProcess(
            cmd,
            os.waitstatus_to_exitcode(status),
            out.read().decode(errors="replace"),
            err.read().decode(errors="replace"),
        )


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
    env["COLUMNS"] = "250"  # the width the pages quote tables at (rich reads it)
    for kind, payload in steps:
        if kind == "file":
            name, text = payload
            (work / name).write_text(text)
        elif kind == "python":
            cwd = os.getcwd()
            os.chdir(work)
            try:
                exec(compile(payload, str(page.name), "exec"), {"pytest": pytest})  # noqa: S102 - our docs
            finally:
                os.chdir(cwd)
        else:
            cmd, want, quoted = payload
            if cmd.split()[0] in ("cc", "gcc") and shutil.which("cc") is None:
                pytest.skip(f"{page.name}: `{cmd}` needs a C compiler, and this machine has none")
            r = _opcert_in_fork(cmd, work, env)
            if r is None:
                r = subprocess.run(cmd, shell=True, cwd=work, env=env, capture_output=True, text=True, timeout=900)
            assert r.returncode == want, (
                f"{page.name}: `{cmd}` exited {r.returncode}, the page says {want}\n"
                f"{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
            )
            missing = _missing(quoted, r.stdout + "\n" + r.stderr)
            assert not missing, (
                f"{page.name}: `{cmd}` did not print what the page quotes:\n"
                + "\n".join(missing)
                + f"\n--- it printed:\n{r.stdout[-6000:]}\n{r.stderr[-3000:]}"
            )


@pytest.mark.parametrize("page, steps", _cases(slow=False))
def test_every_example_runs(page, steps, tmp_path):
    _run(page, steps, tmp_path)


@pytest.mark.parametrize("page, steps", _cases(slow=True))
def test_every_long_example_runs(page, steps, tmp_path):
    _run(page, steps, tmp_path)


def test_the_site_builds_strictly(tmp_path):
    pytest.importorskip("mkdocs", reason="the docs extra is not installed (make test installs it)")
    r = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-4000:]
    for page in ("configuration", "cli-reference", "catalog", "performance"):
        assert (tmp_path / "site" / page / "index.html").exists(), f"generated page {page} missing"


def _docs_pages():
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        import docs_pages
    finally:
        sys.path.pop(0)
    return docs_pages


def test_the_configuration_reference_names_every_key():
    from opcert.gating.config import KEYS

    text = _docs_pages().configuration()
    for key in KEYS:
        assert f"| `{key}` |" in text


def test_every_derived_figure_is_current():
    """A figure the code determines (checks of the built-in gate, chunks of a float32 sweep, operators in the
    catalog) is written as <!--fig:NAME-->VALUE<!--/fig-->, and VALUE is what the code gives now."""
    docs_pages = _docs_pages()
    values = docs_pages.figures()
    stale, used = [], set()
    for page in PAGES:
        for m in docs_pages.FIGURE.finditer(page.read_text()):
            used.add(m.group(1))
            if m.group(1) not in values:
                stale.append(f"{page.name}: unknown figure {m.group(1)!r}")
            elif m.group(2) != values[m.group(1)]:
                stale.append(f"{page.name}: {m.group(1)} is written {m.group(2)}, the code gives {values[m.group(1)]}")
    assert not stale, "\n".join(stale)
    assert used == set(values), f"figures no page writes: {set(values) - used}"


def test_the_readme_fits_on_a_screen():
    assert len((ROOT / "README.md").read_text().splitlines()) < 200


# A measured time: a number and a unit of time, or "N times faster/slower". Measurements live in
# bench/README.md ("Figures behind choices in the code"), where they can be dated and measured again; a
# comment or docstring says why, not how much.
TIME_FIGURE = re.compile(
    r"\b\d[\d,.]*(?:-\d[\d,.]*)?\s?(s|ms|us|µs|ns|min|minutes|seconds|hours)\b(?![-\w])"
    r"|\b\d[\d.]*\s?(x|times) (faster|slower)",
    re.I,
)
# The hits that are no measurement: (file, text of the line that holds it) -> why.
NOT_A_MEASUREMENT = {
    ("opcert/spec/ops/hard_sigmoid.py", "max(0, min(beta, 1))"): "min is the function: '0, min' is not 0 minutes",
    ("opcert/numerics/ball.py", "[-s/2, s/2]"): "s is a variable (the smallest subnormal): '2, s' is not 2 seconds",
    ("opcert/numerics/one_sided.py", "max(0, min(1, x/6 + 1/2))"): "min is the function: '0, min' is not 0 minutes",
}


def _time_figures(path: Path):
    """(line, text) of each comment and docstring line of path that holds a time figure."""
    src = path.read_text()
    for tok in tokenize.generate_tokens(io.StringIO(src).readline):
        if tok.type == tokenize.COMMENT and TIME_FIGURE.search(tok.string):
            yield tok.start[0], tok.string.strip()
    for node in ast.walk(ast.parse(src)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            doc = ast.get_docstring(node, clean=False)
            lines = (doc or "").splitlines() + [""]
            for i, line in enumerate(lines[:-1]):
                # each line with the next one's start: a figure may be broken across two lines
                joined = f"{line.rstrip()} {lines[i + 1].strip()}"
                if any(m.start() < len(line.rstrip()) for m in TIME_FIGURE.finditer(joined)):
                    yield node.body[0].lineno + i, line.strip()


def test_no_measured_time_in_comments_or_docstrings():
    found, used = [], set()
    for path in sorted((ROOT / "opcert").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        for line, text in _time_figures(path):
            allowed = [k for k in NOT_A_MEASUREMENT if k[0] == rel and k[1] in text]
            used.update(allowed)
            if not allowed:
                found.append(f"{rel}:{line}: {text}")
    assert not found, (
        "measured times belong in bench/README.md ('Figures behind choices in the code'), not in "
        "comments or docstrings (or, where a hit is no measurement, in NOT_A_MEASUREMENT with why):\n"
        + "\n".join(found)
    )
    assert used == set(NOT_A_MEASUREMENT), f"allowed but no longer found: {set(NOT_A_MEASUREMENT) - used}"
