"""Guarded SPARQL: the one way every surface (CLI, HTTP endpoint, MCP tool, TUI) runs a user's query.

A query from outside is untrusted. rdflib will happily follow ``SERVICE <url>``, ``FROM <url>`` and
``LOAD <url>`` to the network, an update would change the graph everyone shares, and a cross product
of every triple with itself four times never ends. So before anything runs, the query is parsed
with rdflib's SPARQL parser and translated to its algebra, and the decision is taken on that tree,
never on the text (a regex misses ``SERVICE`` inside ``OPTIONAL`` or ``EXISTS``, and fires on the
word inside a string):

- SPARQL Update of any kind (INSERT, DELETE, LOAD, CLEAR, DROP, CREATE, ADD, MOVE, COPY): refused.
- ``SERVICE`` anywhere in the algebra (nested in OPTIONAL, UNION, EXISTS, sub-queries): refused.
- ``FROM`` / ``FROM NAMED``: refused, whatever the IRI. The graph is one default graph; a dataset
  clause can add nothing but an outbound fetch (rdflib's own engine loads those IRIs), so the
  simplest honest rule is to refuse them all.
- Time: every query gets a timeout (``DEFAULT_TIMEOUT_S``, a caller may ask for up to
  ``MAX_TIMEOUT_S``). Oxigraph evaluates in Rust with the GIL released, and nothing can interrupt
  it from Python, and pyparsing can take seconds on a crafted text; so for a local graph both the
  parse and the evaluation run in a pre-started worker process (graph/worker_pool.py, started by
  multiprocessing's forkserver: the server itself never forks) that is killed at the deadline and
  replaced. The limit is real, CPU included, and a worker also gets a memory ceiling
  (``MAX_MEMORY_MB`` above what it uses). The worker holds its own copy of the graph
  (graph/snapshot.py), loaded once. Where there is no forkserver, and for a remote store (the
  remote server does the work), the query runs in a daemon thread that is abandoned at the
  deadline: the caller gets its Timeout on time, the thread ends when the store answers. Run
  Oxigraph server with ``--timeout-s`` so that the remote side is bounded too. ``ISOLATION``
  (environment ``STACKGRAPH_SPARQL_ISOLATION=thread``) trades the hard bound for speed locally.
- Rows: at most ``max_rows`` rows (triples for CONSTRUCT/DESCRIBE) come back, default
  ``DEFAULT_MAX_ROWS``, never more than ``MAX_ROWS``; ``QueryResult.truncated`` says when more
  existed.

Timeouts and row caps above the maximum are lowered to the maximum, not refused.
"""

from __future__ import annotations

import csv
import io
import os
import re
import sys
import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import rdflib
from pyparsing import ParseBaseException
from rdflib.plugins.sparql.parser import parseQuery, parseUpdate
from rdflib.plugins.sparql.parserutils import CompValue
from rdflib.plugins.stores.sparqlstore import SPARQLStore
from rdflib.query import Result
from rdflib.term import BNode, Literal, Node, URIRef, Variable

from stackgraph.graph import isolation, snapshot, sparql_text, worker_pool
from stackgraph.graph.store import PREFIXES

#: Seconds a query may run when the caller does not say.
DEFAULT_TIMEOUT_S: float = 5.0
#: The most a caller may ask for; larger requests are lowered to this.
MAX_TIMEOUT_S: float = 30.0
#: Rows (or triples) returned when the caller does not say.
DEFAULT_MAX_ROWS: int = 1000
#: The most rows a caller may ask for; larger requests are lowered to this.
MAX_ROWS: int = 10_000
#: Longer query texts are refused before parsing (see graph/sparql_text.py).
MAX_QUERY_CHARS: int = sparql_text.MAX_QUERY_CHARS
#: Address space a query's worker may allocate beyond what it uses before the query, in MB.
MAX_MEMORY_MB: int = 1024
#: "process" (default): local queries are parsed and run in a worker process, killed at the deadline
#: (hard bound on time, CPU and memory). "thread": they run in a thread that is abandoned at
#: the deadline (the caller still gets its Timeout on time, but the query keeps a core busy until it
#: ends). Set STACKGRAPH_SPARQL_ISOLATION=thread only where every client is trusted.
ISOLATION: str = os.environ.get("STACKGRAPH_SPARQL_ISOLATION", "process")

