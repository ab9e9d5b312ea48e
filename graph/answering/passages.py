"""Every text statement of the graph as a passage, ranked against the whole question.

Real problem reports are long and name several technologies in passing ("I'm using horovod in
RDMA on kubernetes ... no userspace device-specific driver found for uverbs0"). Linking finds the
names; what the report *describes* is found here instead: each statement the graph makes in words
(a definition, a note, an assumption, a failure mode, what a command shows, a practice's reason, a
symptom's likely cause, what must match what) becomes one passage, "subject: statement", and the
question is matched against all of them at once, by word overlap (BM25 over the lexical index's
stems) fused with meaning (the embedding model, when it is on). Entities the question names act as
a prior that favours their own passages; they do not decide the subject.

The passages are built once per engine (one SPARQL query); the embedding index over them is cached
on disk keyed by the graph's content, like the entity index.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import threading
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from stackgraph.graph.catalog import PREFIX_DECL
from stackgraph.graph.lexical import TEXT_PROPERTIES, synonyms, terms
from stackgraph.graph.store import SG, is_builtin_entity

if TYPE_CHECKING:
    from stackgraph.graph.embeddings import EmbeddingIndex
    from stackgraph.graph.engine import Engine

SKOS_DEFINITION = "http://www.w3.org/2004/02/skos/core#definition"
#: Bump when the choice or wording of passages changes, so cached embeddings are rebuilt.
PASSAGES_VERSION = "passages-1"
#: BM25's usual constants: term-frequency saturation and length normalisation.
BM25_K1 = 1.2
BM25_B = 0.75
#: Weight of meaning against word overlap in the fused score (both 0-1).
SEMANTIC_WEIGHT = 0.45
#: Share of a subject's next-best passage score added to each of its passages.
SUPPORT_WEIGHT = 0.0
#: Passages with the best word overlap that are scored in full (the rest cannot win).
LEXICAL_POOL = 60
#: Passages nearest in meaning that join the candidates even when they share no word.
SEMANTIC_POOL = 40
#: Extra score for a passage whose subject the question names (a prior, not a filter).
NAMED_PRIOR = 0.12
#: Extra score for a passage that mentions a named entity in its text or object.
MENTIONED_PRIOR = 0.05
#: Extra score, on top of ``NAMED_PRIOR``, for a passage about a problem (symptom, cause, triage
#: branch) the question names: in a report ("Load AWQ model OOM"), the problem named is what it is
#: about, and the technologies named beside it are where it happened.
PROBLEM_PRIOR = 0.15
#: Share of ``NAMED_PRIOR`` a named technology's own definition keeps when the question also names
#: a problem: "what X is" rarely answers a report that mentions X.
CONTEXT_SHARE = 0.0
#: Known terms a question must say besides the names it mentions for a named technology's
#: definition to keep only ``CONTEXT_SHARE`` of its prior: "what is RoCE?" asks for the definition,
#: "what equipment do I need to use RoCE?" asks about something RoCE needs.
ASKS_BEYOND_NAMES = 2
#: Embedded passages are cut to their opening: the meaning sits there and the cost grows with length.
EMBED_CHARS = 300
#: Extra weight of the words of the sentence that asks, in a report of several sentences.
ASKED_WEIGHT = 0.5
#: Weight of a question word's synonyms (``lexical.synonyms``) against the word itself.
SYNONYM_WEIGHT = 0.5

#: Entity-to-entity statements that say something on their own ("X must match Y"), by how to
#: say them; "uses" or "is a parameter of" only connect names, which the text passages carry.
#: "X mitigates Y" is not one: a problem's answer says what fixes it and a fix's definition what it
#: mitigates, while as a passage of its own it outranked the problem it names ("quantization
#: mitigates CUDA OOM" before the OOM's own where-to-look).
RELATIONS: dict[str, str] = {
    str(SG.mustMatch): "must match",
    str(SG.likelyCause): "is likely caused by",
    str(SG.suggestsCause): "suggests",
}

#: How a text property reads after its subject's name.
TEXT_VERBS: dict[str, str] = {
    str(SG.assumption): "assumes",
    str(SG.failureMode): "fails by",
    str(SG.shows): "shows",
    str(SG.reason): "because",
    str(SG.responsibility): "is responsible for",
    str(SG.conclusion): "points to",
    str(SG.action): "do",
}

_TEXT_QUERY = PREFIX_DECL + "SELECT ?s ?p ?t WHERE { ?s ?p ?t . VALUES ?p { $props } FILTER(isLiteral(?t)) }"
_RELATION_QUERY = PREFIX_DECL + "SELECT ?s ?p ?o WHERE { ?s ?p ?o . VALUES ?p { $props } FILTER(isIRI(?o)) }"


@dataclass(frozen=True)
class Passage:
    """One statement in words: ``subject predicate object`` and how it reads."""

    key: str
    subject: str
    predicate: str
    #: The literal text, or the object's IRI for an entity-to-entity statement.
    object: str
    #: The statement as a sentence a person would write ("NCCL: ..." / "X must match Y").
    text: str
    #: Whether ``object`` is an entity.
    relation: bool = False


@dataclass(frozen=True)
class Hit:
    passage: Passage
    score: float
    lexical: float
    semantic: float


class PassageIndex:
    """BM25 over passages' stems (subject names included), fused with embedding similarity."""

    def __init__(
        self, engine: Engine, passages: list[Passage], term_counts: list[dict[str, int]] | None = None
    ) -> None:
        """``term_counts`` (each passage's stems with counts) come from the disk cache when given."""
        self.engine = engine
        self.passages = passages
        self.index_of = {p.key: i for i, p in enumerate(passages)}
        self._terms: list[dict[str, int]] = term_counts or [_term_counts(engine, p) for p in passages]
        self.postings: dict[str, list[int]] = defaultdict(list)
        lengths = []
        for i, counts in enumerate(self._terms):
            lengths.append(sum(counts.values()))
            for term in counts:
                self.postings[term].append(i)
        self._lengths = lengths
        #: entity -> the relation passages it is the object of; entity -> its own passages.
        self._objects: dict[str, list[int]] = defaultdict(list)
        self._about: dict[str, list[int]] = defaultdict(list)
        for i, passage in enumerate(passages):
            self._about[passage.subject].append(i)
            if passage.relation:
                self._objects[passage.object].append(i)
        # BM25's statistics over the built-in graph's passages (store.is_builtin_entity), over all
        # when none are: a user's inventory adds passages without reweighing the stack's words.
        reference = [i for i, p in enumerate(passages) if is_builtin_entity(p.subject)] or list(
            range(len(passages))
        )
        self._avg = sum(lengths[i] for i in reference) / max(1, len(reference))
        frequency: dict[str, int] = defaultdict(int)
        for i in reference:
            for term in self._terms[i]:
                frequency[term] += 1
        total = len(reference)
        self.idf = {
            t: math.log(1 + (total - frequency[t] + 0.5) / (frequency[t] + 0.5)) for t in self.postings
        }
        #: term -> (passage, its BM25 weight for the term): the formula's parts are fixed per
        #: passage, so a query only adds them up.
        self._weights: dict[str, list[tuple[int, float]]] = {}
        for term, found in self.postings.items():
            idf = self.idf[term]
            weights = []
            for i in found:
                tf = self._terms[i][term]
                norm = BM25_K1 * (1 - BM25_B + BM25_B * self._lengths[i] / self._avg)
                weights.append((i, idf * tf * (BM25_K1 + 1) / (tf + norm)))
            self._weights[term] = weights
        self._mentioning: dict[str, frozenset[int]] = {}
        self._semantic: EmbeddingIndex | None = None
        #: The last question's cosines (replaced whole, so threads never see half of one).
        self._last_semantic: tuple[str, tuple[list[float], frozenset[int]]] | None = None
        self._semantic_lock = threading.Lock()

    # ------------------------------------------------------------------ word overlap

    def bm25(self, query_terms: Iterable[str]) -> dict[int, float]:
        """Raw BM25 score of every passage sharing a term with the query. Terms are added in a fixed
        order: a set's order changes with the process's hash seed, and so would the last bits of
        the sums, which decide near-ties (one question got two answers across processes)."""
        scores: dict[int, float] = defaultdict(float)
        for term in sorted(set(query_terms)):
            for i, weight in self._weights.get(term, ()):
                scores[i] += weight
        return scores

    def coverage(self, query_terms: Iterable[str], passage: int | Passage) -> float:
        """Share (by IDF) of the question's known terms that the passage contains."""
        i = passage if isinstance(passage, int) else self.index_of[passage.key]
        return self._covered(self._known_weights(query_terms), i)

    def _known_weights(self, query_terms: Iterable[str]) -> tuple[dict[str, float], float]:
        """The question's known terms with their IDF, and their sum: what ``_covered`` divides by,
        computed once per question rather than once per passage ranked."""
        wanted = {t: self.idf[t] for t in set(query_terms) if t in self.idf}
        return wanted, math.fsum(wanted.values())

    def _covered(self, weights: tuple[dict[str, float], float], i: int) -> float:
        wanted, total = weights
        if not wanted:
            return 0.0
        have = self._terms[i]
        return math.fsum(w for t, w in wanted.items() if t in have) / total

    def shared_terms(self, query_terms: Iterable[str], passage: Passage) -> set[str]:
        """The question's terms the passage contains (its subject's names included)."""
        have = self._terms[self.index_of[passage.key]]
        return {t for t in query_terms if t in have}

    def says_of(self, subject: str, stems: Iterable[str]) -> bool:
        """Whether one of ``subject``'s own statements (its names included) holds one of ``stems``."""
        wanted = set(stems)
        return any(wanted & self._terms[i].keys() for i in self._about.get(subject, ()))

    def definition_of(self, subject: str) -> Passage | None:
        """The passage holding ``subject``'s definition, if it has one."""
        return next(
            (
                self.passages[i]
                for i in self._about.get(subject, ())
                if self.passages[i].predicate == SKOS_DEFINITION
            ),
            None,
        )

    def mentioning(self, entities: Iterable[str]) -> set[int]:
        """Passages that name one of the entities (all words of one of its labels), whose object
        it is ("libfabric (EFA)" is about EFA too), or that are about one of its settings
        (``sg:parameterOf``): a report naming vLLM is about its engine's knobs too
        ("pipeline_parallel_size ... across nodes"), though no statement of a knob names vLLM."""
        found: set[int] = set()
        for iri in entities:
            cached = self._mentioning.get(iri)
            if cached is None:
                cached = self._mentioning[iri] = self._mentions_of(iri)
            found |= cached
        return found

    def _mentions_of(self, iri: str) -> frozenset[int]:
        from stackgraph.graph.answering.evidence import fetch

        found: set[int] = set(self._objects.get(iri, ()))
        for setting in fetch(self.engine, iri).incoming(SG.parameterOf):
            found.update(self._about.get(setting, ()))
        catalog = self.engine.catalog
        rec = catalog.get(iri)
        for label in catalog.all_labels(rec) if rec else ():
            words = set(terms(label))
            if not words or any(w not in self.postings for w in words):
                continue
            hits = set.intersection(*(set(self.postings[w]) for w in words))
            found |= {i for i in hits if self.passages[i].subject != iri}
        return frozenset(found)

    # ------------------------------------------------------------------ meaning

    def semantic_index(self) -> EmbeddingIndex:
        if self._semantic is None:
            with self._semantic_lock:
                if self._semantic is None:
                    from stackgraph.graph.embeddings import EmbeddingIndex

                    embedder = self.engine.linker.semantic_index().embedder
                    pairs = [(p.key, p.text[:EMBED_CHARS]) for p in self.passages]
                    # Keyed by the passages themselves: a change in how they are worded or chosen
                    # can never meet vectors embedded for other texts.
                    texts = hashlib.sha256("\n".join(t for _, t in pairs).encode()).hexdigest()
                    digest = self.engine.loaded.content_hash + PASSAGES_VERSION + texts[:16]
                    self._semantic = EmbeddingIndex.load_or_build(pairs, digest, embedder)
        return self._semantic

    def semantic(self, question: str) -> list[float] | None:
        """Cosine of every passage to the question (in passage order); None when the model is off.

        All of them, not a top k: a passage that word overlap found must keep its own meaning
        score rather than count as unrelated because forty others were nearer."""
        found = self._semantic_for(question)
        return None if found is None else found[0]

    def _semantic_for(self, question: str) -> tuple[list[float], frozenset[int]] | None:
        """The cosines of ``semantic`` and the ``SEMANTIC_POOL`` passages nearest in meaning."""
        if not self.engine.semantic:
            return None
        last = self._last_semantic
        if last is not None and last[0] == question:
            return last[1]  # one question is ranked several times (answerers, causes, branches)
        try:
            index = self.semantic_index()
            vector = self.engine.linker.semantic_index().vector(question)
        except Exception:  # noqa: BLE001 - the model is optional: word overlap still ranks
            return None
        import numpy as np  # loaded with the model by now; a lexical-only process never needs it

        cosines = index.vectors @ vector.reshape(-1)
        # A stable sort, as Python's own: of equal cosines the later passages make the pool.
        nearest = frozenset(np.argsort(cosines, kind="stable")[-SEMANTIC_POOL:].tolist())
        scores = cosines.tolist()
        self._last_semantic = (question, (scores, nearest))
        return scores, nearest

    # ------------------------------------------------------------------ ranking

    def rank(
        self,
        question: str,
        named: Iterable[str] = (),
        k: int = 8,
        use_semantic: bool = True,
        query_terms: Sequence[str] | None = None,
        residual: Sequence[str] | None = None,
        near: dict[str, float] | None = None,
        weak: set[str] | frozenset[str] = frozenset(),
        exclude: set[str] | frozenset[str] = frozenset(),
        asked: Iterable[str] = (),
    ) -> list[Hit]:
        """The passages that best match the whole question, best first.

        ``named`` are the entities the question names: their passages get a small prior, passages
        that mention them (or are about their settings) a smaller one, so a technology named in
        passing tips close calls only.
        ``residual`` are the question's terms outside the words naming them; when they say
        enough (``ASKS_BEYOND_NAMES``), a named entity's definition keeps little of its prior.
        ``near`` adds a prior per subject (a follow-up's subject and what lies near it).
        ``weak`` are named entities matched by one common word only ("image" of "the image
        problem"): they keep the named prior, but a problem named so gets no problem prior, since
        "our customer data" names no data problem. Passages about an ``exclude`` subject are not
        ranked at all. ``asked`` are the terms of the sentence that asks, in a report of several
        sentences: they weigh ``1 + ASKED_WEIGHT`` times as much as the words around them.
        """
        if query_terms is None:
            query_terms = terms(question)
        raw = self.bm25(query_terms)
        said = set(query_terms)
        for i, weight in self.bm25(said.intersection(asked)).items():
            raw[i] += ASKED_WEIGHT * weight
        table = synonyms()
        # The report's everyday words meet the graph's ("crawling" / "slow"), at a discount.
        for i, weight in self.bm25({s for t in said for s in table.get(t, ()) if s not in said}).items():
            raw[i] += SYNONYM_WEIGHT * weight
        top = max(raw.values(), default=0.0)
        lexical = {i: s / top for i, s in raw.items()} if top > 0 else {}
        meaning = self._semantic_for(question) if use_semantic else None
        semantic = None if meaning is None else meaning[0]
        named = set(named)
        mentioning = self.mentioning(named)
        problems = (named - weak) & self.engine.problems
        asked = {t for t in residual or () if t in self.idf}
        beyond = len(asked) >= ASKS_BEYOND_NAMES
        asked_weight = math.fsum(self.idf[t] for t in asked)
        scores: dict[int, tuple[float, float, float]] = {}
        pool = set(sorted(lexical, key=lexical.__getitem__)[-LEXICAL_POOL:])
        if meaning is not None:
            pool |= meaning[1]
        weights = self._known_weights(query_terms)
        for i in pool:
            passage = self.passages[i]
            if passage.subject in exclude:
                continue
            lex = lexical.get(i, 0.0) * (0.5 + 0.5 * self._covered(weights, i))
            sem = max(0.0, semantic[i]) if semantic is not None else 0.0
            fused = (1 - SEMANTIC_WEIGHT) * lex + SEMANTIC_WEIGHT * sem if semantic is not None else lex
            if passage.subject in problems:
                fused += NAMED_PRIOR + PROBLEM_PRIOR
            elif passage.subject in named:
                context = (problems or beyond) and passage.predicate == SKOS_DEFINITION
                share = CONTEXT_SHARE if context else 1.0
                if beyond and not context:
                    # The rest of the prior goes with what is asked about the entity: its
                    # passages that say the question's other words keep it, its placement
                    # boilerplate does not ("NCCL ... pause frames": not "what NCCL is").
                    have = self._terms[i]
                    share = math.fsum(self.idf[t] for t in asked if t in have) / asked_weight
                fused += NAMED_PRIOR * share
            elif i in mentioning:
                fused += MENTIONED_PRIOR
            if near:
                fused += near.get(passage.subject, 0.0)
            scores[i] = (fused, lex, sem)
        if SUPPORT_WEIGHT:
            # An entity several of whose statements match is likelier the subject than one with a
            # single lucky sentence: each passage gains a share of its subject's next-best score.
            by_subject: dict[str, list[float]] = defaultdict(list)
            for i, (f, _, _) in scores.items():
                by_subject[self.passages[i].subject].append(f)
            for values in by_subject.values():
                values.sort(reverse=True)
            for i, (f, lx, sm) in list(scores.items()):
                values = by_subject[self.passages[i].subject]
                other = (
                    values[1] if values[0] == f and len(values) > 1 else values[0] if values[0] != f else 0.0
                )
                scores[i] = (f + SUPPORT_WEIGHT * other, lx, sm)
        ranked = sorted(scores.items(), key=lambda kv: (-kv[1][0], kv[0]))[:k]
        return [Hit(self.passages[i], f, lx, sm) for i, (f, lx, sm) in ranked]


