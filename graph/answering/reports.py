"""Answers composed from the passages that best match the whole question.

The answerer behind problem reports and property questions ("what does L2 assume about the layer
below it?", "only 6 of the 8 workers got scheduled"): it ranks every statement of the graph against
the question (``passages``), says the best one, then what the graph knows around its subject, the
layers it sits in or is owned by, its likely causes and where to look, so that the answer carries
the place in the stack as well as the statement. A second passage joins when it covers words of
the question the first leaves out.
"""

from __future__ import annotations

import math
import re
from dataclasses import replace
from typing import TYPE_CHECKING

from rdflib import URIRef

from stackgraph.graph.answering import intents
from stackgraph.graph.answering.context import (
    INFERRED_OPENING,
    NAMED_HOW,
    STRONG_LINK,
    Context,
    inferred_note,
    named_surely,
    names_holding,
    said_facts,
)
from stackgraph.graph.answering.evidence import Evidence
from stackgraph.graph.answering.knowledge import expansion
from stackgraph.graph.answering.passages import Hit, Passage
from stackgraph.graph.answering.placement import describe_places, placements
from stackgraph.graph.answering.remedies import fixes_alongside, fixes_for, fixes_of, means_of, used_by
from stackgraph.graph.answering.text import (
    MAX_ANSWER_CHARS,
    SENTENCE_BREAK,
    clip,
    first_sentences,
    join,
    layer_phrase,
    one_line,
    prose,
    said_already,
    same_opening,
    sentence,
    unsaid,
)
from stackgraph.graph.lexical import chatter_terms, terms
from stackgraph.graph.model import Answer, Fact, SourceRef
from stackgraph.graph.store import SG

if TYPE_CHECKING:
    from collections.abc import Callable

    from stackgraph.graph.engine import Engine

SKOS_DEFINITION = "http://www.w3.org/2004/02/skos/core#definition"
#: Fused score below which the best passage is not taken as the answer.
MIN_SCORE = 0.35
#: Fused score below which a passage answer is worded as the closest match rather than asserted.
ASSERT_SCORE = 0.55
#: How a hedged answer opens. A hedged answer is still ``answered``: it offers the graph's
#: statements nearest the question, with their facts and sources, at a confidence of at most
#: ``HEDGED_CONFIDENCE``. Only a declined answer (``answered`` false, confidence 0) offers no
#: statement, just the names of the closest entities as suggestions.
HEDGE = "The closest the graph knows:"
#: Distinct words of the question a weakly matching best passage must contain to be offered at all:
#: a hedged answer resting on one shared word ("container", "vLLM") is a guess, not the closest
#: thing the graph knows.
HEDGE_WORDS = 2
#: Cosine below which a weakly matching best passage is no closest thing at all but a chance
#: meeting of words: the question is declined rather than offered it, hedged.
HEDGE_SEMANTIC = 0.1
#: How much nearer in meaning (cosine) to a topic outside the graph than to its best statement a
#: question must be for the engine to decline it, even when its words name a problem the graph
#: knows: nearer at all is enough ("the game leaks GPU memory every level" is a game's bug,
#: however much it reads like CUDA OOM). 0.05 answered such reports; measured over every set,
#: 0.0 declined ten more off-topic reports and four questions asked of the graph.
OUTSIDE_MARGIN = 0.0
#: The same for an answer the engine only offers as the closest it knows: it must be clearly
#: nearer the graph than any area the graph does not cover, or it is no closest thing but a guess
#: (a Windows pip failure on an NCCL wheel is as near packaging as it is to any statement here).
HEDGED_OUTSIDE_MARGIN = -0.015
#: The same for a hedge whose question names nothing of the graph surely: it rests on meaning
#: alone, so an outside area that is nearly as near (within 0.08 cosine) outweighs it.
NAMELESS_HEDGE_OUTSIDE_MARGIN = -0.08
#: The highest confidence a hedged answer carries.
HEDGED_CONFIDENCE = 0.5
#: Cosine the best passage needs to answer a question no other answerer could.
ALONE_SEMANTIC = 0.37
#: How far down the ranking a passage that stands alone may be found when the best one does not
#: (it must also score within ``CLOSE_SHARE`` of the best).
ALONE_RUNNERS = 3
#: Word match from which a passage says every word of the question the graph uses, in at least
#: ``SAYS_ALL_WORDS`` words; it may then stand alone from ``SAYS_ALL_SEMANTIC`` in meaning.
SAYS_ALL = 0.9
SAYS_ALL_WORDS = 2
SAYS_ALL_SEMANTIC = 0.3
#: Distinct words of the question the best passage must contain to answer alone whatever its
#: cosine (no question outside the graph, in any evaluation set, shares more than one).
ALONE_WORDS = 3
#: Without the model: share of the question's words the best passage needs to answer alone.
ALONE_COVERAGE = 0.6
#: A further passage joins the answer when it scores at least this share of the best one.
SECOND_SHARE = 0.5
#: A passage about another subject this close to the best one is said too, even if it adds no
#: word of the question: two tools described alike ("first tool to check in any GPU incident") are
#: both the answer, and on a long report the right passage is often second by a hair (the ranking
#: puts it in the top three far more often than first), so a close rival is said rather than lost.
TIE_SHARE = 0.6
#: A passage about yet another subject this close to the best one is said too: three statements
#: within a hair of each other are all the answer as far as the ranking can tell.
CLOSE_SHARE = 0.85
#: Whether a further passage must cover a word of the question the earlier ones do not.
REQUIRE_NEW = True
#: At most this many passages make one answer.
MAX_PASSAGES = 3
#: At most this many make a hedged one: no passage matches well, so the nearest few are offered
#: side by side rather than one asserted (a weak best is often second or third by a hair).
HEDGED_PASSAGES = 5
#: Share (by rarity) of the question's words left unsaid that a passage must add to supplement.
SUPPLEMENT_SHARE = 0.3
#: A passage matching the question at least this well is added to an answer that does not say it.
SUPPLEMENT_SCORE = 0.8
#: At most this many passages are added to another answerer's answer.
SUPPLEMENT_MAX = 2
#: Classes whose entities are problems: their answers say owner, causes and where to look.
PROBLEMS = ("Symptom", "Cause", "TriageBranch")


def rank(ctx: Context, k: int = 8, use_semantic: bool = True) -> list[Hit]:
    """The question's best passages, the entities it names acting as a prior, and for a
    follow-up the conversation's subject and what lies near it in the graph."""
    part_of = ctx.parsed.part_of if not ctx.focus else None
    # "which kubelet feature ...": the answer lies next to the kubelet, not in it.
    named = [c.iri for c in ctx.candidates if c.how in NAMED_HOW and c.iri != part_of]
    weak = {c.iri for c in ctx.candidates if c.how == "exact" and c.score < STRONG_LINK}
    # A layer model named beside something else frames the question ("how does NCCL relate to
    # the nine-layer model?"): what the model says of itself answers nothing asked of NCCL.
    frames = {
        m.iri for m in ctx.parsed.mentions if ctx.catalog.is_a(m.iri, SG.LayerModel) and m.iri not in named
    }
    key = (ctx.question, tuple(named), frozenset(weak), ctx.focus or part_of, use_semantic)
    found = ctx.ranked.get(key)
    if found is None or (len(found) < k and len(found) == RANKED_AT_LEAST):
        # Ranked once at a depth that serves every caller, then cut: a ranking's first k are
        # the same whatever k it was asked for.
        ranked = ctx.engine.passages.rank(
            ctx.question,
            named,
            weak=weak,
            # A branch for something absent that the question says it has ("no trace available"
            # of "the traces show ...") is no passage of what it describes.
            exclude=(frames if named else frozenset())
            | {b for b in ctx.engine.absences if ctx.contradicts(b)},
            k=max(k, RANKED_AT_LEAST),
            use_semantic=use_semantic,
            query_terms=ctx.parsed.ranking_terms,
            residual=ctx.parsed.residual_terms,
            near=_near(ctx, ctx.focus) if ctx.focus else _beside(ctx, part_of) if part_of else None,
            asked=ctx.parsed.asked_terms,
        )
        found = ctx.ranked[key] = _causes_in_seed_order(ctx, ranked)
    return found[:k]


