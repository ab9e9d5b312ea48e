"""The output schemas of the MCP tools, as pydantic models.

They mirror the ``to_dict()`` shapes of the engine's values (``stackgraph.graph.model``) so that an
agent sees the same JSON as ``stackgraph ask --json``, with one difference: every list is a
``Page`` (items, total, offset, limit, truncated, cursor), because agents reject oversized tool
output and need to know when there is more. Each tool's ``outputSchema`` is generated from these
models, and every result is validated against its model before it leaves the server.
"""

from __future__ import annotations

import json
from typing import Any, Generic, Literal, NotRequired, TypeVar

from pydantic import BaseModel, Field
from typing_extensions import TypedDict

T = TypeVar("T")


class Page(BaseModel, Generic[T]):
    """One window of a list. Pass ``cursor`` back to the same tool (same arguments) for the next."""

    items: list[T]
    total: int | None = Field(description="How many items the whole list has (None when unknown).")
    offset: int = Field(description="Index of the first item of this page in the whole list.")
    limit: int = Field(description="The most items a page of this list holds.")
    truncated: bool = Field(description="True when more items follow this page.")
    cursor: str | None = Field(
        default=None,
        description="Opaque; pass it to the same tool with the same arguments for the next page.",
    )


class Bounded(BaseModel):
    """Fields every tool result carries."""

    truncated: bool = Field(default=False, description="True when any list of this result has more items.")
    cursor: str | None = Field(
        default=None,
        description="Opaque; pass it back with the same arguments to get the next page of every list.",
    )
    notice: str | None = Field(default=None, description="Set when the result was trimmed to stay small.")


class EntityRefOut(BaseModel):
    iri: str
    label: str
    type: str = Field(description='Most specific class label, e.g. "technology", "layer", "symptom".')
    code: str | None = Field(default=None, description='Layer code ("L8") when the entity is a layer.')
    model: str | None = Field(default=None, description="The layer model's label when the entity is a layer.")
    score: float | None = Field(default=None, description="Match score 0-1 when the entity came from text.")


class FactOut(BaseModel):
    subject: str
    predicate: str
    object: str
    subject_label: str
    predicate_label: str
    object_label: str


class SourceOut(BaseModel):
    document: str = Field(description="Seed document file name.")
    section: str
    iri: str


class PathEdgeOut(BaseModel):
    source: EntityRefOut
    predicate: str
    predicate_label: str
    target: EntityRefOut


class AnswerResult(Bounded):
    """The engine's answer with its evidence: the entities, facts (triples) and sources behind it."""

    question: str
    answered: bool = Field(description="False when the graph has no answer; see suggestions.")
    answer: str
    intent: str
    confidence: float
    error: str | None = Field(default=None, description="Why the question itself was unusable.")
    conversation_id: str | None = Field(default=None, description="Echoed when the question was part of one.")
    entities: Page[EntityRefOut]
    facts: Page[FactOut]
    sources: Page[SourceOut]
    sparql: Page[str]
    path: Page[PathEdgeOut]
    suggestions: Page[EntityRefOut]


class SearchResult(Bounded):
    text: str
    type: str | None = None
    results: Page[EntityRefOut]


class EdgeOut(BaseModel):
    predicate: str
    predicate_label: str
    value: EntityRefOut | str = Field(description="The entity at the other end, or a literal value.")
    qualifier: str | None = None


class PlacementOut(BaseModel):
    layer: EntityRefOut
    role: str | None = None
    basis: str = Field(description="stated (a seed says it), reconstructed, or inferred.")
    sources: list[SourceOut] = Field(default_factory=list, description="At most 5 per placement.")


class DescribeResult(Bounded):
    entity: EntityRefOut
    detail: str
    types: Page[str]
    alt_labels: Page[str]
    definition: str | None = None
    placements: Page[PlacementOut]
    outgoing: Page[EdgeOut] | None = Field(default=None, description="Absent at detail=names.")
    incoming: Page[EdgeOut] | None = Field(default=None, description="Absent at detail=names.")
    sources: Page[SourceOut] | None = Field(default=None, description="Absent at detail=names.")
    notes: Page[str] | None = Field(default=None, description="Only at detail=full.")


class TriageResult(Bounded):
    symptom: EntityRefOut = Field(description="The symptom whose tree is walked.")
    read_as: EntityRefOut = Field(description="The symptom the `symptom` argument was read as.")
    tree_rule: str = Field(
        description="Why this tree: own (the symptom's), related (a related symptom's), shared (most "
        "causes and checks in common, see tree_shared) or none (no tree applies)."
    )
    tree_shared: list[EntityRefOut] = Field(default_factory=list)
    done: bool = Field(description="True when the walk reached a conclusion.")
    question: str | None = Field(description="The question to answer next (None when done).")
    options: Page[str] = Field(
        description="Valid answers to `question`; append one to `answers` and call again."
    )
    taken: list[str] = Field(description="The answers taken so far, in order.")
    action: str | None = None
    conclusion: str | None = None
    layers: Page[EntityRefOut]
    causes: Page[EntityRefOut]
    diagnostics: Page[str]
    sources: Page[SourceOut]


