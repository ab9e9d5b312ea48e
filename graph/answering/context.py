"""The state one question is answered in: the question, its intent, the entities it names."""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from stackgraph.graph.answering.evidence import EntityFacts, Evidence, fetch
from stackgraph.graph.answering.text import one_line
from stackgraph.graph.lexical import terms
from stackgraph.graph.model import Answer, Fact
from stackgraph.graph.store import SG

if TYPE_CHECKING:
    from stackgraph.graph.answering.question import Question
    from stackgraph.graph.catalog import Catalog
    from stackgraph.graph.engine import Engine
    from stackgraph.graph.linking import Mention


#: How a decline says the question belongs to a neighbouring area the graph does not cover.
OUTSIDE_AREA = "does not cover that area"

#: A word-overlap score at which the meaning-based search is not worth its cost.
LEXICAL_SURE = 0.6
#: Share (by weight) of the question's words an entity found by word overlap must account for.
DESCRIBED_COVERAGE = 0.6
#: Cosine at which an entity found by meaning is relevant to the question.
SEMANTIC_RELEVANT = 0.5
#: Linking score of a name that surely names its entity; an exact name below it is weak, linked by
#: one common word ("image" of the image problem, "data" of the data problem).
STRONG_LINK = 0.8
#: How a candidate is linked when the question's one word is part of its name ("RDMA" of RDMA
#: verbs): named, though not by its whole name.
NAME_PART = "name part"
#: How a candidate was found when the question names it (or an earlier turn did), rather than
#: describes it.
NAMED_HOW = frozenset({"exact", "code", "fuzzy", "conversation", NAME_PART})


#: The most earlier steps of a flow told before a command that needs them.
EARLIER_STEPS = 3


def named_surely(mention: Mention) -> bool:
    """Whether a mention names its entity by name (``NAMED_HOW``) and strongly (``STRONG_LINK``),
    not by one common word that happens to be a label."""
    return mention.how in NAMED_HOW and mention.score >= STRONG_LINK


@dataclass
class Candidate:
    """An entity the question may be about, with how sure linking is (0-1) and how it was found."""

    iri: str
    score: float
    how: str


#: Words that negate what is said next to them ("we have no trace", "the link is not down").
NEGATION = frozenset(
    {"not", "no", "dont", "doesnt", "didnt", "isnt", "arent", "wasnt", "never", "without", "missing", "wrong"}
)
#: Words saying that something is absent ("we have zero tracing", "no trace").
ABSENT = NEGATION | {"zero", "none", "nothing", "lack", "lacks", "lacking", "absent", "havent", "hasnt"}
#: Words either side of a mention that may negate it ("we have no trace", "traces: none").
NEGATION_WINDOW = 3


