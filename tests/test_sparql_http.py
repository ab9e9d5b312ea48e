"""The SPARQL 1.1 Protocol endpoint (server/sparql_endpoint.py): protocol details through an ASGI test
client, and real clients (SPARQLWrapper, rdflib's SPARQLStore) against a real uvicorn server."""

from __future__ import annotations

import contextlib
import csv
import io
import json
import threading
import time
from collections.abc import Iterator

import pytest
import rdflib
from loopback import served
from rdflib.compare import isomorphic
from rdflib.plugins.stores.sparqlstore import SPARQLStore
from rdflib.query import Result
from SPARQLWrapper import (
    CSV,
    GET,
    JSON,
    JSONLD,
    N3,
    POST,
    POSTDIRECTLY,
    RDFXML,
    TSV,
    TURTLE,
    URLENCODED,
    XML,
    SPARQLWrapper,
)
from starlette.applications import Starlette
from starlette.testclient import TestClient

from stackgraph.graph.remote import open_remote
from stackgraph.graph.sparql import run_query
from stackgraph.graph.store import KG, SG, new_graph
from stackgraph.server.sparql_endpoint import negotiate, parse_accept, sparql_routes

_TURTLE = """
@prefix sg: <https://w3id.org/stackgraph/ns#> .
@prefix kg: <https://w3id.org/stackgraph/id/> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
kg:nvlink a sg:Technology ; rdfs:label "NVLink" ; sg:fitsIn kg:nine-L8 ;
    sg:placement [ a sg:Placement ; sg:layer kg:nine-L8 ; sg:role "scale-up interconnect" ] .
kg:nine-L8 a sg:Layer ; rdfs:label "Node Interconnect"@en ; sg:code "L8" ; sg:position 8 .
"""

SELECT_Q = "SELECT ?s ?label WHERE { ?s rdfs:label ?label } ORDER BY ?s"
ASK_Q = "ASK { kg:nvlink sg:fitsIn kg:nine-L8 }"
CONSTRUCT_Q = "CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o FILTER(?s = kg:nvlink) }"
DESCRIBE_Q = "DESCRIBE kg:nine-L8"
SLOW_Q = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i . ?j ?k ?l }"


@pytest.fixture(scope="module")
def graph() -> rdflib.Graph:
    graph = new_graph()
    graph.parse(data=_TURTLE, format="turtle")
    for i in range(40):
        graph.add((KG[f"thing-{i:02d}"], rdflib.RDF.type, SG.Technology))
        graph.add((KG[f"thing-{i:02d}"], rdflib.RDFS.label, rdflib.Literal(f"thing {i}")))
    return graph


@pytest.fixture(scope="module")
def app(graph: rdflib.Graph) -> Starlette:
    return Starlette(routes=sparql_routes(lambda: graph))


@pytest.fixture(scope="module")
def client(app: Starlette) -> TestClient:
    return TestClient(app)


@pytest.fixture(scope="module")
def live_url(app: Starlette) -> Iterator[str]:
    """The endpoint served by a real uvicorn on a free loopback port, in a thread."""
    with served(app) as port:
        yield f"http://127.0.0.1:{port}/sparql"


def _one_line_no_traceback(text: str) -> None:
    assert "Traceback" not in text and text.count("\n") <= 1 and text.strip()


# ------------------------------------------------------------------------------------------ negotiation


def test_parse_accept_reads_q_values() -> None:
    assert parse_accept("text/csv;q=0.5, application/json ; q=0.9,*/*;q=0.1") == [
        ("text/csv", 0.5),
        ("application/json", 0.9),
        ("*/*", 0.1),
    ]
    assert parse_accept(None) == [("*/*", 1.0)]
    assert parse_accept("text/html;q=bogus") == [("text/html", 0.0)]


