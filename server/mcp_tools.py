"""The MCP tools: thin wrappers over the engine that add paging, size caps and useful errors.

Every tool is read-only and idempotent (annotated so), returns structured content validated
against its output schema plus a short text rendering, and keeps every list in a page with a
cursor. Tools are plain functions run on fastmcp's worker threads, because the engine is
synchronous and a tool may have to wait for the graph to finish loading.
"""

from __future__ import annotations

import json
from functools import partial
from typing import TYPE_CHECKING, Annotated, Any, Literal

import anyio
from fastmcp.tools import Tool
from fastmcp.tools.base import ToolResult
from mcp_types import ToolAnnotations
from pydantic import Field

from stackgraph.graph.model import UnknownEntity
from stackgraph.server import render, schemas
from stackgraph.server.bounds import MAX_STRUCTURED_CHARS, Bounds, decode_cursor
from stackgraph.server.errors import UserError, tool_errors, unknown_entity_message
from stackgraph.server.runtime import Runtime

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
    Field(
        description="Opaque cursor from a previous result of this tool; pass it with the same arguments for the next page."
    ),
]
EntityName = Annotated[
    str,
    Field(
        min_length=1,
        max_length=300,
        description='An entity: its name as people write it ("NVLink", "CUDA OOM"), a layer code ("L5", "nine L8"), '
        'a prefixed name ("kg:nvlink") or a full IRI.',
    ),
]
ConversationId = Annotated[
    str | None,
    Field(
        pattern=r"^[A-Za-z0-9._:-]{1,64}$",
        description="Any id you choose (e.g. 'incident-42'); questions with the same id are one conversation, so "
        "follow-ups like 'and how do I check it?' resolve against earlier answers. Omit for a standalone question.",
    ),
]


def _ask(engine: Engine, question: str, conversation: Any = None, intent: str | None = None) -> Answer:
    """Ask, telling the engine the intent when the tool already knows it."""
    return engine.ask(question, conversation, intent=intent)


