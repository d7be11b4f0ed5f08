"""A gate result read back, its statuses judged again: the gate's own judgment (run.judge, run.judge_rows,
run.judge_properties) applied to the policy, accuracy and proof verdicts a result file holds. `opcert report`,
`opcert diff` and `opcert gate --baseline` read results through load_gate here, so a file whose check says
"pass" where its figures fail it is refused (report.validate says what else is checked), never rendered.
"""

from __future__ import annotations

import copy
from dataclasses import MISSING, fields

from opcert.gating import run
from opcert.report.diff import load_gate as load
from opcert.verify.accuracy.measure import AccuracyResult
from opcert.verify.binary.measure import PairResult
from opcert.verify.predicate.measure import PredicateResult
from opcert.verify.tensor.measure import RowResult


class Record:
    """A dict read as the object the gate judged: attribute access; a missing key is the field's default
    (defaults), else None."""

    def __init__(self, data: dict, defaults: dict):
        self.__dict__["_data"] = data
        self.__dict__["_defaults"] = defaults

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        if name in self._data:
            return self._data[name]
        return copy.copy(self._defaults.get(name))

    def to_dict(self) -> dict:
        return dict(self._data)

    def gate_accuracy(self) -> dict:
        return dict(self._data)


def defaults(cls) -> dict:
    """A dataclass's fields' defaults."""
    out = {}
    for f in fields(cls):
        if f.default is not MISSING:
            out[f.name] = f.default
        elif f.default_factory is not MISSING:
            out[f.name] = f.default_factory()
    return out


def _check(c: dict) -> Record:
    """The check (gating.config.Check) as its result recorded it: the policy judged by."""
    pol = c["policy"]
    data = {
        **{k: v for k, v in (c.get("identity") or {}).items() if isinstance(k, str)},
        "op": c["op"],
        "target": c["target"],
        "max_ulp": pol["max_ulp"],
        "signed_zero": pol["signed_zero"],
        "subnormals": pol["subnormals"],
        "proofs": tuple(pol.get("proofs") or ()),
        "accept_sampled_evidence": bool(pol.get("accept_sampled_evidence", False)),
        "proofs_left_out": tuple(pol.get("proofs_left_out") or ()),
        # the waivers, as the identity records them ({property: reason}, only where given)
        "waive": tuple(((c.get("identity") or {}).get("waive") or {}).items()),
    }
    return Record(data, {"isolation": "process"})


def rejudge(c: dict) -> tuple[str, list]:
    """(status, reasons) that the gate's judgment gives a check's figures, as its result holds them."""
    if not isinstance(c.get("accuracy"), dict):
        return "fail", ["no accuracy figures (accuracy is null): nothing was measured, so nothing passed"]
    c = copy.deepcopy(c)  # judge_properties marks accepted verdicts
    acc = c["accuracy"]
    check = _check(c)
    proofs = c.get("proofs") if isinstance(c.get("proofs"), list) else None
    if acc.get("kind") == "rows":
        data = dict(acc)
        if data.get("max_ulp") is None:  # RowResult.gate_accuracy writes null where no element was worst
            data["max_ulp"] = 0.0
        if proofs is not None:  # the required verdicts, as the check recorded them
            data["properties"] = proofs
        res = run.judge_rows(check, c["dtype"], Record(data, defaults(RowResult)), 0.0)
    elif acc.get("kind") in ("pairs", "predicate"):  # a binary or predicate operator's (verify.binary, .predicate)
        data = dict(acc)
        if proofs is not None:
            data["properties"] = proofs
        if acc["kind"] == "pairs":
            res = run.judge_pairs(check, c["dtype"], Record(data, defaults(PairResult)), 0.0)
        else:
            res = run.judge_predicate(check, c["dtype"], Record(data, defaults(PredicateResult)), 0.0)
    else:
        data = {**acc, "command": acc.get("command") or c.get("command") or ""}
        res = run.judge(check, c["dtype"], Record(data, defaults(AccuracyResult)), proofs, c.get("proof_note"), 0.0)
    return res.status, list(res.reasons)


def load_gate(path: str) -> dict:
    """report.diff.load_gate, every check's status judged again from its figures."""
    return load(path, rejudge=rejudge)
