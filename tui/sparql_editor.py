"""The SPARQL editor: a TextArea that highlights SPARQL and completes keywords, prefixes and terms.

Textual highlights through tree-sitter, which has no maintained SPARQL grammar on PyPI; SPARQL's
lexical structure (keywords, ``?variables``, ``<IRIs>``, ``prefix:names``, strings, numbers,
``# comments``) is regular, so one regular expression per token class does the job and feeds the
TextArea's own highlight map, styled by its theme like any tree-sitter language would be.

Completion is the TextArea's inline suggestion: the rest of the keyword, prefix or prefixed term
that the word before the cursor starts; right (or tab) accepts it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from textual.widgets import TextArea

from stackgraph.tui.keys import EDITOR

#: SPARQL 1.1 keywords and built-in functions, upper case as they are usually written.
KEYWORDS: tuple[str, ...] = tuple(
    [
        "SELECT",
        "CONSTRUCT",
        "DESCRIBE",
        "ASK",
        "WHERE",
        "FROM",
        "NAMED",
        "PREFIX",
        "BASE",
        "DISTINCT",
        "REDUCED",
        "OPTIONAL",
        "UNION",
        "MINUS",
        "GRAPH",
        "SERVICE",
        "FILTER",
        "BIND",
        "VALUES",
        "AS",
        "ORDER",
        "BY",
        "ASC",
        "DESC",
        "LIMIT",
        "OFFSET",
        "GROUP",
        "HAVING",
        "NOT",
        "EXISTS",
        "IN",
        "COUNT",
        "SUM",
        "MIN",
        "MAX",
        "AVG",
        "SAMPLE",
        "GROUP_CONCAT",
        "SEPARATOR",
        "STR",
        "LANG",
        "LANGMATCHES",
        "DATATYPE",
        "BOUND",
        "IRI",
        "URI",
        "BNODE",
        "RAND",
        "ABS",
        "CEIL",
        "FLOOR",
        "ROUND",
        "CONCAT",
        "STRLEN",
        "UCASE",
        "LCASE",
        "ENCODE_FOR_URI",
        "CONTAINS",
        "STRSTARTS",
        "STRENDS",
        "STRBEFORE",
        "STRAFTER",
        "YEAR",
        "MONTH",
        "DAY",
        "HOURS",
        "MINUTES",
        "SECONDS",
        "TIMEZONE",
        "TZ",
        "NOW",
        "UUID",
        "STRUUID",
        "MD5",
        "SHA1",
        "SHA256",
        "SHA384",
        "SHA512",
        "COALESCE",
        "IF",
        "STRLANG",
        "STRDT",
        "SAMETERM",
        "ISIRI",
        "ISURI",
        "ISBLANK",
        "ISLITERAL",
        "ISNUMERIC",
        "REGEX",
        "SUBSTR",
        "REPLACE",
        "TRUE",
        "FALSE",
    ]
)

_KEYWORD_SET = frozenset(KEYWORDS)
#: (highlight name, pattern), tried in this order at each position; names are TextArea theme keys.
_TOKENS = re.compile(
    r"""(?P<comment>\#[^\n]*)
      | (?P<string>"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')
      | (?P<iri><[^<>"{}|^`\\\s]*>)
      | (?P<variable>[?$][A-Za-z_][\w]*)
      | (?P<prefixed>[A-Za-z][\w.-]*:[\w.-]*|:[\w.-]+)
      | (?P<number>\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)
      | (?P<word>[A-Za-z_]\w*|\ba\b)
    """,
    re.VERBOSE,
)
#: Token class -> the theme's style name.
_STYLE = {
    "comment": "comment",
    "string": "string",
    "iri": "link.uri",
    "variable": "constant.builtin",
    "prefixed": "type",
    "number": "number",
    "keyword": "keyword",
}
_WORD_BEFORE = re.compile(r"[A-Za-z_][\w:.-]*$")


def tokens(line: str) -> Iterable[tuple[int, int, str]]:
    """(start, end, style name) of every highlighted token of one line, in character offsets."""
    for match in _TOKENS.finditer(line):
        kind = match.lastgroup or ""
        if kind == "word":
            if match.group().upper() not in _KEYWORD_SET and match.group() != "a":
                continue
            kind = "keyword"
        yield match.start(), match.end(), _STYLE[kind]


def complete(word: str, terms: Iterable[str]) -> str:
    """The rest of the first keyword or term that ``word`` starts (keywords ignore case); "" if none."""
    if len(word) < 2:
        return ""
    upper = word.upper()
    for keyword in KEYWORDS:
        if keyword.startswith(upper) and keyword != upper:
            # Keep the case the user types in: "sel" → "ect", "SEL" → "ECT".
            rest = keyword[len(word) :]
            return rest.lower() if word.islower() else rest
    for term in terms:
        if term.startswith(word) and term != word:
            return term[len(word) :]
    return ""


class SparqlEditor(TextArea):
    """A TextArea with SPARQL highlighting and completion (``terms``: prefixes and prefixed names)."""

    BINDINGS = EDITOR

    def __init__(self, text: str = "", **kwargs) -> None:
        super().__init__(text, **kwargs)
        #: What completion offers besides keywords: "sg:", "sg:Layer", "rdfs:label", …
        self.terms: list[str] = []

    def _build_highlight_map(self) -> None:
        """Fill the highlight map from the SPARQL tokens (byte offsets, as the renderer expects)."""
        self._line_cache.clear()
        highlights = self._highlights
        highlights.clear()
        for row, line in enumerate(self.document.lines):
            for start, end, name in tokens(line):
                # The map is in UTF-8 byte offsets, like tree-sitter's.
                byte_start = len(line[:start].encode("utf-8"))
                byte_end = byte_start + len(line[start:end].encode("utf-8"))
                highlights[row].append((byte_start, byte_end, name))

    def update_suggestion(self) -> None:
        row, column = self.cursor_location
        line = self.document.get_line(row)
        if column != len(line) and not line[column : column + 1].isspace():
            self.suggestion = ""  # only at the end of a word
            return
        match = _WORD_BEFORE.search(line[:column])
        self.suggestion = complete(match.group(), self.terms) if match else ""

    def action_accept_suggestion(self) -> None:
        """Tab: take the suggestion if there is one, else move focus on (to the results) as usual."""
        if self.suggestion:
            self.insert(self.suggestion)
        else:
            self.screen.focus_next()