#: How close to the best of them a problem's likely causes rank when the question's words tell
#: them apart not at all, and meaning only by chance.
SIBLING_TIE = 0.05
#: Edges from a problem to its causes, whose statements read alike but for the cause.
_CAUSE_EDGES = (str(SG.likelyCause), str(SG.suggestsCause))


def _causes_in_seed_order(ctx: Context, hits: list[Hit]) -> list[Hit]:
    """``hits`` with the leading statements "<problem> is likely caused by <cause>" in the order
    the problem's triage asks about their causes, when the question says no word of any of those
    causes: "GPU utilization is low during training" says the symptom, and which of its four causes
    reads a hair nearer in meaning is chance, while the seed's first question (is data loading
    starved?) is the first to rule out. Each place keeps its score."""
    if not hits or not hits[0].passage.relation or hits[0].passage.predicate not in _CAUSE_EDGES:
        return hits
    top = hits[0].passage
    places = [
        n
        for n, hit in enumerate(hits)
        if hit.passage.relation
        and hit.passage.subject == top.subject
        and hit.passage.predicate == top.predicate
        and hit.score >= hits[0].score - SIBLING_TIE
    ]
    if len(places) < 2:
        return hits
    said = set(ctx.parsed.terms) - set(terms(ctx.catalog.display(top.subject)))
    if any(said & set(terms(ctx.catalog.display(hits[n].passage.object))) for n in places):
        return hits  # the question names one of them: its words decide
    from stackgraph.graph.answering.symptoms import in_triage_order

    by_cause = {hits[n].passage.object: hits[n] for n in places}
    if len(by_cause) < len(places):
        return hits  # one cause stated twice: nothing to order
    ordered = in_triage_order(ctx.engine, top.subject, list(by_cause))
    out = list(hits)
    for n, cause in zip(places, ordered, strict=True):
        out[n] = replace(by_cause[cause], score=hits[n].score)
    return out


#: How deep ``rank`` ranks at first: the deepest any answerer reads (symptoms' CAUSE_POOL).
RANKED_AT_LEAST = 30


#: Prior of a follow-up's passages by the hops between their subject and the conversation's.
FOCUS_PRIORS = (0.3, 0.12, 0.05)
#: The same when the follow-up asks for another thing of a kind ("which scheduler plugin fixes
#: it?"): the answer lies next to the subject, not in it.
OTHER_PRIORS = (0.0, 0.12, 0.08)
#: "which <kind> ...", "what <kind> ...": a question asking for a thing of a kind.
_ASKS_FOR_A_KIND = re.compile(
    r"^\s*(?:and\s+|so\s+)?(?:which|what)\s+(?!is\b|are\b|was\b|were\b|does\b|do\b|did\b|about\b|if\b"
    r"|else\b|happens\b|should\b|can\b|could\b|would\b|will\b)[a-z]",
    re.IGNORECASE,
)


def _near(ctx: Context, focus: str) -> dict[str, float]:
    from stackgraph.graph.paths import distances

    priors = OTHER_PRIORS if _ASKS_FOR_A_KIND.search(ctx.follow_up or "") else FOCUS_PRIORS
    return {iri: priors[hops] for iri, hops in distances(ctx.engine, focus, len(priors) - 1).items()}


def _beside(ctx: Context, iri: str) -> dict[str, float]:
    """Priors for the things next to ``iri``, which a question asks for a part or tool of."""
    from stackgraph.graph.paths import distances

    return {
        other: PART_PRIORS[hops] for other, hops in distances(ctx.engine, iri, len(PART_PRIORS) - 1).items()
    }


#: Prior of a passage by the hops between its subject and the thing a question asks a part of.
PART_PRIORS = (0.0, 0.25, 0.05)


def _stands_alone(ctx: Context, hit: Hit, use_semantic: bool) -> bool:
    """Whether a passage may answer when no other answerer had anything: it shares enough words
    with the question, or is close to it in meaning."""
    if _corroborated(ctx, hit):
        return True
    # Meaning decides when it was measured, a cosine of zero or below included ("how tall is
    # Mount Everest?" shares "mount" with "CSI mounts storage" and nothing of its meaning).
    if use_semantic and ctx.engine.passages.semantic(ctx.question) is not None:
        # Or nearly so, by a statement that says every word of the question the graph uses, in
        # two or more words: "what formats could we use to shrink a 70B model?" is GGUF's "a
        # quantization format: shrinks 16-bit weights", though terse sentences sit apart in meaning.
        said_all = hit.lexical >= SAYS_ALL and len(shared_words(ctx, hit)) >= SAYS_ALL_WORDS
        return hit.semantic >= ALONE_SEMANTIC or (said_all and hit.semantic >= SAYS_ALL_SEMANTIC)
    # Without the model, coverage counts only the graph's words: ordinary words it never uses
    # ("how do I learn to paint?") say the question is about something else.
    return (
        ctx.engine.passages.coverage(ctx.parsed.terms, hit.passage) >= ALONE_COVERAGE
        and not ctx.parsed.words_beyond_names(ctx.engine)[0]
    )


def _corroborated(ctx: Context, hit: Hit) -> bool:
    """Whether the best passage shares enough distinct words with the question that the match
    cannot be chance: a long report in its own words ("the nova-compute service stops responding
    ... grep out the bogus service") is often far in meaning from the terse statement that
    answers it, while a question from outside the graph shares a word with it at most by accident
    ("how do I train my dog?" and a passage on training)."""
    return len(shared_words(ctx, hit)) >= ALONE_WORDS


def outside_the_graph(engine: Engine, question: str, margin: float = OUTSIDE_MARGIN) -> str | None:
    """The neighbouring topic the graph does not cover (``ontology/outside_topics.txt``) that the
    question is nearer in meaning to than to any of the graph's statements, if any: "pip cannot
    build the flash-attn wheel" is about Python packaging, however many words it shares with a
    container that dies on startup, so whatever matched those words is no answer to it. None
    with the model off. ``margin``: how much nearer the topic must be (``OUTSIDE_MARGIN``, or
    ``HEDGED_OUTSIDE_MARGIN`` for an answer the engine only offers as the closest it knows)."""
    cosines = engine.passages.semantic(question)
    if cosines is None or not len(cosines):
        return None
    found = engine.linker.semantic_index().outside(question)
    if found is None or found[1] < max(cosines) + margin:
        return None
    return found[0]


def far_from_the_graph(engine: Engine, question: str) -> bool:
    """Whether the question is far in meaning from every statement of the graph: no cosine reaches
    ``FAR_FROM_GRAPH``. A spreadsheet's sorted column or a paint program's merged layers shares a
    word or two with the stack ("cell", "layer", "image") and is near none of its statements,
    while a report about the stack, however noisy, comes nearer than that to something it says.
    The encoder reads English: a question mostly in another script is never judged far (its
    cosines are low whatever it asks). False with the model off."""
    if _mostly_other_script(question):
        return False
    cosines = engine.passages.semantic(question)
    if cosines is None or not len(cosines):
        return False
    return float(max(cosines)) < FAR_FROM_GRAPH


def _mostly_other_script(text: str) -> bool:
    """Whether most letters of ``text`` are outside the Latin script (Chinese, Japanese, Cyrillic)."""
    letters = [c for c in text if c.isalpha()]
    other = sum(1 for c in letters if ord(c) > LATIN_END)
    return bool(letters) and other * 2 > len(letters)


