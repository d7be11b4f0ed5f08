"""Provenance names the code that produced a result: opcert's commit when it runs from its checkout."""
import os
import subprocess

import opcert
from opcert.provenance import opcert_commit, provenance


def test_the_commit_is_opcerts_own():
    root = os.path.dirname(os.path.dirname(os.path.abspath(opcert.__file__)))
    out = subprocess.run(["git", "-C", root, "rev-parse", "--short=12", "HEAD"], capture_output=True, text=True)
    commit = opcert_commit()
    if out.returncode != 0:          # an installed copy, not a checkout
        assert commit is None
    else:
        assert commit.split("+")[0] == out.stdout.strip()
    assert provenance()["opcert_commit"] == commit
