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

Protocol details: relative IRIs in a query resolve against the endpoint's URL (the query's own
``BASE`` wins); request text must be UTF-8 (a body in another charset, or ``%FF`` in a URL, is 400);
another method than GET/POST is 405 with ``Allow``. The dataset is one graph, named ``graph_iri``
(announced in the service description): ``default-graph-uri`` naming it is accepted, any other
``default-graph-uri`` or any ``named-graph-uri`` is 400 with a message saying so. A result cut at
the row cap says so in the body too, where the format allows (server/truncation.py).

Errors are plain text, one line, never a traceback and never a 200: syntax errors (with line and
column), unknown functions and refused queries (updates, SERVICE, FROM, LOAD, other graphs) 400, a
timeout or the memory ceiling 503, a result format the query form does not have 406, an unsupported
request body 415, a store failure 500. Queries run in Starlette's thread pool, so a slow one never
blocks the event loop.
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
from stackgraph.server.truncation import LIMITS_FRAGMENT, mark_truncated

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
#: The name of the endpoint's one graph: ``default-graph-uri`` may name it (and nothing else).
DEFAULT_GRAPH_IRI = "https://w3id.org/stackgraph/graph"
#: The methods ``/sparql`` answers (HEAD comes with GET); anything else is 405 with this ``Allow``.
ALLOWED_METHODS = ("GET", "HEAD", "POST", "OPTIONS")


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
            return value.strip().strip('"').lower() or "utf-8"
    return "utf-8"


def _form(raw: str, where: str) -> list[tuple[str, str]]:
    """Form-encoded pairs, percent-escapes decoded as strict UTF-8 (the protocol says UTF-8; a
    lenient decoder would turn ``%FF`` into U+FFFD and run a query nobody sent)."""
    pairs = []
    for key, value in parse_qsl(raw, keep_blank_values=True, encoding="latin-1"):
        try:
            pairs.append((_utf8(key), _utf8(value)))
        except UnicodeDecodeError:
            raise _BadRequest(400, f"the {where} is not valid UTF-8 once percent-decoded") from None
    return pairs


def _utf8(text: str) -> str:
    return text.encode("latin-1").decode("utf-8")


async def _params(request: Request) -> list[tuple[str, str]]:
    """All protocol parameters of a request: the URL's, plus a form body's, plus a direct query."""
    raw_query = request.scope.get("query_string", b"").decode("latin-1")
    params = _form(raw_query, "query string")
    if request.method != "POST":
        return params
    content_type = request.headers.get("content-type", "")
    media = content_type.split(";")[0].strip().lower()
    if _charset(content_type) not in ("utf-8", "utf8"):
        raise _BadRequest(400, f"the request body must be UTF-8, not {_charset(content_type)}")
    body = await _read_body(request)
    if media == "application/x-www-form-urlencoded":
        try:
            body.decode("ascii")
        except UnicodeDecodeError:
            raise _BadRequest(400, "a form body must be percent-encoded ASCII") from None
        return params + _form(body.decode("ascii"), "form body")
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as error:
        raise _BadRequest(400, f"the request body is not valid UTF-8 (byte {error.start})") from None
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


#: Terms for the limits node (no standard vocabulary has them); documented where they are used.
SGS = rdflib.Namespace("https://w3id.org/stackgraph/service#")


def service_description(endpoint: str, graph_iri: str = DEFAULT_GRAPH_IRI) -> rdflib.Graph:
    """What this endpoint is, in the W3C SPARQL 1.1 Service Description vocabulary.

    The limits are also stated as data on ``<endpoint#limits>``, the node a truncated result links to.
    """
    graph = rdflib.Graph()
    graph.bind("sd", SD)
    graph.bind("formats", FORMATS_NS)
    graph.bind("sgs", SGS)
    service = rdflib.BNode("service")
    dataset, default = rdflib.BNode("dataset"), rdflib.BNode("default")
    limits = rdflib.URIRef(f"{endpoint}#{LIMITS_FRAGMENT}")
    graph.add((service, SGS.limits, limits))
    graph.add((limits, rdflib.RDF.type, SGS.Limits))
    for term, value in (
        (SGS.defaultRows, sparql.DEFAULT_MAX_ROWS),
        (SGS.maxRows, sparql.MAX_ROWS),
        (SGS.defaultTimeoutSeconds, sparql.DEFAULT_TIMEOUT_S),
        (SGS.maxTimeoutSeconds, sparql.MAX_TIMEOUT_S),
        (SGS.maxQueryCharacters, sparql.MAX_QUERY_CHARS),
    ):
        graph.add((limits, term, rdflib.Literal(value)))
    graph.add(
        (
            limits,
            rdflib.RDFS.comment,
            rdflib.Literal(
                "A result longer than the row cap is cut: the Stackgraph-Truncated header says true, and "
                "SPARQL JSON/XML results carry a link to this node in their head, Turtle and N-Triples "
                "a comment line. Ask for more rows with the limit parameter, up to sgs:maxRows."
            ),
        )
    )
    graph.add((service, rdflib.RDF.type, SD.Service))
    graph.add((service, SD.endpoint, rdflib.URIRef(endpoint)))
    graph.add((service, SD.supportedLanguage, SD.SPARQL11Query))
    for name in _SD_RESULT_FORMATS:
        graph.add((service, SD.resultFormat, FORMATS_NS[name]))
    graph.add((service, SD.defaultDataset, dataset))
    graph.add((dataset, rdflib.RDF.type, SD.Dataset))
    graph.add((dataset, SD.defaultGraph, default))
    graph.add((default, rdflib.RDF.type, SD.Graph))
    graph.add((default, SD.name, rdflib.URIRef(graph_iri)))
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
                f"The whole graph: GET data?default. default-graph-uri may name the one graph, <{graph_iri}>."
            ),
        )
    )
    return graph


