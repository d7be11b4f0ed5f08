"""Provenance names the code that produced a result: opcert's commit when it runs from its checkout."""

import os
import subprocess

import opcert
from opcert.provenance import opcert_commit, provenance


def test_the_commit_is_opcerts_own():
    root = os.path.dirname(os.path.dirname(os.path.abspath(opcert.__file__)))
    out = subprocess.run(["git", "-C", root, "rev-parse", "--short=12", "HEAD"], capture_output=True, text=True)
    commit = opcert_commit()
    if out.returncode != 0:  # an installed copy, not a checkout
        assert commit is None
    else:
        assert commit.split("+")[0] == out.stdout.strip()
    assert provenance()["opcert_commit"] == commit


def test_the_simd_paths_are_numpys_own_account_and_follow_its_switch():
    """The SIMD row: NumPy's baseline and the dispatch targets this CPU has, as
    numpy.show_runtime() prints them; turning one off with NPY_DISABLE_CPU_FEATURES
    (which changes results: onnx.reference's float32 Elu, README) shows in it."""
    import ast
    import contextlib
    import io
    import sys

    import numpy as np

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        np.show_runtime()
    text = buf.getvalue()
    simd = ast.literal_eval(text[text.index("{'baseline'") : text.index("}", text.index("{'baseline'")) + 1])
    # the row ends with "(NPY_DISABLE_CPU_FEATURES=...)" when the switch is set (a run without AVX-512)
    assert provenance()["simd"].split(" (")[0].split() == simd["baseline"] + simd["found"]
    if simd["found"]:
        off = simd["found"][-1]
        code = "from opcert.provenance import simd; print(simd())"
        out = subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            env={**os.environ, "NPY_DISABLE_CPU_FEATURES": off},
            check=True,
        ).stdout.strip()
        assert off not in out.split(" (")[0].split() and out.endswith(f"(NPY_DISABLE_CPU_FEATURES={off})")
