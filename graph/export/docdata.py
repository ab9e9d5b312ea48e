"""Everything the docs site shows, read from the graph in three queries and indexed in memory.

Pages need, for hundreds of entities, their literal facts, their links in both directions and
their qualified relations (placements, stresses). Oxigraph answers a few wide queries much faster
than thousands of per-triple calls, so the site is built from:

1. every non-blank triple whose subject is an entity (facts and outgoing links; incoming links are
   the same rows read backwards);
2. every qualified relation (subject, predicate, layer, role, level, basis, sources);
3. the vocabulary (vocab.Vocab) and the catalog, which are already loaded.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from rdflib import Literal, URIRef

from stackgraph.graph.catalog import PREFIX_DECL, Catalog
from stackgraph.graph.export.vocab import Vocab, vocab_for
from stackgraph.graph.model import SourceRef
from stackgraph.graph.store import KG, SG

_FACT_QUERY = """
SELECT ?s ?p ?o WHERE {
  VALUES ?s { %s }
  ?s ?p ?o .
  FILTER(!isBlank(?o) && ?p NOT IN (<https://w3id.org/stackgraph/ns#placement>, <https://w3id.org/stackgraph/ns#stress>))
}
"""

_QUALIFIED_QUERY = (
    PREFIX_DECL
    + """
SELECT ?s ?p ?b ?layer ?role ?level ?basis ?src WHERE {
  VALUES ?p { sg:placement sg:stress }
  ?s ?p ?b .
  ?b sg:layer ?layer .
  OPTIONAL { ?b sg:role ?role }
  OPTIONAL { ?b sg:level ?level }
  OPTIONAL { ?b sg:basis ?basis }
  OPTIONAL { ?b dct:source ?src }
}
"""
)

#: The two layer models, in the order the index shows them.
MODELS = (str(KG["nine-layer-model"]), str(KG["eight-layer-map"]))


@dataclass(frozen=True)
class Qualified:
    """A placement or a stress: subject -> layer, with role or level, basis and sources."""

    subject: str
    kind: str  # "placement" or "stress"
    layer: str
    role: str | None
    level: str | None
    basis: str | None
    sources: tuple[SourceRef, ...]


@dataclass
class SiteData:
    catalog: Catalog
    vocab: Vocab
    #: subject -> predicate -> objects (IRIs as str, literals as Literal), in a stable order.
    out: dict[str, dict[str, list[str | Literal]]] = field(default_factory=dict)
    #: object -> predicate -> subjects (entities only).
    incoming: dict[str, dict[str, list[str]]] = field(default_factory=dict)
    qualified: list[Qualified] = field(default_factory=list)

    # ------------------------------------------------------------------ reading

    def values(self, iri: str, predicate: URIRef | str) -> list[str | Literal]:
        return self.out.get(iri, {}).get(str(predicate), [])

    def texts(self, iri: str, predicate: URIRef | str) -> list[str]:
        return [str(v) for v in self.values(iri, predicate) if isinstance(v, Literal)]

    def links(self, iri: str, predicate: URIRef | str) -> list[str]:
        """Entity objects of ``predicate``, ordered by position then label."""
        found = [v for v in self.values(iri, predicate) if isinstance(v, str) and v in self.catalog]
        return self.ordered(found)

    def linked_from(self, iri: str, predicate: URIRef | str) -> list[str]:
        return self.ordered(self.incoming.get(iri, {}).get(str(predicate), []))

    def first_text(self, iri: str, predicate: URIRef | str) -> str | None:
        texts = self.texts(iri, predicate)
        return texts[0] if texts else None

    def position(self, iri: str) -> int:
        texts = self.texts(iri, SG.position)
        try:
            return int(texts[0]) if texts else 10**6
        except ValueError:
            return 10**6

    def ordered(self, iris: list[str]) -> list[str]:
        unique = dict.fromkeys(iris)
        return sorted(unique, key=lambda i: (self.position(i), self.catalog.label(i).casefold(), i))

    def of_type(self, cls: URIRef | str) -> list[str]:
        return self.ordered([iri for iri in self.catalog.records if self.catalog.is_a(iri, cls)])

    def layers(self, model: str) -> list[str]:
        """The layers of one model in position order (code order when positions are missing)."""
        found = [r.iri for r in self.catalog.layers() if r.model == model]
        return sorted(found, key=lambda i: (self.position(i), _code_key(self.catalog.get(i).code or ""), i))

    def sources(self, iri: str) -> list[SourceRef]:
        rec = self.catalog.get(iri)
        return list(rec.sources) if rec else []

    def qualified_for(
        self, *, subject: str | None = None, layer: str | None = None, kind: str
    ) -> list[Qualified]:
        found = [
            q
            for q in self.qualified
            if q.kind == kind
            and (subject is None or q.subject == subject)
            and (layer is None or q.layer == layer)
        ]
        return sorted(
            found,
            key=lambda q: (
                self.position(q.layer),
                q.layer,
                self.catalog.label(q.subject).casefold(),
                q.subject,
                q.role or "",
            ),
        )


def _code_key(code: str) -> tuple:
    digits = "".join(ch for ch in code if ch.isdigit())
    return (0, int(digits), code) if digits else (1, 0, code)


def load(catalog: Catalog) -> SiteData:
    graph = catalog.graph
    data = SiteData(catalog=catalog, vocab=vocab_for(catalog))
    iris = sorted(catalog.records)
    out: dict[str, dict[str, list]] = defaultdict(lambda: defaultdict(list))
    incoming: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    rows = []
    for start in range(0, len(iris), 400):  # keep each query a reasonable size
        chunk = iris[start : start + 400]
        rows.extend(graph.query(_FACT_QUERY % " ".join(f"<{i}>" for i in chunk)))
    for row in sorted(rows, key=lambda r: (str(r.s), str(r.p), str(r.o))):
        s, p, o = str(row.s), str(row.p), row.o
        if isinstance(o, Literal):
            out[s][p].append(
                Literal(str(o), lang=o.language)
                if o.datatype is None or str(o.datatype).endswith("#string")
                else o
            )
        else:
            out[s][p].append(str(o))
            if str(o) in catalog:
                incoming[str(o)][p].append(s)
    data.out = {s: dict(ps) for s, ps in out.items()}
    data.incoming = {o: dict(ps) for o, ps in incoming.items()}

    grouped: dict[tuple[str, str, str], dict] = {}
    for row in graph.query(_QUALIFIED_QUERY):
        key = (str(row.s), str(row.p), str(row.b))
        entry = grouped.setdefault(
            key,
            {
                "layer": str(row.layer),
                "role": str(row.role) if row.role is not None else None,
                "level": str(row.level) if row.level is not None else None,
                "basis": str(row.basis) if row.basis is not None else None,
                "sources": set(),
            },
        )
        if row.src is not None:
            entry["sources"].add(str(row.src))
    qualified = {
        Qualified(
            subject=s,
            kind="placement" if p == str(SG.placement) else "stress",
            layer=entry["layer"],
            role=entry["role"],
            level=entry["level"],
            basis=entry["basis"],
            sources=tuple(data.vocab.sources_of(entry["sources"])),
        )
        for (s, p, _), entry in grouped.items()
    }
    data.qualified = sorted(
        qualified, key=lambda q: (q.subject, q.kind, q.layer, q.role or "", q.level or "", q.basis or "")
    )
    return data
