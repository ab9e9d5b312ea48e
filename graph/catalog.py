"""The catalog: every entity's label, types, alternative labels and layer code, read once.

One SPARQL query at start-up fills it (oxrdflib is fast per query and slow per API call), and then
linking, describing and rendering look names up in memory. Layers carry their code and model so
that every surface can say "L8 Node Interconnect" without another query.
"""

from __future__ import annotations

import re
import unicodedata
from collections import defaultdict
from dataclasses import dataclass, field

import rdflib

from stackgraph.graph.model import EntityRef, SourceRef
from stackgraph.graph.sources import read_sections
from stackgraph.graph.store import KG, PREFIXES, SG

PREFIX_DECL = "".join(f"PREFIX {p}: <{iri}>\n" for p, iri in PREFIXES.items())

_ENTITY_QUERY = (
    PREFIX_DECL
    + """
SELECT ?e ?label ?type ?typeLabel ?alt ?hidden ?code ?model ?modelLabel ?definition WHERE {
  ?e a ?type ; rdfs:label ?label .
  ?type rdfs:subClassOf* sg:Entity .
  OPTIONAL { ?type rdfs:label ?typeLabel }
  OPTIONAL { ?e skos:altLabel ?alt }
  OPTIONAL { ?e skos:hiddenLabel ?hidden }
  OPTIONAL { ?e sg:code ?code }
  OPTIONAL { ?e sg:inModel ?model . ?model rdfs:label ?modelLabel }
  OPTIONAL { ?e skos:definition ?definition }
}
"""
)

# Entities only (they have labels): statement and qualified nodes cite sections too, thousands of
# rows the catalog would read and drop (40 ms of a cold start).
_SOURCE_QUERY = (
    PREFIX_DECL
    + """
SELECT DISTINCT ?s ?section WHERE {
  ?s dct:source ?section ; rdfs:label [] .
  ?section dct:isPartOf ?doc .
}
"""
)

_SUBCLASS_QUERY = (
    PREFIX_DECL
    + """
SELECT ?c ?super WHERE { ?c rdfs:subClassOf ?super . ?super rdfs:subClassOf* sg:Entity }
"""
)

_WORD = re.compile(r"[a-z0-9]+(?:[._/+-][a-z0-9]+)*")


def normalize(text: str) -> str:
    """Fold a label or a question to the form names are matched in: lower case, ASCII quotes,
    punctuation other than in-word dots, dashes, slashes and plus signs dropped, single spaces."""
    text = unicodedata.normalize("NFKC", text).lower()
    text = text.replace("’", "'").replace("–", "-").replace("—", "-").replace("&", " and ")
    return " ".join(_WORD.findall(text))


@dataclass
class EntityRecord:
    """What the catalog knows of one entity."""

    iri: str
    label: str
    types: set[str] = field(default_factory=set)
    type_labels: dict[str, str] = field(default_factory=dict)
    alt_labels: set[str] = field(default_factory=set)
    hidden_labels: set[str] = field(default_factory=set)
    code: str | None = None
    model: str | None = None
    model_label: str | None = None
    definition: str | None = None
    sources: list[SourceRef] = field(default_factory=list)


