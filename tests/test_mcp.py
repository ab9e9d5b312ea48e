"""The MCP server in memory: every tool, resource, resource template and prompt through
``fastmcp.Client(server)``, over the real engine and the real graph.

Names used in calls are picked from the graph (a technology the graph places, a symptom it owns,
the entity with most edges), so the tests follow the data instead of hard-coding it; each tool's
result is compared with what the engine itself returns, validated against the tool's output
schema, and checked to stay under the size cap.
"""

from __future__ import annotations

import json
import threading

import httpx
import jsonschema
import pytest
import rdflib
from fastmcp import Client
from mcp import MCPError
from mcp_types import INVALID_PARAMS

from stackgraph.graph.engine import Engine
from stackgraph.graph.model import UnknownEntity
from stackgraph.graph.store import PREFIXES
from stackgraph.server import bounds as bounds_module
from stackgraph.server import schemas
from stackgraph.server.bounds import (
    MAX_RESULT_CHARS,
    MAX_STRUCTURED_CHARS,
    MAX_TEXT_CHARS,
    Bounds,
    decode_cursor,
    parse_text_content,
)
from stackgraph.server.http import BindRefused, check_bind, create_app, is_loopback
from stackgraph.server.mcp_server import build_server
from stackgraph.server.mcp_sessions import ISSUED, conversation_key
from stackgraph.server.runtime import LRU

TOOLS = {
    "ask",
    "search",
    "describe",
    "where_fits",
    "owner_of_symptom",
    "diagnose",
    "triage",
    "related",
    "neighbors",
    "list_layers",
    "sparql",
    "export_subgraph",
    "schema",
}
#: What "about 20,000 characters" means for one whole result (text plus structured JSON).
RESULT_CAP = MAX_RESULT_CHARS


# ------------------------------------------------------------------------------------- fixtures


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
def names(engine) -> dict[str, str]:
    """Entity names the graph answers about, found by asking the engine itself."""
    records = sorted(engine.catalog.records.values(), key=lambda r: r.label)

    def of_type(kind: str) -> list[str]:
        return [r.label for r in records if engine.catalog.most_specific_type(r) == kind]

    found: dict[str, str] = {}
    for label in of_type("technology")[:80]:
        if engine.ask(f"Where does {label} fit in the stack?").answered:
            found["technology"] = label
            break
    for label in of_type("symptom"):
        if "symptom" not in found and engine.ask(f"Which layer owns {label}?").intent == "owner_of_symptom":
            found["symptom"] = label
        if "diagnosable" not in found and engine.ask(f"How do I diagnose {label}?").intent == "diagnose":
            found["diagnosable"] = label
        try:
            state = engine.triage(label)
        except Exception:
            continue
        if not state.done and "triage" not in found:
            found["triage"] = label
    hub = max(records[:150], key=lambda r: engine.neighbors(r.iri, depth=1, limit=1)[1])
    found["hub"] = hub.iri
    return found


@pytest.fixture(scope="module")
def output_schemas(server) -> dict[str, dict]:
    import asyncio

    async def collect():
        async with Client(server) as connected:
            return {t.name: t.output_schema for t in await connected.list_tools()}

    return asyncio.run(collect())


async def call(client, tool: str, arguments: dict, schemas_by_tool: dict[str, dict] | None = None):
    result = await client.call_tool(tool, arguments, raise_on_error=False)
    if not result.is_error:
        text = "".join(block.text for block in result.content)
        size = len(text) + len(json.dumps(result.structured_content))
        assert size <= RESULT_CAP, f"{tool} returned {size} characters"
        assert len(json.dumps(result.structured_content)) <= MAX_STRUCTURED_CHARS
        assert len(text) <= MAX_TEXT_CHARS
        assert_text_is_the_record(result)
        if schemas_by_tool:
            jsonschema.validate(result.structured_content, schemas_by_tool[tool])
    return result


def assert_text_is_the_record(result) -> None:
    """The text content carries the whole structured content: a client that passes only `content`
    to its model loses nothing (cursor, names, the whole export chunk)."""
    assert len(result.content) == 1
    summary, record, raw = parse_text_content(result.content[0].text)
    data = result.structured_content
    assert summary.strip()
    if raw is not None:
        assert raw == data["content"]
        record = {**record, "content": raw}
    assert record == data
    if data.get("cursor"):
        assert f"cursor={data['cursor']}" in summary


