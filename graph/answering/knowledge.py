"""Answers about what things are and why: definitions, reasons, practices, paths."""

from __future__ import annotations

import re
from dataclasses import replace

from stackgraph.graph.answering import intents
from stackgraph.graph.answering.context import (
    DESCRIBED_COVERAGE,
    NAME_PART,
    SEMANTIC_RELEVANT,
    Candidate,
    Context,
)
from stackgraph.graph.answering.evidence import fetch
from stackgraph.graph.answering.placement import describe_places, placements, settings_for
from stackgraph.graph.answering.remedies import means_of
from stackgraph.graph.answering.text import (
    first_sentences,
    join,
    layer_phrase,
    sentence,
    without_leading_label,
)
from stackgraph.graph.lexical import terms
from stackgraph.graph.model import Answer
from stackgraph.graph.store import SG

SKOS = "http://www.w3.org/2004/02/skos/core#"
DCT_IS_PART_OF = "http://purl.org/dc/terms/isPartOf"
#: How strongly a design choice of a layer model the question names, bearing on what else it
#: names, counts as the reason asked for: below a choice the question names outright (1.0).
MODEL_CHOICE_SCORE = 0.6
#: A design choice bearing on more things than this ("some concerns cut across everything")
#: is no reason for any one of them.
CHOICE_MAX_TARGETS = 5
#: An acronym, perhaps with its version ("RoCE v2").
_ACRONYM = re.compile(r"^[A-Z0-9][A-Za-z0-9/+-]{0,9}( v\d+)?$")


def expansion(ctx: Context, iri: str) -> str | None:
    """For an acronym label, its spelled-out alternative label ("TTFT" -> "Time To First Token")."""
    rec = ctx.catalog.get(iri)
    if rec is None or not _ACRONYM.match(rec.label):
        return None
    longer = sorted(
        (a for a in rec.alt_labels if len(a) > len(rec.label) + 3 and " " in a), key=lambda a: (len(a), a)
    )
    for alt in longer:
        initials = "".join(w[0] for w in re.findall(r"[A-Za-z]+", alt)).lower()
        if initials.startswith(rec.label.lower()[:2]):
            return alt
    return longer[0] if longer else None


def define(ctx: Context) -> Answer | None:
    if not ctx.candidates:
        return None
    cand = ctx.candidates[0]
    if cand.how == NAME_PART:
        return _name_part(ctx)
    iri = cand.iri
    if ctx.catalog.is_a(iri, SG.Layer):
        from stackgraph.graph.answering.placement import layer_overview

        return layer_overview(ctx, iri)
    ref = ctx.evidence.entity(iri)
    facts = ctx.facts(iri)
    name = ref.label
    spelled = expansion(ctx, iri)
    if spelled and spelled.lower() not in name.lower():
        name = f"{name} ({spelled})"
    definitions = [d for d in facts.texts(SKOS + "definition")]
    definitions.sort(key=len, reverse=True)
    parts = []
    if definitions:
        ctx.evidence.fact(iri, SKOS + "definition", definitions[0])
        parts.append(f"{name}: {first_sentences(definitions[0], 520)}")
        if len(definitions) > 1 and definitions[1][:40] not in definitions[0]:
            parts.append(first_sentences(definitions[1], 260))
    else:
        said = _first_statement(facts)
        if said:
            # No definition: its first note, or what it shows, assumes, is for ..., says what
            # it is better than its type does ("nvidia-smi topo -m shows: GPU-to-GPU link types").
            prop, verb, text = said
            ctx.evidence.fact(iri, prop, text)
            parts.append(f"{name}{' ' + verb if verb else ''}: {first_sentences(text, 420)}")
        else:
            parts.append(sentence(f"{name} is a {ref.type}"))
    places = placements(ctx, iri)
    if places:
        parts.append(sentence(f"It fits in {describe_places(ctx, places, ctx.model_hint)}"))
    for reason in facts.texts(SG.reason)[:1]:
        ctx.evidence.fact(iri, SG.reason, reason)
        parts.append(sentence(f"Why: {first_sentences(reason, 300)}"))
    related = _relations(ctx, iri, facts)
    if related:
        parts.append(related)
    settings = settings_for(ctx, iri)
    if settings:
        parts.append(settings)
    if ctx.catalog.is_a(iri, SG.Symptom) or ctx.catalog.is_a(iri, SG.Cause):
        from stackgraph.graph.answering.symptoms import explain_problem

        return ctx.answer(explain_problem(ctx, iri), intents.DEFINE, 0.5 + 0.5 * cand.score)
    text = " ".join(p if p.endswith((".", "!", "?", ")")) else p + "." for p in parts)
    return ctx.answer(text, intents.DEFINE, 0.5 + 0.5 * cand.score)


