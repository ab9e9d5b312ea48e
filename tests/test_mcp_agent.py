"""What an agent reads through the MCP tools (issue 13), in memory through ``fastmcp.Client``:
the text content is the whole record, layer references as agents write them, SPARQL paging that
ends, shortcut tools that say when they answered something else, triage from free text,
conversations per session, bounded resources and the ``schema`` tool.

The same defects are checked again through the official SDK client over stdio and HTTP in
``test_mcp_e2e.py``. Names come from the graph (via the engine), not from the tests' wording.
"""

from __future__ import annotations

import json

import jsonschema
import pytest
import rdflib
from fastmcp import Client
from test_mcp import call, error_text

from stackgraph.graph import sparql as sparql_module
from stackgraph.graph.store import SG
from stackgraph.server.bounds import MAX_RESULT_CHARS, parse_text_content
from stackgraph.server.mcp_server import build_server


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
    spaced = json.dumps(listed.model_dump(mode="json", by_alias=True, exclude_none=True))
    print(f"tools/list: {len(wire):,} characters on the wire, {len(spaced):,} as spaced JSON")
    # The 40,000 bound is on what the protocol sends (compact JSON, as the SDK writes it); the same
    # listing written with spaces is held near it too, so neither grows unnoticed.
    assert len(wire) < 40_000 and len(spaced) < 42_000
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


# ------------------------------------------------------------------------------------- layers


@pytest.fixture(scope="module")
def shared_code(engine) -> tuple[str, str, str]:
    """A layer code both models use for different layers: (code, nine IRI, eight IRI)."""
    nine = {i.layer.code: i.layer.iri for i in engine.layers("nine")}
    eight = {i.layer.code: i.layer.iri for i in engine.layers("eight")}
    code = max(set(nine) & set(eight))
    assert nine[code] != eight[code]
    return code, nine[code], eight[code]


async def test_model_qualified_layer_names_resolve_in_their_model_on_every_tool(client, shared_code):
    code, nine, eight = shared_code
    number = code[1:]
    written = {
        eight: [f"eight {code}", f"ops {code}", f"ops-{code}", f"{code} eight", f"{code} (eight-layer)"]
        + [f"the operational map's {code}", f"layer {number} of the operational map"],
        nine: [f"nine {code}", f"{code} (nine-layer)", f"{code} of the co-design model"],
    }
    for iri, names in written.items():
        for name in names:
            described = await call(client, "describe", {"entity": name, "detail": "names"})
            assert described.structured_content["entity"]["iri"] == iri, name
            around = await call(client, "neighbors", {"entity": name, "limit": 1})
            assert around.structured_content["entity"]["iri"] == iri, name
            exported = await call(client, "export_subgraph", {"entity": name, "format": "ntriples"})
            assert exported.structured_content["entity"]["iri"] == iri, name
            found = await call(client, "search", {"text": name, "limit": 1})
            assert found.structured_content["results"]["items"][0]["iri"] == iri, name
            triage = await call(client, "triage", {"symptom": name})
            assert "not a symptom" in error_text(triage), name
        path = await call(client, "related", {"a": names[0], "b": names[-1]})
        assert path.structured_content["a"]["iri"] == path.structured_content["b"]["iri"] == iri


async def test_the_model_argument_picks_the_model_of_a_bare_code(client, shared_code, output_schemas):
    code, nine, eight = shared_code
    for model, iri in (("nine", nine), ("eight", eight)):
        for tool, arguments in (
            ("describe", {"entity": code}),
            ("neighbors", {"entity": code, "limit": 1}),
            ("export_subgraph", {"entity": code, "format": "ntriples"}),
        ):
            result = await call(client, tool, {**arguments, "model": model}, output_schemas)
            assert result.structured_content["entity"]["iri"] == iri, (tool, model)
    assert "'model'" in error_text(await call(client, "describe", {"entity": code, "model": "ten"}))


async def test_list_layers_text_names_the_members(client, engine):
    result = await call(client, "list_layers", {"model": "eight"})
    text = result.content[0].text
    summary = parse_text_content(text)[0]
    items = result.structured_content["layers"]["items"]
    assert all(member["label"] in summary for member in items[0]["members"])
    assert all(member["label"] in text for item in items for member in item["members"])


# ------------------------------------------------------------------------------------- shortcuts


@pytest.fixture(scope="module")
def technology_no_symptom(engine) -> str:
    """A technology that owner_of_symptom cannot answer as a symptom (the engine says so)."""
    for record in sorted(engine.catalog.records.values(), key=lambda r: r.label):
        if engine.catalog.most_specific_type(record) != "technology":
            continue
        answer = engine.ask(f"Which layer owns {record.label}?", intent="owner_of_symptom")
        if answer.answered and answer.intent != "owner_of_symptom":
            return record.label
    pytest.skip("every technology is answered as a symptom")


