"""``vocabulary.md``: the ``sg:`` vocabulary documented from ontology/vocabulary.ttl, as pyLODE does.

One section per class (label, comment, superclasses, subclasses, the properties whose domain or
range it is, how many entities the graph has of it) and one per property (kind, label, comment,
domain, range, inverse, super-properties). Each term has an anchor named by its local name
(``vocabulary.md#Layer``, ``vocabulary.md#fitsIn``), so other pages can link a term.
"""

from __future__ import annotations

from collections import defaultdict

import rdflib
from rdflib.namespace import OWL, RDF, RDFS

from stackgraph.graph.catalog import local_name
from stackgraph.graph.export import mdtext
from stackgraph.graph.export.docsite import Page, Site
from stackgraph.graph.store import SG

PATH = "vocabulary.md"
_PROPERTY_KINDS = (
    (OWL.ObjectProperty, "object property"),
    (OWL.DatatypeProperty, "datatype property"),
    (OWL.AnnotationProperty, "annotation property"),
    (RDF.Property, "property"),
)


def term_anchor(iri: str) -> str:
    return iri.rsplit("#", 1)[-1] if iri.startswith(str(SG)) else local_name(iri).replace(":", "-")


def _terms(graph: rdflib.Graph, kind: rdflib.URIRef) -> list[str]:
    return sorted({str(t) for t in graph.subjects(RDF.type, kind) if str(t).startswith(str(SG))})


def vocabulary_page(site: Site) -> Page:
    graph = site.catalog.graph
    page = Page(path=PATH, title="The sg: vocabulary", show_sources=False)
    page.add("# The `sg:` vocabulary\n")
    page.add(
        f"Every class and property of `{SG}` (prefix `sg:`), read from `ontology/vocabulary.ttl`. "
        "Facts also use SKOS (labels, definitions, mappings), DCTERMS (`dct:source`, `dct:isPartOf`) "
        f"and RDFS/OWL. Back to the {mdtext.link('index', 'index.md')}.\n"
    )
    classes = _terms(graph, OWL.Class) or _terms(graph, RDFS.Class)
    properties: dict[str, str] = {}
    for kind, name in _PROPERTY_KINDS:
        for term in _terms(graph, kind):
            properties.setdefault(term, name)
    by_domain: dict[str, list[str]] = defaultdict(list)
    by_range: dict[str, list[str]] = defaultdict(list)
    for term in properties:
        for domain in graph.objects(rdflib.URIRef(term), RDFS.domain):
            by_domain[str(domain)].append(term)
        for rng in graph.objects(rdflib.URIRef(term), RDFS.range):
            by_range[str(rng)].append(term)

    page.add(f"**{len(classes)} classes:** " + ", ".join(_ref(c) for c in classes) + "\n")
    page.add(f"**{len(properties)} properties:** " + ", ".join(_ref(p) for p in sorted(properties)) + "\n")
    page.add("## Classes\n")
    for cls in classes:
        node = rdflib.URIRef(cls)
        page.add(f'<a id="{term_anchor(cls)}"></a>\n\n### {mdtext.md(local_name(cls))}\n')
        rows = [["IRI", mdtext.code(cls)], ["Label", mdtext.md(_label(graph, node))]]
        comment = graph.value(node, RDFS.comment)
        if comment:
            rows.append(["Description", mdtext.md(comment)])
        supers = sorted(str(s) for s in graph.objects(node, RDFS.subClassOf) if isinstance(s, rdflib.URIRef))
        subs = sorted(str(s) for s in graph.subjects(RDFS.subClassOf, node) if str(s).startswith(str(SG)))
        if supers:
            rows.append(["Subclass of", ", ".join(_ref(s) for s in supers)])
        if subs:
            rows.append(["Superclass of", ", ".join(_ref(s) for s in subs)])
        if by_domain.get(cls):
            rows.append(["In the domain of", ", ".join(_ref(p) for p in sorted(by_domain[cls]))])
        if by_range.get(cls):
            rows.append(["In the range of", ", ".join(_ref(p) for p in sorted(by_range[cls]))])
        count = len(site.data.of_type(cls))
        rows.append(["Entities in the graph", str(count)])
        page.add(mdtext.table(["", ""], rows))
    page.add("## Properties\n")
    for prop in sorted(properties):
        node = rdflib.URIRef(prop)
        page.add(f'<a id="{term_anchor(prop)}"></a>\n\n### {mdtext.md(local_name(prop))}\n')
        rows = [
            ["IRI", mdtext.code(prop)],
            ["Kind", properties[prop]],
            ["Label", mdtext.md(_label(graph, node))],
        ]
        comment = graph.value(node, RDFS.comment)
        if comment:
            rows.append(["Description", mdtext.md(comment)])
        for name, predicate in (
            ("Domain", RDFS.domain),
            ("Range", RDFS.range),
            ("Sub-property of", RDFS.subPropertyOf),
            ("Inverse of", OWL.inverseOf),
        ):
            values = sorted(str(v) for v in graph.objects(node, predicate))
            if values:
                rows.append([name, ", ".join(_ref(v) for v in values)])
        symmetric = (node, RDF.type, OWL.SymmetricProperty) in graph
        if symmetric:
            rows.append(["Characteristics", "symmetric"])
        page.add(mdtext.table(["", ""], rows))
    return page


def _label(graph: rdflib.Graph, node: rdflib.URIRef) -> str:
    return str(graph.value(node, RDFS.label) or local_name(str(node)))


def _ref(iri: str) -> str:
    """A term as a link to its section when it is ours, else as its prefixed name."""
    name = local_name(iri)
    if iri.startswith(str(SG)):
        return mdtext.link(name, f"{PATH}#{term_anchor(iri)}")
    return mdtext.code(name)


__all__ = ["PATH", "term_anchor", "vocabulary_page"]
