"""Regressions between two gate results: max ULP up, a proof lost, new special-value mismatches,
a check that passed and now fails or is gone."""
from __future__ import annotations

import json

from ..errors import UsageError


def load_gate(path: str) -> dict:
    try:
        with open(path) as f:
            data = json.load(f)
    except FileNotFoundError:
        raise UsageError(f"{path}: no such file") from None
    except json.JSONDecodeError as exc:
        raise UsageError(f"{path}: not JSON: {exc}") from None
    if not isinstance(data, dict) or not str(data.get("schema", "")).startswith("opcert.gate/"):
        raise UsageError(f"{path}: not an opcert gate result (expected \"schema\": \"opcert.gate/1\")")
    return data


def regressions(old: dict, new: dict) -> list[str]:
    out = []
    new_by = {c["key"]: c for c in new["checks"]}
    for o in old["checks"]:
        n = new_by.get(o["key"])
        name = o["name"]
        if n is None:
            out.append(f"{name}: missing from the new result")
            continue
        if o["status"] == "pass" and n["status"] == "fail":
            out.append(f"{name}: passed, now fails: {'; '.join(n['reasons'])}")
        oa, na = o.get("accuracy") or {}, n.get("accuracy") or {}
        if oa.get("max_ulp") is not None and na.get("max_ulp") is not None and na["max_ulp"] > oa["max_ulp"]:
            out.append(f"{name}: max ULP error up from {oa['max_ulp']!r} to {na['max_ulp']!r} "
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
