"""Text that may come from a target, made safe for each place a report puts it.

A gate result carries text that opcert does not control: a target's exception messages (in `reasons`,
`error`, counterexamples), the notes of what it did, its name and version. Any of it may be hostile or huge:
Markdown that draws a table or a link, HTML, a `::error::` line that GitHub's runner would read as a workflow
command, a 10 MB message. Every writer passes such text through one of these functions:

- `clip`: at most LIMIT characters, then "... (N characters left out)";
- `md`: Markdown inline text (report.md, the CI job summary): every character that Markdown or GitHub's
  extensions read as markup (tables, links, autolinks, HTML, emphasis, code, math) is escaped, and line
  breaks become `<br>`, so the text stays inside the list item or table cell it was put in;
- `md_code`: a Markdown code span whose fence is longer than any run of backticks in the text;
- `log`: text for the console and CI log: each line after the first starts with "  | " (and a first line
  that starts with `::` with "| "), so no line of a target's text begins a line of the log (GitHub's runner
  reads a line that starts with `::`, after leading blanks, as a workflow command); control characters are
  shown as escapes;
- `one_line`: an error message on one line (line breaks shown as \\n);
- `xml`: text for XML 1.0 (JUnit): the characters XML cannot hold are shown as escapes.
HTML uses html.escape on `clip`ped text.
"""

from __future__ import annotations

import re

LIMIT = 2000  # characters of one text from a target kept in a report (a reason, a note, an error)
LONG_LIMIT = 8000  # opcert's own long texts that embed a target's name (a layout verdict's method)

# every line break Python's str.splitlines knows (GitHub's runner splits on fewer)
_NEWLINE = re.compile(r"\r\n|[\r\n\x0b\x0c\x1c-\x1e\x85\u2028\u2029]")
# the other control characters (tab kept), lone surrogates (unencodable in UTF-8), the noncharacters XML refuses
_CONTROL = re.compile("[\x00-\x08\x0e-\x1b\x1f\x7f-\x84\x86-\x9f\ud800-\udfff\ufffe\uffff]")
# the ASCII punctuation that CommonMark or GitHub's Markdown reads as markup inside a line (the text never
# starts a source line: line breaks become <br>, so list, heading and table-row syntax cannot start)
_MD = re.compile(r"([\\`*_\[\]<>|~&$])")
_AUTOLINK = re.compile(r"(?<=:)//|(?i:(?<=www)\.)|@")


def clip(text, limit: int | None = LIMIT) -> str:
    """At most `limit` characters of text (None: all of it), then a note of how many were left out."""
    text = str(text)
    if limit is None or len(text) <= limit:
        return text
    return text[:limit] + f"\u2026 ({len(text) - limit:,} characters left out)"


def _plain(text, limit: int) -> str:
    """Clipped, every line break a \\n, every other control character a visible \\xNN or \\uNNNN escape."""

    def esc(m):
        ch = m.group()
        return f"\\x{ord(ch):02x}" if ord(ch) < 0x100 else f"\\u{ord(ch):04x}"

    return _CONTROL.sub(esc, _NEWLINE.sub("\n", clip(text, limit)))


def md(text, limit: int = LIMIT) -> str:
    """Markdown inline text that renders as the text itself, on one source line."""
    t = _MD.sub(r"\\\1", _plain(text, limit))
    t = _AUTOLINK.sub(lambda m: "".join("\\" + c for c in m.group()), t)
    return t.replace("\n", "<br>")


def md_code(text, limit: int = LIMIT) -> str:
    """A Markdown code span holding the text (on one line: line breaks become spaces)."""
    t = _plain(text, limit).replace("\n", " ")
    longest = max((len(run) for run in re.findall("`+", t)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if not t or t[0] in "` " or t[-1] in "` " else ""
    return f"{fence}{pad}{t}{pad}{fence}"


def log(text, limit: int = LIMIT, indent: str = "  | ") -> str:
    """Text for the console and the CI log: each line after the first starts with `indent`, so no line of
    the text starts a line of the log (nor does its first, where it would start with `::`: GitHub's runner
    reads a line as a workflow command after its leading blanks)."""
    t = _plain(text, limit)
    if t.lstrip().startswith("::"):
        t = indent.lstrip() + t
    return t.replace("\n", "\n" + indent)


def one_line(text, limit: int = LIMIT) -> str:
    """Text on one line (an error message): line breaks shown as \\n, control characters as escapes."""
    return _plain(text, limit).replace("\n", "\\n")


def xml(text, limit: int = LIMIT) -> str:
    """Text XML 1.0 can hold (JUnit): line breaks kept, other control characters as escapes."""
    return _plain(text, limit)
