"""Gate configuration: `opcert.toml`, or `[tool.opcert]` in pyproject.toml.

    [[check]]
    op = "Tanh"                # an operator, a list of them, or "*" (the whole catalog)
    dtypes = ["float16", "float32"]
    target = "opcert"          # or a runtime (onnxruntime, torch, ...), module:function, c:PATH:SYMBOL
    mode = "exhaustive"        # or "sample"
    samples = 100000           # sample mode; default 100,000 (float32), 1,000,000 (float64; 10,000 for Gelu)
    max_ulp = 1.0
    signed_zero = "strict"     # or "ignore"
    subnormals = "strict"      # or "flush-allowed"
    proofs = ["range", "monotonic"]   # or "all", or []: required of every target
    waive = { symmetry = "why" }      # declared properties not held to (still measured and reported)
    accept_sampled_evidence = false   # true: a property checked on samples counts as established
    isolation = "process"      # or "none": run the target in opcert's own process
    target_timeout = 600       # seconds per target call (isolated targets)
    layout_samples = 1024      # inputs per layout where the layouts are not enumerated (the `layout` property;
                               # default 1024, 1000000 in a float32 sweep of the whole format)
    isa = "all"                # one check per ISA level the host has (torch, NumPy, ...), or one level
    against = "torch"          # another path of the same function (eager torch for target torch.compile):
    max_ulp_apart = 0          # the two outputs at most this many representable values apart on every
                               # compared input (default 0: the same bits; path_matrix.compare_paths)
    standard = "onnx"          # whose definition; default: the operator's primary
    name = "tanh-fp16"         # optional label
    [check.attrs]
    alpha = 0.2

    pythonpath = ["src"]       # a key of the file itself: where module:function targets are imported
                               # from, relative to the file (default ["."]); gating.paths

Every value goes through opcert.policy, the validator the CLI, the API and
the pytest plugin use too. Every error names the file, the line (toml_lines),
the key and what is allowed (with the nearest allowed name where one was
misspelt); a file's errors are all found in one reading and raised together
(ConfigErrors). The keys are declared once (CHECK_KEYS, TOP_KEYS), with the
JSON Schema of their values (gating.schema) and the documentation's table.
"""

from __future__ import annotations

import dataclasses
import difflib
import math
import os
import tomllib
from dataclasses import dataclass, field

import numpy as np

from opcert import policy
from opcert.errors import ConfigErrors, ConfigProblem, UsageError, choices
from opcert.formats import FLOAT_FORMATS
from opcert.gating import paths, toml_lines
from opcert.isa import check_isa, levels
from opcert.runtime_table import isa_switches
from opcert.spec import (
    binary_operators,
    get_binary_operator,
    get_operator,
    get_predicate_operator,
    get_tensor_operator,
    is_binary_operator,
    is_predicate_operator,
    is_tensor_operator,
    operators,
    predicate_operators,
    tensor_operators,
)
from opcert.spec.attrs import resolve
from opcert.spec.binary import BinaryOperator
from opcert.spec.predicate import PredicateOperator
from opcert.targets import BUILTIN, c_abi, check_name
from opcert.verify.accuracy.attr_sweep import attribute_sets
from opcert.verify.tensor.measure import LONGEST_ROW

MODES = ("exhaustive", "sample")


@dataclass(frozen=True)
class Key:
    """A configuration key: its type, default and meaning as the documentation says them, and the JSON Schema
    of its value (`schema`: the editor's schema, opcert/gating/schema.py)."""

    type: str
    default: str
    meaning: str
    schema: dict


_STRINGS = {"type": "array", "items": {"type": "string"}}
# module:function (dotted names) and c:PATH:SYMBOL, as targets.check_name reads them
_TARGET_PATTERN = r"^(c:.+:[A-Za-z_][A-Za-z0-9_]*|[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*:[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*)$"