class PathResult(Bounded):
    a: EntityRefOut
    b: EntityRefOut
    connected: bool
    hops: int
    path: Page[PathEdgeOut]


class NeighborsResult(Bounded):
    entity: EntityRefOut
    depth: int
    edges: Page[PathEdgeOut]


class LayerOut(BaseModel):
    layer: EntityRefOut
    position: int
    runs_in: str | None = None
    members_total: int = Field(description="How many entities the graph places in this layer.")
    members: list[EntityRefOut] = Field(
        description="The first few members (see members_truncated); describe the layer for all of them."
    )
    members_truncated: bool


class ClassOut(BaseModel):
    name: str = Field(description='Prefixed name, e.g. "sg:Symptom".')
    label: str | None = None
    comment: str | None = None
    instances: int = Field(description="Entities typed with exactly this class (rdf:type).")


class PropertyOut(BaseModel):
    name: str = Field(description='Prefixed name, e.g. "sg:ownedBy".')
    label: str | None = None
    domain: str | None = None
    range: str | None = None
    uses: int = Field(description="Triples with this predicate.")


class ExampleOut(BaseModel):
    title: str
    query: str


class SchemaResult(Bounded):
    """The vocabulary to write SPARQL against, with counts from the loaded graph."""

    prefixes: dict[str, str] = Field(description="Prefixes the sparql tool predeclares.")
    classes: Page[ClassOut]
    properties: Page[PropertyOut]
    examples: list[ExampleOut] = Field(description="Queries that run as they are; adapt them.")


class LayersResult(Bounded):
    model: str | None = Field(description='"nine", "eight" or None for both models.')
    layers: Page[LayerOut]


#: One RDF term as in the SPARQL 1.1 JSON results format: an IRI, a literal (with its datatype or
#: language) or a blank node.
Binding = TypedDict(
    "Binding",
    {
        "type": Literal["uri", "literal", "bnode"],
        "value": str,
        "datatype": NotRequired[str],
        "xml:lang": NotRequired[str],
    },
)


class SparqlResult(Bounded):
    kind: str = Field(description="select, ask, construct or describe.")
    variables: list[str] = Field(default_factory=list)
    boolean: bool | None = Field(default=None, description="The answer of an ASK query.")
    rows: Page[dict[str, Binding]] = Field(
        description="SELECT rows (variable -> binding; unbound variables left out) or CONSTRUCT triples "
        "(subject, predicate, object). A binding is {type: uri|literal|bnode, value, datatype?, xml:lang?}."
    )
    elapsed_ms: float | None = None


class ExportResult(Bounded):
    entity: EntityRefOut
    format: str
    depth: int
    content: str = Field(description="This chunk of the export; follow `cursor` for the rest.")
    total_chars: int
    offset: int


# ----------------------------------------------------------------------------- compact schemas


class PageInfo(BaseModel):
    """What every page carries besides its items (shared by every ``Page_*`` definition)."""

    total: int | None = Field(description="How many items the whole list has (None when unknown).")
    offset: int = Field(description="Index of the first item of this page in the whole list.")
    limit: int = Field(description="The most items a page of this list holds.")
    truncated: bool = Field(description="True when more items follow this page.")
    cursor: str | None = Field(
        default=None,
        description="Opaque; pass it to the same tool with the same arguments for the next page.",
    )


def output_schema(model: type[BaseModel]) -> dict[str, Any]:
    """``model``'s JSON Schema, written compactly for ``tools/list``.

    Agents read every tool's schema on every session, and pydantic's schema repeats itself:
    a title on every property, ``anyOf`` for every optional scalar, and the same five page fields
    (with their descriptions) in every ``Page_*`` definition. Here the pages share one
    ``PageInfo`` definition (a ``$ref`` beside each page's own ``items``), a definition used
    once is written in place, and the rest in its short form; what validates is unchanged
    (tests validate every result against the schema sent)."""
    schema = _compact(model.model_json_schema())
    schema.pop("description", None)  # the tool's own description says what it returns
    for name in Bounded.model_fields:  # described once, in the server's instructions
        schema["properties"][name].pop("description", None)
    defs = schema.setdefault("$defs", {})
    for name in COMMON_DEFS & set(defs):
        defs[name] = _undescribed(defs[name])
    pages = [name for name in defs if name.startswith("Page_")]
    if pages:
        info = _undescribed(_compact(PageInfo.model_json_schema()))
        info["properties"] = {"items": {"type": "array"}, **info["properties"]}
        info["required"] = ["items", *info["required"]]
        defs["PageInfo"] = info
        for name in pages:  # a page of X: PageInfo, with items of X
            items = defs[name]["properties"]["items"]["items"]
            # JSON Schema 2020-12 (MCP's dialect) applies $ref beside other keywords: no allOf needed.
            defs[name] = {"$ref": "#/$defs/PageInfo", "properties": {"items": {"items": items}}}
    schema.get("properties", {}).get("truncated", {}).pop("default", None)
    schema = _inline_single_use_pages(_renamed(schema, {name: _short_name(name) for name in defs}))
    for definition in schema["$defs"].values():
        # Every value a definition describes is an object (the server validates each result
        # before sending it); "properties" says so to a reader, and the bytes add up in tools/list.
        if "properties" in definition:
            definition.pop("type", None)
    return schema


