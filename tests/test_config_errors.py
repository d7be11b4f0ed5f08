"""A gate configuration's errors, all in one reading, each at its line; the JSON Schema editors read; CI
annotations at the check's line; targets found from the configuration file's directory (issue 55)."""

import json
import os
import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from opcert.errors import ConfigErrors
from opcert.gating import load_config, paths, toml_lines
from opcert.gating.config import KEYS, parse
from opcert.gating.schema import schema, text
from opcert.report.ci import annotations

ROOT = Path(__file__).resolve().parent.parent

FIVE = """\
# five mistakes, one of each kind
[[check]]
op = "Sigmod"
dtypes = ["float16"]

[[check]]
op = "Tanh"
dtype = ["float16"]
proofs = ["range", "monotone"]

[[check]]
op = "Relu"
dtypes = [
  "float16",
  "float33",
]

[[check]]
op = "Celu"
dtypes = ["float16"]
[check.attrs]
alpha = 0.0
"""


def _line(text: str, start: str, after: int = 0) -> int:
    """The 1-based line of the first line starting with `start` (stripped) after line `after`."""
    for n, line in enumerate(text.splitlines(), 1):
        if n > after and line.strip().startswith(start):
            return n
    raise AssertionError(start)


def test_five_mistakes_are_reported_in_one_run_each_at_its_line(cli, tmp_path):
    cfg = tmp_path / "five.toml"
    cfg.write_text(FIVE)
    want = [
        (_line(FIVE, 'op = "Sigmod"'), "check[0].op: unknown operator 'Sigmod' (did you mean 'Sigmoid'?)"),
        (_line(FIVE, "dtype = "), "check[1].dtype: unknown key (did you mean 'dtypes'?); allowed:"),
        (_line(FIVE, "proofs = "), "check[1].proofs: Tanh declares no property 'monotone' (did you mean 'monotonic'?)"),
        (_line(FIVE, '"float33"'), "check[2].dtypes: unknown dtype 'float33' (did you mean 'float32'?)"),
        (_line(FIVE, "alpha = 0.0"), "check[3].attrs: attribute alpha=0.0 of Celu is outside its domain"),
    ]
    assert [n for n, _ in want] == [3, 8, 9, 15, 22]  # counted by hand, too
    code, out, err = cli("gate", "--config", cfg)
    assert code == 2 and "Traceback" not in err
    for line, message in want:
        assert err.count(f"{cfg}:{line}: {message}") == 1, err
    assert "5 configuration errors" in err
    # the same from the API, in the order of the lines
    with pytest.raises(ConfigErrors) as info:
        load_config(cfg)
    got = info.value.problems
    assert [str(p) for p in got] == [f"{cfg}:{line}: {p.key}: {p.message}" for p, (line, _) in zip(got, want)]
    assert [p.line for p in got] == [n for n, _ in want]
    assert all(str(p).startswith(f"{cfg}:{p.line}: ") for p in got)
    doc = info.value.to_dict()
    assert doc["schema"] == "opcert.config-errors/1" and doc["ok"] is False and doc["config"] == str(cfg)
    assert [e["line"] for e in doc["errors"]] == [n for n, _ in want]
    assert json.loads(json.dumps(doc)) == doc


def test_pyproject_errors_are_at_their_lines_in_pyproject(cli, tmp_path, monkeypatch):
    text = '[project]\nname = "x"\n\n[tool.opcert]\n\n[[tool.opcert.check]]\nop = "Tanh"\nmode = "fast"\n'
    (tmp_path / "pyproject.toml").write_text(text)
    monkeypatch.chdir(tmp_path)
    code, _, err = cli("gate")
    assert code == 2 and f"pyproject.toml:{_line(text, 'mode =')}: check[0].mode: 'fast' is not allowed" in err