# Every key of a [[check]] table. The keys the reader accepts are these, the documentation's configuration
# reference is generated from them (tools/docs_pages.py, through KEY_DOCS), and so is the JSON Schema
# (opcert schema): one declaration for all three.
CHECK_KEYS = {
    "op": Key(
        'string, list of strings, or "*"',
        "required",
        'the operator(s), by ONNX or DirectML name, case-insensitive; "*": the element-wise catalog (the '
        "tensor operators, Softmax's family and the normalizations, by name: sampled rows; attrs only where the "
        "operator has attributes (LayerNormalization's epsilon, LpNormalization's p); no attr_sweep, isa or "
        "layout_samples)",
        {
            "anyOf": [
                {"type": "string", "minLength": 1},
                {"type": "array", "items": {"type": "string", "minLength": 1}, "minItems": 1},
            ],
        },
    ),
    "dtypes": Key(
        "list of strings",
        "every float format",
        "float16, bfloat16, float32, float64 (integer types for Shrink through the API)",
        {
            "anyOf": [
                {"enum": list(FLOAT_FORMATS)},
                {"type": "array", "items": {"enum": list(FLOAT_FORMATS)}, "minItems": 1, "uniqueItems": True},
            ]
        },
    ),
    "target": Key(
        "string",
        '"opcert"',
        f"{', '.join(BUILTIN)}, module:function (a Python callable), c:PATH:SYMBOL (a C kernel; a relative "
        "PATH is read from the configuration file's directory)",
        {"anyOf": [{"enum": list(BUILTIN)}, {"type": "string", "pattern": _TARGET_PATTERN}]},
    ),
    "mode": Key(
        '"sample" or "exhaustive"',
        '"sample"',
        "exhaustive: every input (16-bit formats; float32: all 2^32); float64 is always sampled",
        {"enum": list(MODES)},
    ),
    "samples": Key(
        "integer > 0",
        "100,000 (float32); 1,000,000 (float64; 10,000 for Gelu)",
        "stratified samples with hard cases, in sample mode",
        {"type": "integer", "minimum": 1, "maximum": policy.MAX_SAMPLES},
    ),
    "seed": Key(
        "integer >= 0", "0", "the sample's seed", {"type": "integer", "minimum": 0, "maximum": policy.MAX_SEED}
    ),
    "max_ulp": Key("number >= 0", "1.0", "the budget: the largest ULP error allowed", {"type": "number", "minimum": 0}),
    "signed_zero": Key(
        '"strict" or "ignore"',
        '"strict"',
        "whether a zero of the wrong sign fails the check",
        {"enum": list(policy.SIGNED_ZERO)},
    ),
    "subnormals": Key(
        '"strict" or "flush-allowed"',
        '"strict"',
        "flush-allowed: a subnormal result flushed to zero is counted apart, not failed",
        {"enum": list(policy.SUBNORMALS)},
    ),
    "proofs": Key(
        'list of property names, or "all"',
        "[] (none)",
        "properties required of the target (range, monotonic, ..., layout); each must be established "
        "(proved, or enumerated over every input) or the check fails",
        {"anyOf": [{"const": "all"}, _STRINGS]},
    ),
    "waive": Key(
        "table of property = reason",
        "{} (none)",
        "declared properties this check does not hold the target to, each with the reason (a non-empty string), "
        'e.g. waive = { symmetry = "textbook 1 / (1 + exp(-x))" }: a waived property is still measured and '
        'reported ("refuted (waived: REASON)"), dropped from what proofs requires, never counted as proved',
        {"type": "object", "additionalProperties": {"type": "string", "minLength": 1}},
    ),
    "accept_sampled_evidence": Key(
        "boolean",
        "false",
        'true: a property checked on samples only ("checked") counts as established',
        {"type": "boolean"},
    ),
    "standard": Key(
        "string",
        "the operator's primary",
        "whose definition: onnx, directml, sonnx",
        {"type": "string", "minLength": 1},
    ),
    "name": Key("string", "OP DTYPE TARGET", "a label for the check in reports", {"type": "string"}),
    "attrs": Key(
        "table",
        "the standard's defaults",
        "attribute values, by ONNX or DirectML name ([check.attrs])",
        {"type": "object", "additionalProperties": {"type": ["number", "string"]}},
    ),
    "attr_sweep": Key(
        "boolean",
        "false",
        "one check per attribute set: every standard's defaults, ONNX's backend "
        "test values and a grid over each attribute (no attrs with it; float32 sampled)",
        {"type": "boolean"},
    ),
    "isolation": Key(
        '"process" or "none"',
        '"process"',
        "run the target in a supervised worker process (a crash is a finding) or in opcert's own",
        {"enum": list(policy.ISOLATION)},
    ),
    "target_timeout": Key(
        "number of seconds > 0",
        "none",
        "fail a target call that does not return in time",
        {"type": "number", "exclusiveMinimum": 0},
    ),
    "layout_samples": Key(
        "integer > 0",
        "1,024 (1,000,000 in a float32 sweep of the whole format)",
        "inputs per layout where the layouts are not enumerated (the layout property)",
        {"type": "integer", "minimum": 1, "maximum": policy.MAX_SAMPLES},
    ),
    "against": Key(
        "string (a target)",
        "none",
        'another code path of the same function (eager torch for target = "torch.compile", onnxruntime-subgraph-'
        "unfused for onnxruntime-subgraph): both run on the same inputs (every input of a 16-bit format, the "
        "check's samples of float32 and float64), compared bit for bit and replayed where they differ; the "
        "check fails where they are more than max_ulp_apart apart (element-wise operators)",
        {"type": "string", "minLength": 1},
    ),
    "max_ulp_apart": Key(
        "integer >= 0",
        "0 (the same bits)",
        "with against: the most representable values the two paths' outputs may be apart on any compared input "
        "(NaN equals NaN; a NaN against a number always fails)",
        {"type": "integer", "minimum": 0},
    ),
    "isa": Key(
        "string",
        "the host's",
        '"all": one check per ISA level the host has '
        f'({", ".join(sw.library for sw in isa_switches())}); or one level\'s name; "host": as the host picks',
        {"type": "string", "minLength": 1},
    ),
}
# (type, default, meaning) of each [[check]] key: the documentation's table (tools/docs_pages.py)
KEY_DOCS = {k: (v.type, v.default, v.meaning) for k, v in CHECK_KEYS.items()}
KEYS = frozenset(CHECK_KEYS)

# The keys of the file itself (of [tool.opcert] in pyproject.toml)
TOP_KEYS = {
    "check": Key(
        "array of tables ([[check]])",
        "required",
        "the checks",
        {"type": "array", "items": {"$ref": "#/definitions/check"}, "minItems": 1},
    ),
    "pythonpath": Key(
        "list of strings",
        '["."]',
        "directories, relative to the configuration file, put at the front of sys.path and of the worker "
        "processes' PYTHONPATH for module:function targets",
        _STRINGS,
    ),
}