@dataclass
class Context:
    engine: Engine
    question: str
    intent: str | None
    intent_strength: float
    candidates: list[Candidate]
    model_hint: str | None
    #: Set when the entity came from an earlier turn rather than from this question.
    from_conversation: bool = False
    #: The question parsed once (terms, mentions, layer references); parsed here when not given.
    parsed: Question | None = None
    #: The entity a follow-up is about (the conversation's subject), when read in context.
    focus: str | None = None
    #: The follow-up's own words, when ``question`` is read together with the turn before it.
    follow_up: str | None = None
    #: What the answer to the turn before said, when ``question`` is read together with it: the
    #: reader has it already.
    said_before: str = ""
    #: Set by the passage answerer when its best passage is only a guess: a weak match sharing at
    #: most one word with the question. An intent answer that is itself only a fallback then has
    #: nothing behind it either, and the question is declined.
    passages_guess: bool = False
    #: Set for a question asked after earlier turns that does not lean on them: a new topic.
    after_turns: bool = False
    evidence: Evidence = field(init=False)
    #: The passages ranked for this question, by what shaped the ranking (see reports.rank): the
    #: intent's answerer and the passage answerer rank the same question in turn.
    ranked: dict[tuple, list] = field(init=False, default_factory=dict)
    _contradicted: dict[str, bool] = field(init=False, default_factory=dict)

    def __post_init__(self) -> None:
        self.evidence = Evidence(self.engine)
        if self.parsed is None:
            from stackgraph.graph.answering.question import Question

            self.parsed = Question.parse(self.engine, self.question, self.intent)

    @property
    def catalog(self) -> Catalog:
        return self.engine.catalog

    def facts(self, iri: str) -> EntityFacts:
        found = fetch(self.engine, iri)
        self.evidence.queries(found)
        return found

    def steps_before(self, command: str) -> list[str]:
        """The commands of a flow (``sg:next``) that come before ``command``, first step first,
        at most ``EARLIER_STEPS`` of them; each link goes to the evidence.

        Why: a later step works on what the earlier ones made. The jq filter over plan.json is
        useless to someone who has not run ``terraform plan -out=tfplan`` and ``terraform show
        -json``, so a flow is told from its start, wherever one of its later steps is told.
        """
        chain: list[str] = []
        step = command
        while len(chain) < EARLIER_STEPS:
            before = [b for b in self.facts(step).incoming(SG.next) if self.catalog.is_a(b, SG.Command)]
            if not before or before[0] in chain or before[0] == command:
                break
            self.evidence.fact(before[0], SG.next, step)
            chain.insert(0, before[0])
            step = before[0]
        return chain

    def settings_of(self, iri: str) -> list[str]:
        """The configuration settings that apply to an entity (``sg:appliesTo``): a technique is
        turned on or sized by them (enable_chunked_prefill for chunked prefill)."""
        return [
            s
            for s in self.facts(iri).incoming(SG.appliesTo)
            if self.catalog.is_a(s, SG.ConfigurationParameter)
        ]

    def described(
        self, pool: frozenset[str] | list[str], k: int = 5, semantic_k: int = 10
    ) -> tuple[list[tuple[str, float]], list[tuple[str, float]]]:
        """Entities of ``pool`` the question describes without naming them: (word-overlap hits,
        meaning hits). Meaning is only consulted when word overlap is not already sure."""
        lexical = self.engine.lexical.search(self.question, candidates=pool, k=k)
        if lexical and lexical[0][1] >= LEXICAL_SURE:
            return lexical, []
        semantic = [
            (iri, s) for iri, s, _ in self.engine.linker.semantic(self.question, k=semantic_k) if iri in pool
        ]
        return lexical, semantic

    def contradicts(self, branch: str) -> bool:
        """Whether ``branch`` is the absence of something ("no trace available") that the
        question says it has: "the traces show requests sitting in line" has traces, however many
        words it shares with that branch; it describes what the traces found."""
        if branch not in self._contradicted:
            self._contradicted[branch] = self._says_present(branch)
        return self._contradicted[branch]

    def _says_present(self, branch: str) -> bool:
        absence = self.engine.absences.get(branch)
        if absence is None:
            return False
        words = self.question.lower().replace("'", "").split()
        # "we have langfuse on it": a tool providing the thing, named, says the thing is there.
        tools = {w for m in self.parsed.mentions if m.iri in absence.providers for w in m.surface.split()}
        for i, word in enumerate(words):
            if word.strip(".,;:!?()") in tools or set(terms(word)) & absence.stems:
                around = words[max(0, i - NEGATION_WINDOW) : i + 1 + NEGATION_WINDOW]
                if not ABSENT.intersection(around):
                    return True
        return False

    def of_type(self, *classes: str) -> list[Candidate]:
        return [c for c in self.candidates if any(self.catalog.is_a(c.iri, SG[k]) for k in classes)]

    def not_of_type(self, *classes: str) -> list[Candidate]:
        return [c for c in self.candidates if not any(self.catalog.is_a(c.iri, SG[k]) for k in classes)]

    def answer(self, text: str, intent: str, confidence: float) -> Answer:
        ev = self.evidence
        shown = say_inferred(text, ev.inferred())
        facts = said_facts(text, shown, ev.facts)
        return Answer(
            question=self.question,
            answered=True,
            answer=shown,
            intent=intent,
            confidence=max(0.0, min(1.0, confidence)),
            entities=tuple(ev.entities),
            facts=tuple(facts),
            sources=tuple(ev.cited(facts)),
            sparql=tuple(ev.sparql),
        )


