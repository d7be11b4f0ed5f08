"""Gate configuration: `opcert.toml`, or `[tool.opcert]` in pyproject.toml.

    [[check]]
    op = "Tanh"
    dtypes = ["float16", "float32"]
    target = "opcert"          # or onnxruntime, torch, onnx-reference, module:function
    mode = "exhaustive"        # or "sample"
    samples = 100000           # sample mode; default 100,000 (float32), 10,000 (float64)
    max_ulp = 1.0
    signed_zero = "strict"     # or "ignore"
    subnormals = "strict"      # or "flush-allowed"
    proofs = ["range", "monotonic"]   # or "all", or []; only where the target has a model (opcert)
    standard = "onnx"          # whose definition; default: the operator's primary
    name = "tanh-fp16"         # optional label
    [check.attrs]
    alpha = 0.2

Every error names the file, the key and what is allowed.
"""
from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field

from ..errors import UsageError, choices
from ..formats import FLOAT_FORMATS
from ..spec import get_operator, operators
from ..spec.attrs import resolve

KEYS = {"op", "dtypes", "target", "mode", "samples", "max_ulp", "signed_zero", "subnormals", "proofs",
        "standard", "name", "attrs", "seed"}
MODES = ("exhaustive", "sample")
SIGNED_ZERO = ("strict", "ignore")
SUBNORMALS = ("strict", "flush-allowed")


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

    def label(self, dtype: str) -> str:
        return self.name or f"{self.op} {dtype} {self.target}"

    def mode_for(self, dtype: str) -> str:
        # exhaustive float64 is not a thing: 2^64 inputs
        return "sample" if dtype == "float64" else self.mode


@dataclass
class GateConfig:
    checks: list[Check] = field(default_factory=list)
    source: str = "built-in default"


def _err(source, where, msg):
    raise UsageError(f"{source}: {where}: {msg}")


def _parse_check(raw, i, source) -> Check:
    where = f"check[{i}]"
    if not isinstance(raw, dict):
        _err(source, where, "must be a table ([[check]])")
    unknown = sorted(set(raw) - KEYS)
    if unknown:
        _err(source, f"{where}.{unknown[0]}", f"unknown key; allowed: {choices(sorted(KEYS))}")
    if "op" not in raw:
        _err(source, where, "missing key 'op'")
    try:
        op = get_operator(raw["op"])
    except UsageError as exc:
        _err(source, f"{where}.op", str(exc))
    dtypes = raw.get("dtypes", list(FLOAT_FORMATS))
    if isinstance(dtypes, str):
        dtypes = [dtypes]
    if not isinstance(dtypes, list) or not dtypes:
        _err(source, f"{where}.dtypes", "must be a non-empty list of dtype names")
    for d in dtypes:
        if d not in FLOAT_FORMATS:
            _err(source, f"{where}.dtypes", f"unknown dtype {d!r}; allowed: {choices(FLOAT_FORMATS)}")
    target = raw.get("target", "opcert")
    if not isinstance(target, str):
        _err(source, f"{where}.target", "must be a string")
    from ..targets import BUILTIN
    if target not in BUILTIN and ":" not in target:
        _err(source, f"{where}.target", f"unknown target {target!r}; allowed: {choices(BUILTIN)}, or module:function")
    mode = raw.get("mode", "sample")
    if mode not in MODES:
        _err(source, f"{where}.mode", f"{mode!r} is not allowed; allowed: {choices(MODES)}")
    samples = raw.get("samples")
    if samples is not None and (not isinstance(samples, int) or isinstance(samples, bool) or samples < 1):
        _err(source, f"{where}.samples", "must be a positive integer")
    max_ulp = raw.get("max_ulp", 1.0)
    if not isinstance(max_ulp, (int, float)) or isinstance(max_ulp, bool) or not max_ulp >= 0:
        _err(source, f"{where}.max_ulp", f"must be a number >= 0 (got {max_ulp!r})")
    sz = raw.get("signed_zero", "strict")
    if sz not in SIGNED_ZERO:
        _err(source, f"{where}.signed_zero", f"{sz!r} is not allowed; allowed: {choices(SIGNED_ZERO)}")
    sub = raw.get("subnormals", "strict")
    if sub not in SUBNORMALS:
        _err(source, f"{where}.subnormals", f"{sub!r} is not allowed; allowed: {choices(SUBNORMALS)}")
    proofs = raw.get("proofs", [])
    declared = [p.name for p in op.properties]
    if proofs == "all":
        proofs = declared
    if not isinstance(proofs, list):
        _err(source, f"{where}.proofs", "must be a list of property names, or \"all\"")
    for p in proofs:
        if p not in declared:
            _err(source, f"{where}.proofs", f"{op.name} declares no property {p!r}; declared: {choices(declared)}")
    standard = raw.get("standard")
    if standard is not None:
        try:
            op.standard(standard)
        except UsageError as exc:
            _err(source, f"{where}.standard", str(exc))
    attrs = raw.get("attrs", {})
    if not isinstance(attrs, dict):
        _err(source, f"{where}.attrs", "must be a table of name = value")
    try:
        resolve(op, attrs, standard)
    except UsageError as exc:
        _err(source, f"{where}.attrs", str(exc))
    name = raw.get("name", "")
    seed = raw.get("seed", 0)
    if not isinstance(seed, int):
        _err(source, f"{where}.seed", "must be an integer")
    return Check(op.name, tuple(dtypes), target, mode, samples, float(max_ulp), sz, sub, tuple(proofs), standard,
                 tuple(sorted(attrs.items())), str(name), seed)