@dataclass(frozen=True)
class Check:
    op: str
    dtypes: tuple[str, ...]
    target: str = "opcert"
    mode: str = "sample"
    samples: int | None = None
    max_ulp: float = 1.0
    signed_zero: str = "strict"
    subnormals: str = "strict"
    proofs: tuple[str, ...] = ()
    standard: str | None = None
    attrs: tuple = ()
    name: str = ""
    seed: int = 0
    accept_sampled_evidence: bool = False
    isolation: str = "process"
    target_timeout: float | None = None
    proofs_left_out: tuple[str, ...] = ()  # what proofs = "all" left out, and why
    attr_set: str = ""  # attr_sweep: where this attribute set comes from
    layout_samples: int | None = None  # inputs per layout where the layouts are not enumerated
    isa: str | None = None  # the ISA level this check runs at (opcert.isa); None: the host's
    waive: tuple = ()  # ((property, reason), ...): declared properties not held to, still measured and reported
    against: str | None = None  # another path of the same function, compared with this target's outputs
    max_ulp_apart: int = 0  # with against: how many representable values apart the two outputs may be
    # Where the check comes from, and how its target was found; none of it is part of its identity (a result
    # keeps its identity when the configuration moves, or is read on another machine)
    target_given: str = ""  # the target as the configuration spells it, where `target` resolved it (an
    # absolute c:PATH); names and identities use this spelling
    pythonpath: tuple[str, ...] = ()  # directories only the configuration put on the path that its module
    # is imported from: its reproduce command names them (paths.reproduce_env)
    config_file: str = ""  # the configuration file, as given
    config_line: int | None = None  # the line of the check's table there

    def label(self, dtype: str) -> str:
        base = self.name or f"{self.op} {dtype} {self.target_given or self.target}"
        if self.isa:
            base += f" [isa {self.isa}]"
        if not self.attr_set:
            return base
        shown = ", ".join(f"{k}={v}" for k, v in self.attrs)
        return f"{base} [{self.attr_set}: {shown}]"

    def where(self) -> dict | None:
        """The check's place in its configuration file ({"file", "line"}; None for a check of no file): what a
        CI annotation points at (report.ci)."""
        if not self.config_file:
            return None
        return {"file": self.config_file, "line": self.config_line}

    def mode_for(self, dtype: str) -> str:
        # exhaustive float64 is not a thing: 2^64 inputs; a tensor operator's exhaustive pass is over every
        # pair of 16-bit values (its float32 rows are sampled)
        if dtype == "float64" or (dtype == "float32" and (is_tensor_operator(self.op) or is_binary_operator(self.op))):
            return "sample"
        if is_predicate_operator(self.op) and dtype in ("float16", "bfloat16"):  # always every pattern
            return "exhaustive"
        return self.mode

    def identity(self, dtype: str) -> dict:
        """Everything that identifies a (check, dtype): what `opcert diff` keys on."""
        return {
            "op": self.op,
            "dtype": dtype,
            "target": self.target_given or self.target,
            "attrs": dict(self.attrs),
            "standard": self.standard,
            "mode": self.mode_for(dtype),
            "samples": self.samples if self.mode_for(dtype) == "sample" else None,
            "seed": self.seed if self.mode_for(dtype) == "sample" else None,
            "max_ulp": self.max_ulp,
            "signed_zero": self.signed_zero,
            "subnormals": self.subnormals,
            "proofs": list(self.proofs),
            "accept_sampled_evidence": self.accept_sampled_evidence,
            "name": self.name,
            "attr_set": self.attr_set,
            # how the target runs is part of what was checked: with another time limit or without its
            # process a check can end otherwise
            "target_timeout": self.target_timeout,
            "isolation": self.isolation,
            # set only when given: results saved before these keys existed keep their identity (diff)
            **({"layout_samples": self.layout_samples} if self.layout_samples is not None else {}),
            **({"isa": self.isa} if self.isa is not None else {}),
            **({"waive": dict(self.waive)} if self.waive else {}),
            **({"against": self.against, "max_ulp_apart": self.max_ulp_apart} if self.against else {}),
        }


@dataclass
class GateConfig:
    checks: list[Check] = field(default_factory=list)
    source: str = "built-in default"
    path: str | None = None  # the configuration file, as given (None: the built-in default, or a dict)
    pythonpath: tuple[str, ...] = ()  # its `pythonpath`, absolute (paths: activated by load_config)
    pythonpath_given: bool = False  # whether the file gives it (else the implicit ["."])


class _Problems:
    """The errors of one configuration, gathered as they are found: each with the line of its key or table
    (toml_lines), once each; `raise_if_any` raises them all (ConfigErrors)."""

    def __init__(self, file: str, lines: dict | None = None, prefix: tuple = ()):
        self.file = file  # the file as given (or what names the source where it is none: "the command line")
        self.lines = lines or {}
        self.prefix = prefix  # ("tool", "opcert") in a pyproject.toml
        self.found: list[ConfigProblem] = []
        self._seen: set = set()

    def add(self, path: tuple, message: str) -> None:
        key = _key_text(path)
        if key and message.startswith(key + ":"):  # a validator that names the key itself
            message = message[len(key) + 1 :].lstrip()
        line = toml_lines.find(self.lines, self.prefix + tuple(path)) if path else None
        problem = ConfigProblem(self.file, line, key, message)
        if str(problem) not in self._seen:
            self._seen.add(str(problem))
            self.found.append(problem)

    def attempt(self, path: tuple, fn, *args):
        """fn(*args), or _BAD with its UsageError recorded at path."""
        try:
            return fn(*args)
        except UsageError as exc:
            self.add(path, str(exc))
            return _BAD

    def raise_if_any(self) -> None:
        if self.found:
            order = sorted(range(len(self.found)), key=lambda j: (self.found[j].line is None, self.found[j].line or 0))
            raise ConfigErrors([self.found[j] for j in order])


_BAD = object()  # a value that did not validate (its error is recorded)


def _key_text(path: tuple) -> str:
    """check[0].dtypes for ("check", 0, "dtypes", 1): an index after `check` is shown, one of an array element
    is not, nor an attribute's name after attrs (the message names them; the line points at them)."""
    out = ""
    for j, part in enumerate(path):
        if j > 0 and path[j - 1] == "attrs":
            break
        if isinstance(part, int):
            if j > 0 and path[j - 1] == "check":
                out += f"[{part}]"
        else:
            out += ("." if out else "") + part
    return out


def _near(word, allowed) -> str | None:
    """The allowed word closest to a misspelt one (difflib), or None."""
    if not isinstance(word, str):
        return None
    by_lower = {str(a).lower(): str(a) for a in allowed}
    close = difflib.get_close_matches(word.lower(), list(by_lower), n=1, cutoff=0.7)
    return by_lower[close[0]] if close else None


def _suggest(message: str, near: str | None) -> str:
    """message with "(did you mean NEAR?)" before its list of what is allowed (or at its end)."""
    if not near or "did you mean" in message:
        return message
    hint = f" (did you mean {near!r}?)"
    for sep in ("; allowed:", "; declared:"):
        if sep in message:
            head, _, tail = message.partition(sep)
            return head + hint + sep + tail
    return message + hint


def _unknown_key(key, allowed) -> str:
    return _suggest(f"unknown key; allowed: {choices(sorted(allowed))}", _near(key, allowed))


def _ops(spec, at: tuple, P: _Problems) -> list | None:
    """The operators of `op`; None where any is wrong (each wrong name recorded)."""
    if spec == "*":
        return operators()
    names = spec if isinstance(spec, list) else [spec]
    if not names or not all(isinstance(n, str) for n in names):
        P.add(at + ("op",), 'must be an operator name, a list of names, or "*" (the whole catalog)')
        return None
    out = []
    for j, n in enumerate(names):
        path = at + ("op", j) if isinstance(spec, list) else at + ("op",)
        got = P.attempt(path, lambda n=n: _operator(n))
        out.append(got)
    return None if any(o is _BAD for o in out) else out


