"""Reading an entity's facts from the graph, and keeping the evidence an answer rests on.

Each entity is read with two SPARQL queries (its outgoing edges with the qualified blank nodes
behind them, and its incoming edges), cached per engine since the graph does not change while an
engine lives. Answerers then pick facts from that record and hand every fact they use to an
``Evidence``, which becomes the answer's ``facts``, ``sources`` and ``sparql``.
"""

from __future__ import annotations

import functools
from collections import defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import rdflib
from rdflib import BNode, Literal, URIRef

from stackgraph.graph.catalog import PREFIX_DECL
from stackgraph.graph.lexical import terms
from stackgraph.graph.model import EntityRef, Fact, SourceRef
from stackgraph.graph.store import SG

if TYPE_CHECKING:
    from stackgraph.graph.engine import Engine

DCT_SOURCE = "http://purl.org/dc/terms/source"
#: Predicates whose objects are qualified relation nodes (named kg:placement-..., kg:stress-...), read
#: through; a blank node anywhere is read the same way (a user's file may still use them).
_QUALIFIED = frozenset({str(SG.placement), str(SG.stress)})

OUTGOING = (
    PREFIX_DECL
    + """SELECT ?p ?o ?qp ?qo WHERE {
  <$e> ?p ?o .
  OPTIONAL { FILTER(isBlank(?o) || ?p IN (sg:placement, sg:stress)) ?o ?qp ?qo }
}"""
)

INCOMING = (
    PREFIX_DECL
    + """SELECT ?s ?p ?via WHERE {
  { ?s ?p <$e> . FILTER(!isBlank(?s) && ?p NOT IN (sg:layer, rdf:subject, rdf:object)) }
  UNION
  { ?b ?via <$e> . ?s ?p ?b . FILTER(isBlank(?b) || ?p IN (sg:placement, sg:stress)) }
}"""
)


@dataclass
class Qualified:
    """A qualified relation node (a placement, a stress): its properties."""

    props: dict[str, list[rdflib.term.Node]]

    def one(self, prop: URIRef | str) -> rdflib.term.Node | None:
        values = self.props.get(str(prop))
        return values[0] if values else None

    def all(self, prop: URIRef | str) -> list[rdflib.term.Node]:
        return self.props.get(str(prop), [])


@dataclass
class EntityFacts:
    """The edges around one entity."""

    iri: str
    out: dict[str, list[rdflib.term.Node]] = field(default_factory=lambda: defaultdict(list))
    qualified: dict[str, list[Qualified]] = field(default_factory=lambda: defaultdict(list))
    inc: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    #: Incoming through a qualified node: predicate-to-node -> [(subject, predicate-from-node)].
    inc_qualified: dict[str, list[tuple[str, str]]] = field(default_factory=lambda: defaultdict(list))
    queries: tuple[str, ...] = ()

    def values(self, prop: URIRef | str) -> list[rdflib.term.Node]:
        return self.out.get(str(prop), [])

    def iris(self, prop: URIRef | str) -> list[str]:
        return [str(v) for v in self.values(prop) if isinstance(v, URIRef)]

    def texts(self, prop: URIRef | str) -> list[str]:
        return [str(v) for v in self.values(prop) if isinstance(v, Literal)]

    def text(self, prop: URIRef | str) -> str | None:
        found = self.texts(prop)
        return found[0] if found else None

    def incoming(self, prop: URIRef | str) -> list[str]:
        return self.inc.get(str(prop), [])

    def iris_by_edge(self, *props: URIRef) -> dict[str, URIRef]:
        """Each IRI the props reach, once, with the first prop that reaches it: what a recorded
        fact must name, since a triage branch suggests a cause where a symptom has a likely one."""
        found: dict[str, URIRef] = {}
        for prop in props:
            for iri in self.iris(prop):
                found.setdefault(iri, prop)
        return found


def fetch(engine: Engine, iri: str) -> EntityFacts:
    """The entity's edges, read once per engine."""
    cache = engine.facts_cache
    found = cache.get(iri)
    if found is not None:
        return found
    out_q = OUTGOING.replace("$e", iri)
    inc_q = INCOMING.replace("$e", iri)
    facts = EntityFacts(iri=iri, queries=(out_q, inc_q))
    blanks: dict[str, dict[str, list[rdflib.term.Node]]] = {}
    for row in engine.graph.query(out_q):
        p, o = str(row.p), row.o
        if isinstance(o, BNode) or p in _QUALIFIED:
            props = blanks.get(str(o))
            if props is None:
                props = blanks[str(o)] = defaultdict(list)
                facts.qualified[p].append(Qualified(props))
            if row.qp is not None and row.qo not in props[str(row.qp)]:
                props[str(row.qp)].append(row.qo)
        elif o not in facts.out[p]:
            facts.out[p].append(o)
    for row in engine.graph.query(inc_q):
        s, p = str(row.s), str(row.p)
        if row.via is not None:
            pair = (s, str(row.via))
            if pair not in facts.inc_qualified[p]:
                facts.inc_qualified[p].append(pair)
        elif s not in facts.inc[p]:
            facts.inc[p].append(s)
    # Stores return rows in their own order; sort so that answers are the same on every store.
    for values in facts.out.values():
        values.sort(key=lambda v: (isinstance(v, Literal), str(v)))
    for subjects in facts.inc.values():
        subjects.sort()
    for pairs in facts.inc_qualified.values():
        pairs.sort()
    for node in blanks.values():
        for values in node.values():
            values.sort(key=str)
    for entries in facts.qualified.values():
        # Ties (two placements in one layer and role, from different sources) by all their values:
        # the in-memory store and RocksDB return blank nodes in different orders.
        entries.sort(
            key=lambda q: (
                str(q.one(SG.layer) or ""),
                str(q.one(SG.role) or ""),
                sorted((p, [str(v) for v in vs]) for p, vs in q.props.items()),
            )
        )
    cache[iri] = facts
    return facts


