"""The MCP tools: thin wrappers over the engine that add paging, size caps and useful errors.

Every tool is read-only (and idempotent, but for ``ask``, whose conversations grow; annotated so),
returns structured content validated against its output schema with the same record as its text
(``bounds.text_content``), and keeps every list in a page with a cursor. Tools are plain functions run on fastmcp's worker threads, because the engine is
synchronous and a tool may have to wait for the graph to finish loading.
"""

from __future__ import annotations

import json
from functools import partial
from typing import TYPE_CHECKING, Annotated, Any, Literal

import anyio
from fastmcp import Context
from fastmcp.tools import Tool
from fastmcp.tools.base import ToolResult
from mcp_types import ToolAnnotations
from pydantic import Field

from stackgraph.graph.model import UnknownEntity
from stackgraph.graph.store import PREFIXES
from stackgraph.server import render, schemas
from stackgraph.server.bounds import MAX_STRUCTURED_CHARS, Bounds, decode_cursor
from stackgraph.server.errors import UserError, did_you_mean, tool_errors, unknown_entity_error
from stackgraph.server.mcp_guidance import (
    SHORTCUT_KINDS,
    answered_else_notice,
    check_type,
    closest_of_kind,
    not_a_symptom,
    tree_notice,
)
from stackgraph.server.mcp_sessions import conversation_key
from stackgraph.server.runtime import Runtime
from stackgraph.server.schema_compact import compact, output_schema

if TYPE_CHECKING:
    from fastmcp import FastMCP

    from stackgraph.graph.engine import Engine
    from stackgraph.graph.model import Answer, EntityRef

READ_ONLY = {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True, "openWorldHint": False}
#: ``ask`` reads only, but a call with a ``conversation_id`` adds a turn that later calls build on.
STATEFUL_READ = {**READ_ONLY, "idempotentHint": False}

#: Page sizes of the lists inside an answer.
ANSWER_LIMITS = {"entities": 20, "facts": 25, "sources": 10, "sparql": 5, "path": 20, "suggestions": 5}
#: Default edges per direction shown by `describe` at each detail level.
DESCRIBE_LIMITS = {"names": 50, "summary": 15, "full": 50}
#: An export chunk's size as JSON (quotes and line breaks escaped), leaving room in the result's
#: bound for the fields around it.
EXPORT_CHUNK = MAX_STRUCTURED_CHARS - 1_500
#: Members of a layer shown inline by `list_layers`.
LAYER_MEMBERS_SHOWN = 6

Cursor = Annotated[
    str | None,
    Field(description="The previous result's `cursor`, for its next page."),
]
EntityName = Annotated[
    str,
    Field(
        min_length=1,
        max_length=300,
        description='A name as people write it ("NVLink", "CUDA OOM", "eight L5"), "kg:nvlink" or an IRI.',
    ),
]
LayerModel = Annotated[
    Literal["nine", "eight"] | None,
    Field(description='The model of a bare layer code ("L5"); or write "eight L5".'),
]
ConversationId = Annotated[
    str | None,
    Field(
        pattern=r"^[A-Za-z0-9_.:-]{1,64}$",
        description="The `conversation_id` an earlier `ask` returned, for follow-ups ('and how do I check it?'); "
        "omit to start one. In an MCP session or over stdio, a name of your own works too.",
    ),
]


def _ask(engine: Engine, question: str, conversation: Any = None, intent: str | None = None) -> Answer:
    """Ask, telling the engine the intent when the tool already knows it."""
    return engine.ask(question, conversation, intent=intent)


def _resolve(engine: Engine, name: str, argument: str, model: str | None = None) -> EntityRef:
    try:
        return engine.resolve(name, model=model)
    except UnknownEntity as error:
        raise unknown_entity_error(error, argument) from None


def _to_dict(value: Any) -> Any:
    return value.to_dict() if hasattr(value, "to_dict") else value