#: What says what an entity is when it has no definition, best first, with how it reads after
#: the entity's name (as the passages say it).
_DESCRIBING = (
    SG.note,
    SG.shows,
    SG.responsibility,
    SG.action,
    SG.conclusion,
    SG.assumption,
    SG.failureMode,
    SG.reason,
)


#: Most entities a word's answer lists by name, and places after the first it defines.
NAME_PART_LISTED = 4
NAME_PART_PLACED = 3


def _name_part(ctx: Context) -> Answer | None:
    """What a word that is part of several names is in this graph ("what's RDMA?"): the names that
    hold it, the first (shortest) of them defined, and where the next ones fit. The graph has no
    entry for the word alone, and the answer says so rather than pass one of them off as it."""
    named = [c for c in ctx.candidates if c.how == NAME_PART]
    (term,) = set(ctx.parsed.terms)
    labels = []
    for cand in named[:NAME_PART_LISTED]:
        ctx.evidence.entity(cand.iri)
        labels.append(layer_phrase(ctx.catalog, cand.iri))
    # The word as the names write it ("rdma" is RDMA), else as the question does.
    said = (w for label in labels for w in re.findall(r"[\w./+-]+", label) if terms(w) == [term])
    word = next(said, term)
    opening = f"{word} has no entry of its own in the graph; it is part of the names of {join(labels)}."
    # The first defined as if named in full (its own answer, not this one again).
    first = define(replace(ctx, candidates=[replace(named[0], how="exact")]))
    if first is None:
        return None
    parts = [opening, first.answer]
    for cand in named[1:NAME_PART_PLACED]:
        layers = [layer_phrase(ctx.catalog, p.layer) for p in placements(ctx, cand.iri)]
        if layers:
            parts.append(sentence(f"{ctx.catalog.label(cand.iri)} fits in {join(layers)}"))
    return ctx.answer(" ".join(parts), intents.DEFINE, first.confidence * 0.8)


def _first_statement(facts) -> tuple[str, str, str] | None:
    """The entity's first describing statement: (property, verb, text)."""
    from stackgraph.graph.answering.passages import TEXT_VERBS

    for prop in _DESCRIBING:
        texts = facts.texts(prop)
        if texts:
            return str(prop), TEXT_VERBS.get(str(prop), ""), texts[0]
    return None


#: Relations worth a sentence in a definition, with how to say them.
_RELATION_WORDS = (
    (SG.equivalentOf, "is the equivalent of"),
    (SG.alternativeTo, "is an alternative to"),
    (SG.pairsWith, "pairs with"),
    (SG.successorOf, "succeeds"),
    (SG.implements, "implements"),
    (SG.mitigates, "mitigates"),
    (SG.parameterOf, "is a parameter of"),
    (SKOS + "broader", "is a kind of"),
)
#: The same read from the other end: what implements or deploys the entity, what kinds of it
#: there are ("Guardrails include Llama Guard and NeMo Guardrails": the tools a reader can reach
#: for; "NVIDIA Fabric Manager is deployed by Ansible": what puts it on a node; "Pickle has an
#: alternative in safetensors": what to use instead).
_INCOMING_WORDS = (
    (SG.implements, "is implemented by"),
    (SG.alternativeTo, "has an alternative in"),
    (SG.deploys, "is deployed by"),
    (SKOS + "broader", "includes"),
)


def _relations(ctx: Context, iri: str, facts) -> str:
    phrases = []
    for prop, words in _RELATION_WORDS:
        targets = facts.iris(prop)
        if targets:
            for target in targets:
                ctx.evidence.fact(iri, prop, target)
            phrases.append(f"{words} {join([ctx.catalog.label(t) for t in targets[:4]])}")
    for prop, words in _INCOMING_WORDS:
        sources = facts.incoming(prop)
        if sources:
            for source in sources[:4]:
                ctx.evidence.fact(source, prop, iri)
            phrases.append(f"{words} {join([ctx.catalog.label(t) for t in sources[:4]])}")
    if not phrases:
        return ""
    return sentence(f"{ctx.catalog.label(iri)} {join(phrases[:3])}")


