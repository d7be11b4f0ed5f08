"""Verdicts. `unknown` is never a pass; a refutation carries a replayed counterexample."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

STATUSES = ("proved", "refuted", "unknown", "skipped")


@dataclass
class PropertyResult:
    name: str
    kind: str
    statement: str
    status: str
    method: str
    elapsed_s: float = 0.0
    counterexample: dict | None = None
    expected: str = "holds"          # "holds", or "fails" where the attributes break its condition
    note: str | None = None
    outside_condition: dict | None = None

    @property
    def ok(self) -> bool:
        """Does this verdict meet the declaration?"""
        if self.status == "skipped":
            return True
        if self.expected == "holds":
            return self.status == "proved"
        return self.status == "refuted"

    def to_dict(self) -> dict:
        d = asdict(self)
        d["ok"] = self.ok
        return d


@dataclass
class ProofReport:
    op: str
    dtype: str                  # "real" for the specification
    attrs: dict | str
    properties: list[PropertyResult] = field(default_factory=list)
    elapsed_s: float = 0.0

    @property
    def ok(self) -> bool:
        return all(p.ok for p in self.properties)

    def to_dict(self) -> dict:
        return {"op": self.op, "dtype": self.dtype, "attrs": self.attrs, "ok": self.ok,
                "elapsed_s": self.elapsed_s, "properties": [p.to_dict() for p in self.properties]}
