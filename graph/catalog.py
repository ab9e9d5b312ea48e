"""The catalog: every entity's label, types, alternative labels and layer code, read once.

One SPARQL query at start-up fills it (oxrdflib is fast per query and slow per API call), and then
linking, describing and rendering look names up in memory. Layers carry their code and model so
that every surface can say "L8 Node Interconnect" without another query.
"""

from __future__ import annotations

import re
import unicodedata
from collections import defaultdict
from collections.abc import Collection, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

import rdflib
from rdflib.plugins.stores.sparqlstore import SPARQLStore

from stackgraph.graph.model import EntityRef, SourceRef
from stackgraph.graph.sources import read_sections
from stackgraph.graph.store import KG, PREFIXES, SG, oxigraph_of

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
    punctuation other than in-word dots, dashes, slashes and plus signs dropped, codes in the
    plural said once ("429s" is 429), single spaces."""
    text = unicodedata.normalize("NFKC", text).lower()
    text = text.replace("’", "'").replace("–", "-").replace("—", "-").replace("&", " and ")
    text = _CODES.sub(r"\1", text)
    return " ".join(_WORD.findall(text))


#: A status or error code said in the plural ("getting 429s", "502s and 504s"): the code itself.
_CODES = re.compile(r"\b(\d{3})s\b")


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

    def __init__(
        self,
        graph: rdflib.Graph,
        records: dict[str, EntityRecord] | None = None,
        parents: dict[str, set[str]] | None = None,
    ) -> None:
        """Read the catalog from ``graph`` (or take ``records`` and ``parents`` read before)."""
        self.graph = graph
        self._closure: dict[str, frozenset[str]] = {}
        #: EntityRef by IRI (without a score): answers ask for the same few dozen on every question.
        self._refs: dict[str, EntityRef] = {}
        #: Every source section by IRI, cited "title § section" (see graph.sources); one small query,
        #: read even when the records come from a cache.
        self.sections, self.section_positions = read_sections(graph)
        if records is not None and parents is not None:
            self.records = records
            self._parents = defaultdict(set, parents)
            return
        self.records = {}
        self._parents = defaultdict(set)
        for c, sup in _rows(graph, _SUBCLASS_QUERY, ("c", "super")):
            self._parents[c].add(sup)
        if isinstance(graph.store, SPARQLStore):  # a remote store (graph/remote.py)
            self.records = dict(sorted(_remote_records(graph, self.sections).items()))
            return
        columns = (
            "e",
            "label",
            "type",
            "typeLabel",
            "alt",
            "hidden",
            "code",
            "model",
            "modelLabel",
            "definition",
        )
        for iri, label, type_, type_label, alt, hidden, code, model, model_label, definition in _rows(
            graph, _ENTITY_QUERY, columns
        ):
            rec = self.records.get(iri)
            if rec is None:
                rec = self.records[iri] = EntityRecord(iri=iri, label=label)
            rec.types.add(type_)
            if type_label is not None:
                rec.type_labels[type_] = type_label
            if alt is not None:
                rec.alt_labels.add(alt)
            if hidden is not None:
                rec.hidden_labels.add(hidden)
            if code is not None:
                rec.code = code
            if model is not None:
                rec.model, rec.model_label = model, model_label
            if definition is not None and (
                rec.definition is None
                or (len(definition), definition) > (len(rec.definition), rec.definition)
            ):
                rec.definition = definition  # the fullest definition, ties broken by text
        for subject, section in _rows(graph, _SOURCE_QUERY, ("s", "section")):
            rec = self.records.get(subject)
            ref = self.sections.get(section)
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

    def _ancestors(self, cls: str) -> frozenset[str]:
        """The class's superclasses; computed once per class (linking asks for every entity)."""
        found = self._closure.get(cls)
        if found is None:
            seen: set[str] = set()
            stack = [cls]
            while stack:
                for parent in self._parents.get(stack.pop(), ()):
                    if parent not in seen:
                        seen.add(parent)
                        stack.append(parent)
            found = self._closure[cls] = frozenset(seen)
        return found

    def is_a(self, iri: str, cls: rdflib.URIRef | str) -> bool:
        rec = self.records.get(str(iri))
        if rec is None:
            return False
        cls = str(cls)
        return any(t == cls or cls in self._ancestors(t) for t in rec.types)

    def ref(self, iri: str | rdflib.term.Node, score: float | None = None) -> EntityRef:
        """An EntityRef for any IRI; unknown IRIs get their local name as label."""
        key = str(iri)
        found = self._refs.get(key)
        if found is None:
            rec = self.records.get(key)
            if rec is None:
                return EntityRef(iri=key, label=local_name(key), type="resource", score=score)
            found = self._refs[key] = EntityRef(
                iri=rec.iri,
                label=rec.label,
                type=self.most_specific_type(rec),
                code=rec.code,
                model=rec.model_label,
            )
        return found if score is None else replace(found, score=score)

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