def _inline_single_use_pages(schema: dict[str, Any]) -> dict[str, Any]:
    """A page definition used once is written where it is used (its definition and the reference
    cost more than the page itself); pages used more than once stay shared."""
    text = json.dumps(schema)
    defs = schema["$defs"]
    once = {
        name
        for name in defs
        if name.endswith("Page") and name != "PageInfo" and text.count(f'"#/$defs/{name}"') == 1
    }

    def inline(node: Any) -> Any:
        if isinstance(node, list):
            return [inline(item) for item in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref", "")
        name = ref[len("#/$defs/") :] if ref.startswith("#/$defs/") else None
        if name in once:
            rest = {k: v for k, v in node.items() if k != "$ref"}
            return {**inline(defs[name]), **rest}
        return {k: inline(v) for k, v in node.items()}

    out = inline({k: v for k, v in schema.items() if k != "$defs"})
    out["$defs"] = {k: inline(v) for k, v in defs.items() if k not in once}
    return out


def _short_name(name: str) -> str:
    """ "Page_EntityRefOut_" -> "EntityRefPage", "EntityRefOut" -> "EntityRef": shorter refs."""
    if name.startswith("Page_"):
        inner = name[len("Page_") :].strip("_").removesuffix("Out")
        return ("".join(part.title() for part in inner.split("_")) if "_" in inner else inner) + "Page"
    return name.removesuffix("Out")


def _renamed(node: Any, names: dict[str, str]) -> Any:
    if isinstance(node, list):
        return [_renamed(item, names) for item in node]
    if not isinstance(node, dict):
        return node
    out = {}
    for key, value in node.items():
        if key == "$defs":
            out[key] = {names.get(k, k): _renamed(v, names) for k, v in value.items()}
        elif key == "$ref" and isinstance(value, str) and value.startswith("#/$defs/"):
            out[key] = "#/$defs/" + names.get(value[len("#/$defs/") :], value[len("#/$defs/") :])
        else:
            out[key] = _renamed(value, names)
    return out


#: Definitions that recur in most tools' schemas; their fields are described once, in the server's
#: instructions (``RESULT_CONVENTIONS``), rather than again in every tool.
COMMON_DEFS = frozenset({"EntityRefOut", "SourceOut", "FactOut", "PathEdgeOut"})

#: How every result is shaped; part of the server's instructions.
RESULT_CONVENTIONS = """\
Every result: lists are pages {items, total, offset, limit, truncated, cursor}; `truncated` is
true when any list has more, and `cursor` (top level) continues every list: pass it back with
the same arguments. `notice` says when a result was trimmed or answered something else. An
entity is {iri, label, type, code and model for layers, score when matched from text}; a source
is {document, section, iri} of a seed document. The text content carries the same record as
JSON after a short summary.
"""


def _undescribed(node: Any) -> Any:
    """``node`` without its field descriptions (for the definitions described once, above)."""
    if isinstance(node, dict):
        return {k: _undescribed(v) for k, v in node.items() if k != "description" or not isinstance(v, str)}
    if isinstance(node, list):
        return [_undescribed(item) for item in node]
    return node


def compact(schema: dict[str, Any]) -> dict[str, Any]:
    """An input schema without generated titles, with short optional types and enums, and
    without ``default: null`` (an optional argument left out is None anyway)."""
    return _compact(schema)


def _compact(node: Any, naming: bool = False, keep_defaults: bool = False) -> Any:
    """Drop generated titles; write ``anyOf: [{type: X}, {type: null}]`` as ``type: [X, null]``.

    ``naming`` is true for the mappings whose keys are names (``properties``, ``$defs``), where a
    key called "title" is a property, not a title."""
    if isinstance(node, list):
        return [_compact(item, keep_defaults=keep_defaults) for item in node]
    if not isinstance(node, dict):
        return node
    out = {
        k: _compact(v, k in ("properties", "$defs"), keep_defaults)
        for k, v in node.items()
        if naming or not (k == "title" or (k == "default" and v is None and not keep_defaults))
    }
    options = out.get("anyOf")
    simple = isinstance(options, list) and all(
        isinstance(o, dict) and "type" in o and isinstance(o["type"], str) and set(o) <= {"type", "pattern"}
        for o in options
    )
    enums = isinstance(options, list) and len(options) == 2 and {"type": "null"} in options
    choice = next((o for o in options if set(o) == {"enum", "type"}), None) if enums else None
    if choice is not None:  # anyOf [{enum: [...], type: string}, {type: null}] -> enum [..., null]
        out.pop("anyOf")
        out["enum"] = [*choice["enum"], None]
    elif simple and sum("pattern" in o for o in options) <= 1 and "type" not in out:
        out.pop("anyOf")
        out["type"] = [o["type"] for o in options]
        out.update({k: v for o in options for k, v in o.items() if k == "pattern"})
    return out
