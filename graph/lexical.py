"""Word-overlap retrieval over entity names and the graph's sentences.

Between exact names (linking) and meaning (embeddings) sits plain word overlap: "fewer workers
are running" shares its content words with the triage branch "Fewer workers running?", and "which
layer owns scheduling, isolation and rollout" with the responsibility of the Kubernetes layer. Words
are folded by a light stemmer and weighted by how rare they are in the graph (IDF), so that
"layer" or "GPU" count for little and "rollout" or "chunks" for much.
"""

from __future__ import annotations

import math
import re
import threading
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

import snowballstemmer

from stackgraph.graph.catalog import normalize
from stackgraph.graph.linking import FRAME_WORDS, STOPWORDS
from stackgraph.graph.store import is_builtin_entity

_SPLIT = re.compile(r"[a-z0-9]+")

#: Text properties whose sentences describe their subject (weighted below names).
TEXT_PROPERTIES = (
    "http://www.w3.org/2004/02/skos/core#definition",
    "https://w3id.org/stackgraph/ns#note",
    "https://w3id.org/stackgraph/ns#reason",
    "https://w3id.org/stackgraph/ns#responsibility",
    "https://w3id.org/stackgraph/ns#assumption",
    "https://w3id.org/stackgraph/ns#failureMode",
    "https://w3id.org/stackgraph/ns#shows",
    "https://w3id.org/stackgraph/ns#conclusion",
    "https://w3id.org/stackgraph/ns#answer",
    "https://w3id.org/stackgraph/ns#question",
    "https://w3id.org/stackgraph/ns#action",
    "https://w3id.org/stackgraph/ns#role",
    "https://w3id.org/stackgraph/ns#commandText",
    "http://www.w3.org/2000/01/rdf-schema#comment",
)


_ENGLISH = snowballstemmer.stemmer("english")
#: A Snowball stemmer keeps the word it works on in itself: one word at a time across threads.
_ENGLISH_LOCK = threading.Lock()
#: An acronym's plural as written ("GPUs", "NICs", "LLMs"): its stem is the acronym.
_ACRONYM_PLURAL = re.compile(r"\b([A-Z][A-Z0-9]+)s\b")
#: An identifier of words joined in camel case, starting in lower case ("startupProbe",
#: "nodeSelector"): its words are read as if hyphenated (each, then joined). Names starting in
#: upper case ("PyTorch", "DeepSpeed") and runs of capitals ("vLLM", "cuDNN") are left whole.
_CAMEL_WORD = re.compile(r"\b[a-z]+(?:[A-Z][a-z]+)+\b")
#: Where one word of such an identifier ends and the next begins.
_CAMEL_BOUNDARY = re.compile(r"(?<=[a-z])(?=[A-Z])")


@lru_cache(maxsize=16384)
def stem(word: str) -> str:
    """The Snowball (Porter 2) English stem: "traces"/"trace", "status" kept whole, "branches"/
    "branch", "running"/"run". A light hand-written stemmer before it met "traces" as "trac" and
    "status" as "statu", so a report's words missed the graph's."""
    with _ENGLISH_LOCK:
        return _ENGLISH.stemWord(word)


def terms(text: str) -> list[str]:
    """Content-word stems of a text, without the words that only frame a question."""
    return list(_terms(text))


@lru_cache(maxsize=8192)
def _terms(text: str) -> tuple[str, ...]:
    # Cached: the lexical index, the passage index and the answerers stem the same sentences.
    text = _CAMEL_WORD.sub(lambda m: _CAMEL_BOUNDARY.sub("-", m.group()), text)
    return tuple(
        stem(w)
        for w in _words(normalize(_ACRONYM_PLURAL.sub(r"\1", text)))
        if w not in STOPWORDS and w not in FRAME_WORDS and len(w) > 1
    )


def _words(text: str) -> list[str]:
    """The words of normalized text; a hyphenated word gives its parts and, after them, the parts
    written together, so "scale-up" meets "scaleup" and "fine-tuning" meets "finetuning"."""
    words: list[str] = []
    for token in text.split():
        parts = _SPLIT.findall(token)
        words += parts
        if "-" in token and len(parts) > 1 and all(p.isalpha() for p in parts):
            words.append("".join(parts))
    return words


def _word_file(name: str) -> list[str]:
    """The lines of a word list shipped in ``stackgraph.ontology``, without blanks and comments."""
    from importlib import resources

    text = (resources.files("stackgraph.ontology") / name).read_text(encoding="utf-8")
    return [line for line in text.splitlines() if line.strip() and not line.startswith("#")]