class Catalog:
    """In-memory index of the graph's entities."""

    def __init__(self, graph: rdflib.Graph) -> None:
        self.graph = graph
        self.records: dict[str, EntityRecord] = {}
        self._parents: dict[str, set[str]] = defaultdict(set)
        for row in graph.query(_SUBCLASS_QUERY):
            self._parents[str(row.c)].add(str(row.super))
        for row in graph.query(_ENTITY_QUERY):
            iri = str(row.e)
            rec = self.records.get(iri)
            if rec is None:
                rec = self.records[iri] = EntityRecord(iri=iri, label=str(row.label))
            rec.types.add(str(row.type))
            if row.typeLabel is not None:
                rec.type_labels[str(row.type)] = str(row.typeLabel)
            if row.alt is not None:
                rec.alt_labels.add(str(row.alt))
            if row.hidden is not None:
                rec.hidden_labels.add(str(row.hidden))
            if row.code is not None:
                rec.code = str(row.code)
            if row.model is not None:
                rec.model, rec.model_label = str(row.model), str(row.modelLabel)
            if row.definition is not None and (
                rec.definition is None
                or (len(str(row.definition)), str(row.definition)) > (len(rec.definition), rec.definition)
            ):
                rec.definition = str(row.definition)  # the fullest definition, ties broken by text
        #: Every source section by IRI, cited "title § section" (see graph.sources).
        self.sections, self.section_positions = read_sections(graph)
        for row in graph.query(_SOURCE_QUERY):
            rec = self.records.get(str(row.s))
            ref = self.sections.get(str(row.section))
            if rec is not None and ref is not None and ref not in rec.sources:
                rec.sources.append(ref)
        for rec in self.records.values():
            rec.sources.sort(key=lambda s: s.iri)
        # Row order differs between stores; a sorted catalog keeps ties (and so answers) stable.
        self.records = dict(sorted(self.records.items()))

    # ------------------------------------------------------------------ lookups

    def __contains__(self, iri: object) -> bool:
        return str(iri) in self.records

    def get(self, iri: str | rdflib.term.Node) -> EntityRecord | None:
        return self.records.get(str(iri))

    def most_specific_type(self, rec: EntityRecord) -> str:
        """The label of the entity's most specific class ("command" rather than "diagnostic")."""
        types = rec.types
        specific = [t for t in types if not any(t in self._ancestors(o) for o in types if o != t)]
        specific.sort(key=lambda t: (-len(self._ancestors(t)), t))
        chosen = specific[0] if specific else next(iter(types))
        return rec.type_labels.get(chosen) or chosen.rsplit("#", 1)[-1]

    def _ancestors(self, cls: str) -> set[str]:
        seen: set[str] = set()
        stack = [cls]
        while stack:
            for parent in self._parents.get(stack.pop(), ()):
                if parent not in seen:
                    seen.add(parent)
                    stack.append(parent)
        return seen

    def is_a(self, iri: str, cls: rdflib.URIRef | str) -> bool:
        rec = self.records.get(str(iri))
        if rec is None:
            return False
        cls = str(cls)
        return any(t == cls or cls in self._ancestors(t) for t in rec.types)

    def ref(self, iri: str | rdflib.term.Node, score: float | None = None) -> EntityRef:
        """An EntityRef for any IRI; unknown IRIs get their local name as label."""
        rec = self.records.get(str(iri))
        if rec is None:
            return EntityRef(iri=str(iri), label=local_name(str(iri)), type="resource", score=score)
        return EntityRef(
            iri=rec.iri,
            label=rec.label,
            type=self.most_specific_type(rec),
            code=rec.code,
            model=rec.model_label,
            score=score,
        )

    def label(self, iri: str | rdflib.term.Node) -> str:
        rec = self.records.get(str(iri))
        return rec.label if rec else local_name(str(iri))

    def display(self, iri: str | rdflib.term.Node) -> str:
        """ "L8 Node Interconnect" for a layer, the label otherwise."""
        return self.ref(iri).display

    def layers(self, model: str | None = None) -> list[EntityRecord]:
        layer_cls = str(SG.Layer)
        found = [r for r in self.records.values() if r.code and self.is_a(r.iri, layer_cls)]
        if model:
            found = [r for r in found if r.model == model]
        return found

    def all_labels(self, rec: EntityRecord) -> list[str]:
        return [rec.label, *sorted(rec.alt_labels), *sorted(rec.hidden_labels)]


def local_name(iri: str) -> str:
    for prefix, base in PREFIXES.items():
        if iri.startswith(base):
            return f"{prefix}:{iri[len(base) :]}"
    return iri.rsplit("/", 1)[-1].rsplit("#", 1)[-1] or iri


__all__ = ["Catalog", "EntityRecord", "KG", "PREFIX_DECL", "local_name", "normalize"]