#: Below this cosine to its nearest statement of the graph, a question is about something else
#: (``far_from_the_graph``): over the evaluation sets' real reports, those answered rightly all
#: come nearer than this, and the ones nearest below it are a spreadsheet, a map widget, a paint
#: program and a React hook.
FAR_FROM_GRAPH = 0.27
#: The last code point of the Latin script's letters (Latin Extended-B); letters beyond it are of
#: other scripts.
LATIN_END = 0x024F


def outside_in_a_sentence(engine: Engine, question: str) -> str | None:
    """The neighbouring topic the graph does not cover that one of a report's sentences is nearer
    in meaning to than to any of the graph's statements, if any. A report's whole text blends its
    sentences: a browser's "images use GPU memory even with hardware acceleration disabled" is
    nearer web browsers than anything here, but averaged with its lines on GPU memory and the
    video card it is nearer the graph's statements on VRAM. Read only for an answer offered as the
    closest the graph knows; each sentence is encoded on its own (the question's vector stays
    cached). None with the model off or for a question of one sentence."""
    sentences = [
        s
        for s in SENTENCE_BREAK.split(prose(question).strip())
        if OUTSIDE_SENTENCE_WORDS <= len(s.split()) <= OUTSIDE_SENTENCE_MAX_WORDS
    ][:OUTSIDE_SENTENCES]
    if len(sentences) < 2 or engine.passages.semantic(question) is None:
        return None
    index = engine.linker.semantic_index()
    statements = engine.passages.semantic_index().vectors
    leaning: list[str | None] = []
    for said in sentences:
        vector = index.embedder.encode_query(said)
        found = index.outside_of(vector)
        inside = float((statements @ vector).max())
        if inside >= SENTENCE_INSIDE:
            # "fractional GPU usage for the embedding server in kubernetes": a sentence squarely
            # about the stack says what the report is about; another on scaling a server is context.
            return None
        leaning.append((found[0], found[1] - inside) if found is not None else None)
    return leans_outside(leaning)


def leans_outside(leaning: list[tuple[str, float] | None]) -> str | None:
    """The outside area a report's sentences lean to, from each sentence's nearest area and how
    much nearer it is than the graph's nearest statement (in order). The opening sentence says
    what a report is about; a later one alone ("I run mixtral model and using api/generate", a
    shade nearer exporting models than anything here) is context, unless it leans clearly
    outside or another leans outside too."""
    outside = [lean for lean in leaning if lean is not None and lean[1] > SENTENCE_OUTSIDE_MARGIN]
    if not outside:
        return None
    if leaning[0] in outside or len(outside) >= 2 or outside[0][1] > LATER_SENTENCE_OUTSIDE_MARGIN:
        return outside[0][0]
    return None


#: A report's sentences measured one by one against the neighbouring areas (``outside_in_a_sentence``):
#: the first few, where a report says what it is about. Each costs an encode (about 3 ms).
OUTSIDE_SENTENCES = 3
#: Words beyond which a "sentence" is a pasted paragraph or log line rather than one saying what
#: the report is about; it would cost a long encode for little.
OUTSIDE_SENTENCE_MAX_WORDS = 40
#: Words a sentence needs to be measured on its own: a short one ("i own infra not apps.") is
#: near whatever area shares one of its words.
OUTSIDE_SENTENCE_WORDS = 6
#: How much nearer (cosine) to an outside area than to the graph's nearest statement such a
#: sentence must be: as near to both is chance ("when I update a text file it takes 2-3 s").
SENTENCE_OUTSIDE_MARGIN = 0.01
#: How much nearer to an outside area a report's later sentence, alone in leaning there, must be.
LATER_SENTENCE_OUTSIDE_MARGIN = 0.05
#: A sentence this near (cosine) to one of the graph's statements is about the stack, whatever
#: the report's other sentences are near.
SENTENCE_INSIDE = 0.65


#: How many of the best passages are looked at for a subject whose name the question writes part of.
NAME_PART_HITS = 3


def _writes_part_of_a_name(ctx: Context, hits: list[Hit]) -> bool:
    """Whether the question writes a word that is part of the name of one of the best passages'
    subjects, no ordinary English, no name of its own and in few names ("RDMA" of RDMA verbs):
    "could not find any RDMA devices, falling back to TCP" is about the RDMA family however few
    of its words a statement shares, so its nearest statements are offered, hedged, not none."""
    # A word that names an entity whole ("vllm") is a name, not a part of others' names.
    named = {t for m in ctx.parsed.mentions for t in terms(m.surface)}
    written = {
        w
        for w in ctx.parsed.normalized.split()
        if w not in ctx.engine.common_words and not set(terms(w)) & named
    }
    holding: dict[str, list[str]] = {}  # the names holding each word, looked up once
    for hit in hits:
        for term in shared_words(ctx, hit):
            if not any(terms(w) == [term] for w in written):
                continue
            if term not in holding:
                holding[term] = names_holding(ctx.engine, term)
            if hit.passage.subject in holding[term]:
                return True
    return False


def _unrelated_in_meaning(ctx: Context, hit: Hit, use_semantic: bool) -> bool:
    """Whether a weak best passage means nothing like the question (``HEDGE_SEMANTIC``): "how much
    does an H100 cost retail?" shares "H100" and a word of a MIG passage, whose meaning is far from
    a price. Unknown without the model."""
    return (
        use_semantic
        and ctx.engine.passages.semantic(ctx.question) is not None
        and hit.semantic < HEDGE_SEMANTIC
    )


def _holds_what_is_asked_now(ctx: Context, hit: Hit) -> bool:
    """Whether a passage the last answer gave holds what the follow-up asks anew (its words the
    turn before did not say): "what do people use to run that on a schedule?" after an answer on
    RAG ingestion that named, third, the tool that runs the pipeline "on a schedule" wants that
    passage said again. The conversation's own subject's passage needs ``FOCUS_ASKED_WORDS`` of
    them ("so what has to be validated together?"): one word shared ("node") is chance."""
    if not ctx.follow_up:
        return False
    before = ctx.question.removesuffix(ctx.follow_up)
    asked = set(terms(ctx.follow_up)) - set(terms(before))
    needed = FOCUS_ASKED_WORDS if hit.passage.subject == ctx.focus else 1
    return len(asked & shared_words(ctx, hit)) >= needed


#: Words a follow-up asks anew that the conversation's subject's passage, said already, must hold
#: to be said again.
FOCUS_ASKED_WORDS = 2


def shared_words(ctx: Context, hit: Hit) -> set[str]:
    """The question's terms the passage holds, its subject's names included."""
    return ctx.engine.passages.shared_terms(ctx.parsed.terms, hit.passage)