def without_cursors(value):
    """A result with its cursors blanked (a cursor of an answer names that answer's cache slot)."""
    if isinstance(value, dict):
        return {k: (None if k == "cursor" else without_cursors(v)) for k, v in value.items()}
    if isinstance(value, list):
        return [without_cursors(v) for v in value]
    return value


def error_text(result) -> str:
    assert result.is_error, "expected a tool error"
    return result.content[0].text


async def all_pages(client, tool: str, arguments: dict, field: str, schemas_by_tool=None) -> list:
    """Every item of a paged list, following cursors (at most 100 pages)."""
    items, cursor = [], None
    for _ in range(100):
        result = await call(
            client, tool, {**arguments, **({"cursor": cursor} if cursor else {})}, schemas_by_tool
        )
        assert not result.is_error, result.content[0].text
        page = result.structured_content[field]
        items += page["items"]
        cursor = page["cursor"]
        assert page["truncated"] == (cursor is not None)
        if cursor is None:
            return items
    raise AssertionError("cursor never ended")


# ------------------------------------------------------------------------------------- listing


async def test_every_tool_is_listed_read_only_with_schemas_and_documented_arguments(client):
    tools = {t.name: t for t in await client.list_tools()}
    assert set(tools) == TOOLS
    for tool in tools.values():
        assert tool.output_schema and tool.output_schema["type"] == "object", tool.name
        assert len(tool.description or "") > 80, tool.name
        hints = tool.annotations
        assert (hints.read_only_hint, hints.open_world_hint, hints.destructive_hint) == (True, False, False)
        # ask with a conversation_id adds a turn that later calls build on: not idempotent.
        assert hints.idempotent_hint is (tool.name != "ask"), tool.name
        jsonschema.Draft202012Validator.check_schema(tool.output_schema)
        for name, prop in tool.input_schema["properties"].items():
            assert prop.get("description"), f"{tool.name}.{name} has no description"


async def test_initialize_and_listing_do_not_wait_for_the_engine():
    gate, loaded = threading.Event(), threading.Event()
    real = Engine.load(semantic=False)

    def slow_factory():
        gate.wait(30)
        loaded.set()
        return real

    server = build_server(slow_factory, semantic=False)
    async with Client(server) as connected:
        assert len(await connected.list_tools()) == len(TOOLS)
        assert len(await connected.list_prompts()) == 3
        assert not loaded.is_set()
        gate.set()
        result = await call(connected, "list_layers", {})
        assert not result.is_error
    assert loaded.is_set()


async def test_a_graph_that_fails_to_load_is_reported_by_tools_not_by_a_crash():
    def broken():
        raise ValueError("data.ttl:3: bad triple")

    server = build_server(broken, semantic=False)
    async with Client(server) as connected:
        assert len(await connected.list_tools()) == len(TOOLS)
        message = error_text(await call(connected, "search", {"text": "gpu"}))
        assert "failed to load" in message and "data.ttl:3" in message
        message = error_text(await call(connected, "describe", {"entity": "x"}))
        assert "failed to load" in message


async def test_an_engine_failure_inside_a_tool_is_an_error_result_and_the_server_goes_on(engine):
    class Exploding:
        def __getattr__(self, name):
            return getattr(engine, name)

        def describe(self, name):
            raise RuntimeError("kaboom")

    server = build_server(Exploding, semantic=False)
    async with Client(server) as connected:
        known = next(iter(engine.catalog.records))  # describe resolves the name before failing
        message = error_text(await call(connected, "describe", {"entity": known}))
        assert message == "describe failed: RuntimeError: kaboom"
        assert not (await call(connected, "list_layers", {})).is_error


# ------------------------------------------------------------------------------------- tools


