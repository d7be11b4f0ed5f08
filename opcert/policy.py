"""One validator for every policy and every number a user gives opcert.

The CLI, the gate configuration, the library API and the pytest plugin all
build their checks through these functions, so a value one of them refuses
(max_ulp = nan, samples = 0, signed_zero = "lenient", seed = true) is refused
by all of them, with a message that names the key and what is allowed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from opcert.errors import UsageError, choices

SIGNED_ZERO = ("strict", "ignore")
SUBNORMALS = ("strict", "flush-allowed")
ISOLATION = ("process", "none")
MAX_SAMPLES = 50_000_000  # a float64 check keeps about 100 bytes per input in memory
MAX_SEED = 2**64 - 1
MAX_WORKERS = 1024


def integer(value, key: str, lo: int, hi: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        else:
            raise UsageError(f"{key}: must be an integer from {lo:,} to {hi:,} (got {value!r})")
    if not lo <= value <= hi:
        raise UsageError(f"{key}: must be an integer from {lo:,} to {hi:,} (got {value:,})")
    return value


def number(value, key: str, *, lo: float = 0.0, lo_open: bool = False) -> float:
    """A finite real number >= lo (> lo when lo_open)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise UsageError(f"{key}: must be a finite number {'>' if lo_open else '>='} {lo:g} (got {value!r})")
    v = float(value)
    if not math.isfinite(v) or v < lo or (lo_open and v == lo):
        raise UsageError(f"{key}: must be a finite number {'>' if lo_open else '>='} {lo:g} (got {value!r})")
    return v


def choice(value, key: str, allowed) -> str:
    if value not in allowed:
        raise UsageError(f"{key}: {value!r} is not allowed; allowed: {choices(allowed)}")
    return value


def samples(value, key: str = "samples") -> int:
    return integer(value, key, 1, MAX_SAMPLES)


def seed(value, key: str = "seed") -> int:
    return integer(value, key, 0, MAX_SEED)


def workers(value, key: str = "workers") -> int:
    return integer(value, key, 1, MAX_WORKERS)


def timeout(value, key: str = "timeout") -> float:
    return number(value, key, lo=0.0, lo_open=True)


@dataclass(frozen=True)
class Policy:
    """How a measurement is judged."""

    max_ulp: float = 1.0
    signed_zero: str = "strict"
    subnormals: str = "strict"
    accept_sampled_evidence: bool = False

    @property
    def flush_allowed(self) -> bool:
        return self.subnormals == "flush-allowed"


def make_policy(
    max_ulp=1.0, signed_zero="strict", subnormals="strict", accept_sampled_evidence=False, where: str = ""
) -> Policy:
    p = f"{where}." if where else ""
    if not isinstance(accept_sampled_evidence, bool):
        raise UsageError(f"{p}accept_sampled_evidence: must be true or false (got {accept_sampled_evidence!r})")
    return Policy(
        number(max_ulp, f"{p}max_ulp"),
        choice(signed_zero, f"{p}signed_zero", SIGNED_ZERO),
        choice(subnormals, f"{p}subnormals", SUBNORMALS),
        accept_sampled_evidence,
    )


def required_properties(
    op, requested, attrs, where: str = "proofs", standard: str | None = None
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The properties a check requires, and those `"all"` left out with why.

    `requested` is a list of names or "all". A name must be declared by the
    operator, apply to float kernels, be claimed at these attributes (its
    condition holds) and be declared to hold; "all" takes every such property.
    Returns (required names, notes on the ones "all" left out)."""
    declared = {p.name: p for p in op.properties}
    if requested == "all":
        names, explicit = list(declared), False
    elif isinstance(requested, (list, tuple)) and all(isinstance(n, str) for n in requested):
        names, explicit = list(requested), True
    else:
        raise UsageError(f'{where} must be a list of property names, or "all" (got {requested!r})')
    out, left = [], []
    for n in names:
        p = declared.get(n)
        if p is None:
            raise UsageError(f"{where}: {op.name} declares no property {n!r}; declared: {choices(declared)}")
        why = None
        if p.spec_only:
            why = (
                f"{n} is a property of the exact definition (`opcert prove {op.name}` proves it); "
                "it does not apply to a float kernel"
            )
        elif not p.holds:
            why = f"{n} is declared NOT to hold for {op.name} ({p.statement}); it cannot be required"
        elif p.not_claimed(attrs, standard or op.primary) is not None:
            why = f"{n} is not claimed: {p.not_claimed(attrs, standard or op.primary)}"
        if why is None:
            out.append(n)
        elif explicit:
            raise UsageError(f"{where}: {why}")
        else:
            left.append(why)
    return tuple(out), tuple(left)
