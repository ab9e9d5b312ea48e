"""Issue 13's defects, checked through any MCP client session of the official SDK (stdio or HTTP).

``test_mcp_e2e.py`` runs these against real ``stackgraph mcp`` and ``stackgraph serve``
processes; ``Expected`` holds what the engine itself says (computed in the test process), so the
checks compare the server's answers with the graph rather than with hard-coded names.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from mcp import MCPError

from stackgraph.graph.conversation import Conversation
from stackgraph.graph.engine import Engine
from stackgraph.server.bounds import (
    MAX_RESULT_CHARS,
    MAX_STRUCTURED_CHARS,
    call_key,
    encode_cursor,
    parse_text_content,
)

DIGITS = "VALUES ?{v} {{ " + " ".join(f'"{d}"' for d in range(10)) + " }}"
#: 100,000 short rows: more than the guard's 10,000-row cap.
MANY_ROWS = (
    "SELECT ?n WHERE { "
    + " ".join(DIGITS.format(v=v) for v in "abcde")
    + " BIND(CONCAT(?a, ?b, ?c, ?d, ?e) AS ?n) }"
)


@dataclass(frozen=True)
class Expected:
    """What the engine says, for the checks to compare with."""

    code: str  # a layer code both models use
    nine: str  # its IRI in the nine-layer model
    eight: str  # its IRI in the eight-layer map
    hub: str  # the entity with most edges (its exports take several chunks)
    not_a_symptom: str  # a technology owner_of_symptom answers as another question
    remembered: str  # a technology whose follow-up answer names it
    treeless: str | None  # a symptom no triage tree applies to
    max_rows: int


def expected(engine: Engine) -> Expected:
    from stackgraph.graph.sparql import MAX_ROWS

    nine = {i.layer.code: i.layer.iri for i in engine.layers("nine")}
    eight = {i.layer.code: i.layer.iri for i in engine.layers("eight")}
    code = max(set(nine) & set(eight))
    hub = max(engine.catalog.records, key=lambda iri: engine.neighbors(iri, depth=1, limit=1)[1])
    technologies = sorted(
        r.label
        for r in engine.catalog.records.values()
        if engine.catalog.most_specific_type(r) == "technology"
    )
    not_a_symptom = next(
        t
        for t in technologies
        if (a := engine.ask(f"Which layer owns {t}?", intent="owner_of_symptom")).answered
        and a.intent != "owner_of_symptom"
    )
    remembered = ""
    for label in technologies[:60]:
        conversation = Conversation()
        engine.ask(f"Where does {label} fit?", conversation)
        if label in engine.ask("and how do I test it?", conversation).answer:
            remembered = label
            break
    from stackgraph.graph.triage_tree import choose_tree

    symptoms = sorted(engine.catalog.label(i) for i in engine.entities_of("Symptom"))
    treeless = next((s for s in symptoms if choose_tree(engine, s).rule == "none"), None)
    return Expected(code, nine[code], eight[code], hub, not_a_symptom, remembered, treeless, MAX_ROWS)


async def checked(client, tool: str, arguments: dict):
    """Call a tool; check the result's size and that its text content is its whole record."""
    result = await client.call_tool(tool, arguments)
    if result.is_error:
        return result
    text = result.content[0].text
    data = result.structured_content
    assert len(text) + len(json.dumps(data)) <= MAX_RESULT_CHARS, tool
    assert len(json.dumps(data)) <= MAX_STRUCTURED_CHARS, tool
    summary, record, raw = parse_text_content(text)
    if raw is not None:
        record["content"] = raw
    assert record == data, f"{tool}: text content differs from structured content"
    if data.get("cursor"):
        assert f"cursor={data['cursor']}" in summary
    return result


def error(result) -> str:
    assert result.is_error, "expected a tool error"
    return result.content[0].text