def _operator(name):
    if is_binary_operator(name):
        return get_binary_operator(name)
    if is_predicate_operator(name):
        return get_predicate_operator(name)
    return get_tensor_operator(name)[0] if is_tensor_operator(name) else get_operator(name)


def _binary_attrs(op, attrs: dict, standard, at: tuple, P: _Problems) -> tuple:
    """A binary operator's [check.attrs] (DirectML's scale and bias): names its standard has, binary32 values."""
    try:
        std = op.standard(standard)
    except UsageError as exc:
        P.add(at + ("standard",), str(exc))
        return ()
    out = []
    for key, value in attrs.items():
        if not std.has(key):
            P.add(at + ("attrs", key), f"{op.name} ({std.key}) has no attribute {key!r}; its attributes: "
                  f"{choices(std.attribute_names) if std.attribute_names else 'none'}")  # fmt: skip
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(float(value)):
            P.add(at + ("attrs", key), f"must be a finite number (a binary32 value), got {value!r}")
            continue
        out.append((key, float(np.float32(value))))
    return tuple(sorted(out))


def _dtypes(raw, at: tuple, P: _Problems) -> list | None:
    dtypes = raw.get("dtypes", list(FLOAT_FORMATS))
    single = isinstance(dtypes, str)
    if single:
        dtypes = [dtypes]
    if not isinstance(dtypes, list) or not dtypes or not all(isinstance(d, str) for d in dtypes):
        P.add(at + ("dtypes",), f"must be a non-empty list of dtype names; allowed: {choices(FLOAT_FORMATS)}")
        return None
    ok = True
    for j, d in enumerate(dtypes):
        if d not in FLOAT_FORMATS:
            message = f"unknown dtype {d!r}; allowed: {choices(FLOAT_FORMATS)}"
            P.add(at + (("dtypes",) if single else ("dtypes", j)), _suggest(message, _near(d, FLOAT_FORMATS)))
            ok = False
    if len(set(dtypes)) != len(dtypes):
        P.add(at + ("dtypes",), "lists a dtype twice")
        ok = False
    return dtypes if ok else None


def _target(value, at: tuple, P: _Problems, base_dir: str | None, key: str = "target") -> str | None:
    """The target (or `against`, key), its spelling checked; a relative c:PATH made absolute from base_dir (the
    configuration file's directory) where there is one."""
    try:
        name = check_name(value)
    except UsageError as exc:
        text = str(exc)
        if isinstance(value, str) and ":" not in value:
            text = _suggest(text, _near(value.strip(), BUILTIN))
        P.add(at + (key,), text)
        return None
    if base_dir is not None and name.startswith("c:"):
        path, symbol = c_abi.split(name)
        if not os.path.isabs(os.path.expanduser(path)):
            name = f"c:{os.path.normpath(os.path.join(base_dir, path))}:{symbol}"
    return name


