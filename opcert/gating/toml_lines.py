"""The line of each table and key of a TOML file, for configuration errors (tomllib gives no positions).

`key_lines(text)` maps a path to the 1-based line where it is written:

    [[check]]                 ("check", 0)            the table's header
    op = "Tanh"               ("check", 0, "op")
    dtypes = ["float16",      ("check", 0, "dtypes"), ("check", 0, "dtypes", 0)
              "float33"]      ("check", 0, "dtypes", 1)   each element of an array, where it starts
    [check.attrs]             ("check", 0, "attrs")   a sub-table of the latest [[check]]
    alpha = 0.2               ("check", 0, "attrs", "alpha")
    check = [{ op = "Relu" }] ("check",), ("check", 0), ("check", 0, "op")

Arrays of tables are indexed as tomllib's lists are; dotted keys (`attrs.alpha = 1`) give each of their
prefixes; strings (multi-line ones too) and comments are skipped, so nothing inside them is read as a key.
The text is valid TOML (tomllib read it first); where something is not understood the scan stops and keeps
what it found: `find` then names the nearest enclosing path that has a line, or none.
"""

from __future__ import annotations

import bisect
import re

_BARE = r"[A-Za-z0-9_-]+"
_BASIC = r'"(?:[^"\\\n]|\\.)*"'
_LITERAL = r"'[^'\n]*'"
_KEY = rf"(?:{_BARE}|{_BASIC}|{_LITERAL})"
_DOTTED = rf"{_KEY}(?:[ \t]*\.[ \t]*{_KEY})*"
_KEY_EQ = re.compile(rf"({_DOTTED})[ \t]*=")
_ARRAY_HEADER = re.compile(rf"\[\[[ \t]*({_DOTTED})[ \t]*\]\]")
_HEADER = re.compile(rf"\[[ \t]*({_DOTTED})[ \t]*\]")
_PART = re.compile(_KEY)
_ESCAPE = re.compile(r"\\(u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8}|.)", re.S)
_SIMPLE_ESCAPES = {"b": "\b", "t": "\t", "n": "\n", "f": "\f", "r": "\r", '"': '"', "\\": "\\", "e": "\x1b"}


def _unquote(part: str) -> str:
    if part.startswith("'"):
        return part[1:-1]
    if part.startswith('"'):

        def esc(m):
            s = m.group(1)
            return chr(int(s[1:], 16)) if s[0] in "uU" else _SIMPLE_ESCAPES.get(s, s)

        return _ESCAPE.sub(esc, part[1:-1])
    return part


def _keys(dotted: str) -> tuple[str, ...]:
    return tuple(_unquote(m.group()) for m in _PART.finditer(dotted))


