"""The catalog of a pushed remote store, without copying it: built-in part local, the rest on demand.

Reading a 1.1M-triple store's whole catalog at start took 12 s at 100k entities, and every start
grew with the store. But a store filled by ``stackgraph push`` holds the built-in graph, which is
known here already: the push manifest (graph/push.py) says which built-in content was pushed and
which built-in entities the user files add facts to. So, when the manifest's built-in hash is this
installation's:

- at start, the built-in entities' records come from the local Turtle (as for the embedded
  store), those the user files touch are read from the store (one restricted read), and the
  class tree and source sections are read whole (small);
- the whole-graph indexes (lexical, passages, embeddings) are built from the local built-in
  graph (:attr:`OverlayCatalog.index_graph`): they do not grow with the store either;
- before each question, :meth:`OverlayCatalog.discover` asks the store for entities whose labels
  are phrases of the question (exact literals in a few spellings: an indexed lookup, about 10 ms
  at 1.1M triples, where a case-folding scan of every label took 1.1 s), reads their records and
  adds them; what was looked up is remembered, so asking again costs nothing.

Every other query (an entity's facts, its placements, SPARQL) still goes to the store.
What this gives up against a full read: user entities are found by their exact names in a few
spellings (as typed, lower/upper/title case, singular/plural), not by close spellings or meaning,
and the lists of every entity of a class hold only the entities found so far.
"""

from __future__ import annotations

import re
import threading
from itertools import product

import rdflib

from stackgraph.graph.catalog import Catalog, EntityRecord, _remote_records
from stackgraph.graph.remote import select_csv
from stackgraph.graph.store import PREFIXES, LoadedGraph, load_graph

#: Longest phrase (in words) looked up as a name; the built-in graph's longest labels are shorter.
MAX_PHRASE_WORDS = 8
#: Literals per lookup query (a question rarely needs more than a few hundred).
LOOKUP_CHUNK = 1500
#: Words of a text looked up as names: a question is shorter; a pasted log is not, and its
#: spellings grow with it (about 100 literals a word), so only its beginning is looked up.
MAX_LOOKUP_WORDS = 64

_TOKEN_EDGE = re.compile(r"^[\"'“”‘’(\[{<,;:!?.]+|[\"'“”‘’)\]}>,;:!?.]+$")

_SUBCLASS_QUERY = (
    f"PREFIX rdfs: <{PREFIXES['rdfs']}> PREFIX sg: <{PREFIXES['sg']}> "
    "SELECT ?c ?super WHERE { ?c rdfs:subClassOf ?super . ?super rdfs:subClassOf* sg:Entity }"
)
_LOOKUP_QUERY = (
    f"PREFIX rdfs: <{PREFIXES['rdfs']}> PREFIX skos: <{PREFIXES['skos']}> "
    "SELECT DISTINCT ?e WHERE { VALUES ?name { $names } ?e rdfs:label|skos:altLabel|skos:hiddenLabel ?name }"
)


#: Runs of up to this many words are also looked up with each word's case chosen separately
#: ("NIC nic-000011" typed "nic nic-000011"); longer runs only in whole-run spellings.
MIXED_CASE_WORDS = 3


def _cases(word: str) -> set[str]:
    return {word, word.lower(), word.upper(), word.title(), word[0].upper() + word[1:]}


def phrases(text: str, max_words: int = MAX_PHRASE_WORDS) -> set[str]:
    """The spellings under which a label may appear in ``text``: every run of up to ``max_words``
    words (punctuation at their edges dropped), as typed, in lower, upper and title case, with a
    capital first letter, each word's case chosen apart for short runs, and with the last word's
    plural or singular."""
    words = [w for w in (_TOKEN_EDGE.sub("", token) for token in text.split()) if w][:MAX_LOOKUP_WORDS]
    found: set[str] = set()
    for size in range(1, min(max_words, len(words)) + 1):
        for start in range(len(words) - size + 1):
            run = " ".join(words[start : start + size])
            if len(run) < 2:
                continue
            forms = _cases(run)
            for form in list(forms):
                if len(form) > 3 and form[-1] in "sS" and form[-2:].lower() != "ss":
                    forms.add(form[:-1])
                elif form[-1].isalpha():
                    forms |= {form + "s", form + "S"} if form[-1].isupper() else {form + "s"}
            if size <= MIXED_CASE_WORDS:
                forms |= {
                    " ".join(combo) for combo in product(*(_cases(w) for w in words[start : start + size]))
                }
            found |= forms
    return found


class OverlayCatalog(Catalog):
    """A pushed store's catalog: the built-in records from local files, the store's own entities
    added as questions name them (:meth:`discover`). Thread-safe: records are swapped, not edited."""

    def __init__(
        self, remote: rdflib.Graph, local: rdflib.Graph, base: Catalog, touched: frozenset[str]
    ) -> None:
        parents: dict[str, set[str]] = {}
        for cls, sup in select_csv(remote, _SUBCLASS_QUERY):
            parents.setdefault(cls, set()).add(sup)
        super().__init__(remote, records=dict(base.records), parents=parents)
        #: The graph the whole-graph indexes are built from (the built-in graph, local).
        self.index_graph = local
        #: Spellings already looked up, and IRIs found by name that are no entities (classes).
        self._looked_up: set[str] = set()
        self._not_entities: set[str] = set()
        self._lock = threading.Lock()
        if touched:
            self._take(_remote_records(remote, self.sections, touched), replace=True)

    def _take(self, found: dict[str, EntityRecord], replace: bool = False) -> list[EntityRecord]:
        new = {iri: rec for iri, rec in found.items() if replace or iri not in self.records}
        if new:
            self.records = dict(sorted({**self.records, **new}.items()))
        return list(new.values())

    def discover(self, text: str) -> list[EntityRecord]:
        """Read from the store the entities whose names are phrases of ``text``; return the records
        new to the catalog (already added). Raises RemoteStoreError when the store fails."""
        with self._lock:
            wanted = sorted(phrases(text) - self._looked_up)
            if not wanted:
                return []
            iris: set[str] = set()
            for start in range(0, len(wanted), LOOKUP_CHUNK):
                names = " ".join(
                    rdflib.Literal(name, lang=lang).n3()
                    for name in wanted[start : start + LOOKUP_CHUNK]
                    for lang in (None, "en")
                )
                iris |= {row[0] for row in select_csv(self.graph, _LOOKUP_QUERY.replace("$names", names))}
            self._looked_up.update(wanted)
            unknown = {iri for iri in iris if iri not in self.records and iri not in self._not_entities}
            if not unknown:
                return []
            found = _remote_records(self.graph, self.sections, unknown)
            self._not_entities |= unknown - found.keys()  # classes, sections: named, not entities
            return self._take(found)


def overlay_catalog(loaded: LoadedGraph) -> OverlayCatalog | None:
    """The overlay catalog for a store ``stackgraph push`` filled with this installation's built-in
    graph; None when it was filled otherwise (the caller then reads the whole catalog)."""
    from stackgraph.graph.catalog import load_catalog
    from stackgraph.graph.store import builtin_hash

    manifest = loaded.push_manifest
    if manifest is None or manifest.builtin_hash != builtin_hash():
        return None
    local = load_graph()
    return OverlayCatalog(
        loaded.graph, local.graph, load_catalog(local.graph, local.content_hash), manifest.touched
    )


__all__ = ["LOOKUP_CHUNK", "MAX_PHRASE_WORDS", "OverlayCatalog", "overlay_catalog", "phrases"]