def test_the_line_scan_reads_what_tomllib_reads():
    text = (
        'pythonpath = ["."]  # [[check]]\n'  # 1
        'name = """\n'  # 2
        "[[check]]\n"  # 3: inside a string
        'op = "x"\n'  # 4: inside a string
        '"""\n'  # 5
        "[[check]]\n"  # 6
        'op = ["Tanh", # a comment ]\n'  # 7
        '  "Relu"]\n'  # 8
        "[check.attrs]\n"  # 9
        "'alpha' = 1.0\n"  # 10
        "[[check]]\n"  # 11
        "attrs = { alpha = 2, beta = 3 }\n"  # 12
        "x.y = 1979-05-27 07:32:00\n"  # 13
    )
    data = tomllib.loads(text)
    assert len(data["check"]) == 2
    lines = toml_lines.key_lines(text)
    assert lines[("pythonpath",)] == 1 and lines[("name",)] == 2
    assert lines[("check", 0)] == 6 and lines[("check", 0, "op", 1)] == 8 and lines[("check", 0, "attrs")] == 9
    assert lines[("check", 0, "attrs", "alpha")] == 10
    assert (
        lines[("check", 1)] == 11 and lines[("check", 1, "attrs", "beta")] == 12 and lines[("check", 1, "x", "y")] == 13
    )
    assert ("check", 2) not in lines
    # where a path has no line, the nearest enclosing one that has
    assert toml_lines.find(lines, ("check", 1, "proofs", 3)) == 11
    assert toml_lines.find(lines, ("nothing",)) is None
    # an array of inline tables: each element at its line
    inline = 'check = [\n  { op = "Tanh" },\n  { op = "Relu", dtypes = ["float99"] },\n]\n'
    lines = toml_lines.key_lines(inline)
    assert lines[("check", 1)] == 3 and lines[("check", 1, "dtypes", 0)] == 3


def test_a_table_without_a_line_is_named(tmp_path):
    with pytest.raises(ConfigErrors) as info:
        parse({"check": [{"op": "Tanh"}, {"op": "Tanh", "seed": -1}]}, "api")
    assert str(info.value) == "api: check[1].seed: must be an integer from 0 to 18,446,744,073,709,551,615 (got -1)"


# ---- the JSON Schema --------------------------------------------------------------------------------------


def _valid(value, s, root) -> bool:
    """A JSON Schema (draft 7) validator for what opcert's schema uses (jsonschema, where installed, too)."""
    if "$ref" in s:
        return _valid(value, root["definitions"][s["$ref"].rsplit("/", 1)[1]], root)
    if "anyOf" in s and not any(_valid(value, sub, root) for sub in s["anyOf"]):
        return False
    if "enum" in s and value not in s["enum"]:
        return False
    if "const" in s and value != s["const"]:
        return False
    if "type" in s:
        types = s["type"] if isinstance(s["type"], list) else [s["type"]]
        kinds = {
            "object": lambda v: isinstance(v, dict),
            "array": lambda v: isinstance(v, list),
            "string": lambda v: isinstance(v, str),
            "boolean": lambda v: isinstance(v, bool),
            "integer": lambda v: (
                not isinstance(v, bool) and (isinstance(v, int) or (isinstance(v, float) and v.is_integer()))
            ),
            "number": lambda v: not isinstance(v, bool) and isinstance(v, (int, float)),
        }
        if not any(kinds[t](value) for t in types):
            return False
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if value < s.get("minimum", value) or value > s.get("maximum", value):
            return False
        if "exclusiveMinimum" in s and value <= s["exclusiveMinimum"]:
            return False
    if isinstance(value, str):
        if len(value) < s.get("minLength", 0) or ("pattern" in s and not re.search(s["pattern"], value)):
            return False
    if isinstance(value, list):
        if len(value) < s.get("minItems", 0) or (
            s.get("uniqueItems") and len({json.dumps(v) for v in value}) < len(value)
        ):
            return False
        if "items" in s and not all(_valid(v, s["items"], root) for v in value):
            return False
    if isinstance(value, dict):
        props = s.get("properties", {})
        if any(k not in value for k in s.get("required", [])):
            return False
        for k, v in value.items():
            if k in props:
                if not _valid(v, props[k], root):
                    return False
            elif s.get("additionalProperties") is False:
                return False
            elif isinstance(s.get("additionalProperties"), dict) and not _valid(v, s["additionalProperties"], root):
                return False
    return True


def _validates(doc) -> bool:
    s = schema()
    ours = _valid(doc, s, s)
    try:
        import jsonschema
    except ImportError:
        return ours
    theirs = jsonschema.Draft7Validator(s).is_valid(doc)
    assert ours == theirs, doc
    return theirs