@lru_cache(maxsize=1)
def role_verbs() -> frozenset[str]:
    """The words of ``ontology/role_verbs.txt``: verbs a "who" question uses to ask for the part
    of the stack that plays a role ("who handles rate limiting?"), not for a person."""
    return frozenset(w for line in _word_file("role_verbs.txt") for w in line.split())


@lru_cache(maxsize=1)
def setting_words() -> frozenset[str]:
    """The words of ``ontology/setting_words.txt``: nouns for the place a question is asked from
    ("in our cluster", "on a node"), which say where the asker stands, not what they ask about."""
    return frozenset(w for line in _word_file("setting_words.txt") for w in line.split())


@lru_cache(maxsize=1)
def template_headings() -> tuple[str, ...]:
    """The lines of ``ontology/template_headings.txt``: the headings of issue templates ("Describe
    the bug", "Expected behavior"), whose words say nothing of a report's trouble."""
    return tuple(line.strip().lower() for line in _word_file("template_headings.txt"))


@lru_cache(maxsize=1)
def environment_headings() -> tuple[str, ...]:
    """The lines of ``ontology/environment_headings.txt``: the headings under which issue
    templates ask for the reporter's versions ("Your current environment", "System Info")."""
    return tuple(line.strip().lower() for line in _word_file("environment_headings.txt"))


@lru_cache(maxsize=1)
def outside_topics() -> tuple[str, ...]:
    """The lines of ``ontology/outside_topics.txt``: neighbouring areas the graph does not cover,
    each described in plain words (``SemanticIndex.outside`` embeds them)."""
    return tuple(line.strip() for line in _word_file("outside_topics.txt"))


@lru_cache(maxsize=1)
def synonyms() -> dict[str, frozenset[str]]:
    """Stem -> the stems of the other words of its group in ``ontology/report_words.tsv``: the
    everyday words a report uses for what the graph says otherwise ("crawling" for "slow")."""
    found: dict[str, set[str]] = defaultdict(set)
    for line in _word_file("report_words.tsv"):
        group = {t for word in line.split("\t") for t in terms(word.strip())}
        for t in group:
            found[t] |= group - {t}
    return {t: frozenset(others) for t, others in found.items()}


@lru_cache(maxsize=1)
def relational_words() -> frozenset[str]:
    """The words of ``ontology/relational_words.txt``: words that say what is asked of a subject
    ("threat", "drawbacks", "big"), never the subject a definition question asks about."""
    return frozenset(w for line in _word_file("relational_words.txt") for w in line.split()) | chatter_words()


@lru_cache(maxsize=1)
def chatter_words() -> frozenset[str]:
    """The words of ``ontology/chatter_words.txt``: the chatter around a question ("hi", "anyone",
    "actually"), which says nothing of what it asks."""
    return frozenset(w for line in _word_file("chatter_words.txt") for w in line.split())


@lru_cache(maxsize=1)
def relational_terms() -> frozenset[str]:
    """The stems of ``relational_words``, to strike from what a question asks of its subject."""
    return frozenset(t for word in relational_words() for t in terms(word))


@lru_cache(maxsize=1)
def chatter_terms() -> frozenset[str]:
    """The stems of ``chatter_words``, to strike from a question's terms."""
    return frozenset(t for word in chatter_words() for t in terms(word))


@dataclass
class _Doc:
    name_terms: set[str]
    text_terms: set[str]


