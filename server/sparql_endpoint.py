"""The SPARQL 1.1 Protocol endpoint at ``/sparql``: Starlette routes over any graph.

``sparql_routes(get_graph)`` returns routes that carry their own paths (``/sparql``, ``/sparql/``,
``/sparql/data``): add them to the application's route list as they are. Do not wrap them in
``Mount("/sparql", ...)``: a Mount answers a bare ``/sparql`` with a redirect, and POST clients
(SPARQLWrapper, rdflib's SPARQLStore) do not follow redirects.

What a client gets:

- ``GET /sparql?query=...``, ``POST`` form-encoded (``query=...``) or ``POST`` with
  ``Content-Type: application/sparql-query``: the result, negotiated on ``Accept`` (q-values
  honoured) among SPARQL results JSON, XML, CSV, TSV for SELECT/ASK, and Turtle, N-Triples, JSON-LD,
  RDF/XML for CONSTRUCT/DESCRIBE; ``*/*`` gets JSON (Turtle for graphs). A ``format`` parameter
  (``json``, ``xml``, ``csv``, ``tsv``, ``turtle``, ``ntriples``, ``jsonld``, or a media type), as
  SPARQLWrapper sends, overrides ``Accept`` when it names a format the query form has.
  Optional parameters: ``timeout`` (seconds, at most 30) and ``limit`` (row cap, at most 10,000).
  Headers on every result: ``Stackgraph-Truncated`` (``true`` when the row cap cut the result),
  ``Stackgraph-Max-Rows`` and ``Stackgraph-Elapsed-Ms``.
- ``GET /sparql`` without a query: the SPARQL Service Description (Turtle, or another RDF format
  on request); a browser (``Accept: text/html``) gets a query page with examples, a single file
  served from the package (no CDN; works offline).
- ``GET /sparql/data?default`` (Graph Store Protocol, read only; ``/sparql/data`` alone is the
  same): the whole graph in the negotiated RDF format. ``?graph=IRI`` answers 404: there is only
  the default graph.

Errors are plain text, one line, never a traceback and never a 200: syntax errors and refused
queries (updates, SERVICE, FROM, LOAD, ``default-graph-uri``) 400, a timeout 503, a result format
the query form does not have 406, an unsupported request body 415, a store failure 500.
Queries run in Starlette's thread pool, so a slow one never blocks the event loop.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from functools import lru_cache
from importlib import resources
from urllib.parse import parse_qsl

import rdflib
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, Response
from starlette.routing import BaseRoute, Route

from stackgraph.graph import sparql

log = logging.getLogger("stackgraph.sparql")

#: (media type, format name), server preference first: ties and ``*/*`` go to the first.
SELECT_OFFERS = [
    ("application/sparql-results+json", "json"),
    ("application/sparql-results+xml", "xml"),
    ("text/csv", "csv"),
    ("text/tab-separated-values", "tsv"),
    ("application/json", "json"),
    ("application/xml", "xml"),
    ("text/xml", "xml"),
]
GRAPH_OFFERS = [
    ("text/turtle", "turtle"),
    ("application/n-triples", "ntriples"),
    ("application/ld+json", "jsonld"),
    ("application/rdf+xml", "xml"),
    ("application/turtle", "turtle"),
    ("application/x-turtle", "turtle"),
    ("application/x-json+ld", "jsonld"),
    ("application/xml", "xml"),
    ("text/xml", "xml"),
]
#: Oxigraph's own serializers (through oxrdflib) for whole-graph dumps: fast on large graphs.
_DUMP_FORMATS = {"turtle": "ox-turtle", "ntriples": "ox-ntriples", "jsonld": "ox-json-ld", "xml": "ox-xml"}
_FORMAT_ALIASES = {
    "json": "json",
    "xml": "xml",
    "csv": "csv",
    "tsv": "tsv",
    "turtle": "turtle",
    "ttl": "turtle",
    "ntriples": "ntriples",
    "nt": "ntriples",
    "n-triples": "ntriples",
    "jsonld": "jsonld",
    "json-ld": "jsonld",
    "rdfxml": "xml",
    "rdf+xml": "xml",
}
#: The most bytes a request body may carry (a query is capped at MAX_QUERY_CHARS characters).
MAX_BODY_BYTES = sparql.MAX_QUERY_CHARS * 4


# ---------------------------------------------------------------------------------------- negotiation


def parse_accept(header: str | None) -> list[tuple[str, float]]:
    """``Accept`` as (media range, q) pairs; a missing header means ``*/*``. Malformed q counts 0."""
    if not header or not header.strip():
        return [("*/*", 1.0)]
    ranges = []
    for part in header.split(","):
        fields = [f.strip() for f in part.split(";")]
        media = fields[0].lower()
        if not media:
            continue
        if "/" not in media:
            media = "*/*" if media == "*" else media + "/*"
        quality = 1.0
        for param in fields[1:]:
            key, _, value = param.partition("=")
            if key.strip().lower() == "q":
                try:
                    quality = max(0.0, min(1.0, float(value)))
                except ValueError:
                    quality = 0.0
        ranges.append((media, quality))
    return ranges


