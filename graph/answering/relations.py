"""Answers to a question that asks what stands in one relation to a named thing: "what does the
GPU Operator deploy?", "what implements gang scheduling?", "what runs on Kubernetes?".

The graph holds these as edges (``sg:deploys``, ``sg:implements``, ...); the definition of the
named thing mentions some of them in passing and the passages only by luck of wording, so the
question is answered from the edges themselves, in the direction the question asks: the verb
after the name asks what the thing does to others ("what does Volcano implement?"), the verb
before it asks what does it to the thing ("what implements gang scheduling?"), and a passive
("is gang scheduling implemented by ...") asks the latter.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from stackgraph.graph.answering import intents
from stackgraph.graph.answering.context import NAMED_HOW, Context
from stackgraph.graph.answering.question import looks_like_a_name
from stackgraph.graph.answering.text import first_sentences, join, sentence
from stackgraph.graph.lexical import terms
from stackgraph.graph.model import Answer
from stackgraph.graph.store import SG

#: The relations a question asks by their verb: the verb's forms, and the verb after a singular
#: and after a plural subject. Only relations named by a verb: "what does X stress?" has its own
#: answerer (workload stress). Forms, not stems: "useful" stems to "use".
VERBS: dict[str, tuple[frozenset[str], str, str]] = {
    # "install" is the everyday word for it (``report_words.tsv`` groups the two).
    str(SG.deploys): (
        frozenset({"deploy", "deploys", "deployed", "install", "installs", "installed"}),
        "deploys",
        "deploy",
    ),
    str(SG.implements): (frozenset({"implement", "implements", "implemented"}), "implements", "implement"),
    str(SG.uses): (frozenset({"use", "uses", "used"}), "uses", "use"),
    str(SG.mitigates): (frozenset({"mitigate", "mitigates", "mitigated"}), "mitigates", "mitigate"),
    str(SG.feeds): (frozenset({"feed", "feeds", "fed"}), "feeds", "feed"),
    str(SG.attaches): (frozenset({"attach", "attaches", "attached"}), "attaches", "attach"),
    str(SG.runsOn): (frozenset({"run", "runs"}), "runs on", "run on"),
    str(SG.pairsWith): (frozenset({"pair", "pairs", "paired"}), "pairs with", "pair with"),
    # "what replaces NCCL on AMD?", "what's the equivalent of CUDA there?": the same role for
    # another vendor, which holds both ways.
    str(SG.equivalentOf): (
        frozenset({"replace", "replaces", "equivalent", "counterpart"}),
        "is the equivalent of",
        "are the equivalents of",
    ),
}
#: Relations that hold both ways: asked in either direction, the edges of both count.
SYMMETRIC = frozenset({str(SG.equivalentOf)})
#: Words a question may open with before the word that asks ("so what replaces NCCL there?").
_LEADING = frozenset({"so", "and", "ok", "okay", "then", "but"})
#: Words before a verb that make it no question about the relation: "need to use RoCE", "do I
#: use", "we deploy" say what someone does, not what stands in the relation.
_NOT_ASKING = frozenset({"to", "i", "we", "you", "they"})
#: Most words of a question asking a relation; longer ones report rather than ask.
ASKING_WORDS = 12
#: How a question asking a relation opens ("what does X deploy?", "which tools use X?").
_OPENERS = frozenset({"what", "which", "who", "does", "do", "is", "are", "whats"})
#: Targets spelled out, each with the first sentence of its definition, up to this many.
DEFINED = 3


@dataclass(frozen=True)
class Asked:
    """The relation a question asks: of ``subject``, by ``predicate``, outgoing or incoming, and
    the things at the other end of the edges asked about."""

    subject: str
    predicate: str
    outgoing: bool
    others: tuple[str, ...]


def asked(ctx: Context) -> tuple[Asked, ...]:
    """The relation the question asks, if its verb names one of ``VERBS``: of each thing it names
    that has edges of it in the direction asked ("what do the GPU Operator and the Network
    Operator deploy?" asks it of both), or of the first such thing alone when others it names
    stand at the other end ("does Volcano run on Kubernetes?")."""
    words = ctx.parsed.normalized.split()
    opening = next((w for w in words if w not in _LEADING), "")
    if len(words) > ASKING_WORDS or not words or opening not in _OPENERS:
        return ()  # a report ("we use NCCL over RoCE and it hangs") says, it does not ask
    named = [
        (m.iri, m.start, m.end)
        for m in ctx.parsed.mentions
        if any(c.iri == m.iri and c.how in NAMED_HOW for c in ctx.candidates)
    ]
    if ctx.from_conversation and ctx.candidates:
        # "does it run on Kubernetes?" after "what is Volcano?": "it" stands where Volcano would.
        at = ctx.parsed.first_pointer
        if at is not None:
            named.append((ctx.candidates[0].iri, at, at + 1))  # after what the question names itself
    for i, word in enumerate(words):
        if i > 0 and words[i - 1] in _NOT_ASKING:
            continue
        for predicate, (forms, _, _) in VERBS.items():
            if word not in forms:
                continue
            passive = i + 1 < len(words) and words[i + 1] == "by"
            found: list[Asked] = []
            for iri, start, end in named:
                if start <= i < end or any(a.subject == iri for a in found):
                    continue
                outgoing = (i >= end) != passive
                facts = ctx.facts(iri)
                edges = facts.iris(predicate) if outgoing else facts.incoming(predicate)
                if predicate in SYMMETRIC:
                    edges = list(dict.fromkeys([*facts.iris(predicate), *facts.incoming(predicate)]))
                if not edges:
                    continue
                # When some of the other things the question names stand at the other end, it
                # asks about those edges only ("does Volcano run on Kubernetes?"); asking what
                # else, about the others ("what else do the operators deploy that way?").
                also = {n[0] for n in named if n[0] != iri}
                between = tuple(o for o in edges if o in also)
                if between and "else" in words:
                    rest = tuple(o for o in edges if o not in also)
                    if rest:
                        found.append(Asked(iri, predicate, outgoing, rest))
                    continue
                if between:
                    return found[:1] if found else (Asked(iri, predicate, outgoing, between),)
                found.append(Asked(iri, predicate, outgoing, tuple(edges)))
            if found:
                return tuple(found)
    return ()


def answer(ctx: Context) -> Answer | None:
    """The named thing's edges of the relation asked, said as a sentence, with what each thing at
    the other end is."""
    found = asked(ctx)
    if not found:
        return None
    parts: list[str] = []
    for relation in found:
        subject, predicate, others = relation.subject, relation.predicate, relation.others
        ctx.evidence.entity(subject)
        stated = set(ctx.facts(subject).iris(predicate))
        for other in others:
            ctx.evidence.entity(other)
            # The edge as the graph states it: a relation that holds both ways may have been
            # asked in the direction it is not written.
            if other in stated:
                ctx.evidence.fact(subject, predicate, other)
            else:
                ctx.evidence.fact(other, predicate, subject)
        label = ctx.catalog.label(subject)
        names = join([ctx.catalog.label(o) for o in others])
        _, singular, plural = VERBS[predicate]
        if relation.outgoing:
            parts.append(sentence(f"{label} {singular} {names}"))
        else:
            parts.append(sentence(f"{names} {singular if len(others) == 1 else plural} {label}"))
    defined = list(dict.fromkeys(o for relation in found for o in relation.others))
    # Two things that play the same role are told apart by what each is: the one asked about too.
    defined += [r.subject for r in found if r.predicate in SYMMETRIC and r.subject not in defined]
    parts += _definitions(ctx, defined, 220)
    return ctx.answer(" ".join(parts), intents.PATH, 0.8)


def _definitions(ctx: Context, things: list[str], chars: int) -> list[str]:
    """ "Label: what it is." for the first ``DEFINED`` of the things that have a definition, each
    recorded as evidence: what stands at the other end of an edge means little by name alone."""
    parts = []
    for thing in things[:DEFINED]:
        record = ctx.catalog.get(thing)
        if record and record.definition:
            ctx.evidence.fact(thing, "http://www.w3.org/2004/02/skos/core#definition", record.definition)
            parts.append(f"{ctx.catalog.label(thing)}: {sentence(first_sentences(record.definition, chars))}")
    return parts


#: "which scheduler gets me that?", "what tool does that?": a thing of a kind, asked of the last
#: turn's subject.
_OF_KIND = re.compile(r"^\s*(?:and\s+|so\s+|ok\s+)?(?:which|what)\s+([a-z][a-z-]*)\b", re.IGNORECASE)
#: Hops from the conversation's subject within which a thing of the asked kind is looked for.
KIND_HOPS = 3
#: Words that ask for a thing of any kind ("which tool does that?"): whatever provides the subject
#: answers, whatever its name says it is.
ANY_KIND = frozenset({"tool", "software", "product", "project", "component", "solution", "thing"})


def of_kind_near(ctx: Context) -> Answer | None:
    """The thing of the kind a follow-up asks for that lies nearest the conversation's subject in
    the graph, with the edges that lead to it: "which scheduler gets me that?" after "why do
    distributed jobs need gang scheduling?" is Volcano (the practice uses gang scheduling, which
    Volcano implements). A question asked alone gets the thing of that kind implementing what it
    names (``_of_kind_implementing``). None when the question asks no kind, or when no thing whose
    name says that kind lies near."""
    if not ctx.candidates:
        return None
    match = _OF_KIND.search(ctx.question)
    if not match or not terms(match.group(1)):
        return None  # "which one", "what else", "which layer": no kind of thing the names say
    if looks_like_a_name(match.group(1), starts_sentence=False):
        return None  # "which vLLM knob ...": a name, not a kind of thing
    if not ctx.from_conversation:
        return _of_kind_implementing(ctx, match.group(1).lower().rstrip("s"))
    from stackgraph.graph.paths import distances, shortest_path

    focus = ctx.candidates[0].iri
    near = distances(ctx.engine, focus, KIND_HOPS)
    # The thing asked for is named by the very word ("Volcano scheduler", not "gang scheduling")
    # and implements the subject or what it uses ("which scheduler gets me that?" asks for what
    # provides it: Volcano, not the default scheduler the practice merely applies to).
    word = match.group(1).lower().rstrip("s")
    close = {iri for iri, hops in near.items() if hops <= 1}
    found = [
        iri
        for iri in near
        if iri != focus
        and not ctx.catalog.is_a(iri, SG.Layer)
        and (word in ANY_KIND or word in _name_words(ctx, iri))
        and close & set(ctx.facts(iri).iris(SG.implements))
    ]
    if not found:
        return None
    best = min(found, key=lambda iri: (near[iri], ctx.catalog.label(iri).lower()))
    provided = next(t for t in ctx.facts(best).iris(SG.implements) if t in close)
    path = shortest_path(ctx.engine, focus, provided) if provided != focus else []
    for edge in path:
        ctx.evidence.fact(edge.source.iri, edge.predicate, edge.target.iri)
        ctx.evidence.entity(edge.source.iri)
        ctx.evidence.entity(edge.target.iri)
    ctx.evidence.entity(best)
    ctx.evidence.fact(best, SG.implements, provided)
    record = ctx.catalog.get(best)
    parts = [ctx.catalog.display(best)]
    if record and record.definition:
        ctx.evidence.fact(best, "http://www.w3.org/2004/02/skos/core#definition", record.definition)
        parts[0] += f": {sentence(first_sentences(record.definition, 260))}"
    else:
        parts[0] = sentence(parts[0])
    steps = [f"{e.source.label} {e.predicate_label} {e.target.label}" for e in path]
    steps.append(f"{ctx.catalog.label(best)} implements {ctx.catalog.label(provided)}")
    parts.append(sentence("; ".join(steps)))
    return ctx.answer(" ".join(parts), intents.PATH, 0.75)


def _of_kind_implementing(ctx: Context, word: str) -> Answer | None:
    """The thing of the kind asked for that implements something the question names: "which
    scheduler gives me gang scheduling on k8s?" is Volcano, which implements gang scheduling, not
    the default scheduler the words "scheduler" and "k8s" name. None when nothing it names is
    implemented by a thing of that kind."""
    for cand in ctx.candidates:
        if cand.how not in NAMED_HOW:
            continue
        makers = [
            m
            for m in ctx.facts(cand.iri).incoming(SG.implements)
            if word in ANY_KIND or word in _name_words(ctx, m)
        ]
        if not makers:
            continue
        for maker in makers:
            ctx.evidence.entity(maker)
            ctx.evidence.fact(maker, SG.implements, cand.iri)
        ctx.evidence.entity(cand.iri)
        parts = [
            sentence(
                f"{join([ctx.catalog.label(m) for m in makers])} implements {ctx.catalog.label(cand.iri)}"
            )
        ]
        parts += _definitions(ctx, makers, 260)
        return ctx.answer(" ".join(parts), intents.PATH, 0.75)
    return None


def _name_words(ctx: Context, iri: str) -> set[str]:
    """The words of an entity's names, lower case, a plural's "s" dropped."""
    record = ctx.catalog.get(iri)
    labels = ctx.catalog.all_labels(record) if record else ()
    return {w.rstrip("s") for label in labels for w in re.findall(r"[a-z0-9-]+", label.lower())}
