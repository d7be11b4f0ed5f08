"""What a gate says to the CI system it runs in.

GitHub Actions: the job summary (`GITHUB_STEP_SUMMARY`: a Markdown file each step appends to) gets the
gate's result, its summary table and every failing check with its reasons and reproduce command; and each
failing check is an `::error` workflow command (an annotation on the run), naming the check, its reasons
and its reproduce command. GitLab reads the JUnit file (`--junit`) as a report artifact (docs: README,
"CI").
"""

from __future__ import annotations

from opcert.report.render import failing_lines, summary_markdown
from opcert.report.text import LIMIT, clip


def step_summary(gate: dict) -> str:
    """The Markdown a gate appends to GitHub's job summary."""
    return "\n".join([summary_markdown(gate)] + failing_lines(gate)) + "\n"


def _data(text: str) -> str:
    # GitHub's escaping of a workflow command's message
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _property(text: str) -> str:
    # ... and of a property's value (title=...)
    return _data(text).replace(":", "%3A").replace(",", "%2C")


def annotations(gate: dict) -> list[str]:
    """One `::error` workflow command per failing check."""
    out = []
    for c in gate["checks"]:
        if c["status"] != "fail":
            continue
        # a target's text (its exception messages, its name) is clipped, and escaped as GitHub reads a
        # workflow command: its line breaks cannot end the command, so none of it starts another
        message = clip("; ".join(clip(r) for r in c["reasons"]), 2 * LIMIT) + f"\nreproduce: {clip(c['command'])}"
        out.append(f"::error title={_property('opcert: ' + clip(c['name'], 200))}::{_data(message)}")
    if gate.get("verdict_note"):
        out.append(f"::error title=opcert::{_data(gate['verdict_note'])}")
    return out