def parse(data: dict, source: str) -> GateConfig:
    unknown = sorted(set(data) - {"check"})
    if unknown:
        _err(source, unknown[0], "unknown key; allowed: check (an array of tables: [[check]])")
    raw = data.get("check")
    if not raw:
        _err(source, "check", "no [[check]] tables: nothing to gate")
    if not isinstance(raw, list):
        _err(source, "check", "must be an array of tables ([[check]])")
    return GateConfig([_parse_check(c, i, source) for i, c in enumerate(raw)], source)


def load_config(path: str | None = None) -> GateConfig:
    """The configuration at `path`; else ./opcert.toml; else [tool.opcert] of
    ./pyproject.toml; else the built-in default."""
    if path is None:
        if os.path.exists("opcert.toml"):
            path = "opcert.toml"
        elif os.path.exists("pyproject.toml"):
            data = _read("pyproject.toml")
            tool = data.get("tool", {}).get("opcert")
            if tool is not None:
                return parse(tool, "pyproject.toml [tool.opcert]")
        if path is None:
            return default_config()
    data = _read(path)
    if path.endswith("pyproject.toml"):
        tool = data.get("tool", {}).get("opcert")
        if tool is None:
            _err(path, "tool.opcert", "missing: no [tool.opcert] table")
        return parse(tool, f"{path} [tool.opcert]")
    return parse(data, path)


def _read(path: str) -> dict:
    try:
        with open(path, "rb") as f:
            return tomllib.load(f)
    except FileNotFoundError:
        raise UsageError(f"{path}: no such configuration file") from None
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"{path}: not valid TOML: {exc}") from None


# Budgets of the built-in gate, from the error analysis of opcert's implementation
# (README, 'What the implementation achieves'): one rounding after binary64 for
# outputs of at most 24 bits; libm's tanh and two more roundings in binary64.
DEFAULT_BUDGET = {"float16": 0.5 + 2 ** -20, "bfloat16": 0.5 + 2 ** -20, "float32": 0.5 + 2 ** -20}
DEFAULT_BUDGET_FLOAT64 = {"Tanh": 1.0, "ScaledTanh": 2.0, "HardSigmoid": 0.5, "Shrink": 0.5, "Celu": 2.0}


def default_config() -> GateConfig:
    """The whole catalog against opcert's implementation: exhaustive for the
    16-bit formats, sampled for float32 and float64, every declared proof."""
    checks = []
    for op in operators():
        proofs = tuple(p.name for p in op.properties)
        checks.append(Check(op.name, ("float16", "bfloat16"), "opcert", "exhaustive",
                            max_ulp=DEFAULT_BUDGET["float16"], proofs=proofs))
        checks.append(Check(op.name, ("float32",), "opcert", "sample", max_ulp=DEFAULT_BUDGET["float32"],
                            proofs=proofs))
        checks.append(Check(op.name, ("float64",), "opcert", "sample", max_ulp=DEFAULT_BUDGET_FLOAT64[op.name],
                            proofs=proofs))
    return GateConfig(checks, "built-in default")