#: Result formats per query form. ``table`` is for people; the others are the W3C formats.
SELECT_FORMATS = ("table", "json", "csv", "tsv", "xml")
GRAPH_FORMATS = ("table", "turtle", "ntriples", "jsonld", "xml")

_UPDATE_NAMES = {
    "InsertData": "INSERT DATA",
    "DeleteData": "DELETE DATA",
    "DeleteWhere": "DELETE WHERE",
    "Modify": "DELETE/INSERT",
    "Load": "LOAD",
    "Clear": "CLEAR",
    "Drop": "DROP",
    "Create": "CREATE",
    "Add": "ADD",
    "Move": "MOVE",
    "Copy": "COPY",
}
_KINDS = {
    "SelectQuery": "select",
    "AskQuery": "ask",
    "ConstructQuery": "construct",
    "DescribeQuery": "describe",
}


# ---------------------------------------------------------------------------------------- errors


class QueryError(Exception):
    """A query that cannot be answered. ``str()`` is a one-line message meant for the user."""

    def __init__(self, message: str) -> None:
        self.message = " ".join(str(message).split())
        super().__init__(self.message)


class ParseError(QueryError):
    """The text is not SPARQL; ``line`` and ``column`` (1-based) point at the trouble when known."""

    def __init__(self, reason: str, line: int | None = None, column: int | None = None) -> None:
        self.reason = " ".join(reason.split())
        self.line, self.column = line, column
        where = f" at line {line}, column {column}" if line else ""
        super().__init__(f"syntax error{where}: {self.reason}")


class Refused(QueryError):
    """Valid SPARQL that the guard will not run (an update, SERVICE, FROM, a bad limit)."""


class Timeout(QueryError):
    """The query did not finish within its time limit."""

    def __init__(self, timeout_s: float) -> None:
        self.timeout_s = timeout_s
        super().__init__(
            f"query timed out after {timeout_s:g} s; narrow the patterns, add a LIMIT, "
            f"or allow more time (at most {MAX_TIMEOUT_S:g} s)"
        )


class EvaluationError(QueryError):
    """The store failed while running a valid, allowed query (remote store down, out of memory)."""


class ResourceLimit(EvaluationError):
    """The query needed more memory than ``MAX_MEMORY_MB``: the server's limit, not the client's error."""


class Unsupported(QueryError):
    """Valid SPARQL this store cannot evaluate (an unknown extension function): the client's to fix."""


class Overloaded(EvaluationError):
    """Every query worker stayed busy for ``worker_pool.WAIT_S``; try again later (HTTP 503)."""

    def __init__(self) -> None:
        super().__init__(
            f"the server is busy: no query worker was free within {worker_pool.WAIT_S:g} s; try again"
        )


# ---------------------------------------------------------------------------------------- result


@dataclass(frozen=True, eq=False)
class QueryResult:
    """What a query returned, already capped; safe to hand to any surface."""

    #: "select", "ask", "construct" or "describe".
    kind: str
    #: Variable names of a SELECT, in order (empty otherwise).
    vars: tuple[str, ...] = ()
    #: SELECT rows: one term (or None when unbound) per variable.
    rows: tuple[tuple[Node | None, ...], ...] = ()
    #: The answer of an ASK (None otherwise).
    boolean: bool | None = None
    #: The triples of a CONSTRUCT or DESCRIBE (None otherwise).
    graph: rdflib.Graph | None = None
    #: True when the store had more rows (or triples) than the cap let through.
    truncated: bool = False
    elapsed_ms: float = 0.0
    #: The cap that applied, so a surface can say "first 1000 rows".
    max_rows: int = DEFAULT_MAX_ROWS

    @property
    def count(self) -> int:
        """Rows of a SELECT, triples of a CONSTRUCT/DESCRIBE, 1 for an ASK."""
        if self.graph is not None:
            return len(self.graph)
        return 1 if self.kind == "ask" else len(self.rows)


# ---------------------------------------------------------------------------------------- guard


def _parse_error(error: ParseBaseException) -> ParseError:
    reason = re.sub(r"\s*\(at char \d+\),?\s*\(line:\d+, col:\d+\)\s*$", "", str(error)) or error.msg
    return ParseError(reason, error.lineno, error.col)


