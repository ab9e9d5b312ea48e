"""What is in the graph, counted: entities per class, sources, how sure the qualified facts are.

A handful of aggregate SPARQL queries (one round trip each, fast on Oxigraph and on a remote
endpoint alike), returned as one frozen value every surface can print or serialise.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import rdflib

from stackgraph.graph.store import PREFIXES

_PREFIX_DECL = "".join(f"PREFIX {prefix}: <{iri}>\n" for prefix, iri in PREFIXES.items())

_CLASSES = """
SELECT ?class (SAMPLE(?label) AS ?classLabel) (COUNT(DISTINCT ?entity) AS ?n) WHERE {
  ?entity a ?class .
  ?class rdfs:subClassOf* sg:Entity .
  OPTIONAL { ?class rdfs:label ?label }
} GROUP BY ?class
"""

_COUNTS = """
SELECT
  (COUNT(DISTINCT ?entity) AS ?entities)
  (COUNT(DISTINCT ?source) AS ?sources)
  (COUNT(DISTINCT ?section) AS ?sections)
  (COUNT(DISTINCT ?placement) AS ?placements)
  (COUNT(DISTINCT ?stress) AS ?stresses)
  (COUNT(DISTINCT ?statement) AS ?statements)
WHERE {
  { ?entity a/rdfs:subClassOf* sg:Entity }
  UNION { ?source a sg:Source }
  UNION { ?section a sg:SourceSection }
  UNION { ?placement a sg:Placement }
  UNION { ?stress a sg:Stress }
  UNION { ?statement a rdf:Statement }
}
"""

_TRIPLES = "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }"

_BASIS = """
SELECT ?basis (COUNT(*) AS ?n) WHERE { ?fact sg:basis ?basis } GROUP BY ?basis
"""

#: The values of sg:basis, always reported (with 0 when absent) in this order.
BASES = ("stated", "inferred", "reconstructed", "authored")


@dataclass(frozen=True)
class ClassCount:
    iri: str
    #: The class's rdfs:label ("technology"), or its local name when it has none.
    label: str
    count: int


@dataclass(frozen=True)
class GraphStats:
    triples: int
    #: Distinct nodes that are an sg:Entity or an instance of one of its subclasses.
    entities: int
    #: Per asserted class, largest first; an entity with two classes counts in both.
    classes: tuple[ClassCount, ...]
    sources: int
    sections: int
    placements: int
    stresses: int
    #: sg:basis of the qualified facts and statements: stated / inferred / reconstructed / authored
    #: (and any other value seen).
    basis: dict[str, int]
    #: rdf:Statement nodes: the triples that carry their own source and basis.
    statements: int = 0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self) | {"classes": [asdict(c) for c in self.classes]}


def _local(iri: str) -> str:
    return iri.rsplit("#", 1)[-1].rsplit("/", 1)[-1]


def _int(value: object) -> int:
    return int(value.toPython()) if isinstance(value, rdflib.Literal) else 0


def graph_stats(graph: rdflib.Graph) -> GraphStats:
    classes = [
        ClassCount(
            iri=str(row[0]),
            label=str(row[1]) if row[1] is not None else _local(str(row[0])),
            count=_int(row[2]),
        )
        for row in graph.query(_PREFIX_DECL + _CLASSES)
    ]
    classes.sort(key=lambda c: (-c.count, c.label))
    counts = next(iter(graph.query(_PREFIX_DECL + _COUNTS)))
    basis = dict.fromkeys(BASES, 0)
    for row in graph.query(_PREFIX_DECL + _BASIS):
        basis[_local(str(row[0]))] = _int(row[1])
    return GraphStats(
        triples=_int(next(iter(graph.query(_TRIPLES)))[0]),  # len() is not supported on a remote store
        entities=_int(counts[0]),
        classes=tuple(classes),
        sources=_int(counts[1]),
        sections=_int(counts[2]),
        placements=_int(counts[3]),
        stresses=_int(counts[4]),
        basis=basis,
        statements=_int(counts[5]),
    )