def _term_counts(engine: Engine, passage: Passage) -> dict[str, int]:
    """The passage's stems with counts, its subject's names included."""
    rec = engine.catalog.get(passage.subject)
    names = {t for label in (engine.catalog.all_labels(rec) if rec else ()) for t in terms(label)}
    counts: dict[str, int] = defaultdict(int)
    for term in [*sorted(names), *terms(passage.text)]:
        counts[term] += 1
    return dict(counts)


def _cache_path(engine: Engine) -> Path:
    """Keyed by the graph's content and by the code that verbalizes and stems (this module,
    ``lexical``, and ``linking``, whose stopwords the stemming drops), so a change to any of them
    never meets passages built by the others."""
    from stackgraph.graph import lexical, linking

    # ``embeddings.cache_root``'s rule, without importing numpy on the word-overlap-only path.
    root = os.environ.get("STACKGRAPH_CACHE_DIR")
    if not root:
        import platformdirs

        root = platformdirs.user_cache_dir("stackgraph")
    code = b"".join(Path(m).read_bytes() for m in (__file__, lexical.__file__, linking.__file__))
    digest = hashlib.sha256(engine.loaded.content_hash.encode() + PASSAGES_VERSION.encode() + code)
    return Path(root).expanduser() / "passages" / f"{digest.hexdigest()[:24]}.json"