async def test_a_shortcut_that_answered_another_question_says_so(
    client, engine, technology_no_symptom, output_schemas
):
    result = await call(client, "owner_of_symptom", {"symptom": technology_no_symptom}, output_schemas)
    data = result.structured_content
    assert data["intent"] != "owner_of_symptom"
    assert data["notice"] and "owner_of_symptom found no symptom" in data["notice"]
    assert data["intent"] in data["notice"]
    closest, _ = engine.search(technology_no_symptom, type="symptom", limit=5)
    assert [s["iri"] for s in data["suggestions"]["items"]][: len(closest)] == [s.iri for s in closest]
    assert all(s.type == "symptom" for s in closest)
    assert "Notice: owner_of_symptom found no symptom" in result.content[0].text


async def test_search_with_an_unknown_type_lists_the_types(client, engine):
    message = error_text(await call(client, "search", {"text": "gpu", "type": "no such kind"}))
    assert "bad argument 'type'" in message
    for kind in ("technology", "symptom", "layer"):
        assert kind in message
    found = await call(client, "search", {"text": "gpu", "type": "Technology"})
    assert found.structured_content["results"]["total"] > 0


# ------------------------------------------------------------------------------------- schema


async def test_schema_tool_counts_classes_and_properties_and_its_examples_run(client, engine, output_schemas):
    tools = {t.name: t for t in await client.list_tools()}
    assert "`schema`" in tools["sparql"].description
    result = await call(client, "schema", {"limit": 100}, output_schemas)
    data = result.structured_content
    classes = {c["name"]: c["instances"] for c in data["classes"]["items"]}
    assert classes["sg:Symptom"] == len(list(engine.graph.subjects(rdflib.RDF.type, SG.Symptom)))
    uses = {p["name"]: p["uses"] for p in data["properties"]["items"]}
    assert uses.get("sg:ownedBy") == len(list(engine.graph.subject_objects(SG.ownedBy)))
    assert data["examples"] and any("OPTIONAL" in e["query"] for e in data["examples"])
    assert any("sg:ownedBy" in e["query"] for e in data["examples"])
    for example in data["examples"]:
        ran = await call(client, "sparql", {"query": example["query"]}, output_schemas)
        assert not ran.is_error, (example["title"], error_text(ran))
        assert ran.structured_content["rows"]["items"], example["title"]
    assert len(result.content[0].text) + len(json.dumps(data)) <= MAX_RESULT_CHARS


# ------------------------------------------------------------------------------------- triage


async def test_triage_takes_free_text_and_walks_the_tree_that_applies(client, engine, output_schemas):
    text = "first tokens are slow"
    owner = await call(client, "owner_of_symptom", {"symptom": text}, output_schemas)
    named = [e["iri"] for e in owner.structured_content["entities"]["items"] if e["type"] == "symptom"]
    result = await call(client, "triage", {"symptom": text, "answers": []}, output_schemas)
    data = result.structured_content
    assert data["read_as"]["iri"] in named  # the same symptom owner_of_symptom answered about
    assert data["read_as"]["iri"] != data["symptom"]["iri"] and not data["done"]
    has_tree = engine.graph.value(rdflib.URIRef(data["symptom"]["iri"]), SG.triage) is not None
    assert has_tree and data["tree_rule"] in ("related", "shared")
    if data["tree_rule"] == "related":
        a, b = rdflib.URIRef(data["read_as"]["iri"]), rdflib.URIRef(data["symptom"]["iri"])
        skos = rdflib.namespace.SKOS
        assert any(
            (x, p, y) in engine.graph
            for p in (skos.related, skos.broader, skos.narrower)
            for x, y in ((a, b), (b, a))
        )
    assert data["symptom"]["label"] in data["notice"] and data["read_as"]["label"] in data["notice"]
    expected = engine.triage(data["symptom"]["iri"])
    assert data["question"] == expected.question and data["options"]["items"] == list(expected.options)
    step = await call(client, "triage", {"symptom": text, "answers": [expected.options[0]]}, output_schemas)
    assert step.structured_content["taken"] == [expected.options[0]]


async def test_triage_refuses_answers_when_no_tree_applies_and_texts_that_are_no_symptom(client, engine):
    from stackgraph.graph.triage_tree import choose_tree

    treeless = next(
        (
            label
            for label in sorted(engine.catalog.label(i) for i in engine.entities_of("Symptom"))
            if choose_tree(engine, label).rule == "none"
        ),
        None,
    )
    if treeless is None:
        pytest.skip("every symptom has a tree that applies")
    alone = await call(client, "triage", {"symptom": treeless, "answers": []})
    assert alone.structured_content["done"] and alone.structured_content["tree_rule"] == "none"
    assert "No triage tree applies" in alone.structured_content["notice"]
    message = error_text(await call(client, "triage", {"symptom": treeless, "answers": ["yes"]}))
    assert "no triage tree" in message
    message = error_text(await call(client, "triage", {"symptom": "zzqx wobble frobnicator", "answers": []}))
    assert "bad argument 'symptom'" in message
    technology = next(
        r.label
        for r in engine.catalog.records.values()
        if engine.catalog.most_specific_type(r) == "technology"
    )
    message = error_text(await call(client, "triage", {"symptom": technology}))
    assert "not a symptom" in message or "no symptom matches" in message


