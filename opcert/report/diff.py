"""Regressions between two gate results.

Checks are matched by everything that identifies them (operator, dtype,
target, attributes, standard, mode, samples, seed, policies, name). A
regression is: a check gone; passed or skipped and now failing; passed and
now skipped (coverage lost); fewer inputs checked; a max ULP error that went
up or became unknown (NaN, missing); more special-value mismatches; fewer
correctly rounded results (same inputs); a required property that was proved
and is not any more.
"""

from __future__ import annotations

import math

from opcert.errors import UsageError
from opcert.policy import SIGNED_ZERO, SUBNORMALS
from opcert.report import validate
from opcert.report.text import LIMIT, clip

STATUSES = ("pass", "fail", "skipped")


def load_gate(path: str, rejudge=None) -> dict:
    """A gate result read back, every field checked (report.validate): its schema, its nesting, its types,
    its figures (finite, >= 0) and, with rejudge (the gate's judgment on a check's dict: gating.recheck, whose
    load_gate the commands use), every check's status against its figures. UsageError (exit 2) otherwise."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except FileNotFoundError:
        raise UsageError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise UsageError(f"{path}: is a directory; give a gate result (opcert gate --json FILE)") from None
    except OSError as exc:
        raise UsageError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    except UnicodeDecodeError:
        raise UsageError(f"{path}: not UTF-8 text; give a gate result (opcert gate --json FILE)") from None
    data = validate.parse(text, path)
    if not isinstance(data, dict) or not str(data.get("schema", "")).startswith("opcert.gate/"):
        raise UsageError(f'{path}: not an opcert gate result (expected "schema": "opcert.gate/1")')
    validate.check_schema(data, path)
    _validate(data, path)
    validate.check_figures(data, path)
    if rejudge is not None:
        validate.check_statuses(data, path, rejudge)
    return data


_NUM = (int, float)


def _validate(data: dict, path: str) -> None:
    """Every key the reports and `opcert diff` read, with its type: a hand-edited or truncated file is a
    clear error naming the key (exit 2), never a traceback. The verdict (`ok`, `counts`) is recomputed
    from the checks' statuses: a file that says "ok": true over a failed check renders FAIL."""

    def bad(where, what):
        raise UsageError(f"{path}: {where}: {what} (is this file an opcert gate result?)")

    def need(obj, key, types, where, what, optional=False):
        if key not in obj:
            if optional:
                return None
            bad(f"{where}.{key}", f"missing; must be {what}")
        v = obj[key]
        if isinstance(v, bool) and bool not in (types if isinstance(types, tuple) else (types,)):
            bad(f"{where}.{key}", f"must be {what} (got {v!r})")
        if not isinstance(v, types):
            bad(f"{where}.{key}", f"must be {what} (got {type(v).__name__})")
        return v

    checks = need(data, "checks", list, "gate", "a list")
    for i, c in enumerate(checks):
        w = f"checks[{i}]"
        if not isinstance(c, dict):
            bad(w, "must be an object")
        for k in ("key", "name", "op", "dtype", "target", "mode", "command"):
            need(c, k, str, w, "a string", optional=k in ("command",))
        if c.get("status") not in STATUSES:
            bad(f"{w}.status", f"must be one of {', '.join(STATUSES)}")
        reasons = need(c, "reasons", list, w, "a list of strings")
        if not all(isinstance(r, str) for r in reasons):
            bad(f"{w}.reasons", "must be a list of strings")
        pol = need(c, "policy", dict, w, "an object")
        need(pol, "max_ulp", _NUM, f"{w}.policy", "a number")
        for k, allowed in (("signed_zero", SIGNED_ZERO), ("subnormals", SUBNORMALS)):
            if pol.get(k) not in allowed:
                bad(f"{w}.policy.{k}", f"must be one of {', '.join(allowed)}")
        required = need(pol, "proofs", list, f"{w}.policy", "a list of property names", optional=True) or []
        if not all(isinstance(n, str) for n in required):
            bad(f"{w}.policy.proofs", "must be a list of property names")
        need(pol, "accept_sampled_evidence", bool, f"{w}.policy", "true or false", optional=True)
        acc = need(c, "accuracy", (dict, type(None)), w, "an object or null", optional=True)
        if acc is not None:
            a = f"{w}.accuracy"
            need(acc, "max_ulp", _NUM + (type(None),), a, "a number or null", optional=True)
            for k in (
                "inputs_checked",
                "correctly_rounded",
                "nan_mismatches",
                "inf_mismatches",
                "signed_zero_mismatches",
                "subnormal_flushes",
            ):
                v = need(acc, k, int, a, "a non-negative integer", optional=True)
                if v is not None and v < 0:
                    bad(f"{a}.{k}", "must be a non-negative integer")
            hist = need(acc, "histogram", dict, a, "an object of label: count", optional=True)
            if hist is not None and not all(
                isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in hist.values()
            ):
                bad(f"{a}.histogram", "must map each label to a non-negative integer count")
            notes = need(acc, "notes", list, a, "a list of strings", optional=True) or []
            if not all(isinstance(n, str) for n in notes):
                bad(f"{a}.notes", "must be a list of strings")
            attrs = need(acc, "attrs", dict, a, "an object", optional=True) or {}
            for k, v in attrs.items():
                if not isinstance(v, dict) or not isinstance(v.get("exact"), str):
                    bad(f"{a}.attrs.{k}", 'must be an object with a string "exact"')
            if acc.get("max_ulp") is not None:
                for k in ("worst_input", "worst_output", "worst_reference"):
                    need(acc, k, _NUM + (str,), a, "a number")
                for k in ("worst_input_bits", "worst_output_bits", "worst_reference_bits"):
                    need(acc, k, str, a, "a string")
                # null where no exact value applies (a NaN output in another layout, an infinite exact value)
                need(acc, "worst_exact", (str, type(None)), a, "a string or null", optional=True)
                for k in (
                    "correctly_rounded",
                    "inputs_checked",
                    "nan_mismatches",
                    "inf_mismatches",
                    "signed_zero_mismatches",
                    "subnormal_flushes",
                ):
                    need(acc, k, int, a, "a non-negative integer")
        proofs = c.get("proofs")
        if proofs is not None:
            if not isinstance(proofs, list):
                bad(f"{w}.proofs", "must be a list of {name, status, ...} objects or null")
            for j, p in enumerate(proofs):
                pw = f"{w}.proofs[{j}]"
                if not isinstance(p, dict):
                    bad(pw, "must be an object")
                for k in ("name", "status"):
                    need(p, k, str, pw, "a string")
                need(p, "ok", bool, pw, "true or false")
                need(p, "method", str, pw, "a string", optional=True)
                need(p, "elapsed_s", _NUM, pw, "a number", optional=True)
    need(data, "provenance", dict, "gate", "an object", optional=True)
    need(data, "command", str, "gate", "a string", optional=True)
    need(data, "config", str, "gate", "a string")
    need(data, "elapsed_s", _NUM, "gate", "a number")
    counts = {st: sum(c["status"] == st for c in checks) for st in STATUSES}
    data["counts"] = counts
    data["ok"] = counts["fail"] == 0 and counts["pass"] > 0
    data["verdict_note"] = (
        None
        if counts["pass"] or counts["fail"]
        else "no check passed: every one was skipped, so the gate verified nothing"
    )