def _best_reasoned(ctx: Context, classes: tuple[str, ...], fixes: bool = False) -> Candidate | None:
    """The design choice or practice the question is about: named, else by word overlap and
    meaning. ``fixes``: a why asked of a problem no cause is given for counts what fixes it."""
    named = ctx.of_type(*classes)
    if named:
        return named[0]
    lexical, semantic = ctx.described(ctx.engine.entities_of(*classes))
    named_iris = {c.iri for c in ctx.candidates}

    def relevant(iri: str) -> bool:
        # Found by a word or two ("why is the sky blue" -> "Blue-green cutover")? Not relevant,
        # unless it applies to something the question names.
        applies = set(ctx.facts(iri).iris(SG.appliesTo)) & named_iris
        return bool(applies) or ctx.engine.lexical.coverage(ctx.question, iri) >= DESCRIBED_COVERAGE

    scores: dict[str, float] = {}
    for iri, score in lexical:
        if relevant(iri):
            scores[iri] = max(scores.get(iri, 0.0), score)
    for iri, score in semantic:
        if score >= SEMANTIC_RELEVANT:
            scores[iri] = max(scores.get(iri, 0.0), score * 0.9)
    if "DesignChoice" in classes:
        for iri in choices_of_named_model(ctx):
            scores[iri] = max(scores.get(iri, 0.0), MODEL_CHOICE_SCORE)
    for cand in ctx.candidates if fixes else ():
        # A problem no cause is given for is explained by the reason of what fixes it: "why does
        # that happen?" after a runaway agent loop is answered by the hard iteration limit's
        # reason (such loops are the default failure), not by a statement sharing "happen".
        facts = ctx.facts(cand.iri)
        if cand.iri in ctx.engine.problems and not facts.iris_by_edge(SG.likelyCause, SG.suggestsCause):
            for fix in facts.incoming(SG.mitigates):
                if any(ctx.catalog.is_a(fix, SG[c]) for c in classes) and ctx.facts(fix).texts(SG.reason):
                    scores[fix] = max(scores.get(fix, 0.0), cand.score)
    # Practices that apply to an entity the question names, or fix a problem it names or the
    # conversation is about ("why does that happen?" after a runaway agent loop), rank first
    # among close scores.
    for iri in list(scores):
        if _applies_or_fixes(ctx, iri) & named_iris:
            scores[iri] += 0.25
    if not scores:
        return None
    asked = set(ctx.parsed.terms) if ctx.parsed is not None else set()

    def rank(kv: tuple[str, float]) -> tuple[float, bool, int, str]:
        # Equal scores go to what states a reason ("why is parallelism its own layer?" is
        # answered by the design choice, not a practice that applies to L3 too), then to the
        # one whose name says more of the question's words.
        iri, score = kv
        named = {t for label in ctx.catalog.all_labels(ctx.catalog.get(iri)) for t in terms(label)}
        return (round(score, 6), bool(ctx.facts(iri).texts(SG.reason)), len(asked & named), iri)

    iri, score = max(scores.items(), key=rank)
    return Candidate(iri, min(1.0, score), "lexical") if score >= 0.3 else None


def choices_of_named_model(ctx: Context) -> list[str]:
    """Design choices of a layer model the question names that bear on something else it names,
    or on the layer of the model that thing sits in: "why doesn't the nine-layer model make
    Kubernetes one of the stacked layers?" is answered by the choice that orchestration is a
    control plane, which the question's words alone ("stacked", "layers") do not reach."""
    # What the question's words name ("storage" names S, whatever else was described), or, for
    # a follow-up, what the conversation is about.
    named = {m.iri for m in ctx.parsed.mentions} if ctx.parsed is not None else set()
    if ctx.from_conversation:
        named |= {c.iri for c in ctx.candidates}
    if ctx.model_hint:
        named.add(ctx.model_hint)
    found = []
    for iri in ctx.engine.entities_of("DesignChoice"):
        facts = fetch(ctx.engine, iri)  # a filter, not evidence: its queries are not the answer's
        applies = set(facts.iris(SG.appliesTo))
        if not set(facts.iris(DCT_IS_PART_OF)) & named or len(applies) > CHOICE_MAX_TARGETS:
            continue
        for other in named - set(facts.iris(DCT_IS_PART_OF)):
            layers = {p.layer for p in placements(ctx, other, record=False)}
            if other in applies or layers & applies:
                found.append(iri)
                break
    return found