def _position_of(text: str, needle: str) -> tuple[int | None, int | None]:
    index = text.find(needle)
    if index < 0:
        return None, None
    line = text.count("\n", 0, index) + 1
    return line, index - (text.rfind("\n", 0, index) + 1) + 1


def _walk(node: Any) -> Iterable[CompValue]:
    """Every CompValue in an algebra tree (expressions, sub-queries and EXISTS included)."""
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, CompValue):
            yield item
            stack.extend(item.values())
        elif isinstance(item, list | tuple | set | frozenset):
            stack.extend(item)


def _refuse_update(query: str) -> None:
    """If the text is a SPARQL Update, raise Refused naming the operation; otherwise return."""
    try:
        parsed = parseUpdate(query)
    except Exception:  # not an update either: the caller reports the query parse error
        return
    names = [_UPDATE_NAMES.get(op.name, op.name) for op in (parsed.request or [])]
    if not names:
        return
    if "LOAD" in names:
        raise Refused(
            "LOAD is not allowed: queries may not fetch remote documents, and the graph is read-only"
        )
    raise Refused(f"SPARQL Update ({', '.join(dict.fromkeys(names))}) is not allowed: the graph is read-only")


#: pyparsing guesses each parse action's arity on its first call, and two threads guessing at
#: once can both get it wrong for good ("postParse2() missing 1 required positional argument").
#: Every rdflib parse in this process holds this lock.
_PARSE_LOCK = threading.Lock()

#: rdflib's grammar recurses once per triple pattern of a group: at Python's default limit (1,000)
#: a group of about 90 patterns is "too complex". 8,000 lets about 500 through, still well inside the
#: 8 MB C stack (3.11 runs Python-to-Python calls without C recursion); deeper texts are refused.
PARSER_RECURSION_LIMIT = 8000
if sys.getrecursionlimit() < PARSER_RECURSION_LIMIT:
    sys.setrecursionlimit(PARSER_RECURSION_LIMIT)


@lru_cache(maxsize=512)
def _check(query: str, prefixes: tuple[tuple[str, str], ...]) -> str:
    """Parse, translate and vet one normalized query text; return its kind. Cached: parsing is the slow part."""
    with _PARSE_LOCK:
        try:
            return _vet_tree(query, prefixes)
        except RecursionError:
            raise Refused(
                "query is too complex for the parser (too many patterns in one group, or nested too "
                "deep); split it into smaller groups"
            ) from None


def _vet_tree(query: str, prefixes: tuple[tuple[str, str], ...]) -> str:
    from rdflib.plugins.sparql.algebra import translateQuery

    if not query.strip():
        raise ParseError("empty query")
    try:
        parsed = parseQuery(query)
    except ParseBaseException as error:
        _refuse_update(query)
        raise _parse_error(error) from None
    try:
        translated = translateQuery(parsed, initNs=dict(prefixes))
    except RecursionError:
        raise
    except Exception as error:  # rdflib raises bare Exception for unknown prefixes and the like
        text = " ".join(str(error).split())
        match = re.match(r"Unknown namespace prefix : (\S+)", text)
        if match:
            line, column = _position_of(query, f"{match.group(1)}:")
            raise ParseError(f"unknown prefix '{match.group(1)}:'", line, column) from None
        raise ParseError(text or type(error).__name__) from None
    algebra = translated.algebra
    for node in _walk(algebra):
        if node.name == "ServiceGraphPattern":
            raise Refused(
                f"SERVICE <{dict.get(node, 'term')}> is not allowed: queries may not call other endpoints"
            )
        dataset = dict.get(node, "datasetClause")  # CompValue.get returns the key itself when absent
        if dataset:
            clause = dataset[0]
            named = dict.get(clause, "named")
            keyword, iri = ("FROM NAMED", named) if named else ("FROM", dict.get(clause, "default"))
            raise Refused(
                f"{keyword} <{iri}> is not allowed: queries run over this graph only; drop the dataset clause"
            )
    kind = _KINDS.get(algebra.name)
    if kind is None:
        raise Refused(f"unsupported query form {algebra.name}")
    try:
        sparql_text.refuse_keywords(query)
    except sparql_text.TextProblem as problem:
        raise Refused(problem.message) from None
    return kind


