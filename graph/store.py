"""Where the triples live: the one module that knows which store backs the graph.

The built-in graph (the Turtle under ``stackgraph/ontology``) is loaded into rdflib's API over the
Oxigraph engine (oxrdflib): per-query SPARQL about 30x faster than rdflib's Memory store, loading
12x faster. User files given with ``--data`` are bulk-loaded by Oxigraph's own parsers into a
store made for that load (graph/userdata.py, graph/userstore.py), so a malformed or hostile file is
reported (file, line, reason) and never leaves half its triples behind. ``parse_file`` (rdflib's
parsers) remains for small files such as a ``--shapes`` file.
Every other module asks this one for a graph; swapping in a remote store only changes this file.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

import rdflib
from rdflib.util import guess_format

if TYPE_CHECKING:
    import pyoxigraph

    from stackgraph.graph.remote import PushManifest


class _RememberingNamespace(rdflib.Namespace):
    """rdflib's Namespace, keeping each term it makes as an attribute.

    Why: ``SG.Layer`` and its kind sit on the answering path, hundreds of lookups per question, and
    rdflib builds and validates a new URIRef on every one (0.15 ms of a 3 ms answer).
    """

    def __getattr__(self, name: str) -> rdflib.URIRef:
        term = super().__getattr__(name)
        self.__dict__[name] = term  # found by ordinary attribute lookup from now on
        return term


SG = _RememberingNamespace("https://w3id.org/stackgraph/ns#")
KG = _RememberingNamespace("https://w3id.org/stackgraph/id/")


def is_builtin_entity(iri: str) -> bool:
    """Whether ``iri`` is one of the built-in graph's entities: they are all ``kg:`` IRIs, while
    user data (``--data``, a store filled by ``push``) names its own. Word statistics are taken
    over these alone (graph/lexical.py, graph/answering/passages.py), so that loading an inventory
    of 100k GPUs does not reweigh what "node" or "GPU" says about the stack, and an embedded graph
    with the user's data answers the stack's questions as a remote store holding it does."""
    return iri.startswith(KG)


#: Prefixes predeclared for every SPARQL query on every surface.
PREFIXES: dict[str, str] = {
    "sg": str(SG),
    "kg": str(KG),
    "rdf": "http://www.w3.org/1999/02/22-rdf-syntax-ns#",
    "rdfs": "http://www.w3.org/2000/01/rdf-schema#",
    "owl": "http://www.w3.org/2002/07/owl#",
    "xsd": "http://www.w3.org/2001/XMLSchema#",
    "skos": "http://www.w3.org/2004/02/skos/core#",
    "dct": "http://purl.org/dc/terms/",
    "prov": "http://www.w3.org/ns/prov#",
    "sh": "http://www.w3.org/ns/shacl#",
}

# rdflib format name -> the oxrdflib parser that reads it natively (fast path).
_OX_FORMATS = {
    "turtle": "ox-turtle",
    "nt": "ox-ntriples",
    "xml": "ox-xml",
    "trig": "ox-trig",
    "nquads": "ox-nquads",
}


class DataFileError(ValueError):
    """A user data file could not be read. ``str()`` is the one-line message for the user."""

    def __init__(self, path: Path | str, reason: str, line: int | None = None) -> None:
        self.path = str(path)
        self.line = line
        self.reason = reason
        where = f"{self.path}:{line}" if line else self.path
        super().__init__(f"{where}: {reason}")


@dataclass
class LoadedGraph:
    """The graph every surface queries, plus what it was built from."""

    graph: rdflib.Graph
    #: Hash of the built-in Turtle and every --data file: keys caches (the embedding index).
    content_hash: str
    #: The user files merged into the built-in graph, in order.
    data_files: list[str] = field(default_factory=list)
    #: The remote SPARQL endpoint behind the graph, or None for the embedded store.
    store_url: str | None = None
    #: Blocks until checks of --data files still running in the background have passed; raises
    #: their DataFileError. Only ``load_graph(background_checks=True)`` leaves any running.
    wait_checked: Callable[[], None] = lambda: None
    #: With ``store_url``: what ``stackgraph push`` noted it pushed there (graph.remote.PushManifest),
    #: or None when the store was filled otherwise.
    push_manifest: PushManifest | None = None


def builtin_files() -> list[Path]:
    """The built-in Turtle files, vocabulary first, in a stable order."""
    root = resources.files("stackgraph.ontology")
    files = [Path(str(root / "vocabulary.ttl"))]
    files += sorted(Path(str(p)) for p in (root / "data").iterdir() if str(p).endswith(".ttl"))
    return files


def shapes_file() -> Path:
    return Path(str(resources.files("stackgraph.ontology") / "shapes.ttl"))


def new_graph() -> rdflib.Graph:
    """An empty graph on the embedded Oxigraph store, with the project's prefixes bound."""
    graph = rdflib.Graph(store="Oxigraph")
    for prefix, iri in PREFIXES.items():
        graph.bind(prefix, iri, override=True)
    return graph