@pytest.mark.parametrize(
    ("accept", "expected"),
    [
        (None, "application/sparql-results+json"),
        ("*/*", "application/sparql-results+json"),
        ("application/sparql-results+xml", "application/sparql-results+xml"),
        ("text/csv;q=0.5, application/sparql-results+xml;q=0.8", "application/sparql-results+xml"),
        ("text/csv;q=0.9, application/sparql-results+xml;q=0.8", "text/csv"),
        ("application/sparql-results+json;q=0, */*", "application/sparql-results+xml"),
        ("text/*", "text/csv"),
        ("text/tab-separated-values", "text/tab-separated-values"),
        ("application/json", "application/json"),
        # rdflib's SPARQLStore and a browser
        ("application/sparql-results+xml, application/rdf+xml", "application/sparql-results+xml"),
        ("text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", "application/xml"),
        ("image/png", None),
        ("text/csv;q=0", None),
    ],
)
def test_negotiation_for_select(client: TestClient, accept: str | None, expected: str | None) -> None:
    # None: an empty Accept header, which means anything
    response = client.get("/sparql", params={"query": SELECT_Q}, headers={"Accept": accept or ""})
    if expected is None:
        assert response.status_code == 406
        assert "available" in response.text
        return
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].split(";")[0] == expected
    assert response.headers["vary"] == "Accept"


@pytest.mark.parametrize(
    ("accept", "expected"),
    [
        ("*/*", "text/turtle"),
        ("application/turtle,text/turtle", "text/turtle"),  # what SPARQLWrapper sends for Turtle
        ("application/n-triples", "application/n-triples"),
        ("application/ld+json", "application/ld+json"),
        ("application/rdf+xml", "application/rdf+xml"),
        (
            "application/sparql-results+xml, application/rdf+xml",
            "application/rdf+xml",
        ),  # rdflib's SPARQLStore
        ("application/sparql-results+json", None),
    ],
)
def test_negotiation_for_graphs(client: TestClient, accept: str, expected: str | None) -> None:
    response = client.get("/sparql", params={"query": CONSTRUCT_Q}, headers={"Accept": accept})
    if expected is None:
        assert response.status_code == 406
        return
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].split(";")[0] == expected


def test_negotiate_prefers_server_order_on_ties() -> None:
    offers = [("a/x", "x"), ("a/y", "y")]
    assert negotiate("a/y, a/x", offers) == ("a/x", "x")
    assert negotiate("a/y;q=1, a/x;q=0.99", offers) == ("a/y", "y")


def test_format_parameter_overrides_accept(client: TestClient) -> None:
    response = client.get(
        "/sparql", params={"query": SELECT_Q, "format": "csv"}, headers={"Accept": "text/html"}
    )
    assert response.headers["content-type"].startswith("text/csv")
    response = client.get(
        "/sparql", params={"query": CONSTRUCT_Q, "format": "json"}, headers={"Accept": "*/*"}
    )
    assert response.headers["content-type"].startswith(
        "text/turtle"
    )  # json is not a graph format: Accept decides


# ------------------------------------------------------------------------------------------ protocol


def test_get_post_form_and_post_direct_agree(client: TestClient) -> None:
    by_get = client.get("/sparql", params={"query": SELECT_Q})
    by_form = client.post("/sparql", data={"query": SELECT_Q})
    by_body = client.post("/sparql", content=SELECT_Q, headers={"Content-Type": "application/sparql-query"})
    assert by_get.status_code == by_form.status_code == by_body.status_code == 200
    assert by_get.json() == by_form.json() == by_body.json()
    assert len(by_get.json()["results"]["bindings"]) == 42
    assert client.get("/sparql/", params={"query": ASK_Q}).json()["boolean"] is True


def test_results_carry_cap_headers(client: TestClient) -> None:
    response = client.get("/sparql", params={"query": SELECT_Q, "limit": "5"}, headers={"Accept": "text/csv"})
    assert response.status_code == 200
    assert response.headers["stackgraph-truncated"] == "true"
    assert response.headers["stackgraph-max-rows"] == "5"
    assert len(list(csv.reader(io.StringIO(response.text)))) == 6
    full = client.get("/sparql", params={"query": ASK_Q})
    assert full.headers["stackgraph-truncated"] == "false"
    assert float(full.headers["stackgraph-elapsed-ms"]) >= 0


