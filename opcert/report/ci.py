"""What a gate says to the CI system it runs in.

GitHub Actions: the job summary (`GITHUB_STEP_SUMMARY`: a Markdown file each step appends to) gets the
gate's result, its summary table and every failing check with its reasons and reproduce command; and each
failing check is an `::error` workflow command (an annotation on the run), naming the check, its reasons
and its reproduce command, and pointing at the check's table in the configuration (`file=`, the file as
given; `line=`, the line of its [[check]] header: the result's `where`, gating.config.Check.where). GitLab
reads the JUnit file (`--junit`) as a report artifact (docs: README, "CI").
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


def location(check: dict, gate: dict) -> str:
    """`,file=F,line=N` of a check's annotation: where its table is in the configuration (the check's `where`;
    a result without it names the gate's configuration file, no line), or nothing (the built-in default)."""
    where = check.get("where") if isinstance(check.get("where"), dict) else {}
    file = where.get("file")
    if not file:
        config = gate.get("config")
        if not isinstance(config, str) or not config or config == "built-in default":
            return ""
        file = config.removesuffix(" [tool.opcert]")
    out = f",file={_property(clip(file, 500))}"
    line = where.get("line")
    if isinstance(line, int) and not isinstance(line, bool) and line > 0:
        out += f",line={line}"
    return out


def annotations(gate: dict) -> list[str]:
    """One `::error` workflow command per failing check, at the line of its table in the configuration."""
    out = []
    for c in gate["checks"]:
        if c["status"] != "fail":
            continue
        # a target's text (its exception messages, its name) is clipped, and escaped as GitHub reads a
        # workflow command: its line breaks cannot end the command, so none of it starts another
        message = clip("; ".join(clip(r) for r in c["reasons"]), 2 * LIMIT) + f"\nreproduce: {clip(c['command'])}"
        title = _property("opcert: " + clip(c["name"], 200))
        out.append(f"::error title={title}{location(c, gate)}::{_data(message)}")
    if gate.get("verdict_note"):
        out.append(f"::error title=opcert::{_data(gate['verdict_note'])}")
    return out
