"""`opcert gate -k EXPR`: the checks of a gate whose names match a keyword expression, as pytest's -k reads one.

A check is a (check table, dtype) pair; its name is what the gate prints for it ("Tanh float32 numpy:tanh",
with its ISA level and attribute set where it has them), and it also answers to its operator, dtype and target.
EXPR is words joined by `and`, `or`, `not` and parentheses; a word matches a name that contains it, ignoring
case ("tanh and not float16", "Softmax or (Gelu and bfloat16)").
"""

from __future__ import annotations

import dataclasses
import re

from opcert.errors import UsageError
from opcert.gating.config import GateConfig

_TOKEN = re.compile(r"\s*(\(|\)|[^\s()]+)")
_KEYWORDS = ("and", "or", "not")


def _tokens(expr: str) -> list[str]:
    out, pos = [], 0
    while pos < len(expr):
        m = _TOKEN.match(expr, pos)
        if m is None:  # only trailing blanks are left
            break
        out.append(m.group(1))
        pos = m.end()
    return out


class _Parser:
    """expr := term ("or" term)*; term := factor ("and" factor)*; factor := "not" factor | "(" expr ")" | WORD.
    Parsed into a function of the lower-cased name, so that each check is matched without parsing again."""

    def __init__(self, expr: str):
        self.expr, self.toks, self.i = expr, _tokens(expr), 0

    def fail(self, what: str):
        raise UsageError(
            f"-k {self.expr!r}: {what}; allowed: words joined by and, or, not and parentheses, "
            "e.g. -k 'tanh and not float16'"
        )

    def peek(self):
        return self.toks[self.i] if self.i < len(self.toks) else None

    def take(self):
        tok = self.peek()
        self.i += 1
        return tok

    def parse(self):
        if not self.toks:
            self.fail("an empty expression")
        f = self.disjunction()
        if self.peek() is not None:
            self.fail(f"unexpected {self.peek()!r}")
        return f

    def disjunction(self):
        return self._joined("or", self.conjunction, any)

    def conjunction(self):
        return self._joined("and", self.factor, all)

    def _joined(self, word: str, part, combine):
        parts = [part()]
        while self.peek() == word:
            self.take()
            parts.append(part())
        return parts[0] if len(parts) == 1 else (lambda s, ps=tuple(parts): combine(p(s) for p in ps))

    def factor(self):
        tok = self.take()
        if tok is None:
            self.fail("it ends where a word was expected")
        if tok == "not":
            inner = self.factor()
            return lambda s: not inner(s)
        if tok == "(":
            inner = self.disjunction()
            if self.take() != ")":
                self.fail("a '(' is not closed")
            return inner
        if tok == ")" or tok in _KEYWORDS:
            self.fail(f"{tok!r} where a word was expected")
        word = tok.lower()
        return lambda s: word in s


def matcher(expr: str):
    """A function of a check's name (any case) saying whether it matches `expr`; UsageError when expr is not
    an expression."""
    match = _Parser(expr).parse()
    return lambda name: match(name.lower())


def check_names(check, dtype: str) -> str:
    """What -k matches for one (check, dtype): its printed name, its operator, dtype and target."""
    return f"{check.label(dtype)} {check.op} {dtype} {check.target}"


def select(config: GateConfig, expr: str) -> GateConfig:
    """The configuration with only the (check, dtype) pairs whose names match `expr`; UsageError, naming the
    checks there are, when none does."""
    match = matcher(expr)
    kept = []
    for c in config.checks:
        dtypes = tuple(d for d in c.dtypes if match(check_names(c, d)))
        if dtypes:
            kept.append(dataclasses.replace(c, dtypes=dtypes) if dtypes != tuple(c.dtypes) else c)
    if not kept:
        names = [c.label(d) for c in config.checks for d in c.dtypes]
        shown = "; ".join(names[:12]) + (f"; ... ({len(names)} in all)" if len(names) > 12 else "")
        raise UsageError(f"-k {expr!r}: no check of {config.source} matches; its checks: {shown}")
    return dataclasses.replace(config, checks=kept)
