"""The output schemas of the MCP tools, as pydantic models.

They mirror the ``to_dict()`` shapes of the engine's values (``stackgraph.graph.model``) so that an
agent sees the same JSON as ``stackgraph ask --json``, with one difference: every list is a
``Page`` (items, total, offset, limit, truncated, cursor), because agents reject oversized tool
output and need to know when there is more. Each tool's ``outputSchema`` is generated from these
models (written compactly by ``schema_compact``), and every result is validated against its model
before it leaves the server.
"""

from __future__ import annotations

from typing import Generic, Literal, NotRequired, TypeVar

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


class SourceOut(BaseModel):
    document: str = Field(description="Seed document file name: an identifier, not for display.")
    section: str
    iri: str
    title: str = Field(default="", description="The document's title.")
    short: str = Field(default="", description="A short name for the document.")
    display: str = Field(default="", description='How to cite it: "title § section".')


class FactOut(BaseModel):
    subject: str
    predicate: str
    object: str
    subject_label: str
    predicate_label: str
    object_label: str
    basis: str = Field(default="stated", description="stated, inferred, reconstructed or authored.")
    source: SourceOut | None = Field(default=None, description="The section this statement rests on.")
    sources: list[SourceOut] = Field(default_factory=list, description="Every section it rests on.")


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
    basis: str = Field(default="stated", description="stated, inferred, reconstructed or authored.")
    source: SourceOut | None = Field(default=None, description="The section this statement rests on.")
    sources: list[SourceOut] = Field(default_factory=list, description="Every section it rests on.")


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


#: How every result is shaped; part of the server's instructions.
RESULT_CONVENTIONS = """\
Every result: lists are pages {items, total, offset, limit, truncated, cursor}; `truncated` is
true when any list has more, and `cursor` (top level) continues every list: pass it back with
the same arguments. `notice` says when a result was trimmed or answered something else. An
entity is {iri, label, type, code and model for layers, score when matched from text}; a source
is {document, section, iri} of a seed document. The text content carries the same record as
JSON after a short summary.
"""