async def check_listing(client) -> None:
    listed = await client.list_tools()
    size = len(listed.model_dump_json(by_alias=True, exclude_none=True))
    assert size < 40_000, f"tools/list is {size:,} characters"
    tools = {t.name: t for t in listed.tools}
    assert "`schema`" in tools["sparql"].description
    assert tools["ask"].annotations.idempotent_hint is False


async def check_layers(client, e: Expected) -> None:
    for name, iri in ((f"eight {e.code}", e.eight), (f"ops {e.code}", e.eight), (f"{e.code} eight", e.eight)):
        result = await checked(client, "describe", {"entity": name, "detail": "names"})
        assert result.structured_content["entity"]["iri"] == iri, name
    for name, iri in ((f"{e.code} (eight-layer)", e.eight), (f"the operational map's {e.code}", e.eight)):
        result = await checked(client, "neighbors", {"entity": name, "limit": 1})
        assert result.structured_content["entity"]["iri"] == iri, name
    result = await checked(client, "describe", {"entity": f"nine {e.code}", "detail": "names"})
    assert result.structured_content["entity"]["iri"] == e.nine
    result = await checked(client, "describe", {"entity": e.code, "model": "eight", "detail": "names"})
    assert result.structured_content["entity"]["iri"] == e.eight
    layers = await checked(client, "list_layers", {"model": "eight"})
    first = layers.structured_content["layers"]["items"][0]
    summary = parse_text_content(layers.content[0].text)[0]
    assert all(member["label"] in summary for member in first["members"])


async def check_sparql(client, e: Expected) -> None:
    query = 'SELECT ?layer ?tag WHERE { ?layer a sg:Layer . BIND("x"@en AS ?tag) } LIMIT 2'
    result = await checked(client, "sparql", {"query": query})
    rows = result.structured_content["rows"]
    assert rows["total"] == 2 and result.content[0].text.startswith("2 row(s)")
    assert rows["items"][0]["layer"]["type"] == "uri"
    assert rows["items"][0]["tag"] == {"type": "literal", "value": "x", "xml:lang": "en"}
    names = " ".join(f"?v{i:03d}_{'x' * 30}" for i in range(440))
    message = error(
        await client.call_tool("sparql", {"query": f"SELECT {names} WHERE {{ ?s ?p ?o }} LIMIT 2"})
    )
    assert "440 variables" in message
    first = await checked(client, "sparql", {"query": MANY_ROWS, "limit": 50})
    assert first.structured_content["notice"] is None and first.structured_content["cursor"]
    assert "None" not in first.content[0].text.splitlines()[0]
    replayed = {"query": MANY_ROWS, "limit": 60, "cursor": first.structured_content["cursor"]}
    assert "different call" in error(await client.call_tool("sparql", replayed))
    # Walking all ~50 pages to the cap takes a minute; start two pages before it instead, with a
    # cursor made the way the server makes them (cursors are opaque, not secret).
    start = e.max_rows - 300
    cursor = encode_cursor("sparql", call_key(["sparql", MANY_ROWS, 1000]), {"rows": start})
    seen, calls = start, 0
    while True:
        arguments = {"query": MANY_ROWS, "limit": 1000, **({"cursor": cursor} if cursor else {})}
        data = (await checked(client, "sparql", arguments)).structured_content
        seen += len(data["rows"]["items"])
        cursor, calls = data["cursor"], calls + 1
        assert calls <= 200, "the cursor never ended"
        if cursor is None:
            break
    assert seen == e.max_rows and data["truncated"] and data["rows"]["cursor"] is None
    assert f"{e.max_rows:,}" in data["notice"]