def from_passages(
    ctx: Context, alone: bool = False, min_score: float = MIN_SCORE, use_semantic: bool = True
) -> Answer | None:
    """The answer the best passages give, or None when they match too little.

    ``alone``: no other answerer had anything to say, so this answer would stand unchallenged; the
    best passage must then be close in meaning too (with the model off: cover most of the
    question), or a question from outside the graph ("why is the sky blue?") gets asserted.
    """
    hits = rank(ctx, use_semantic=use_semantic)
    if ctx.said_before:
        # A follow-up is not answered with a definition the answer before it gave ("why does that
        # matter?" after one wants the consequence). Other statements it gave may be just what
        # is asked next ("can't I put the limits in the prompt?": "in the loop, not in a prompt").
        fresh = [
            h
            for h in hits
            if h.passage.predicate != SKOS_DEFINITION
            or not said_already(statement(h.passage), ctx.said_before)
            or _holds_what_is_asked_now(ctx, h)
        ]
        hits = fresh or hits
    if not hits or hits[0].score < min_score:
        return None
    if alone and not _stands_alone(ctx, hits[0], use_semantic):
        # The best passage can be a chance meeting of words ("the whole job" of an ECC stall, for
        # "why does one flaky link drag the whole job down") while a runner-up nearly as good
        # means what is asked: that one leads, and the chance match is dropped.
        best = hits[0].score
        runner = next(
            (
                h
                for h in hits[1:ALONE_RUNNERS]
                if h.score >= CLOSE_SHARE * best and _stands_alone(ctx, h, use_semantic)
            ),
            None,
        )
        if runner is None:
            return None
        hits = [runner, *(h for h in hits[1:] if h is not runner)]
    # Only a guess: a weak match sharing at most a word with the question; or, in a conversation,
    # one for a new question about a thing outside the graph that names nothing it has ("cool,
    # deploy worked. whats a good carbonara recipe to celebrate?"): the topic changed, and the
    # nearest statements are not about that thing. Asked alone, such a phrase is often a report's
    # own setting ("a new build", "a small model") and the offer stays.
    if hits[0].score < ASSERT_SCORE and (
        (
            len(shared_words(ctx, hits[0])) < HEDGE_WORDS
            and not _writes_part_of_a_name(ctx, hits[:NAME_PART_HITS])
        )
        or (
            ctx.after_turns
            and not ctx.parsed.mentions
            and ctx.parsed.foreign_subject(ctx.engine, ordinary=True)
        )
        or _unrelated_in_meaning(ctx, hits[0], use_semantic)
    ):
        ctx.passages_guess = True
        return None
    if ctx.parsed.asks_for_setting:
        hits = _setting_first(ctx, hits)
    chosen = choose(ctx, hits)
    chosen = lead_with_problem(ctx, chosen)
    if ctx.parsed.asks_for_setting:
        chosen = [_as_setting(ctx, hit, hits) for hit in chosen]
    parts: list[str] = []
    subjects: list[str] = []
    for n, hit in enumerate(chosen):
        passage = hit.passage
        if any(_same_statement(passage, c.passage) for c in chosen[:n]):
            # Another entity states the same sentence: name it rather than repeat the sentence.
            echo = _echo(ctx, passage, " ".join(parts))
            if echo:
                _record(ctx, passage)
                parts.append(echo)
                subjects.append(passage.subject)
            continue
        said = " ".join(parts)
        text = _spelled_out(ctx, passage, said)
        if not passage.relation:
            # A statement whose opening sentence the answer gave already (a definition said
            # beside a cause a moment ago) says only the rest.
            rest = unsaid(passage.object, said)
            if not rest:
                # Said already for another entity ("BGP / iBGP / ECMP" says what ECMP does):
                # the entity still counts as a subject of the answer, for where it sits.
                _record(ctx, passage)
                if passage.subject not in subjects:
                    subjects.append(passage.subject)
                continue
            if rest != passage.object and text.endswith(passage.object):
                text = f"{text[: len(text) - len(passage.object)]}{rest}"
        _record(ctx, passage)
        parts.append(sentence(first_sentences(text, 420)))
        definition = _definition(ctx, passage)
        rest = unsaid(definition, " ".join(parts)) if definition else ""
        if rest:
            parts.append(sentence(first_sentences(rest, 240)))
        if passage.subject not in subjects:
            subjects.append(passage.subject)
    # Asked for a layer of something described, not named ("which tier is responsible for
    # graded regression checks?"), where the best passage's subject sits is the answer: it
    # follows that passage, not the others, which a long answer would clip it behind.
    leading = 1 if subjects and not ctx.candidates and intents.asks_for_layer(ctx.question) else 0
    for n, subject in enumerate(subjects[:MAX_PASSAGES]):
        where = _whereabouts(ctx, subject, " ".join(parts))
        if where and n < leading:
            parts.insert(1, where)
        elif where:
            parts.append(where)
    confidence = 0.35 + 0.6 * min(1.0, hits[0].score)
    text = " ".join(parts)
    if hits[0].score < ASSERT_SCORE:
        # A weak match is offered as what the graph knows nearest, not asserted as the answer.
        text = f"{HEDGE} {text}"
        confidence = min(confidence, HEDGED_CONFIDENCE)
    intent = intents.DIAGNOSE if _is_problem(ctx, subjects[0]) else (ctx.intent or intents.DEFINE)
    return ctx.answer(text, intent, confidence)


def choose(ctx: Context, hits: list[Hit]) -> list[Hit]:
    """The passages that make the answer: the best, then those close enough that add words of the
    question. The closest passage about another subject joins even without new words
    (``TIE_SHARE``); in a hedged answer every such close one does, up to ``HEDGED_PASSAGES``: no
    passage matched well, so the nearest few are offered side by side, not one asserted. Slots
    still free then go to statements about other subjects within ``CLOSE_SHARE`` of the best that
    do not restate a chosen one: the ranking cannot tell them apart from the best."""
    best = hits[0]
    hedged = best.score < ASSERT_SCORE
    most = HEDGED_PASSAGES if hedged else MAX_PASSAGES
    question_terms = set(ctx.parsed.terms)
    covered = question_terms & set(terms(_words(ctx, best.passage)))
    chosen = [best]
    rivals = 0
    for hit in hits[1:]:
        if hit.score < SECOND_SHARE * best.score or len(chosen) >= most:
            break
        new = (question_terms & set(terms(_words(ctx, hit.passage)))) - covered
        subjects = {c.passage.subject for c in chosen}
        rival = hit.passage.subject not in subjects
        tie = rival and (rivals == 0 or hedged) and hit.score >= TIE_SHARE * best.score
        rivals += rival
        if any(_same_statement(hit.passage, c.passage) for c in chosen):
            label = ctx.catalog.display(hit.passage.subject).lower()
            if label in " ".join(c.passage.text for c in chosen).lower():
                continue  # the same thing said again by an entity the answer names already
        elif _restates(hit.passage, chosen) and (
            hit.passage.subject in {c.passage.subject for c in chosen}
            or ctx.catalog.is_a(hit.passage.subject, SG.Layer)
            or ctx.catalog.display(hit.passage.subject).lower()
            in " ".join(statement(c.passage) for c in chosen).lower()
        ):
            continue  # a thing said again in other words, by something the answer names already
        if new or tie or not REQUIRE_NEW:
            chosen.append(hit)
            covered |= new
    # Room left: a statement about another subject within a hair of the best is said too.
    for hit in hits[1:]:
        if len(chosen) >= most or hit.score < CLOSE_SHARE * best.score:
            break
        if hit.passage.subject in {c.passage.subject for c in chosen}:
            continue
        texts = [statement(c.passage) for c in chosen]
        if any(
            said_already(t, statement(hit.passage)) or said_already(statement(hit.passage), t) for t in texts
        ):
            continue  # it restates what a chosen one says ("because a collective completes when ...")
        chosen.append(hit)
    return chosen


#: Share of a passage's words the chosen passages must say already for it to restate them.
RESTATED_SHARE = 0.8
#: Statements shorter than this many words are never taken as restating others.
RESTATED_MIN_WORDS = 6


def _restates(passage: Passage, chosen: list[Hit]) -> bool:
    """Whether a passage's statement is mostly words the chosen ones say already, however worded
    ("liveness probes tuned for a web service kill the pod repeatedly" after "... will kill a
    slow-starting AI pod repeatedly"): it would repeat them."""
    words = set(terms(statement(passage)))
    said = {t for c in chosen for t in terms(statement(c.passage))}
    return len(words) >= RESTATED_MIN_WORDS and len(words & said) >= RESTATED_SHARE * len(words)


def problem_terms(ctx: Context) -> set[str]:
    """The question's words other than the names it gives: what it says about what it names
    ("can not use rdma_client ... with calico" says "rdma_client", "hca", "mode" of Calico)."""
    named = {t for m in ctx.parsed.mentions for t in terms(m.surface)}
    return set(ctx.parsed.terms) - named