@dataclass(frozen=True)
class OxigraphView:
    """The pyoxigraph store behind an embedded rdflib graph, and that graph's name in it.

    Bulk work (dumps, counts, queries whose rows need not become rdflib terms) is many times
    faster on pyoxigraph directly; oxrdflib keeps its store private (``_inner``), so this is the
    one place that reaches for it.
    """

    store: pyoxigraph.Store
    #: ``pyoxigraph.DefaultGraph()`` or the named graph's node.
    name: pyoxigraph.DefaultGraph | pyoxigraph.NamedNode | pyoxigraph.BlankNode

    @property
    def query_options(self) -> dict[str, object]:
        """Keyword arguments for ``store.query`` that make this graph the default graph."""
        import pyoxigraph as ox

        return {} if self.name == ox.DefaultGraph() else {"default_graph": self.name}


def oxigraph_of(graph: rdflib.Graph) -> OxigraphView | None:
    """The pyoxigraph view of ``graph``, or None when it is not on the embedded store (remote)."""
    from oxrdflib import OxigraphStore

    if not isinstance(graph.store, OxigraphStore):
        return None
    import pyoxigraph as ox
    from oxrdflib._converter import to_ox
    from rdflib.graph import DATASET_DEFAULT_GRAPH_ID

    name = ox.DefaultGraph() if graph.identifier == DATASET_DEFAULT_GRAPH_ID else to_ox(graph.identifier)
    return OxigraphView(store=graph.store._inner, name=name)


def _rdf_format(path: Path) -> str:
    fmt = guess_format(str(path)) or ("json-ld" if path.suffix in {".json", ".jsonld"} else None)
    if fmt is None or not _has_parser(fmt):
        raise DataFileError(path, f"unknown RDF format for extension {path.suffix or '(none)'!r}")
    return fmt


def _has_parser(fmt: str) -> bool:
    """rdflib maps some suffixes (.html, .svg: RDFa) to formats it no longer ships a parser for."""
    from rdflib.parser import Parser
    from rdflib.plugin import PluginException, get

    try:
        get(_OX_FORMATS.get(fmt, fmt), Parser)
    except PluginException:
        return False
    return True


# Parsers say where they failed in different ways; the structured attributes come first
# (pyoxigraph and the json module raise SyntaxError-like errors with ``lineno``, rdflib's N3/Turtle
# parser a BadSyntax with a 0-based ``lines``, the RDF/XML parser a SAXParseException), and these
# patterns are the fallback for messages that only carry it in their text.
_LINE_PATTERNS = (
    re.compile(r"line[ :]+(\d+)", re.IGNORECASE),
    re.compile(r"at (\d+):\d+"),
    re.compile(r"position (\d+):\d+"),
)
# pyoxigraph's prefix before the actual reason: "Parser error at line 4 between columns 16 and 20: ".
_OX_POSITION = re.compile(r"^Parser error (?:at|between) [^:]*?(?:line|column)s? [\d ,a-z]*?: ")


def _chain(error: BaseException) -> list[BaseException]:
    """The error and the errors it was raised from (rdflib wraps expat's error in SAX's)."""
    chain: list[BaseException] = []
    current: BaseException | None = error
    while current is not None and current not in chain:
        chain.append(current)
        current = current.__cause__ or current.__context__
    return chain


def _position(error: BaseException) -> tuple[int | None, int | None]:
    """(line, column), 1-based, from the error's own attributes."""
    if hasattr(error, "getLineNumber"):  # xml.sax.SAXParseException
        return error.getLineNumber(), error.getColumnNumber()
    lines = getattr(error, "lines", None)
    if isinstance(lines, int) and hasattr(error, "_why"):  # rdflib's N3/Turtle BadSyntax, 0-based
        return lines + 1, None
    line = getattr(error, "lineno", None)
    if isinstance(line, int) and line > 0:
        column = getattr(error, "colno", None) or getattr(error, "offset", None)
        return line, column if isinstance(column, int) and column > 0 else None
    return None, None


