"""The HTML report as a reader sees it: rendered by headless Chromium, screenshot taken,
the page's parts present and visible, and no console error."""

import os
import shutil
import subprocess
import time

import numpy as np
import pytest

# .ci/run installs Chromium while the suite runs (beside pip's install, not before it): it names a file that
# exists until that install has ended, which these tests wait for (at most 10 minutes) before looking
PENDING = os.environ.get("OPCERT_CHROMIUM_PENDING")
CHROMIUM = None


@pytest.fixture(scope="module", autouse=True)
def chromium():
    global CHROMIUM
    deadline = time.monotonic() + 600
    while PENDING and os.path.exists(PENDING) and time.monotonic() < deadline:
        time.sleep(1)
    CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    if CHROMIUM is None:
        pytest.skip("no Chromium on this machine (Debian: apt-get install chromium)")
    return CHROMIUM


def _chromium(*args, timeout=120):
    return subprocess.run(
        [
            CHROMIUM,
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--enable-logging=stderr",
            "--v=0",
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    from opcert.cli import main

    d = tmp_path_factory.mktemp("browser")
    cfg = d / "g.toml"
    cfg.write_text(
        '[[check]]\nop = "Tanh"\ndtypes = ["float16"]\nmode = "exhaustive"\nproofs = "all"\n'
        '[[check]]\nop = "HardSigmoid"\ndtypes = ["float16"]\nmode = "exhaustive"\nmax_ulp = 0.5\n'
        'target = "bad_targets:negated"\nproofs = ["range"]\n'
    )
    code = main(["gate", "--config", str(cfg), "--report", str(d / "out"), "--json", str(d / "g.json")])
    assert code == 1
    return d


def test_the_report_renders_with_its_parts_and_no_console_error(report):
    page = (report / "out" / "report.html").as_uri()
    dom = _chromium("--dump-dom", page)
    assert dom.returncode == 0, dom.stderr[-2000:]
    html = dom.stdout
    for part in ('id="provenance"', 'id="summary"', 'class="proofs"', 'class="plot histogram"'):
        assert part in html, part
    assert "Result: FAIL" in html and "bad_targets:negated" in html
    # the console: errors a page can raise (a broken script, an image that does not load)
    console = [line for line in dom.stderr.splitlines() if "CONSOLE" in line or "Failed to load resource" in line]
    assert not console, console


def test_the_screenshot_shows_a_page_not_a_blank(report):
    shot = report / "shot.png"
    r = _chromium(f"--screenshot={shot}", "--window-size=1300,2200", (report / "out" / "report.html").as_uri())
    assert r.returncode == 0 and shot.exists(), r.stderr[-2000:]
    from PIL import Image  # the test extra's PNG reader

    img = np.asarray(Image.open(shot).convert("RGB"))
    assert img.shape[0] == 2200 and img.shape[1] == 1300
    rgb = img.reshape(-1, 3)
    colours = {tuple(c) for c in rgb[::97]}
    # text, tables, the red FAIL verdict and the plots' blue bars: far more than a blank page's one colour
    assert len(colours) > 50
    red = ((rgb[:, 0] > 150) & (rgb[:, 1] < 60) & (rgb[:, 2] < 80)).sum()
    blue = ((rgb[:, 2] > 120) & (rgb[:, 0] < 100)).sum()
    assert red > 100 and blue > 1000, (red, blue)


def test_the_page_loads_in_under_two_seconds(report, tmp_path):
    """The report's own load time: headless Chromium's --dump-dom of the report against the same of a blank
    page (the browser's start-up), best of three each, interleaved."""
    import time

    blank = tmp_path / "blank.html"
    blank.write_text("<!doctype html><title>blank</title><p>x</p>")
    page = (report / "out" / "report.html").as_uri()
    best = {"report": 1e9, "blank": 1e9}
    for _ in range(3):
        for name, uri in (("report", page), ("blank", blank.as_uri())):
            t0 = time.perf_counter()
            r = _chromium("--dump-dom", uri)
            best[name] = min(best[name], time.perf_counter() - t0)
            assert r.returncode == 0, r.stderr[-2000:]
    assert best["report"] - best["blank"] < 2.0, best
