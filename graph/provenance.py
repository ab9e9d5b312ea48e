"""Statement provenance: for a triple (s, p, o), the section it rests on and how sure the graph is.

The data files say each fact once as a plain triple; ``ontology/data/statements.ttl`` adds an
``rdf:Statement`` per relation triple (RDF 1.1 reification) with ``dct:source`` and ``sg:basis``.
They are read per subject, the first time an answer or a page needs one of its statements (two
small queries, cached): reading all of them up front cost a cold ``ask`` 0.2 s for the few facts
an answer uses.

A triple without a statement node (a user's file that gives none, a label) falls back to what its
subject cites and to ``stated``, so every fact a surface shows still has a basis and a source; the
``fallback`` flag says so.
"""

from __future__ import annotations

import re
import threading
import weakref
from collections.abc import Iterable
from dataclasses import dataclass

import rdflib

from stackgraph.graph.catalog import PREFIX_DECL, Catalog
from stackgraph.graph.model import SourceRef

STATEMENT_QUERY = (
    PREFIX_DECL
    + """
SELECT ?st ?s ?p ?o ?basis ?src WHERE {
  VALUES ?s { $subjects }
  ?st rdf:subject ?s ; a rdf:Statement ; rdf:predicate ?p ; rdf:object ?o .
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
  VALUES ?s { $subjects }
  VALUES ?p { sg:placement sg:stress }
  ?s ?p ?q . ?q sg:layer ?o .
  OPTIONAL { ?q sg:basis ?basis }
  OPTIONAL { ?q dct:source ?src }
}
"""
)

#: IRIs that can be written into a query as <...> (anything else is looked up as having none).
_SAFE_IRI = re.compile(r'[^\s<>"{}|^`\\]+')

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
    """The statement nodes of a graph, keyed by (subject, predicate, object) strings, read per subject."""

    def __init__(self, graph: rdflib.Graph, catalog: Catalog) -> None:
        self.graph = graph
        self.catalog = catalog
        self._by_triple: dict[tuple[str, str, str], Provenance] = {}
        self._loaded: set[str] = set()
        self._lock = threading.Lock()

    def of(self, subject: str, predicate: str, obj: rdflib.term.Node | str) -> Provenance:
        """The statement's provenance; for a triple with no statement node, the subject's own
        sources and the default basis (``fallback`` is then true)."""
        subject = str(subject)
        if subject not in self._loaded:
            self.load([subject])
        found = self._by_triple.get((subject, str(predicate), str(obj)))
        if found is not None:
            return found
        rec = self.catalog.get(subject)
        return Provenance(DEFAULT_BASIS, tuple(rec.sources) if rec else ())

    def load(self, subjects: Iterable[str]) -> None:
        """Read the statements of these subjects (one pair of queries for all of them)."""
        wanted = sorted({str(s) for s in subjects} - self._loaded)
        wanted = [s for s in wanted if _SAFE_IRI.fullmatch(s)]
        if not wanted:
            return
        values = " ".join(f"<{s}>" for s in wanted)
        found: dict[tuple[str, str, str], tuple[str, set[str], set[str]]] = {}
        for template, node in ((STATEMENT_QUERY, "st"), (QUALIFIED_QUERY, "q")):
            for row in self.graph.query(template.replace("$subjects", values)):
                key = (str(row.s), str(row.p), str(row.o))
                _, bases, sections = found.setdefault(key, (str(row[node]), set(), set()))
                if row.basis is not None:
                    bases.add(str(row.basis).rsplit("#", 1)[-1])
                if row.src is not None:
                    sections.add(str(row.src))
        with self._lock:
            for key, (st, bases, sections) in found.items():
                basis = min(bases, key=_rank) if bases else DEFAULT_BASIS
                self._by_triple[key] = Provenance(basis, self._refs(sections), st)
            self._loaded.update(wanted)

    def _refs(self, sections: set[str]) -> tuple[SourceRef, ...]:
        refs = [self.catalog.sections[s] for s in sections if s in self.catalog.sections]
        positions = self.catalog.section_positions
        return tuple(sorted(refs, key=lambda r: (r.document, positions.get(r.iri, 10**6), r.iri)))


_BY_CATALOG: weakref.WeakKeyDictionary[Catalog, ProvenanceIndex] = weakref.WeakKeyDictionary()


def provenance_for(catalog: Catalog) -> ProvenanceIndex:
    """The ProvenanceIndex of a catalog's graph, for surfaces that hold a catalog, not an engine
    (the exporters)."""
    found = _BY_CATALOG.get(catalog)
    if found is None:
        found = _BY_CATALOG[catalog] = ProvenanceIndex(catalog.graph, catalog)
    return found


def _rank(basis: str) -> int:
    return _BASIS_ORDER.index(basis) if basis in _BASIS_ORDER else len(_BASIS_ORDER)


__all__ = ["DEFAULT_BASIS", "STATEMENT_QUERY", "Provenance", "ProvenanceIndex", "provenance_for"]