def register_tools(mcp: FastMCP, runtime: Runtime) -> None:
    """Add every stackgraph tool to ``mcp``."""

    def tool(model: type, title: str, annotations: dict[str, bool] = READ_ONLY):
        def decorate(fn):
            registered = Tool.from_function(
                fn,
                name=fn.__name__,
                title=title,
                output_schema=output_schema(model),
                annotations=ToolAnnotations(**annotations),
            )
            registered.parameters = compact(registered.parameters)
            mcp.add_tool(registered)
            return fn

        return decorate

    def answer_result(
        tool_name: str,
        answer: Answer,
        cursor: str | None,
        conversation_id: str | None = None,
        token: str | None = None,
        notice: str | None = None,
        suggestions: list[EntityRef] | None = None,
    ) -> ToolResult:
        token = token or runtime.remember_answer(answer)
        bounds = Bounds.for_key(tool_name, token, cursor, limit=25)
        data: dict[str, Any] = {
            "question": answer.question,
            "answered": answer.answered,
            "answer": answer.answer,
            "intent": answer.intent,
            "confidence": round(float(answer.confidence), 3),
            "error": answer.error,
            "conversation_id": conversation_id,
        }
        for field, limit in ANSWER_LIMITS.items():
            items = list(getattr(answer, field))
            if field == "suggestions" and suggestions:
                items += [s for s in suggestions if s.iri not in {i.iri for i in items}]
            data[field] = bounds.page(field, items, _to_dict, limit=limit)
        if notice:
            data["notice"] = notice
        return bounds.finish(data, schemas.AnswerResult, render.answer)

    def cached_answer(tool_name: str, cursor: str) -> tuple[Answer, str]:
        data = decode_cursor(cursor)
        if data.get("t") != tool_name:
            raise UserError(f"bad argument 'cursor': it belongs to {data.get('t')!r}, not {tool_name!r}")
        answer = runtime.answers.get(str(data.get("k")))
        if answer is None:
            raise UserError("bad argument 'cursor': it has expired; ask again without a cursor")
        return answer, str(data["k"])

    async def shortcut(
        tool_name: str, question: str, intent: str, cursor: str | None, subject: str
    ) -> ToolResult:
        """where_fits / owner_of_symptom / diagnose: one question of a fixed kind.

        The graph does not change while the server runs, so a complete (untruncated) result is
        kept and served again from the event loop, without a trip to a worker thread."""
        key = (tool_name, subject)
        if cursor is None and (hit := runtime.results.get(key)) is not None:
            return hit
        result = await anyio.to_thread.run_sync(
            partial(answer_shortcut, tool_name, question, intent, cursor, subject)
        )
        if cursor is None and not (result.structured_content or {}).get("truncated"):
            runtime.results.put(key, result)
        return result

    def answer_shortcut(
        tool_name: str, question: str, intent: str, cursor: str | None, subject: str
    ) -> ToolResult:
        with tool_errors(tool_name):
            if cursor:
                answer, token = cached_answer(tool_name, cursor)
                return answer_result(tool_name, answer, cursor, token=token)
            engine = runtime.engine(semantic=True)
            answer = _ask(engine, question, None, intent)
            kind = SHORTCUT_KINDS[tool_name]
            if not answer.answered and not answer.error:
                suggestions = list(answer.suggestions) or closest_of_kind(engine, subject, kind)
                names = "; ".join(f"{s.display} ({s.type})" for s in suggestions[:5])
                hint = f" Closest matches: {names}. Call again with one of these names." if names else ""
                raise UserError(
                    f"no answer for {subject!r}: {answer.answer or 'the graph does not say'}.{hint}",
                    did_you_mean(kind, suggestions),
                )
            if answer.intent != intent:
                # The engine read the text as another kind of question ("NVLink" is no symptom):
                # keep its answer, but say so, with the closest entities of the kind asked for.
                closest = closest_of_kind(engine, subject, kind)
                notice = answered_else_notice(tool_name, kind, subject, answer, closest)
                return answer_result(tool_name, answer, None, notice=notice, suggestions=closest)
            return answer_result(tool_name, answer, None)

    @tool(schemas.AnswerResult, "Ask stackgraph a question", STATEFUL_READ)
    def ask(
        question: Annotated[
            str,
            Field(
                min_length=1,
                max_length=2000,
                description='A question in plain English, e.g. "which layer owns CUDA OOM?", "how is NVLink '
                'related to NCCL?", "what does eight L5 do?".',
            ),
        ],
        conversation_id: ConversationId = None,
        cursor: Cursor = None,
        ctx: Context | None = None,
    ) -> ToolResult:
        """Answer a question about the AI infrastructure stack from the knowledge graph.

        For anything the other tools do not cover, and for follow-ups: with the same
        `conversation_id`, "it" and "that layer" refer to earlier answers (ids are per session).
        Returns the answer, the entities, facts (triples) and seed sections it rests on, and the
        SPARQL it ran; when `answered` is false, `suggestions` has the closest names.
        """
        with tool_errors("ask"):
            if cursor:
                answer, token = cached_answer("ask", cursor)
                return answer_result("ask", answer, cursor, conversation_id, token=token)
            engine = runtime.engine(semantic=True)
            key, conversation_id = conversation_key(ctx, conversation_id, runtime.conversations)
            lock, conversation = runtime.conversation(key)
            with lock:
                answer = _ask(engine, question, conversation)
            return answer_result("ask", answer, None, conversation_id)

    @tool(schemas.SearchResult, "Search entities by name or meaning")
    def search(
        text: Annotated[
            str,
            Field(
                min_length=1, max_length=300, description="Words to match against entity names and meaning."
            ),
        ],
        type: Annotated[
            str | None,
            Field(
                max_length=60,
                description='Only entities of this type: "technology", "layer", "symptom", "command", "cause", '
                '"workload", "concept"... (a class label or local name).',
            ),
        ] = None,
        limit: Annotated[int, Field(ge=1, le=50, description="Results per page (1-50).")] = 10,
        cursor: Cursor = None,
    ) -> ToolResult:
        """Find entities whose names (or meaning) match some text, best first: the exact name of
        a technology, symptom, command or layer for the other tools, or after an unknown-entity
        error. An unknown `type` fails with the list of types."""
        with tool_errors("search"):
            bounds = Bounds("search", (text, type, limit), cursor, limit)
            offset = bounds.offsets.get("results", 0) if bounds.continuing else 0
            engine = runtime.engine(semantic=True)
            found, total = engine.search(text, type=type, limit=limit, offset=offset)
            if type and not total:
                check_type(engine, type)
            page = bounds.window("results", [r.to_dict() for r in found], total, offset)
            return bounds.finish(
                {"text": text, "type": type, "results": page}, schemas.SearchResult, render.search
            )

    @tool(schemas.DescribeResult, "Describe one entity")
    def describe(
        entity: EntityName,
        detail: Annotated[
            Literal["names", "summary", "full"],
            Field(
                description="names: types, other names, placements; summary: plus definition, edges, sources; "
                "full: also notes and each placement's sources."
            ),
        ] = "summary",
        limit: Annotated[
            int | None,
            Field(
                ge=1,
                le=200,
                description="Edges per direction per page (default 15 for summary, 50 for full).",
            ),
        ] = None,
        model: LayerModel = None,
        cursor: Cursor = None,
    ) -> ToolResult:
        """Everything the graph says about one entity: what it is, the layers it fits (role and
        basis), its edges in both directions, and the seed sections that say so. An unknown name
        fails with the closest matches."""
        with tool_errors("describe", "entity"):
            limit = limit or DESCRIBE_LIMITS[detail]
            bounds = Bounds("describe", (entity, detail, limit, model), cursor, limit)
            engine = runtime.engine()
            desc = engine.describe(_resolve(engine, entity, "entity", model).iri)
            full = detail == "full"

            def placement(p: Any) -> dict[str, Any]:
                data = p.to_dict()
                data["sources"] = data["sources"][:5] if full else []
                return data

            data: dict[str, Any] = {
                "entity": desc.entity.to_dict(),
                "detail": detail,
                "types": bounds.page("types", list(desc.types), limit=50),
                "alt_labels": bounds.page("alt_labels", sorted(desc.alt_labels), limit=50),
                "definition": desc.definition if detail != "names" else None,
                "placements": bounds.page("placements", list(desc.placements), placement, limit=50),
            }
            if detail != "names":
                data["outgoing"] = bounds.page("outgoing", list(desc.outgoing), _to_dict)
                data["incoming"] = bounds.page("incoming", list(desc.incoming), _to_dict)
                data["sources"] = bounds.page("sources", list(desc.sources), _to_dict, limit=25)
            if full:
                data["notes"] = bounds.page("notes", list(desc.notes), limit=25)
            return bounds.finish(data, schemas.DescribeResult, render.describe)

    @tool(schemas.AnswerResult, "Where a technology fits in the stack")
    async def where_fits(
        technology: Annotated[
            str,
            Field(
                min_length=1,
                max_length=300,
                description='A technology or product, e.g. "UALink", "vLLM", "GPUDirect Storage".',
            ),
        ],
        cursor: Cursor = None,
    ) -> ToolResult:
        """Which layer(s) of both layer models a technology belongs to, in what role, on what
        evidence. An unknown technology fails with the closest matches; when the text names
        something else (a symptom), `notice` says which question was answered instead."""
        return await shortcut(
            "where_fits", f"Where does {technology} fit in the stack?", "where_fits", cursor, technology
        )

    @tool(schemas.AnswerResult, "Which layer owns a symptom")
    async def owner_of_symptom(
        symptom: Annotated[
            str,
            Field(
                min_length=1,
                max_length=500,
                description='What you observe, e.g. "CUDA OOM", "NCCL timeout", "pods stuck in CrashLoopBackOff".',
            ),
        ],
        cursor: Cursor = None,
    ) -> ToolResult:
        """Which layer (and so which team) owns a symptom, with its likely causes. First step of
        incident triage; then `triage` and `diagnose`. When the text is no symptom (a
        technology), `notice` says so and `suggestions` has the closest symptoms."""
        return await shortcut(
            "owner_of_symptom", f"Which layer owns {symptom}?", "owner_of_symptom", cursor, symptom
        )

    @tool(schemas.AnswerResult, "How to diagnose a symptom")
    async def diagnose(
        symptom: Annotated[
            str,
            Field(
                min_length=1,
                max_length=500,
                description='What you observe, e.g. "NCCL timeout", "GPU Xid errors".',
            ),
        ],
        cursor: Cursor = None,
    ) -> ToolResult:
        """How to check a symptom: the diagnostic commands and checks the graph lists for it and
        its likely causes, with the layer each belongs to."""
        return await shortcut("diagnose", f"How do I diagnose {symptom}?", "diagnose", cursor, symptom)

    @tool(schemas.TriageResult, "Walk a triage tree one step at a time")
    def triage(
        symptom: EntityName,
        answers: Annotated[
            list[Annotated[str, Field(max_length=200)]],
            Field(
                max_length=20,
                description="The answers given so far, in order, each one of the `options` of the previous step. "
                "Start with [] and append one answer per call.",
            ),
        ] = [],  # noqa: B006 - pydantic copies defaults; the list is never mutated
        cursor: Cursor = None,
    ) -> ToolResult:
        """Walk a symptom's decision tree one question at a time; the symptom may be free text
        ("first tokens are slow"): `read_as` is the symptom it names, `tree_rule` why this tree.

        Call with `answers=[]` for the first question and its `options`; append one option per
        call until `done`, then read `conclusion`, `layers`, `causes` and `diagnostics`.
        """
        with tool_errors("triage", "symptom"):
            from stackgraph.graph.triage_tree import choose_tree

            bounds = Bounds("triage", (symptom, list(answers)), cursor, 25)
            engine = runtime.engine(semantic=True)
            try:
                choice = choose_tree(engine, symptom)
            except UnknownEntity as error:
                raise UserError(
                    not_a_symptom(engine, symptom, error), did_you_mean("symptom", error.suggestions)
                ) from None
            state = engine.triage((choice.tree_of or choice.symptom).iri, answers)
            data = {
                "symptom": state.symptom.to_dict(),
                "read_as": choice.symptom.to_dict(),
                "tree_rule": choice.rule,
                "tree_shared": [ref.to_dict() for ref in choice.shared[:10]],
                "notice": tree_notice(choice),
                "done": state.done,
                "question": state.question,
                "options": bounds.page("options", list(state.options)),
                "taken": list(state.taken),
                "action": state.action,
                "conclusion": state.conclusion,
                "layers": bounds.page("layers", list(state.layers), _to_dict),
                "causes": bounds.page("causes", list(state.causes), _to_dict),
                "diagnostics": bounds.page("diagnostics", list(state.diagnostics)),
                "sources": bounds.page("sources", list(state.sources), _to_dict, limit=10),
            }
            return bounds.finish(data, schemas.TriageResult, render.triage)

    @tool(schemas.PathResult, "How two entities are related")
    def related(
        a: EntityName,
        b: EntityName,
        max_hops: Annotated[int, Field(ge=1, le=8, description="Longest path to look for (1-8).")] = 6,
        model: LayerModel = None,
        cursor: Cursor = None,
    ) -> ToolResult:
        """The shortest chain of relations between two entities (e.g. NVLink and NCCL), each hop
        labelled with its relation. `connected` is false when no path exists within `max_hops`."""
        with tool_errors("related"):
            engine = runtime.engine()
            ref_a, ref_b = _resolve(engine, a, "a", model), _resolve(engine, b, "b", model)
            bounds = Bounds("related", (ref_a.iri, ref_b.iri, max_hops), cursor, 25)
            path = engine.related(ref_a.iri, ref_b.iri, max_hops=max_hops)
            data = {
                "a": ref_a.to_dict(),
                "b": ref_b.to_dict(),
                "connected": bool(path) or ref_a.iri == ref_b.iri,
                "hops": len(path),
                "path": bounds.page("path", list(path), _to_dict),
            }
            return bounds.finish(data, schemas.PathResult, render.related)

    @tool(schemas.NeighborsResult, "Entities around one entity")
    def neighbors(
        entity: EntityName,
        depth: Annotated[int, Field(ge=1, le=3, description="Hops to follow (1-3).")] = 1,
        limit: Annotated[int, Field(ge=1, le=200, description="Edges per page (1-200).")] = 25,
        model: LayerModel = None,
        cursor: Cursor = None,
    ) -> ToolResult:
        """The edges within `depth` hops of an entity, nearest first: what it connects to and
        what connects to it. Page through large neighbourhoods with `cursor`."""
        with tool_errors("neighbors", "entity"):
            engine = runtime.engine()
            ref = _resolve(engine, entity, "entity", model)
            bounds = Bounds("neighbors", (ref.iri, depth, limit), cursor, limit)
            offset = bounds.offsets.get("edges", 0) if bounds.continuing else 0
            edges, total = engine.neighbors(ref.iri, depth=depth, limit=offset + limit)
            page = bounds.window(
                "edges", [e.to_dict() for e in edges[offset : offset + limit]], total, offset
            )
            data = {"entity": ref.to_dict(), "depth": depth, "edges": page}
            return bounds.finish(data, schemas.NeighborsResult, render.neighbors)

    @tool(schemas.LayersResult, "List the layers of the stack")
    def list_layers(
        model: Annotated[
            Literal["nine", "eight"] | None,
            Field(
                description='"nine": the nine-layer co-design model (L1-L9 plus storage S and control plane CP); '
                '"eight": the eight-layer operational map. Omit for both.'
            ),
        ] = None,
        limit: Annotated[int, Field(ge=1, le=50, description="Layers per page (1-50).")] = 25,
        cursor: Cursor = None,
    ) -> ToolResult:
        """The layers of the stack in order, each with its code, name, where it runs and a few of
        its members. Use `describe` on a layer ("L8", "eight L5") for all its members."""
        with tool_errors("list_layers"):
            bounds = Bounds("list_layers", (model, limit), cursor, limit)
            infos = runtime.engine().layers(model)

            def layer(info: Any) -> dict[str, Any]:
                members = list(info.members)
                return {
                    "layer": info.layer.to_dict(),
                    "position": info.position,
                    "runs_in": info.runs_in,
                    "members_total": len(members),
                    "members": [m.to_dict() for m in members[:LAYER_MEMBERS_SHOWN]],
                    "members_truncated": len(members) > LAYER_MEMBERS_SHOWN,
                }

            data = {"model": model, "layers": bounds.page("layers", infos, layer)}
            return bounds.finish(data, schemas.LayersResult, render.layers)

    @tool(schemas.SparqlResult, "Run a read-only SPARQL query")
    def sparql(
        query: Annotated[
            str,
            Field(
                min_length=1,
                max_length=20_000,
                description="A SPARQL 1.1 SELECT, ASK, CONSTRUCT or DESCRIBE query. Prefixes sg:, kg:, rdfs:, skos:, dct: "
                "and the usual W3C ones are predeclared.",
            ),
        ],
        limit: Annotated[int, Field(ge=1, le=1000, description="Rows per page (1-1000).")] = 100,
        timeout_s: Annotated[
            float, Field(gt=0, le=30, description="Give up after this many seconds (at most 30).")
        ] = 5.0,
        cursor: Cursor = None,
    ) -> ToolResult:
        """Query the graph directly with SPARQL (read-only).

        Call `schema` first: it lists the classes and properties with counts and gives example
        queries that run. Rows are typed bindings ({type: uri|literal|bnode, value, datatype?,
        xml:lang?}); at most 10,000 rows are paged through, past that narrow the query.
        Updates, SERVICE, LOAD and remote FROM are refused; the query stops at `timeout_s`.
        Prefer the other tools for questions they answer; use this for lists and counts they
        do not offer (e.g. every technology of one layer).
        """
        with tool_errors("sparql"):
            from stackgraph.server.sparql_tool import max_rows, run_sparql

            bounds = Bounds("sparql", (query, limit), cursor, limit)
            offset = bounds.offsets.get("rows", 0) if bounds.continuing else 0
            cap = max_rows()
            reach = min(offset + limit, cap)
            outcome = run_sparql(runtime.engine(), query, reach, timeout_s)
            rows, total, capped = outcome.pop("rows"), outcome.pop("total"), outcome.pop("capped")
            at_cap = capped and reach >= cap  # no page past the guard's row cap: end here, say why
            page = bounds.window("rows", rows[offset:reach], total, offset, more=capped and not at_cap)
            page.capped = at_cap
            data = {**outcome, "rows": page}
            if at_cap:
                data["notice"] = (
                    f"The query has more than {cap:,} rows, the most this server pages through; no cursor "
                    "goes further. Narrow it: a FILTER or a more specific pattern, ORDER BY with "
                    "LIMIT/OFFSET inside the query, or SELECT (COUNT(*) AS ?n) for the size."
                )
            return bounds.finish(data, schemas.SparqlResult, render.sparql)

    @tool(schemas.SchemaResult, "Classes, properties and example queries for SPARQL")
    def schema(
        limit: Annotated[
            int, Field(ge=1, le=100, description="Classes and properties per page (1-100).")
        ] = 40,
        cursor: Cursor = None,
    ) -> ToolResult:
        """The graph's vocabulary for writing `sparql` queries: every class with its number of
        instances, every property with its number of uses (and domain/range when declared),
        the predeclared prefixes, and example queries that run as they are (symptom -> owning
        layer, a layer's technologies, checks per symptom, sources), using OPTIONAL for what
        not every entity has. Call it before your first `sparql` query."""
        with tool_errors("schema"):
            from stackgraph.server.mcp_schema import EXAMPLES, graph_schema

            bounds = Bounds("schema", (limit,), cursor, limit)
            found = graph_schema(runtime.engine())
            data = {
                "prefixes": {k: v for k, v in sorted(PREFIXES.items()) if k},
                "classes": bounds.page("classes", found["classes"]),
                "properties": bounds.page("properties", found["properties"]),
                "examples": [{"title": e.title, "query": e.query} for e in EXAMPLES],
            }
            return bounds.finish(data, schemas.SchemaResult, render.schema)

    @tool(schemas.ExportResult, "Export the subgraph around an entity")
    def export_subgraph(
        entity: EntityName,
        depth: Annotated[int, Field(ge=1, le=3, description="Hops around the entity to include (1-3).")] = 1,
        format: Annotated[
            Literal["turtle", "ntriples", "jsonld", "graphml", "mermaid", "dot", "svg", "markdown"],
            Field(
                description="turtle, ntriples, jsonld: RDF; mermaid, dot: diagram source; svg: rendered (needs "
                "Graphviz); graphml: graph tools; markdown: a page."
            ),
        ] = "turtle",
        model: LayerModel = None,
        cursor: Cursor = None,
    ) -> ToolResult:
        """The entity and everything within `depth` hops, as RDF (Turtle, N-Triples, JSON-LD), a
        diagram (Mermaid, DOT, SVG), GraphML or Markdown. Long exports come in chunks of about
        12,000 characters: follow `cursor` for the rest."""
        with tool_errors("export_subgraph", "entity"):
            from stackgraph.server.export_tool import run_export

            engine = runtime.engine()
            ref = _resolve(engine, entity, "entity", model)
            bounds = Bounds("export_subgraph", (ref.iri, depth, format), cursor, EXPORT_CHUNK)
            offset = bounds.offsets.get("content", 0) if bounds.continuing else 0
            text = run_export(engine, ref.iri, format, depth)
            chunk = _chunk(text, offset, EXPORT_CHUNK)
            if offset + len(chunk) < len(text):
                bounds.extra_offsets["content"] = offset + len(chunk)
            data = {
                "entity": ref.to_dict(),
                "format": format,
                "depth": depth,
                "content": chunk,
                "total_chars": len(text),
                "offset": offset,
            }
            return bounds.finish(data, schemas.ExportResult, render.export, raw_field="content")


def _chunk(text: str, offset: int, size: int) -> str:
    """The text from ``offset`` whose JSON form (escapes included) is at most ``size`` characters,
    ending at a line break when one is near, so each chunk is whole lines."""
    piece = text[offset : offset + size]
    while len(json.dumps(piece)) > size:
        piece = piece[: max(1, len(piece) * size // len(json.dumps(piece)) - 8)]
    if offset + len(piece) < len(text):
        cut = piece.rfind("\n")
        if cut > len(piece) // 2:
            piece = piece[: cut + 1]
    return piece