def test_every_result_format_parses(client: TestClient, graph: rdflib.Graph) -> None:
    for accept, fmt in (
        ("application/sparql-results+json", "json"),
        ("application/sparql-results+xml", "xml"),
        ("text/tab-separated-values", "tsv"),
    ):
        text = client.get("/sparql", params={"query": SELECT_Q}, headers={"Accept": accept}).text
        assert len(list(Result.parse(io.StringIO(text), format=fmt))) == 42
    expected = run_query(graph, CONSTRUCT_Q).graph
    assert expected is not None and len(expected) == 4
    for accept, fmt in (
        ("text/turtle", "turtle"),
        ("application/n-triples", "nt"),
        ("application/ld+json", "json-ld"),
        ("application/rdf+xml", "xml"),
    ):
        text = client.get("/sparql", params={"query": CONSTRUCT_Q}, headers={"Accept": accept}).text
        assert isomorphic(rdflib.Graph().parse(data=text, format=fmt), expected), fmt


def test_ask_in_csv_is_the_bare_boolean(client: TestClient) -> None:
    response = client.get("/sparql", params={"query": ASK_Q}, headers={"Accept": "text/csv"})
    assert response.status_code == 200 and response.text == "true"


# ------------------------------------------------------------------------------------------ errors


def test_parse_error_is_400_with_line_and_column(client: TestClient) -> None:
    response = client.get("/sparql", params={"query": "SELECT ?s WHERE {\n  ?s ?p\n}"})
    assert response.status_code == 400
    assert response.headers["content-type"].startswith("text/plain")
    assert "line 2, column 3" in response.text
    _one_line_no_traceback(response.text)


@pytest.mark.parametrize(
    ("request_kwargs", "needle"),
    [
        ({"params": {"query": "SELECT * WHERE { SERVICE <http://127.0.0.1:9/x> { ?s ?p ?o } }"}}, "SERVICE"),
        ({"params": {"query": "SELECT * FROM <http://127.0.0.1:9/x> WHERE { ?s ?p ?o }"}}, "FROM"),
        ({"params": {"query": SELECT_Q, "default-graph-uri": "http://127.0.0.1:9/x"}}, "default-graph-uri"),
        ({"data": {"update": "INSERT DATA { kg:a kg:b kg:c }"}}, "Update"),
        ({"data": {"query": "INSERT DATA { kg:a kg:b kg:c }"}}, "INSERT DATA"),
        ({"data": {"query": "LOAD <http://127.0.0.1:9/x>"}}, "LOAD"),
        (
            {
                "content": "INSERT DATA { kg:a kg:b kg:c }",
                "headers": {"Content-Type": "application/sparql-update"},
            },
            "Update",
        ),
        ({"params": {"query": ASK_Q, "timeout": "soon"}}, "timeout"),
        ({"params": {"query": ASK_Q, "limit": "-3"}}, "row limit"),
        ({"data": {"nothing": "here"}}, "missing query"),
    ],
)
def test_refusals_are_400_with_a_message(
    client: TestClient, graph: rdflib.Graph, request_kwargs: dict, needle: str
) -> None:
    before = len(graph)
    method = client.post if ("data" in request_kwargs or "content" in request_kwargs) else client.get
    response = method("/sparql", **request_kwargs)
    assert response.status_code == 400, response.text
    assert needle in response.text
    _one_line_no_traceback(response.text)
    assert len(graph) == before


def test_unsupported_body_is_415(client: TestClient) -> None:
    response = client.post("/sparql", content=b"{}", headers={"Content-Type": "application/json"})
    assert response.status_code == 415
    _one_line_no_traceback(response.text)


def test_timeout_is_503(client: TestClient) -> None:
    started = time.monotonic()
    response = client.get("/sparql", params={"query": SLOW_Q, "timeout": "1"})
    assert response.status_code == 503
    assert "timed out after 1 s" in response.text
    assert time.monotonic() - started < 3
    _one_line_no_traceback(response.text)


def test_failing_graph_is_500_without_traceback() -> None:
    def broken() -> rdflib.Graph:
        raise RuntimeError("secret internals")

    client = TestClient(Starlette(routes=sparql_routes(broken)), raise_server_exceptions=False)
    response = client.get("/sparql", params={"query": ASK_Q})
    assert response.status_code == 500
    assert "secret internals" not in response.text
    _one_line_no_traceback(response.text)


