"""Source sections as people read them: document title, short name and section label.

One SPARQL query reads every section once; the catalog, the answerers and the exports all build
their ``SourceRef`` values here, so that every surface cites "title § section" the same way and the
file name stays an identifier only.
"""

from __future__ import annotations

import rdflib

from stackgraph.graph.model import SourceRef
from stackgraph.graph.store import PREFIXES

_PREFIX_DECL = "".join(f"PREFIX {p}: <{iri}>\n" for p, iri in PREFIXES.items())

SECTION_QUERY = (
    _PREFIX_DECL
    + """
SELECT ?section ?label ?file ?title ?docLabel ?short ?position WHERE {
  ?section dct:isPartOf ?doc ; rdfs:label ?label .
  ?doc sg:fileName ?file .
  OPTIONAL { ?doc dct:title ?title }
  OPTIONAL { ?doc rdfs:label ?docLabel }
  OPTIONAL { ?doc sg:shortName ?short }
  OPTIONAL { ?section sg:position ?position }
}
"""
)


def read_sections(graph: rdflib.Graph) -> tuple[dict[str, SourceRef], dict[str, int]]:
    """Every source section of the graph as a SourceRef, and each section's position in its document.

    A document without a dct:title is cited by its rdfs:label, and failing that by its file name,
    so that a user's graph that lacks titles still cites something.
    """
    refs: dict[str, SourceRef] = {}
    positions: dict[str, int] = {}
    for row in graph.query(SECTION_QUERY):
        iri = str(row.section)
        if iri in refs:
            continue
        title = next(str(t) for t in (row.title, row.docLabel, row.file) if t is not None)
        refs[iri] = SourceRef(
            document=str(row.file),
            section=str(row.label),
            iri=iri,
            title=title,
            short=str(row.short) if row.short is not None else title,
        )
        if row.position is not None:
            positions[iri] = int(row.position)
    return refs, positions


__all__ = ["SECTION_QUERY", "read_sections"]