class _Scan:
    def __init__(self, text: str):
        self.text = text
        self.i = 0
        self.starts = [0] + [m.end() for m in re.finditer("\n", text)]
        self.lines: dict[tuple, int] = {}
        self.arrays: dict[tuple, int] = {}  # an array of tables (resolved path) -> its latest index

    def line(self, i: int | None = None) -> int:
        return bisect.bisect_right(self.starts, self.i if i is None else i)

    def record(self, path: tuple, i: int | None = None) -> None:
        self.lines.setdefault(path, self.line(i))

    def blank(self, newlines: bool) -> None:
        """Skip spaces (and line breaks and comments where `newlines`; a comment always)."""
        t = self.text
        while self.i < len(t):
            c = t[self.i]
            if c in " \t\r" or (newlines and c == "\n"):
                self.i += 1
            elif c == "#":
                end = t.find("\n", self.i)
                self.i = len(t) if end < 0 else end
            else:
                return

    def run(self) -> dict[tuple, int]:
        t = self.text
        table: tuple = ()
        while True:
            self.blank(newlines=True)
            if self.i >= len(t):
                return self.lines
            m = _ARRAY_HEADER.match(t, self.i) or _HEADER.match(t, self.i)
            if t[self.i] == "[" and m:
                table = self.header(_keys(m.group(1)), array=m.re is _ARRAY_HEADER)
                self.i = m.end()
                continue
            m = _KEY_EQ.match(t, self.i)
            if not m:
                return self.lines  # not understood: keep what was found
            self.keyed(table, _keys(m.group(1)))
            self.i = m.end()
            self.value(table + _keys(m.group(1)))

    def header(self, keys: tuple, array: bool) -> tuple:
        resolved: list = []
        for j, k in enumerate(keys):
            resolved.append(k)
            here = tuple(resolved)
            if array and j == len(keys) - 1:
                self.record(here)
                self.arrays[here] = self.arrays.get(here, -1) + 1
                resolved.append(self.arrays[here])
            elif here in self.arrays:
                resolved.append(self.arrays[here])
            self.record(tuple(resolved))  # [[tool.opcert.check]] gives tool and tool.opcert a line too
        path = tuple(resolved)
        self.record(path)
        return path

    def keyed(self, table: tuple, keys: tuple) -> None:
        for j in range(1, len(keys) + 1):
            self.record(table + keys[:j])

    def value(self, path: tuple) -> None:
        t = self.text
        self.blank(newlines=False)
        if self.i >= len(t):
            return
        for quote in ('"""', "'''"):
            if t.startswith(quote, self.i):
                self.i += 3
                while True:
                    end = t.find(quote, self.i)
                    if end < 0:
                        self.i = len(t)
                        return
                    if quote == '"""' and _escaped(t, end):
                        self.i = end + 1
                        continue
                    self.i = end + 3
                    while self.i < len(t) and t[self.i] == quote[0]:  # up to two quotes before the delimiter
                        self.i += 1
                    return
        c = t[self.i]
        if c == '"':
            m = re.compile(_BASIC).match(t, self.i)
            self.i = m.end() if m else len(t)
        elif c == "'":
            m = re.compile(_LITERAL).match(t, self.i)
            self.i = m.end() if m else len(t)
        elif c == "[":
            self.i += 1
            k = 0
            while True:
                self.blank(newlines=True)
                if self.i >= len(t) or t[self.i] == "]":
                    self.i += 1
                    return
                if t[self.i] == ",":
                    self.i += 1
                    continue
                self.record(path + (k,))
                before = self.i
                self.value(path + (k,))
                if self.i == before:  # not understood
                    self.i = len(t)
                    return
                k += 1
        elif c == "{":
            self.i += 1
            while True:
                self.blank(newlines=True)  # TOML 1.1 allows line breaks in inline tables
                if self.i >= len(t) or t[self.i] == "}":
                    self.i += 1
                    return
                if t[self.i] == ",":
                    self.i += 1
                    continue
                m = _KEY_EQ.match(t, self.i)
                if not m:
                    self.i = len(t)
                    return
                self.keyed(path, _keys(m.group(1)))
                self.i = m.end()
                self.value(path + _keys(m.group(1)))
        else:  # a number, boolean or date: up to what ends a value
            m = re.compile(r"[^,\]}\n#]*").match(t, self.i)
            self.i = m.end()


def _escaped(t: str, end: int) -> bool:
    """Whether the quote at t[end] is escaped (an odd number of backslashes before it)."""
    n = 0
    while end - n - 1 >= 0 and t[end - n - 1] == "\\":
        n += 1
    return n % 2 == 1


def key_lines(text: str) -> dict[tuple, int]:
    """The 1-based line of each table, key and array element of TOML text, by path (module docstring)."""
    scan = _Scan(text)
    try:
        return scan.run()
    except (IndexError, AttributeError, ValueError):  # a form this scan does not know: what it found so far
        return scan.lines


def find(lines: dict[tuple, int], path: tuple) -> int | None:
    """The line of `path`, or of the nearest enclosing path that has one (None where none has)."""
    for n in range(len(path), 0, -1):
        hit = lines.get(tuple(path[:n]))
        if hit is not None:
            return hit
    return None
