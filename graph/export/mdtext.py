"""Markdown building blocks shared by the subgraph page and the docs site.

Text from the graph is escaped so that it reads literally on GitHub, GitLab and in markdown-it:
Markdown punctuation is backslash-escaped, ``<`` and ``&`` become entities (so a label holding
``<b>`` never turns into HTML), and pipes are escaped so that table cells stay cells.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from stackgraph.graph.model import SourceRef

# Characters that are Markdown syntax anywhere in a line; "_" only where it can open or close
# emphasis (not inside snake_case words), so the raw Markdown stays readable.
_MD_SPECIAL = re.compile(r"([\\`*\[\]|~]|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9]))")
# Characters that are syntax only at the start of a line (headings, quotes, lists).
_LINE_START = re.compile(r"^([#>+-]|\d+(?=[.)]))")


def md(text: object) -> str:
    """Text as literal Markdown inline content, on one line (not at the start of a line)."""
    flat = " ".join(str(text).split())
    flat = flat.replace("&", "&amp;").replace("<", "&lt;")
    return _MD_SPECIAL.sub(r"\\\1", flat)


def para(text: object) -> str:
    """Text as the start of a Markdown paragraph: also escapes what would open a heading, quote
    or list there ("# ", "> ", "- ", "1. ")."""
    flat = md(text)
    match = _LINE_START.match(flat)
    if match:
        if match.group(1)[0].isdigit():  # "1. x" -> "1\. x"
            return flat[: match.end()] + "\\" + flat[match.end() :]
        return "\\" + flat
    return flat


def code(text: object) -> str:
    """An inline code span holding ``text`` (fenced with enough backticks; pipes escaped for tables)."""
    flat = " ".join(str(text).split())
    longest = max((len(run) for run in re.findall(r"`+", flat)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if flat.startswith("`") or flat.endswith("`") else ""
    return f"{fence}{pad}{flat.replace('|', chr(92) + '|')}{pad}{fence}"


def link(text: str, href: str) -> str:
    return f"[{md(text)}]({href})"


def table(headers: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    """A GFM table; cells are already Markdown (use md() for plain text)."""
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    lines += ["| " + " | ".join(cell or " " for cell in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def without_empty_columns(
    headers: Sequence[str], rows: Sequence[Sequence[str]]
) -> tuple[list[str], list[list[str]]]:
    """The table with the columns no row fills left out (a model that records no "Runs in")."""
    keep = [i for i in range(len(headers)) if any((row[i] or "").strip() for row in rows)]
    return [headers[i] for i in keep], [[row[i] for i in keep] for row in rows]


def mermaid_block(diagram_text: str) -> str:
    return f"```mermaid\n{diagram_text.rstrip()}\n```\n"


def source_text(ref: SourceRef) -> str:
    """ "The Nine-Layer Model § Where other technologies fit": a citation by document title and
    section (the file name stays in the JSON and RDF exports as an identifier)."""
    return f"{md(ref.title or ref.document)} § {md(ref.section)}"


def numbered_sources(refs: Sequence[SourceRef]) -> str:
    """The "Sources" list of a page, numbered so tables can cite [1], [2]."""
    if not refs:
        return "No source is recorded in the graph for what this page shows.\n"
    return "".join(f"{i}. {source_text(ref)}\n" for i, ref in enumerate(refs, start=1))


def cite(refs: Iterable[SourceRef], numbering: dict[SourceRef, int]) -> str:
    """ "[1] [3]" for these sources, by their number in the page's source list."""
    numbers = sorted({numbering[r] for r in refs if r in numbering})
    return " ".join(f"[{n}]" for n in numbers)