async def test_list_layers_matches_the_engine_and_pages(client, engine, output_schemas):
    for model in ("nine", "eight", None):
        args = {"model": model} if model else {}
        result = await call(client, "list_layers", args, output_schemas)
        expected = engine.layers(model)
        page = result.structured_content["layers"]
        assert page["total"] == len(expected)
        shown = len(page["items"])
        assert [i["layer"]["iri"] for i in page["items"]] == [i.layer.iri for i in expected][:shown]
        if shown < min(page["limit"], len(expected)):  # trimmed to the size cap: says so, and continues
            assert page["truncated"] and result.structured_content["notice"]
        for item, info in zip(page["items"], expected, strict=False):
            assert item["members_total"] == len(info.members)
            assert len(item["members"]) <= 6 and item["members_truncated"] == (len(info.members) > 6)
    everything = engine.layers(None)
    if len(everything) > 2:
        paged = await all_pages(client, "list_layers", {"limit": 2}, "layers", output_schemas)
        assert [i["layer"]["iri"] for i in paged] == [i.layer.iri for i in everything]


async def test_search_finds_an_entity_by_its_label_and_pages(client, engine, names, output_schemas):
    label = names["technology"]
    result = await call(client, "search", {"text": label}, output_schemas)
    items = result.structured_content["results"]["items"]
    assert items and items[0]["label"] == label
    assert label in result.content[0].text
    page, total = engine.search("gpu", limit=100)
    if total > 3:
        paged = await all_pages(client, "search", {"text": "gpu", "limit": 3}, "results", output_schemas)
        assert [r["iri"] for r in paged] == [r.iri for r in page]
    typed = await call(client, "search", {"text": "gpu", "type": "command"}, output_schemas)
    assert all(r["type"] == "command" for r in typed.structured_content["results"]["items"])


async def test_describe_at_each_detail_level(client, engine, names, output_schemas):
    hub = names["hub"]
    desc = engine.describe(hub)
    by_level = {}
    for detail in ("names", "summary", "full"):
        result = await call(client, "describe", {"entity": hub, "detail": detail}, output_schemas)
        data = by_level[detail] = result.structured_content
        assert data["entity"]["iri"] == desc.entity.iri
        assert data["detail"] == detail
        assert data["placements"]["total"] == len(desc.placements)
    assert by_level["names"]["outgoing"] is None and by_level["names"]["definition"] is None
    assert by_level["summary"]["outgoing"]["total"] == len(desc.outgoing)
    assert by_level["summary"]["outgoing"]["limit"] == 15 and by_level["full"]["outgoing"]["limit"] == 50
    assert by_level["summary"]["notes"] is None and by_level["full"]["notes"]["total"] == len(desc.notes)
    assert by_level["summary"]["definition"] == desc.definition
    if len(desc.outgoing) > 2:
        paged = await all_pages(client, "describe", {"entity": hub, "limit": 2}, "outgoing", output_schemas)
        assert len(paged) == len(desc.outgoing)


async def test_unknown_entity_is_an_error_naming_the_closest_matches(client, engine, names):
    suggestions = ()
    for bad in ("Kubernetez schedulr thingy", "nvidai smi topolgy", "zz qq unknown widget"):
        try:
            engine.resolve(bad)
        except UnknownEntity as error:
            suggestions = error.suggestions
            if suggestions:
                break
    else:
        pytest.skip("no misspelling without a match found")
    for tool, args in (
        ("describe", {"entity": bad}),
        ("neighbors", {"entity": bad}),
        ("related", {"a": bad, "b": names["hub"]}),
        ("export_subgraph", {"entity": bad}),
    ):
        message = error_text(await call(client, tool, args))
        assert "unknown entity" in message and "Closest matches" in message, message
        assert suggestions[0].label in message
    assert "argument 'b'" in error_text(await call(client, "related", {"a": names["hub"], "b": bad}))


