"""The page of any entity that has no page of its own kind (technologies, causes, practices,
commands, tools, metrics, parameters ...), and the index page of each kind.

An entity page reads the entity's own facts from the graph, nothing hand-written: what it is, where
it is placed (with role and basis), every other relation both ways (linked), its literal facts, a
diagram of its neighbourhood, and where to get the data (Turtle) or query it (SPARQL endpoint).
"""

from __future__ import annotations

from typing import Any

from rdflib import Literal
from rdflib.namespace import DCTERMS, RDF, RDFS, SKOS

from stackgraph.graph.export import mdtext
from stackgraph.graph.export.docpages import (
    SPARQL_ENDPOINT,
    _basis_text,
    diagram,
    entity_list,
    header,
    merged,
)
from stackgraph.graph.export.docsite import Page, Site
from stackgraph.graph.store import SG

#: Predicates a page shows in its header or never (names, types, provenance, qualified nodes).
_NOT_LISTED = {
    str(p)
    for p in (
        RDF.type,
        RDFS.label,
        SKOS.prefLabel,
        SKOS.altLabel,
        SKOS.hiddenLabel,
        SKOS.definition,
        RDFS.comment,
        DCTERMS.source,
        SG.placement,
        SG.stress,
        SG.fitsIn,
    )
}
#: Every relation of the entity in the diagram (None: all predicates).
_DIAGRAM_PREDICATES: tuple[str, ...] = ()


def entity_page(engine: Any, site: Site, iri: str) -> Page:
    data, catalog = site.data, site.catalog
    page = Page(path=site.pages[iri], title=catalog.display(iri), iri=iri)
    header(site, page, iri)

    placements = merged(data.qualified_for(subject=iri, kind="placement"))
    placed = {q.layer for q in placements}
    unqualified = [layer for layer in data.links(iri, SG.fitsIn) if layer not in placed]
    if placements or unqualified:
        page.add("## Where it fits\n")
        rows = [
            [
                site.link(q.layer, page.path),
                mdtext.md(q.role or ""),
                _basis_text(site, q),
                page.cite(q.sources),
            ]
            for q in placements
        ]
        rows += [[site.link(layer, page.path), "", "", page.cite(data.sources(iri))] for layer in unqualified]
        page.add(
            mdtext.table(*mdtext.without_empty_columns(["Layer", "Role", "Basis", "Sources"], _unique(rows)))
        )

    vocab, own = data.vocab, data.sources(iri)
    facts, links = [], []
    for predicate, values in sorted(
        data.out.get(iri, {}).items(), key=lambda kv: vocab.predicate_label(kv[0])
    ):
        if predicate in _NOT_LISTED:
            continue
        name = mdtext.md(vocab.predicate_label(predicate))
        texts = [str(v) for v in values if isinstance(v, Literal)]
        entities = data.links(iri, predicate)
        if texts:
            facts.append([name, "<br>".join(mdtext.md(t) for t in texts), page.cite(own)])
        if entities:
            links.append([name, ", ".join(site.link(e, page.path) for e in entities), page.cite(own)])
    if facts:
        page.add("## Facts\n")
        page.add(mdtext.table(["Property", "Value", "Sources"], facts))
    if links:
        page.add("## Related\n")
        page.add(mdtext.table(["Relation", "Entities", "Sources"], links))
    incoming = []
    for predicate, subjects in sorted(
        data.incoming.get(iri, {}).items(), key=lambda kv: vocab.predicate_label(kv[0])
    ):
        if predicate in _NOT_LISTED or predicate == str(SG.fitsIn) and catalog.is_a(iri, SG.Layer):
            continue
        names = ", ".join(site.link(s, page.path) for s in data.ordered(subjects))
        incoming.append([f"{names}", f"*{mdtext.md(vocab.predicate_label(predicate))}* this"])
    if incoming:
        page.add("## Referred to by\n")
        page.add(mdtext.table(["Entities", "Relation"], incoming))
    diagram(engine, page, [iri], _DIAGRAM_PREDICATES, title=catalog.display(iri))
    return page


def _unique(rows: list[list[str]]) -> list[list[str]]:
    return list({tuple(row): row for row in rows}.values())


def kind_index_page(site: Site, folder: str, title: str, iris: list[str]) -> Page:
    """``<folder>/index.md``: every entity of one kind, with its definition."""
    page = Page(path=f"{folder}/index.md", title=title)
    page.add(f"# {mdtext.md(title)}\n")
    page.add(f"{len(iris)} in the graph. {mdtext.link('Index', '../index.md')}.\n")
    page.add(entity_list(site, page, iris))
    return page


__all__ = ["SPARQL_ENDPOINT", "entity_page", "kind_index_page"]