def _docs_configs() -> list:
    """Every TOML block of the documentation that is a gate configuration (has a [[check]])."""
    out = []
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for block in re.findall(r"```toml\n(.*?)```", page.read_text(), re.S):
            if "[[check]]" in block:
                out.append((page.name, tomllib.loads(block)))
    return out


def test_the_schema_is_the_committed_one_and_a_valid_draft_7_schema():
    assert (ROOT / "docs" / "opcert.schema.json").read_text() == text(), (
        "regenerate it: python -c 'from opcert.gating.schema import text; print(text(), end=\"\")' > docs/opcert.schema.json"
    )
    s = schema()
    assert set(s["definitions"]["check"]["properties"]) == set(KEYS)
    try:
        import jsonschema
    except ImportError:
        return
    jsonschema.Draft7Validator.check_schema(s)


def test_the_schema_accepts_the_repositorys_configurations_and_refuses_a_misspelt_key():
    configs = [("reports", tomllib.loads((ROOT / "reports/opcert.toml").read_text()))]
    configs += [("examples", tomllib.loads((ROOT / "examples/opcert.toml").read_text()))]
    configs += _docs_configs()
    assert len(configs) >= 4
    for where, doc in configs:
        assert _validates(doc), where
    assert not _validates({"check": [{"op": "Tanh", "dtype": ["float16"]}]})
    assert not _validates({"checks": [{"op": "Tanh"}]})


# the schema and the reader agree on each key's values (both generated from one declaration: this keeps the
# hand-written validators honest where a schema can say something)
AGREE = [
    ("mode", "fast"),
    ("mode", "sample"),
    ("samples", 0),
    ("samples", 10),
    ("seed", -1),
    ("max_ulp", -1),
    ("max_ulp", 2),
    ("signed_zero", "lenient"),
    ("subnormals", "flush-allowed"),
    ("isolation", "thread"),
    ("target_timeout", 0),
    ("target", "tpu"),
    ("target", "numpy:tanh"),
    ("target", "c:./lib.so:my_tanh"),
    ("dtypes", ["float8"]),
    ("dtypes", "float16"),
    ("dtypes", []),
    ("accept_sampled_evidence", 1),
    ("attr_sweep", "yes"),
    ("name", 3),
    ("proofs", "some"),
    ("standard", 3),
    ("layout_samples", 0),
]


@pytest.mark.parametrize("key,value", AGREE)
def test_the_schema_and_the_reader_agree(key, value):
    doc = {"check": [{"op": "Tanh", key: value}]}
    try:
        parse(doc, "x")
        reader = True
    except ConfigErrors:
        reader = False
    assert _validates(doc) == reader


# ---- annotations --------------------------------------------------------------------------------------------


def test_an_annotation_points_at_the_checks_table(tmp_path):
    cfg = tmp_path / "opcert.toml"
    body = (
        '# a comment\n\n[[check]]\nop = "Relu"\ndtypes = ["float16"]\n\n[[check]]\nop = "Tanh"\ndtypes = ["float16"]\n'
    )
    cfg.write_text(body)
    checks = load_config(str(cfg)).checks
    assert [c.where() for c in checks] == [{"file": str(cfg), "line": 3}, {"file": str(cfg), "line": 7}]
    gate = {
        "config": str(cfg),
        "checks": [
            {
                "name": "Tanh float16 opcert",
                "status": "fail",
                "reasons": ["max ULP"],
                "command": "opcert x",
                "where": checks[1].where(),
            },
            {"name": "Relu float16 opcert", "status": "fail", "reasons": ["r"], "command": "opcert y"},  # no where
        ],
    }
    first, second = annotations(gate)
    assert first.startswith(f"::error title=opcert%3A Tanh float16 opcert,file={str(cfg).replace(':', '%3A')},line=7::")
    assert second.startswith(f"::error title=opcert%3A Relu float16 opcert,file={str(cfg).replace(':', '%3A')}::")
    assert annotations({**gate, "config": "built-in default", "checks": gate["checks"][1:]})[0].startswith(
        "::error title=opcert%3A Relu float16 opcert::"
    )


