"""The one text of a query that both the guard and the store see, and cheap checks run before parsing.

Two parsers read a user's query: rdflib's (pyparsing) decides whether it may run, Oxigraph's runs it.
They must read the same thing. The SPARQL 1.1 grammar (section 19.2) says ``\\uXXXX`` and
``\\UXXXXXXXX`` escapes are expanded over the whole text *before* parsing. rdflib does that; Oxigraph
only decodes them inside strings and IRIs. So ``"\\u0022 ..."`` was a string to the guard and a quote
plus code to the store: a ``SERVICE`` hidden that way ran. ``normalize`` therefore expands the escapes
once, here, and hands the expanded text to both; a text that would expand a second time (an escape
that spells another escape) is refused, so rdflib's own expansion finds nothing left to change.

On that text, before any parser runs (pyparsing is slow and recursive, and its time is only bounded
once it runs in a worker):

- a size cap (``MAX_QUERY_CHARS``) and a nesting cap (``MAX_NESTING`` brackets deep);
- a lexical check, a second opinion that does not trust either parser's reading of strings and
  comments: the text is split into strings, IRIs, comments and code per the SPARQL terminals,
  reading comments as ending at the first CR or LF (the shortest reading, which shows the most
  code). A ``SERVICE`` or ``FROM`` keyword in code is refused even if rdflib's tree has none. ``<``
  is read both as the start of an IRI and as an operator, and the keyword counts in either reading.
"""

from __future__ import annotations

import re

#: Longer query texts are refused before parsing (pyparsing's time grows faster than the text).
MAX_QUERY_CHARS: int = 20_000
#: Deeper nesting of ``{``, ``(`` and ``[`` is refused: the parser recurses once per level, and
#: past about 30 levels Python's recursion limit turns the query into a traceback.
MAX_NESTING: int = 24


class TextProblem(Exception):
    """The text is refused before parsing. ``refused`` is False when it is simply not SPARQL."""

    def __init__(self, message: str, *, refused: bool = True) -> None:
        self.message = message
        self.refused = refused
        super().__init__(message)


_ESCAPE = re.compile(r"\\u([0-9A-Fa-f]{4})|\\U([0-9A-Fa-f]{8})")

# SPARQL terminals (SPARQL 1.1 section 19.8). Long strings before short ones, as the grammar says.
_ECHAR = r"\\[tbnrf\\\"']"
_TOKEN = re.compile(
    rf"""(?P<string>'''(?:(?:'|'')?(?:[^'\\]|{_ECHAR}))*'''
        |\"\"\"(?:(?:\"|\"\")?(?:[^\"\\]|{_ECHAR}))*\"\"\"
        |'(?:[^'\\\n\r]|{_ECHAR})*'
        |"(?:[^"\\\n\r]|{_ECHAR})*")
      |(?P<iri><[^<>"{{}}|^`\\\x00-\x20]*>)
      |(?P<comment>\#[^\r\n]*)""",
    re.VERBOSE,
)
# A keyword in code: not part of a name, variable, prefixed name or language tag, and followed by
# what may follow it (space, a comment, an IRI, a variable, or FROM NAMED).
_KEYWORD = re.compile(r"(?<![\w:?$@])(SERVICE|FROM)(?=[\s#<?$]|NAMED|$)", re.IGNORECASE)
_SPECIAL = re.compile(r"['\"<#]")
_OPEN, _CLOSE = "{([", "})]"


def expand_escapes(text: str) -> str:
    """Expand ``\\uXXXX`` / ``\\UXXXXXXXX`` once, as the SPARQL grammar does before parsing.

    Raises TextProblem for an escape that names no character, one that spells ASCII punctuation,
    space or a control character (a quote, ``#``, ``<`` or a newline made by an escape is how the two
    parsers were made to disagree; nobody needs one), or one whose expansion spells another escape.
    """

    def expand(match: re.Match[str]) -> str:
        digits = match.group(1) or match.group(2)
        code = int(digits, 16)
        if code > 0x10FFFF or 0xD800 <= code <= 0xDFFF:
            raise TextProblem(f"\\u escape {match.group(0)} is not a Unicode character", refused=False)
        char = chr(code)
        if code < 0x80 and not char.isalnum():
            raise TextProblem(
                f"the escape {match.group(0)} spells {char!r}, a character SPARQL's syntax depends on; "
                "write it directly (escapes are for letters beyond ASCII)"
            )
        return char

    expanded = _ESCAPE.sub(expand, text)
    again = _ESCAPE.search(expanded)
    if again:
        raise TextProblem(
            f"the query spells the escape {again.group(0)} with other escapes; write the character itself"
        )
    return expanded


def _code(text: str, iris_masked: bool) -> str:
    """The text with strings and comments (and IRIs, if ``iris_masked``) blanked out, same length.

    Raises TextProblem at a quote that starts no valid string: outside strings, comments and IRIs a
    quote always starts one, so the text is not SPARQL, and guessing where the string ends could
    hide code.
    """
    out: list[str] = []
    position = 0
    while True:
        special = _SPECIAL.search(text, position)
        if special is None:
            out.append(text[position:])
            return "".join(out)
        start = special.start()
        out.append(text[position:start])
        match = _TOKEN.match(text, start)
        kind = match.lastgroup if match else None
        if kind is None or (kind == "iri" and not iris_masked):
            if text[start] in "'\"":
                line = text.count("\n", 0, start) + 1
                raise TextProblem(f"unterminated string or bad escape at line {line}", refused=False)
            out.append(text[start])  # '<' read as an operator
            position = start + 1
            continue
        token = match.group(0)
        # keep the delimiters so that brackets and keywords cannot join across a masked token
        out.append(" " * len(token) if kind == "comment" else token[0] + " " * (len(token) - 2) + token[-1])
        position = match.end()


def nesting_depth(code: str) -> int:
    """How deep ``{``, ``(`` and ``[`` nest in already-masked code."""
    depth = deepest = 0
    for char in code:
        if char in _OPEN:
            depth += 1
            deepest = max(deepest, depth)
        elif char in _CLOSE:
            depth = max(depth - 1, 0)
    return deepest


def normalize(text: str) -> str:
    """The text both parsers get: escapes expanded once. Raises TextProblem if it must not be parsed
    (too long, too deeply nested, an escape that expands twice, an unterminated string)."""
    if len(text) > MAX_QUERY_CHARS:
        raise TextProblem(f"query is {len(text):,} characters; the limit is {MAX_QUERY_CHARS:,}")
    expanded = expand_escapes(text)
    depth = nesting_depth(_code(expanded, iris_masked=True))
    if depth > MAX_NESTING:
        raise TextProblem(
            f"query nests brackets {depth} deep; the limit is {MAX_NESTING}: flatten the groups"
        )
    return expanded


def refuse_keywords(text: str) -> None:
    """Raise TextProblem if ``SERVICE`` or ``FROM`` stands in code under any reading of ``<``.

    Run after the parser's own check, which names the IRI; this one catches what a parser's reading
    of strings or comments might have hidden.
    """
    for code in (_code(text, iris_masked=True), _code(text, iris_masked=False)):
        match = _KEYWORD.search(code)
        if match:
            word = match.group(1).upper()
            why = (
                "queries may not call other endpoints"
                if word == "SERVICE"
                else "queries run over this graph only"
            )
            raise TextProblem(f"{word} is not allowed: {why}")


__all__ = [
    "MAX_NESTING",
    "MAX_QUERY_CHARS",
    "TextProblem",
    "expand_escapes",
    "nesting_depth",
    "normalize",
    "refuse_keywords",
]
