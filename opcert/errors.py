"""Errors that reach users.

`UsageError` is bad input (unknown operator, dtype, target or attribute, an
attribute outside its domain, mismatched tensors): the CLI prints its message
and exits 2. `TargetFailure` means the implementation under test crashed or
broke its contract (wrong shape or dtype): a failed check, exit 1.
"""


class OpcertError(Exception):
    """Base class of the errors opcert raises on purpose."""


class UsageError(OpcertError, ValueError):
    """Bad input: the message names what was wrong and what is allowed."""


class TargetFailure(OpcertError):
    """The implementation under test crashed or returned a wrong shape or dtype."""


def choices(values) -> str:
    """Format the allowed values for an error message."""
    return ", ".join(str(v) for v in values)