def _pooled() -> bool:
    return ISOLATION != "thread" and worker_pool.available()


def _error_record(error: QueryError) -> tuple[str, str, str, int | None, int | None]:
    """A QueryError as plain data, to cross from a worker (exceptions with custom __init__ do not pickle)."""
    if isinstance(error, ParseError):
        return ("query-error", "ParseError", error.reason, error.line, error.column)
    return ("query-error", type(error).__name__, error.message, None, None)


def _from_record(record: tuple) -> QueryError:
    _, name, message, line, column = record
    if name == "ParseError":
        return ParseError(message, line, column)
    return {"Refused": Refused, "Timeout": QueryError, "EvaluationError": EvaluationError}.get(
        name, QueryError
    )(message)


def _worker_check(text: str, prefixes: tuple[tuple[str, str], ...]) -> tuple:
    """In a worker: the guard's verdict on ``text`` as ``("ok", kind)`` or an error record."""
    try:
        return ("ok", _check(text, prefixes))
    except QueryError as error:
        return _error_record(error)


def _worker_run(
    shot: snapshot.Snapshot, text: str, prefixes: tuple[tuple[str, str], ...], kind: str, cap: int
) -> tuple:
    """In a worker: run a vetted text on the snapshot's graph."""
    return _collect(snapshot.load(shot), text, dict(prefixes), kind, cap)


@lru_cache(maxsize=512)
def _pooled_check(text: str, prefixes: tuple[tuple[str, str], ...], timeout_s: float) -> str:
    """The guard run in a worker, inside a deadline; verdicts that let a query run are cached here."""
    try:
        reply = worker_pool.shared().call(
            _worker_check, text, prefixes, timeout_s=timeout_s, memory_mb=MAX_MEMORY_MB
        )
    except isolation.Deadline:
        raise Refused(
            f"the query took more than {timeout_s:g} s to parse; shorten it (fewer alternatives, smaller groups)"
        ) from None
    except (isolation.ChildDied, isolation.WorkFailed):
        raise Refused("the query is too complex for the parser; split it into smaller groups") from None
    except worker_pool.Busy:
        raise Overloaded() from None
    if reply[0] != "ok":
        raise _from_record(reply)
    return reply[1]


def vet(query: str, init_ns: Mapping[str, str] = PREFIXES, timeout_s: float | None = None) -> tuple[str, str]:
    """Vet a query; return ``(text, kind)``: the text to hand the store, and the query form.

    ``text`` is the query with its ``\\u`` escapes expanded once (graph/sparql_text.py): the store
    must run that text, the one the guard read, never the original. The parse runs in a worker
    within ``timeout_s`` (``DEFAULT_TIMEOUT_S``) unless isolation is off. Raises ParseError or Refused.
    """
    try:
        text = sparql_text.normalize(query)
    except sparql_text.TextProblem as problem:
        if problem.refused:
            raise Refused(problem.message) from None
        raise ParseError(problem.message) from None
    prefixes = tuple(sorted((str(k), str(v)) for k, v in init_ns.items()))
    if _pooled():
        return text, _pooled_check(text, prefixes, timeout_s or DEFAULT_TIMEOUT_S)
    return text, _check(text, prefixes)


def check_query(query: str, init_ns: Mapping[str, str] = PREFIXES) -> str:
    """Vet a query without running it; return its kind ("select", "ask", "construct", "describe").

    Raises ParseError or Refused. Surfaces may call it to reject early (the TUI does, as you type).
    """
    return vet(query, init_ns)[1]


def _bounded(value: float | int | None, default: float, maximum: float, name: str) -> float:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        raise Refused(f"{name} must be a positive number, not {value!r}")
    return min(float(value), maximum)


# ---------------------------------------------------------------------------------------- running


_XSD_STRING = URIRef("http://www.w3.org/2001/XMLSchema#string")


def _plain(term: Any) -> Any:
    """oxrdflib types every simple literal as xsd:string; RDF 1.1 says they are the same thing, and
    the W3C formats (and Oxigraph server) leave the datatype out, so drop it here."""
    if isinstance(term, Literal) and term.datatype == _XSD_STRING:
        return Literal(str(term))
    return term