def _ulp(acc: dict):
    v = acc.get("max_ulp")
    return None if v is None or (isinstance(v, float) and math.isnan(v)) else v


def regressions(old: dict, new: dict) -> list[str]:
    out = []
    new_by = {c["key"]: c for c in new["checks"]}
    for o in old["checks"]:
        n = new_by.get(o["key"])
        name = clip(o["name"], 200)
        if n is None:
            out.append(
                f"{name}: missing from the new result (no check with the same operator, dtype, target, "
                "attributes, mode and policies)"
            )
            continue
        os_, ns = o["status"], n["status"]
        why = clip("; ".join(clip(r) for r in n["reasons"]), 2 * LIMIT)  # a target's text, clipped
        if os_ != "fail" and ns == "fail":
            out.append(f"{name}: {'passed' if os_ == 'pass' else 'was skipped'}, now fails: {why}")
        if os_ == "pass" and ns == "skipped":
            out.append(f"{name}: passed, now skipped (nothing verified): {why}")
        oa, na = o.get("accuracy") or {}, n.get("accuracy") or {}
        if oa.get("inputs_checked", 0) > na.get("inputs_checked", 0):
            out.append(f"{name}: inputs checked down from {oa['inputs_checked']:,} to {na.get('inputs_checked', 0):,}")
        ou, nu = _ulp(oa), _ulp(na)
        if ou is not None and nu is None and ns != "skipped":
            out.append(f"{name}: max ULP error was {ou!r}, now unknown ({na.get('max_ulp')!r})")
        elif ou is not None and nu is not None and nu > ou:
            out.append(
                f"{name}: max ULP error up from {ou!r} to {nu!r} "
                f"(worst input now {na.get('worst_input')!r}, {na.get('worst_input_bits')})"
            )
        for k in ("nan_mismatches", "inf_mismatches", "signed_zero_mismatches", "subnormal_flushes"):
            if na.get(k, 0) > oa.get(k, 0):
                out.append(f"{name}: {k.replace('_', ' ')} up from {oa.get(k, 0)} to {na[k]}")
        if (
            oa.get("correctly_rounded") is not None
            and na.get("correctly_rounded") is not None
            and oa.get("inputs_checked") == na.get("inputs_checked")
            and na["correctly_rounded"] < oa["correctly_rounded"]
        ):
            out.append(
                f"{name}: correctly rounded results down from {oa['correctly_rounded']:,} to "
                f"{na['correctly_rounded']:,}"
            )
        np_ = {p["name"]: p for p in n.get("proofs") or []}
        for p in o.get("proofs") or []:
            q = np_.get(p["name"])
            if p["status"] == "proved" and (q is None or q["status"] != "proved"):
                out.append(f"{name}: proof {p['name']} lost ({'missing' if q is None else q['status']})")
    return out
