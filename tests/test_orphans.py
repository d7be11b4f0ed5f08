"""A killed opcert leaves no worker behind (CI time-outs and the OOM killer send SIGKILL)."""

import os
import signal
import subprocess
import sys
import time

import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc for the worker pids")


def _children(pid):
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as fh:
            return [int(p) for p in fh.read().split()]
    except OSError:
        return []


def _alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def test_sweep_workers_exit_when_opcert_is_killed(tmp_path):
    cmd = [
        sys.executable,
        "-m",
        "opcert",
        "accuracy",
        "Tanh",
        "--dtype",
        "float32",
        "--exhaustive",
        "--target",
        "numpy:tanh",
        "--workers",
        "2",
        "--checkpoint",
        str(tmp_path / "ck"),
        "--layout-samples",
        "1024",
    ]  # the whole format's layout check (10^6 inputs) is not this test's
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.time() + 60
        workers = []
        while time.time() < deadline and len(workers) < 2:
            time.sleep(0.2)
            workers = _children(proc.pid)
        assert workers, "the sweep started no worker within 60 s"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
        deadline = time.time() + 15
        while time.time() < deadline and any(_alive(w) for w in workers):
            time.sleep(0.2)
        left = [w for w in workers if _alive(w)]
        assert not left, f"workers {left} outlived their parent"
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        for w in _children(proc.pid):
            try:
                os.kill(w, signal.SIGKILL)
            except OSError:
                pass
