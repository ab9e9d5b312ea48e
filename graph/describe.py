"""Entity pages and layer lists: everything the graph says about one thing, grouped for reading."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rdflib import Literal, URIRef

from stackgraph.graph.answering.evidence import fetch, predicate_label
from stackgraph.graph.model import Edge, EntityDescription, EntityRef, LayerInfo, Placement, SourceRef
from stackgraph.graph.store import SG

if TYPE_CHECKING:
    from stackgraph.graph.engine import Engine

SKOS = "http://www.w3.org/2004/02/skos/core#"
RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
DCT_SOURCE = "http://purl.org/dc/terms/source"
#: Shown in their own fields, not as edges.
_OWN_FIELDS = {
    RDF_TYPE,
    DCT_SOURCE,
    "http://www.w3.org/2000/01/rdf-schema#label",
    SKOS + "altLabel",
    SKOS + "hiddenLabel",
    SKOS + "definition",
    str(SG.note),
    SKOS + "editorialNote",
}


def _source_refs(engine: Engine, sections: list) -> tuple[SourceRef, ...]:
    from stackgraph.graph.answering.evidence import _section_ref

    refs = [_section_ref(engine, str(s)) for s in sections]
    return tuple(r for r in refs if r is not None)


def describe(engine: Engine, iri: str) -> EntityDescription:
    catalog = engine.catalog
    rec = catalog.get(iri)
    facts = fetch(engine, iri)
    placements = []
    for q in facts.qualified.get(str(SG.placement), []):
        layer = q.one(SG.layer)
        if layer is None:
            continue
        basis = q.one(SG.basis)
        placements.append(
            Placement(
                layer=catalog.ref(layer),
                role=str(q.one(SG.role)) if q.one(SG.role) else None,
                basis=str(basis).rsplit("#", 1)[-1] if basis else "stated",
                sources=_source_refs(engine, q.all(URIRef(DCT_SOURCE))),
            )
        )
    # One placement per layer and role: the same fact stated in two sections cites both.
    merged: dict[tuple[str, str | None, str], Placement] = {}
    for p in placements:
        key = (p.layer.iri, p.role, p.basis)
        prior = merged.get(key)
        sources = tuple(dict.fromkeys((*prior.sources, *p.sources))) if prior else p.sources
        merged[key] = Placement(p.layer, p.role, p.basis, sources)
    placements = sorted(
        merged.values(),
        key=lambda p: (p.layer.model or "", engine.positions.get(p.layer.iri, 99), p.role or ""),
    )
    prov = engine.provenance
    # One read for the page: its own statements and those of everything pointing at it.
    prov.load(
        [
            iri,
            *(s for subjects in facts.inc.values() for s in subjects),
            *(s for pairs in facts.inc_qualified.values() for s, _ in pairs),
        ]
    )

    def edge(
        subject: str,
        predicate: str,
        obj: object,
        shown: EntityRef | str,
        qualifier: str | None = None,
        label: str | None = None,
    ) -> Edge:
        """An edge with its own statement's basis and sources (graph.provenance)."""
        found = prov.of(subject, predicate, str(obj))
        return Edge(
            predicate if label is None else label[0],
            label[1] if label else predicate_label(engine, predicate),
            shown,
            qualifier,
            found.basis,
            found.sources,
        )

    outgoing: list[Edge] = []
    for predicate, values in sorted(facts.out.items()):
        if predicate in _OWN_FIELDS:
            continue
        for value in values:
            shown = str(value) if isinstance(value, Literal) else catalog.ref(value)
            outgoing.append(edge(iri, predicate, value, shown))
    for predicate, nodes in sorted(facts.qualified.items()):
        if predicate == str(SG.placement):
            continue
        for q in nodes:
            layer = q.one(SG.layer)
            level = q.one(SG.level)
            if layer is not None:
                qualifier = str(level).rsplit("#", 1)[-1] if level is not None else None
                outgoing.append(edge(iri, predicate, layer, catalog.ref(layer), qualifier))
    incoming: list[Edge] = []
    for predicate, subjects in sorted(facts.inc.items()):
        if predicate in _OWN_FIELDS:
            continue
        for subject in sorted(subjects, key=lambda s: catalog.label(s).lower()):
            incoming.append(edge(subject, predicate, iri, catalog.ref(subject)))
    for predicate, pairs in sorted(facts.inc_qualified.items()):
        for subject, via in sorted(pairs):
            # Read through the qualified node: its basis and sources are the placement's or stress's.
            incoming.append(
                edge(
                    subject,
                    predicate,
                    iri,
                    catalog.ref(subject),
                    predicate_label(engine, predicate),
                    label=(via, predicate_label(engine, via)),
                )
            )
    outgoing.sort(
        key=lambda e: (e.predicate_label, e.value.label.lower() if not isinstance(e.value, str) else e.value)
    )
    return EntityDescription(
        entity=catalog.ref(iri),
        types=tuple(
            sorted(
                {catalog.most_specific_type(rec)}
                | {rec.type_labels.get(t, t.rsplit("#", 1)[-1]) for t in rec.types}
            )
        )
        if rec
        else (),
        definition=rec.definition if rec else None,
        alt_labels=tuple(sorted(rec.alt_labels | rec.hidden_labels)) if rec else (),
        placements=tuple(placements),
        outgoing=tuple(outgoing),
        incoming=tuple(incoming),
        sources=tuple(rec.sources) if rec else (),
        # Editorial notes (how the graph reads a seed's typo) are shown on the page, never matched
        # against questions: they say nothing about the stack.
        notes=tuple(facts.texts(SG.note)) + tuple(facts.texts(SKOS + "editorialNote")),
    )


def list_layers(engine: Engine, model: str | None = None) -> list[LayerInfo]:
    catalog = engine.catalog
    out = []
    for rec in catalog.layers(model):
        facts = fetch(engine, rec.iri)
        examples = facts.incoming(SG.exampleOf) or facts.incoming(SG.fitsIn)
        out.append(
            LayerInfo(
                layer=catalog.ref(rec.iri),
                position=engine.positions.get(rec.iri, 99),
                runs_in=facts.text(SG.runsIn),
                members=tuple(sorted((catalog.ref(m) for m in examples), key=lambda r: r.label.lower())),
            )
        )
    out.sort(key=lambda info: (info.layer.model or "", info.position))
    # The nine-layer model first: it is the one codes default to.
    out.sort(key=lambda info: 0 if info.layer.model and "nine" in info.layer.model.lower() else 1)
    return out
