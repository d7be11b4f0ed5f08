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

import json
import math

from ..errors import UsageError

STATUSES = ("pass", "fail", "skipped")


def load_gate(path: str) -> dict:
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except FileNotFoundError:
        raise UsageError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise UsageError(f"{path}: is a directory; give a gate result (opcert gate --json FILE)") from None
    except OSError as exc:
        raise UsageError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    except UnicodeDecodeError:
        raise UsageError(f"{path}: not UTF-8 text; give a gate result (opcert gate --json FILE)") from None
    except json.JSONDecodeError as exc:
        raise UsageError(f"{path}: not JSON: {exc}") from None
    if not isinstance(data, dict) or not str(data.get("schema", "")).startswith("opcert.gate/"):
        raise UsageError(f"{path}: not an opcert gate result (expected \"schema\": \"opcert.gate/1\")")
    _validate(data, path)
    return data


def _validate(data: dict, path: str) -> None:
    def bad(where, what):
        raise UsageError(f"{path}: {where}: {what} (is this file an opcert gate result?)")
    checks = data.get("checks")
    if not isinstance(checks, list):
        bad("checks", "must be a list")
    for i, c in enumerate(checks):
        w = f"checks[{i}]"
        if not isinstance(c, dict):
            bad(w, "must be an object")
        for k in ("key", "name"):
            if not isinstance(c.get(k), str):
                bad(f"{w}.{k}", "must be a string")
        if c.get("status") not in STATUSES:
            bad(f"{w}.status", f"must be one of {', '.join(STATUSES)}")
        if not isinstance(c.get("reasons", []), list):
            bad(f"{w}.reasons", "must be a list")
        acc = c.get("accuracy")
        if acc is not None and not isinstance(acc, dict):
            bad(f"{w}.accuracy", "must be an object or null")
        for k in ("max_ulp",):
            v = (acc or {}).get(k)
            if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float))):
                bad(f"{w}.accuracy.{k}", "must be a number or null")
        for k in ("inputs_checked", "correctly_rounded", "nan_mismatches", "inf_mismatches",
                  "signed_zero_mismatches", "subnormal_flushes"):
            v = (acc or {}).get(k, 0)
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                bad(f"{w}.accuracy.{k}", "must be a non-negative integer")
        proofs = c.get("proofs")
        if proofs is not None and (not isinstance(proofs, list) or
                                   not all(isinstance(p, dict) and isinstance(p.get("name"), str)
                                           and isinstance(p.get("status"), str) for p in proofs)):
            bad(f"{w}.proofs", "must be a list of {name, status, ...} objects or null")


def _ulp(acc: dict):
    v = acc.get("max_ulp")
    return None if v is None or (isinstance(v, float) and math.isnan(v)) else v


def regressions(old: dict, new: dict) -> list[str]:
    out = []
    new_by = {c["key"]: c for c in new["checks"]}
    for o in old["checks"]:
        n = new_by.get(o["key"])
        name = o["name"]
        if n is None:
            out.append(f"{name}: missing from the new result (no check with the same operator, dtype, target, "
                       "attributes, mode and policies)")
            continue
        os_, ns = o["status"], n["status"]
        if os_ != "fail" and ns == "fail":
            out.append(f"{name}: {'passed' if os_ == 'pass' else 'was skipped'}, now fails: {'; '.join(n['reasons'])}")
        if os_ == "pass" and ns == "skipped":
            out.append(f"{name}: passed, now skipped (nothing verified): {'; '.join(n['reasons'])}")
        oa, na = o.get("accuracy") or {}, n.get("accuracy") or {}
        if oa.get("inputs_checked", 0) > na.get("inputs_checked", 0):
            out.append(f"{name}: inputs checked down from {oa['inputs_checked']:,} to {na.get('inputs_checked', 0):,}")
        ou, nu = _ulp(oa), _ulp(na)
        if ou is not None and nu is None and ns != "skipped":
            out.append(f"{name}: max ULP error was {ou!r}, now unknown ({na.get('max_ulp')!r})")
        elif ou is not None and nu is not None and nu > ou:
            out.append(f"{name}: max ULP error up from {ou!r} to {nu!r} "
                       f"(worst input now {na.get('worst_input')!r}, {na.get('worst_input_bits')})")
        for k in ("nan_mismatches", "inf_mismatches", "signed_zero_mismatches", "subnormal_flushes"):
            if na.get(k, 0) > oa.get(k, 0):
                out.append(f"{name}: {k.replace('_', ' ')} up from {oa.get(k, 0)} to {na[k]}")
        if oa.get("correctly_rounded") is not None and na.get("correctly_rounded") is not None \
                and oa.get("inputs_checked") == na.get("inputs_checked") \
                and na["correctly_rounded"] < oa["correctly_rounded"]:
            out.append(f"{name}: correctly rounded results down from {oa['correctly_rounded']:,} to "
                       f"{na['correctly_rounded']:,}")
        np_ = {p["name"]: p for p in n.get("proofs") or []}
        for p in o.get("proofs") or []:
            q = np_.get(p["name"])
            if p["status"] == "proved" and (q is None or q["status"] != "proved"):
                out.append(f"{name}: proof {p['name']} lost ({'missing' if q is None else q['status']})")
    return out