def in_passing(ctx: Context, hit: Hit) -> bool:
    """Whether a passage is about an entity the question names and says none of the question's
    other words: it says what the named thing is, not what the question asks of it."""
    named = {m.iri for m in ctx.parsed.mentions}
    if hit.passage.subject not in named or hit.passage.subject in ctx.engine.problems:
        return False  # a problem the question names is its subject, whatever else it says
    if any(m.iri == hit.passage.subject and "_" in m.surface for m in ctx.parsed.mentions):
        return False  # a setting written as an identifier ("gpu_memory_utilization=1") is the subject
    asked = problem_terms(ctx)
    # A question that says nothing besides its names ("how does ops L2 map to the nine-layer
    # model?") asks about them: no passage speaks to it better than theirs.
    return bool(asked) and not (asked & set(terms(hit.passage.text)))


#: How a statement explains a word it uses in passing: "SYS means the traffic crosses the CPU
#: root complex", "TPM stands for tokens per minute".
_EXPLAINS = r"\s+(?:means|stands\s+for|is\s+short\s+for)\b"


def explained_in_passing(ctx: Context) -> bool:
    """Whether a statement of the graph says what one of the question's words means, though no
    entity is named by it: "what does SYS mean?" is answered by the topology check's "SYS means
    the traffic crosses the CPU root complex"."""
    asked = set(ctx.parsed.terms) - chatter_terms()
    words = {w for w in re.findall(r"[A-Za-z][\w#+.-]*", ctx.question) if set(terms(w)) & asked}
    if not words:
        return False
    pattern = re.compile(r"\b(?:" + "|".join(map(re.escape, words)) + r")" + _EXPLAINS, re.IGNORECASE)
    # Only the passages that say one of the words at all: the index's postings list them.
    index = ctx.engine.passages
    saying = {i for word in words for term in terms(word) for i in index.postings.get(term, ())}
    return any(pattern.search(index.passages[i].text) for i in saying)


def lead_with_problem(ctx: Context, chosen: list[Hit]) -> list[Hit]:
    """``chosen`` with the passages that speak to the question's problem words first: a report
    naming a technology in passing is answered by what matches its problem, and the technology's
    own definition (ranked high by the name alone) comes after it."""
    return sorted(chosen, key=lambda hit: in_passing(ctx, hit))


def statement(passage: Passage) -> str:
    """What a passage states, without the subject's name in front: two entities (or an entity
    and its alias) often carry the same sentence, which must be said once, whoever says it."""
    return passage.text if passage.relation else passage.object


def _spelled_out(ctx: Context, passage: Passage, said: str) -> str:
    """The passage with its subject's acronym spelled out the first time the answer names it
    ("SSE (Server-Sent Events): ..."), as a definition answer names it. A statement its subject's
    name already says is the name alone: a triage branch "Throughput dropped: data loading
    starved" answering "data loading starved" is not said twice."""
    label = ctx.catalog.display(passage.subject)
    text = passage.text
    if (
        not passage.relation
        and passage.object.lower() in label.lower()
        and text == f"{label}: {passage.object}"
    ):
        text = label
    spelled = expansion(ctx, passage.subject)
    if (
        not spelled
        or not text.startswith(label)
        or spelled.lower() in text.lower()
        or label.lower() in said.lower()
    ):
        return text
    return f"{label} ({spelled}){text[len(label) :]}"


def _echo(ctx: Context, passage: Passage, said: str) -> str:
    """How to say a passage whose sentence the answer already gives for another entity: the
    entity's name is then the news ("Treat every tool as an authenticated API endpoint" for the
    same reason; all-gather defined like all-reduce), unless the answer names it already (an
    alias of the entity that said it)."""
    label = ctx.catalog.display(passage.subject)
    if label.lower() in said.lower():
        return ""
    if passage.relation or passage.text.startswith(f"{label}: "):
        return f"The same holds for {label}."
    return sentence(label)  # a practice or a reason: its name says what to do


def _as_setting(ctx: Context, hit: Hit, hits: list[Hit]) -> Hit:
    """The hit itself, or, asked for a setting ("engine flag for that?"), the hit stating the same
    sentence about a configuration parameter: "chunked prefill" and `enable_chunked_prefill` are
    described alike, and the flag is what was asked."""
    if ctx.catalog.is_a(hit.passage.subject, SG.ConfigurationParameter):
        return hit
    return next(
        (
            other
            for other in hits
            if ctx.catalog.is_a(other.passage.subject, SG.ConfigurationParameter)
            and _same_statement(other.passage, hit.passage)
        ),
        hit,
    )


#: Asked for a setting, the best hit about one leads when it scores this share of the best hit,
#: among the first ``SETTING_RUNNERS``.
SETTING_SHARE = 0.65
SETTING_RUNNERS = 8


def _setting_first(ctx: Context, hits: list[Hit]) -> list[Hit]:
    """The hits with the best one about a setting first, when one is asked for ("which engine
    setting addresses that?") and it ranks within ``SETTING_SHARE`` of the best: a report that
    names its engine in passing matches the engine's own statements by that name, while what it
    asks for is one of the engine's knobs."""
    if not hits or _about_a_setting(ctx, hits[0], hits):
        return hits
    floor = SETTING_SHARE * hits[0].score
    for hit in hits[1:SETTING_RUNNERS]:
        if hit.score >= floor and _about_a_setting(ctx, hit, hits):
            return [hit, *(h for h in hits if h is not hit)]
    # The knob that mitigates the cause the best hit states: "latency increased is likely caused
    # by batching" and enable_chunked_prefill mitigates batching. Its own statement leads.
    top = hits[0]
    if not top.passage.relation:
        return hits
    index = ctx.engine.passages
    fixes = fixes_of(ctx, top.passage.object, settings_only=True)
    defined = [p for p in map(index.definition_of, fixes) if p is not None]
    if not defined:
        return hits
    # Several knobs mitigate one cause: the one whose statement shares most of the report's words.
    passage = max(defined, key=lambda p: index.coverage(ctx.parsed.ranking_terms, p))
    ctx.evidence.fact(passage.subject, SG.mitigates, top.passage.object)
    return [Hit(passage, top.score, top.lexical, top.semantic), *hits]


def _about_a_setting(ctx: Context, hit: Hit, hits: list[Hit]) -> bool:
    """Whether the hit is about a setting, or states what one of the hits about a setting states."""
    subject = _as_setting(ctx, hit, hits).passage.subject
    return ctx.catalog.is_a(subject, SG.ConfigurationParameter)


def _same_statement(a: Passage, b: Passage) -> bool:
    return same_opening(statement(a), statement(b))


def _definition(ctx: Context, passage: Passage) -> str | None:
    """The subject's definition, said beside a passage that is not itself the definition: "X is a
    parameter of vLLM" or a note means little without what X is."""
    if passage.predicate == SKOS_DEFINITION:
        return None
    rec = ctx.catalog.get(passage.subject)
    if rec is None or not rec.definition:
        return None
    ctx.evidence.fact(passage.subject, SKOS_DEFINITION, rec.definition)
    return rec.definition


def _words(ctx: Context, passage: Passage) -> str:
    return f"{ctx.catalog.display(passage.subject)} {passage.text}"


def _record(ctx: Context, passage: Passage) -> None:
    ctx.evidence.entity(passage.subject)
    ctx.evidence.queries(ctx.facts(passage.subject))
    if passage.relation:
        ctx.evidence.entity(passage.object)
        ctx.evidence.fact(passage.subject, passage.predicate, URIRef(passage.object))
    else:
        ctx.evidence.fact(passage.subject, passage.predicate, passage.object)


def _is_problem(ctx: Context, iri: str) -> bool:
    return any(ctx.catalog.is_a(iri, SG[c]) for c in PROBLEMS)


