"""The values the engine hands to every surface (CLI, TUI, MCP, HTTP).

They are frozen dataclasses so that a surface can cache or share them freely, and each has a
``to_dict()`` giving the JSON shape of the ``stackgraph ask --json`` contract.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True)
class EntityRef:
    """An entity as a surface shows it: IRI, label and its most specific type."""

    iri: str
    label: str
    type: str
    #: The layer code ("L8") when the entity is a layer, else None.
    code: str | None = None
    #: The layer model's label when the entity is a layer, else None.
    model: str | None = None
    #: Link score 0-1 when the entity came from matching text.
    score: float | None = None

    @property
    def display(self) -> str:
        """ "L8 Node Interconnect" for a layer, the label otherwise."""
        return f"{self.code} {self.label}" if self.code else self.label

    def to_dict(self) -> dict[str, Any]:
        data = {"iri": self.iri, "label": self.label, "type": self.type}
        if self.code:
            data["code"] = self.code
        if self.model:
            data["model"] = self.model
        if self.score is not None:
            data["score"] = round(self.score, 3)
        return data


@dataclass(frozen=True)
class Fact:
    """One triple an answer used, with human labels for each part and the statement's own
    provenance: its basis and the section it rests on (not its subject's sources)."""

    subject: str
    predicate: str
    object: str
    subject_label: str
    predicate_label: str
    object_label: str
    #: "stated", "inferred", "reconstructed" or "authored" (graph.provenance).
    basis: str = "stated"
    #: The section the statement rests on (the first of ``sources``), when the graph knows one.
    source: SourceRef | None = None
    #: Every section the statement rests on, in document order.
    sources: tuple[SourceRef, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "subject": self.subject,
            "predicate": self.predicate,
            "object": self.object,
            "subject_label": self.subject_label,
            "predicate_label": self.predicate_label,
            "object_label": self.object_label,
            "basis": self.basis,
            "source": self.source.to_dict() if self.source else None,
            "sources": [s.to_dict() for s in self.sources],
        }

    @property
    def text(self) -> str:
        return f"{self.subject_label} — {self.predicate_label} → {self.object_label}"


@dataclass(frozen=True)
class SourceRef:
    """Where a fact came from: a seed document and a section.

    People read ``display`` ("The Nine-Layer Model § Where other technologies fit"); ``document``
    (the seed's file name) and ``iri`` stay as identifiers for tools and links.
    """

    #: The seed document's file name: an identifier, never shown alone as a source.
    document: str
    section: str
    iri: str
    #: The document's title (dct:title); the file name when the graph gives none.
    title: str = ""
    #: A short name for the document (sg:shortName), for tight spaces; the title when none.
    short: str = ""

    @property
    def display(self) -> str:
        """ "title § section": how every surface cites a source."""
        return f"{self.title or self.document} § {self.section}"

    @property
    def short_display(self) -> str:
        """ "short name § section", for narrow places (TUI side panels)."""
        return f"{self.short or self.title or self.document} § {self.section}"

    def to_dict(self) -> dict[str, str]:
        data = asdict(self)
        data["title"] = self.title or self.document
        data["short"] = self.short or data["title"]
        data["display"] = self.display
        return data


@dataclass(frozen=True)
class PathEdge:
    """One hop of a path between two entities."""

    source: EntityRef
    predicate: str
    predicate_label: str
    target: EntityRef

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source.to_dict(),
            "predicate": self.predicate,
            "predicate_label": self.predicate_label,
            "target": self.target.to_dict(),
        }


@dataclass(frozen=True)
class Answer:
    """The engine's answer to one question, with the evidence behind it."""

    question: str
    #: True when the answer offers statements of the graph, asserted or hedged ("The closest the
    #: graph knows: ...", confidence at most 0.5); false when it declines and offers at most the
    #: names of the closest entities (``suggestions``).
    answered: bool
    answer: str
    intent: str
    #: 0-1; 0 for a declined answer, at most 0.5 for a hedged one.
    confidence: float
    entities: tuple[EntityRef, ...] = ()
    facts: tuple[Fact, ...] = ()
    sources: tuple[SourceRef, ...] = ()
    sparql: tuple[str, ...] = ()
    path: tuple[PathEdge, ...] = ()
    suggestions: tuple[EntityRef, ...] = ()
    #: Set when the question itself was unusable (empty, too long, not text): a one-line reason.
    error: str | None = None
    #: For a follow-up answered from an earlier turn: the name of what it was taken to be about.
    context: str | None = None

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "question": self.question,
            "answered": self.answered,
            "answer": self.answer,
            "intent": self.intent,
            "confidence": round(self.confidence, 3),
            "entities": [e.to_dict() for e in self.entities],
            "facts": [f.to_dict() for f in self.facts],
            "sources": [s.to_dict() for s in self.sources],
            "sparql": list(self.sparql),
            "path": [p.to_dict() for p in self.path],
            "suggestions": [s.to_dict() for s in self.suggestions],
        }
        if self.error:
            data["error"] = self.error
        if self.context:
            data["context"] = self.context
        return data