def _apart(value, key: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise UsageError(f"{key}: must be an integer >= 0, representable values (got {value!r})")
    return value


def _boolean(value, key: str) -> bool:
    if not isinstance(value, bool):
        raise UsageError(f"{key}: must be true or false (got {value!r})")
    return value


def _string(value, key: str) -> str:
    if not isinstance(value, str):
        raise UsageError(f"{key}: must be a string (got {value!r})")
    return value


def _tensor_proofs(
    op, raw, at: tuple, P: _Problems, base: Check, dtypes_ok: bool, refused: dict, kind: str = "a tensor operator"
) -> tuple:
    """The required properties of a tensor (or binary) operator's check (sampled rows or pairs: verify.tensor,
    verify.binary); `refused`: the keys that concern element-wise kernels only, each refused by name."""
    what = (
        "a tensor operator has no attributes; its rows are sampled"
        if kind == "a tensor operator"
        else "its pairs are sampled, or every pair of a 16-bit format"
    )
    for key, given in refused.items():
        if given:
            P.add(at + (key,), f"{op.name} is {kind}: {key} applies to the element-wise operators ({what})")
    if dtypes_ok and base.mode == "exhaustive" and not any(d in ("float16", "bfloat16") for d in base.dtypes):
        P.add(
            at + ("mode",),
            f"{op.name} is a tensor operator: exhaustive adds every row of two 16-bit "
            'values (float16, bfloat16); its float32 and float64 rows are sampled: mode = "sample"'
            if kind == "a tensor operator"
            else f"{op.name} is {kind}: exhaustive covers every pair of 16-bit values (float16, bfloat16); its "
            'float32 and float64 pairs are sampled: mode = "sample"',
        )
    requested = raw.get("proofs", [])
    declared = [p.name for p in op.properties]
    if requested == "all":
        return tuple(declared)
    if isinstance(requested, list) and all(isinstance(n, str) for n in requested):
        for j, n in enumerate(requested):
            if n not in declared:
                message = f"{op.name} declares no property {n!r}; declared: {choices(declared)}"
                P.add(at + ("proofs", j), _suggest(message, _near(n, declared)))
        return tuple(requested)
    P.add(at + ("proofs",), f'must be a list of property names, or "all" (got {requested!r})')
    return ()


def parse_check(raw, i, source, problems: _Problems | None = None, base_dir: str | None = None) -> list[Check]:
    """The checks of one [[check]] table (several with a list of operators, attr_sweep or isa = "all").

    With `problems` every error of the table is recorded there (and no check returned); without, the first
    reading's errors are raised together (ConfigErrors, naming `source`). base_dir: the configuration file's
    directory, which a relative c:PATH is read from."""
    own = problems is None
    P = _Problems(source) if own else problems
    before = len(P.found)
    out = _parse_check(raw, i, P, base_dir)
    if own:
        P.raise_if_any()
    return out if len(P.found) == before else []


def _parse_check(raw, i, P: _Problems, base_dir: str | None) -> list[Check]:
    at = ("check", i)
    where = _key_text(at)
    if not isinstance(raw, dict):
        P.add(at, "must be a table ([[check]])")
        return []
    for key in raw:
        if key not in KEYS:
            P.add(at + (key,), _unknown_key(key, KEYS))
    ops = None
    if "op" not in raw:
        P.add(at, "missing key 'op' (the operator: a name, a list of names, or \"*\")")
    else:
        ops = _ops(raw["op"], at, P)
    dtypes = _dtypes(raw, at, P)

    def get(key, fn, default, *more):
        value = raw.get(key, default)
        if value is None:
            return None
        got = P.attempt(at + (key,), fn, value, f"{where}.{key}", *more)
        return None if got is _BAD else got

    target = _target(raw.get("target", "opcert"), at, P, base_dir)
    given_target = raw.get("target", "opcert").strip() if isinstance(raw.get("target"), str) else target
    mode = get("mode", policy.choice, "sample", MODES)
    samples = get("samples", policy.samples, None)
    max_ulp = get("max_ulp", policy.number, 1.0)
    signed_zero = get("signed_zero", policy.choice, "strict", policy.SIGNED_ZERO)
    subnormals = get("subnormals", policy.choice, "strict", policy.SUBNORMALS)
    accept = get("accept_sampled_evidence", _boolean, False)
    seed = get("seed", policy.seed, 0)
    isolation = get("isolation", policy.choice, "process", policy.ISOLATION)
    timeout = get("target_timeout", policy.timeout, None)
    layout_samples = get("layout_samples", policy.samples, None)
    isa_levels = []
    if target is not None and raw.get("isa") is not None:
        isa_levels = P.attempt(at + ("isa",), _isa_levels, raw.get("isa"), target, where)
    name = get("name", _string, "") or ""
    against = None
    if raw.get("against") is not None:
        against = _target(raw["against"], at, P, base_dir, key="against")
        if against is not None and not isinstance(against, str):
            P.add(at + ("against",), "must name a target (it runs in a process of its own): a runtime, "
                  "module:function or c:PATH:SYMBOL, not a callable")  # fmt: skip
            against = None
        if against is not None and against == target:
            P.add(at + ("against",), f"names the check's own target {against!r}; give another path of the function")
            against = None
    apart = get("max_ulp_apart", _apart, 0)
    if raw.get("max_ulp_apart") is not None and raw.get("against") is None:
        P.add(at + ("max_ulp_apart",), "applies with against (the other path); give against = TARGET with it")
    standard = get("standard", _string, None)
    attrs = raw.get("attrs", {})
    if not isinstance(attrs, dict):
        P.add(at + ("attrs",), "must be a table of name = value")
        attrs = None
    elif attrs and ops is not None and len(ops) > 1:
        P.add(at + ("attrs",), "attributes apply to one operator; give op as a single name")
        attrs = None
    waive = _waive_table(raw.get("waive", {}), at, P)
    sweep = get("attr_sweep", _boolean, False)
    if sweep and attrs:
        P.add(at + ("attr_sweep",), "chooses the attribute values itself; give no [check.attrs] with it")
        attrs = None
    if sweep and dtypes and any(d == "float32" for d in dtypes) and mode == "exhaustive":
        P.add(
            at + ("attr_sweep",),
            "runs one check per attribute set: float32 is sampled there "
            '(mode = "sample"); sweep all 2^32 float32 inputs at one attribute set with [check.attrs]',
        )
    if ops is None:
        return []
    dtypes_ok = dtypes is not None
    out = []
    for op in ops:
        if standard is not None and P.attempt(at + ("standard",), op.standard, standard) is _BAD:
            continue
        if standard is not None and getattr(op.standard(standard), "rounded_scale_bias", False):
            if mode == "exhaustive" and dtypes and "float32" in dtypes:
                P.add(
                    at + ("mode",),
                    f"{standard}: the exhaustive float32 sweep computes the exact reading of the ScaleBias only; the "
                    'rounded variant is measured on every 16-bit input and on float32 samples (mode = "sample")',
                )
                continue
        base = Check(
            op.name,
            tuple(dtypes or ()),
            target or "opcert",
            mode or "sample",
            samples,
            max_ulp if max_ulp is not None else 1.0,
            signed_zero or "strict",
            subnormals or "strict",
            standard=standard,
            name=name,
            seed=seed or 0,
            accept_sampled_evidence=bool(accept),
            isolation=isolation or "process",
            target_timeout=timeout,
            target_given=given_target if given_target != target else "",
            config_line=toml_lines.find(P.lines, P.prefix + at) if P.lines else None,
            waive=_waived(op, waive, at, P, ops),
            against=against,
            max_ulp_apart=apart or 0,
        )
        if against is not None and (isinstance(op, (PredicateOperator, BinaryOperator)) or not op.elementwise):
            P.add(at + ("against",), f"applies to the element-wise operators; {op.name} is not one")
            continue
        if isinstance(op, PredicateOperator):
            refused = {
                "attr_sweep": bool(sweep),
                "isa": bool(isa_levels) and isa_levels is not _BAD,
                "layout_samples": layout_samples is not None,
            }
            proofs = _tensor_proofs(op, raw, at, P, base, dtypes_ok, refused, kind="a predicate operator")
            given = P.attempt(at + ("attrs",), op.attributes_for, op.standard(standard), attrs or {})
            out.append(
                dataclasses.replace(
                    base,
                    proofs=tuple(n for n in proofs if n not in dict(base.waive)),
                    attrs=tuple(sorted((given if given is not _BAD else {}).items())),
                )
            )
            continue
        if isinstance(op, BinaryOperator):
            refused = {
                "attr_sweep": bool(sweep),
                "isa": bool(isa_levels) and isa_levels is not _BAD,
                "layout_samples": layout_samples is not None,
            }
            proofs = _tensor_proofs(op, raw, at, P, base, dtypes_ok, refused, kind="a binary operator")
            out.append(
                dataclasses.replace(
                    base,
                    proofs=tuple(n for n in proofs if n not in dict(base.waive)),
                    attrs=_binary_attrs(op, attrs or {}, standard, at, P),
                )
            )
            continue
        if not op.elementwise:
            refused = {
                "attrs": bool(attrs) and not op.attributes,
                "attr_sweep": bool(sweep),
                "isa": bool(isa_levels) and isa_levels is not _BAD,
                "layout_samples": layout_samples is not None,
            }
            proofs = _tensor_proofs(op, raw, at, P, base, dtypes_ok, refused)
            given = ()
            if op.attributes and attrs:  # LayerNormalization's epsilon: binary32, in its domain
                if not _attrs_valid(op, attrs, standard, at, P):
                    continue
                given = tuple(sorted(attrs.items()))
            proofs, left = _claimed(op, proofs, given, standard, raw.get("proofs") == "all", at, P)
            out.append(
                dataclasses.replace(
                    base,
                    proofs=tuple(n for n in proofs if n not in dict(base.waive)),
                    attrs=given,
                    proofs_left_out=tuple(base.proofs_left_out) + left,
                )
            )
            continue
        if attrs is None or (not sweep and not _attrs_valid(op, attrs, standard, at, P)):
            _undeclared(op, raw.get("proofs", []), at, P)  # the attributes' errors are recorded
            continue
        for set_attrs, label in _attribute_sets(op, attrs, sweep, standard, at, P):
            try:
                resolved = resolve(op, set_attrs, standard)
            except UsageError as exc:
                if sweep:  # a grid value outside the attribute's domain is no attribute set
                    continue
                P.add(at + ("attrs",), str(exc))
                continue
            proofs, left = _required(op, raw.get("proofs", []), resolved, sweep, at, P, standard)
            proofs = tuple(n for n in proofs if n not in dict(base.waive))  # measured and reported, not required
            if target == "opcert" and raw.get("proofs") == "all" and "layout" in proofs:
                proofs = tuple(n for n in proofs if n != "layout")
                left = tuple(left) + (f"layout: not required of opcert's own code: {OWN_LAYOUT}",)
            out.append(
                dataclasses.replace(
                    base,
                    proofs=proofs,
                    attrs=tuple(sorted(set_attrs.items())),
                    proofs_left_out=left,
                    attr_set=label,
                    layout_samples=layout_samples,
                )
            )
    if isa_levels and isa_levels is not _BAD:
        out = [dataclasses.replace(c, isa=lv) for c in out for lv in isa_levels]
    return out


def _claimed(op, proofs: tuple, given: tuple, standard, all_of_them: bool, at: tuple, P: _Problems) -> tuple:
    """(the required row properties claimed at the check's attributes, why each other one is left out): scaling is
    claimed where epsilon = 0. One named that is not claimed there is an error at its line; "all" leaves it out
    (it is still measured and reported), and says so."""
    try:
        std = op.with_values(op.standard(standard), dict(given))
    except UsageError:  # the attributes' own errors are recorded where they are read
        return proofs, ()
    declared = {p.name: p for p in op.properties}
    out, left = [], []
    for j, n in enumerate(proofs):
        why = declared[n].not_claimed(std) if n in declared else None
        if why is None:
            out.append(n)
        elif all_of_them:
            left.append(why)
        else:
            P.add(at + ("proofs", j), why)
    return tuple(out), tuple(left)


def _attrs_valid(op, attrs: dict, standard, at: tuple, P: _Problems) -> bool:
    """Whether [check.attrs] is valid for op: each attribute checked on its own (its error at its line, an
    unknown name with the nearest one), then all of them together."""
    if P.attempt(at + ("attrs",), resolve, op, {}, standard) is _BAD:
        return False  # the standard needs an attribute it gives no default for: resolve(attrs) says which
    names = [n for a in op.attributes for n in (a.name, *a.aliases)]
    ok = True
    for key, value in attrs.items():
        try:
            resolve(op, {key: value}, standard)
        except UsageError as exc:
            text = str(exc)
            P.add(at + ("attrs", key), _suggest(text, _near(key, names)) if "unknown attribute" in text else text)
            ok = False
    return ok and P.attempt(at + ("attrs",), resolve, op, attrs, standard) is not _BAD


# the built-in gate's tensor checks: their row properties are decided on samples (opcert's code over every
# 16-bit pair takes too long for a gate: bench/README.md, 'Figures behind choices in the code'), and the gate
# accepts that evidence, which every report shows per property
TENSOR_EVIDENCE = (
    "row properties of the code are checked on sampled rows, not proved: the built-in gate accepts "
    "that sampled evidence (`opcert accuracy OP --dtype float16 --target opcert --exhaustive` decides "
    "them over every pair of 16-bit values, about 45 minutes on 2 cores; `opcert prove OP` proves "
    "them for the standards' formula over the reals)"
)


# the normalizations' (no sweep over every row of two values: their rows are sampled, the hard ones generated)
MOMENTS_EVIDENCE = (
    "row properties of the code are checked on sampled rows and the generated hard rows, not proved: the built-in "
    "gate accepts that sampled evidence (`opcert prove OP` proves them for the standard's formula over the reals)"
)


# the built-in gate's checks of the binary operators: their pair properties are decided on samples (every pair of
# a 16-bit format takes minutes: bench/README.md, 'Pow over every pair'), and the gate accepts that evidence
BINARY_EVIDENCE = (
    "pair properties of the code are checked on sampled pairs, not proved: the built-in gate accepts that sampled "
    "evidence (`opcert accuracy Pow --dtype float16 --target opcert --exhaustive` decides them over every pair of "
    "float16 values)"
)


# the built-in gate's checks of the predicate operators: every 16-bit pattern (their properties proved), float32
# and float64 on samples (checked): the gate accepts that evidence
PREDICATE_EVIDENCE = (
    "float32 and float64 are checked on sampled patterns, not proved, and the built-in gate accepts that evidence "
    "(`opcert accuracy IsNaN --dtype float32 --target opcert --exhaustive` decides every float32 pattern)"
)


def _waive_table(value, at: tuple, P: _Problems) -> dict:
    """`waive`: {property: reason}, each reason a non-empty string (the names are checked per operator:
    _waived)."""
    if not isinstance(value, dict):
        P.add(
            at + ("waive",),
            'must be a table of property = "reason", e.g. waive = { symmetry = "why it does not apply" } '
            f"(got {value!r})",
        )
        return {}
    out = {}
    for name, reason in value.items():
        if not isinstance(reason, str) or not reason.strip():
            P.add(
                at + ("waive", name),
                f"needs the reason it is waived, a non-empty string (got {reason!r}); the reports "
                f'show it as "waived: REASON"',
            )
            continue
        out[name] = reason.strip()
    return out


def _waived(op, waive: dict, at: tuple, P: _Problems, ops) -> tuple:
    """((property, reason), ...) of op's `waive` table: the names op declares; a name none of the check's
    operators declares is an error at its line, with the nearest declared name."""
    declared = [p.name for p in op.properties]
    anywhere = {p.name for o in ops for p in o.properties}
    out = []
    for name, reason in waive.items():
        if name in anywhere and name not in declared:
            continue  # another operator of the check's list declares it
        if name not in declared:
            message = f"{op.name} declares no property {name!r}; declared: {choices(declared)}"
            P.add(at + ("waive", name), _suggest(message, _near(name, declared)))
            continue
        out.append((name, reason))
    return tuple(out)


def _isa_levels(value, target, where) -> list:
    """The ISA levels a check runs at: [] for the host's own (no `isa` key, or "host")."""
    if value is None:
        return []
    if not isinstance(value, str):
        raise UsageError(f'{where}.isa: must be a string: "all", "host" or a level\'s name (got {value!r})')
    try:
        chosen = check_isa(value, target)
    except UsageError as exc:
        raise UsageError(f"{where}.isa: {exc}") from None
    if chosen is None:
        return []
    return [n for n, _ in levels(target)] if chosen == "all" else [chosen]


def _attribute_sets(op, attrs, sweep, standard, at: tuple, P: _Problems) -> list:
    """(attributes, label) of each check for op: the given attributes, or with attr_sweep = true
    every set of verify.accuracy.attr_sweep."""
    if not sweep:
        return [(attrs, "")]
    if not any(op.standard(standard).has(a.name) for a in op.attributes):
        P.add(at + ("attr_sweep",), f"{op.name} has no attributes to sweep")
        return []
    return [(s.attrs, s.label) for s in attribute_sets(op, standard)]


def _required(op, requested, resolved, sweep, at: tuple, P: _Problems, standard):
    """The required properties and the notes on those left out; each name that cannot be required is an
    error at its line (with the nearest declared name where it is unknown). In an attribute sweep, a named
    property not claimed at one set is left out there, with the reason, not a configuration error."""
    where = _key_text(at + ("proofs",))
    if requested == "all" or not isinstance(requested, list) or not all(isinstance(n, str) for n in requested):
        got = P.attempt(at + ("proofs",), policy.required_properties, op, requested, resolved, where, standard)
        return ((), ()) if got is _BAD else got
    declared = [p.name for p in op.properties]
    out, left = [], []
    for j, n in enumerate(requested):
        try:
            out += policy.required_properties(op, [n], resolved, where, standard)[0]
        except UsageError as exc:
            if sweep and "not claimed" in str(exc):
                left.append(f"{n} is not claimed at this attribute set")
            else:
                P.add(at + ("proofs", j), _suggest(str(exc), _near(n, declared)))
    return tuple(out), tuple(left)


def _undeclared(op, requested, at: tuple, P: _Problems) -> None:
    """Record each name of `proofs` that op does not declare (where its attributes, which the other errors of
    a property depend on, are wrong)."""
    if not isinstance(requested, list):
        return
    declared = [p.name for p in op.properties]
    for j, n in enumerate(requested):
        if isinstance(n, str) and n not in declared:
            message = f"{op.name} declares no property {n!r}; declared: {choices(declared)}"
            P.add(at + ("proofs", j), _suggest(f"{_key_text(at + ('proofs',))}: {message}", _near(n, declared)))


def _pythonpath(data: dict, P: _Problems, base_dir: str) -> tuple[str, ...]:
    """The configuration's `pythonpath`, absolute (["."], its own directory, where it gives none)."""
    given = data.get("pythonpath", ["."])
    if not isinstance(given, list) or not all(isinstance(p, str) and p for p in given):
        P.add(
            ("pythonpath",),
            f"must be a list of directories (strings), relative to the configuration file (got {given!r})",
        )
        return ()
    out = []
    for j, p in enumerate(given):
        full = os.path.normpath(os.path.join(base_dir, os.path.expanduser(p)))
        if not os.path.isdir(full):
            P.add(("pythonpath", j), f"{p!r} is not a directory (read from the configuration file's: {full})")
        elif full not in out:
            out.append(full)
    return tuple(out)


def parse(
    data: dict, source: str, *, file: str | None = None, lines: dict | None = None, prefix: tuple = (), base_dir=None
) -> GateConfig:
    """The checks of a configuration read as `data` (a TOML document, or [tool.opcert] of one).

    Every error is found in this one reading and raised together (ConfigErrors): file is the file as given
    (source where None), lines its toml_lines.key_lines (prefix: the path of [tool.opcert] in it), base_dir
    the directory relative c:PATHs and `pythonpath` are read from (None: the working directory)."""
    P = _Problems(file or source, lines, prefix)
    for key in data:
        if key not in TOP_KEYS:
            P.add((key,), _unknown_key(key, TOP_KEYS) + " (checks are [[check]] tables)")
    pythonpath = _pythonpath(data, P, base_dir or os.getcwd())
    raw = data.get("check")
    checks: list[Check] = []
    if not raw:
        P.add(("check",), "no [[check]] tables: nothing to gate")
    elif not isinstance(raw, list):
        P.add(("check",), "must be an array of tables ([[check]])")
    else:
        for i, r in enumerate(raw):
            checks += parse_check(r, i, source, P, base_dir)
    P.raise_if_any()
    if file is not None:
        checks = [dataclasses.replace(c, config_file=file) for c in checks]
    return GateConfig(checks, source, path=file, pythonpath=pythonpath, pythonpath_given="pythonpath" in data)


def load_config(path=None) -> GateConfig:
    """The configuration at `path`; else ./opcert.toml; else [tool.opcert] of
    ./pyproject.toml; else the built-in default.

    Every error of the file is raised at once (ConfigErrors: file, line, key and message each). Relative
    c:PATH targets and `pythonpath` are read from the file's directory; where a check's target is a
    module:function, the file's pythonpath goes on sys.path and PYTHONPATH (gating.paths)."""
    if path is None:
        if os.path.exists("opcert.toml"):
            path = "opcert.toml"
        elif os.path.exists("pyproject.toml"):
            path = "pyproject.toml"
            if _tool_table(_read(path)[0], path) is None:
                return default_config()
        else:
            return default_config()
    path = os.fspath(path)
    data, text = _read(path)
    base_dir = os.path.dirname(os.path.abspath(path))
    lines = toml_lines.key_lines(text)
    if os.path.basename(path) == "pyproject.toml":
        tool = _tool_table(data, path)
        if tool is None:
            raise ConfigErrors([ConfigProblem(path, None, "tool.opcert", "missing: no [tool.opcert] table")])
        config = parse(
            tool, f"{path} [tool.opcert]", file=path, lines=lines, prefix=("tool", "opcert"), base_dir=base_dir
        )
    else:
        config = parse(data, path, file=path, lines=lines, base_dir=base_dir)
    if any(paths.module_of(c.target) for c in config.checks):
        ours = paths.activate(config.pythonpath, front=config.pythonpath_given)
        config.checks = [
            dataclasses.replace(c, pythonpath=paths.providing(c.target, ours)) if paths.module_of(c.target) else c
            for c in config.checks
        ]
    return config


def _tool_table(data: dict, path: str) -> dict | None:
    """[tool.opcert] of a pyproject.toml (None where there is none)."""
    tool = data.get("tool")
    if tool is None:
        return None
    if not isinstance(tool, dict):
        raise UsageError(f"{path}: tool: must be a table ([tool])")
    got = tool.get("opcert")
    if got is not None and not isinstance(got, dict):
        raise UsageError(
            f"{path}: tool.opcert: must be a table ([tool.opcert] with [[tool.opcert.check]]); got {got!r}"
        )
    return got


def _read(path: str) -> tuple[dict, str]:
    """The TOML document at path, and its text."""
    if os.path.isdir(path):
        raise UsageError(f"{path}: is a directory; give an opcert.toml or pyproject.toml file")
    try:
        with open(path, "rb") as f:
            raw = f.read()
        text = raw.decode("utf-8")
        return tomllib.loads(text), text
    except FileNotFoundError:
        raise UsageError(f"{path}: no such configuration file") from None
    except PermissionError:
        raise UsageError(f"{path}: cannot be read (permission denied)") from None
    except OSError as exc:
        raise UsageError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    except UnicodeDecodeError as exc:
        raise UsageError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start}); TOML files are UTF-8") from None
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"{path}: not valid TOML: {exc}") from None


