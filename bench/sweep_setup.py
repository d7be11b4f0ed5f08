"""The float32 sweep the bench scripts run: an operator's chunks as `opcert accuracy OP --dtype float32
--exhaustive` runs them, at its default attributes (or those given), every property it declares checked."""

from opcert.spec.attrs import resolve
from opcert.targets import load_target
from opcert.verify.accuracy import sweep
from opcert.verify.properties.checks import compile_all


def sweep_config(op, target: str = "opcert", given: dict | None = None, **fields) -> sweep.SweepConfig:
    """op: an Operator; given: attribute values (as --attr) or None for the defaults; fields: SweepConfig's
    others (start, stop, chunk, ...)."""
    attrs = resolve(op, given or None)
    props = tuple(c.name for c in compile_all(op, sweep.F32, attrs, op.primary) if c.skip is None)
    return sweep.SweepConfig(
        op.name,
        target,
        tuple((k, f"{v.numerator}/{v.denominator}") for k, v in attrs.items()),
        None,
        target_fingerprint=load_target(target).info.fingerprint,
        properties=props,
        **fields,
    )
