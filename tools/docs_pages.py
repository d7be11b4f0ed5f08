"""The documentation pages generated from the code, so that they cannot drift from it.

An MkDocs hook (mkdocs.yml: `hooks`): at each build it adds
- configuration.md: every gate configuration key, its type, default and meaning
  (opcert.gating.config.KEY_DOCS, the keys the configuration reader accepts);
- cli-reference.md: every command's help, from the parser the command line runs;
- catalog.md: the operators, from the records `opcert ops --json` prints (formulas per
  standard, attributes, properties, the implementation expression);
- performance.md and the tables it links: bench/README.md and bench/*.md as they are.

and, in every page, each figure the code determines (`FIGURES`), written in the Markdown as
`<!--fig:NAME-->VALUE<!--/fig-->`: the site shows the value the code gives at build time (on_page_markdown),
and tests/test_docs.py fails where the written VALUE (what README.md shows on GitHub) differs from it.

`python tools/docs_pages.py DIR` writes the same pages to DIR (to read them without MkDocs).
"""

from __future__ import annotations

import io
import os
import re
import sys
from contextlib import redirect_stdout
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def configuration() -> str:
    from opcert.gating.config import KEY_DOCS

    out = [
        "# Configuration reference\n",
        "Every key of a `[[check]]` table in `opcert.toml` (or `[[tool.opcert.check]]` in `pyproject.toml`), "
        "generated from `opcert/gating/config.py`. An unknown key, a value of the wrong type or outside "
        "what is allowed is a configuration error (exit 2) that names the file, the key and what is allowed.\n",
        "| key | type | default | meaning |",
        "|---|---|---|---|",
    ]
    for key, (typ, default, meaning) in KEY_DOCS.items():
        out.append(f"| `{key}` | {typ} | {default} | {meaning} |")
    out.append(
        "\nA file with no `[[check]]` table is refused; `opcert gate` without `--config` runs the "
        "built-in default (the whole catalog against opcert's implementation)."
    )
    return "\n".join(out) + "\n"


def cli_reference() -> str:
    from opcert.cli import build_parser

    os.environ["COLUMNS"] = "100"
    parser = build_parser()
    out = [
        "# Command line reference\n",
        "Generated from the parser `opcert` runs (`opcert COMMAND --help` "
        "prints the same). Exit codes: 0 pass, 1 a check failed, 2 bad usage or configuration, "
        "3 an internal error of opcert.\n",
        "```text",
        parser.format_help().rstrip(),
        "```",
    ]
    sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    for name, p in sub.choices.items():
        out += [f"\n## opcert {name}\n", "```text", p.format_help().rstrip(), "```"]
    return "\n".join(out) + "\n"


def _properties_and_implementation(r: dict) -> list[str]:
    """An operator record's declared properties and implementation, as the catalog page shows them."""
    out = ["", "| property | statement |", "|---|---|"]
    out += [f"| `{p['name']}` | {p['statement'].replace('|', '/')} |" for p in r["properties"]]
    return out + ["", "Implementation:", "", "```text", str(r["implementation"]), "```"]


def catalog() -> str:
    from opcert.cli import operator_record
    from opcert.spec import operators

    out = [
        "# The catalog\n",
        "Generated from `opcert ops --json` (each operator's file in "
        "`opcert/spec/ops/`): its formula in each standard, its attributes with their domains and "
        "defaults, the types per version, its declared properties and the expression opcert's "
        "implementation evaluates (in binary64, rounded once).\n",
    ]
    for op in operators():
        r = operator_record(op)
        out.append(
            f"\n## {r['name']}\n\n{r['summary']} (family: {r['family']}; primary standard: "
            f"{r['primary_standard']}; types: {', '.join(r['dtypes'])}).\n"
        )
        out += ["| standard | name | formula | types since |", "|---|---|---|---|"]
        for s in r["standards"]:
            since = "; ".join(f"{x['since']}: {', '.join(x['dtypes'])}" for x in s["support"])
            formula = s["formula"].replace("|", "\\|").replace("\n", " ")
            out.append(f"| {s['key']} | {s['name']} | `{formula}` | {since} |")
        if r["attributes"]:
            out += ["", "| attribute | domain | defaults | meaning |", "|---|---|---|---|"]
            for a in r["attributes"]:
                defaults = ", ".join(f"{k}: {v}" for k, v in a["defaults"].items())
                out.append(f"| `{a['name']}` | {a['domain']} | {defaults} | {a['doc']} |")
        out += _properties_and_implementation(r)
    from opcert.cli import tensor_record
    from opcert.spec import tensor_operators

    out.append(
        "\n## Tensor operators\n\nEach output is a function of its row ([tensor operators]"
        "(tensor-operators.md)); each operator's file is in `opcert/spec/tensor_ops/`.\n"
    )
    for op in tensor_operators():
        r = tensor_record(op)
        out.append(
            f"\n### {r['name']}\n\n{r['summary']} (primary standard: {r['primary_standard']}; types: "
            f"{', '.join(r['dtypes'])}; a -inf entry gives {r['absent']}).\n"
        )
        out += ["| standard | name | formula | rows | types since |", "|---|---|---|---|---|"]
        for s in r["standards"]:
            since = "; ".join(
                f"{x['since']}: {', '.join(x['dtypes'])}"
                + (f" (ranks {x['ranks'][0]} to {x['ranks'][1]})" if x["ranks"] else "")
                for x in s["support"]
            )
            formula = s["formula"].replace("|", "\\|")
            out.append(f"| {s['key']} | {s['name']} | `{formula}` | {s['axes']['text']} | {since} |")
        out += _properties_and_implementation(r)
    return "\n".join(out) + "\n"