def _collect(graph: rdflib.Graph, query: str, init_ns: Mapping[str, str], kind: str, max_rows: int) -> tuple:
    """Run the query and take at most ``max_rows`` + 1 rows (the extra one detects truncation).

    Returns plain picklable data: it travels back from a worker process.
    """
    result = graph.query(query, initNs=dict(init_ns))
    if kind == "ask":
        return (), (), bool(result.askAnswer), None, False
    if kind == "select":
        names = tuple(str(v) for v in (result.vars or ()))
        rows = []
        for row in result:
            if len(rows) == max_rows:
                return names, tuple(rows), None, None, True
            rows.append(tuple(_plain(term) for term in row))
        return names, tuple(rows), None, None, False
    triples = []
    for triple in result.graph if result.graph is not None else result:
        if len(triples) == max_rows:
            return (), (), None, tuple(triples), True
        triples.append(tuple(_plain(term) for term in triple))
    return (), (), None, tuple(triples), False


def _store_error(failure: isolation.WorkFailed, line_offset: int = 0) -> QueryError:
    """What an exception from the store means for the user (Oxigraph's SyntaxError carries L:C)."""
    if failure.error is not None and is_remote_error(failure.error):
        from stackgraph.graph.remote import describe_error

        return EvaluationError(f"the remote store could not run the query: {describe_error(failure.error)}")
    if failure.name == "SyntaxError":
        match = re.search(r"(\d+):(\d+)", failure.message)
        line, column = (int(match.group(1)), int(match.group(2))) if match else (None, None)
        if line is not None and line > line_offset:
            line -= line_offset
        reason = re.sub(r"^error at \d+:\d+(-\d+:\d+)?:\s*", "", failure.message)
        return ParseError(_readable_reason(reason), line, column)
    if failure.name == "MemoryError":
        return ResourceLimit(f"the query was stopped: it needed more than {MAX_MEMORY_MB} MB of memory")
    if re.search(r"function .* is not supported", failure.message):
        return Unsupported(f"{failure.message}; this store knows the SPARQL 1.1 built-in functions only")
    return EvaluationError(f"the store could not run the query: {failure.message or failure.name}")


#: Oxigraph lists every expected character class ("[\\u{c0}-\\u{d6}] or ..."): unreadable, so cut.
_CHAR_RANGES = re.compile(r"\[?\\u\{[0-9a-fA-F]+\}(-\\u\{[0-9a-fA-F]+\})?\]?")
_MAX_REASON = 160


def _readable_reason(reason: str) -> str:
    """A parser's reason, short: character-range lists dropped, the rest cut at ``_MAX_REASON``."""
    if _CHAR_RANGES.search(reason):
        head = reason.split("expected", 1)[0].strip(" ,:;")
        reason = (head + ", " if head else "") + "unexpected character here"
    if len(reason) > _MAX_REASON:
        reason = reason[: _MAX_REASON - 1].rstrip() + "…"
    return reason


def is_remote_error(error: BaseException) -> bool:
    """Whether a urllib error is anywhere in the chain (rdflib wraps them in ValueError)."""
    import urllib.error

    link: BaseException | None = error
    while link is not None:
        if isinstance(link, urllib.error.URLError):
            return True
        link = link.__cause__ or link.__context__
    return False


def is_remote(graph: rdflib.Graph) -> bool:
    return isinstance(graph.store, SPARQLStore)