async def test_where_fits_owner_and_diagnose_answer_like_the_engine(client, engine, names, output_schemas):
    cases = [
        (
            "where_fits",
            {"technology": names["technology"]},
            f"Where does {names['technology']} fit in the stack?",
        )
    ]
    if "symptom" in names:
        symptom = names["symptom"]
        cases.append(("owner_of_symptom", {"symptom": symptom}, f"Which layer owns {symptom}?"))
    if "diagnosable" in names:
        symptom = names["diagnosable"]
        cases.append(("diagnose", {"symptom": symptom}, f"How do I diagnose {symptom}?"))
    for tool, args, question in cases:
        expected = engine.ask(question)
        result = await call(client, tool, args, output_schemas)
        if not expected.answered:
            assert result.is_error
            continue
        data = result.structured_content
        assert data["answered"] and data["answer"] == expected.answer and data["intent"] == expected.intent
        assert data["intent"] == tool  # the composed question reaches the intended answerer
        assert [e["iri"] for e in data["entities"]["items"]] == [e.iri for e in expected.entities][:20]
        assert data["facts"]["total"] == len(expected.facts)
        assert expected.answer[:100] in result.content[0].text
        again = await call(client, tool, args, output_schemas)  # complete results come from a cache
        assert without_cursors(again.structured_content) == without_cursors(data)


async def test_shortcuts_say_when_the_graph_has_no_answer(client):
    message = error_text(await call(client, "where_fits", {"technology": "Qwxzy Hyperfabric 9000"}))
    assert message.startswith("no answer for 'Qwxzy Hyperfabric 9000'")


async def test_ask_keeps_conversations_by_id(client, server, names, output_schemas):
    runtime = server.stackgraph_runtime
    question = f"Where does {names['technology']} fit?"
    first = await call(
        client, "ask", {"question": question, "conversation_id": "incident-42"}, output_schemas
    )
    assert first.structured_content["conversation_id"] == "incident-42"
    key, _ = conversation_key(None, "incident-42", set())  # in memory: the process's own scope
    lock, conversation = runtime.conversation(key)
    assert [t.question for t in conversation.turns] == [question]
    await call(client, "ask", {"question": "and which layer is that?", "conversation_id": "incident-42"})
    assert len(conversation.turns) == 2
    alone = await call(client, "ask", {"question": question}, output_schemas)
    issued = alone.structured_content["conversation_id"]  # a new conversation, under an issued id
    assert issued and issued != "incident-42" and ISSUED.match(issued)
    follow = await call(client, "ask", {"question": "and which layer is that?", "conversation_id": issued})
    assert follow.structured_content["conversation_id"] == issued
    assert "conversation_id" in error_text(
        await call(client, "ask", {"question": "x", "conversation_id": "bad id!"})
    )


async def test_ask_pages_long_answers_through_a_cursor(client, engine, server, names, output_schemas):
    question = f"Where does {names['technology']} fit?"
    answer = engine.ask(question)
    result = await call(client, "ask", {"question": question}, output_schemas)
    facts = result.structured_content["facts"]
    assert facts["total"] == len(answer.facts)
    if facts["cursor"]:
        everything = await all_pages(client, "ask", {"question": question}, "facts", output_schemas)
        assert len(everything) == len(answer.facts)


async def test_triage_walks_one_answer_at_a_time(client, engine, names, output_schemas):
    if "triage" not in names:
        pytest.skip("the graph has no triage tree yet")
    symptom, answers = names["triage"], []
    for _ in range(12):
        result = await call(client, "triage", {"symptom": symptom, "answers": answers}, output_schemas)
        data = result.structured_content
        expected = engine.triage(symptom, answers)
        assert data["done"] == expected.done and data["taken"] == list(expected.taken)
        if data["done"]:
            assert data["conclusion"] or data["layers"]["items"] or data["action"]
            break
        assert data["question"] and data["options"]["items"]
        assert data["question"] in result.content[0].text
        answers = [*answers, data["options"]["items"][0]]
    else:
        raise AssertionError("triage never finished")
    bad = await call(client, "triage", {"symptom": symptom, "answers": ["certainly not an option"]})
    assert "bad argument" in error_text(bad)


async def test_related_returns_the_engine_path(client, engine, names, output_schemas):
    hub = names["hub"]
    edges, _ = engine.neighbors(hub, depth=2, limit=50)
    far = edges[-1].target.iri if edges[-1].target.iri != hub else edges[-1].source.iri
    result = await call(client, "related", {"a": hub, "b": far}, output_schemas)
    data = result.structured_content
    expected = engine.related(hub, far)
    assert data["connected"] and data["hops"] == len(expected) >= 1
    assert [e["predicate"] for e in data["path"]["items"]] == [e.predicate for e in expected]
    same = await call(client, "related", {"a": hub, "b": hub}, output_schemas)
    assert same.structured_content["connected"]


