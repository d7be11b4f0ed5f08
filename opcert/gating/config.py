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
    accept_sampled_evidence = false   # true: a property checked on samples counts as established
    isolation = "process"      # or "none": run the target in opcert's own process
    target_timeout = 600       # seconds per target call (isolated targets)
    layout_samples = 1024      # inputs per layout where the layouts are not enumerated (the `layout` property;
                               # default 1024, 1000000 in a float32 sweep of the whole format)
    isa = "all"                # one check per ISA level the host has (torch, NumPy, ...), or one level
    standard = "onnx"          # whose definition; default: the operator's primary
    name = "tanh-fp16"         # optional label
    [check.attrs]
    alpha = 0.2

Every value goes through opcert.policy, the validator the CLI, the API and
the pytest plugin use too. Every error names the file, the key and what is
allowed.
"""

from __future__ import annotations

import dataclasses
import os
import tomllib
from dataclasses import dataclass, field

from opcert import policy
from opcert.errors import UsageError, choices
from opcert.formats import FLOAT_FORMATS
from opcert.isa import check_isa, levels
from opcert.runtime_table import isa_switches
from opcert.spec import get_operator, get_tensor_operator, is_tensor_operator, operators, tensor_operators
from opcert.spec.attrs import resolve
from opcert.targets import BUILTIN, check_name
from opcert.verify.accuracy.attr_sweep import attribute_sets
from opcert.verify.tensor.measure import LONGEST_ROW

MODES = ("exhaustive", "sample")

# Every key of a [[check]] table: (type, default, meaning). The keys the reader accepts are these, and the
# documentation's configuration reference is generated from them (tools/docs_pages.py): one list for both.
KEY_DOCS = {
    "op": (
        'string, list of strings, or "*"',
        "required",
        'the operator(s), by ONNX or DirectML name, case-insensitive; "*": the element-wise catalog (the '
        "tensor operators Softmax, LogSoftmax, Hardmax by name: sampled rows, no attrs, attr_sweep, isa or "
        "layout_samples)",
    ),
    "dtypes": (
        "list of strings",
        "every float format",
        "float16, bfloat16, float32, float64 (integer types for Shrink through the API)",
    ),
    "target": (
        "string",
        '"opcert"',
        f"{', '.join(BUILTIN)}, module:function (a Python callable), c:PATH:SYMBOL (a C kernel)",
    ),
    "mode": (
        '"sample" or "exhaustive"',
        '"sample"',
        "exhaustive: every input (16-bit formats; float32: all 2^32); float64 is always sampled",
    ),
    "samples": (
        "integer > 0",
        "100,000 (float32); 1,000,000 (float64; 10,000 for Gelu)",
        "stratified samples with hard cases, in sample mode",
    ),
    "seed": ("integer >= 0", "0", "the sample's seed"),
    "max_ulp": ("number >= 0", "1.0", "the budget: the largest ULP error allowed"),
    "signed_zero": ('"strict" or "ignore"', '"strict"', "whether a zero of the wrong sign fails the check"),
    "subnormals": (
        '"strict" or "flush-allowed"',
        '"strict"',
        "flush-allowed: a subnormal result flushed to zero is counted apart, not failed",
    ),
    "proofs": (
        'list of property names, or "all"',
        "[] (none)",
        "properties required of the target (range, monotonic, ..., layout); each must be established "
        "(proved, or enumerated over every input) or the check fails",
    ),
    "accept_sampled_evidence": (
        "boolean",
        "false",
        'true: a property checked on samples only ("checked") counts as established',
    ),
    "standard": ("string", "the operator's primary", "whose definition: onnx, directml, sonnx"),
    "name": ("string", "OP DTYPE TARGET", "a label for the check in reports"),
    "attrs": ("table", "the standard's defaults", "attribute values, by ONNX or DirectML name ([check.attrs])"),
    "attr_sweep": (
        "boolean",
        "false",
        "one check per attribute set: every standard's defaults, ONNX's backend "
        "test values and a grid over each attribute (no attrs with it; float32 sampled)",
    ),
    "isolation": (
        '"process" or "none"',
        '"process"',
        "run the target in a supervised worker process (a crash is a finding) or in opcert's own",
    ),
    "target_timeout": ("number of seconds > 0", "none", "fail a target call that does not return in time"),
    "layout_samples": (
        "integer > 0",
        "1,024 (1,000,000 in a float32 sweep of the whole format)",
        "inputs per layout where the layouts are not enumerated (the layout property)",
    ),
    "isa": (
        "string",
        "the host's",
        '"all": one check per ISA level the host has '
        f'({", ".join(sw.library for sw in isa_switches())}); or one level\'s name; "host": as the host picks',
    ),
}
KEYS = frozenset(KEY_DOCS)


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

    def label(self, dtype: str) -> str:
        base = self.name or f"{self.op} {dtype} {self.target}"
        if self.isa:
            base += f" [isa {self.isa}]"
        if not self.attr_set:
            return base
        shown = ", ".join(f"{k}={v}" for k, v in self.attrs)
        return f"{base} [{self.attr_set}: {shown}]"

    def mode_for(self, dtype: str) -> str:
        # exhaustive float64 is not a thing: 2^64 inputs; a tensor operator's exhaustive pass is over every
        # pair of 16-bit values (its float32 rows are sampled)
        if dtype == "float64" or (dtype == "float32" and is_tensor_operator(self.op)):
            return "sample"
        return self.mode

    def identity(self, dtype: str) -> dict:
        """Everything that identifies a (check, dtype): what `opcert diff` keys on."""
        return {
            "op": self.op,
            "dtype": dtype,
            "target": self.target,
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
        }


@dataclass
class GateConfig:
    checks: list[Check] = field(default_factory=list)
    source: str = "built-in default"


def _err(source, where, msg):
    raise UsageError(f"{source}: {where}: {msg}")


def _ops(raw, where, source) -> list:
    spec = raw["op"]
    if spec == "*":
        return operators()
    names = spec if isinstance(spec, list) else [spec]
    if not names or not all(isinstance(n, str) for n in names):
        _err(source, f"{where}.op", 'must be an operator name, a list of names, or "*" (the whole catalog)')
    out = []
    for n in names:
        try:
            out.append(get_tensor_operator(n)[0] if is_tensor_operator(n) else get_operator(n))
        except UsageError as exc:
            _err(source, f"{where}.op", str(exc))
    return out


def _tensor_proofs(op, raw, where, source, base: Check, refused: dict) -> tuple[str, ...]:
    """The required properties of a tensor operator's check (sampled rows: verify.tensor.measure); `refused`:
    the keys that concern element-wise kernels only, each refused by name where it is given."""
    for key, given in refused.items():
        if given:
            _err(
                source,
                f"{where}.{key}",
                f"{op.name} is a tensor operator: {key} applies to the element-wise "
                "operators (a tensor operator has no attributes; its rows are sampled)",
            )
    if base.mode == "exhaustive" and not any(d in ("float16", "bfloat16") for d in base.dtypes):
        _err(
            source,
            f"{where}.mode",
            f"{op.name} is a tensor operator: exhaustive adds every row of two 16-bit "
            'values (float16, bfloat16); its float32 and float64 rows are sampled: mode = "sample"',
        )
    requested = raw.get("proofs", [])
    declared = [p.name for p in op.properties]
    if requested == "all":
        proofs = tuple(declared)
    elif isinstance(requested, list) and all(isinstance(n, str) for n in requested):
        extra = [n for n in requested if n not in declared]
        if extra:
            _err(
                source, f"{where}.proofs", f"{op.name} declares no property {extra[0]!r}; declared: {choices(declared)}"
            )
        proofs = tuple(requested)
    else:
        _err(source, f"{where}.proofs", f'must be a list of property names, or "all" (got {requested!r})')
    return proofs


def parse_check(raw, i, source) -> list[Check]:
    where = f"check[{i}]"
    if not isinstance(raw, dict):
        _err(source, where, "must be a table ([[check]])")
    unknown = sorted(set(raw) - KEYS)
    if unknown:
        _err(source, f"{where}.{unknown[0]}", f"unknown key; allowed: {choices(sorted(KEYS))}")
    if "op" not in raw:
        _err(source, where, "missing key 'op'")
    ops = _ops(raw, where, source)
    dtypes = raw.get("dtypes", list(FLOAT_FORMATS))
    if isinstance(dtypes, str):
        dtypes = [dtypes]
    if not isinstance(dtypes, list) or not dtypes or not all(isinstance(d, str) for d in dtypes):
        _err(source, f"{where}.dtypes", f"must be a non-empty list of dtype names; allowed: {choices(FLOAT_FORMATS)}")
    for d in dtypes:
        if d not in FLOAT_FORMATS:
            _err(source, f"{where}.dtypes", f"unknown dtype {d!r}; allowed: {choices(FLOAT_FORMATS)}")
    if len(set(dtypes)) != len(dtypes):
        _err(source, f"{where}.dtypes", "lists a dtype twice")
    try:
        try:
            target = check_name(raw.get("target", "opcert"))
        except UsageError as exc:
            raise UsageError(f"{where}.target: {exc}") from None
        mode = policy.choice(raw.get("mode", "sample"), f"{where}.mode", MODES)
        samples = policy.samples(raw["samples"], f"{where}.samples") if raw.get("samples") is not None else None
        pol = policy.make_policy(
            raw.get("max_ulp", 1.0),
            raw.get("signed_zero", "strict"),
            raw.get("subnormals", "strict"),
            raw.get("accept_sampled_evidence", False),
            where,
        )
        seed = policy.seed(raw.get("seed", 0), f"{where}.seed")
        isolation = policy.choice(raw.get("isolation", "process"), f"{where}.isolation", policy.ISOLATION)
        timeout = (
            policy.timeout(raw["target_timeout"], f"{where}.target_timeout")
            if raw.get("target_timeout") is not None
            else None
        )
        layout_samples = (
            policy.samples(raw["layout_samples"], f"{where}.layout_samples")
            if raw.get("layout_samples") is not None
            else None
        )
        isa_levels = _isa_levels(raw.get("isa"), target, where)
    except UsageError as exc:
        raise UsageError(f"{source}: {exc}") from None
    name = raw.get("name", "")
    if not isinstance(name, str):
        _err(source, f"{where}.name", f"must be a string (got {name!r})")
    attrs = raw.get("attrs", {})
    if not isinstance(attrs, dict):
        _err(source, f"{where}.attrs", "must be a table of name = value")
    if attrs and len(ops) > 1:
        _err(source, f"{where}.attrs", "attributes apply to one operator; give op as a single name")
    standard = raw.get("standard")
    sweep = raw.get("attr_sweep", False)
    if not isinstance(sweep, bool):
        _err(source, f"{where}.attr_sweep", f"must be true or false (got {sweep!r})")
    if sweep and attrs:
        _err(source, f"{where}.attr_sweep", "chooses the attribute values itself; give no [check.attrs] with it")
    if sweep and any(d == "float32" for d in dtypes) and mode == "exhaustive":
        _err(
            source,
            f"{where}.attr_sweep",
            "runs one check per attribute set: float32 is sampled there "
            '(mode = "sample"); sweep all 2^32 float32 inputs at one attribute set with [check.attrs]',
        )
    out = []
    for op in ops:
        if standard is not None:
            if not isinstance(standard, str):
                _err(source, f"{where}.standard", f"must be a string (got {standard!r})")
            try:
                op.standard(standard)
            except UsageError as exc:
                _err(source, f"{where}.standard", str(exc))
        base = Check(
            op.name,
            tuple(dtypes),
            target,
            mode,
            samples,
            pol.max_ulp,
            pol.signed_zero,
            pol.subnormals,
            standard=standard,
            name=name,
            seed=seed,
            accept_sampled_evidence=pol.accept_sampled_evidence,
            isolation=isolation,
            target_timeout=timeout,
        )
        if not op.elementwise:
            refused = {
                "attrs": bool(attrs),
                "attr_sweep": sweep,
                "isa": bool(isa_levels),
                "layout_samples": layout_samples is not None,
            }
            out.append(dataclasses.replace(base, proofs=_tensor_proofs(op, raw, where, source, base, refused)))
            continue
        for set_attrs, label in _attribute_sets(op, attrs, sweep, standard, where, source):
            try:
                resolved = resolve(op, set_attrs, standard)
            except UsageError as exc:
                if sweep:  # a grid value outside the attribute's domain is no attribute set
                    continue
                _err(source, f"{where}.attrs", str(exc))
            proofs, left = _required(op, raw.get("proofs", []), resolved, sweep, where, source, standard)
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
    if isa_levels:
        out = [dataclasses.replace(c, isa=lv) for c in out for lv in isa_levels]
    return out


# the built-in gate's tensor checks: their row properties are decided on samples (opcert's code over every
# 16-bit pair takes too long for a gate: bench/README.md, 'Figures behind choices in the code'), and the gate
# accepts that evidence, which every report shows per property
TENSOR_EVIDENCE = (
    "row properties of the code are checked on sampled rows, not proved: the built-in gate accepts "
    "that sampled evidence (`opcert accuracy OP --dtype float16 --target opcert --exhaustive` decides "
    "them over every pair of 16-bit values, about 45 minutes on 2 cores; `opcert prove OP` proves "
    "them for the standards' formula over the reals)"
)


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


def _attribute_sets(op, attrs, sweep, standard, where, source) -> list:
    """(attributes, label) of each check for op: the given attributes, or with attr_sweep = true
    every set of verify.accuracy.attr_sweep."""
    if not sweep:
        return [(attrs, "")]
    if not any(op.standard(standard).has(a.name) for a in op.attributes):
        _err(source, f"{where}.attr_sweep", f"{op.name} has no attributes to sweep")
    return [(s.attrs, s.label) for s in attribute_sets(op, standard)]


def _required(op, requested, resolved, sweep, where, source, standard):
    """The required properties and the notes on those left out. In an attribute sweep, a named
    property not claimed at one set is left out there, with the reason, not a configuration error."""
    try:
        return policy.required_properties(op, requested, resolved, f"{where}.proofs", standard)
    except UsageError as exc:
        if not sweep or requested == "all" or "not claimed" not in str(exc):
            raise UsageError(f"{source}: {exc}") from None
    every, _ = policy.required_properties(op, "all", resolved, f"{where}.proofs", standard)
    return (
        tuple(n for n in requested if n in every),
        tuple(f"{n} is not claimed at this attribute set" for n in requested if n not in every),
    )


def parse(data: dict, source: str) -> GateConfig:
    unknown = sorted(set(data) - {"check"})
    if unknown:
        _err(source, unknown[0], "unknown key; allowed: check (an array of tables: [[check]])")
    raw = data.get("check")
    if not raw:
        _err(source, "check", "no [[check]] tables: nothing to gate")
    if not isinstance(raw, list):
        _err(source, "check", "must be an array of tables ([[check]])")
    return GateConfig([c for i, r in enumerate(raw) for c in parse_check(r, i, source)], source)


def load_config(path=None) -> GateConfig:
    """The configuration at `path`; else ./opcert.toml; else [tool.opcert] of
    ./pyproject.toml; else the built-in default."""
    if path is None:
        if os.path.exists("opcert.toml"):
            path = "opcert.toml"
        elif os.path.exists("pyproject.toml"):
            data = _read("pyproject.toml")
            tool = _tool_table(data, "pyproject.toml")
            if tool is not None:
                return parse(tool, "pyproject.toml [tool.opcert]")
        if path is None:
            return default_config()
    path = os.fspath(path)
    data = _read(path)
    if path.endswith("pyproject.toml"):
        tool = _tool_table(data, path)
        if tool is None:
            _err(path, "tool.opcert", "missing: no [tool.opcert] table")
        return parse(tool, f"{path} [tool.opcert]")
    return parse(data, path)


def _tool_table(data: dict, path: str) -> dict | None:
    """[tool.opcert] of a pyproject.toml (None where there is none)."""
    tool = data.get("tool")
    if tool is None:
        return None
    if not isinstance(tool, dict):
        _err(path, "tool", "must be a table ([tool])")
    got = tool.get("opcert")
    if got is not None and not isinstance(got, dict):
        _err(path, "tool.opcert", f"must be a table ([tool.opcert] with [[tool.opcert.check]]); got {got!r}")
    return got


def _read(path: str) -> dict:
    if os.path.isdir(path):
        raise UsageError(f"{path}: is a directory; give an opcert.toml or pyproject.toml file")
    try:
        with open(path, "rb") as f:
            return tomllib.load(f)
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
        proofs = tuple(p.name for p in op.properties)
        checks.append(
            Check(
                op.name,
                ("float16", "bfloat16", "float32"),
                "opcert",
                "sample",
                max_ulp=DEFAULT_BUDGET["float32"],
                proofs=proofs,
                accept_sampled_evidence=True,
                proofs_left_out=(TENSOR_EVIDENCE,),
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
                proofs_left_out=(TENSOR_EVIDENCE,),
            )
        )
    return GateConfig(checks, "built-in default")
