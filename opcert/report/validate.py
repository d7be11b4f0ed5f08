"""Reading a gate result back (`opcert report`, `opcert diff`, `opcert gate --baseline`): what the file may hold.

A gate result is read as evidence, so nothing in it is taken on trust:

- the JSON is parsed within a nesting bound (MAX_DEPTH levels; a gate result nests about 10): deeper input
  is refused, including input so deep that Python's parser gives up (RecursionError);
- the schema must be one this code writes (SCHEMAS);
- every figure (ULP errors, counts, times, the budget) must be a finite number >= 0;
- every check's status is judged again from its figures, by the gate's own judgment (gating.run.judge,
  judge_rows, judge_properties, through gating.recheck: the gate's layer is above this one) applied to the
  file's policy, accuracy and proof verdicts. A check whose file says "pass" (or "skipped") where its
  figures fail it, or "pass" where they skip it, is refused: the file is inconsistent (edited by hand, or by
  a tool that does not judge), and a report of it would show a pass no measurement gave. A check that says
  "fail" stands: a failure can come from what the file holds no figures for (a worker lost, an internal
  error), and rendering it opens nothing; so does a "skipped" over figures that pass (it claims less than
  they show, and the gate's verdict does not count it);
- every proof verdict's `ok` is what its status gives (verify.result.PropertyResult.ok).

Every refusal is a UsageError (exit 2) naming the file, the JSON path and what is allowed.
"""

from __future__ import annotations

import json
import math
from types import SimpleNamespace

from opcert.errors import UsageError
from opcert.report.text import one_line
from opcert.verify.result import PropertyResult

MAX_DEPTH = 64


def _where(path: str, at: str) -> str:
    return f"{one_line(path, 300)}: {at}"


def parse(text: str, path: str):
    """json.loads within MAX_DEPTH levels of nesting; UsageError otherwise (never RecursionError)."""
    too_deep = (
        f"JSON nested deeper than {MAX_DEPTH} levels; an opcert gate result nests at most {MAX_DEPTH} "
        "(arrays and objects within each other)"
    )
    try:
        data = json.loads(text)
    except RecursionError:
        raise UsageError(_where(path, too_deep)) from None
    except json.JSONDecodeError as exc:
        raise UsageError(_where(path, f"not JSON: {exc}")) from None
    where = _too_deep(data)
    if where is not None:
        raise UsageError(_where(path, f"{where}: {too_deep}"))
    return data


def _too_deep(data) -> str | None:
    """The JSON path of the first value nested deeper than MAX_DEPTH, or None (iterative: no recursion)."""
    stack = [(data, 1, "$")]
    while stack:
        value, depth, at = stack.pop()
        if not isinstance(value, (dict, list)):
            continue
        if depth > MAX_DEPTH:
            return at if len(at) <= 200 else at[:200] + "\u2026"
        items = value.items() if isinstance(value, dict) else enumerate(value)
        for k, v in items:
            if isinstance(v, (dict, list)):
                stack.append((v, depth + 1, f"{at}[{k}]" if isinstance(k, int) else f"{at}.{one_line(k, 40)}"))
    return None


# The schema versions this code writes, and so reads (gating.run.SCHEMA: tests/test_report_inputs.py holds
# them equal; this layer is below the gate's)
SCHEMAS = ("opcert.gate/1",)


def check_schema(data: dict, path: str) -> None:
    allowed = SCHEMAS
    schema = data.get("schema")
    if schema not in allowed:
        raise UsageError(
            _where(
                path,
                f"schema: {one_line(repr(schema), 200)} is not a gate result this opcert "
                f"reads; allowed: {', '.join(allowed)}",
            )
        )


# ---- figures ------------------------------------------------------------------------------------------


def _figure(
    obj: dict, key: str, at: str, path: str, integer: bool = False, nullable: bool = False, infinite: bool = False
) -> None:
    """obj[key], where present, is a finite number >= 0 (an integer where `integer`; null where `nullable`;
    +inf too where `infinite`: a ULP error is infinite where a NaN meets a number in another layout)."""
    if not isinstance(obj, dict) or key not in obj:
        return
    v = obj[key]
    if v is None and nullable:
        return
    what = (
        ("a non-negative integer" if integer else "a finite number >= 0")
        + (" or null" if nullable else "")
        + (" or Infinity" if infinite else "")
    )
    ok = (
        isinstance(v, int) and not isinstance(v, bool)
        if integer
        else isinstance(v, (int, float))
        and not isinstance(v, bool)
        and (math.isfinite(v) or (infinite and v == math.inf))
    )
    if not ok or v < 0:
        raise UsageError(_where(path, f"{at}.{key}: {one_line(repr(v), 100)} is not allowed; must be {what}"))


