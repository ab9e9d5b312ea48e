"""Statement provenance: for a triple (s, p, o), the section it rests on and how sure the graph is.

The data files say each fact once as a plain triple; ``ontology/data/statements.ttl`` adds an
``rdf:Statement`` per relation triple (RDF 1.1 reification) with ``dct:source`` and ``sg:basis``.
One SPARQL query reads them all the first time an engine needs one (a few thousand rows, tens of
milliseconds), and answers and entity pages then look statements up in memory.

A triple without a statement node (a user's file that gives none, a label) falls back to what its
subject cites and to ``stated``, so every fact a surface shows still has a basis and a source; the
``fallback`` flag says so.
"""

from __future__ import annotations

from dataclasses import dataclass

import rdflib

from stackgraph.graph.catalog import PREFIX_DECL, Catalog
from stackgraph.graph.model import SourceRef

STATEMENT_QUERY = (
    PREFIX_DECL
    + """
SELECT ?st ?s ?p ?o ?basis ?src WHERE {
  ?st a rdf:Statement ; rdf:subject ?s ; rdf:predicate ?p ; rdf:object ?o .
  OPTIONAL { ?st sg:basis ?basis }
  OPTIONAL { ?st dct:source ?src }
}
"""
)

#: Placements and stresses carry their own basis and sources on their named node; a fact an answer
#: takes from one is keyed (subject, sg:placement or sg:stress, layer).
QUALIFIED_QUERY = (
    PREFIX_DECL
    + """
SELECT ?q ?s ?p ?o ?basis ?src WHERE {
  VALUES ?p { sg:placement sg:stress }
  ?s ?p ?q . ?q sg:layer ?o .
  OPTIONAL { ?q sg:basis ?basis }
  OPTIONAL { ?q dct:source ?src }
}
"""
)

#: The basis of a triple no statement node describes.
DEFAULT_BASIS = "stated"
#: How strongly each basis binds, strongest first: a fact stated in one section and inferred in
#: another is stated.
_BASIS_ORDER = ("stated", "reconstructed", "inferred", "authored")


@dataclass(frozen=True)
class Provenance:
    """Where one statement comes from."""

    #: "stated", "inferred", "reconstructed" or "authored".
    basis: str
    #: The sections it rests on, in document order; the first is the one to cite.
    sources: tuple[SourceRef, ...]
    #: The rdf:Statement node's IRI, or None when this is the subject's sources by default.
    statement: str | None = None

    @property
    def fallback(self) -> bool:
        return self.statement is None

    @property
    def source(self) -> SourceRef | None:
        return self.sources[0] if self.sources else None


class ProvenanceIndex:
    """Every statement node of a graph, keyed by its (subject, predicate, object) strings."""

    def __init__(self, graph: rdflib.Graph, catalog: Catalog) -> None:
        self.catalog = catalog
        found: dict[tuple[str, str, str], tuple[str, set[str], set[str]]] = {}
        rows = [*graph.query(STATEMENT_QUERY), *graph.query(QUALIFIED_QUERY)]
        for row in rows:
            key = (str(row.s), str(row.p), str(row.o))
            node = row.st if "st" in row.labels else row.q
            st, bases, sections = found.setdefault(key, (str(node), set(), set()))
            if row.basis is not None:
                bases.add(str(row.basis).rsplit("#", 1)[-1])
            if row.src is not None:
                sections.add(str(row.src))
        self._by_triple: dict[tuple[str, str, str], Provenance] = {}
        for key, (st, bases, sections) in found.items():
            basis = min(bases, key=_rank) if bases else DEFAULT_BASIS
            self._by_triple[key] = Provenance(basis, self._refs(sections), st)

    def __len__(self) -> int:
        return len(self._by_triple)

    def of(self, subject: str, predicate: str, obj: rdflib.term.Node | str) -> Provenance:
        """The statement's provenance; for a triple with no statement node, the subject's own
        sources and the default basis (``fallback`` is then true)."""
        found = self._by_triple.get((str(subject), str(predicate), str(obj)))
        if found is not None:
            return found
        rec = self.catalog.get(subject)
        return Provenance(DEFAULT_BASIS, tuple(rec.sources) if rec else ())

    def _refs(self, sections: set[str]) -> tuple[SourceRef, ...]:
        refs = [self.catalog.sections[s] for s in sections if s in self.catalog.sections]
        positions = self.catalog.section_positions
        return tuple(sorted(refs, key=lambda r: (r.document, positions.get(r.iri, 10**6), r.iri)))


def _rank(basis: str) -> int:
    return _BASIS_ORDER.index(basis) if basis in _BASIS_ORDER else len(_BASIS_ORDER)


__all__ = ["DEFAULT_BASIS", "STATEMENT_QUERY", "Provenance", "ProvenanceIndex"]