# ---- targets relative to the configuration file -----------------------------------------------------------


@pytest.fixture
def clean_path(monkeypatch):
    """sys.path and PYTHONPATH as they were after the test (load_config puts a configuration's pythonpath there)."""
    monkeypatch.setattr(sys, "path", list(sys.path))
    if "PYTHONPATH" in os.environ:
        monkeypatch.setenv("PYTHONPATH", os.environ["PYTHONPATH"])
    else:
        monkeypatch.delenv("PYTHONPATH", raising=False)
    before = set(sys.modules)
    yield
    for name in set(sys.modules) - before:
        if name.startswith("cfgrel_"):
            del sys.modules[name]


KERNEL = "import numpy as np\n\n\ndef tanh(x):\n    return np.tanh(x.astype(np.float64)).astype(x.dtype)\n"


def test_a_module_beside_the_configuration_is_found_from_another_directory(cli, tmp_path, monkeypatch, clean_path):
    (tmp_path / "cfg").mkdir()
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "cfg" / "cfgrel_kernel.py").write_text(KERNEL)
    (tmp_path / "cfg" / "opcert.toml").write_text(
        '[[check]]\nop = "Tanh"\ndtypes = ["float16"]\ntarget = "cfgrel_kernel:tanh"\nmode = "sample"\n'
        "samples = 100\nmax_ulp = 0.5\n"
    )
    monkeypatch.chdir(tmp_path / "elsewhere")
    out = tmp_path / "g.json"
    code, text_, err = cli("gate", "--config", "../cfg/opcert.toml", "--workers", "1", "--json", out)
    assert code == 0, text_ + err
    check = json.loads(out.read_text())["checks"][0]
    assert check["status"] == "pass"
    # its reproduce command, with the prefix that names the directory, runs as printed from here
    (c,) = load_config("../cfg/opcert.toml").checks
    cfgdir = str(tmp_path / "cfg")
    assert c.pythonpath == (cfgdir,)
    prefix = paths.reproduce_env(c)
    assert prefix.startswith("PYTHONPATH=" + shlex.quote(cfgdir))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    proc = subprocess.run(prefix + check["command"], shell=True, capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0 and "check pass" in proc.stderr, proc.stderr[-2000:]


def test_pythonpath_and_c_paths_are_read_from_the_configuration_file(tmp_path, monkeypatch, clean_path):
    (tmp_path / "cfg" / "src").mkdir(parents=True)
    (tmp_path / "cfg" / "src" / "cfgrel_src.py").write_text(KERNEL)
    cfg = tmp_path / "cfg" / "opcert.toml"
    cfg.write_text(
        'pythonpath = ["src"]\n\n[[check]]\nop = "Tanh"\ndtypes = ["float16"]\ntarget = "cfgrel_src:tanh"\n\n'
        '[[check]]\nop = "Tanh"\ndtypes = ["float16"]\ntarget = "c:./lib/libk.so:my_tanh"\n'
    )
    monkeypatch.chdir(tmp_path)
    module, c_kernel = load_config("cfg/opcert.toml").checks
    src = str(tmp_path / "cfg" / "src")
    assert sys.path[0] == src and os.environ["PYTHONPATH"].split(os.pathsep)[0] == src
    assert module.pythonpath == (src,) and module.target == "cfgrel_src:tanh"
    assert c_kernel.target == f"c:{tmp_path / 'cfg' / 'lib' / 'libk.so'}:my_tanh"
    # the spelling of the file names and identifies the check (a result is the same check on another machine)
    assert c_kernel.label("float16") == "Tanh float16 c:./lib/libk.so:my_tanh"
    assert c_kernel.identity("float16")["target"] == "c:./lib/libk.so:my_tanh"
    assert paths.reproduce_env(c_kernel) == ""
    # a directory that is not there is an error at its line
    cfg.write_text('pythonpath = ["src", "nowhere"]\n[[check]]\nop = "Tanh"\n')
    with pytest.raises(ConfigErrors) as info:
        load_config(cfg)
    (p,) = info.value.problems
    assert p.line == 1 and p.key == "pythonpath" and "'nowhere' is not a directory" in p.message