# ------------------------------------------------------------------------------------------ description, page, data


SD = rdflib.Namespace("http://www.w3.org/ns/sparql-service-description#")


@pytest.mark.parametrize("accept", ["text/turtle", "*/*", ""])
def test_bare_get_is_a_service_description(client: TestClient, accept: str) -> None:
    response = client.get("/sparql", headers={"Accept": accept})
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/turtle")
    description = rdflib.Graph().parse(data=response.text, format="turtle")
    service = description.value(predicate=rdflib.RDF.type, object=SD.Service)
    assert description.value(service, SD.endpoint) == rdflib.URIRef("http://testserver/sparql")
    assert (service, SD.supportedLanguage, SD.SPARQL11Query) in description
    formats = set(description.objects(service, SD.resultFormat))
    assert rdflib.URIRef("http://www.w3.org/ns/formats/SPARQL_Results_JSON") in formats
    assert len(formats) == 8


def test_service_description_in_other_rdf_formats(client: TestClient) -> None:
    response = client.get("/sparql", headers={"Accept": "application/ld+json"})
    assert response.headers["content-type"].startswith("application/ld+json")
    assert (None, SD.endpoint, None) in rdflib.Graph().parse(data=response.text, format="json-ld")


def test_browser_gets_an_offline_query_page(client: TestClient) -> None:
    accept = "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,*/*;q=0.8"
    response = client.get("/sparql", headers={"Accept": accept})
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/html")
    page = response.text
    assert "<textarea" in page and "DESCRIBE kg:nvlink" in page and "ASK {" in page
    assert "<script src" not in page and "<link" not in page and "@import" not in page  # nothing from a CDN


def test_graph_store_read_returns_the_whole_graph(client: TestClient, graph: rdflib.Graph) -> None:
    for path in ("/sparql/data?default", "/sparql/data"):
        response = client.get(path, headers={"Accept": "application/n-triples"})
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("application/n-triples")
        # parsed into the same kind of store: oxrdflib reads simple literals back as xsd:string
        assert isomorphic(new_graph().parse(data=response.text, format="nt"), graph)
    turtle = client.get("/sparql/data?default")
    assert turtle.headers["content-type"].startswith("text/turtle")
    assert len(rdflib.Graph().parse(data=turtle.text, format="turtle")) == len(graph)
    assert client.get("/sparql/data?graph=http://example.org/g").status_code == 404
    assert client.get("/sparql/data?default", headers={"Accept": "image/png"}).status_code == 406


# ------------------------------------------------------------------------------------------ real clients

SPARQLWRAPPER_CASES = [
    (SELECT_Q, JSON),
    (SELECT_Q, XML),
    (SELECT_Q, CSV),
    (SELECT_Q, TSV),
    (ASK_Q, JSON),
    (ASK_Q, XML),
    (CONSTRUCT_Q, TURTLE),
    (CONSTRUCT_Q, N3),
    (CONSTRUCT_Q, RDFXML),
    (CONSTRUCT_Q, XML),
    (CONSTRUCT_Q, JSONLD),
    (DESCRIBE_Q, TURTLE),
    (DESCRIBE_Q, JSONLD),
]


def _check_sparqlwrapper_result(query: str, fmt: str, converted: object) -> None:
    if query == SELECT_Q:
        if fmt == JSON:
            assert len(converted["results"]["bindings"]) == 42  # type: ignore[index]
        elif fmt == XML:
            assert len(converted.getElementsByTagName("result")) == 42  # type: ignore[attr-defined]
        elif fmt == CSV:
            rows = list(csv.reader(io.StringIO(converted.decode())))  # type: ignore[attr-defined]
            assert rows[0] == ["s", "label"] and len(rows) == 43
        else:
            assert len(list(Result.parse(io.BytesIO(converted), format="tsv"))) == 42  # type: ignore[arg-type]
    elif query == ASK_Q:
        if fmt == JSON:
            assert converted["boolean"] is True  # type: ignore[index]
        else:
            assert converted.getElementsByTagName("boolean")[0].firstChild.data == "true"  # type: ignore[attr-defined]
    else:
        if isinstance(converted, bytes):
            converted = rdflib.Graph().parse(data=converted.decode(), format="turtle")
        assert isinstance(converted, rdflib.Graph)
        subject = KG.nvlink if query == CONSTRUCT_Q else KG["nine-L8"]
        assert (subject, rdflib.RDF.type, None) in converted
        assert len(converted) >= 4