def why(ctx: Context) -> Answer | None:
    choice = _best_reasoned(ctx, ("DesignChoice", "Practice"), fixes=True)
    problems = ctx.of_type("Symptom", "TriageBranch", "Cause")
    if (
        choice is not None
        and ctx.from_conversation
        and choice.how == "lexical"
        and len(ctx.engine.lexical.shared_terms(ctx.parsed.terms, choice.iri)) < 2
        and not _bears_on(ctx, choice.iri, problems or ctx.candidates[:1])
    ):
        # "Why does that happen?" after NoValidHost: a practice found by one shared word
        # ("happens") that neither applies to nor fixes the problem is no reason for it; the
        # problem's causes are. "why do they care about that?" after trust_remote_code: the
        # reason is in what the setting is (a supply-chain risk), not in a practice that shares
        # the word "care".
        choice = None
    if choice is None or (problems and choice.how == "lexical" and choice.score < 0.6):
        if problems:
            from stackgraph.graph.answering.symptoms import owner_of_symptom

            return owner_of_symptom(ctx)
        for cand in ctx.candidates:
            reasons = ctx.facts(cand.iri).texts(SG.reason)
            if reasons:
                choice = cand
                break
        if choice is None:
            # Asked of the conversation's subject, a why no sentence answers is answered by what
            # the subject is ("a supply-chain security consideration"), not by a practice.
            return best_sentence(ctx) or (define(ctx) if ctx.from_conversation else None)
    passage = _best_passage(ctx)
    if (
        passage
        and choice.how != "exact"
        and passage[2] > choice.score + 0.15
        and choice.iri not in choices_of_named_model(ctx)
    ):
        return best_sentence(ctx)  # the reason is said of something that is no practice
    return explain_reasoned(ctx, choice, intents.WHY)


def _applies_or_fixes(ctx: Context, iri: str) -> set[str]:
    """What a practice or design choice applies to (``sg:appliesTo``) or fixes (``sg:mitigates``)."""
    facts = ctx.facts(iri)
    return set(facts.iris(SG.appliesTo)) | set(facts.iris(SG.mitigates))


def _bears_on(ctx: Context, iri: str, problems: list[Candidate]) -> bool:
    """Whether a practice or design choice applies to or fixes one of ``problems``."""
    return bool(_applies_or_fixes(ctx, iri) & {p.iri for p in problems})


def _best_passage(ctx: Context) -> tuple[str, str, float] | None:
    """(entity, sentence, score): the sentence of the graph that best matches the question."""
    from stackgraph.graph.lexical import terms

    # A follow-up's words alone ("why does it need to exist?") say what is asked, not of what:
    # the sentence is sought among the entity the conversation is about.
    # "Why would I want it for training?": the sentence is about "it", the conversation's
    # subject; what the turn names beside it ("training") says what for.
    about = [c.iri for c in ctx.candidates[:1]] if ctx.from_conversation else None
    hits = ctx.engine.lexical.search(ctx.question, candidates=about, k=3)
    if not hits:
        return None
    q_terms = set(ctx.parsed.terms)
    best: tuple[str, str, float] | None = None
    for iri, score in hits:
        for text in ctx.engine.lexical.sentences.get(iri, []):
            overlap = len(q_terms & set(terms(text))) / max(1, len(q_terms))
            combined = 0.5 * score + 0.5 * overlap
            if best is None or combined > best[2]:
                best = (iri, text, combined)
    return best


def best_sentence(ctx: Context) -> Answer | None:
    """Answer with the one sentence of the graph that says what the question asks, and whose it is."""
    passage = _best_passage(ctx)
    if passage is None or passage[2] < 0.45:
        return None
    iri, text, score = passage
    ref = ctx.evidence.entity(iri)
    ctx.evidence.fact(iri, SKOS + "definition", text)
    return ctx.answer(f"{ref.display}: {first_sentences(text, 600)}", intents.WHY, 0.4 + 0.5 * score)


