"""From a question to an answer: clean it, find its intent and entities, compose from the graph.

The pipeline, in order:
1. reject unusable input (empty, too long, control characters) with a declined answer and a
   one-line ``error``, never an exception;
2. guess the intent from the wording (``intents``);
3. link the entities the question names (``linking``), falling back to word overlap and then to
   meaning when it names none, and to the conversation's focus for follow-ups;
4. hand the context to the answerer for the intent, falling back to a definition; decline with the
   closest entities as suggestions when nothing in the graph answers the question.

Whether a turn of a conversation leans on the turns before it, and on what, is ``turns``' job.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from stackgraph.graph.answering import (
    compete,
    intents,
    knowledge,
    placement,
    relations,
    remedies,
    reports,
    scope,
    symptoms,
)
from stackgraph.graph.answering.context import (
    DESCRIBED_COVERAGE,
    NAME_PART,
    NAMED_HOW,
    OUTSIDE_AREA,
    STRONG_LINK,
    Candidate,
    Context,
    named_surely,
    names_holding,
)
from stackgraph.graph.answering.evidence import Evidence
from stackgraph.graph.answering.question import Question, ruled_out_terms
from stackgraph.graph.answering.text import clip
from stackgraph.graph.answering.turns import (
    about_the_declined,
    asks_only_for_checks,
    conversation_model,
    follow_up,
    mostly_foreign,
    new_foreign_topic,
    next_in_triage,
    own_stems,
    report_carried_on,
    ruling_out_as_before,
    unsaid_subject,
)
from stackgraph.graph.conversation import Conversation
from stackgraph.graph.layer_refs import model_naming_words
from stackgraph.graph.lexical import chatter_terms, relational_terms, terms
from stackgraph.graph.linking import STOPWORDS
from stackgraph.graph.model import Answer
from stackgraph.graph.store import SG

if TYPE_CHECKING:
    from stackgraph.graph.engine import Engine

#: Longest question accepted; longer input is declined with an error rather than searched.
MAX_QUESTION_CHARS = 2000
#: Word-overlap score above which an entity counts as what the question is about.
LEXICAL_MIN = 0.5
#: Word-overlap a layer's responsibility needs to answer "which layer handles X?" outright.
LAYER_BY_ROLE_MIN = 0.45
#: Cosine above which a semantic match counts as what the question is about.
SEMANTIC_ACCEPT = 0.55

#: A definition question of at most this many content words asks for a name, not a description.
NAME_LOOKUP_TERMS = 3


#: Content words from which a question that asks for nothing in particular (no definition,
#: placement or listing) is a report of what happened, even in no word of trouble: "nccl-tests
#: only reaches half of the bandwidth ib_send_bw confirmed" wants the checks of what it names.
REPORT_TERMS = compete.LONG_QUESTION_TERMS


#: Typographic quotes as typed on phones and pasted from documents, read as the plain ones the
#: wording cues are written with ("what’s" is "what's").
_TYPOGRAPHIC = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'})
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")

Composer = Callable[[Context], Answer | None]

COMPOSERS: dict[str, Composer] = {
    intents.FIT: placement.where_fits,
    intents.OWNER: symptoms.owner_of_symptom,
    intents.DIAGNOSE: symptoms.diagnose,
    intents.DEFINE: knowledge.define,
    intents.WHY: knowledge.why,
    intents.LIST: placement.list_members,
    intents.COMPARE: placement.compare,
    intents.CROSSWALK: placement.crosswalk,
    intents.TRIAGE: symptoms.triage_overview,
    intents.STRESS: placement.workload_stress,
    intents.ASSUME: placement.layer_detail,
    intents.PRACTICE: knowledge.practice,
    intents.PATH: knowledge.related,
}

#: What to try when the intent's own answerer finds nothing to say.
FALLBACKS: dict[str | None, tuple[Composer, ...]] = {
    intents.FIT: (knowledge.practice_if_advice, knowledge.define),
    intents.OWNER: (placement.layer_for_text, knowledge.why, knowledge.define),
    intents.ASSUME: (placement.layer_for_text, knowledge.define),
    intents.LIST: (placement.where_fits, knowledge.define),
    intents.DIAGNOSE: (symptoms.owner_of_symptom, knowledge.define),
    intents.WHY: (knowledge.practice, knowledge.define),
    intents.PRACTICE: (knowledge.why, symptoms.owner_of_symptom, knowledge.define),
    intents.COMPARE: (placement.where_fits, knowledge.define),
    intents.STRESS: (placement.where_fits, knowledge.define),
    intents.CROSSWALK: (placement.layer_detail, knowledge.define),
    intents.PATH: (knowledge.define,),
    None: (symptoms.owner_of_symptom, knowledge.define),
}


class InvalidQuestion(ValueError):
    """The input cannot be treated as a question; the message is one line for the user."""


def sanitize(question: object) -> str:
    if isinstance(question, bytes):
        try:
            question = question.decode("utf-8")
        except UnicodeDecodeError as error:
            raise InvalidQuestion(f"the question is not valid UTF-8 (byte {error.start})") from None
    if not isinstance(question, str):
        raise InvalidQuestion("the question must be text")
    if "\ufffd" in question or any(0xD800 <= ord(ch) <= 0xDFFF for ch in question):
        raise InvalidQuestion("the question contains bytes that are not valid UTF-8")
    if len(question) > MAX_QUESTION_CHARS:
        raise InvalidQuestion(
            f"the question is {len(question):,} characters long; the limit is {MAX_QUESTION_CHARS:,}"
        )
    text = unicodedata.normalize("NFC", _CONTROL.sub(" ", question)).translate(_TYPOGRAPHIC)
    text = " ".join(text.split())
    if not text:
        raise InvalidQuestion("the question is empty")
    if not re.search(r"[A-Za-z0-9]", text):
        if any(ch.isalpha() for ch in text):
            # "带上下文的对话可不可以增加命中内容的日志": words, in a script the engine does not read.
            raise InvalidQuestion("the question has no words in English, the only language stackgraph reads")
        raise InvalidQuestion("the question has no words")
    return text


#: How many of the names a declined question asks about that the graph lacks the answer says.
UNKNOWN_SHOWN = 6


def declined(
    engine: Engine,
    question: str,
    error: str | None = None,
    intent: str | None = None,
    unknown: tuple[str, ...] = (),
    outside: str | None = None,
) -> Answer:
    """A declined answer: the error, or what the graph does not know, and the closest entities.
    ``unknown`` are the names the question asks about that the graph lacks; the answer says them.
    ``outside`` is the neighbouring area the question belongs to, which the graph does not cover."""
    suggestions = tuple(engine.linker.closest(question)) if question and not error else ()
    # Each name once, and only the first few: a pasted log repeats its words ("INFO INFO INFO").
    shown: list[str] = []
    seen: set[str] = set()
    for name in unknown:
        if name.lower() not in seen:
            seen.add(name.lower())
            shown.append(name)
    shown = shown[:UNKNOWN_SHOWN]
    what = f" {' '.join(shown)}" if shown else ""
    nothing = "has no entity by that name" if unknown else "has nothing on that"
    if outside:
        nothing = f"{OUTSIDE_AREA} ({outside})"
    if error:
        text = f"I can't answer that: {error}."
    elif suggestions:
        names = ", ".join(s.display for s in suggestions[:5])
        text = f"I don't know{what}: the stackgraph graph {nothing}. Closest things it does know: {names}."
    else:
        text = f"I don't know{what}: the stackgraph graph {nothing}."
    return Answer(
        question=question,
        answered=False,
        answer=text,
        intent=intent or "unknown",
        confidence=0.0,
        suggestions=suggestions,
        error=error,
    )


def link(engine: Engine, parsed: Question) -> list[Candidate]:
    """The entities the question is about, best first (named ones in the order they appear)."""
    linker = engine.linker
    question, intent = parsed.text, parsed.intent.intent
    mentions = parsed.mentions
    question_terms = parsed.terms
    covered = sum(len(terms(m.surface)) for m in mentions)
    candidates: list[Candidate] = []
    models: list[Candidate] = []
    for m in mentions:
        surface_terms = terms(m.surface)
        weak = (
            m.how == "exact"
            and len(surface_terms) <= 1
            and all(_common(engine, w) for w in m.surface.split() if w not in STOPWORDS)
            and not _written_as_acronym(m.surface, question)
        )
        score = m.score * (0.6 if weak else 1.0) * (0.9 if m.how == "fuzzy" else 1.0)
        if engine.catalog.is_a(m.iri, SG.LayerModel):
            # "in the eight-layer model" qualifies the question; it is its subject only when alone.
            models.append(Candidate(m.iri, score, m.how))
            continue
        candidates.append(Candidate(m.iri, score, m.how))
    # A close spelling of a name in an uncommon word ("SlignShot") names it as surely as the
    # name: the fuzzy discount orders it below exact names, not out of the subjects.
    strong = [c for c in candidates if c.score >= STRONG_LINK or c.how == "fuzzy"]
    if candidates and not strong and question_terms and covered / len(question_terms) >= 0.5:
        strong = candidates  # the question is mostly the weak name itself ("what is Volcano used for")
    if not strong and models and not candidates:
        strong = models  # "what are the layers of the nine-layer model?"
    if strong:
        weak_rest = [c for c in candidates if c not in strong]
        # Layers named alongside something else are context, not the subject.
        subjects = [c for c in strong if not engine.catalog.is_a(c.iri, SG.Layer)]
        layers = [c for c in strong if engine.catalog.is_a(c.iri, SG.Layer)]
        if intent in (intents.LIST, intents.ASSUME, intents.CROSSWALK):
            return _dedupe(layers + subjects + weak_rest)
        return _dedupe(subjects + layers + weak_rest)
    # Nothing named: find what the question describes.
    if _unknown_name(parsed):
        return _named_in_part(engine, parsed)
    found: dict[str, Candidate] = {}
    for iri, score in engine.lexical.search(question, k=5):
        if score >= LEXICAL_MIN and engine.lexical.coverage(question, iri) >= DESCRIBED_COVERAGE:
            found[iri] = Candidate(iri, score, "lexical")
    # A question about a person ("who is ...") is about nobody in this graph unless it names them.
    described = [] if parsed.asks_for_person else linker.semantic(question, k=5)
    for iri, score, _text in described:
        # Meaning alone can be fooled by a question's frame ("which layer owns my headache" is
        # close to "which layer owns your problem"): the match must share a content word too.
        if score >= SEMANTIC_ACCEPT and engine.lexical.coverage(question, iri) > 0:
            prior = found.get(iri)
            if prior is None or prior.score < score:
                found[iri] = Candidate(iri, score, "semantic")
    # What the report says it checked and found fine is not what it describes ("queue + gen look
    # normal, the time is all in retrieval" is no report of time going to queueing).
    ruled_out = parsed.ruled_out
    kept = [c for c in found.values() if not ruled_out & set(terms(engine.catalog.label(c.iri)))]
    return sorted(kept, key=lambda c: (-c.score, c.iri))


def _named_in_part(engine: Engine, parsed: Question) -> list[Candidate]:
    """The entities whose names hold the one word a definition question asks about, when that
    word is no ordinary English and no entity's whole name: "what's RDMA?" asks about what RDMA
    verbs, RDMA NIC and GPUDirect RDMA share, and L6 Transport (whose names say RDMA) places it.
    None for "what is an index?", whose word is ordinary English and not one thing."""
    asked = set(parsed.terms)
    if len(asked) != 1:
        return []
    (term,) = asked
    written = [w for w in parsed.normalized.split() if terms(w) == [term]]
    if not written or any(_common(engine, w) for w in written):
        return []
    return [Candidate(iri, STRONG_LINK, NAME_PART) for iri in names_holding(engine, term)]


def _ordinary_name(engine: Engine, surface: str) -> bool:
    """Whether a name is one ordinary word, or a word that asks for a setting ("config"): an
    alias of an entity ("resources", "config" of the triage's causes) that any report may say."""
    words = [w for w in surface.lower().split() if w not in STOPWORDS]
    return len(words) == 1 and (_common(engine, words[0]) or words[0] in intents.SETTING_FORMS)


def _written_as_acronym(surface: str, question: str) -> bool:
    """Whether the question writes a name in capitals ("IB", "DR"): an acronym, however common
    the word it spells in lower case ("ib", "dr") is in the model's vocabulary."""
    letters = re.sub(r"[^a-z]", "", surface)
    return (
        len(letters) >= 2
        and re.search(rf"(?<![\w-]){re.escape(surface.upper())}(?![\w-])", question) is not None
    )


def _common(engine: Engine, word: str) -> bool:
    """Whether a word is ordinary English, its plural too: the model's vocabulary lists "prompt"
    but not "prompts"."""
    common = engine.common_words
    return word in common or (word.endswith("s") and word[:-1] in common)


def _nothing_behind(engine: Engine, ctx: Context, parsed: Question) -> tuple[str, ...] | None:
    """When the intent's answer only fell back (a definition nobody asked for, a thing found by
    description) and no passage answer stands against it: whether the graph has nothing on the
    question after all, and the words it lacks. Either no statement matches more than one of its
    words ("could not build wheels for vLLM" is no question about vLLM), or it says nothing the
    graph knows besides a name and ordinary words the graph never uses ("a GPU for gaming?").
    None when the fallback stands."""
    if ctx.passages_guess:
        return ()
    outside = parsed.foreign_subject(engine, ordinary=True)
    if outside:
        return (outside,)  # "recommend a good book about deep learning": a book is no entity here
    foreign, known = parsed.words_beyond_names(engine)
    return tuple(foreign) if foreign and not known else None


def _names_several(parsed: Question) -> bool:
    """Whether the question names two or more different things of the graph surely, and no
    name the graph lacks: a question asked of them together ("what are the disadvantages of k8s
    and slurm on each node?") is about them, however unsure the passages are of the rest."""
    if parsed.unknown_names:
        return False
    sure = {m.iri for m in parsed.mentions if named_surely(m)}
    return len(sure) >= 2


def _is_report(parsed: Question, intent: str | None) -> bool:
    """Whether the question reports what happened rather than asks for a definition, a place or
    a listing: in words of trouble ("our InfiniBand links keep flapping"), or at length. What
    such a report names is checked: its checks answer it even when no statement matches the
    trouble's words."""
    return intent in (None, intents.OWNER, intents.DIAGNOSE) and (
        intents.looks_like_symptom(parsed.text) or len(parsed.terms) >= REPORT_TERMS
    )


def _unknown_name(parsed: Question) -> bool:
    """Whether the question asks to define a name the graph does not have: "what is an index?"
    names nothing, and the graph has no definition of it however close in meaning "index size" or
    a passage on vector indexes is; a longer definition question describes what it asks about."""
    return (
        parsed.intent.intent == intents.DEFINE
        and not parsed.mentions
        and len(set(parsed.terms)) <= NAME_LOOKUP_TERMS
    )


def _dedupe(candidates: list[Candidate]) -> list[Candidate]:
    seen: set[str] = set()
    out = []
    for c in candidates:
        if c.iri not in seen:
            seen.add(c.iri)
            out.append(c)
    return out


def answer_question(
    engine: Engine, question: object, conversation: Conversation | None = None, intent: str | None = None
) -> Answer:
    answer, parsed = _answer(engine, question, conversation, intent)
    if conversation is not None:
        # Declined turns too: "it" in the next question means what they asked about, which is
        # nothing the graph has when they asked about a name it lacks ("what is CXL memory?").
        known = parsed is not None and not parsed.unknown_names
        sure = [m.iri for m in parsed.mentions if m.score >= STRONG_LINK] if known else []
        checks = {e.iri for e in answer.entities if engine.catalog.is_a(e.iri, SG.Diagnostic)}
        conversation.remember(answer, parsed.named if known else (), sure, checks)
    return answer


def _answer(
    engine: Engine, question: object, conversation: Conversation | None, intent: str | None
) -> tuple[Answer, Question | None]:
    """The answer, and the question parsed (None for input that is no question)."""
    try:
        text = sanitize(question)
    except InvalidQuestion as error:
        shown = question if isinstance(question, str) and len(question) <= 200 else str(question)[:200]
        return declined(engine, shown, error=str(error)), None
    if conversation is not None:
        text = conversation.spell_out_item(text)  # "step 2" of the last answer's numbered list
    engine.linker.prefetch_meaning(text)
    model = conversation_model(engine, conversation) if conversation is not None else None
    near = conversation.last_layer if conversation is not None else None
    parsed = Question.parse(engine, text, intent if intent in COMPOSERS else None, model, near)
    if parsed.changes_topic and conversation is not None:
        # "unrelated, but how do I get wax out of a carpet?": a turn that says it leaves the
        # conversation's subject is read on its own, whatever "it" or "that" it says after.
        return _answer(engine, parsed.text, None, intent)
    guess = parsed.intent
    if (parsed.asks_for_person and guess.intent != intents.OWNER) or parsed.asks_for_date:
        # The graph holds no people or history: "who invented the GPU?" and "when did it last
        # erupt?" are outside it, while "who owns CrashLoopBackOff?" asks for a layer.
        return declined(engine, text, intent=guess.intent), parsed
    if guess.intent in ASKS_ABOUT_A_NAME and parsed.unknown_names:
        # "What is CXL memory pooling?": the thing to define or place is written as a name the
        # graph lacks; what it knows of the words around it ("memory") is not that thing.
        return declined(engine, text, intent=guess.intent, unknown=parsed.unknown_names), parsed
    if parsed.unknown_settings:
        # "what's the default NCCL_IB_TIMEOUT?": a value asked of a setting the graph does not
        # hold; what it knows of NCCL says nothing of it.
        return declined(engine, text, intent=guess.intent, unknown=parsed.unknown_settings), parsed
    if conversation is not None and about_the_declined(parsed, conversation):
        return declined(engine, text, intent=guess.intent), parsed
    if (
        guess.intent is None
        and conversation is not None
        and conversation.turns
        and intents.is_elliptical(text)
    ):
        # "and batch inference?"; after a triage tree, "and if the doc was in the context?" asks
        # for the branch it describes, not the whole tree again.
        before = conversation.turns[-1].intent
        guess = intents.IntentGuess(intents.OWNER if before == intents.TRIAGE else before, 0.8)
        parsed = parsed.with_intent(guess)
    report = report_carried_on(engine, parsed, conversation) if conversation is not None else None
    if report is not None:
        # "trace says it's requests queueing at the endpoint, not gen" after "latency tripled":
        # what a check found, read as part of the report it carries on, as if said in one go.
        carried, _ = _answer(engine, report, None, intent)
        if carried.answered:
            # The answer to a finding is about the problem it narrows, not the check that found
            # it: the problem leads its entities, so "which layers own that?" next asks about it.
            # More detail is still about the problem under way ("GPU utilization stays low" after
            # a slow first token is no question about TTFT). Neither is about what the report
            # found fine: after "retrieval and queueing flat", the retrieval branch its answer
            # lists is no subject of "what usually causes that?".
            finding = intents.reports_a_finding(parsed.text)
            under_way = conversation.focus if conversation.focus in engine.problems and not finding else None
            fine = ruled_out_terms(report)
            entities = sorted(
                carried.entities,
                key=lambda e: (
                    e.iri != under_way,
                    finding and e.iri not in engine.problems,
                    symptoms.checked(engine, e.iri, fine),
                ),
            )
            carried = replace(carried, entities=tuple(entities), question=text)
            return _about(engine, carried, conversation.focus), parsed
    linked = link(engine, parsed)
    candidates, from_conversation = linked, False
    if conversation is not None and conversation.turns:
        candidates, from_conversation = follow_up(engine, parsed, linked, conversation)
        if from_conversation:
            parsed = ruling_out_as_before(engine, parsed, conversation)
    following = next_in_triage(engine, parsed, conversation) if conversation is not None else None
    if following is not None:
        # "busbw is normal, so not the fabric... what's next on the list?": the branch of the
        # triage under way that the turns so far have not ruled out, answered as itself.
        guess = intents.IntentGuess(intents.OWNER, 1.0)
        parsed = parsed.with_intent(guess)
        candidates = [Candidate(following, 0.95, "conversation")]
        return _answer_linked(engine, parsed, guess, candidates, True, conversation, settled=True), parsed
    answer = _answer_linked(engine, parsed, guess, candidates, from_conversation, conversation)
    focus = None if from_conversation else unsaid_subject(engine, parsed, answer, conversation)
    if focus is not None and conversation is not None:
        # "how do I check whether the compute side came back?" after NoValidHost: no pronoun
        # points back, but alone it is nothing the graph answers, and the last answer holds its
        # words. Read in the conversation, as if it had said "it".
        parsed = ruling_out_as_before(engine, parsed, conversation)
        leaning = [Candidate(focus, 0.95, "conversation")] + [c for c in linked if c.iri != focus]
        retried = _answer_linked(engine, parsed, guess, leaning, True, conversation)
        # Read so, it must answer a word of the turn that the last answer did not say: the last
        # answer again ("any stretches for spine pain?" after leaf-spine switches) shares a word
        # with the turn, not its subject.
        new = set(terms(retried.answer)) - set(terms(conversation.turns[-1].answer))
        if retried.answered and (new & own_stems(parsed) or asks_only_for_checks(engine, parsed, focus)):
            answer = retried
    return answer, parsed


def _answer_linked(
    engine: Engine,
    parsed: Question,
    guess: intents.IntentGuess,
    candidates: list[Candidate],
    from_conversation: bool,
    conversation: Conversation | None,
    settled: bool = False,
) -> Answer:
    """The answer to a parsed question from its candidates (named, described, or the
    conversation's subject when ``from_conversation``); ``settled``: the first candidate is what
    the answer is about, and no passage competes with it."""
    text = parsed.text
    # A turn after others that stands apart from them is held to its own subject (see
    # reports.from_passages): "cool, deploy worked. whats a good carbonara recipe?" changes the topic.
    after_turns = not from_conversation and bool(conversation is not None and conversation.turns)
    if not candidates:
        ctx = Context(
            engine,
            text,
            guess.intent,
            guess.strength,
            [],
            parsed.model_hint,
            parsed=parsed,
            after_turns=after_turns,
        )
        answer = _run(ctx, guess.intent, only_textual=True)
        if answer is None:
            answer = declined(engine, text, intent=guess.intent)
    else:
        ctx = Context(
            engine,
            text,
            guess.intent,
            guess.strength,
            candidates,
            parsed.model_hint,
            from_conversation,
            parsed=parsed,
            after_turns=after_turns,
        )
        answer = _run(ctx, _refine_intent(ctx, guess.intent)) or declined(engine, text, intent=guess.intent)
    # An answer that fell back to a definition did not answer what was asked ("how do I check
    # it?" about something with no check of its own; a report naming NCCL in passing that asks no
    # definition): the passages matched to the whole question win a tie.
    # So did a report of a problem answered by where something it names sits ("models load
    # slowly from my NVMe SSD" is not asking where NVMe fits).
    weak = (
        _described(ctx)
        or (answer.intent == intents.DEFINE and guess.intent != intents.DEFINE)
        or (answer.intent == intents.FIT and guess.intent in (intents.OWNER, intents.DIAGNOSE))
    )
    if settled or _says_the_assumption_asked(guess, answer, text):
        proposal = None
    elif from_conversation:
        proposal = _in_context(engine, parsed, conversation, answer, candidates[0].iri)
        if (
            proposal is not None
            and answer.answered
            and proposal.answer.startswith(reports.HEDGE)
            and not weak
        ):
            # Statements only nearest to two turns' words at once ("fine, then which layer?"
            # meets "Full fine-tuning") do not replace an answer about the conversation's subject
            # that answers what was asked; a definition given only as a fallback ("what should we
            # insist on?" about Pickle) is no such answer.
            proposal = None
    else:
        proposal = _from_passages(ctx, answer)
        reasons = _models_reasons(ctx, answer)
        if proposal is not None and reasons and not reasons & {f.subject for f in proposal.facts}:
            proposal = None
    unanswered: tuple[str, ...] | None = None
    if weak and proposal is None:
        unanswered = _nothing_behind(engine, ctx, parsed)
        if unanswered == () and _is_report(parsed, guess.intent) and reports.checkable_named(ctx):
            unanswered = None  # only the passages were unsure: what it names, and its checks, stand
        elif unanswered == () and _names_several(parsed):
            unanswered = None  # "k8s and slurm on each node?": a question about what it names
        if unanswered is not None:
            answer = declined(engine, text, intent=guess.intent, unknown=unanswered)
    # "what is it?" and "what does it actually do?" ask for a definition and nothing more; "what
    # is the most common threat in MCP?" asks for one property of MCP.
    asked_to_define = guess.intent == intents.DEFINE and not set(parsed.residual_terms) - chatter_terms()
    chosen = compete.better(
        engine,
        parsed.content_terms,
        answer,
        proposal,
        weak,
        asked_to_define,
        parsed.naming,
        parsed.asks_for_remedy,
        parsed.asks_for_setting,
        parsed.asks_for_check,
        parsed.reports_change,
    )
    if chosen is answer and answer.answered and not ctx.from_conversation and answer.intent not in STRUCTURAL:
        chosen = reports.supplement(ctx, answer)
    # A problem report that names a technology gets its checks, whatever answered it; a
    # technology the question says is not in use gets what it relies on, before all else.
    if chosen.answered and not ctx.from_conversation and _is_report(parsed, guess.intent):
        chosen = reports.checks_named(ctx, chosen)
    if chosen.answered:
        chosen = reports.checks_asked(ctx, chosen)
    if chosen.answered and not ctx.from_conversation:
        chosen = reports.needs_named(ctx, chosen)
        chosen = scope.beyond_scope(ctx, chosen)
    if chosen.answered:
        # A later step of a flow is told with the steps before it, asked first or as a follow-up:
        # the jq filter reads the JSON plan that `terraform plan -out=tfplan` starts.
        chosen = reports.steps_named(ctx, chosen)
    answer = chosen
    # An answer that says every word of the question is about what the graph knows; only the
    # others are measured against the neighbouring areas it does not cover, which spares most
    # questions answered by name the model's encode.
    if from_conversation:
        judged = False
    elif answer.answered:
        judged = not _says_every_word(parsed, answer)
    else:
        judged = answer.error is None  # declined: measured only to say which area it belongs to
    outside = None
    if judged:
        hedged = answer.answered and answer.answer.startswith(reports.HEDGE)
        # A question saying more words the graph never uses than words it does is answered by its
        # names alone ("how do I make grafana panel titles bold with custom css?"): no surer than
        # a hedge.
        # Nor is one naming only ordinary words that are aliases ("default configs", "duplicate
        # value for resource"): an Android build or a laptop's sound says them too.
        weakly_named = bool(parsed.mentions) and all(
            _ordinary_name(engine, m.surface) for m in parsed.mentions
        )
        sure = not hedged and not mostly_foreign(engine, parsed) and not weakly_named
        margin = reports.OUTSIDE_MARGIN if sure else reports.HEDGED_OUTSIDE_MARGIN
        if hedged and not any(named_surely(m) for m in parsed.mentions):
            # A guess at a question naming nothing of the graph surely ("GPU usage drops to 0%
            # while I play", "the master node died and the cluster went red") rests on its
            # meaning alone: an outside area nearly as near outweighs it.
            margin = reports.NAMELESS_HEDGE_OUTSIDE_MARGIN
        outside = reports.outside_the_graph(engine, text, margin)
        if outside is None and hedged:
            # Only the closest statements, for a report whose whole text blends its sentences:
            # one of them may say plainly which outside area it is about.
            outside = reports.outside_in_a_sentence(engine, text)
    if outside is not None:
        answer = declined(engine, text, intent=guess.intent, unknown=unanswered or (), outside=outside)
    elif judged and answer.answered and reports.far_from_the_graph(engine, text):
        # Near no statement of the graph and no area it lists as outside: about something else.
        answer = declined(engine, text, intent=guess.intent, unknown=unanswered or ())
    if after_turns and answer.answered and new_foreign_topic(engine, parsed):
        # "ok and what should I set my home AC thermostat to?" after a question on rack power: a
        # new topic whose subject is a thing the graph lacks, whatever words of it the turn says.
        answer = declined(engine, text, intent=guess.intent)
    if from_conversation and answer.answered:
        answer = _about(engine, answer, candidates[0].iri)
    return answer


#: Intents that ask about one thing by its name: to define it or to say where it fits.
ASKS_ABOUT_A_NAME = frozenset({intents.DEFINE, intents.FIT})

#: Share (by rarity) of what a question asks beyond its names that a structural answer must say
#: to stand without competing with the passages.
STRUCTURAL_SAYS = 0.5

#: Intents whose answers enumerate or connect what the question names: the wording asked for that
#: shape, so a passage matching more words is no better answer.
STRUCTURAL = frozenset(
    {intents.LIST, intents.COMPARE, intents.CROSSWALK, intents.PATH, intents.STRESS, intents.TRIAGE}
)


def _says_the_assumption_asked(guess: intents.IntentGuess, answer: Answer, question: str) -> bool:
    """Whether the question asks what a layer assumes ("what does the orchestration layer take
    for granted about the accelerators?") and the answer says that layer's assumption: other
    statements of the layer matching more of the words (how it fails) answer something else."""
    return (
        answer.answered
        and guess.intent == intents.ASSUME
        and answer.intent == intents.ASSUME
        and intents.asks_for_assumption(question)
        and compete.rests_on(answer, SG.assumption)
    )


def _models_reasons(ctx: Context, answer: Answer) -> set[str]:
    """The design choices whose reason answers a why question naming their layer model, and
    bearing on what else it names ("why doesn't the nine-layer model make Kubernetes a layer?"):
    passages not about them (the crosswalk of the layer Kubernetes sits in, matching more of the
    words) say where things are, not why the model draws them so."""
    if not (answer.answered and answer.intent == intents.WHY and ctx.model_hint):
        return set()
    choices = set(knowledge.choices_of_named_model(ctx))
    return {f.subject for f in answer.facts if f.subject in choices and f.predicate == str(SG.reason)}


def _from_passages(ctx: Context, first: Answer) -> Answer | None:
    """The passage answerer's proposal against ``first``, with evidence of its own; none for a
    follow-up that leans on the conversation (its words alone do not say what it is about) or a
    structural question, nor when ``first`` already says (nearly) every word of the question.

    Passages are ranked by words and meaning at once: a first round by word overlap alone, which
    skipped the model when it could not beat ``first``, lost the answers only meaning finds.
    """
    # The shape of the answer given, not the guess from the wording: "what are the benefits of
    # X?" reads like a list question and is answered as where X fits.
    if (
        ctx.from_conversation
        or (first.answered and first.intent in STRUCTURAL and _says_all_named(ctx, first))
        or (not first.answered and _unknown_name(ctx.parsed) and not reports.explained_in_passing(ctx))
        # "what K8S-ROLE does L5 have?" names the column it is answered from.
        or (first.answered and placement.asks_k8s_role(ctx.question) and compete.rests_on(first, SG.runsIn))
    ):
        return None
    if first.answered:
        if _says_it_all(ctx, first):
            return None  # no passage could beat it by the margin: skip building and ranking them
        if not ctx.engine.semantic:
            ctx.evidence = Evidence(ctx.engine)
            return reports.from_passages(ctx, use_semantic=False)
    ctx.evidence = Evidence(ctx.engine)
    return reports.from_passages(ctx, alone=not first.answered)


def _says_every_word(parsed: Question, answer: Answer) -> bool:
    """Whether the answer says every word of the question."""
    return set(parsed.terms) <= set(terms(answer.answer))


def _says_it_all(ctx: Context, answer: Answer) -> bool:
    """Whether the answer says every word of the question, or so nearly that no other answer
    could cover more by ``compete.MARGIN``."""
    if _says_every_word(ctx.parsed, answer):
        return True
    return compete.coverage(ctx.engine, ctx.parsed.terms, answer.answer) >= 1 - compete.MARGIN


def _in_context(
    engine: Engine, parsed: Question, conversation: Conversation, first: Answer, focus: str
) -> Answer | None:
    """The passage answer to a follow-up read together with the turn it follows: "which scheduler
    plugin fixes it?" after "what is the gang-scheduling problem?" is matched as both at once, so
    the statements about what "it" is and what is asked of it meet (Volcano's gang scheduling);
    its own words alone name nothing."""
    previous = conversation.turns[-1].question
    combined = Question.parse(engine, f"{previous} {parsed.text}", parsed.intent.intent)
    # What is asked now is the follow-up, with or without its question mark: the turn before only
    # says what "it" is ("who drives that partitioning?" after "can I split one H100?").
    combined = replace(combined, asked_terms=tuple(parsed.terms))
    ctx = Context(
        engine,
        combined.text,
        parsed.intent.intent,
        parsed.intent.strength,
        link(engine, combined),
        combined.model_hint,
        parsed=combined,
        focus=focus,
        follow_up=parsed.text,
        # A choice among what was just said ("which one would I use?") is made by what defines
        # them: the last answer's definitions are the material, not repetition.
        said_before="" if parsed.chooses_among else conversation.turns[-1].answer,
    )
    if first.answered and (
        (first.intent in STRUCTURAL and not parsed.asks_for_setting)
        or compete.coverage(engine, parsed.terms, first.answer) >= 1 - compete.MARGIN
    ):
        # A listing asked for that shape, unless the turn asks for a setting, which no listing of
        # related things names; or nothing could cover the words better.
        return None
    return reports.from_passages(ctx, alone=not first.answered)


def _described(ctx: Context) -> bool:
    """Whether the intent's answer is about what the question describes rather than names: its
    first candidate came from word overlap or meaning."""
    return bool(ctx.candidates) and ctx.candidates[0].how not in NAMED_HOW


def _says_all_named(ctx: Context, answer: Answer) -> bool:
    """Whether ``answer`` names every entity the question names and says most of what the question
    asks of them: a structural answer (a path, a comparison, a listing) that leaves one out, or
    lists the things named while the question asks for something else of them ("what are the
    phases of moving our workloads?" is no request for the workloads), answers part of the
    question, so passages may compete."""
    said = {e.iri for e in answer.entities}
    # A layer model named to say whose layer a code is ("L5 in the 9-layer model") is no thing
    # the answer has to be about.
    qualifying = any(ref.model for ref in ctx.parsed.layer_refs)
    if not all(
        m.iri in said or (qualifying and ctx.catalog.is_a(m.iri, SG.LayerModel)) for m in ctx.parsed.mentions
    ):
        return False
    named = {t for m in ctx.parsed.mentions for t in terms(m.surface)}
    if qualifying:
        named |= set(terms(" ".join(model_naming_words(ctx.question))))
    unframed = terms(intents.without_cues(ctx.question, ctx.intent))
    # Words that say what is asked of a subject ("things", "stuff") are no part of it to be said.
    relational = relational_terms()
    asked = {t for t in unframed if t not in named and t in ctx.engine.lexical.idf and t not in relational}
    unsaid = asked - set(terms(answer.answer))
    # One word left unsaid is often where the list comes from ("... does the stack matrix list?").
    return len(unsaid) < 2 or compete.coverage(ctx.engine, list(asked), answer.answer) >= STRUCTURAL_SAYS


def _about(engine: Engine, answer: Answer, iri: str) -> Answer:
    """Say that a follow-up was answered about an earlier turn's subject, in JSON and in words."""
    label = engine.catalog.display(iri)
    text = (
        answer.answer
        if answer.answer.lower().startswith(label.lower())
        else f"About {label}: {answer.answer}"
    )
    return replace(answer, context=label, answer=clip(text))


def _refine_intent(ctx: Context, intent: str | None) -> str | None:
    """The entities can settle what the wording leaves open."""
    problems = ctx.of_type(*symptoms.PROBLEM_TYPES)
    first = ctx.candidates[0].iri if ctx.candidates else None
    if (
        intent in (None, intents.DEFINE)
        and problems
        and (intent is None or intents.looks_like_symptom(ctx.question))
    ):
        return intents.OWNER
    if intent == intents.FIT and problems and first == problems[0].iri:
        return intents.OWNER
    if (
        intent == intents.DIAGNOSE
        and problems
        and first == problems[0].iri
        and not ctx.catalog.is_a(first, SG.Cause)
        and len(ctx.parsed.terms) >= REPORT_TERMS
    ):
        # "pod in CrashLoopBackOff while it loads a 40GB model ... where do I look?" reports the
        # problem at length: what it is likely caused by comes with where to look, not instead.
        return intents.OWNER
    if intent == intents.OWNER and intents.asks_for_layer(ctx.question) and first and not problems:
        return intents.FIT  # "which layer owns Milvus?" asks where a technology sits
    if (
        intent in (None, intents.DEFINE)
        and first
        and ctx.catalog.is_a(first, SG.Workload)
        and "stress" in ctx.question.lower()
    ):
        return intents.STRESS
    if intent is None and first and ctx.catalog.is_a(first, SG.Diagnostic):
        return intents.DIAGNOSE
    if intent == intents.CROSSWALK and first and not ctx.of_type("Layer") and not problems:
        return intents.FIT  # "how does NCCL relate to the nine-layer model?": where NCCL sits in it
    if (
        first
        and ctx.model_hint
        and ctx.catalog.is_a(first, SG.Layer)
        and ctx.model_hint not in ctx.facts(first).iris(SG.inModel)
        and (ctx.from_conversation or intents.asks_for_layer(ctx.question))
    ):
        # A layer of one model asked of in the other ("is it the same number in the 8-layer map?"
        # after nine-layer L9): what it corresponds to there.
        return intents.CROSSWALK
    return intent


def _run(ctx: Context, intent: str | None, only_textual: bool = False) -> Answer | None:
    running = placement.layers_running(ctx)  # "which layers run on the host?": no entity named
    if running is None and placement.asks_k8s_role(ctx.question):
        running = placement.where_it_runs(ctx)  # "what K8S-ROLE does L5 have?"
    if running is not None:
        return running
    if intents.asks_layer_by_role(ctx.question) and not ctx.of_type("Layer"):
        # "Which layer handles evaluation and tracing?": the activities may name entities, but the
        # question asks for the layer whose responsibility they are.
        ctx.evidence = Evidence(ctx.engine)
        answer = placement.layer_for_text(ctx, min_score=LAYER_BY_ROLE_MIN)
        if answer is not None:
            return answer
    if only_textual:
        # No entity: only answerers that search the graph's text can help.
        order: tuple[Composer, ...] = ()
        if intent == intents.OWNER and intents.looks_like_symptom(ctx.question):
            order = (symptoms.owner_of_symptom, placement.layer_for_text)
        elif intent in (intents.OWNER, intents.ASSUME) or (intent == intents.FIT and ctx.model_hint):
            order = (placement.layer_for_text,)
        elif intent == intents.DIAGNOSE:
            order = (symptoms.diagnose,)
        elif intent in (intents.WHY, intents.PRACTICE):
            order = (knowledge.why, knowledge.practice)
        elif intent == intents.LIST and ctx.engine.class_named_in(ctx.question):
            order = (placement.list_members,)  # "what layer models are there?": a class, no entity
    else:
        primary = COMPOSERS.get(intent) if intent else None
        order = ((primary,) if primary else ()) + FALLBACKS.get(intent, FALLBACKS[None])
        # "what tool fixes that?" asks for the fix, whatever its other words cue ("tool"); "is
        # there a setting for that?" after a problem asks for the fixes that are settings.
        remedy: tuple[Composer, ...] = ()
        if ctx.parsed is not None and ctx.parsed.asks_for_remedy:
            remedy = (remedies.remedy, symptoms.remedy_described)
        elif ctx.parsed is not None and ctx.parsed.asks_for_setting and ctx.from_conversation:
            remedy = (remedies.remedy,)
        # "what does the GPU Operator deploy?": the edges of the relation its verb names answer
        # it before any answerer of the intent its opening words suggest ("what does X ..." reads
        # as a definition).
        # "which scheduler gives me gang scheduling?" asks for the thing of that kind providing it.
        order = (remedies.pushed_too_far, relations.answer, relations.of_kind_near, *remedy, *order)
    for composer in order:
        ctx.evidence = Evidence(ctx.engine)  # each attempt starts with no evidence of its own
        answer = composer(ctx)
        if answer is not None and answer.answer.strip():
            return answer
    return None