def _resolve(engine: Engine, name: str, argument: str) -> EntityRef:
    try:
        return engine.resolve(name)
    except UnknownEntity as error:
        raise UserError(unknown_entity_message(error, argument)) from None


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
                output_schema=schemas.output_schema(model),
                annotations=ToolAnnotations(**annotations),
            )
            registered.parameters = schemas.compact(registered.parameters)
            mcp.add_tool(registered)
            return fn

        return decorate

    def answer_result(
        tool_name: str,
        answer: Answer,
        cursor: str | None,
        conversation_id: str | None = None,
        token: str | None = None,
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
            data[field] = bounds.page(field, list(getattr(answer, field)), _to_dict, limit=limit)
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
            if not answer.answered and not answer.error:
                suggestions = answer.suggestions
                if not suggestions:
                    try:
                        engine.resolve(subject)
                    except UnknownEntity as error:
                        suggestions = error.suggestions
                names = "; ".join(f"{s.display} ({s.type})" for s in suggestions[:5])
                hint = f" Closest matches: {names}. Call again with one of these names." if names else ""
                raise UserError(
                    f"no answer for {subject!r}: {answer.answer or 'the graph does not say'}.{hint}"
                )
            return answer_result(tool_name, answer, None)

    @tool(schemas.AnswerResult, "Ask stackgraph a question", STATEFUL_READ)
    def ask(
        question: Annotated[
            str,
            Field(
                min_length=1,
                max_length=2000,
                description='A question in plain English, e.g. "which layer owns CUDA OOM?", "where does UALink fit?", '
                '"how is NVLink related to NCCL?", "what does L5 do in the eight-layer map?".',
            ),
        ],
        conversation_id: ConversationId = None,
        cursor: Cursor = None,
    ) -> ToolResult:
        """Answer a question about the AI infrastructure stack from the knowledge graph.

        Use it for anything the specific tools do not cover, and for follow-ups: pass the same
        `conversation_id` and "it", "that layer" refer to earlier answers. The result says whether
        the graph answered (`answered`), the answer, the entities it is about, the facts (triples)
        and seed-document sections it rests on, and the SPARQL it ran. When `answered` is false,
        `suggestions` lists the closest entity names: ask again with one of them.
        """
        with tool_errors("ask"):
            if cursor:
                answer, token = cached_answer("ask", cursor)
                return answer_result("ask", answer, cursor, conversation_id, token=token)
            engine = runtime.engine(semantic=True)
            if conversation_id:
                lock, conversation = runtime.conversation(conversation_id)
                with lock:
                    answer = _ask(engine, question, conversation)
            else:
                answer = _ask(engine, question)
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
        """Find entities whose names (or meaning) match some text, best first.

        Use it to discover the exact name of a technology, symptom, command or layer before
        calling `describe`, `neighbors`, `related` or `triage`, or when another tool reported an
        unknown entity. Each result has the entity's IRI, label, type and a match score.
        """
        with tool_errors("search"):
            bounds = Bounds("search", (text, type), cursor, limit)
            offset = bounds.offsets.get("results", 0) if bounds.continuing else 0
            engine = runtime.engine(semantic=True)
            found, total = engine.search(text, type=type, limit=limit, offset=offset)
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
                description="names: types, other names and layer placements only; summary: plus definition, "
                "edges and sources; full: everything, including notes and each placement's sources."
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
        cursor: Cursor = None,
    ) -> ToolResult:
        """Everything the graph says about one entity: what it is, the layers it fits (with role
        and how sure the graph is), its edges to other entities in both directions, and the seed
        sections that say so.

        Use it after `search`/`where_fits` to read an entity's page. An unknown name fails with
        the closest matches.
        """
        with tool_errors("describe", "entity"):
            limit = limit or DESCRIBE_LIMITS[detail]
            bounds = Bounds("describe", (entity, detail), cursor, limit)
            engine = runtime.engine()
            desc = engine.describe(entity)
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
        """Which layer(s) of the stack a technology belongs to, in what role, and on what evidence.

        Answers from both layer models (the nine-layer co-design model and the eight-layer
        operational map) where the graph places it. An unknown technology fails with the closest
        matches.
        """
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
        """Which layer (and so which team) owns a symptom, with the likely causes the graph knows.

        Use it first when triaging an incident; then `diagnose` for what to check and `triage`
        to walk the decision tree.
        """
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
        """Walk the decision tree for a symptom one question at a time.

        Call with `answers=[]` to get the first question and its `options`; call again with one
        option appended to `answers` until `done` is true, then read `conclusion`, the owning
        `layers`, likely `causes` and the `diagnostics` to run. An answer that is not one of the
        options fails and lists the valid ones.
        """
        with tool_errors("triage", "symptom"):
            bounds = Bounds("triage", (symptom, list(answers)), cursor, 25)
            state = runtime.engine().triage(symptom, answers)
            data = {
                "symptom": state.symptom.to_dict(),
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
        cursor: Cursor = None,
    ) -> ToolResult:
        """The shortest chain of relations between two entities (e.g. NVLink and NCCL), each hop
        labelled with its relation. `connected` is false when no path exists within `max_hops`."""
        with tool_errors("related"):
            engine = runtime.engine()
            ref_a, ref_b = _resolve(engine, a, "a"), _resolve(engine, b, "b")
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
        cursor: Cursor = None,
    ) -> ToolResult:
        """The edges within `depth` hops of an entity, nearest first: what it connects to and
        what connects to it. Page through large neighbourhoods with `cursor`."""
        with tool_errors("neighbors", "entity"):
            engine = runtime.engine()
            ref = _resolve(engine, entity, "entity")
            bounds = Bounds("neighbors", (ref.iri, depth), cursor, limit)
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
            bounds = Bounds("list_layers", (model,), cursor, limit)
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

    @tool(schemas.ExportResult, "Export the subgraph around an entity")
    def export_subgraph(
        entity: EntityName,
        depth: Annotated[int, Field(ge=1, le=3, description="Hops around the entity to include (1-3).")] = 1,
        format: Annotated[
            Literal["turtle", "ntriples", "jsonld", "graphml", "mermaid", "dot", "svg", "markdown"],
            Field(
                description="turtle, ntriples or jsonld: the RDF itself; mermaid or dot: a diagram's source; svg: "
                "the diagram rendered (needs Graphviz); graphml: for graph tools; markdown: a readable page."
            ),
        ] = "turtle",
        cursor: Cursor = None,
    ) -> ToolResult:
        """The entity and everything within `depth` hops, as RDF (Turtle, N-Triples, JSON-LD), a
        diagram (Mermaid, DOT, SVG), GraphML or Markdown. Long exports come in chunks of about
        12,000 characters: follow `cursor` for the rest."""
        with tool_errors("export_subgraph", "entity"):
            from stackgraph.server.export_tool import run_export

            engine = runtime.engine()
            ref = _resolve(engine, entity, "entity")
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