def explain_reasoned(ctx: Context, choice: Candidate, intent: str) -> Answer | None:
    facts = ctx.facts(choice.iri)
    ref = ctx.evidence.entity(choice.iri)
    parts = [sentence(ref.label)]
    said = ref.label.lower()
    for prop in (SG.reason, SKOS + "definition", SG.note):
        for text in facts.texts(prop)[:1]:
            text = without_leading_label(text, ref.label)
            if (
                text.strip().lower() == ref.label.strip().lower()
                or _repeats(text, said)
                or (prop == SG.note and ctx.engine.lexical.is_boilerplate(text))
            ):
                continue
            said += " " + text.lower()
            ctx.evidence.fact(choice.iri, prop, text)
            parts.append(sentence(first_sentences(text, 500)))
    means = means_of(ctx, choice.iri)
    if means:
        parts.append(means)
    applies = facts.iris(SG.appliesTo)
    if applies:
        for target in applies:
            ctx.evidence.fact(choice.iri, SG.appliesTo, target)
        names = [layer_phrase(ctx.catalog, t) for t in applies[:4]]
        parts.append(f"Applies to {join(names)}.")
    if len(parts) == 1:
        return None
    return ctx.answer(" ".join(parts), intent, 0.45 + 0.5 * choice.score)


def _repeats(text: str, said: str) -> bool:
    """Whether most of ``text``'s sentences were already said (data often restates a reason)."""
    import re as _re

    sentences = [p.strip().lower() for p in _re.split(r"(?<=[.!?])\s+", text) if len(p.strip()) > 12]
    return bool(sentences) and sum(s[:60] in said for s in sentences) * 2 >= len(sentences)


def practice_if_advice(ctx: Context) -> Answer | None:
    """A practice, but only for a question that asks for advice ("which layer should I check
    first if I own infrastructure?"), so a where-fits question never turns into one."""
    return practice(ctx) if intents.asks_for_advice(ctx.question) else None


def practice(ctx: Context) -> Answer | None:
    """The practice the question asks about; when it names an entity that several practices
    apply to and none stands out, all of them (up to three)."""
    choice = _best_reasoned(ctx, ("Practice", "DesignChoice"))
    named = [c for c in ctx.candidates if not ctx.catalog.is_a(c.iri, SG.Practice)]
    if named and (choice is None or choice.how != "exact"):
        applying = [
            p for p in ctx.facts(named[0].iri).incoming(SG.appliesTo) if ctx.catalog.is_a(p, SG.Practice)
        ]
        if len(applying) >= 2:
            answers = [
                explain_reasoned(ctx, Candidate(p, named[0].score, "applies"), intents.PRACTICE)
                for p in applying[:3]
            ]
            texts = [a.answer for a in answers if a is not None]
            if texts:
                return ctx.answer(" ".join(texts), intents.PRACTICE, 0.7)
    if choice is None:
        return None
    return explain_reasoned(ctx, choice, intents.PRACTICE)


def related(ctx: Context) -> Answer | None:
    """How two named entities are connected: the cheapest path between them (networkx)."""
    if len(ctx.candidates) < 2:
        return None
    a, b = ctx.candidates[0].iri, ctx.candidates[1].iri
    from stackgraph.graph.paths import shortest_path

    edges = shortest_path(ctx.engine, a, b)
    ctx.evidence.entity(a)
    ctx.evidence.entity(b)
    if not edges:
        text = f"The graph has no path between {ctx.catalog.label(a)} and {ctx.catalog.label(b)}."
        return ctx.answer(text, intents.PATH, 0.6)
    hops = []
    for edge in edges:
        ctx.evidence.fact(edge.source.iri, edge.predicate, edge.target.iri)
        ctx.evidence.entity(edge.target.iri)
        hops.append(f"{edge.source.display} — {edge.predicate_label} → {edge.target.display}")
    steps = f"{len(edges)} step{'s' if len(edges) > 1 else ''}"
    text = (
        f"{ctx.catalog.label(a)} and {ctx.catalog.label(b)} are connected in {steps}: "
        + "; ".join(hops)
        + "."
    )
    return replace(ctx.answer(text, intents.PATH, 0.85), path=tuple(edges))