def bench_pages() -> dict[str, str]:
    """bench/README.md as performance.md, and the tables it links, under bench/."""
    pages = {"performance.md": (ROOT / "bench" / "README.md").read_text()}
    for f in sorted((ROOT / "bench").glob("*.md")):
        if f.name != "README.md":
            pages[f"bench/{f.name}"] = f.read_text()
    # the README's links to its neighbours, as the site places them
    text = pages["performance.md"]
    for name in list(pages):
        if name.startswith("bench/"):
            text = text.replace(f"]({name[6:]})", f"]({name})")
    pages["performance.md"] = text
    return pages


def _gate_checks() -> int:
    """Checks of the built-in gate (`opcert gate` without --config): one per operator, dtype and mode."""
    from opcert.gating.config import default_config

    return sum(len(c.dtypes) for c in default_config().checks)


def _sweep_chunks() -> int:
    """Chunks of an exhaustive float32 sweep (each 2^24 magnitudes, both signs)."""
    from opcert.verify.accuracy.sweep import SweepConfig

    return SweepConfig("Tanh", "opcert", (), None).chunks


def _elementwise_operators() -> int:
    from opcert.spec import operators

    return len(operators())


# NAME -> the figure as the pages write it, computed from the code
FIGURES = {
    "gate_checks": lambda: f"{_gate_checks():,}",
    "sweep_chunks": lambda: f"{_sweep_chunks():,}",
    "elementwise_operators": lambda: str(_elementwise_operators()),
}
FIGURE = re.compile(r"<!--fig:(\w+)-->(.*?)<!--/fig-->")


def figures() -> dict[str, str]:
    return {name: f() for name, f in FIGURES.items()}


def with_figures(markdown: str, values: dict[str, str] | None = None) -> str:
    """The page with each derived figure set to the value the code gives (an unknown NAME is an error)."""
    values = figures() if values is None else values

    def one(m: re.Match) -> str:
        if m.group(1) not in values:
            raise KeyError(f"unknown figure {m.group(1)!r} (tools/docs_pages.py FIGURES: {', '.join(values)})")
        return f"<!--fig:{m.group(1)}-->{values[m.group(1)]}<!--/fig-->"

    return FIGURE.sub(one, markdown)


def pages() -> dict[str, str]:
    with redirect_stdout(io.StringIO()):
        out = {"configuration.md": configuration(), "cli-reference.md": cli_reference(), "catalog.md": catalog()}
    out.update(bench_pages())
    return out


def on_files(files, config):
    """MkDocs hook: add the generated pages."""
    from mkdocs.structure.files import File

    for path, text in pages().items():
        files.append(File.generated(config, path, content=text))
    return files


_VALUES: dict[str, str] = {}


def on_page_markdown(markdown, page, config, files):
    """MkDocs hook: every derived figure as the code gives it now."""
    if not _VALUES:
        _VALUES.update(figures())
    return with_figures(markdown, _VALUES)


if __name__ == "__main__":
    dest = Path(sys.argv[1] if len(sys.argv) > 1 else "build/docs-pages")
    for path, text in pages().items():
        (dest / path).parent.mkdir(parents=True, exist_ok=True)
        (dest / path).write_text(text)