async def check_shortcuts_and_triage(client, e: Expected) -> None:
    owner = await checked(client, "owner_of_symptom", {"symptom": e.not_a_symptom})
    data = owner.structured_content
    assert data["intent"] != "owner_of_symptom" and "found no symptom" in data["notice"]
    assert all(s["type"] == "symptom" for s in data["suggestions"]["items"])
    text = "first tokens are slow"
    owner = await checked(client, "owner_of_symptom", {"symptom": text})
    symptoms = [x["iri"] for x in owner.structured_content["entities"]["items"] if x["type"] == "symptom"]
    walk = (await checked(client, "triage", {"symptom": text, "answers": []})).structured_content
    assert walk["read_as"]["iri"] in symptoms and walk["question"] and walk["options"]["items"]
    assert walk["tree_rule"] != "none" and walk["notice"]
    if e.treeless:
        alone = (await checked(client, "triage", {"symptom": e.treeless})).structured_content
        assert alone["done"] and alone["tree_rule"] == "none"
        refused = await client.call_tool("triage", {"symptom": e.treeless, "answers": ["yes"]})
        assert "no triage tree" in error(refused)
    message = error(await client.call_tool("search", {"text": "gpu", "type": "no such kind"}))
    assert "symptom" in message and "technology" in message


async def check_schema(client) -> None:
    data = (await checked(client, "schema", {})).structured_content
    assert data["classes"]["items"][0]["instances"] > 0 and data["properties"]["items"][0]["uses"] > 0
    owning = next(x for x in data["examples"] if "sg:ownedBy" in x["query"] and "OPTIONAL" in x["query"])
    rows = (await checked(client, "sparql", {"query": owning["query"]})).structured_content["rows"]
    assert rows["items"]


async def check_resources(client) -> None:
    for uri in ("stackgraph://layer/nine/CP", "stackgraph://layers/nine", "stackgraph://ontology.ttl"):
        text = (await client.read_resource(uri)).contents[0].text
        assert len(text) <= MAX_RESULT_CHARS, uri
    try:
        await client.read_resource("stackgraph://entity/definitely-not-an-entity-xyz")
    except MCPError as failure:
        assert failure.error.code == -32602 and "unknown entity" in failure.error.message
    else:
        raise AssertionError("an unknown entity's resource was read")


async def check_mermaid_from_text(client, e: Expected, workdir: Path) -> None:
    from mermaid_check import JS_DIR, parse_files

    if not (JS_DIR / "node_modules" / "mermaid").is_dir():
        print("Mermaid parser not installed (cd tests/js && npm ci): export text not parsed")
        return
    chunks, cursor = [], None
    for _ in range(20):
        arguments = {
            "entity": e.hub,
            "format": "mermaid",
            "depth": 2,
            **({"cursor": cursor} if cursor else {}),
        }
        _, record, raw = parse_text_content(
            (await checked(client, "export_subgraph", arguments)).content[0].text
        )
        chunks.append(raw)
        cursor = record["cursor"]
        if cursor is None:
            break
    diagram = "".join(chunks)
    # A capped diagram may fit one chunk; reassembly over several is tested in memory
    # (test_mcp_agent), where the chunk size can be made small.
    assert len(diagram) == record["total_chars"]
    path = workdir / "export.mmd"
    path.write_text(diagram, encoding="utf-8")
    parsed = parse_files([path])
    assert parsed.returncode == 0, parsed.stdout + parsed.stderr


async def check_issued_conversation(client, e: Expected) -> str:
    """A conversation continued with the id the first answer returned; returns that id."""
    assert e.remembered, "no technology whose follow-up answer names it: the conversation checks need one"
    first = await checked(client, "ask", {"question": f"Where does {e.remembered} fit?"})
    issued = first.structured_content["conversation_id"]
    assert issued
    follow = await checked(client, "ask", {"question": "and how do I test it?", "conversation_id": issued})
    assert e.remembered in follow.structured_content["answer"]
    forged = "c_" + "A" * 16
    assert "not a conversation this server knows" in error(
        await client.call_tool("ask", {"question": "and how do I test it?", "conversation_id": forged})
    )
    return issued


async def check_all(client, e: Expected, workdir: Path) -> None:
    await check_listing(client)
    await check_layers(client, e)
    await check_sparql(client, e)
    await check_shortcuts_and_triage(client, e)
    await check_schema(client)
    await check_resources(client)
    await check_mermaid_from_text(client, e, workdir)
    await check_issued_conversation(client, e)