class LexicalIndex:
    """IDF-weighted word overlap between a query and each entity's names and sentences."""

    def __init__(self, docs: dict[str, tuple[Iterable[str], Iterable[str]]]) -> None:
        """``docs`` maps an IRI to (its names, its sentences)."""
        self.docs: dict[str, _Doc] = {}
        #: The sentences each entity was indexed with (the semantic index embeds them too).
        self.sentences: dict[str, list[str]] = {}
        #: How many entities carry each sentence: one said of many things says little about one.
        self.sentence_count: dict[str, int] = defaultdict(int)
        self._recent: dict[str, dict[str, float]] = {}
        self._name_weights: dict[str, float] = {}
        #: term -> the entities whose names or sentences contain it (only those are scored).
        self.postings: dict[str, set[str]] = defaultdict(set)
        frequency: dict[str, int] = defaultdict(int)
        for iri, (names, texts) in docs.items():
            doc = _Doc(set(), set())
            for name in names:
                doc.name_terms.update(terms(name))
            self.sentences[iri] = list(texts)
            for text in set(self.sentences[iri]):
                self.sentence_count[text] += 1
            for text in self.sentences[iri]:
                doc.text_terms.update(terms(text))
            self.docs[iri] = doc
            for term in doc.name_terms | doc.text_terms:
                self.postings[term].add(iri)
        # Word rarity over the built-in entities (store.is_builtin_entity); over all when none are.
        reference = [iri for iri in self.docs if is_builtin_entity(iri)] or list(self.docs)
        for iri in reference:
            doc = self.docs[iri]
            for term in doc.name_terms | doc.text_terms:
                frequency[term] += 1
        total = max(1, len(reference))
        self.idf = {t: math.log(1 + total / f) for t, f in frequency.items()}
        self._default_idf = math.log(1 + total)

    def coverage(self, text: str, iri: str) -> float:
        """The share (by weight) of the text's words found in the entity's names or sentences:
        low when the text is mostly about something else ("train my dog to sit")."""
        query_terms = set(terms(text))
        if iri not in self.docs or not query_terms:
            return 0.0
        found = self.shared_terms(query_terms, iri)
        return math.fsum(self.weight(t) for t in found) / math.fsum(self.weight(t) for t in query_terms)

    def shared_terms(self, query_terms: Iterable[str], iri: str) -> set[str]:
        """The query's terms found in the entity's names or sentences."""
        doc = self.docs.get(iri)
        return set(query_terms) & (doc.name_terms | doc.text_terms) if doc else set()

    def is_boilerplate(self, text: str) -> bool:
        """Whether a sentence is shared by several entities (a section's general remark)."""
        return self.sentence_count.get(text, 0) >= 3

    def weight(self, term: str) -> float:
        return self.idf.get(term, self._default_idf)

    def score(self, query_terms: set[str], iri: str, total: float | None = None) -> float:
        """0-1: how well the entity matches the query.

        The better of two readings: the query names the entity (its words cover the entity's
        names), or the query describes it (its words are found in the entity's names and sentences).
        ``total`` is the query's weight when the caller scores many entities for one query.
        """
        doc = self.docs.get(iri)
        if doc is None or not query_terms:
            return 0.0
        if total is None:
            total = math.fsum(self.weight(t) for t in query_terms)
        in_names = math.fsum(self.weight(t) for t in query_terms & doc.name_terms)
        in_texts = math.fsum(self.weight(t) for t in (query_terms & doc.text_terms) - doc.name_terms)
        named = 0.0
        if doc.name_terms:
            named = 0.5 * (in_names / total) + 0.5 * (in_names / self._name_weight(iri, doc))
        described = 0.85 * (in_names + in_texts) / total
        return max(named, described)

    def _name_weight(self, iri: str, doc: _Doc) -> float:
        """The weight of an entity's name words, summed once per entity (not once per query)."""
        found = self._name_weights.get(iri)
        if found is None:
            found = self._name_weights[iri] = math.fsum(self.weight(t) for t in doc.name_terms)
        return found

    def search(
        self, text: str, candidates: Iterable[str] | None = None, k: int = 10
    ) -> list[tuple[str, float]]:
        scores = self._scores(text)
        if candidates is None:
            scored = list(scores.items())
        else:
            scored = [(iri, scores[iri]) for iri in candidates if iri in scores]
        scored.sort(key=lambda item: (-item[1], item[0]))
        return scored[:k]

    def _scores(self, text: str) -> dict[str, float]:
        """Every entity's non-zero score for a text; the last few texts are remembered, since one
        question is searched by several answerers."""
        cached = self._recent.get(text)
        if cached is None:
            query_terms = set(terms(text))
            touched = set().union(*(self.postings.get(t, ()) for t in query_terms)) if query_terms else set()
            total = math.fsum(self.weight(t) for t in query_terms)
            cached = {iri: s for iri in touched if (s := self.score(query_terms, iri, total)) > 0}
            if len(self._recent) >= 128:
                self._recent.pop(next(iter(self._recent)))
            self._recent[text] = cached
        return cached


def build_lexical_index(engine) -> LexicalIndex:
    """Names and sentences of every entity in the engine's catalog (one SPARQL query)."""
    from stackgraph.graph.catalog import PREFIX_DECL

    values = " ".join(f"<{p}>" for p in TEXT_PROPERTIES)
    query = PREFIX_DECL + (
        "SELECT ?e ?t WHERE { { ?e ?p ?t . VALUES ?p { " + values + " } FILTER(isLiteral(?t)) } "
        "UNION { ?e sg:placement ?q . ?q sg:role ?t } }"
    )
    texts: dict[str, list[str]] = defaultdict(list)
    for row in engine.index_graph.query(query):
        texts[str(row.e)].append(str(row.t))
    docs = {}
    for iri, rec in engine.catalog.records.items():
        docs[iri] = (engine.catalog.all_labels(rec), texts.get(iri, []))
    return LexicalIndex(docs)