def run_query(
    graph: rdflib.Graph,
    query: str,
    *,
    timeout_s: float | None = None,
    max_rows: int | None = None,
    init_ns: Mapping[str, str] = PREFIXES,
    base: str | None = None,
) -> QueryResult:
    """Vet and run one read-only SPARQL query with a time limit and a row cap.

    ``init_ns`` prefixes are predeclared (the ontology's, by default); the query may declare more.
    ``base`` resolves relative IRIs (``<s>``) when the query has no BASE; the HTTP endpoint passes
    its own URL, as the SPARQL protocol expects.
    Raises ParseError, Refused, Timeout or EvaluationError, all QueryError with a one-line message.
    """
    timeout = _bounded(timeout_s, DEFAULT_TIMEOUT_S, MAX_TIMEOUT_S, "timeout")
    cap = int(_bounded(max_rows, DEFAULT_MAX_ROWS, MAX_ROWS, "row limit"))
    text, kind = vet(query, init_ns, timeout)
    # A BASE line rather than rdflib's base= argument: oxrdflib refuses that argument and rdflib then
    # falls back to its own slow engine. A BASE in the query itself still wins (it comes later).
    if base:
        text = f"BASE <{base}>\n{text}"
    started = time.perf_counter()
    prefixes = tuple(sorted((str(k), str(v)) for k, v in init_ns.items()))

    try:
        if _pooled() and not is_remote(graph) and snapshot.can_snapshot(graph):
            shot = snapshot.snapshot_of(graph)
            outcome = worker_pool.shared().call(
                _worker_run,
                shot,
                text,
                prefixes,
                kind,
                cap,
                timeout_s=timeout,
                memory_mb=MAX_MEMORY_MB,
                setup=(snapshot.load, (shot,)),
            )
        else:
            outcome = isolation.in_thread(
                lambda: _collect(graph, text, init_ns, kind, cap), timeout, name="sparql-query"
            )
    except isolation.Deadline:
        raise Timeout(timeout) from None
    except isolation.ChildDied:
        raise ResourceLimit(
            f"the query was stopped: it needed more than {MAX_MEMORY_MB} MB of memory"
        ) from None
    except isolation.WorkFailed as failure:
        raise _store_error(failure, line_offset=1 if base else 0) from None
    except worker_pool.Busy:
        raise Overloaded() from None
    names, rows, boolean, triples, truncated = outcome
    result_graph = None
    if triples is not None:
        result_graph = rdflib.Graph()
        for prefix, iri in init_ns.items():
            result_graph.bind(prefix, iri, override=True)
        for triple in triples:
            result_graph.add(triple)
    return QueryResult(
        kind=kind,
        vars=names,
        rows=rows,
        boolean=boolean,
        graph=result_graph,
        truncated=truncated,
        elapsed_ms=(time.perf_counter() - started) * 1000,
        max_rows=cap,
    )


# ---------------------------------------------------------------------------------------- formats

#: Media types of each format, for the HTTP endpoint and for ``--format`` alike.
SELECT_MEDIA_TYPES = {
    "json": "application/sparql-results+json",
    "xml": "application/sparql-results+xml",
    "csv": "text/csv",
    "tsv": "text/tab-separated-values",
}
GRAPH_MEDIA_TYPES = {
    "turtle": "text/turtle",
    "ntriples": "application/n-triples",
    "jsonld": "application/ld+json",
    "xml": "application/rdf+xml",
}
_RDFLIB_GRAPH_FORMATS = {"turtle": "turtle", "ntriples": "nt", "jsonld": "json-ld", "xml": "xml"}


def short_name(term: Node | None, prefixes: Mapping[str, str] = PREFIXES) -> str:
    """How a person reads a term: ``kg:nvlink`` for IRIs under a known prefix, text for literals."""
    if term is None:
        return ""
    if isinstance(term, URIRef):
        best = max((iri for iri in prefixes.values() if term.startswith(iri)), key=len, default=None)
        if best is not None:
            local = term[len(best) :]
            if re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9_.\-]*", local) and not local.endswith("."):
                prefix = next(p for p, iri in prefixes.items() if iri == best)
                return f"{prefix}:{local}"
        return f"<{term}>"
    if isinstance(term, BNode):
        return f"_:{term}"
    return " ".join(str(term).split())


def _table(header: list[str], rows: list[list[str]], footer: str, width: int = 80) -> str:
    cells = [[cell if len(cell) <= width else cell[: width - 1] + "…" for cell in row] for row in rows]
    widths = [max([len(h), *(len(r[i]) for r in cells)]) for i, h in enumerate(header)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)).rstrip()]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in cells]
    lines.append(footer)
    return "\n".join(lines) + "\n"


def _footer(result: QueryResult, noun: str) -> str:
    count = result.count
    text = f"({count} {noun}{'' if count == 1 else 's'}"
    if result.truncated:
        text += f"; truncated at {result.max_rows}, more exist: raise the limit (at most {MAX_ROWS})"
    return text + ")"


