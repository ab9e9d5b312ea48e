"""The W3C SPARQL 1.1 Protocol test suite, query side, against the endpoint's ASGI app.

The cases are read from the suite's own manifest (tests/data/w3c_protocol, copied from
w3c/rdf-tests with attribution): request method, path, headers and body, and the expected status
class, result format and boolean. Update cases are left out: the endpoint is read-only, and refuses
updates with 400 (tested in test_sparql_http.py).

The endpoint has one graph. Every plain query case of the suite names
``http://kasei.us/2009/09/sparql/data/data0.rdf`` as its default graph, so the app under test names
its one graph that, and holds the suite's data files. Cases whose dataset names other graphs
(several default graphs, named graphs, FROM) cannot be answered by a one-graph store: for them the
test asserts a clear 400 naming the parameter, and, for default-graph cases, that the same request
naming the one graph instead gets the result the suite expects.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qsl, quote, urlsplit

import pytest
import rdflib
from rdflib import RDF, Namespace
from rdflib.collection import Collection
from starlette.applications import Starlette
from starlette.testclient import TestClient

from stackgraph.server.sparql_endpoint import sparql_routes

DATA = Path(__file__).parent / "data" / "w3c_protocol"
MF = Namespace("http://www.w3.org/2001/sw/DataAccess/tests/test-manifest#")
HT = Namespace("http://www.w3.org/2011/http#")
CNT = Namespace("http://www.w3.org/2011/content#")
HTS = Namespace("http://www.w3.org/2011/http-statusCodes#")
ONE_GRAPH = "http://kasei.us/2009/09/sparql/data/data0.rdf"
DATASET_PARAMS = ("default-graph-uri", "named-graph-uri")


@dataclass(frozen=True)
class Case:
    name: str
    method: str
    path: str
    headers: dict[str, str]
    body: bytes | None
    statuses: frozenset[int] = field(default_factory=frozenset)  # status classes: 2, 3, 4
    result_format: str | None = None
    boolean: bool | None = None

    def dataset(self) -> list[tuple[str, str]]:
        return [(k, v) for k, v in parse_qsl(urlsplit(self.path).query) if k in DATASET_PARAMS]

    def foreign_dataset(self) -> bool:
        """True when the case needs graphs a one-graph store does not have."""
        text = (self.body or b"").decode("utf-8", "replace") + " " + self.path
        return any(iri != ONE_GRAPH for _, iri in self.dataset()) or "FROM%20" in text or "FROM <" in text


def _cases() -> list[Case]:
    manifest = rdflib.Graph().parse(DATA / "manifest.ttl", publicID="http://example.org/protocol/")
    head = next(iter(manifest.subjects(RDF.type, MF.Manifest)))
    entries = Collection(manifest, manifest.value(head, MF.entries))
    cases = []
    for test in entries:
        name = str(test).rsplit("#", 1)[-1]
        if name.startswith(("update_", "bad_update_")):
            continue
        requests = list(Collection(manifest, manifest.value(manifest.value(test, MF.action), HT.requests)))
        assert len(requests) == 1, name  # query-side cases are single requests
        request = requests[0]
        headers = {}
        header_list = manifest.value(request, HT.headers)
        if header_list is not None:
            for header in Collection(manifest, header_list):
                headers[str(manifest.value(header, HT.fieldName))] = str(
                    manifest.value(header, HT.fieldValue)
                )
        body = None
        body_node = manifest.value(request, HT.body)
        if body_node is not None:
            encoding = str(manifest.value(body_node, CNT.characterEncoding) or "UTF-8")
            body = str(manifest.value(body_node, CNT.chars)).encode(encoding)
        response = manifest.value(request, HT.resp)
        statuses = frozenset(
            int(str(code).rsplit("StatusCode", 1)[1][0])
            for code in manifest.objects(response, MF.expectedStatus)
        )
        boolean = manifest.value(response, MF.expectedBoolean)
        fmt = manifest.value(response, MF.expectedFormat)
        cases.append(
            Case(
                name=name,
                method=str(manifest.value(request, HT.methodName)),
                path=str(manifest.value(request, HT.absolutePath)),
                headers=headers,
                body=body,
                statuses=statuses,
                result_format=str(fmt) if fmt is not None else None,
                boolean=boolean.toPython() if boolean is not None else None,
            )
        )
    return cases


CASES = _cases()


@pytest.fixture(scope="module")
def client() -> TestClient:
    graph = rdflib.Graph()
    for name in ("data1.nt", "data2.nt", "data3.nt"):
        graph.parse(DATA / name, format="nt")
    return TestClient(Starlette(routes=sparql_routes(lambda: graph, graph_iri=ONE_GRAPH)))


def _send(client: TestClient, case: Case, path: str | None = None):
    return client.request(case.method, path or case.path, headers=case.headers, content=case.body)


def _check_result(case: Case, response) -> None:
    media = response.headers.get("content-type", "").split(";")[0]
    if case.result_format == "boolean":
        assert media == "application/sparql-results+json"
        answer = response.json()["boolean"]
        assert answer is case.boolean if case.boolean is not None else isinstance(answer, bool)
    elif case.result_format == "tabular":
        assert media in {
            "application/sparql-results+json",
            "application/sparql-results+xml",
            "text/csv",
            "text/tab-separated-values",
        }
        assert "value" in json.loads(response.text)["head"]["vars"]
    elif case.result_format == "RDF":
        formats = {"text/turtle": "turtle", "application/rdf+xml": "xml", "application/n-triples": "nt"}
        assert media in formats
        rdflib.Graph().parse(data=response.text, format=formats[media])


def test_the_manifest_has_the_query_side_cases() -> None:
    """The suite has 34 cases; 21 are query-side (the 13 update cases need a writable store)."""
    assert len(CASES) == 21
    assert sum(case.foreign_dataset() for case in CASES) == 6


@pytest.mark.parametrize("case", [c for c in CASES if not c.foreign_dataset()], ids=lambda c: c.name)
def test_protocol_case(client: TestClient, case: Case) -> None:
    response = _send(client, case)
    assert response.status_code // 100 in case.statuses, (response.status_code, response.text)
    if response.status_code >= 400:
        assert response.text.strip() and "Traceback" not in response.text
        assert len(response.text.strip().splitlines()) == 1
    else:
        _check_result(case, response)


@pytest.mark.parametrize("case", [c for c in CASES if c.foreign_dataset()], ids=lambda c: c.name)
def test_other_graphs_are_refused_clearly(client: TestClient, case: Case) -> None:
    response = _send(client, case)
    assert response.status_code == 400
    message = response.text.strip()
    assert any(word in message for word in ("default-graph-uri", "named-graph-uri", "FROM")), message
    assert "Traceback" not in message and len(message.splitlines()) == 1


@pytest.mark.parametrize(
    "case",
    [c for c in CASES if c.foreign_dataset() and {k for k, _ in c.dataset()} == {"default-graph-uri"}],
    ids=lambda c: c.name,
)
def test_default_graph_cases_pass_when_they_name_the_one_graph(client: TestClient, case: Case) -> None:
    parts = urlsplit(case.path)
    pairs = [(k, ONE_GRAPH if k == "default-graph-uri" else v) for k, v in parse_qsl(parts.query)]
    path = parts.path + "?" + "&".join(f"{k}={quote(v, safe='')}" for k, v in pairs)
    response = _send(client, case, path)
    assert response.status_code // 100 in case.statuses, response.text
    _check_result(case, response)