async def test_neighbors_pages_and_bounds_depth(client, engine, names, output_schemas):
    hub = names["hub"]
    _, total = engine.neighbors(hub, depth=1, limit=1)
    result = await call(client, "neighbors", {"entity": hub, "limit": 2}, output_schemas)
    page = result.structured_content["edges"]
    assert page["total"] == total and len(page["items"]) == min(2, total)
    paged = await all_pages(client, "neighbors", {"entity": hub, "limit": 7}, "edges", output_schemas)
    expected, _ = engine.neighbors(hub, depth=1, limit=total)
    assert [(e["source"]["iri"], e["predicate"], e["target"]["iri"]) for e in paged] == [
        (e.source.iri, e.predicate, e.target.iri) for e in expected
    ]
    big = await call(client, "neighbors", {"entity": hub, "depth": 3, "limit": 200}, output_schemas)
    assert not big.is_error
    assert "'depth'" in error_text(await call(client, "neighbors", {"entity": hub, "depth": 4}))


async def test_sparql_through_the_guard(client, engine, output_schemas):
    select = "SELECT ?e ?label WHERE { ?e a sg:Layer ; rdfs:label ?label } ORDER BY ?label"
    result = await call(client, "sparql", {"query": select, "limit": 3}, output_schemas)
    data = result.structured_content
    assert data["kind"] == "select" and data["variables"] == ["e", "label"]
    expected = [(str(r.e), str(r.label)) for r in engine.graph.query(select, initNs=PREFIXES)]
    rows = await all_pages(client, "sparql", {"query": select, "limit": 3}, "rows", output_schemas)
    assert [(r["e"]["value"], r["label"]["value"]) for r in rows] == expected
    assert {r["e"]["type"] for r in rows} == {"uri"} and {r["label"]["type"] for r in rows} == {"literal"}
    ask = await call(client, "sparql", {"query": "ASK { ?s a sg:Layer }"}, output_schemas)
    assert ask.structured_content["boolean"] is (len(expected) > 0)
    construct = await call(
        client,
        "sparql",
        {"query": "CONSTRUCT { ?e rdfs:label ?l } WHERE { ?e a sg:Layer ; rdfs:label ?l }"},
        output_schemas,
    )
    assert construct.structured_content["rows"]["total"] == len(expected)
    assert "refused" in error_text(
        await call(client, "sparql", {"query": "INSERT DATA { <urn:a> <urn:b> <urn:c> }"})
    )
    service = "SELECT * WHERE { SERVICE <http://example.org/sparql> { ?s ?p ?o } }"
    assert "refused" in error_text(await call(client, "sparql", {"query": service}))
    assert "bad argument 'query'" in error_text(await call(client, "sparql", {"query": "SELEC ?x WHERE {"}))
    assert "'timeout_s'" in error_text(await call(client, "sparql", {"query": select, "timeout_s": 99}))


async def test_export_subgraph_in_chunks_that_parse(client, engine, names, output_schemas):
    hub = names["hub"]
    result = await call(client, "export_subgraph", {"entity": hub, "depth": 2}, output_schemas)
    data = result.structured_content
    text = data["content"]
    cursor = result.structured_content["cursor"]
    while cursor:
        more = await call(
            client, "export_subgraph", {"entity": hub, "depth": 2, "cursor": cursor}, output_schemas
        )
        text += more.structured_content["content"]
        cursor = more.structured_content["cursor"]
    assert len(text) == data["total_chars"]
    graph = rdflib.Graph().parse(data=text, format="turtle")
    assert any(str(s) == hub for s in graph.subjects())
    mermaid = await call(client, "export_subgraph", {"entity": hub, "format": "mermaid"}, output_schemas)
    assert not mermaid.is_error and mermaid.structured_content["format"] == "mermaid"
    assert "'format'" in error_text(await call(client, "export_subgraph", {"entity": hub, "format": "png"}))