def _tsv_term(term: Node | None) -> str:
    """A term in the SPARQL 1.1 TSV syntax (N-Triples style, tabs and newlines escaped)."""
    if term is None:
        return ""
    if isinstance(term, URIRef):
        return f"<{term}>"
    if isinstance(term, BNode):
        return f"_:{term}"
    assert isinstance(term, Literal)
    text = str(term).replace("\\", "\\\\").replace('"', '\\"')
    text = text.replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")
    if term.language:
        return f'"{text}"@{term.language}'
    if term.datatype and str(term.datatype) != "http://www.w3.org/2001/XMLSchema#string":
        return f'"{text}"^^<{term.datatype}>'
    return f'"{text}"'


def _rdflib_result(result: QueryResult) -> Result:
    if result.kind == "ask":
        out = Result("ASK")
        out.askAnswer = bool(result.boolean)
        return out
    out = Result("SELECT")
    out.vars = [Variable(v) for v in result.vars]
    out.bindings = [
        {Variable(v): term for v, term in zip(result.vars, row, strict=True) if term is not None}
        for row in result.rows
    ]
    return out


def format_result(result: QueryResult, fmt: str = "table") -> str:
    """Render a result: ``SELECT_FORMATS`` for SELECT/ASK, ``GRAPH_FORMATS`` for CONSTRUCT/DESCRIBE.

    The W3C formats come from rdflib's serializers; TSV is written here because rdflib only parses
    it, and the table is for people (IRIs as prefixed names, long cells cut). Raises ValueError for
    a format the query form does not have.
    """
    if result.graph is not None:
        if fmt not in GRAPH_FORMATS:
            raise ValueError(
                f"format {fmt!r} is not for {result.kind.upper()}; use one of {', '.join(GRAPH_FORMATS)}"
            )
        if fmt == "table":
            triples = sorted(result.graph, key=lambda t: tuple(str(x) for x in t))
            rows = [[short_name(x) for x in triple] for triple in triples]
            return _table(["subject", "predicate", "object"], rows, _footer(result, "triple"))
        return result.graph.serialize(format=_RDFLIB_GRAPH_FORMATS[fmt])
    if fmt not in SELECT_FORMATS:
        raise ValueError(
            f"format {fmt!r} is not for {result.kind.upper()}; use one of {', '.join(SELECT_FORMATS)}"
        )
    if result.kind == "ask":
        if fmt in ("table", "csv", "tsv"):  # CSV/TSV define no boolean; write it bare, as Oxigraph does
            return "true" if result.boolean else "false"
        return _rdflib_result(result).serialize(format=fmt).decode("utf-8")
    if fmt == "table":
        rows = [[short_name(term) for term in row] for row in result.rows]
        return _table(list(result.vars), rows, _footer(result, "row"))
    if fmt == "tsv":
        lines = ["\t".join(f"?{v}" for v in result.vars)]
        lines += ["\t".join(_tsv_term(term) for term in row) for row in result.rows]
        return "\n".join(lines) + "\n"
    if fmt == "csv" and not result.vars:
        return "\r\n"
    text = _rdflib_result(result).serialize(format=fmt).decode("utf-8")
    if fmt == "csv":
        return _normalise_csv(text)
    return text


def _normalise_csv(text: str) -> str:
    """rdflib writes CSV through the csv module already; re-read and re-write to pin CRLF endings."""
    rows = list(csv.reader(io.StringIO(text)))
    out = io.StringIO()
    csv.writer(out, lineterminator="\r\n").writerows(rows)
    return out.getvalue()


__all__ = [
    "DEFAULT_MAX_ROWS",
    "DEFAULT_TIMEOUT_S",
    "GRAPH_FORMATS",
    "GRAPH_MEDIA_TYPES",
    "MAX_ROWS",
    "MAX_TIMEOUT_S",
    "EvaluationError",
    "Overloaded",
    "ParseError",
    "QueryError",
    "QueryResult",
    "Refused",
    "ResourceLimit",
    "SELECT_FORMATS",
    "SELECT_MEDIA_TYPES",
    "Timeout",
    "Unsupported",
    "check_query",
    "format_result",
    "run_query",
    "short_name",
]
