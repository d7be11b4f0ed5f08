"""The recipes of docs/architecture.md ("Where to add ..."), followed in a scratch copy of the package:
each recipe's example file is taken from the page itself, so the page cannot drift from what works."""

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "architecture.md"


def example(path: str) -> str:
    """The code block the page gives for `path` (the first block after the text naming it)."""
    text = PAGE.read_text()
    m = re.search(rf"`{re.escape(path)}`(?:(?!```).)*?```python\n(.*?)```", text, re.S)
    assert m, f"docs/architecture.md gives no code block for {path}"
    return m.group(1)


def scratch_copy(tmp_path, files: dict[str, str]) -> Path:
    """opcert copied to tmp_path with `files` (path -> text) added; asserts that nothing else differs."""
    shutil.copytree(ROOT / "opcert", tmp_path / "opcert", ignore=shutil.ignore_patterns("__pycache__"))
    for rel, text in files.items():
        assert not (tmp_path / rel).exists(), f"{rel} is not a new file"
        (tmp_path / rel).write_text(text)
    return tmp_path


def run_in(copy: Path, script: str) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", script],
        cwd=copy,
        capture_output=True,
        text=True,
        timeout=600,
        env={**__import__("os").environ, "PYTHONPATH": str(copy)},
    )
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


OPERATOR_CHECKS = """
import json, numpy as np, opcert
x = np.arange(65536, dtype=np.uint16).view(np.float16)
with np.errstate(invalid="ignore"):
    # independent of opcert: NumPy's one rounding of the exact max(x, 0) / 2 (exact in binary32)
    want = (np.maximum(x.astype(np.float32), np.float32(0)) / np.float32(2)).astype(np.float16)
same = lambda a: bool(np.all((a.view(np.uint16) == want.view(np.uint16)) | (np.isnan(a) & np.isnan(want))))
r = opcert.measure("HalfRelu", "opcert", "float16", "exhaustive")
p = opcert.prove("HalfRelu", "float32")
print(json.dumps({"where": opcert.get_operator("HalfRelu").__module__,
                  "reference": same(opcert.reference("HalfRelu", x)), "run": same(opcert.run("HalfRelu", x)),
                  "status": r.status, "checked": r.inputs_checked, "correctly_rounded": r.correctly_rounded,
                  "max_ulp": r.max_ulp, "proofs": {q.name: q.status for q in p.properties}}))
"""


def test_an_operator_is_one_new_file(tmp_path):
    copy = scratch_copy(tmp_path, {"opcert/spec/ops/half_relu.py": example("opcert/spec/ops/half_relu.py")})
    got = run_in(copy, OPERATOR_CHECKS)
    assert got["reference"] and got["run"]
    assert got["status"] == "ok" and got["checked"] == 65536
    # every output is the one rounding of the exact value (NaN for NaN); the odd subnormals halve to a tie
    assert got["correctly_rounded"] == 65536 and got["max_ulp"] == 0.5
    assert got["proofs"]["monotonic"] == "proved" and got["proofs"]["range"] == "proved"
    assert got["proofs"]["nan"] == "proved" and got["proofs"]["limits"] == "proved"


def test_every_property_kind_has_a_decider_in_each_place_the_recipe_names():
    """The property recipe's list of files: each kind of KINDS is decided in each of them (or is exempt
    there as the recipe says), so a new kind that misses one fails here."""
    from opcert.spec.model import KERNEL_ONLY, KINDS, SPEC_ONLY

    page = PAGE.read_text()
    places = {
        "opcert/verify/proofs/spec_level.py": KERNEL_ONLY,
        "opcert/verify/proofs/impl_level.py": SPEC_ONLY | KERNEL_ONLY,
        "opcert/verify/properties/checks.py": SPEC_ONLY | KERNEL_ONLY,
    }
    missing = []
    for path, exempt in places.items():
        assert f"`{path}`" in page, f"the recipe no longer names {path}"
        source = (ROOT / path).read_text()
        missing += [f"{path}: {kind}" for kind in KINDS if kind not in exempt and f'"{kind}"' not in source]
    assert missing == []


PRIMITIVE_CHECKS = """
import json
from fractions import Fraction
import numpy as np
from opcert.expr import PRIMITIVES, root, sqrt, var
from opcert.expr.numpy_eval import eval_numpy
from opcert.numerics import ball, exact
x = np.array([0.0, 2.0 ** -1074, 0.25, 2.0, 3.0, 1e300, np.inf, np.nan, -1.0])
same = lambda a, b: bool(np.array_equal(np.asarray(a), np.asarray(b), equal_nan=True))
r, s = root(var("x")), sqrt(var("x"))
print(json.dumps({
    "registered": "root" in PRIMITIVES,
    "numpy": same(eval_numpy(r, x, {}), eval_numpy(s, x, {})),
    "ball": all(same(a, b) for a, b in zip(ball.evaluate(r, x[:6], {}), ball.evaluate(s, x[:6], {}))),
    "exact": [str(exact.eval_rational(r, Fraction(v), {})) for v in (4, Fraction(9, 16))],
}))
"""


def test_a_primitive_is_one_record_of_the_table(tmp_path):
    """The primitive recipe: one record in expr.primitives.REGISTRY (here sqrt's, under another name) gives
    the expression language its constructor and every interpreter its rules; the new primitive computes
    what sqrt computes, in each."""
    source = (ROOT / "opcert" / "expr" / "primitives.py").read_text()
    start = source.index('        Primitive(\n            name="sqrt",')
    end = source.index("\n        ),\n", start) + len("\n        ),\n")
    record = source[start:end].replace('name="sqrt"', 'name="root"')
    copy = scratch_copy(tmp_path, {})
    (copy / "opcert" / "expr" / "primitives.py").write_text(source[:end] + record + source[end:])
    got = run_in(copy, PRIMITIVE_CHECKS)
    assert got == {"registered": True, "numpy": True, "ball": True, "exact": ["2", "3/4"]}