# Budgets of the built-in gate, from the error analysis of opcert's implementation
# (README, 'What the implementation achieves'): one rounding after binary64 for
# outputs of at most 24 bits; libm's tanh and two more roundings in binary64.
DEFAULT_BUDGET = {"float16": 0.5 + 2**-20, "bfloat16": 0.5 + 2**-20, "float32": 0.5 + 2**-20}


# why proofs = "all" does not require the layout property of opcert's own implementation (it is still
# measured: `opcert accuracy OP --target opcert`, or proofs = ["layout"], give its verdict)
OWN_LAYOUT = (
    "opcert's code converts its input to one contiguous binary64 array and maps it with NumPy's ufuncs; "
    "Python makes its calls one at a time, so its short calls cannot be enumerated and the verdict could "
    "only be `checked`: `opcert accuracy OP --target opcert` reports it; every other target is held to it"
)


def default_config() -> GateConfig:
    """The whole catalog against opcert's implementation: exhaustive for the
    16-bit formats, sampled for float32 and float64, every declared proof
    (except where the operator declares why not, Operator.own_exceptions)."""
    checks = []
    for op in operators():
        proofs, left = policy.required_properties(op, "all", resolve(op))

        def check(dtypes, mode, budget, op=op, proofs=proofs, left=left):
            found = {n: op.own_exceptions[(n, d)] for n in proofs for d in dtypes if (n, d) in op.own_exceptions}
            if "layout" in proofs:
                found["layout"] = OWN_LAYOUT
            flush = [op.own_exceptions[("subnormals", d)] for d in dtypes if ("subnormals", d) in op.own_exceptions]
            left_flush = tuple(
                f"subnormal outputs flushed to zero in {', '.join(dtypes)} are counted, not failed: {why}"
                for why in flush
            )
            return Check(
                op.name,
                dtypes,
                "opcert",
                mode,
                max_ulp=budget,
                subnormals="flush-allowed" if flush else "strict",
                proofs=tuple(n for n in proofs if n not in found),
                proofs_left_out=tuple(left)
                + left_flush
                + tuple(
                    f"{n} in {', '.join(dtypes)}: not required of opcert's own code here: {why}"
                    for n, why in found.items()
                ),
            )

        checks.append(check(("float16", "bfloat16"), "exhaustive", DEFAULT_BUDGET["float16"]))
        checks.append(check(("float32",), "sample", DEFAULT_BUDGET["float32"]))
        checks.append(check(("float64",), "sample", op.budget64))
    for op in tensor_operators():
        held = op.with_values(op.standard(None))  # the primary standard at its defaults
        proofs = tuple(p.name for p in op.properties if p.not_claimed(held) is None)
        evidence = TENSOR_EVIDENCE if op.hard_cases == "exp" else MOMENTS_EVIDENCE
        evidence = (evidence, *(p.not_claimed(held) for p in op.properties if p.not_claimed(held) is not None))
        checks.append(
            Check(
                op.name,
                ("float16", "bfloat16", "float32"),
                "opcert",
                "sample",
                max_ulp=DEFAULT_BUDGET["float32"],
                proofs=proofs,
                accept_sampled_evidence=True,
                proofs_left_out=evidence,
            )
        )
        checks.append(
            Check(
                op.name,
                ("float64",),
                "opcert",
                "sample",
                max_ulp=op.budget64(LONGEST_ROW),
                proofs=proofs,
                accept_sampled_evidence=True,
                proofs_left_out=evidence,
            )
        )
    for op in binary_operators():
        proofs = tuple(p.name for p in op.properties_of(op.primary))
        for dtypes, budget in (
            (("float16", "bfloat16", "float32"), DEFAULT_BUDGET["float32"]),
            (("float64",), op.budget64),
        ):
            checks.append(
                Check(
                    op.name,
                    dtypes,
                    "opcert",
                    "sample",
                    max_ulp=budget,
                    proofs=proofs,
                    accept_sampled_evidence=True,
                    proofs_left_out=(BINARY_EVIDENCE,),
                )
            )
    for op in predicate_operators():
        # every 16-bit pattern, float32 and float64 sampled (every float32 pattern: --exhaustive, about a minute)
        checks.append(
            Check(
                op.name,
                ("float16", "bfloat16", "float32", "float64"),
                "opcert",
                "sample",
                max_ulp=0.0,
                proofs=tuple(p.name for p in op.properties_of(op.primary)),
                accept_sampled_evidence=True,
                proofs_left_out=(PREDICATE_EVIDENCE,),
            )
        )
    return GateConfig(checks, "built-in default")