@pytest.mark.parametrize("method", ["GET", "POST-form", "POST-direct"])
@pytest.mark.parametrize(("query", "fmt"), SPARQLWRAPPER_CASES)
def test_sparqlwrapper_every_format_and_method(live_url: str, query: str, fmt: str, method: str) -> None:
    client = SPARQLWrapper(live_url)
    client.setQuery(
        "PREFIX kg: <https://w3id.org/stackgraph/id/>\nPREFIX sg: <https://w3id.org/stackgraph/ns#>\n" + query
    )
    client.setReturnFormat(fmt)
    client.setMethod(GET if method == "GET" else POST)
    if method != "GET":
        client.setRequestMethod(URLENCODED if method == "POST-form" else POSTDIRECTLY)
    client.setTimeout(10)
    response = client.query()
    graph_query = query in (CONSTRUCT_Q, DESCRIBE_Q)
    expected_type = (GRAPH_TYPES if graph_query else RESULT_TYPES)[fmt]
    assert response.info()["content-type"].split(";")[0] == expected_type
    _check_sparqlwrapper_result(query, fmt, response.convert())


RESULT_TYPES = {
    JSON: "application/sparql-results+json",
    XML: "application/sparql-results+xml",
    CSV: "text/csv",
    TSV: "text/tab-separated-values",
}
GRAPH_TYPES = {
    TURTLE: "text/turtle",
    N3: "text/turtle",
    RDFXML: "application/rdf+xml",
    XML: "application/rdf+xml",
    JSONLD: "application/ld+json",
}


@pytest.mark.parametrize("method", ["GET", "POST", "POST_FORM"])
def test_rdflib_sparqlstore_client(live_url: str, graph: rdflib.Graph, method: str) -> None:
    remote = rdflib.Graph(store=SPARQLStore(live_url, method=method))
    rows = list(
        remote.query(
            "SELECT ?label WHERE { <https://w3id.org/stackgraph/id/nvlink> <http://www.w3.org/2000/01/rdf-schema#label> ?label }"
        )
    )
    assert [str(r[0]) for r in rows] == ["NVLink"]
    assert remote.query("ASK { ?s ?p ?o }").askAnswer is True
    constructed = remote.query("CONSTRUCT WHERE { <https://w3id.org/stackgraph/id/nvlink> ?p ?o }").graph
    assert len(constructed) == len(list(graph.triples((KG.nvlink, None, None))))
    assert len(remote) == len(graph)
    labels = set(remote.objects(KG["nine-L8"], rdflib.RDFS.label))
    assert labels == {rdflib.Literal("Node Interconnect", lang="en")}


def test_guarded_queries_over_the_endpoint_as_a_remote_store(live_url: str, graph: rdflib.Graph) -> None:
    loaded = open_remote(live_url, [])
    assert loaded.store_url == live_url and len(loaded.content_hash) == 16
    remote = run_query(loaded.graph, SELECT_Q)
    local = run_query(graph, SELECT_Q)
    assert set(remote.rows) == set(local.rows) and remote.vars == local.vars


def test_a_slow_query_does_not_block_other_requests(live_url: str) -> None:
    import urllib.parse
    import urllib.request

    def slow() -> None:
        url = live_url + "?" + urllib.parse.urlencode({"query": SLOW_Q, "timeout": "3"})
        with contextlib.suppress(OSError):  # the 503 is expected
            urllib.request.urlopen(url, timeout=10).read()

    thread = threading.Thread(target=slow)
    thread.start()
    time.sleep(0.3)
    started = time.monotonic()
    url = live_url + "?" + urllib.parse.urlencode({"query": ASK_Q})
    with urllib.request.urlopen(url, timeout=10) as response:
        assert json.loads(response.read())["boolean"] is True
    assert time.monotonic() - started < 1.5
    thread.join()