def _quality(offer: str, ranges: list[tuple[str, float]]) -> float:
    """The q of the most specific range that matches ``offer`` (RFC 9110 section 12.5.1)."""
    kind, _, sub = offer.partition("/")
    best, best_specificity = 0.0, -1
    for media, quality in ranges:
        r_kind, _, r_sub = media.partition("/")
        if media == offer:
            specificity = 2
        elif r_kind == kind and r_sub == "*":
            specificity = 1
        elif media == "*/*":
            specificity = 0
        else:
            continue
        if specificity > best_specificity:
            best, best_specificity = quality, specificity
    return best


def negotiate(accept: str | None, offers: list[tuple[str, str]]) -> tuple[str, str] | None:
    """The (media type, format) the client likes best; ties go to the earlier offer. None: 406."""
    ranges = parse_accept(accept)
    best, best_quality = None, 0.0
    for offer in offers:
        quality = _quality(offer[0], ranges)
        if quality > best_quality:
            best, best_quality = offer, quality
    return best


def _format_param(values: list[str], offers: list[tuple[str, str]]) -> tuple[str, str] | None:
    """A ``format``/``output`` parameter that names a format this query form has, if any."""
    for value in values:
        value = value.strip().lower()
        for media, fmt in offers:
            if value == media or _FORMAT_ALIASES.get(value) == fmt:
                return media, fmt
    return None


# ---------------------------------------------------------------------------------------- requests


class _BadRequest(Exception):
    def __init__(self, status: int, message: str) -> None:
        self.status, self.message = status, message
        super().__init__(message)


def _error(status: int, message: str) -> PlainTextResponse:
    return PlainTextResponse(" ".join(message.split()) + "\n", status_code=status)


async def _read_body(request: Request) -> bytes:
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > MAX_BODY_BYTES:
        raise _BadRequest(413, f"request body too large (at most {MAX_BODY_BYTES:,} bytes)")
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            raise _BadRequest(413, f"request body too large (at most {MAX_BODY_BYTES:,} bytes)")
        chunks.append(chunk)
    return b"".join(chunks)


def _charset(content_type: str) -> str:
    for param in content_type.split(";")[1:]:
        key, _, value = param.partition("=")
        if key.strip().lower() == "charset":
            return value.strip().strip('"') or "utf-8"
    return "utf-8"


async def _params(request: Request) -> list[tuple[str, str]]:
    """All protocol parameters of a request: the URL's, plus a form body's, plus a direct query."""
    params = list(request.query_params.multi_items())
    if request.method != "POST":
        return params
    content_type = request.headers.get("content-type", "")
    media = content_type.split(";")[0].strip().lower()
    body = await _read_body(request)
    try:
        text = body.decode(_charset(content_type))
    except (LookupError, UnicodeDecodeError):
        raise _BadRequest(400, "the request body is not valid text in its declared charset") from None
    if media == "application/x-www-form-urlencoded":
        return params + parse_qsl(text, keep_blank_values=True)
    if media == "application/sparql-query":
        return [*params, ("query", text)]
    if media == "application/sparql-update":
        raise _BadRequest(400, "SPARQL Update is not allowed: the graph is read-only")
    raise _BadRequest(
        415,
        "send the query as application/sparql-query or application/x-www-form-urlencoded (query=...)",
    )