@dataclass(frozen=True)
class Edge:
    """An edge of an entity page: predicate plus the entity or literal at the other end."""

    predicate: str
    predicate_label: str
    #: The other end: an EntityRef for a resource, a plain string for a literal.
    value: EntityRef | str
    #: Extra detail of a qualified relation (the role of a placement, a stress level).
    qualifier: str | None = None
    #: The statement's basis: "stated", "inferred", "reconstructed" or "authored".
    basis: str = "stated"
    #: The sections the statement rests on (its own, not its subject's), in document order.
    sources: tuple[SourceRef, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        value = self.value.to_dict() if isinstance(self.value, EntityRef) else self.value
        data = {"predicate": self.predicate, "predicate_label": self.predicate_label, "value": value}
        if self.qualifier:
            data["qualifier"] = self.qualifier
        data["basis"] = self.basis
        data["source"] = self.sources[0].to_dict() if self.sources else None
        data["sources"] = [s.to_dict() for s in self.sources]
        return data


@dataclass(frozen=True)
class Placement:
    """That an entity fits a layer, in a role, and how sure the graph is of it."""

    layer: EntityRef
    role: str | None
    basis: str
    sources: tuple[SourceRef, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "layer": self.layer.to_dict(),
            "role": self.role,
            "basis": self.basis,
            "sources": [s.to_dict() for s in self.sources],
        }


@dataclass(frozen=True)
class EntityDescription:
    """Everything an entity page shows."""

    entity: EntityRef
    types: tuple[str, ...]
    definition: str | None
    alt_labels: tuple[str, ...]
    placements: tuple[Placement, ...]
    outgoing: tuple[Edge, ...]
    incoming: tuple[Edge, ...]
    sources: tuple[SourceRef, ...]
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "entity": self.entity.to_dict(),
            "types": list(self.types),
            "definition": self.definition,
            "alt_labels": list(self.alt_labels),
            "placements": [p.to_dict() for p in self.placements],
            "outgoing": [e.to_dict() for e in self.outgoing],
            "incoming": [e.to_dict() for e in self.incoming],
            "sources": [s.to_dict() for s in self.sources],
            "notes": list(self.notes),
        }


@dataclass(frozen=True)
class TriageState:
    """Where a walk through a triage tree stands after the answers given so far."""

    symptom: EntityRef
    #: The question to answer next, or None when the walk has reached a conclusion.
    question: str | None
    #: The answers that can be given to ``question`` (each a branch's answer text).
    options: tuple[str, ...]
    #: The answers taken so far, in order.
    taken: tuple[str, ...]
    #: Filled when the walk is done: the conclusion, owning layers, causes, diagnostics to run.
    conclusion: str | None = None
    layers: tuple[EntityRef, ...] = ()
    causes: tuple[EntityRef, ...] = ()
    #: Command lines the graph links to the conclusion, the symptom or its causes.
    diagnostics: tuple[str, ...] = ()
    action: str | None = None
    sources: tuple[SourceRef, ...] = ()
    #: The question of each step answered, beside ``taken`` (same length).
    asked: tuple[str, ...] = ()
    #: Metrics, logs, tools and settings to inspect (linked the same way; not command lines).
    look_at: tuple[str, ...] = ()
    #: Why the layers own it: the source's note on the conclusion or symptom, when it has one.
    reason: str | None = None

    @property
    def done(self) -> bool:
        return self.question is None

    def to_dict(self) -> dict[str, Any]:
        return {
            "symptom": self.symptom.to_dict(),
            "done": self.done,
            "question": self.question,
            "options": list(self.options),
            "taken": list(self.taken),
            "action": self.action,
            "conclusion": self.conclusion,
            "layers": [layer.to_dict() for layer in self.layers],
            "causes": [c.to_dict() for c in self.causes],
            "diagnostics": list(self.diagnostics),
            "sources": [s.to_dict() for s in self.sources],
            "asked": list(self.asked),
            "look_at": list(self.look_at),
            "reason": self.reason,
        }


@dataclass(frozen=True)
class LayerInfo:
    """One layer of one model, for lists and maps."""

    layer: EntityRef
    position: int
    runs_in: str | None = None
    members: tuple[EntityRef, ...] = field(default_factory=tuple)

    def to_dict(self) -> dict[str, Any]:
        return {
            "layer": self.layer.to_dict(),
            "position": self.position,
            "runs_in": self.runs_in,
            "members": [m.to_dict() for m in self.members],
        }


class UnknownEntity(LookupError):
    """A name that matches no entity; ``suggestions`` holds the closest ones."""

    def __init__(self, name: str, suggestions: tuple[EntityRef, ...] = ()) -> None:
        self.name = name
        self.suggestions = suggestions
        hint = ", ".join(s.display for s in suggestions[:5])
        super().__init__(f"no entity named {name!r}" + (f"; closest: {hint}" if hint else ""))


#: Longer names are refused before any matching: no entity's name comes near it, and fuzzy
#: matching a 100 KB name took 37 s.
MAX_NAME_CHARS: int = 300


class NameTooLong(UnknownEntity):
    """A name longer than ``MAX_NAME_CHARS``; an UnknownEntity, so every surface already reports it."""

    def __init__(self, name: str) -> None:
        super().__init__(name[:40])
        self.args = (f"name is {len(name):,} characters; the limit is {MAX_NAME_CHARS:,}",)

    def __str__(self) -> str:
        return str(self.args[0])
