"""What an agent reads through the MCP tools (issue 13), in memory through ``fastmcp.Client``:
the text content is the whole record, layer references as agents write them, SPARQL paging that
ends, shortcut tools that say when they answered something else, triage from free text,
conversations per session, bounded resources and the ``schema`` tool.

The same defects are checked again through the official SDK client over stdio and HTTP in
``test_mcp_e2e.py``. Names come from the graph (via the engine), not from the tests' wording.
"""

from __future__ import annotations

import jsonschema
import pytest
from fastmcp import Client
from test_mcp import call, error_text

from stackgraph.graph import sparql as sparql_module
from stackgraph.graph.engine import Engine
from stackgraph.server.mcp_server import build_server


@pytest.fixture(scope="module")
def engine() -> Engine:
    return Engine.load(semantic=False)


@pytest.fixture(scope="module")
def server(engine):
    return build_server(lambda: engine, semantic=False)


@pytest.fixture
async def client(server):
    async with Client(server) as connected:
        yield connected


@pytest.fixture(scope="module")
def output_schemas(server) -> dict[str, dict]:
    import asyncio

    async def collect():
        async with Client(server) as connected:
            return {t.name: t.output_schema for t in await connected.list_tools()}

    return asyncio.run(collect())


# ------------------------------------------------------------------------------------- listing


async def test_tools_list_is_under_40000_characters_with_valid_shared_definitions(client):
    listed = await client.list_tools_mcp()
    wire = listed.model_dump_json(by_alias=True, exclude_none=True)
    print(f"tools/list: {len(wire):,} characters")
    assert len(wire) < 40_000
    for tool in listed.tools:
        jsonschema.Draft202012Validator.check_schema(tool.output_schema)
        assert "$defs" in tool.output_schema or tool.name == "schema", tool.name


# ------------------------------------------------------------------------------------- SPARQL


DIGITS = "VALUES ?{v} {{ " + " ".join(f'"{d}"' for d in range(10)) + " }}"
MANY_ROWS = (
    "SELECT ?n WHERE { "
    + " ".join(DIGITS.format(v=v) for v in "abcde")
    + " BIND(CONCAT(?a, ?b, ?c, ?d, ?e) AS ?n) }"
)


async def test_sparql_paging_ends_at_the_row_cap_and_says_how_to_narrow(client, output_schemas, monkeypatch):
    monkeypatch.setattr(sparql_module, "MAX_ROWS", 250)
    rows, cursor, calls = [], None, 0
    while True:
        arguments = {"query": MANY_ROWS, "limit": 100, **({"cursor": cursor} if cursor else {})}
        result = await call(client, "sparql", arguments, output_schemas)
        assert not result.is_error, error_text(result)
        data = result.structured_content
        rows += data["rows"]["items"]
        cursor, calls = data["cursor"], calls + 1
        assert calls < 20, "the cursor never ended"
        if cursor is None:
            break
    assert len(rows) == 250 and len({r["n"]["value"] for r in rows}) == 250
    assert data["truncated"] and data["rows"]["truncated"] and data["rows"]["cursor"] is None
    assert "250" in data["notice"] and "FILTER" in data["notice"]
    assert "Notice:" in result.content[0].text


async def test_sparql_bindings_are_typed(client, output_schemas):
    query = 'SELECT ?iri ?plain ?tagged ?number ?blank ?unbound WHERE { ?iri a sg:Layer . BIND("x" AS ?plain) BIND("y"@en AS ?tagged) BIND(3 AS ?number) BIND(BNODE() AS ?blank) OPTIONAL { ?iri sg:noSuchProperty ?unbound } } LIMIT 1'
    result = await call(client, "sparql", {"query": query}, output_schemas)
    row = result.structured_content["rows"]["items"][0]
    assert row["iri"]["type"] == "uri" and row["iri"]["value"].startswith("http")
    assert row["plain"] == {"type": "literal", "value": "x"}
    assert row["tagged"] == {"type": "literal", "value": "y", "xml:lang": "en"}
    assert row["number"] == {
        "type": "literal",
        "value": "3",
        "datatype": "http://www.w3.org/2001/XMLSchema#integer",
    }
    assert row["blank"]["type"] == "bnode"
    assert "unbound" not in row
    assert result.structured_content["rows"]["total"] == 1
    assert "1 row(s)" in result.content[0].text and "None" not in result.content[0].text.splitlines()[0]


async def test_sparql_with_hundreds_of_long_variables_stays_in_the_bound(client):
    names = " ".join(f"?v{i:03d}_{'x' * 30}" for i in range(440))
    result = await call(client, "sparql", {"query": f"SELECT {names} WHERE {{ ?s ?p ?o }} LIMIT 2"})
    message = error_text(result)
    assert "440 variables" in message and len(message) < 400