def load_or_build(engine: Engine) -> PassageIndex:
    """The passage index from the disk cache (JSON, no pickle), else built and cached: building
    costs a SPARQL query and stemming every passage, a few hundred ms of a cold start."""
    try:
        path = _cache_path(engine)
        data = json.loads(path.read_text(encoding="utf-8"))
        passages = [Passage(*row) for row in data["passages"]]
        counts = data["terms"]
        if data.get("version") == PASSAGES_VERSION and len(counts) == len(passages):
            return PassageIndex(engine, passages, counts)
    except (OSError, ValueError, KeyError, TypeError):
        pass  # missing or unusable cache: build
    index = build(engine)
    try:
        path = _cache_path(engine)
        path.parent.mkdir(parents=True, exist_ok=True)
        rows = [[p.key, p.subject, p.predicate, p.object, p.text, p.relation] for p in index.passages]
        payload = {"version": PASSAGES_VERSION, "passages": rows, "terms": index._terms}
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(payload, ensure_ascii=False), encoding="utf-8")
        os.replace(tmp, path)  # atomic: a concurrent reader sees the old file or the new one
    except OSError:
        pass  # a read-only cache only costs the rebuild next time
    return index


def build(engine: Engine) -> PassageIndex:
    """Verbalize the graph's text and entity-to-entity statements about catalogued entities."""
    catalog = engine.catalog
    passages: list[Passage] = []
    seen: set[tuple[str, str, str]] = set()

    def add(subject: str, predicate: str, obj: str, text: str, relation: bool = False) -> None:
        if (subject, predicate, obj) in seen or subject not in catalog:
            return
        seen.add((subject, predicate, obj))
        passages.append(Passage(f"p{len(passages)}", subject, predicate, obj, text, relation))

    props = " ".join(f"<{p}>" for p in TEXT_PROPERTIES if p != str(SG.commandText))
    rows = sorted(
        (
            (str(r.s), str(r.p), str(r.t))
            for r in engine.index_graph.query(_TEXT_QUERY.replace("$props", props))
        ),
    )
    shared = engine.lexical.is_boilerplate
    said_alone = {subject for subject, _, text in rows if not shared(text)}
    for subject, predicate, text in rows:
        if shared(text) and predicate != SKOS_DEFINITION and subject in said_alone:
            # A section's general remark repeated on many entities says little of one that the
            # graph says more of. A sentence that defines an entity stays its definition ("Loops
            # that fail to terminate ..." defines the runaway agent loop), and one that is all
            # the graph says of an entity stays its statement ("gdscheck shows: Disk I/O can't
            # keep up with model loading").
            continue
        label = catalog.display(subject)
        verb = TEXT_VERBS.get(predicate)
        add(subject, predicate, text, f"{label} {verb}: {text}" if verb else f"{label}: {text}")
    rel_props = " ".join(f"<{p}>" for p in RELATIONS)
    rel_rows = sorted(
        (str(r.s), str(r.p), str(r.o))
        for r in engine.index_graph.query(_RELATION_QUERY.replace("$props", rel_props))
    )
    for subject, predicate, obj in rel_rows:
        if obj not in catalog:
            continue
        text = f"{catalog.display(subject)} {RELATIONS[predicate]} {catalog.display(obj)}"
        add(subject, predicate, obj, text, relation=True)
    return PassageIndex(engine, passages)