def _number(params: dict[str, list[str]], name: str, cast: type) -> float | int | None:
    values = params.get(name)
    if not values:
        return None
    try:
        return cast(values[0])
    except ValueError:
        raise _BadRequest(400, f"parameter {name} must be a number, not {values[0]!r}") from None


# ---------------------------------------------------------------------------------------- pages


@lru_cache(maxsize=1)
def query_page() -> str:
    """The browser's query page (one self-contained file in the package)."""
    return resources.files("stackgraph.server").joinpath("static/sparql.html").read_text(encoding="utf-8")


SD = rdflib.Namespace("http://www.w3.org/ns/sparql-service-description#")
FORMATS_NS = rdflib.Namespace("http://www.w3.org/ns/formats/")
_SD_RESULT_FORMATS = (
    "SPARQL_Results_JSON",
    "SPARQL_Results_XML",
    "SPARQL_Results_CSV",
    "SPARQL_Results_TSV",
    "Turtle",
    "N-Triples",
    "JSON-LD",
    "RDF_XML",
)


def service_description(endpoint: str) -> rdflib.Graph:
    """What this endpoint is, in the W3C SPARQL 1.1 Service Description vocabulary."""
    graph = rdflib.Graph()
    graph.bind("sd", SD)
    graph.bind("formats", FORMATS_NS)
    service = rdflib.BNode("service")
    dataset, default = rdflib.BNode("dataset"), rdflib.BNode("default")
    graph.add((service, rdflib.RDF.type, SD.Service))
    graph.add((service, SD.endpoint, rdflib.URIRef(endpoint)))
    graph.add((service, SD.supportedLanguage, SD.SPARQL11Query))
    for name in _SD_RESULT_FORMATS:
        graph.add((service, SD.resultFormat, FORMATS_NS[name]))
    graph.add((service, SD.defaultDataset, dataset))
    graph.add((dataset, rdflib.RDF.type, SD.Dataset))
    graph.add((dataset, SD.defaultGraph, default))
    graph.add((default, rdflib.RDF.type, SD.Graph))
    graph.add(
        (
            service,
            rdflib.RDFS.comment,
            rdflib.Literal(
                "stackgraph: read-only SPARQL 1.1 Query over the AI infrastructure stack graph. "
                "Updates, SERVICE, LOAD and FROM/FROM NAMED are refused. Queries time out after "
                f"{sparql.DEFAULT_TIMEOUT_S:g} s (parameter timeout, at most {sparql.MAX_TIMEOUT_S:g} s) "
                f"and return at most {sparql.DEFAULT_MAX_ROWS} rows (parameter limit, at most "
                f"{sparql.MAX_ROWS}). Prefixes sg:, kg:, rdfs:, skos:, dct:, prov: ... are predeclared. "
                "The whole graph: GET data?default."
            ),
        )
    )
    return graph


def _endpoint_url(request: Request) -> str:
    return str(request.url.replace(query="", fragment="")).rstrip("/")


# ---------------------------------------------------------------------------------------- handlers


def _query_handler(get_graph: Callable[[], rdflib.Graph]) -> Callable[[Request], Awaitable[Response]]:
    async def handle(request: Request) -> Response:
        try:
            return await _answer(request, get_graph)
        except _BadRequest as exc:
            return _error(exc.status, exc.message)
        except Exception:  # the last line of defence: log it, tell the client in one line
            log.exception("SPARQL request failed")
            return _error(500, "internal error while answering the query (see the server log)")

    return handle