def _whereabouts(ctx: Context, iri: str, said: str) -> str:
    """Where the subject sits in the stack, and for a problem its causes and checks, leaving out
    what the answer already says."""
    facts = ctx.facts(iri)
    label = ctx.catalog.display(iri)
    low = said.lower()
    parts: list[str] = []
    if _is_problem(ctx, iri):
        from stackgraph.graph.answering.symptoms import (
            _by_match,
            _layers_by_model,
            in_triage_order,
            where_to_look,
            where_to_look_beside,
        )

        owners = facts.iris_by_edge(SG.ownedBy, SG.leadsTo)
        if owners:
            for layer, edge in owners.items():
                ctx.evidence.fact(iri, edge, layer)
                ctx.evidence.entity(layer)
            parts.append(f"{label} is owned by {_layers_by_model(ctx, list(owners))}.")
        held = facts.iris_by_edge(SG.likelyCause, SG.suggestsCause)
        # In the order the triage asks about them, the one the question describes first: of five
        # causes of slow collectives, "2 nodes slower than 1" describes the undersized fabric.
        causes = [cause for cause, _ in _by_match(ctx, in_triage_order(ctx.engine, iri, list(held)))]
        names = [ctx.catalog.display(c) for c in causes if ctx.catalog.display(c).lower() not in low]
        if names:
            for cause, edge in held.items():
                ctx.evidence.fact(iri, edge, cause)
            parts.append(f"Likely cause: {join(names[:3], 'or')}.")
        # What fixes it, or else what fixes its one likely cause: the 2am reader's next question.
        # Asked for a remedy outright ("any solution?"), what fixes the first of several causes
        # that has a fix is said too: the question wants a fix more than the list of causes.
        so_far = f"{said} {' '.join(parts)}"
        fixes = fixes_for(ctx, iri, so_far)
        asked = ctx.parsed is not None and ctx.parsed.asks_for_remedy
        if not fixes and (len(causes) == 1 or asked):
            for cause in causes:
                fixes = fixes_for(ctx, cause, so_far)
                if fixes:
                    break
        if fixes and fixes.lower() not in low:
            parts.append(fixes)
        look = [w for w in where_to_look(ctx, iri, facts) if w.lower() not in low]
        if look:
            parts.append(f"Where to look: {join(look[:3])}.")
        elif not facts.iris(SG.whereToLook) + facts.iris(SG.diagnosedBy):
            beside = where_to_look_beside(ctx, iri, low)
            if beside:
                parts.append(beside)
        conclusion = facts.text(SG.conclusion)
        if conclusion and conclusion[:40].lower() not in low:
            ctx.evidence.fact(iri, SG.conclusion, conclusion)
            parts.insert(0, sentence(f"{label} points to {first_sentences(conclusion, 240)}"))
        return " ".join(parts)
    if ctx.catalog.is_a(iri, SG.Layer):
        return ""
    means = means_of(ctx, iri)
    if means and means.lower() not in low:
        parts.append(means)
    fixes = fixes_alongside(ctx, iri, said)
    if fixes:
        parts.append(fixes)
    users = used_by(ctx, iri, said)
    if users:
        parts.append(users)
    command = facts.text(SG.commandText)
    if command and command not in said:
        ctx.evidence.fact(iri, SG.commandText, command)
        parts.append(f"Run `{one_line(command)}`.")
    places = placements(ctx, iri)
    if places:
        parts.append(sentence(f"{label} fits in {describe_places(ctx, places, ctx.model_hint)}"))
        return " ".join(parts)
    targets = facts.iris_by_edge(SG.appliesTo, SG.ownedBy)
    layers = [t for t in targets if ctx.catalog.is_a(t, SG.Layer)]
    if layers:
        for layer in layers:
            ctx.evidence.fact(iri, targets[layer], layer)
            ctx.evidence.entity(layer)
        phrases = join([layer_phrase(ctx.catalog, t, with_model=True) for t in layers[:3]])
        parts.append(sentence(f"It applies to {phrases}"))
    return " ".join(parts)  # the command to run, said even when nothing places the subject


def supplement(ctx: Context, answer: Answer) -> Answer:
    """``answer`` plus the passages that match the question best and that it does not say.

    A question about one property of an entity ("what is the most common threat in MCP
    development?", "what are the benefits of GPUDirect Storage?") is often answered by where the
    entity fits or by its definition; the statements that match the whole question are then added
    rather than lost: those that cover words the answer leaves out, or that match the question
    clearly better than the rest. Word overlap only: no model encode for this.
    """
    said = answer.answer.lower()
    missing = set(ctx.parsed.terms) - set(terms(answer.answer))
    if not missing:
        return answer  # every word of the question is answered: nothing to add
    weight = ctx.engine.lexical.weight
    used = {(f.subject, f.predicate, f.object) for f in answer.facts}
    said_terms = set(terms(answer.answer))
    added: list[Passage] = []
    for hit in rank(ctx, k=4, use_semantic=False):
        passage = hit.passage
        if (
            len(added) >= SUPPLEMENT_MAX
            or hit.score < MIN_SCORE
            or said_already(statement(passage), said)
            or any(_same_statement(passage, a) for a in added)
            # The answer rests on this very statement, or says all its words in its own way
            # ("Where to look: NCCL tests and switch telemetry" for "nccl-tests, switch telemetry").
            or (passage.subject, passage.predicate, passage.object) in used
            or set(terms(statement(passage))) <= said_terms
        ):
            continue
        adds = missing & set(terms(_words(ctx, passage)))
        share = math.fsum(weight(t) for t in adds) / math.fsum(weight(t) for t in missing) if missing else 0.0
        if share >= SUPPLEMENT_SHARE or hit.score >= SUPPLEMENT_SCORE:
            added.append(passage)
            missing -= adds
    if not added:
        return answer
    ctx.evidence = Evidence(ctx.engine)
    text = answer.answer
    for passage in added:
        # Only what the answer does not say yet: a design choice's note often restates it.
        extra = sentence(unsaid(first_sentences(passage.text, 300), text))
        if said_already(statement(passage), text) or not extra:
            continue
        if len(text) + len(extra) + 7 > MAX_ANSWER_CHARS:
            break
        _record(ctx, passage)
        text += f" {'Also: ' if text == answer.answer else ''}{extra}"
    if text == answer.answer:
        return answer
    return replace(
        answer,
        answer=text,
        facts=answer.facts + tuple(f for f in ctx.evidence.facts if f not in answer.facts),
        entities=answer.entities + tuple(e for e in ctx.evidence.entities if e not in answer.entities),
        sources=answer.sources + tuple(s for s in ctx.evidence.sources if s not in answer.sources),
    )


#: Checks said for each technology a problem report names.
NAMED_CHECKS = 2
#: At most this many of the technologies a report names get their checks said.
CHECKED_TECHNOLOGIES = 2


#: Characters of an answer's own statements kept when room is made for its problem's checks.
PROBLEM_CHECKS_KEEP = 700