async def test_bad_arguments_say_which_and_why(client):
    assert "'question' is required" in error_text(await call(client, "ask", {}))
    assert "'limit'" in error_text(await call(client, "search", {"text": "gpu", "limit": 0}))
    assert "'detail'" in error_text(await call(client, "describe", {"entity": "x", "detail": "everything"}))
    assert "'bogus' is not an argument" in error_text(
        await call(client, "search", {"text": "gpu", "bogus": 1})
    )
    assert "'text'" in error_text(await call(client, "search", {"text": ""}))


async def test_cursors_are_checked(client, names):
    assert "bad argument 'cursor'" in error_text(
        await call(client, "search", {"text": "gpu", "cursor": "not-a-cursor"})
    )
    first = await call(client, "neighbors", {"entity": names["hub"], "limit": 1})
    cursor = first.structured_content["cursor"]
    assert cursor
    assert "different call" in error_text(await call(client, "search", {"text": "gpu", "cursor": cursor}))
    assert "different call" in error_text(
        await call(client, "neighbors", {"entity": names["hub"], "depth": 2, "cursor": cursor})
    )


# ------------------------------------------------------------------------------------- resources


async def test_resources_ontology_and_layers(client, engine):
    listed = {str(r.uri): r for r in await client.list_resources()}
    assert {"stackgraph://ontology.ttl", "stackgraph://layers/nine", "stackgraph://layers/eight"} <= set(
        listed
    )
    ontology = (await client.read_resource("stackgraph://ontology.ttl"))[0]
    assert ontology.mime_type == "text/turtle"
    graph = rdflib.Graph().parse(data=ontology.text, format="turtle")
    assert (rdflib.URIRef("https://w3id.org/stackgraph/ns#Layer"), None, None) in graph
    for model in ("nine", "eight"):
        data = json.loads((await client.read_resource(f"stackgraph://layers/{model}"))[0].text)
        assert [layer["layer"]["iri"] for layer in data["layers"]] == [
            i.layer.iri for i in engine.layers(model)
        ]


async def test_resource_templates_per_entity_and_per_layer(client, engine, names):
    templates = {t.uri_template for t in await client.list_resource_templates()}
    assert templates == {"stackgraph://entity/{id}", "stackgraph://layer/{model}/{code}"}
    hub = names["hub"]
    local = hub.rsplit("/", 1)[-1]
    text = (await client.read_resource(f"stackgraph://entity/{local}"))[0].text
    assert len(text) <= MAX_RESULT_CHARS
    page = json.loads(text)
    assert page["entity"]["iri"] == hub
    full = engine.describe(hub).to_dict()
    cut = page.pop("truncated", {"lists": {}})["lists"]  # the hub may be too big for one resource
    for name, value in full.items():
        if name in cut:
            assert cut[name] == len(value) and value[: len(page[name])] == page[name], name
        else:
            assert page[name] == value, name
    layers = engine.layers("nine") or engine.layers("eight")
    if layers:
        model = "nine" if engine.layers("nine") else "eight"
        code = layers[0].layer.code
        layer = json.loads((await client.read_resource(f"stackgraph://layer/{model}/{code}"))[0].text)
        assert layer["entity"]["iri"] == layers[0].layer.iri
        members = layer.get("truncated", {"lists": {}})["lists"].get("members", len(layer["members"]))
        assert members == len(layers[0].members)
    with pytest.raises(MCPError, match="unknown entity|no entity") as unknown:
        await client.read_resource("stackgraph://entity/definitely-not-an-entity-xyz")
    assert unknown.value.error.code == INVALID_PARAMS  # names nothing: invalid params, not internal
    assert unknown.value.error.data["uri"] == "stackgraph://entity/definitely-not-an-entity-xyz"
    with pytest.raises(MCPError, match="unknown model") as model:
        await client.read_resource("stackgraph://layer/ten/L1")
    assert model.value.error.code == INVALID_PARAMS


# ------------------------------------------------------------------------------------- prompts