async def _answer(request: Request, get_graph: Callable[[], rdflib.Graph]) -> Response:
    pairs = await _params(request)
    params: dict[str, list[str]] = {}
    for key, value in pairs:
        params.setdefault(key, []).append(value)
    if "update" in params:
        raise _BadRequest(400, "SPARQL Update is not allowed: the graph is read-only")
    for name in ("default-graph-uri", "named-graph-uri"):
        if name in params:
            raise _BadRequest(400, f"{name} is not allowed: queries run over this endpoint's one graph")
    accept = request.headers.get("accept")
    queries = params.get("query")
    if not queries:
        if request.method == "POST":
            raise _BadRequest(400, "missing query: send query=... or a body of type application/sparql-query")
        return _describe_service(request, accept)
    if len(queries) > 1:
        raise _BadRequest(400, "give exactly one query parameter")
    query = queries[0]
    timeout = _number(params, "timeout", float)
    limit = _number(params, "limit", int)
    try:
        kind = await run_in_threadpool(sparql.check_query, query)
    except sparql.Overloaded as exc:
        raise _BadRequest(503, str(exc)) from None
    except sparql.QueryError as exc:
        raise _BadRequest(400, str(exc)) from None
    graph_result = kind in ("construct", "describe")
    offers = GRAPH_OFFERS if graph_result else SELECT_OFFERS
    chosen = _format_param(params.get("format", []) + params.get("output", []), offers) or negotiate(
        accept, offers
    )
    if chosen is None:
        available = ", ".join(dict.fromkeys(media for media, _ in offers))
        raise _BadRequest(406, f"cannot produce {accept} for {kind.upper()} queries; available: {available}")
    media, fmt = chosen
    try:
        graph = await run_in_threadpool(get_graph)
        result = await run_in_threadpool(sparql.run_query, graph, query, timeout_s=timeout, max_rows=limit)
        body = await run_in_threadpool(sparql.format_result, result, fmt)
    except (sparql.Timeout, sparql.Overloaded) as exc:
        raise _BadRequest(503, str(exc)) from None
    except sparql.EvaluationError as exc:
        raise _BadRequest(500, str(exc)) from None
    except sparql.QueryError as exc:
        raise _BadRequest(400, str(exc)) from None
    headers = {
        "Stackgraph-Truncated": "true" if result.truncated else "false",
        "Stackgraph-Max-Rows": str(result.max_rows),
        "Stackgraph-Elapsed-Ms": f"{result.elapsed_ms:.1f}",
        "Vary": "Accept",
    }
    return Response(body, media_type=f"{media}; charset=utf-8", headers=headers)


def _describe_service(request: Request, accept: str | None) -> Response:
    chosen = negotiate(accept, [*GRAPH_OFFERS, ("text/html", "html")])
    if chosen is None:
        raise _BadRequest(406, "the service description is available as text/html or an RDF format")
    media, fmt = chosen
    if fmt == "html":
        return HTMLResponse(query_page(), headers={"Vary": "Accept"})
    graph = service_description(_endpoint_url(request))
    body = graph.serialize(format={"ntriples": "nt", "jsonld": "json-ld"}.get(fmt, fmt))
    return Response(body, media_type=f"{media}; charset=utf-8", headers={"Vary": "Accept"})


def _data_handler(get_graph: Callable[[], rdflib.Graph]) -> Callable[[Request], Awaitable[Response]]:
    async def handle(request: Request) -> Response:
        if "graph" in request.query_params:
            return _error(404, "no such graph: this store has only the default graph (GET data?default)")
        chosen = negotiate(request.headers.get("accept"), GRAPH_OFFERS)
        if chosen is None:
            available = ", ".join(dict.fromkeys(media for media, _ in GRAPH_OFFERS))
            return _error(406, f"available: {available}")
        media, fmt = chosen
        try:
            graph = await run_in_threadpool(get_graph)
            body = await run_in_threadpool(_dump, graph, fmt)
        except Exception:
            log.exception("graph store read failed")
            return _error(500, "internal error while serializing the graph (see the server log)")
        return Response(body, media_type=f"{media}; charset=utf-8", headers={"Vary": "Accept"})

    return handle


def _dump(graph: rdflib.Graph, fmt: str) -> bytes:
    """The whole graph, serialized by Oxigraph (works for any rdflib store: it iterates triples)."""
    return graph.serialize(format=_DUMP_FORMATS[fmt], encoding="utf-8")


def sparql_routes(get_graph: Callable[[], rdflib.Graph], path: str = "/sparql") -> list[BaseRoute]:
    """The endpoint's routes at ``path`` (and ``path/``, ``path/data``); add them to an app as they are.

    ``get_graph`` is called (in a worker thread) for every request, so a server may swap or lazily
    load the graph.
    """
    query = _query_handler(get_graph)
    data = _data_handler(get_graph)
    return [
        Route(path, query, methods=["GET", "POST"], name="sparql"),
        Route(path + "/", query, methods=["GET", "POST"]),
        Route(path + "/data", data, methods=["GET"], name="sparql-data"),
    ]


__all__ = ["negotiate", "parse_accept", "service_description", "sparql_routes"]