def _endpoint_url(request: Request) -> str:
    return str(request.url.replace(query="", fragment="")).rstrip("/")


# ---------------------------------------------------------------------------------------- handlers


def _query_handler(
    get_graph: Callable[[], rdflib.Graph], graph_iri: str
) -> Callable[[Request], Awaitable[Response]]:
    async def handle(request: Request) -> Response:
        if request.method not in ALLOWED_METHODS:
            return _not_allowed(request.method)
        if request.method == "OPTIONS":  # not a CORS preflight (server/cors.py answers those)
            return Response(status_code=204, headers={"Allow": ", ".join(ALLOWED_METHODS)})
        try:
            return await _answer(request, get_graph, graph_iri)
        except _BadRequest as exc:
            return _error(exc.status, exc.message)
        except Exception:  # the last line of defence: log it, tell the client in one line
            log.exception("SPARQL request failed")
            return _error(500, "internal error while answering the query (see the server log)")

    return handle


def _not_allowed(method: str) -> Response:
    response = _error(405, f"method {method} is not allowed here: send the query with GET or POST")
    response.headers["Allow"] = ", ".join(ALLOWED_METHODS)
    return response


def _check_dataset(params: dict[str, list[str]], graph_iri: str) -> None:
    """Dataset parameters may only name the one graph as the default graph."""
    others = [iri for iri in params.get("default-graph-uri", []) if iri.strip() != graph_iri]
    if others:
        raise _BadRequest(
            400,
            f"default-graph-uri <{others[0]}> is not a graph here: this endpoint has one graph, "
            f"<{graph_iri}>; name that or leave the parameter out",
        )
    if params.get("named-graph-uri"):
        raise _BadRequest(
            400,
            f"named-graph-uri <{params['named-graph-uri'][0]}> is not allowed: this endpoint has no named "
            f"graphs, only the default graph <{graph_iri}>",
        )


async def _answer(request: Request, get_graph: Callable[[], rdflib.Graph], graph_iri: str) -> Response:
    pairs = await _params(request)
    params: dict[str, list[str]] = {}
    for key, value in pairs:
        params.setdefault(key, []).append(value)
    if "update" in params:
        raise _BadRequest(400, "SPARQL Update is not allowed: the graph is read-only")
    _check_dataset(params, graph_iri)
    accept = request.headers.get("accept")
    queries = params.get("query")
    if not queries:
        if request.method == "POST":
            raise _BadRequest(400, "missing query: send query=... or a body of type application/sparql-query")
        return _describe_service(request, accept, graph_iri)
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
    endpoint = _endpoint_url(request)
    try:
        graph = await run_in_threadpool(get_graph)
        result = await run_in_threadpool(
            sparql.run_query, graph, query, timeout_s=timeout, max_rows=limit, base=endpoint
        )
        body = await run_in_threadpool(sparql.format_result, result, fmt)
    except (sparql.Timeout, sparql.ResourceLimit, sparql.Overloaded) as exc:
        raise _BadRequest(503, str(exc)) from None
    except sparql.EvaluationError as exc:
        raise _BadRequest(500, str(exc)) from None
    except sparql.QueryError as exc:
        raise _BadRequest(400, str(exc)) from None
    if result.truncated:
        body = mark_truncated(body, fmt, endpoint=endpoint, max_rows=result.max_rows)
    headers = {
        "Stackgraph-Truncated": "true" if result.truncated else "false",
        "Stackgraph-Max-Rows": str(result.max_rows),
        "Stackgraph-Elapsed-Ms": f"{result.elapsed_ms:.1f}",
        "Vary": "Accept",
    }
    return Response(body, media_type=f"{media}; charset=utf-8", headers=headers)


def _describe_service(request: Request, accept: str | None, graph_iri: str) -> Response:
    chosen = negotiate(accept, [*GRAPH_OFFERS, ("text/html", "html")])
    if chosen is None:
        raise _BadRequest(406, "the service description is available as text/html or an RDF format")
    media, fmt = chosen
    if fmt == "html":
        return HTMLResponse(query_page(), headers={"Vary": "Accept"})
    graph = service_description(_endpoint_url(request), graph_iri)
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


#: Every method a client might send: the routes take them all so that the handler, not a
#: catch-all mount behind it, answers (405 with Allow rather than the MCP app's 404).
_ANY_METHOD = ["GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"]


def sparql_routes(
    get_graph: Callable[[], rdflib.Graph], path: str = "/sparql", graph_iri: str = DEFAULT_GRAPH_IRI
) -> list[BaseRoute]:
    """The endpoint's routes at ``path`` (and ``path/``, ``path/data``); add them to an app as they are.

    ``get_graph`` is called (in a worker thread) for every request, so a server may swap or lazily
    load the graph. ``graph_iri`` names that graph for ``default-graph-uri``.
    """
    query = _query_handler(get_graph, graph_iri)
    data = _data_handler(get_graph)

    async def data_or_405(request: Request) -> Response:
        if request.method not in ("GET", "HEAD"):
            response = _error(405, f"method {request.method} is not allowed: the graph store is read-only")
            response.headers["Allow"] = "GET, HEAD"
            return response
        return await data(request)

    return [
        Route(path, query, methods=_ANY_METHOD, name="sparql"),
        Route(path + "/", query, methods=_ANY_METHOD),
        Route(path + "/data", data_or_405, methods=_ANY_METHOD, name="sparql-data"),
    ]


__all__ = ["DEFAULT_GRAPH_IRI", "negotiate", "parse_accept", "service_description", "sparql_routes"]
