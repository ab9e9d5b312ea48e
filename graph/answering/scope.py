"""A thing asked of beyond the scope the graph gives it: "tensor parallelism across multiple
nodes" asks of something the seeds keep inside one node (the tensor-parallel degree is
intra-node parallelism); the answer is what the graph gives for the wider scope, beside it
(pipeline_parallel_size splits the model across pipeline stages, often across nodes).

Only the node scope is read: the seeds draw the intra-node / inter-node line sharply (the data
path branches there), and users ask across it in their own words ("cross-node", "across
machines", "larger than the GPUs in one node").
"""

from __future__ import annotations

import re

from stackgraph.graph.answering.context import Context, named_surely
from stackgraph.graph.answering.evidence import fetch
from stackgraph.graph.answering.reports import with_told
from stackgraph.graph.answering.text import MAX_ANSWER_CHARS, first_sentences, sentence
from stackgraph.graph.model import Answer
from stackgraph.graph.store import SG

SKOS = "http://www.w3.org/2004/02/skos/core#"
_I = re.IGNORECASE

#: The question reaches past one node.
_ASKED_ACROSS = re.compile(
    r"\b(?:across|between|over|spanning|spans?|on)\s+(?:\w+\s+){0,3}?(?:nodes|machines|servers|hosts|boxes)\b"
    r"|\bcross[- ]?(?:node|machine|host)s?\b|\bmulti[- ]?(?:node|machine|host)s?\b|\binter[- ]?node\b"
    r"|\b(?:more|larger|bigger|greater)\s+than\s+(?:[\w.]+\s+){0,5}?(?:in|on|per)\s+(?:one|a|each|single)\s+"
    r"(?:node|machine|server|host)\b",
    _I,
)
#: A statement keeping a thing inside one node, or giving one for the span between nodes.
_INSIDE = re.compile(
    r"\bintra[- ]?node\b|\binside (?:one|a) (?:node|server|NVLink domain)\b|\bwithin a (?:server|node)\b", _I
)
_ACROSS = re.compile(r"\b(?:across|between) nodes\b|\binter[- ]?node\b", _I)
#: Edges whose shared target makes two things alternatives of one kind (two settings of vLLM,
#: two examples of one layer).
_SIBLING_EDGES = (SG.parameterOf, SG.exampleOf, SKOS + "broader")


def beyond_scope(ctx: Context, answer: Answer) -> Answer:
    """``answer`` plus, for a thing the question names and asks of across nodes while the graph
    keeps it inside one, the statement that keeps it there and what the graph gives for the span
    between nodes, when the answer says neither."""
    if ctx.parsed is None or not _ASKED_ACROSS.search(ctx.question):
        return answer
    return with_told(ctx, answer, lambda kept: _told(ctx, kept), MAX_ANSWER_CHARS // 3) or answer


def _told(ctx: Context, said: str) -> str:
    for mention in ctx.parsed.mentions:
        iri = mention.iri
        if not named_surely(mention):
            continue
        inside = _scope_sentence(ctx, iri, _INSIDE)
        if inside is None or _scope_sentence(ctx, iri, _ACROSS) is not None:
            continue
        wider = _sibling_across(ctx, iri)
        if wider is None:
            continue
        other, text = wider
        if ctx.catalog.label(other).lower() in said.lower():
            continue
        told = []
        if first_sentences(inside, 240).lower() not in said.lower():
            # What keeps it inside one node, unless the answer says it already.
            ctx.evidence.entity(iri)
            ctx.evidence.fact(iri, SKOS + "definition", inside)
            told.append(sentence(f"{ctx.catalog.label(iri)}: {first_sentences(inside, 240)}"))
        ctx.evidence.entity(other)
        ctx.evidence.fact(other, SKOS + "definition", text)
        told.append(sentence(f"Across nodes, {ctx.catalog.label(other)}: {first_sentences(text, 240)}"))
        return " ".join(told)
    return ""


def _scope_sentence(ctx: Context, iri: str, scope: re.Pattern[str]) -> str | None:
    """The entity's first sentence the graph states of it that matches ``scope``."""
    return next((s for s in ctx.engine.lexical.sentences.get(iri, []) if scope.search(s)), None)


def _sibling_across(ctx: Context, iri: str) -> tuple[str, str] | None:
    """An alternative of the same kind (sharing a parent by ``_SIBLING_EDGES``), or a setting of
    one, that the graph gives for the span between nodes, with the sentence saying so."""
    # A search, not evidence: what it scans is no part of the answer's queries.
    facts = fetch(ctx.engine, iri)
    for edge in _SIBLING_EDGES:
        for parent in facts.iris(edge):
            for sibling in fetch(ctx.engine, parent).incoming(edge):
                if sibling == iri:
                    continue
                # A strategy is told apart by the settings that size it: pipeline parallelism
                # says nothing of nodes, pipeline_parallel_size does.
                settings = [
                    s
                    for s in fetch(ctx.engine, sibling).incoming(SG.appliesTo)
                    if ctx.catalog.is_a(s, SG.ConfigurationParameter)
                ]
                for other in [sibling, *settings]:
                    if _scope_sentence(ctx, other, _INSIDE) is not None:
                        continue
                    text = _scope_sentence(ctx, other, _ACROSS)
                    if text is not None:
                        return other, text
    return None
