"""Comunica (the JavaScript SPARQL engine browsers and YASGUI-style tools use) as a client of the
endpoint, over a real uvicorn server. Comunica federates: it sends its own sub-queries (ASK probes,
COUNT estimates, triple-pattern SELECTs), so passing here means more than one query shape works.

Needs node and ``cd tests/js && npm ci`` (scripts/setup.sh --test does it); skips, saying so, without.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
import rdflib
from loopback import served
from starlette.applications import Starlette

from stackgraph.graph.store import KG, SG, new_graph
from stackgraph.server.sparql_endpoint import sparql_routes

JS_DIR = Path(__file__).parent / "js"


def _require_comunica() -> None:
    if shutil.which("node") is None:
        pytest.skip("node is not installed (Comunica needs Node 20)")
    if not (JS_DIR / "node_modules" / "@comunica" / "query-sparql").is_dir():
        pytest.skip("Comunica not installed: run `cd tests/js && npm ci`")


@pytest.fixture(scope="module")
def live_url() -> Iterator[str]:
    graph = new_graph()
    graph.add((KG.nvlink, rdflib.RDF.type, SG.Technology))
    graph.add((KG.nvlink, rdflib.RDFS.label, rdflib.Literal("NVLink")))
    graph.add((KG.nvlink, SG.fitsIn, KG["nine-L8"]))
    graph.add((KG.ualink, rdflib.RDF.type, SG.Technology))
    graph.add((KG.ualink, rdflib.RDFS.label, rdflib.Literal("UALink")))
    app = Starlette(routes=sparql_routes(lambda: graph))
    with served(app) as port:
        yield f"http://127.0.0.1:{port}/sparql"


def _comunica(endpoint: str, *queries: str) -> list[dict]:
    _require_comunica()
    done = subprocess.run(
        ["node", "comunica_query.mjs", endpoint, *queries],
        capture_output=True,
        text=True,
        timeout=240,
        cwd=JS_DIR,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


def test_comunica_select_ask_construct(live_url: str) -> None:
    sg, kg = str(SG), str(KG)
    select, ask, construct = _comunica(
        live_url,
        f"SELECT ?t ?label WHERE {{ ?t a <{sg}Technology> ; <http://www.w3.org/2000/01/rdf-schema#label> ?label }}",
        f"ASK {{ <{kg}nvlink> <{sg}fitsIn> <{kg}nine-L8> }}",
        f"CONSTRUCT {{ ?t <{sg}fitsIn> ?l }} WHERE {{ ?t <{sg}fitsIn> ?l }}",
    )
    assert sorted(row["label"] for row in select["rows"]) == ["NVLink", "UALink"]
    assert ask == {"boolean": True}
    assert construct["triples"] == [[f"{kg}nvlink", f"{sg}fitsIn", f"{kg}nine-L8"]]
