"""A Markdown page for a subgraph: a Mermaid diagram, then the entities and the facts as tables,
each row citing its sources by number, then the numbered sources (document title and section).

Facts are read like the diagrams: a qualified relation is one row ("fits in (scale-up
interconnect)") citing the qualified node's own source; the shortcut it qualifies is not repeated,
and a symmetric relation appears once.
"""

from __future__ import annotations

from dataclasses import dataclass

import rdflib
from rdflib import Literal, URIRef
from rdflib.namespace import DCTERMS, RDF, RDFS, SKOS

from stackgraph.graph.catalog import Catalog, local_name
from stackgraph.graph.export import mdtext
from stackgraph.graph.export.mermaid import to_mermaid
from stackgraph.graph.export.subgraph import Subgraph
from stackgraph.graph.export.view import (
    Diagram,
    family_of,
    qualified_label,
    qualified_target,
    sources_of_node,
)
from stackgraph.graph.export.vocab import QUALIFIED, is_qualified, vocab_for
from stackgraph.graph.model import SourceRef
from stackgraph.graph.provenance import ProvenanceIndex, provenance_for
from stackgraph.graph.store import SG

#: Shown in the entity table, so not repeated as facts.
_ENTITY_COLUMNS = frozenset(
    {
        RDF.type,
        RDFS.label,
        SKOS.definition,
        SKOS.altLabel,
        SKOS.hiddenLabel,
        DCTERMS.source,
        SG.code,
        SG.position,
    }
)
#: Literal properties whose values are command lines or identifiers: shown as code.
_CODE_VALUES = frozenset({SG.commandText, SG.code})


@dataclass(frozen=True)
class FactRow:
    subject: str
    relation: str
    #: The object as Markdown (a name, escaped text or code).
    value: str
    sources: tuple[SourceRef, ...]


def fact_rows(sub: Subgraph, catalog: Catalog) -> list[FactRow]:
    """Every fact of the subgraph except names, types, definitions and sources, sorted."""
    graph, vocab = sub.graph, vocab_for(catalog)
    prov = provenance_for(catalog)
    prov.load(sub.nodes)
    nodes = set(sub.nodes)
    rows: list[tuple[tuple, FactRow]] = []
    seen_symmetric: set[tuple[str, str, str]] = set()
    inverse_facts: dict[URIRef, set[tuple[URIRef, URIRef]]] = {}
    for s, p, o in graph.triples((None, None, None)):
        if isinstance(s, URIRef) and isinstance(o, URIRef):
            inverse_facts.setdefault(s, set()).add((p, o))
    for s in sub.nodes:
        subject = URIRef(s)
        own = tuple(sources_of_node(sub, catalog, s))
        qualified_targets = {
            (QUALIFIED[p], qualified_target(graph, o))
            for p, o in graph.predicate_objects(subject)
            if p in QUALIFIED and is_qualified(p, o)
        }
        for p, o in graph.predicate_objects(subject):
            if p in _ENTITY_COLUMNS:
                continue
            if is_qualified(p, o):
                target = qualified_target(graph, o)
                relation = qualified_label(graph, vocab, p, o)
                value = mdtext.md(catalog.display(target)) if target is not None else ""
                refs = tuple(vocab.sources_of(graph.objects(o, DCTERMS.source)))
            elif isinstance(o, Literal):
                relation = vocab.predicate_label(p)
                value = mdtext.code(o) if p in _CODE_VALUES else mdtext.md(o)
                refs = _cited(prov, s, p, o, own)
            else:
                if (p, o) in qualified_targets:
                    continue
                inverse = vocab.inverse_of.get(str(p))
                if inverse is not None and (URIRef(inverse), subject) in inverse_facts.get(o, set()):
                    continue
                if str(p) in vocab.symmetric:
                    key = (min(s, str(o)), str(p), max(s, str(o)))
                    if key in seen_symmetric:
                        continue
                    seen_symmetric.add(key)
                relation = vocab.predicate_label(p)
                name = catalog.display(o) if str(o) in nodes or str(o) in catalog else vocab.value_label(o)
                value = mdtext.md(name)
                refs = _cited(prov, s, p, o, own)
            row = FactRow(subject=catalog.display(s), relation=relation, value=value, sources=refs)
            rows.append(((row.subject.casefold(), s, relation, value), row))
    return [row for _, row in sorted(rows, key=lambda item: item[0])]


def _cited(prov: ProvenanceIndex, s: str, p: URIRef, o: rdflib.term.Node, own: tuple) -> tuple:
    """The statement's own sections when the graph has a statement node for it, else the subject's."""
    found = prov.of(s, str(p), str(o))
    return own if found.fallback else found.sources


def page_sources(sub: Subgraph, catalog: Catalog, facts: list[FactRow]) -> list[SourceRef]:
    vocab = vocab_for(catalog)
    refs = {ref for iri in sub.nodes for ref in sources_of_node(sub, catalog, iri)}
    refs |= {ref for fact in facts for ref in fact.sources}
    return sorted(refs, key=vocab.source_key)


def to_markdown(sub: Subgraph, catalog: Catalog, diagram: Diagram) -> str:
    facts = fact_rows(sub, catalog)
    sources = page_sources(sub, catalog, facts)
    numbering = {ref: i for i, ref in enumerate(sources, start=1)}
    seeds = ", ".join(mdtext.md(catalog.display(s)) for s in sub.seeds)
    hops = "hop" if sub.depth == 1 else "hops"
    out = [f"# {mdtext.md(diagram.title)}\n"]
    if sub.origin.get("sparql"):
        out.append(
            f"The result of a SPARQL CONSTRUCT query: {len(sub.nodes)} entities, {len(facts)} facts.\n"
        )
        out.append(f"```sparql\n{str(sub.origin['sparql']).strip()}\n```\n")
        if sub.origin.get("truncated"):
            out.append(
                "> **Truncated:** the query built more triples than the SPARQL row cap lets through.\n"
            )
    else:
        out.append(
            f"The knowledge graph around {seeds}, {sub.depth} {hops} out: "
            f"{len(sub.nodes)} entities, {len(facts)} facts.\n"
        )
    if diagram.note:
        out.append(f"> **Left out:** {mdtext.md(diagram.note)}.\n")
    out.append(mdtext.mermaid_block(to_mermaid(diagram)))
    entity_rows = []
    for iri in sorted(sub.nodes, key=lambda i: (catalog.display(i).casefold(), i)):
        rec = catalog.get(iri)
        name = f"**{mdtext.md(catalog.display(iri))}** {mdtext.code(local_name(iri))}"
        kind = catalog.most_specific_type(rec) if rec else family_of(catalog, iri).label
        aka = ", ".join(mdtext.md(a) for a in sorted(rec.alt_labels)) if rec else ""
        definition = mdtext.md(rec.definition) if rec and rec.definition else ""
        refs = mdtext.cite(sources_of_node(sub, catalog, iri), numbering)
        entity_rows.append([name, mdtext.md(kind), aka, definition, refs])
    out.append("## Entities\n")
    out.append(mdtext.table(["Entity", "Type", "Also called", "Definition", "Sources"], entity_rows))
    out.append("## Facts\n")
    if facts:
        rows = [
            [mdtext.md(f.subject), mdtext.md(f.relation), f.value, mdtext.cite(f.sources, numbering)]
            for f in facts
        ]
        out.append(mdtext.table(["Subject", "Relation", "Object", "Sources"], rows))
    else:
        out.append("No facts between these entities.\n")
    out.append("## Sources\n")
    out.append(mdtext.numbered_sources(sources))
    return "\n".join(out)
