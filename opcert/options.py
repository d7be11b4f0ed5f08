"""How a measurement is made, kept apart from what is measured.

`measure(op, target, dtype, inputs, options, attrs=...)`: the operator's attributes (alpha, lambd, ...)
and the measurement's options (samples, seed, workers, ...) are two namespaces. Both may also be given as
keywords, for short calls (`measure("Elu", "torch", samples=2000, alpha=0.5)`): a keyword that names an
option and an attribute of the operator at once is refused, never silently taken as one of them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field

from opcert.errors import UsageError


@dataclass(frozen=True)
class Options:
    """The options of a measurement (opcert.verify.accuracy.measure.measure); every field has its default."""

    samples: int | None = None  # sampled inputs (default: the sampler's, per format)
    seed: int = 0
    standard: str | None = None  # whose definition (default: the operator's primary)
    workers: int | None = None  # processes of an exhaustive binary32 sweep
    scheduler: str | None = None  # dask://host:port for a sweep on a Dask cluster
    checkpoint: str | None = None  # the sweep's checkpoint directory (default: .opcert-cache/...)
    flush_allowed: bool = False  # outputs flushed to zero where the reference is subnormal: counted apart
    keep_errors: bool = False  # keep per-element errors (plots)
    magnitude_range: tuple[int, int] | None = None  # a binary32 sweep over [lo, hi) magnitudes, both signs
    isolation: str = "process"  # "process": untrusted targets in a supervised worker; or "none"
    target_timeout: float | None = None  # seconds per target call (isolated targets)
    properties: object = "all"  # "all", a list of property names, or () for none
    accuracy: bool = True  # False: the properties alone (an exhaustive binary32 sweep)
    layout_samples: int | None = None  # inputs per layout where the layouts are not enumerated
    progress: Callable | None = field(default=None, compare=False)  # called as a sweep's chunks finish

    def replace(self, **changes) -> Options:
        unknown = set(changes) - NAMES
        if unknown:
            raise UsageError(f"unknown option(s) {', '.join(sorted(unknown))}; allowed: {', '.join(sorted(NAMES))}")
        return dataclasses.replace(self, **changes)


NAMES = frozenset(f.name for f in dataclasses.fields(Options))


def clashes(keywords, reserved, attribute_names) -> list[str]:
    """The keywords that name one of `reserved` (options, a gate check's keys) and an attribute at once
    (attribute names match case-insensitively)."""
    attribute_names = {n.lower() for n in attribute_names}
    return sorted(k for k in keywords if k in reserved and k.lower() in attribute_names)


def split_keywords(options: Options | None, attrs: dict | None, keywords: dict, attribute_names) -> tuple:
    """(Options, attributes) from measure()'s arguments. A keyword is an option where it names one, else an
    attribute; one that names both (an operator with an attribute called like an option) is refused, as is
    a name given twice."""
    both = clashes(keywords, NAMES, attribute_names)
    if both:
        raise UsageError(
            f"{', '.join(both)}: both an option of measure() and an attribute of the operator; "
            "pass attributes as attrs={...} and options as options=Options(...)"
        )
    if options is not None and not isinstance(options, Options):
        raise UsageError(f"options must be an opcert.Options; got {type(options).__name__}")
    given = {k: v for k, v in keywords.items() if k in NAMES}
    extra = {k: v for k, v in keywords.items() if k not in NAMES}
    attrs = dict(attrs or {})
    twice = sorted(set(attrs) & set(extra))
    if twice:
        raise UsageError(f"attribute(s) {', '.join(twice)} given twice: in attrs and as keywords")
    attrs.update(extra)
    return (options or Options()).replace(**given), attrs
