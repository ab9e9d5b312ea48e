"""What the exporters need to know about the vocabulary, read once per graph.

The catalog knows entities; diagrams and pages also need the labels of predicates ("fits in"),
which predicates are symmetric (drawn once, not twice), the labels, ranks and symbols of stress
levels and bases, and, for every source section, its document's title (graph.sources). Four small SPARQL
queries fill this at first use; it is cached per catalog (so per engine).
"""

from __future__ import annotations

import re
import weakref
from collections.abc import Iterable
from dataclasses import dataclass, field

import rdflib
from rdflib.namespace import DCTERMS, RDF, RDFS, SKOS

from stackgraph.graph.catalog import PREFIX_DECL, Catalog, local_name
from stackgraph.graph.model import SourceRef
from stackgraph.graph.sources import read_sections
from stackgraph.graph.store import SG

_PREDICATE_QUERY = (
    PREFIX_DECL
    + """
SELECT ?p ?label WHERE {
  ?p rdfs:label ?label .
  { ?p a owl:ObjectProperty } UNION { ?p a owl:DatatypeProperty } UNION { ?p a rdf:Property }
}
"""
)
_SYMMETRIC_QUERY = PREFIX_DECL + "SELECT ?p WHERE { ?p a owl:SymmetricProperty }"
_INVERSE_QUERY = PREFIX_DECL + "SELECT ?p ?q WHERE { ?p owl:inverseOf ?q }"
_USED_PREDICATES_QUERY = "SELECT DISTINCT ?p WHERE { ?s ?p ?o }"
_VALUE_QUERY = (
    PREFIX_DECL
    + """
SELECT ?x ?label ?rank ?symbol WHERE {
  VALUES ?cls { sg:StressLevel sg:Basis }
  ?x a ?cls ; rdfs:label ?label .
  OPTIONAL { ?x sg:rank ?rank }
  OPTIONAL { ?x sg:symbol ?symbol }
}
"""
)

#: Predicates that say what a node is or where it comes from, never a relation to draw.
NON_RELATIONS = frozenset(
    {RDF.type, RDFS.label, SKOS.altLabel, SKOS.hiddenLabel, SKOS.prefLabel, DCTERMS.source, DCTERMS.isPartOf}
)
#: SKOS declares these symmetric (the store does no reasoning, so data states both directions).
SKOS_SYMMETRIC = frozenset(
    str(p) for p in (SKOS.exactMatch, SKOS.closeMatch, SKOS.relatedMatch, SKOS.related)
)
#: SKOS inverse pairs: a fact in the second direction is the first one read backwards.
SKOS_INVERSES = {str(SKOS.narrowMatch): str(SKOS.broadMatch), str(SKOS.narrower): str(SKOS.broader)}
#: Qualified relation -> the shortcut predicate it qualifies (drawn with the shortcut's label).
QUALIFIED = {SG.placement: SG.fitsIn, SG.stress: SG.stresses}


def is_qualified(predicate: rdflib.term.Node, obj: rdflib.term.Node) -> bool:
    """Whether ``obj`` is a qualified relation node to read through rather than an entity: the
    object of sg:placement or sg:stress (named, kg:placement-...), or a blank node (user files)."""
    return isinstance(obj, rdflib.BNode) or (predicate in QUALIFIED and isinstance(obj, rdflib.URIRef))


_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def humanize(iri: str) -> str:
    """ "broad match" for skos:broadMatch: a readable name for a predicate without a label."""
    name = local_name(iri).split(":", 1)[-1]
    return _CAMEL.sub(" ", name).replace("_", " ").lower()


@dataclass(eq=False)  # identity: caches key on it
class Vocab:
    """Labels and facts about the vocabulary terms, keyed by IRI string."""

    predicate_labels: dict[str, str] = field(default_factory=dict)
    symmetric: frozenset[str] = frozenset()
    #: predicate -> its inverse that is drawn instead (narrowMatch -> broadMatch).
    inverse_of: dict[str, str] = field(default_factory=dict)
    used_predicates: frozenset[str] = frozenset()
    sections: dict[str, SourceRef] = field(default_factory=dict)
    section_position: dict[str, int] = field(default_factory=dict)
    value_labels: dict[str, str] = field(default_factory=dict)
    value_rank: dict[str, int] = field(default_factory=dict)
    value_symbol: dict[str, str] = field(default_factory=dict)

    def predicate_label(self, iri: str | rdflib.term.Node) -> str:
        return self.predicate_labels.get(str(iri)) or humanize(str(iri))

    def value_label(self, iri: str | rdflib.term.Node) -> str:
        return self.value_labels.get(str(iri)) or humanize(str(iri))

    def sources_of(self, sections: Iterable[str | rdflib.term.Node]) -> list[SourceRef]:
        """The SourceRefs of these section IRIs (unknown ones skipped), in document order."""
        refs = {self.sections[str(s)] for s in sections if str(s) in self.sections}
        return sorted(refs, key=self.source_key)

    def source_key(self, ref: SourceRef) -> tuple:
        return (ref.document, self.section_position.get(ref.iri, 10**6), ref.section, ref.iri)


_CACHE: weakref.WeakKeyDictionary[Catalog, Vocab] = weakref.WeakKeyDictionary()


def vocab_for(catalog: Catalog) -> Vocab:
    """The Vocab of the catalog's graph, built on first use."""
    cached = _CACHE.get(catalog)
    if cached is None:
        cached = _CACHE[catalog] = _build(catalog.graph)
    return cached


def _build(graph: rdflib.Graph) -> Vocab:
    vocab = Vocab()
    for row in graph.query(_PREDICATE_QUERY):
        vocab.predicate_labels.setdefault(str(row.p), str(row.label))
    vocab.symmetric = frozenset(str(row.p) for row in graph.query(_SYMMETRIC_QUERY)) | SKOS_SYMMETRIC
    vocab.inverse_of = dict(SKOS_INVERSES)
    for row in graph.query(_INVERSE_QUERY):
        p, q = sorted((str(row.p), str(row.q)))
        vocab.inverse_of.setdefault(q, p)
    vocab.used_predicates = frozenset(str(row.p) for row in graph.query(_USED_PREDICATES_QUERY))
    vocab.sections, vocab.section_position = read_sections(graph)
    for row in graph.query(_VALUE_QUERY):
        iri = str(row.x)
        vocab.value_labels[iri] = str(row.label)
        if row.rank is not None:
            vocab.value_rank[iri] = int(row.rank)
        if row.symbol is not None:
            vocab.value_symbol[iri] = str(row.symbol)
    return vocab