# ------------------------------------------------------------------------------------- resources


async def test_no_resource_is_above_the_bound(client, engine):
    uris = [str(r.uri) for r in await client.list_resources()]
    uris += [f"stackgraph://layer/{m}/{i.layer.code}" for m in ("nine", "eight") for i in engine.layers(m)]
    records = list(engine.catalog.records.values())
    biggest = sorted(records, key=lambda r: -engine.neighbors(r.iri, depth=1, limit=1)[1])[:5]
    uris += [f"stackgraph://entity/{r.iri.rsplit('/', 1)[-1]}" for r in biggest]
    sizes = {}
    for uri in uris:
        sizes[uri] = len((await client.read_resource(uri))[0].text)
    print("largest resource:", max(sizes.items(), key=lambda item: item[1]))
    assert max(sizes.values()) <= MAX_RESULT_CHARS
    cut = [
        u
        for u in uris
        if u.startswith("stackgraph://layer/")
        and "truncated" in json.loads((await client.read_resource(u))[0].text)
    ]
    for uri in cut:  # a cut page says what was cut and where the rest is
        page = json.loads((await client.read_resource(uri))[0].text)
        assert page["truncated"]["lists"] and "describe" in page["truncated"]["rest"]


# ------------------------------------------------------------------------------------- text content


def export_from_text(texts: list[str]) -> str:
    """An export put together from the text contents alone (what a content-only client sees)."""
    return "".join(parse_text_content(text)[2] or "" for text in texts)


async def test_a_mermaid_export_read_from_the_text_alone_parses(client, engine, tmp_path, monkeypatch):
    from mermaid_check import parse_files, require_mermaid

    from stackgraph.server import mcp_tools

    require_mermaid()
    # Diagrams are capped at about 20 entities, so one fits a chunk: smaller chunks make the export
    # take several calls, which is what an agent reassembling the text must get right.
    monkeypatch.setattr(mcp_tools, "EXPORT_CHUNK", 1_500)
    hub = max(engine.catalog.records, key=lambda iri: engine.neighbors(iri, depth=1, limit=1)[1])
    texts, cursor = [], None
    for _ in range(20):
        arguments = {"entity": hub, "format": "mermaid", "depth": 2, **({"cursor": cursor} if cursor else {})}
        result = await call(client, "export_subgraph", arguments)
        text = result.content[0].text
        texts.append(text)
        summary, record, _ = parse_text_content(text)
        cursor = record["cursor"]  # the cursor, read from the text
        if cursor is None:
            break
        assert f"cursor={cursor}" in summary
    diagram = export_from_text(texts)
    assert len(diagram) == record["total_chars"] and len(texts) > 1  # it took more than one chunk
    path = tmp_path / "export.mmd"
    path.write_text(diagram, encoding="utf-8")
    parsed = parse_files([path])
    assert parsed.returncode == 0, parsed.stdout + parsed.stderr


# ------------------------------------------------------------------------------------- errors


async def test_errors_name_the_closest_entities_in_structured_content_too(client, engine):
    from stackgraph.graph.model import UnknownEntity

    closest = []
    for bad in ("Kubernetez schedulr thingy", "nvidai smi topolgy", "zz qq unknown widget"):
        try:
            engine.resolve(bad)
        except UnknownEntity as error:
            closest = [s.iri for s in error.suggestions[:5]]
            if closest:
                break
    if not closest:
        pytest.skip("no misspelling without a match found")
    for tool, arguments, argument in (
        ("describe", {"entity": bad}, "entity"),
        ("neighbors", {"entity": bad}, "entity"),
        ("related", {"a": engine.catalog.label(next(iter(engine.catalog.records))), "b": bad}, "b"),
    ):
        result = await client.call_tool(tool, arguments, raise_on_error=False)
        assert result.is_error
        data = result.structured_content
        assert data["argument"] == argument and [s["iri"] for s in data["suggestions"]] == closest
        assert data["error"] == result.content[0].text and "Closest matches" in data["error"]
    typed = await client.call_tool("search", {"text": "gpu", "type": "no such kind"}, raise_on_error=False)
    assert typed.is_error and "symptom" in typed.structured_content["valid"]


async def test_ask_and_the_explain_layer_prompt_read_model_qualified_layers(client, engine, shared_code):
    code, nine, eight = shared_code
    for written, iri in (
        (f"eight {code}", eight),
        (f"the operational map's {code}", eight),
        (f"nine {code}", nine),
    ):
        result = await call(client, "ask", {"question": f"What does {written} do?"})
        assert result.structured_content["entities"]["items"][0]["iri"] == iri, written
        prompt = await client.get_prompt("explain_layer", {"layer": written})
        assert f"<{iri}>" in prompt.messages[0].content.text, written