#: Catalogs of more entities than this are cached on disk by content (the built-in graph's ~3k
#: are read faster from the store than from a file).
CACHE_MIN_RECORDS = 20_000
_CACHE_FORMAT = 1


def _cache_path(content_hash: str) -> Path:
    from stackgraph.graph.cachefiles import cache_root

    return cache_root() / "catalogs" / f"{content_hash}-{_CACHE_FORMAT}.pickle"


def _cache_header(content_hash: str) -> dict:
    return {"cache": "catalog", "format": _CACHE_FORMAT, "content_hash": content_hash}


def load_catalog(graph: rdflib.Graph, content_hash: str) -> Catalog:
    """The catalog for ``graph``, read from its cache when one was written for this content.

    The cache is a pickle read by a restricted unpickler (only the catalog's own record classes and
    plain containers): 100k records load in about a second, where JSON took three. A cache that is
    empty, torn, or written for other content is rebuilt with a one-line message.
    """
    from stackgraph.graph.cachefiles import log, paused_gc, read_pickle, write_pickle_later

    path = _cache_path(content_hash)
    if path.is_file():
        try:
            records, parents = read_pickle(path, _cache_header(content_hash), (EntityRecord, SourceRef))
            if not isinstance(records, dict) or not isinstance(parents, dict):
                raise ValueError("not a catalog")
            return Catalog(graph, records=records, parents=parents)
        except (OSError, ValueError) as error:
            log(f"catalog cache {path.name} unusable ({' '.join(str(error).split())[:100]}); rebuilding it")
    with paused_gc():  # 100k records of sets and dicts: the collector would walk them again and again
        catalog = Catalog(graph)
    if len(catalog.records) >= CACHE_MIN_RECORDS:
        payload = (catalog.records, dict(catalog._parents))
        write_pickle_later(path, _cache_header(content_hash), payload, "catalog")
    return catalog


def _rows(graph: rdflib.Graph, query: str, columns: tuple[str, ...]) -> Iterator[tuple[str | None, ...]]:
    """The rows of a SELECT as plain strings (None for unbound).

    On the embedded store this asks pyoxigraph directly: oxrdflib turns every cell into an rdflib
    term first, which was most of a 100k-entity catalog's 190 s. Elsewhere (a remote store), rdflib.
    """
    view = oxigraph_of(graph)
    if view is not None:
        solutions = view.store.query(query, **view.query_options)
        # By position: a lookup by name costs as much again as evaluating the query (100k rows).
        where = [[v.value for v in solutions.variables].index(c) for c in columns]
        for solution in solutions:
            yield tuple(None if (term := solution[i]) is None else term.value for i in where)
        return
    for row in graph.query(query):
        yield tuple(None if (term := row[c]) is None else str(term) for c in columns)


#: On a remote store the one-query catalog is split into plain patterns: a server evaluating the
#: seven OPTIONALs over RocksDB took 12.5 s at 1.1M triples, these take about a second together.
_REMOTE_TYPES = PREFIX_DECL + "SELECT ?e ?type WHERE { ?type rdfs:subClassOf* sg:Entity . ?e a ?type }"
_REMOTE_LABELS = PREFIX_DECL + "SELECT ?e ?label WHERE { ?e rdfs:label ?label }"
#: One plain pattern per property: a VALUES join of all six took 2.8 s at 1.1M triples.
_REMOTE_FACTS = tuple(
    (name, PREFIX_DECL + f"SELECT ?e ?v WHERE {{ ?e {name} ?v }}")
    for name in (
        "skos:altLabel",
        "skos:hiddenLabel",
        "sg:code",
        "sg:inModel",
        "skos:definition",
        "dct:source",
    )
)