_COUNTS = (
    "inputs_checked",
    "correctly_rounded",
    "nan_mismatches",
    "inf_mismatches",
    "signed_zero_mismatches",
    "subnormal_flushes",
    "special_mismatches",
    "elements",
    "rows",
)


def _verdict_figures(p, at: str, path: str) -> None:
    if isinstance(p, dict):
        _figure(p, "elapsed_s", at, path)
        for k in ("inputs_checked", "violations"):
            _figure(p, k, at, path, integer=True, nullable=True)


def check_figures(data: dict, path: str) -> None:
    """Every figure a report shows or a verdict depends on is a finite number >= 0."""
    _figure(data, "elapsed_s", "gate", path)
    for i, c in enumerate(data["checks"]):
        w = f"checks[{i}]"
        _figure(c, "elapsed_s", w, path)
        _figure(c.get("policy"), "max_ulp", f"{w}.policy", path)
        acc = c.get("accuracy")
        if isinstance(acc, dict):
            a = f"{w}.accuracy"
            _figure(acc, "max_ulp", a, path, nullable=True, infinite=True)
            _figure(acc, "max_ulp_distance", a, path, integer=True, nullable=True)
            _figure(acc, "elapsed_s", a, path)
            _figure(acc, "allowed_ulp", a, path)
            for k in _COUNTS:
                _figure(acc, k, a, path, integer=True)
            replay = acc.get("replay")
            if isinstance(replay, dict):
                for k in ("differ", "inputs"):
                    _figure(replay, k, f"{a}.replay", path, integer=True)
            for j, p in enumerate(acc.get("properties") or []):
                _verdict_figures(p, f"{a}.properties[{j}]", path)
        for j, p in enumerate(c.get("proofs") or []):
            _verdict_figures(p, f"{w}.proofs[{j}]", path)


# ---- statuses -----------------------------------------------------------------------------------------


def _verdict_ok(p: dict) -> bool:
    """PropertyResult.ok, read from a verdict's dict."""
    return PropertyResult.ok.fget(SimpleNamespace(expected=p.get("expected", "holds"), status=p.get("status")))


def check_statuses(data: dict, path: str, rejudge) -> None:
    """Every proof verdict's `ok` is what its status gives, and every check's status is what its figures
    give: rejudge(check dict) -> (status, reasons), the gate's own judgment (gating.recheck; this layer is
    below the gate's). A recorded failure stands; a recorded skip stands unless the figures fail the check."""
    for i, c in enumerate(data["checks"]):
        w = f"checks[{i}]"
        name = one_line(c.get("name"), 200)
        for j, p in enumerate(c.get("proofs") or []):
            if p.get("ok") != _verdict_ok(p):
                raise UsageError(
                    _where(
                        path,
                        f"{w}.proofs[{j}].ok ({name}): {p.get('ok')!r} contradicts its "
                        f"status {one_line(repr(p.get('status')), 100)}: a verdict is ok "
                        "only where its status establishes the property; the file is "
                        "inconsistent (edited by hand?) and is refused",
                    )
                )
        if c["status"] == "fail":
            continue
        try:
            status, reasons = rejudge(c)
        except Exception as exc:  # noqa: BLE001 - figures the judgment cannot read: the file is refused
            raise UsageError(
                _where(
                    path,
                    f"{w} ({name}): its figures cannot be judged ({type(exc).__name__}: "
                    f"{one_line(exc, 300)}); the file is inconsistent (edited by hand?) "
                    "and is refused",
                )
            ) from None
        # a pass must be what the figures give; a skip must not hide a failure (a skip over figures that pass
        # claims less than they show, and verifies nothing: the gate's verdict does not count it)
        if status != c["status"] and (c["status"] == "pass" or status == "fail"):
            why = "; ".join(reasons) or "nothing fails it"
            raise UsageError(
                _where(
                    path,
                    f"{w}.status ({name}): {c['status']!r} is not what its figures give "
                    f"({status!r}: {one_line(why, 1000)}); a check's status must follow "
                    "from its policy, accuracy and proofs: the file is inconsistent "
                    "(edited by hand?) and is refused",
                )
            )
