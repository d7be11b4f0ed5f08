"""Verdicts. `unknown` is never a pass; a refutation carries a replayed counterexample.

proved    z3, or every input of the format enumerated (`method` says which)
refuted   a counterexample, replayed on the implementation before it is reported
checked   held on a sample: evidence, not a proof
unknown   undecided (z3 reached its resource limit, with the units it spent: never a time-out)
skipped   not decided, with the reason
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

STATUSES = ("proved", "refuted", "checked", "unknown", "skipped")


@dataclass
class PropertyResult:
    name: str
    kind: str
    statement: str
    status: str
    method: str
    elapsed_s: float = 0.0
    counterexample: dict | None = None  # the first counterexample (in input bit order)
    expected: str = "holds"  # "holds"; "not claimed" where the attributes break its condition;
    #                                  "fails" where the catalog declares that it does not hold
    note: str | None = None
    outside_condition: dict | None = None
    inputs_checked: int | None = None  # enumeration and samples: inputs (or pairs) examined
    violations: int | None = None  # enumeration and samples: how many of them break it
    worst: dict | None = None  # the worst counterexample (largest excess or step back)
    layouts: list | None = None  # the layout property: what each family of layouts ran (verify.paths.layout)
    rlimit_count: int | None = None  # z3's resource units spent deciding it (its queries' "rlimit count"):
    #                                      the same on an idle or a loaded host, unlike elapsed_s

    @classmethod
    def skipped(cls, prop, note: str) -> PropertyResult:
        """prop (a declared property: name, kind, statement) not decided here, and why."""
        return cls(prop.name, prop.kind, prop.statement, "skipped", "-", note=note)

    @property
    def ok(self) -> bool:
        """Does this verdict establish what the catalog declares, with a proof?
        (A `checked` verdict never does; a gate may accept it by configuration.)"""
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
    dtype: str  # "real" for the specification
    attrs: dict | str
    properties: list[PropertyResult] = field(default_factory=list)
    elapsed_s: float = 0.0
    target: str = "opcert"
    error: str | None = None  # the target crashed: nothing was decided
    accuracy: dict | None = None  # a target's properties come with the measurement they were decided in

    @property
    def ok(self) -> bool:
        """No claimed property refuted, undecided, or only sampled (skipped ones say why)."""
        return self.error is None and all(p.ok or p.status == "skipped" for p in self.properties)

    def to_dict(self) -> dict:
        d = {
            "op": self.op,
            "dtype": self.dtype,
            "attrs": self.attrs,
            "target": self.target,
            "ok": self.ok,
            "elapsed_s": self.elapsed_s,
            "properties": [p.to_dict() for p in self.properties],
        }
        if self.error:
            d["error"] = self.error
        if self.accuracy is not None:
            d["accuracy"] = self.accuracy
        return d


def verdict_text(entry: dict) -> str:
    """A verdict as a report lists it: its status, and what the catalog expects of it where that is not "holds"
    (scaling at epsilon 1e-5: "skipped, not claimed")."""
    expected = entry.get("expected", "holds")
    return entry["status"] if expected == "holds" else f"{entry['status']}, {expected}"