def _only(query: str, iris: Collection[str]) -> str:
    """``query`` (one of the remote catalog reads, over ``?e``) restricted to ``iris``."""
    values = "VALUES ?e { " + " ".join(f"<{iri}>" for iri in sorted(iris)) + " } "
    return query.replace("WHERE { ", "WHERE { " + values, 1)


def _remote_records(
    graph: rdflib.Graph, sections: dict[str, SourceRef], iris: Collection[str] | None = None
) -> dict[str, EntityRecord]:
    """The records of :data:`_ENTITY_QUERY` and :data:`_SOURCE_QUERY`, read from a remote store as
    plain SELECTs in CSV (graph/remote.py), sent together and joined here; the same records as the
    embedded path (tests/test_remote_store.py compares them). ``sections`` are the graph's source
    sections (graph.sources), so that a citation carries its document's title here too.

    With ``iris``, only those entities' records (graph/remote_catalog.py reads a store's entities
    as questions name them); the labels of their classes and models come in one more query.
    """
    from concurrent.futures import ThreadPoolExecutor

    from stackgraph.graph.remote import select_csv

    queries: tuple[str, ...] = (_REMOTE_LABELS, _REMOTE_TYPES, *(query for _name, query in _REMOTE_FACTS))
    if iris is not None:
        if not iris:
            return {}
        queries = tuple(_only(query, iris) for query in queries)
    # The four reads at once: each is mostly waiting on the server, which evaluates them in parallel.
    with ThreadPoolExecutor(max_workers=4) as pool:
        label_rows, type_rows, *fact_columns = pool.map(lambda query: list(select_csv(graph, query)), queries)
    if iris is not None:  # the classes' and models' labels, which the restricted reads left out
        named = {row[1] for row in type_rows} | {
            value
            for (name, _query), column in zip(_REMOTE_FACTS, fact_columns, strict=True)
            if name == "sg:inModel"
            for _iri, value in column
        }
        if named:
            label_rows += list(select_csv(graph, _only(_REMOTE_LABELS, named)))
    fact_rows = [
        (name, iri, value)
        for (name, _query), column in zip(_REMOTE_FACTS, fact_columns, strict=True)
        for iri, value in column
    ]
    labels: dict[str, str] = {}
    for iri, label in label_rows:
        if iri not in labels or label < labels[iri]:  # one label by the shapes; the least if several
            labels[iri] = label
    records: dict[str, EntityRecord] = {}
    for iri, type_ in type_rows:
        label = labels.get(iri)
        if label is None:  # the embedded query requires a label too
            continue
        rec = records.get(iri)
        if rec is None:
            rec = records[iri] = EntityRecord(iri=iri, label=label)
        rec.types.add(type_)
        if type_ in labels:
            rec.type_labels[type_] = labels[type_]
    cited: list[tuple[EntityRecord, SourceRef]] = []
    for predicate, iri, value in fact_rows:
        rec = records.get(iri)
        if rec is None:
            continue
        name = predicate.split(":", 1)[1]
        if name == "altLabel":
            rec.alt_labels.add(value)
        elif name == "hiddenLabel":
            rec.hidden_labels.add(value)
        elif name == "code":
            rec.code = value if rec.code is None else min(rec.code, value)
        elif name == "inModel":
            if value in labels:
                rec.model, rec.model_label = value, labels[value]
        elif name == "definition":
            if rec.definition is None or (len(value), value) > (len(rec.definition), rec.definition):
                rec.definition = value
        elif name == "source" and value in sections:
            cited.append((rec, sections[value]))
    for rec, ref in cited:
        if ref not in rec.sources:
            rec.sources.append(ref)
    for rec in records.values():
        rec.sources.sort(key=lambda s: s.iri)
    return records


def local_name(iri: str) -> str:
    for prefix, base in PREFIXES.items():
        if iri.startswith(base):
            return f"{prefix}:{iri[len(base) :]}"
    return iri.rsplit("/", 1)[-1].rsplit("#", 1)[-1] or iri


__all__ = ["Catalog", "EntityRecord", "load_catalog", "KG", "PREFIX_DECL", "local_name", "normalize"]
