"""A turn read in its conversation: whether it leans on what came before, and on what.

A follow-up says "it", "that layer", "which setting?", or nothing at all that names its subject;
another turn after it changes the subject ("what's a good banana bread recipe?"). The rules here
decide which: ``follow_up`` resolves a turn's candidates against the conversation's focus, and the
others say when a turn carries on a report, asks for the next triage step, leans on an unsaid
subject, or brings a subject of its own from outside the graph. The engine's pipeline
(``answering``) calls them; they read the parsed ``Question`` and the ``Conversation``, never the
raw string.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import TYPE_CHECKING

from stackgraph.graph.answering import intents, symptoms
from stackgraph.graph.answering.context import OUTSIDE_AREA, STRONG_LINK, Candidate
from stackgraph.graph.answering.knowledge import fetch
from stackgraph.graph.answering.question import (
    Question,
    foreign_word,
    noun_phrase,
    ruled_out_terms,
)
from stackgraph.graph.conversation import Conversation
from stackgraph.graph.lexical import relational_words, terms
from stackgraph.graph.linking import STOPWORDS
from stackgraph.graph.store import SG

if TYPE_CHECKING:
    from stackgraph.graph.engine import Engine
    from stackgraph.graph.model import Answer

#: Ordinary words the graph never uses that a follow-up naming nothing may hold and still lean on
#: the conversation: "which setting do I bump?" (one) asks about the last subject; "what's a good
#: banana bread recipe?" (several) is about something else.
BARE_UNKNOWN = 1

#: Words of its own from which a follow-up that names nothing and does not point back is about
#: something else when the conversation's subject says none of them: "which setting do I bump?"
#: (two) asks about the subject, "how do I make excel sum a column?" (three) about a spreadsheet.
OWN_WORDS_ELSEWHERE = 3

#: Content words from which a question naming entities of its own stands alone despite "it".
STANDALONE_TERMS = 7

#: Words a foreign subject needs for a turn after others to be a new topic outside the graph.
FOREIGN_TOPIC_WORDS = 2

#: Ordinary words the graph never uses from which a turn saying more of them than of the graph's
#: own words is about something else: "can we depreciate those over 3 or 5 years on the corporate
#: tax return?", however it leans on the conversation by its wording.
MOSTLY_FOREIGN = 3

#: Words the graph never uses from which a turn that shares none of its own words with the last
#: turn is about a subject of its own.
OWN_SUBJECT_WORDS = 3


def new_foreign_topic(engine: Engine, parsed: Question) -> bool:
    """Whether a turn that does not lean on the conversation introduces a thing the graph lacks,
    said in two or more words whose head is foreign to it ("my home AC thermostat", "a gaming
    pc", "a user's password"): a change of topic. One word ("to lock down") or a head the graph
    uses ("a sw bug") is too little to tell."""
    subject = parsed.foreign_subject(engine, ordinary=True)
    words = subject.split() if subject else []
    return len(words) >= FOREIGN_TOPIC_WORDS and foreign_word(engine, words[-1])


def report_carried_on(engine: Engine, parsed: Question, conversation: Conversation) -> str | None:
    """The report a turn carries on, with the turn: when the conversation is about a problem and
    the turn reports what a check of it found, asking nothing ("trace says it's requests queueing
    at the inference endpoint, not gen"). What it found selects among the problem's branches the
    way it would have, said in the first report; alone, the turn is about the check it names.
    None for anything else, and for a turn about something the graph does not hold."""
    if not conversation.turns or conversation.turns[-1].declined:
        return None
    finding = conversation.focus in engine.problems and intents.reports_a_finding(parsed.text)
    last = conversation.turns[-1].question
    # "so that rules them out, right?" right after a finding asks how to read what was found:
    # the finding's report, carried on.
    finding = finding or (intents.asks_if_settled(parsed.text) and intents.reports_a_finding(last))
    if not finding and not is_remark(engine, parsed) and not _states_more(parsed, last):
        return None
    if _about_something_else(engine, parsed):
        return None
    return f"{last.rstrip()} {parsed.text}"


def _states_more(parsed: Question, last: str) -> bool:
    """Whether a statement after a statement says more of what the report is about: it names
    something of the graph or reads as a symptom ("GPU utilization looks low the whole time",
    "no errors, it just hasn't started"); "they think it's an upsell" says nothing of it."""
    about_it = bool(parsed.mentions) or intents.looks_like_symptom(parsed.text)
    return about_it and intents.is_statement(parsed.text) and intents.is_statement(last)


def is_remark(engine: Engine, parsed: Question) -> bool:
    """Whether a turn asks nothing and names nothing, in the graph's words only: more detail on
    the report under way ("both teams are under the cap though")."""
    foreign, _ = parsed.words_beyond_names(engine)
    return (
        "?" not in parsed.text
        and parsed.intent.intent is None
        and not parsed.mentions
        and not foreign
        and len(own_stems(parsed)) >= 2
    )


def next_in_triage(engine: Engine, parsed: Question, conversation: Conversation) -> str | None:
    """The next branch to check, when the turn asks what is next ("whats next on the list?") in a
    conversation about a triaged problem: after the branch last answered, and past every branch
    a turn so far said was fine. None otherwise."""
    focus = conversation.focus
    if focus is None or not intents.asks_what_next(parsed.text):
        return None
    ruled_out = parsed.ruled_out.union(*(ruled_out_terms(t.question) for t in conversation.turns))
    return symptoms.next_in_triage(engine, focus, ruled_out)


def ruling_out_as_before(engine: Engine, parsed: Question, conversation: Conversation) -> Question:
    """A follow-up read in the conversation keeps what the turn before found fine: after "the
    dataloader is NOT it", "which layer do I go after for that?" is not about data loading. A turn
    asking what is next rules out what it names: "checked the switches, now what?"."""
    before = ruled_out_terms(conversation.turns[-1].question)
    if intents.asks_what_next(parsed.text) and not any(m.iri in engine.problems for m in parsed.mentions):
        before = before | {t for m in parsed.mentions for t in terms(m.surface)}
    return replace(parsed, ruled_out=parsed.ruled_out | before) if before else parsed


def unsaid_subject(
    engine: Engine, parsed: Question, answer: Answer, conversation: Conversation | None
) -> str | None:
    """The conversation's subject, when a turn declined on its own may lean on it without saying
    so: the turn follows an answered turn with a subject, it was declined as nothing the graph
    has (not as a neighbouring area it lacks, nor as a name it lacks), it brings no foreign
    subject of its own, and the last answer holds one of its words. None otherwise."""
    if answer.answered or conversation is None or not conversation.turns or conversation.turns[-1].declined:
        return None
    focus = conversation.focus
    if focus is None or answer.error is not None or parsed.unknown_names or OUTSIDE_AREA in answer.answer:
        return None
    if parsed.foreign_subject(engine) or parsed.only_foreign(engine) or new_foreign_topic(engine, parsed):
        return None
    if own_stems(parsed) & set(terms(conversation.turns[-1].answer)) or asks_only_for_checks(
        engine, parsed, focus
    ):
        return focus
    return None


def asks_only_for_checks(engine: Engine, parsed: Question, focus: str | None) -> bool:
    """Whether a turn declined on its own asks what to check while a problem is under way: "we
    have free hypervisors though, what should I check?" after NoValidHost shares no word with the
    answer, and the problem's checks are what it asks for."""
    return focus in engine.problems and intents.asks_what_to_check(parsed.text)


def own_stems(parsed: Question) -> set[str]:
    """The stems of the words a question says beyond names and asking words."""
    return {stem for stems in parsed.own_words() for stem in stems}


def follow_up(
    engine: Engine, parsed: Question, candidates: list[Candidate], conversation: Conversation
) -> tuple[list[Candidate], bool]:
    """Resolve "it", "that layer", "what else is in that layer" against earlier turns."""
    text, intent = parsed.text, parsed.intent.intent
    # A layer model named alone qualifies the question ("and in the eight-layer map?"): it asks
    # the last question again of the same subject, in that model, unless that subject was a model.
    qualifies = conversation.focus is not None and not engine.catalog.is_a(conversation.focus, SG.LayerModel)
    # A name written in ordinary English ("besides volcano, which other plugin ...") is found by
    # meaning too, but the question still names it.
    mentioned = {m.iri for m in parsed.mentions}
    named = [
        c
        for c in candidates
        if (c.how in ("exact", "code", "fuzzy") or c.iri in mentioned)
        and not (qualifies and engine.catalog.is_a(c.iri, SG.LayerModel))
    ]
    # "what should I look at?" names nothing, in ordinary words: it is about the last subject.
    # "what is a flurbo?" names something unknown: it stands alone (and is declined).
    # "what is the best pizza in Naples?" is in ordinary words too, but words the graph never uses
    # ("pizza") say it is about something else: it stands alone (and is declined). So does one
    # that brings its own subject from outside the graph ("and what about knitting a scarf?"), or
    # says nothing the graph knows ("so how do I cook rice?") and does not point back.
    bare = (
        not named
        # One letter is the tail of a contraction ("what's" is normalized "what s"), not a word.
        # Words that only say what is asked of a subject ("the usual culprit", "any downsides")
        # name no subject of their own either.
        and all(
            len(w) == 1 or w in engine.common_words or w in STOPWORDS or w in relational_words()
            for w in parsed.normalized.split()
        )
        and sum(t not in engine.lexical.idf for t in set(parsed.terms)) <= BARE_UNKNOWN
    )
    described = described_before(engine, parsed, conversation)
    if described is not None:
        # "what replaces the collective library on those?" after "cuda + nccl": NCCL, described
        # by the words of its name, whatever else those words name ("collective operations").
        return [Candidate(described, 0.95, "conversation")] + [
            c for c in candidates if c.iri != described
        ], True
    # "which layers do I go after in the 8-layer map?" names no subject of its own: a layer is
    # asked for, of what the conversation is about.
    what_next = intents.asks_what_next(text)  # "checked the switches, now what?"
    bare_why = intents.asks_bare_why(text)  # "why tho? i thought the container was self contained"
    leans = (
        Conversation.leans_on_context(text)
        or bare
        or (not named and intents.asks_for_layer(text))
        # "which knob do I turn down first?" names no subject of its own: a setting is asked for,
        # of what the conversation is about.
        or (not named and parsed.asks_for_setting)
        or what_next
        or bare_why
    )
    if (
        not leans
        or _about_something_else(engine, parsed)
        or (
            not named
            and not parsed.points_back_at_several
            and off_the_conversation(engine, parsed, conversation)
        )
    ):
        return candidates, False  # a question that does not lean on context stands alone
    if parsed.unknown_names and not named:
        # "should I run VACUUM FULL or pg_repack on it?" after a question on MLOps asks about what
        # it names, things the graph lacks; "it" is where they would run, not the subject.
        return candidates, False
    last_layer = engine.catalog.get(conversation.last_layer) if conversation.last_layer else None
    lists_layer = Conversation.refers_to_layer(text, last_layer.label if last_layer else None) or (
        intent == intents.LIST
        and not named
        and (not parsed.points_back or Conversation.asks_for_siblings(text))
    )
    subject = (conversation.last_layer or conversation.focus) if lists_layer else conversation.focus
    if not named and subject and not what_next and _elsewhere(engine, parsed, subject):
        return candidates, False
    if lists_layer:
        layer = conversation.last_layer
        if layer is None and conversation.focus and engine.catalog.is_a(conversation.focus, SG.Layer):
            layer = conversation.focus
        if layer is not None:
            return [Candidate(layer, 0.95, "conversation")], True
    focus = conversation.focus
    if focus is None or (named and any(c.iri == focus for c in named)):
        return candidates, False
    cause = _cause_put_forward(engine, parsed, conversation)
    if cause is not None:
        # "liveness probe is the 30s one from our web template / so is that the actual cause?":
        # the likely cause of the problem under way that the last turn put forward is asked about.
        return [Candidate(cause, 0.95, "conversation")], True
    found_problem = any(c.iri in engine.problems for c in named)
    if what_next and not found_problem and not conversation.turns[-1].declined:
        # "checked the switches, all ports up, now what?": what it names is what was checked, and
        # the next check is asked of the problem under way, not of the last check answered.
        problem = next((t.focus for t in reversed(conversation.turns) if t.focus in engine.problems), focus)
        return [Candidate(problem, 0.95, "conversation")], True
    # A turn naming a layer only by an ordinary word ("what should the network folks look at
    # then?") brings no subject of its own: it leans on the conversation's. A technology named in
    # ordinary English ("besides volcano, ...") is still named.
    surely_named = [
        c
        for c in named
        if c.score >= STRONG_LINK or c.how == "fuzzy" or not engine.catalog.is_a(c.iri, SG.Layer)
    ]
    if surely_named and _verdict_on_what_was_said(engine, parsed, conversation, surely_named):
        # "so is vllm broken or what?" after a report naming vLLM asks for the verdict on the
        # problem under way, not about vLLM: the answer about the problem says whose fault it is.
        return [Candidate(focus, 0.95, "conversation"), *surely_named], True
    if (
        surely_named
        and not bare_why
        and (not parsed.points_back or parsed.points_at_own_names or len(parsed.terms) >= STANDALONE_TERMS)
    ):
        # A long report that names its own technologies says what "it" is itself.
        return candidates, False
    leaning = [Candidate(focus, 0.95, "conversation")]
    if not named and parsed.points_back_at_several:
        leaning += [
            Candidate(iri, 0.95, "conversation") for iri in _named_alongside(engine, conversation, focus)
        ]
    return leaning + [c for c in named if c.iri != focus], True


def _named_alongside(engine: Engine, conversation: Conversation, focus: str) -> list[str]:
    """What the last turn named surely besides ``focus``, of the same kind: "where do they land?"
    after "UALink for scale-up plus Ultra Ethernet for the backend" asks about both
    technologies, not about a cause the words "backend" also name."""
    turn = conversation.turns[-1]
    if turn.declined or focus not in turn.named:
        return []
    record = engine.catalog.get(focus)
    kind = engine.catalog.most_specific_type(record) if record else None
    return list(
        dict.fromkeys(
            iri
            for iri in turn.named
            if iri != focus
            and (other := engine.catalog.get(iri)) is not None
            and engine.catalog.most_specific_type(other) == kind
        )
    )


#: "so is that the actual cause?", "was it the culprit then?": whether what was just said is the cause.
_ASKS_IF_CAUSE = re.compile(
    r"\b(?:is|was|could)\s+(?:that|this|it)\s+(?:be\s+)?(?:the\s+)?(?:\w+\s+)?(?:cause|culprit|reason)\b",
    re.IGNORECASE,
)


def _cause_put_forward(engine: Engine, parsed: Question, conversation: Conversation) -> str | None:
    """The likely cause of the conversation's problem that the turn before put forward, when this
    turn asks whether that is the cause: one the turn named, or one whose name holds the name of
    something the turn named ("liveness probe" puts forward "Liveness probe misconfigured for slow
    startup"). None when the turn asks no such thing or nothing fits."""
    focus = conversation.focus
    if not conversation.turns or focus not in engine.problems or not _ASKS_IF_CAUSE.search(parsed.text):
        return None
    facts = fetch(engine, focus)
    causes = facts.iris(SG.likelyCause) + facts.iris(SG.suggestsCause)
    named = conversation.turns[-1].named
    names = [engine.catalog.label(iri).lower() for iri in named]
    for cause in causes:
        label = engine.catalog.label(cause).lower()
        if cause in named or any(name and name in label for name in names):
            return cause
    return None


#: "so is vllm broken?", "is the driver the problem then?": a yes-or-no on the state of something.
_VERDICT = re.compile(r"^\W*(?:(?:so|and|but|ok(?:ay)?|hmm+|wait)\W+)*(?:is|are|was|were)\b", re.IGNORECASE)


def _verdict_on_what_was_said(
    engine: Engine, parsed: Question, conversation: Conversation, named: list[Candidate]
) -> bool:
    """Whether the turn asks a yes-or-no about the state of things the turn before already named,
    while the conversation is about a problem: the verdict on that problem is asked."""
    if not conversation.turns or conversation.focus not in engine.problems:
        return False
    before = set(conversation.turns[-1].named)
    return bool(_VERDICT.match(parsed.text)) and all(c.iri in before for c in named)


def mostly_foreign(engine: Engine, parsed: Question) -> bool:
    """Whether the turn says ``MOSTLY_FOREIGN`` or more ordinary words the graph never uses, and
    more of them than words of its own the graph does use."""
    foreign, _ = parsed.words_beyond_names(engine)
    return len(foreign) >= MOSTLY_FOREIGN and len(foreign) > parsed.known_own_words(engine)


#: Words opening a phrase that describes something already said ("the collective library").
_DEFINITE = frozenset({"the", "that", "this", "those", "these"})


def described_before(engine: Engine, parsed: Question, conversation: Conversation) -> str | None:
    """What the last turn named that a phrase of this turn describes in two or more words of its
    name: "what replaces the collective library on those?" after "everything we run is cuda +
    nccl" is about NCCL (NVIDIA Collective Communications Library). None when no phrase fits
    exactly one such thing, or the turn names it itself."""
    turn = conversation.turns[-1]
    if turn.declined or not turn.named:
        return None
    words = parsed.normalized.split()
    for i, word in enumerate(words):
        if word not in _DEFINITE:
            continue
        phrase = {t for w in noun_phrase(words[i + 1 :]) for t in terms(w)}
        if len(phrase) < 2:
            continue
        fits = [
            iri
            for iri in turn.named
            if (record := engine.catalog.get(iri)) is not None
            and any(phrase <= set(terms(label)) for label in engine.catalog.all_labels(record))
        ]
        if len(fits) == 1 and not any(m.iri == fits[0] for m in parsed.mentions):
            return fits[0]
    return _the_one_of_its_parts(engine, parsed, turn.focus)


#: "the budget one", "that iteration one": one of the parts just listed, by a word of its name.
_THE_ONE = re.compile(r"\b(?:the|that|this)\s+([a-z][\w-]*)\s+one\b")
#: The edge from a whole to the parts an answer about it lists (three constraints of the loop).
_HAS_PART = "http://purl.org/dc/terms/hasPart"


def _the_one_of_its_parts(engine: Engine, parsed: Question, focus: str | None) -> str | None:
    """The part of the last turn's subject that "the budget one" picks by a word of its name:
    "a budget per task" of the three constraints that belong in the loop. None unless exactly one
    part has that word."""
    match = _THE_ONE.search(parsed.normalized)
    if focus is None or match is None:
        return None
    word = set(terms(match.group(1)))
    if not word:
        return None
    fits = [
        part
        for part in fetch(engine, focus).iris(_HAS_PART)
        if (record := engine.catalog.get(part)) is not None
        and any(word <= set(terms(label)) for label in engine.catalog.all_labels(record))
    ]
    return fits[0] if len(fits) == 1 else None


def _about_something_else(engine: Engine, parsed: Question) -> bool:
    """Whether the turn's own words say it is about something the graph does not hold: a subject
    written in words it never uses, only such words, or more of them than of its own."""
    return bool(
        parsed.foreign_subject(engine) or parsed.only_foreign(engine) or mostly_foreign(engine, parsed)
    )


def off_the_conversation(engine: Engine, parsed: Question, conversation: Conversation) -> bool:
    """Whether a turn naming nothing brings a subject of its own: words the graph never uses
    (``OWN_SUBJECT_WORDS`` of them: "pivot table in excel ... dates by month") and none of its
    own words said in the last turn or its answer. Its wording may lean on the conversation
    ("also how do I ..."); what it is about does not."""
    foreign, _ = parsed.words_beyond_names(engine)
    if len(foreign) < OWN_SUBJECT_WORDS:
        return False
    last = conversation.turns[-1]
    said = set(terms(f"{last.question} {last.answer}"))
    return not (own_stems(parsed) & said)


def conversation_model(engine: Engine, conversation: Conversation) -> str | None:
    """The layer model the last turn was about: a model itself, or the model of a layer it was
    about or named; None when it was about neither, or was declined."""
    if not conversation.turns or conversation.turns[-1].declined:
        return None
    turn = conversation.turns[-1]
    for iri in (turn.focus, *turn.layers):
        record = engine.catalog.get(iri) if iri else None
        if record is None:
            continue
        if engine.catalog.is_a(iri, SG.LayerModel):
            return iri
        if record.model and engine.catalog.is_a(iri, SG.Layer):
            return record.model
    return None


#: The stems of the words that ask for a configuration setting (``intents.asks_for_setting``).
_SETTING_STEMS = frozenset(t for form in intents.SETTING_FORMS for t in terms(form))


def _elsewhere(engine: Engine, parsed: Question, subject: str) -> bool:
    """Whether a follow-up that names nothing is about something other than the conversation's
    ``subject``: it does not point back, and it says ``OWN_WORDS_ELSEWHERE`` or more words of its
    own, none of which a statement of the subject holds. Leaning on context by its wording ("and
    how do I ...") or by plain words alone does not make a question about the last subject."""
    if parsed.points_back:
        return False
    # "Knob" or "flag" says what kind of thing is asked for, not what about.
    own = [stems for stems in parsed.own_words() if not set(stems) & _SETTING_STEMS]
    return len(own) >= OWN_WORDS_ELSEWHERE and not engine.passages.says_of(
        subject, [s for stems in own for s in stems]
    )


def about_the_declined(parsed: Question, conversation: Conversation) -> bool:
    """Whether a question names nothing and points back ("how long does it take?") right after a
    turn the engine declined that named nothing the graph has ("how do I bake sourdough bread?"):
    "it" is that turn's subject, which the graph lacks, not what an older turn was about."""
    return (
        bool(conversation.turns)
        and conversation.turns[-1].declined
        and conversation.turns[-1].focus is None
        and not parsed.mentions
        and parsed.points_back
    )