class Evidence:
    """Collects what an answer used: entities, facts, sources and queries, without duplicates."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.catalog = engine.catalog
        self.entities: list[EntityRef] = []
        self.facts: list[Fact] = []
        self.sources: list[SourceRef] = []
        #: The sections of the entities used, cited only when no fact has a source (see cited()).
        self.entity_sources: list[SourceRef] = []
        self.sparql: list[str] = []

    def entity(self, iri: str) -> EntityRef:
        ref = self.catalog.ref(iri)
        if all(e.iri != ref.iri for e in self.entities):
            self.entities.append(ref)
        rec = self.catalog.get(iri)
        for source in rec.sources if rec else []:
            if source not in self.entity_sources:
                self.entity_sources.append(source)
        return ref

    def cited(self, facts: list[Fact] | None = None) -> list[SourceRef]:
        """The sources an answer cites: those its answerer named, then each fact's own sections
        (of ``facts``, the ones the answer kept, or else of all it used). An entity's other
        sections (a layer's, cited for everything it holds) are cited only when the answer used
        no fact that has a source of its own."""
        cited = list(self.sources)
        for fact in self.facts if facts is None else facts:
            for source in fact.sources:
                if source not in cited:
                    cited.append(source)
        return cited or list(self.entity_sources)

    def inferred(self) -> list[Fact]:
        """The facts used that the seeds do not state (our reading): the answer must say so."""
        return [f for f in self.facts if f.basis == "inferred"]

    def source(self, source: SourceRef) -> None:
        if source not in self.sources:
            self.sources.append(source)

    def source_iri(self, section: rdflib.term.Node | str | None) -> None:
        if section is None:
            return
        ref = _section_ref(self.engine, str(section))
        if ref:
            self.source(ref)

    def queries(self, facts: EntityFacts) -> None:
        for query in facts.queries:
            if query not in self.sparql:
                self.sparql.append(query)

    def fact(
        self, subject: str, predicate: URIRef | str, obj: rdflib.term.Node | str, obj_label: str | None = None
    ) -> None:
        predicate = str(predicate)
        if isinstance(obj, Literal) or (isinstance(obj, str) and not obj.startswith("http")):
            object_label = obj_label or str(obj)
            obj_text = str(obj)
        else:
            obj_text = str(obj)
            object_label = obj_label or self.catalog.display(obj_text)
        prov = self.engine.provenance.of(subject, predicate, obj_text)
        fact = Fact(
            subject=subject,
            predicate=predicate,
            object=obj_text,
            subject_label=self.catalog.display(subject),
            predicate_label=predicate_label(self.engine, predicate),
            object_label=object_label,
            basis=prov.basis,
            source=prov.source,
            sources=prov.sources,
        )
        if fact not in self.facts:
            self.facts.append(fact)


def predicate_label(engine: Engine, predicate: str) -> str:
    labels = engine.predicate_labels
    if not labels:
        query = (
            PREFIX_DECL
            # The property types first: started from every rdfs:label, it took 1.3 s at 100k entities.
            + "SELECT ?p ?l WHERE { VALUES ?t { owl:ObjectProperty owl:DatatypeProperty rdf:Property } ?p a ?t ; rdfs:label ?l }"
        )
        for row in engine.graph.query(query):
            labels[str(row.p)] = str(row.l)
    return labels.get(predicate) or predicate.rsplit("#", 1)[-1].rsplit("/", 1)[-1]


@functools.lru_cache(maxsize=4)
def relation_words(engine: Engine) -> frozenset[str]:
    """The stems of the words naming the graph's relations between entities ("deploy" of
    "deploys", "implement" of "implements"): the verbs a question uses to ask what stands in one
    of them to something."""
    query = PREFIX_DECL + "SELECT ?l WHERE { ?p a owl:ObjectProperty ; rdfs:label ?l }"
    return frozenset(t for row in engine.graph.query(query) for t in terms(str(row.l)))


def _section_ref(engine: Engine, section: str) -> SourceRef | None:
    return engine.catalog.sections.get(section)