def said_facts(composed: str, shown: str, facts: list[Fact]) -> list[Fact]:
    """The facts an answer still rests on once cut to length: a fact naming something that only
    the sentences cut away named (the checks of a second problem, the fix said last) is no longer
    behind what the reader sees. Facts that no sentence names (the steps of an inference whose
    end is said) stay."""
    if shown.startswith(composed):  # the usual case: nothing cut, perhaps a note added
        return list(facts)
    gone = _plain(composed[len(os.path.commonprefix([composed, shown])) :])
    if not gone:
        return list(facts)
    kept = _plain(shown)

    def cut_away(fact: Fact) -> bool:
        names = [n for n in (_plain(fact.subject_label), _plain(fact.object_label)[:NAME_CHARS]) if n]
        return any(n in gone and n not in kept for n in names)

    return [f for f in facts if not cut_away(f)]


#: Leading characters of a fact's object (a sentence, a command) looked for in the answer.
NAME_CHARS = 60


def _plain(text: str) -> str:
    """Text compared as said: one line (as commands are said), lower case."""
    return one_line(text).lower()


#: How many inferred facts an answer names before "and N more".
MAX_INFERRED_NAMED = 2


def say_inferred(text: str, inferred: list[Fact]) -> str:
    """The answer text, saying which of the facts it rests on are inferred (our reading of the
    seeds, not stated in them), unless the text already says so. Only facts the answer still
    names once cut to length are said: a long answer loses its last sentences, and a note naming
    a fix the reader never sees ("Keep tensor-parallel groups ... mitigates ...") misleads and
    takes the room the answer needs."""
    from stackgraph.graph.answering.text import MAX_ANSWER_CHARS, clip

    if not inferred or "inferred" in text.lower():
        return clip(text)
    cut = clip(text)
    shown = _named_in(cut, inferred)
    for _ in range(3):  # each round cuts for the note; a shorter answer may name fewer facts
        if not shown:
            return cut
        note = _inferred_note(shown)
        # The note is never the part cut: the answer makes room for it.
        cut = clip(text.rstrip(), max(MAX_ANSWER_CHARS - len(note), MAX_ANSWER_CHARS // 2))
        still = _named_in(cut, shown)
        if len(still) == len(shown):
            break
        shown = still
    return cut + note if shown else cut


#: How the closing note on what is inferred opens; the answer's text before it is its body.
INFERRED_OPENING = " (Inferred, not stated in the sources:"


def inferred_note(text: str, facts: list[Fact]) -> str:
    """The note saying which of ``facts`` that ``text`` names are inferred; empty when none is."""
    shown = _named_in(text, [f for f in facts if f.basis == "inferred"])
    return _inferred_note(shown) if shown else ""


def _inferred_note(facts: list[Fact]) -> str:
    named = "; ".join(f.text for f in facts[:MAX_INFERRED_NAMED])
    more = len(facts) - MAX_INFERRED_NAMED
    tail = f" and {more} more" if more > 0 else ""
    return f"{INFERRED_OPENING} {named}{tail}.)"


def _named_in(text: str, facts: list[Fact]) -> list[Fact]:
    """The facts whose subject or object the text names."""
    low = text.lower()
    return [f for f in facts if f.subject_label.lower() in low or f.object_label.lower() in low]


#: Most names a word may be part of to stand for them: a word in more names ("NVIDIA") is a vendor
#: or a theme, not one thing a question asks about.
NAME_PART_MAX = 8


def names_holding(engine: Engine, term: str) -> list[str]:
    """The entities whose names hold a word (by its stem), shortest name first, or none when more
    than ``NAME_PART_MAX`` do. Each entity counts by its shortest name holding the word, weighed
    by rarity: the less else it says, the nearer it is to what the word means alone ("RDMA" is
    nearer RDMA NIC than GPU to RDMA NIC over PCIe / GPUDirect)."""
    lexical, catalog = engine.lexical, engine.catalog
    shortest: dict[str, float] = {}
    for iri in lexical.postings.get(term, ()):
        if term not in lexical.docs[iri].name_terms:
            continue  # the word is only in its sentences
        record = catalog.get(iri)
        names = [terms(n) for n in catalog.all_labels(record)] if record else []
        weights = [math.fsum(lexical.weight(t) for t in set(n)) for n in names if term in n]
        if weights:
            shortest[iri] = min(weights)
    if len(shortest) > NAME_PART_MAX:
        return []
    return sorted(shortest, key=lambda iri: (shortest[iri], iri))