def _line_of(error: BaseException) -> int | None:
    chain = _chain(error)
    for link in chain:
        line, _column = _position(link)
        if line:
            return line
    for link in chain:
        for pattern in _LINE_PATTERNS:
            match = pattern.search(str(link))
            if match:
                return int(match.group(1))
    return None


def _reason(error: BaseException) -> str:
    """What went wrong, on one line, without the file name and line the message repeats."""
    if hasattr(error, "_why"):  # rdflib BadSyntax: str() dumps 120 characters of context
        text = str(error._why)
    elif hasattr(error, "getMessage"):  # SAXParseException: str() prefixes the URL and position
        text = str(error.getMessage())
    elif isinstance(error, SyntaxError | ValueError) and isinstance(getattr(error, "msg", None), str):
        text = _OX_POSITION.sub("", error.msg)  # msg: without SyntaxError's " (file, line N)" suffix
    else:
        text = str(error)
    text = " ".join(text.split()) or type(error).__name__
    _line, column = _position(error)
    if column and "column" not in text:
        text += f" (column {column})"
    return text[:300]


def _locate(path: Path, fmt: str, error: Exception) -> DataFileError:
    """The DataFileError for ``error``; asks rdflib's own parser for a line the fast one did not give.

    pyoxigraph's RDF/XML parser reports no position ("Unknown prefix x:"); re-reading the bad file
    with rdflib's SAX-based parser, only on this error path, usually finds it.
    """
    line = _line_of(error)
    if line is None and fmt in _OX_FORMATS:
        try:
            rdflib.Graph().parse(str(path), format=fmt)
        except Exception as second:  # any failure here only serves to find a line
            line = _line_of(second)
    return DataFileError(path, _reason(error), line)


def parse_file(path: Path, into: rdflib.Graph | None = None) -> rdflib.Graph:
    """Parse one RDF file into ``into`` (a new store-backed graph by default).

    Raises DataFileError with the line and reason when the file cannot be read or parsed.
    """
    path = Path(path)
    if not path.is_file():
        raise DataFileError(path, "no such file")
    fmt = _rdf_format(path)
    target = into if into is not None else new_graph()
    try:
        if fmt in _OX_FORMATS:
            target.parse(str(path), format=_OX_FORMATS[fmt])
        else:
            # rdflib's own parsers (N3, JSON-LD, ...) need a store they know; read into memory first.
            scratch = rdflib.Graph()
            scratch.parse(str(path), format=fmt)
            target += scratch
    except Exception as error:  # parsers raise many types; all mean "this file is bad"
        raise _locate(path, fmt, error) from None
    return target


def _hash_files(paths: Iterable[Path]) -> str:
    digest = hashlib.sha256()
    for path in paths:
        digest.update(path.name.encode())
        digest.update(Path(path).read_bytes())
    return digest.hexdigest()[:16]


def builtin_hash() -> str:
    """The content hash of the built-in Turtle: the embedded graph's cache key, and what a push
    manifest records (graph/push.py) so that a ``--store`` reader knows the pushed built-in part."""
    return _hash_files(builtin_files())


def load_graph(
    data: Sequence[str | Path] = (),
    store_url: str | None = None,
    check_data: bool = True,
    background_checks: bool = False,
) -> LoadedGraph:
    """Load the built-in graph plus ``data`` files; or open the remote store at ``store_url``.

    User files are bulk-loaded by Oxigraph's own parsers into a store of their own (graph/userstore.py),
    so an error in any of them leaves nothing half-loaded. With ``check_data``, the merged graph must
    also conform to the SHACL shapes (the built-in graph does, so any violation is the user's) and
    user facts may not cite the built-in seeds; the verdict (for large inputs, the whole store) is
    cached by content, so only the first command with new files pays for it. ``background_checks``
    lets a first start with large files return while the shapes are still checked: the caller then
    calls ``wait_checked()`` on the result before answering (graph/engine.py does).
    """
    data_paths = [Path(p) for p in data]
    if store_url:
        from stackgraph.graph.remote import open_remote  # only surfaces given --store pay for it

        return open_remote(store_url, data_paths)
    if data_paths:
        from stackgraph.graph.userstore import open_with_data  # Oxigraph's parsers, bulk load

        return open_with_data(data_paths, check_data=check_data, background_checks=background_checks)
    graph = new_graph()
    for path in builtin_files():
        graph.parse(str(path), format="ox-turtle")
    return LoadedGraph(graph=graph, content_hash=builtin_hash(), data_files=[])