async def test_prompts_name_the_tools_and_what_the_graph_knows(client, engine, names):
    prompts = {p.name: p for p in await client.list_prompts()}
    assert set(prompts) == {"triage_incident", "place_technology", "explain_layer"}
    assert [a.name for a in prompts["triage_incident"].arguments] == ["symptom"]
    technology = names["technology"]
    text = (await client.get_prompt("place_technology", {"name": technology})).messages[0].content.text
    assert "where_fits" in text and engine.resolve(technology).display in text
    symptom = names.get("symptom", "CUDA OOM")
    text = (await client.get_prompt("triage_incident", {"symptom": symptom})).messages[0].content.text
    assert "owner_of_symptom" in text and "triage" in text and symptom in text
    text = (
        (await client.get_prompt("explain_layer", {"layer": "zz unknown layer qq"})).messages[0].content.text
    )
    assert "describe" in text and "no entity named" in text


# ------------------------------------------------------------------------------------- bounds


class UnitResult(schemas.Bounded):
    label: str
    things: schemas.Page[dict]


class NumbersResult(schemas.Bounded):
    numbers: schemas.Page[int]


def test_bounds_trim_oversized_results_and_the_cursor_continues():
    items = [{"text": f"item {i} " + "x" * 300} for i in range(200)]
    results = []
    cursor = None
    for _ in range(50):
        bounds = Bounds("unit", ("k",), cursor, limit=200)
        page = bounds.page("things", items)
        result = bounds.finish({"label": "t", "things": page}, UnitResult, lambda d: "y" * 10_000)
        data = result.structured_content
        assert len(json.dumps(data)) <= MAX_STRUCTURED_CHARS
        assert len(result.content[0].text) <= MAX_TEXT_CHARS
        results += data["things"]["items"]
        cursor = data["cursor"]
        if cursor is None:
            break
        assert data["truncated"] and data["notice"] and "Trimmed" in data["notice"]
    assert [r["text"] for r in results] == [i["text"] for i in items]


def test_cursor_is_opaque_and_bound_to_its_call():
    bounds = Bounds("unit", ("a",), None, limit=1)
    result = bounds.finish({"numbers": bounds.page("numbers", [1, 2])}, NumbersResult, str)
    cursor = result.structured_content["cursor"]
    assert result.structured_content["numbers"]["items"] == [1]
    assert decode_cursor(cursor)["o"] == {"numbers": 1}
    with pytest.raises(bounds_module.UserError, match="different call"):
        Bounds("unit", ("b",), cursor, limit=1)


def test_lru_keeps_the_most_recent():
    lru: LRU[str, int] = LRU(3)
    for i in range(5):
        lru.put(str(i), i)
    assert lru.get("0") is None and lru.get("4") == 4 and len(lru) == 3
    lru.get("2")
    lru.put("5", 5)
    assert lru.get("2") == 2 and lru.get("3") is None


# ------------------------------------------------------------------------------------- HTTP guard


def test_binding_beyond_loopback_needs_a_token():
    assert is_loopback("127.0.0.1") and is_loopback("localhost") and is_loopback("[::1]:8000")
    assert not is_loopback("0.0.0.0") and not is_loopback("10.1.2.3")
    check_bind("127.0.0.1", None)
    check_bind("0.0.0.0", "secret")
    with pytest.raises(BindRefused, match="STACKGRAPH_TOKEN"):
        check_bind("0.0.0.0", None)


async def test_http_app_guards_origin_host_and_token(engine):
    server = build_server(lambda: engine, semantic=False, start=False)
    app = create_app(server, token="s3cret", allowed_origins=("https://agent.example",))
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:8000") as http:
        assert (await http.get("/healthz")).status_code == 401
        ok = {"authorization": "Bearer s3cret"}
        assert (await http.get("/healthz", headers=ok)).status_code == 200
        assert (await http.get("/healthz", headers={"authorization": "Bearer wrong"})).status_code == 401
        evil = await http.get("/healthz", headers={**ok, "origin": "http://evil.example"})
        assert evil.status_code == 403 and "origin" in evil.json()["error"]
        for origin in ("http://localhost:3000", "https://agent.example", "http://127.0.0.1:8000"):
            assert (await http.get("/healthz", headers={**ok, "origin": origin})).status_code == 200
        assert (await http.get("/healthz", headers={**ok, "host": "attacker.example"})).status_code == 421
        assert (
            await http.post("/mcp", headers={"origin": "http://evil.example"}, json={})
        ).status_code == 403
        assert (await http.post("/mcp", json={})).status_code == 401
