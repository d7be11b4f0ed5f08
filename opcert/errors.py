"""Errors that reach users.

`UsageError` is bad input (unknown operator, dtype, target or attribute, an
attribute outside its domain, mismatched tensors): the CLI prints its message
and exits 2. `TargetFailure` means the implementation under test crashed or
broke its contract (wrong shape or dtype): a failed check, exit 1.
`ConfigErrors` is a UsageError that holds every error of a gate configuration
(`ConfigProblem`: file, line, key, message), all found in one reading.
"""

from dataclasses import dataclass


class OpcertError(Exception):
    """Base class of the errors opcert raises on purpose."""


class UsageError(OpcertError, ValueError):
    """Bad input: the message names what was wrong and what is allowed."""


class TargetFailure(OpcertError):
    """The implementation under test crashed or returned a wrong shape or dtype."""


def choices(values) -> str:
    """Format the allowed values for an error message."""
    return ", ".join(str(v) for v in values)


@dataclass(frozen=True)
class ConfigProblem:
    """One error of a gate configuration: where it is (the file as given, the 1-based line of the offending
    key or table where it was found, the key) and what is wrong and allowed."""

    file: str
    line: int | None
    key: str
    message: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        return f"{where}: {self.key}: {self.message}" if self.key else f"{where}: {self.message}"

    def to_dict(self) -> dict:
        return {"file": self.file, "line": self.line, "key": self.key, "message": self.message}


class ConfigErrors(UsageError):
    """Every error of a gate configuration, found in one reading (`problems`, in the order of their lines):
    its text is one `FILE:LINE: KEY: MESSAGE` line per error, after a count where there are several."""

    SCHEMA = "opcert.config-errors/1"

    def __init__(self, problems):
        self.problems = tuple(problems)
        lines = [str(p) for p in self.problems]
        if len(lines) > 1:
            lines.insert(0, f"{self.problems[0].file}: {len(lines)} configuration errors")
        super().__init__("\n".join(lines))

    def __reduce__(self):  # crosses process boundaries (a worker's exception) intact
        return (type(self), (self.problems,))

    def to_dict(self) -> dict:
        """What `opcert gate --json` writes for a configuration it refuses."""
        return {
            "schema": self.SCHEMA,
            "ok": False,
            "config": self.problems[0].file if self.problems else None,
            "errors": [p.to_dict() for p in self.problems],
        }
