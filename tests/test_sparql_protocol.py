"""Protocol corners of /sparql that the W3C suite does not pin down: strict UTF-8, 405, the one
graph's name, client errors versus limits, truncation in the body, and CORS through the full app."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import httpx
import pytest
import rdflib
from starlette.applications import Starlette
from starlette.testclient import TestClient

from stackgraph.graph import sparql
from stackgraph.graph.store import KG, SG, new_graph
from stackgraph.server.http import create_app
from stackgraph.server.mcp_server import build_server
from stackgraph.server.sparql_endpoint import DEFAULT_GRAPH_IRI, sparql_routes

SELECT_ALL = "SELECT ?s WHERE { ?s a sg:Technology } ORDER BY ?s"


@pytest.fixture(scope="module")
def client() -> TestClient:
    graph = new_graph()
    for i in range(12):
        graph.add((KG[f"t{i:02d}"], rdflib.RDF.type, SG.Technology))
    return TestClient(Starlette(routes=sparql_routes(lambda: graph)))


def test_relative_iris_resolve_against_the_endpoint(client: TestClient) -> None:
    response = client.post(
        "/sparql",
        content="CONSTRUCT { <s> <p> 1 } WHERE {}",
        headers={"content-type": "application/sparql-query", "accept": "application/n-triples"},
    )
    assert response.status_code == 200, response.text
    assert "<http://testserver/s> <http://testserver/p>" in response.text


@pytest.mark.parametrize(
    "content_type, body",
    [
        ("application/sparql-query; charset=UTF-16", "ASK {}".encode("utf-16")),
        ("application/sparql-query; charset=ISO-8859-1", "ASK { ?s ?p 'caf\xe9' }".encode("latin-1")),
        ("application/sparql-query", b"ASK { ?s ?p '\xff' }"),
        ("application/x-www-form-urlencoded", b"query=ASK%20%7B%20%3Fs%20%3Fp%20%27%FF%27%20%7D"),
    ],
)
def test_bodies_that_are_not_utf8_are_400(client: TestClient, content_type: str, body: bytes) -> None:
    response = client.post("/sparql", content=body, headers={"content-type": content_type})
    assert response.status_code == 400
    assert "UTF-8" in response.text


def test_invalid_utf8_in_the_url_is_400(client: TestClient) -> None:
    response = client.get("/sparql?query=ASK%20%7B%20%3Fs%20%3Fp%20%27%FF%27%20%7D")
    assert response.status_code == 400 and "UTF-8" in response.text
    assert client.get("/sparql?query=ASK%20%7B%20%3Fs%20%3Fp%20%27%C3%A9%27%20%7D").status_code == 200


@pytest.mark.parametrize("method", ["PUT", "DELETE", "PATCH"])
def test_other_methods_are_405_with_allow(client: TestClient, method: str) -> None:
    for path in ("/sparql", "/sparql/data"):
        response = client.request(method, path)
        assert response.status_code == 405
        assert "GET" in response.headers["allow"]


def test_default_graph_uri_may_name_the_one_graph(client: TestClient) -> None:
    ok = client.get("/sparql", params={"query": "ASK {}", "default-graph-uri": DEFAULT_GRAPH_IRI})
    assert ok.status_code == 200 and ok.json()["boolean"] is True
    other = client.get("/sparql", params={"query": "ASK {}", "default-graph-uri": "http://example.org/g"})
    assert other.status_code == 400 and DEFAULT_GRAPH_IRI in other.text
    named = client.get("/sparql", params={"query": "ASK {}", "named-graph-uri": DEFAULT_GRAPH_IRI})
    assert named.status_code == 400 and "named graphs" in named.text
    description = rdflib.Graph().parse(data=client.get("/sparql").text, format="turtle")
    sd_name = rdflib.URIRef("http://www.w3.org/ns/sparql-service-description#name")
    assert (None, sd_name, rdflib.URIRef(DEFAULT_GRAPH_IRI)) in description


def test_an_unknown_function_is_a_client_error(client: TestClient) -> None:
    query = "SELECT ?s WHERE { ?s ?p ?o FILTER(<http://example.org/fn>(?s)) }"
    response = client.get("/sparql", params={"query": query})
    assert response.status_code == 400
    assert "http://example.org/fn" in response.text and len(response.text) < 300


def test_the_memory_ceiling_is_503(client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    def out_of_memory(*args: object, **kwargs: object) -> None:
        raise sparql.ResourceLimit("the query was stopped: it needed more than 1024 MB of memory")

    monkeypatch.setattr(sparql, "run_query", out_of_memory)
    response = client.get("/sparql", params={"query": SELECT_ALL})
    assert response.status_code == 503 and "memory" in response.text


def test_truncation_is_in_the_body_of_json_xml_and_turtle(client: TestClient) -> None:
    link = "http://testserver/sparql#limits"
    as_json = client.get("/sparql", params={"query": SELECT_ALL, "limit": 5, "format": "json"})
    assert as_json.headers["stackgraph-truncated"] == "true"
    data = as_json.json()
    assert data["head"]["link"] == [link] and len(data["results"]["bindings"]) == 5
    as_xml = client.get("/sparql", params={"query": SELECT_ALL, "limit": 5, "format": "xml"})
    ns = "{http://www.w3.org/2005/sparql-results#}"
    head = ET.fromstring(as_xml.text).find(f"{ns}head")
    assert [e.get("href") for e in head.findall(f"{ns}link")] == [link]
    construct = "CONSTRUCT { ?s a sg:Technology } WHERE { ?s a sg:Technology }"
    as_turtle = client.get("/sparql", params={"query": construct, "limit": 5, "format": "turtle"})
    assert as_turtle.text.startswith("# stackgraph: result truncated at 5 rows")
    assert len(rdflib.Graph().parse(data=as_turtle.text, format="turtle")) == 5
    whole = client.get("/sparql", params={"query": SELECT_ALL, "format": "json"})
    assert "link" not in whole.json()["head"] and whole.headers["stackgraph-truncated"] == "false"


def test_the_service_description_states_the_limits(client: TestClient) -> None:
    description = rdflib.Graph().parse(data=client.get("/sparql").text, format="turtle")
    limits = rdflib.URIRef("http://testserver/sparql#limits")
    sgs = rdflib.Namespace("https://w3id.org/stackgraph/service#")
    assert description.value(limits, sgs.maxRows).toPython() == sparql.MAX_ROWS
    assert description.value(limits, sgs.defaultRows).toPython() == sparql.DEFAULT_MAX_ROWS
    assert description.value(limits, sgs.maxTimeoutSeconds).toPython() == sparql.MAX_TIMEOUT_S


# ------------------------------------------------------------------------------ the full app: CORS


@pytest.fixture
async def http(engine):
    server = build_server(lambda: engine, semantic=False, start=False)
    app = create_app(server, token="s3cret", allowed_origins=("https://yasgui.example",))
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1:8000"
    ) as c:
        yield c


async def test_preflight_from_an_allowed_origin_needs_no_token(http: httpx.AsyncClient) -> None:
    for origin in ("https://yasgui.example", "http://localhost:5173"):
        response = await http.options(
            "/sparql",
            headers={
                "origin": origin,
                "access-control-request-method": "POST",
                "access-control-request-headers": "authorization, content-type",
            },
        )
        assert response.status_code == 200, response.text
        assert response.headers["access-control-allow-origin"] == origin
        assert "POST" in response.headers["access-control-allow-methods"]
        assert "authorization" in response.headers["access-control-allow-headers"].lower()


async def test_preflight_from_another_origin_gets_no_cors_headers(http: httpx.AsyncClient) -> None:
    response = await http.options(
        "/sparql", headers={"origin": "https://evil.example", "access-control-request-method": "POST"}
    )
    assert response.status_code >= 400
    assert "access-control-allow-origin" not in response.headers


async def test_cross_origin_answers_expose_the_stackgraph_headers(http: httpx.AsyncClient) -> None:
    headers = {"origin": "https://yasgui.example"}
    refused = await http.get("/sparql", params={"query": "ASK {}"}, headers=headers)
    assert refused.status_code == 401  # the token is still needed, and the browser may read why
    assert refused.headers["access-control-allow-origin"] == "https://yasgui.example"
    ok = await http.get(
        "/sparql", params={"query": "ASK {}"}, headers={**headers, "authorization": "Bearer s3cret"}
    )
    assert ok.status_code == 200 and json.loads(ok.text)["boolean"] is True
    exposed = ok.headers["access-control-expose-headers"].lower()
    assert "stackgraph-truncated" in exposed and "stackgraph-max-rows" in exposed


async def test_put_on_the_full_app_is_405_not_404(http: httpx.AsyncClient) -> None:
    response = await http.put("/sparql", headers={"authorization": "Bearer s3cret"})
    assert response.status_code == 405 and "GET" in response.headers["allow"]


# ------------------------------------------------------------------------------ the query page


def test_query_page_has_a_token_field_and_no_placeholders(client: TestClient) -> None:
    page = client.get("/sparql", headers={"Accept": "text/html"}).text
    assert '<input id="token" type="password"' in page and '"Authorization"' in page
    assert "THIS_URL" not in page


def test_query_page_examples_run_and_repeat_no_rows(client: TestClient, engine) -> None:
    import re

    page = client.get("/sparql", headers={"Accept": "text/html"}).text
    examples = re.findall(r'\[\s*"([^"]+)",\s*`([^`]+)`\]', page)
    assert len(examples) >= 5
    for title, query in examples:
        result = sparql.run_query(engine.graph, query)
        assert result.count > 0, title
        if result.kind == "select":
            assert len(set(result.rows)) == len(result.rows), f"{title}: duplicate rows"
