"""Progress of long runs: a bar on a terminal, a line every few seconds in a CI log (opcert.progress)."""

import io
import os
import subprocess
import sys

from opcert.progress import Progress


class Clock:
    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t


def test_a_log_gets_a_line_every_few_seconds_with_rate_and_time_left():
    out, clock = io.StringIO(), Clock()
    with Progress("gate x.toml", 84, "checks", stream=out, tty=False, seconds=10, clock=clock) as p:
        for _ in range(84):
            clock.t += 0.5  # a check every half second: 42 s in all
            p.advance()
    lines = out.getvalue().splitlines()
    # a line at 10, 20, 30 and 40 s, then the total
    assert len(lines) == 5, lines
    assert lines[0] == "opcert: gate x.toml: 20/84 checks (24%) in 10s, 2.00 checks/s, about 32s left"
    assert lines[3].startswith("opcert: gate x.toml: 80/84 checks (95%) in 40s")
    assert lines[-1] == "opcert: gate x.toml: 84 checks in 42s"


def test_the_time_left_follows_the_pace_after_a_slow_start():
    out, clock = io.StringIO(), Clock()
    with Progress("float32 sweep", 100, "chunks", stream=out, tty=False, seconds=10, clock=clock) as p:
        clock.t = 60  # a minute of start-up before the first chunk ends
        p.advance()
        for _ in range(19):  # then a chunk a second
            clock.t += 1
            p.advance()
    # at 60 s, one chunk: no pace yet, so no rate and no time left (not 99 minutes from the start-up's pace)
    assert out.getvalue().splitlines()[0] == "opcert: float32 sweep: 1/100 chunks (1%) in 1m 00s", out.getvalue()
    # at 70 s: 11 chunks, 10 of them in the 10 s since the first: 1 a second, 89 s left (not 566 s)
    assert (
        out.getvalue().splitlines()[1]
        == "opcert: float32 sweep: 11/100 chunks (11%) in 1m 10s, 1.00 chunks/s, about 1m 29s left"
    ), out.getvalue()


def test_a_short_run_prints_nothing_and_zero_seconds_turns_lines_off():
    for seconds, steps in ((10, 5), (0, 1000)):
        out, clock = io.StringIO(), Clock()
        with Progress("x", steps, "sets", stream=out, tty=False, seconds=seconds, clock=clock) as p:
            for _ in range(steps):
                clock.t += 1
                p.advance()
        assert out.getvalue() == "", (seconds, out.getvalue())


def test_work_resumed_from_a_checkpoint_is_not_in_the_rate():
    out, clock = io.StringIO(), Clock()
    with Progress("float32 sweep", 2.0**32, "inputs", stream=out, tty=False, seconds=10, clock=clock) as p:
        p.resume_at(2.0**31)  # half the chunks were done before this run
        p.update(2.0**31)  # (the sweep reports them first)
        clock.t = 5
        p.update(2.0**31 + 5e8)
        clock.t = 15
        p.update(2.0**31 + 1.5e9)  # 1e9 inputs in the last 10 s: 100 M/s, not 3,147 M / 15 s
    first = out.getvalue().splitlines()[0]
    assert first == "opcert: float32 sweep: 3,647.5 M/4,295.0 M inputs (85%) in 15s, 100.0 M inputs/s, about 6s left", (
        first
    )  # (2^32 - 2^31 - 1.5e9) / 1e8 = 6.5 s


def test_a_terminal_gets_a_bar_and_no_log_lines():
    out, clock = io.StringIO(), Clock()
    with Progress("prove", 10, "pairs", stream=out, tty=True, seconds=0.001, clock=clock) as p:
        for _ in range(10):
            clock.t += 5
            p.advance()
    assert "opcert: prove" not in out.getvalue()


def test_the_gate_command_logs_progress_in_a_ci_log(tmp_path):
    # opcert gate with its standard error a pipe (as in CI): with lines every 0.01 s, each check is logged
    cfg = tmp_path / "g.toml"
    cfg.write_text('[[check]]\nop = "Relu"\ndtypes = ["float16", "bfloat16"]\nsamples = 100\n')
    env = dict(os.environ, OPCERT_PROGRESS_SECONDS="0.01")
    r = subprocess.run(
        [sys.executable, "-m", "opcert", "gate", "--config", str(cfg)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    lines = [ln for ln in r.stderr.splitlines() if ln.startswith(f"opcert: gate {cfg}")]
    assert lines and lines[-1].startswith(f"opcert: gate {cfg}: 2 checks in "), r.stderr
    assert any(" checks/s" in ln for ln in lines), lines


def test_a_log_gets_lines_while_one_long_unit_runs():
    import time

    out = io.StringIO()
    with Progress("gate y.toml", 3, "checks", stream=out, tty=False, seconds=0.05) as p:
        time.sleep(0.3)  # the first check takes 0.3 s: lines come meanwhile
        p.advance()
    lines = out.getvalue().splitlines()
    assert sum(ln.startswith("opcert: gate y.toml: 0/3 checks (0%) in ") for ln in lines) >= 2, lines
    assert not any("checks/s" in ln for ln in lines[:-1]), lines  # no rate before the first check ends
    assert lines[-1].startswith("opcert: gate y.toml: 1 checks in "), lines