def checks_named(ctx: Context, answer: Answer) -> Answer:
    """``answer`` plus how to check the technologies a problem report names, when the graph has a
    check for them and the answer gives none: "the InfiniBand interface is up but the status is
    Down" wants `ibstat` whatever passage answered it, since the 2am reader's next step is a
    command to run. The checks go before what is cut to make room for them; a check said only in
    what is cut is said again. Where to look for the problem the answer leads with is said too,
    when the question reports one ("two nodes slower than one"; not "is a prompt limit enough?")
    and there is room for it: the answer's own statements are cut for it only so far."""
    lead = next((e.iri for e in answer.entities if not e.code), None)
    if lead in ctx.engine.problems and intents.looks_like_symptom(ctx.question):
        # Said with what each check shows when that fits, else by their names alone: the
        # command to run matters more than the gloss on it.
        for brief in (False, True):
            found = _with_checks(ctx, answer, lead, keep=PROBLEM_CHECKS_KEEP, brief=brief)
            if found is not None:
                return found
    return _with_checks(ctx, answer, None, keep=MAX_ANSWER_CHARS // 3) or answer


def checks_asked(ctx: Context, answer: Answer) -> Answer:
    """``answer`` plus where to look for the problem it is about, when the question asks how to
    check ("how do i confirm it's actually disk bound, what tools?") and the answer names none of
    that problem's checks: the answer may have said the problem, its cause and its layers at such
    length that its checks were cut, and the checks are what was asked. The problem is the first
    the answer is about; a follow-up's too, whose answer rests on an earlier turn."""
    if ctx.parsed is None or not ctx.parsed.asks_for_check:
        return answer
    problem = next((e.iri for e in answer.entities if not e.code and e.iri in ctx.engine.problems), None)
    if problem is None or _gives_a_check(ctx, answer):
        return answer
    for brief in (False, True):
        found = _with_checks(ctx, answer, problem, keep=PROBLEM_CHECKS_KEEP, brief=brief)
        if found is not None:
            return found
    return answer


def _gives_a_check(ctx: Context, answer: Answer) -> bool:
    """Whether the answer's text runs or names one of the checks it is about already ("`kubectl
    logs <pod> --previous`" for the crashed container's output): that answers a question asking
    how to check, whatever other checks its problem has."""
    from stackgraph.graph.answering.symptoms import diagnostic_name

    said = answer.answer.lower()
    return any(
        _says_check(ctx, said, e.iri, diagnostic_name(ctx, e.iri, record=False), brief=True)
        for e in answer.entities
        if ctx.catalog.is_a(e.iri, SG.Diagnostic)
    )


def _with_checks(
    ctx: Context, answer: Answer, problem: str | None, keep: int, brief: bool = False
) -> Answer | None:
    """``answer`` with the checks ``_checks_unsaid`` tells, or None when there are none or they
    do not fit without cutting the body below ``keep`` characters."""
    return with_told(ctx, answer, lambda kept: _checks_unsaid(ctx, kept, problem, brief), keep)


def with_told(ctx: Context, answer: Answer, tell: Callable[[str], str], keep: int) -> Answer | None:
    """``answer`` with what ``tell`` says of the part of its body kept (its facts go to a fresh
    ``ctx.evidence``), or None when it says nothing or does not fit without cutting the body
    below ``keep`` characters."""
    body = _body(answer.answer)
    kept = body
    # Each round cuts the body for what is told and the note on what is inferred, said again of
    # what is left; a check said only in what was cut is said in the next round's checks.
    for _ in range(3):
        told = tell(kept)
        if not told:
            return None
        kept_facts = said_facts(body, kept, list(answer.facts))
        new = [f for f in ctx.evidence.facts if f not in kept_facts]
        text = f"{kept} {told}"
        said_note = inferred_note(text, kept_facts + new)
        over = len(text) + len(said_note) - MAX_ANSWER_CHARS
        if over <= 0:
            break
        kept = _clip_keeping_causes(body, len(kept) - over)
        if len(kept) < keep:
            return None
    else:
        return None
    return replace(
        answer,
        answer=text + said_note,
        facts=tuple(kept_facts + new),
        entities=answer.entities + tuple(e for e in ctx.evidence.entities if e not in answer.entities),
        sources=_sources(answer, kept_facts, new),
    )


def _clip_keeping_causes(body: str, limit: int) -> str:
    """``body`` cut to ``limit`` at a sentence boundary, keeping each pair of sentences that says
    where a problem is owned and what likely causes it (``_CAUSE_SENTENCE``): the checks made room
    for are read against the cause, and a long answer's tail ("Slow node is owned by L8 and L9.
    Likely cause: PCIe bottleneck or thermal throttling.") is where the cause is said. The pairs
    cut away are said after what is kept, in their order."""
    causes = _CAUSE_SENTENCE.findall(body)
    cut = clip(body, limit)
    lost = [c for c in causes if c not in cut]
    if not lost:
        return cut
    room = limit - sum(len(c) + 1 for c in lost)
    if room <= 0:
        return cut
    cut = clip(body, room)
    lost = [c for c in causes if c not in cut]
    return " ".join([cut, *lost])


#: The sentences of ``_whereabouts`` saying where a problem is owned and its likely causes; a
#: cause said without its problem is not kept (it would read as the cause of whatever sentence it
#: came to follow).
_CAUSE_SENTENCE = re.compile(r"(?<=\. )[^.]+ is owned by [^.]+\. Likely causes?: [^.]+\.")


def _checks_unsaid(ctx: Context, said: str, problem: str | None = None, brief: bool = False) -> str:
    """ "To check X: ..." for ``problem`` (where to look for it) and the first
    ``CHECKED_TECHNOLOGIES`` technologies the question names, whose checks ``said`` does not give;
    their facts go to a fresh ``ctx.evidence``. Two with the same checks share one sentence ("To
    check RoCE v2 and NCCL: ..."). ``brief``: the checks' names without what each shows."""
    from stackgraph.graph.answering.symptoms import diagnostic_name

    said = said.lower()
    ctx.evidence = Evidence(ctx.engine)
    told: list[tuple[list[str], list[str], list[str]]] = []  # (technologies, checks, lines)
    # The answer's problem by where to look and what diagnoses it; a technology by its checks.
    asked = [(problem, (SG.whereToLook, SG.diagnosedBy))] if problem else []
    asked += [(iri, (SG.diagnosedBy,)) for iri in checkable_named(ctx)]
    for iri, edges in asked:
        by_edge = ctx.facts(iri).iris_by_edge(*edges)
        named = [(check, diagnostic_name(ctx, check, record=False)) for check in by_edge]
        # Checks the answer gives already ("nccl-tests is the standard tool to isolate whether a
        # slowdown is ...") are not repeated; one it only names ("ibstat reports its ports") is.
        unsaid_checks = [
            (check, name) for check, name in named if not _says_check(ctx, said, check, name, brief)
        ]
        checks = [check for check, _ in unsaid_checks[:NAMED_CHECKS]]
        if not checks:
            continue
        same = next((t for t in told if t[1] == checks), None)
        if same is None and len(told) == CHECKED_TECHNOLOGIES:
            break
        for check in checks:
            ctx.evidence.fact(iri, by_edge[check], check)
        if same is not None:
            same[0].append(ctx.catalog.display(iri))
            continue
        lines = []
        for check, name in unsaid_checks[:NAMED_CHECKS]:
            ctx.evidence.entity(check)
            diagnostic_name(ctx, check)
            shows = None if brief else ctx.facts(check).text(SG.shows)
            if shows:
                ctx.evidence.fact(check, SG.shows, shows)
                lines.append(f"{name} ({first_sentences(shows, 160).rstrip('.')})")
            else:
                lines.append(name)
        told.append(([ctx.catalog.display(iri)], checks, lines))
    readings = []
    for check in checks_run(ctx):
        # "compute service list shows every nova-compute row as enabled": the report read a check;
        # what that check shows says how to read what it found ("Status is administrative intent,
        # State is reality"), which an answer giving only the command leaves out.
        shows = ctx.facts(check).text(SG.shows)
        if shows and not _shows_said(said, shows):
            ctx.evidence.entity(check)
            ctx.evidence.fact(check, SG.shows, shows)
            readings.append(
                f"{diagnostic_name(ctx, check, record=False)} shows: {first_sentences(shows, 320)}"
            )
    return " ".join(
        [sentence(f"To check {join(names)}: {join(lines, 'or')}") for names, _, lines in told]
        + [sentence(line) for line in readings]
    )


def needs_named(ctx: Context, answer: Answer) -> Answer:
    """``answer`` plus what a technology the question says is not in use relies on: "GPU Direct
    RDMA Disabled for HCA 0" or "can't use gdrdma between two nodes" wants the host kernel module
    the GPUDirect RDMA path relies on (nvidia-peermem), which a passage on RDMA fabrics matching
    more of the report's words never names."""
    if not intents.may_say_not_in_use_or_needs(ctx.question):
        return answer
    return with_told(ctx, answer, lambda kept: _needs_unsaid(ctx, kept), MAX_ANSWER_CHARS // 3) or answer


def steps_named(ctx: Context, answer: Answer) -> Answer:
    """``answer`` plus the earlier steps of a flow whose later step it tells ("the jq filter over
    the JSON plan lists every resource the apply would destroy"), when it does not give them: a
    report that Terraform keeps destroying a node is answered by the check it has not run, and
    that check starts with ``terraform plan -out=tfplan``."""
    commands = [e.iri for e in answer.entities if ctx.catalog.is_a(e.iri, SG.Command)]
    if not commands:
        return answer
    return (
        with_told(ctx, answer, lambda kept: _steps_unsaid(ctx, kept, commands), MAX_ANSWER_CHARS // 3)
        or answer
    )


def _steps_unsaid(ctx: Context, said: str, commands: list[str]) -> str:
    """ "The steps before the X: run `a`, then `b`." for the first of ``commands`` with earlier
    steps whose command lines ``said`` does not give; their links go to a fresh ``ctx.evidence``."""
    ctx.evidence = Evidence(ctx.engine)
    for command in commands:
        steps = ctx.steps_before(command)
        lines = [one_line(ctx.facts(s).text(SG.commandText) or ctx.catalog.label(s)) for s in steps]
        if steps and not all(line in said for line in lines):
            for step in steps:
                ctx.evidence.entity(step)
            short = ctx.catalog.label(command).split(":")[0]
            return sentence(f"The steps before the {short}: run {', then '.join(f'`{x}`' for x in lines)}")
        ctx.evidence = Evidence(ctx.engine)
    return ""


def _needs_unsaid(ctx: Context, said: str) -> str:
    """ "X relies on Y: <what Y is>" for the first technology the question names surely and says
    is not in use (``intents.says_not_in_use``) or asks what it needs
    (``intents.asks_what_it_needs``), when ``said`` leaves out something it relies on
    (``sg:uses``) or, asked what it needs, pairs with (``sg:pairsWith``, either way: PFC pairs
    with RoCE); Y is the first such, preferring what exists for X, then what the question does
    not name."""
    said_terms = set(terms(said))
    named = {m.iri for m in ctx.parsed.mentions}
    ctx.evidence = Evidence(ctx.engine)
    tried: set[tuple[str, str]] = set()
    for mention in ctx.parsed.mentions:
        if not named_surely(mention) or (mention.iri, mention.surface) in tried:
            continue
        tried.add((mention.iri, mention.surface))
        asks = intents.asks_what_it_needs(ctx.question, mention.surface)
        if not (asks or intents.says_not_in_use(ctx.question, mention.surface)):
            continue
        facts = ctx.facts(mention.iri)
        uses = facts.iris(SG.uses)
        paired = facts.iris(SG.pairsWith)
        # What pairs with it is needed beside it when asked for ("what do I need to use RoCE?":
        # PFC); it is no reason it is out of use ("CUDA Driver UNAVAILABLE" is no want of cuDNN).
        pairs = [p for p in [*paired, *facts.incoming(SG.pairsWith)] if p not in uses] if asks else []
        needs = uses + pairs
        # What exists for the thing (its definition names it: the module "that the GPUDirect
        # RDMA path relies on") comes first, then what the question does not name: the user who
        # says they loaded the module may still not have it where the path needs it.
        label = ctx.catalog.label(mention.iri).lower()
        unsaid = sorted(
            (n for n in needs if not set(terms(ctx.catalog.label(n))) <= said_terms),
            key=lambda n: (label not in (ctx.facts(n).text(SKOS_DEFINITION) or "").lower(), n in named),
        )
        if not unsaid:
            continue
        for need in uses:
            ctx.evidence.fact(mention.iri, SG.uses, need)
        for other in pairs:
            if other in paired:
                ctx.evidence.fact(mention.iri, SG.pairsWith, other)
            else:
                ctx.evidence.fact(other, SG.pairsWith, mention.iri)
        first = unsaid[0]
        ctx.evidence.entity(first)
        about = ctx.facts(first).text(SKOS_DEFINITION)
        phrases = []
        if uses:
            phrases.append(f"relies on {join([ctx.catalog.label(n) for n in uses])}")
        if pairs:
            phrases.append(f"pairs with {join([ctx.catalog.label(n) for n in pairs])}")
        line = f"{ctx.catalog.label(mention.iri)} {' and '.join(phrases)}"
        if about:
            ctx.evidence.fact(first, SKOS_DEFINITION, about)
            line += f". {ctx.catalog.label(first)}: {first_sentences(about, 320)}"
        return sentence(line)
    return ""


def checks_run(ctx: Context) -> list[str]:
    """The checks a report says it ran and what they found ("ibstat says Active", "compute
    service list shows every row enabled"): checks named surely and followed, within two words,
    by a word of finding (``intents.says_it_found``)."""
    return list(
        dict.fromkeys(
            m.iri
            for m in ctx.parsed.mentions
            if named_surely(m)
            and ctx.catalog.is_a(m.iri, SG.Diagnostic)
            and intents.says_it_found(ctx.question, m.surface)
        )
    )[:NAMED_CHECKS]


def _shows_said(said: str, shows: str) -> bool:
    """Whether an answer says (most of) what a check shows."""
    words = set(terms(shows))
    return not words or len(words & set(terms(said))) >= CHECK_SAID * len(words)


def checkable_named(ctx: Context) -> list[str]:
    """The technologies the question names surely (not a problem, layer or check itself) that
    the graph has checks for, in the order named."""
    found: dict[str, None] = {}
    for mention in ctx.parsed.mentions:
        iri = mention.iri
        if (
            named_surely(mention)
            and iri not in ctx.engine.problems
            and not ctx.catalog.is_a(iri, SG.Layer)
            and not ctx.catalog.is_a(iri, SG.Diagnostic)
            and ctx.facts(iri).iris(SG.diagnosedBy)
        ):
            found[iri] = None
    return list(found)


def _sources(answer: Answer, kept: list[Fact], new: list[Fact]) -> tuple[SourceRef, ...]:
    """The answer's sources less those only the facts cut away cited, then the new facts'."""
    dropped = {s for f in answer.facts if f not in kept for s in f.sources}
    still = {s for f in kept for s in f.sources}
    old = [s for s in answer.sources if s not in dropped or s in still]
    return tuple(dict.fromkeys(old + [s for f in new for s in f.sources]))


#: Share of the words of what a check shows that an answer naming the check must say for the
#: check to count as given.
CHECK_SAID = 0.6


def _says_check(ctx: Context, said: str, check: str, name: str, brief: bool = False) -> bool:
    """Whether the answer gives the check: runs its command in full, or names it and says (most
    of) what it shows; ``brief``: names it (checks told by name alone add nothing to that)."""
    if name.startswith("`") and name.lower() in said:
        return True
    if _as_words(name.strip("`")) not in _as_words(said):
        return False
    return brief or _shows_said(said, ctx.facts(check).text(SG.shows) or "")


def _as_words(text: str) -> str:
    """Text compared by its words: "nccl-tests" says "NCCL tests"."""
    return " ".join(re.split(r"[\s_-]+", text.lower()))


def _body(text: str) -> str:
    """An answer's text before its closing note on what is inferred."""
    at = text.find(INFERRED_OPENING)
    return text if at < 0 else text[:at]
