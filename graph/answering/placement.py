"""Answers about where things sit: where X fits, what is in a layer, how two things compare,
how the two layer models correspond, what a workload stresses, what a layer assumes."""

from __future__ import annotations

import re
from dataclasses import dataclass

from rdflib import URIRef
from rdflib.term import Node

from stackgraph.graph.answering import intents
from stackgraph.graph.answering.context import NAMED_HOW, STRONG_LINK, Context
from stackgraph.graph.answering.text import (
    agree,
    first_sentences,
    join,
    layer_phrase,
    model_name,
    sentence,
)
from stackgraph.graph.lexical import terms
from stackgraph.graph.model import Answer
from stackgraph.graph.store import KG, SG

SKOS = "http://www.w3.org/2004/02/skos/core#"
DCT_SOURCE = "http://purl.org/dc/terms/source"
MAPPINGS = ("closeMatch", "exactMatch", "broadMatch", "narrowMatch", "relatedMatch")
#: Edges that make the subject a member of the object, in the order a list question prefers them.
MEMBER_PREDICATES = (
    SKOS + "broader",
    str(SG.parameterOf),
    str(SG.exampleOf),
    str(SG.inModel),
    "http://purl.org/dc/terms/isPartOf",
)
_INVERSE = {"broadMatch": "narrowMatch", "narrowMatch": "broadMatch"}
_MAPPING_WORDS = {
    "closeMatch": "closely matches",
    "exactMatch": "matches",
    "broadMatch": "is covered by the broader",
    "narrowMatch": "covers the narrower",
    "relatedMatch": "relates to",
}


@dataclass(frozen=True)
class Place:
    layer: str
    role: str | None
    basis: str | None
    via: str | None = None  # the broader entity the placement was inherited from


def placements(ctx: Context, iri: str, record: bool = True) -> list[Place]:
    """Where an entity fits: its own placements, else those of what it is a kind of."""
    facts = ctx.facts(iri)
    found: list[Place] = []
    for q in facts.qualified.get(str(SG.placement), []):
        layer = q.one(SG.layer)
        if layer is None:
            continue
        role = q.one(SG.role)
        basis = q.one(SG.basis)
        place = Place(
            str(layer), str(role) if role else None, str(basis).rsplit("#", 1)[-1] if basis else None
        )
        if place not in found:
            found.append(place)
        if record:
            ctx.evidence.fact(iri, SG.fitsIn, str(layer), None)
            ctx.evidence.source_iri(q.one(URIRef(DCT_SOURCE)))
    for layer in facts.iris(SG.fitsIn):
        if all(p.layer != layer for p in found):
            found.append(Place(layer, None, None))
            if record:
                ctx.evidence.fact(iri, SG.fitsIn, layer)
    if not found:
        for parent in facts.iris(SKOS + "broader"):
            inherited = placements(ctx, parent, record=record)
            if inherited and record:
                ctx.evidence.fact(iri, SKOS + "broader", parent)
                ctx.evidence.entity(parent)
            found += [Place(p.layer, p.role, p.basis, via=parent) for p in inherited if p not in found]
            if found:
                break
    return found


#: Crosswalk edges that carry a placement into the other model: the layer is that one, or lies
#: inside it. A related layer (``relatedMatch``) only overlaps, which places nothing.
_CARRIES = ("exactMatch", "closeMatch", "broadMatch")


def _across_the_crosswalk(ctx: Context, places: list[Place]) -> str:
    """Where the placement falls in the model the question asks about, when the graph places the
    thing only in the other one: "which layer of the 8-layer ops map cares about fp8?" places FP8
    at nine-layer L9, which lies inside ops L2 GPUs & Networking."""
    model = ctx.model_hint
    if not model or any((rec := ctx.catalog.get(p.layer)) and rec.model == model for p in places):
        return ""
    said: list[str] = []
    for place in places:
        facts = ctx.facts(place.layer)
        for edge in _CARRIES:
            for target in facts.iris(SKOS + edge):
                rec = ctx.catalog.get(target)
                if rec is None or rec.model != model:
                    continue
                ctx.evidence.fact(place.layer, SKOS + edge, target)
                ctx.evidence.entity(target)
                inside = "lies inside" if edge == "broadMatch" else "matches"
                said.append(
                    f"{layer_phrase(ctx.catalog, place.layer)} {inside} {layer_phrase(ctx.catalog, target)}"
                )
    if not said:
        return ""
    return sentence(f"By the crosswalk to the {model_name(model)}, {join(list(dict.fromkeys(said)))}")


def applies_to_layers(ctx: Context, iri: str) -> list[str]:
    """The layers a practice or design choice applies to (``sg:appliesTo``), recorded."""
    layers = [t for t in ctx.facts(iri).iris(SG.appliesTo) if ctx.catalog.is_a(t, SG.Layer)]
    model = ctx.model_hint
    if model and not any((rec := ctx.catalog.get(t)) and rec.model == model for t in layers):
        return []  # asked of the other model, where the graph does not say it applies
    for layer in layers:
        ctx.evidence.fact(iri, SG.appliesTo, layer)
        ctx.evidence.entity(layer)
    return layers


def _order(ctx: Context, places: list[Place]) -> list[Place]:
    def key(p: Place) -> tuple:
        rec = ctx.catalog.get(p.layer)
        nine = 0 if rec and rec.model == str(KG["nine-layer-model"]) else 1
        position = _position(ctx, p.layer)
        return (nine, position, p.layer)

    return sorted(places, key=key)


def _position(ctx: Context, layer: str) -> int:
    positions = ctx.engine.positions
    return positions.get(layer, 99)


def describe_places(ctx: Context, places: list[Place], preferred_model: str | None = None) -> str:
    """ "L2 Frameworks & Serving Engines (as serving engines) and CP Control Plane (...)", grouped
    by model, the model the question names first; several roles in one layer are listed together."""
    roles: dict[str, list[str]] = {}
    for place in _order(ctx, places):
        listed = roles.setdefault(place.layer, [])
        if place.role and place.role not in listed:
            listed.append(place.role)
    by_model: dict[str, list[str]] = {}
    for layer, layer_roles in roles.items():
        rec = ctx.catalog.get(layer)
        model = rec.model if rec and rec.model else ""
        phrase = layer_phrase(ctx.catalog, layer)
        shown = [r for r in layer_roles if r.lower() not in phrase.lower()][:2]
        if shown:
            phrase += f" (as {'; '.join(shown)})"
        ctx.evidence.entity(layer)
        by_model.setdefault(model, []).append(phrase)
    models = sorted(by_model, key=lambda m: (m != (preferred_model or str(KG["nine-layer-model"])), m))
    return "; ".join(f"{join(by_model[m])} in the {model_name(m)}" for m in models)


#: "Where does L3 run?", "does that live on the host?": where a layer's code runs is asked.
_RUNS_WHERE = re.compile(r"\b(runs?|running|lives?|living|executes?)\b|\bk8s[- ]?roles?\b", re.IGNORECASE)
#: The K8S-ROLE column named outright: whatever the wording, its value for the layers named is asked.
_K8S_ROLE = re.compile(r"\bk8s[- ]?roles?\b", re.IGNORECASE)


def asks_k8s_role(question: str) -> bool:
    """Whether the question names the K8S-ROLE column ("what K8S-ROLE does L5 have?")."""
    return bool(_K8S_ROLE.search(question))


def where_it_runs(ctx: Context) -> Answer | None:
    """Where the code of a layer the question names runs: inside containers, or on the host
    outside Kubernetes (the K8S-ROLE column); None when no layer named has it said."""
    if not _RUNS_WHERE.search(ctx.question):
        return None
    for cand in ctx.candidates:
        if cand.how not in NAMED_HOW or cand.score < STRONG_LINK or not ctx.catalog.is_a(cand.iri, SG.Layer):
            continue
        facts = ctx.facts(cand.iri)
        runs, detail = facts.text(SG.runsIn), facts.text(SG.runsInDetail)
        if not runs:
            continue
        ctx.evidence.entity(cand.iri)
        ctx.evidence.fact(cand.iri, SG.runsIn, runs)
        role = f" (K8S-ROLE {runs})" if asks_k8s_role(ctx.question) else ""
        text = f"{_runs_phrase(ctx, cand.iri, runs)}{role}."
        if detail:
            ctx.evidence.fact(cand.iri, SG.runsInDetail, detail)
            text += f" {sentence(detail)}"
        return ctx.answer(text, intents.FIT, 0.9)
    return None


#: "which layers run on the host?", "which rows are tagged host?": the layers of one K8S-ROLE
#: value are asked for, by the words the value is said in.
_LAYERS_RUNNING = re.compile(
    r"\b(?:which|what)\b[\w\s-]{0,30}\b(?:layers|rows)\b.{0,60}?"
    r"\b(?:runs?|running|lives?|living|execut\w*|tagged|marked|labell?ed)\b.{0,30}?"
    r"\b(?P<value>host|in-container|containers?|kubernetes)\b",
    re.IGNORECASE,
)
#: Those words, as the K8S-ROLE values they say.
_RUNS_IN_SAID = {"host": "host", "in-container": "in-container", "container": "in-container",
                 "containers": "in-container", "kubernetes": "kubernetes"}  # fmt: skip


def layers_running(ctx: Context) -> Answer | None:
    """The layers whose code runs where the question says (the K8S-ROLE column): "which layers run
    on the host?" is L6-L9 and the storage path. None when it asks no such thing."""
    found = _LAYERS_RUNNING.search(ctx.question)
    if not found:
        return None
    value = _RUNS_IN_SAID[found.group("value").lower()]
    layers = [rec.iri for rec in ctx.catalog.layers() if ctx.facts(rec.iri).text(SG.runsIn) == value]
    if not layers:
        return None
    layers.sort(key=lambda layer: _position(ctx, layer))
    by_model: dict[str, list[str]] = {}
    for layer in layers:
        ctx.evidence.entity(layer)
        ctx.evidence.fact(layer, SG.runsIn, value)
        rec = ctx.catalog.get(layer)
        by_model.setdefault(rec.model if rec and rec.model else "", []).append(
            layer_phrase(ctx.catalog, layer)
        )
    for model in by_model:
        if model:
            ctx.evidence.entity(model)
    where = "; ".join(f"{join(names)} in the {model_name(model)}" for model, names in by_model.items())
    text = f"The layers that run {_RUNS_IN.get(value, value)} (K8S-ROLE {value}): {where}."
    return ctx.answer(text, intents.LIST, 0.9)


#: The K8S-ROLE column's values as the answer says them.
_RUNS_IN = {
    "in-container": "in-container: inside containers, not on the host",
    "host": "on the host, outside Kubernetes, not inside containers",
    "kubernetes": "as Kubernetes (the control plane)",
}


def where_fits(ctx: Context) -> Answer | None:
    runs = where_it_runs(ctx)
    if runs is not None:
        return runs
    subjects = [c for c in ctx.candidates if not ctx.catalog.is_a(c.iri, SG.Layer)][:3]
    if not subjects:
        layer = next((c for c in ctx.candidates), None)
        return layer_overview(ctx, layer.iri) if layer else None
    lines = []
    placed = 0
    confidence = 0.0
    for cand in subjects:
        places = placements(ctx, cand.iri)
        ref = ctx.evidence.entity(cand.iri)
        if not places:
            continue
        via = next((p.via for p in places if p.via), None)
        text = (
            f"{ref.label} {agree(ref.label, 'fits', 'fit')} in {describe_places(ctx, places, ctx.model_hint)}"
        )
        if via:
            text += f", as one of {ctx.catalog.label(via)}"
        lines.append(sentence(text))
        lines += _where_places_run(ctx, places)
        across = _across_the_crosswalk(ctx, places)
        if across and across not in lines:
            lines.append(across)
        settings = settings_for(ctx, cand.iri)
        if settings:
            lines.append(settings)
        placed += 1
        concerns = ctx.facts(cand.iri).iris(SG.concern)
        if concerns:
            # The nine-layer model's cross-cutting concerns apply to every layer: being part of
            # one (security for guardrails) is where it fits too, beside its layer.
            for concern in concerns:
                ctx.evidence.fact(cand.iri, SG.concern, concern)
                ctx.evidence.entity(concern)
            names = join([ctx.catalog.label(c).lower() for c in concerns])
            noun = "concerns" if len(concerns) > 1 else "concern"
            lines.append(f"It is part of the {names} cross-cutting {noun} of the nine-layer model.")
        confidence = max(confidence, cand.score)
    if not lines:
        # Nothing it names is placed: a practice or design choice is placed by the layers it
        # applies to ("which layer should own our eval suite?" is L6 of the operational map).
        for cand in subjects:
            applied = applies_to_layers(ctx, cand.iri)
            if applied:
                ref = ctx.evidence.entity(cand.iri)
                said = describe_places(ctx, [Place(layer, None, None) for layer in applied], ctx.model_hint)
                lines.append(sentence(f"The {ref.type} “{ref.label}” applies to {said}"))
                placed += 1
                confidence = max(confidence, cand.score)
    if not lines:
        return None
    if placed == 1:
        definition = ctx.catalog.get(subjects[0].iri).definition if ctx.catalog.get(subjects[0].iri) else None
        if definition and not definition.lower().startswith(
            ctx.catalog.label(subjects[0].iri).lower() + " is one of"
        ):
            lines.append(first_sentences(definition, 350))
    return ctx.answer(" ".join(lines), intents.FIT, 0.6 + 0.4 * confidence)


#: A question about the host/container split ("transport L6 is marked host, and NCCL's layer?").
_HOST_OR_CONTAINER = re.compile(
    r"\bhost\b.*\bcontainers?\b|\bcontainers?\b.*\bhost\b|\bin-container\b|\b(?:marked|tagged)\s+(?:as\s+)?host\b"
    r"|" + _K8S_ROLE.pattern,
    re.IGNORECASE | re.DOTALL,
)


def _where_places_run(ctx: Context, places: list[Place]) -> list[str]:
    """Where the code of each layer placed runs (the K8S-ROLE column), when the question speaks of
    the line between host and containers ("does that layer run on the host or in the container?",
    "L6 is marked host"): which side of it the thing's layer is on. A host said alone ("one host's
    ibstat looks off") draws no such line."""
    if not _HOST_OR_CONTAINER.search(ctx.question):
        return []
    said: list[str] = []
    for layer in dict.fromkeys(place.layer for place in places):
        runs = ctx.facts(layer).text(SG.runsIn)
        if runs in _RUNS_IN:
            ctx.evidence.fact(layer, SG.runsIn, runs)
            said.append(f"{_runs_phrase(ctx, layer, runs)}.")
    return said


def _runs_phrase(ctx: Context, layer: str, runs: str) -> str:
    """ "L5 Communication Libraries (nine-layer model) runs in-container: inside containers, not
    on the host": a layer and where its code runs (its K8S-ROLE value, spelled out)."""
    return f"{layer_phrase(ctx.catalog, layer, with_model=True)} runs {_RUNS_IN.get(runs, runs)}"


#: Settings that apply to an entity spelled out with what they do, up to this many; more are named.
SETTINGS_SPELLED = 2


def settings_for(ctx: Context, iri: str) -> str:
    """The configuration settings that apply to an entity, as a sentence: "Settings for Pipeline
    parallelism: pipeline_parallel_size (splits model layers across pipeline stages (often across
    nodes))."
    A strategy or mechanism whose own entry only places it is told apart by its settings: the
    seeds say what tensor and pipeline parallelism do in the rows of the settings that size them."""
    settings = ctx.settings_of(iri)
    if not settings:
        return ""
    shown = []
    for setting in settings:
        ctx.evidence.fact(setting, SG.appliesTo, iri)
        definition = ctx.catalog.get(setting).definition if len(settings) <= SETTINGS_SPELLED else None
        label = ctx.catalog.label(setting)
        if definition:
            ctx.evidence.fact(setting, SKOS + "definition", definition)
            definition = definition.rstrip(".")
            label += f" ({definition[:1].lower()}{definition[1:]})"
        shown.append(label)
    return sentence(f"Settings for {ctx.catalog.label(iri)}: {join(shown)}")


def layer_overview(ctx: Context, layer: str, limit: int = 14) -> Answer:
    """What a layer is and what sits in it."""
    ref = ctx.evidence.entity(layer)
    rec = ctx.catalog.get(layer)
    members = layer_members(ctx, layer)
    head = f"{layer_phrase(ctx.catalog, layer)} is a layer of the {model_name(rec.model if rec else None)}."
    if rec and rec.definition:
        head += " " + first_sentences(rec.definition, 300)
    if members:
        shown = [ctx.catalog.label(m) for m in members[:limit]]
        more = f" and {len(members) - limit} more" if len(members) > limit else ""
        head += f" It holds {join(shown)}{more}."
    return ctx.answer(head, intents.LIST, 0.85 if ref else 0.5)


def layer_members(ctx: Context, layer: str) -> list[str]:
    """Entities placed in a layer: its listed examples first, then the rest, alphabetically."""
    facts = ctx.facts(layer)
    examples = facts.incoming(SG.exampleOf)
    placed = facts.incoming(SG.fitsIn)
    for member in examples + placed:
        ctx.evidence.fact(member, SG.fitsIn if member in placed else SG.exampleOf, layer)
    rest = sorted((m for m in placed if m not in examples), key=lambda m: ctx.catalog.label(m).lower())
    ordered = sorted(examples, key=lambda m: ctx.catalog.label(m).lower()) + rest
    return list(dict.fromkeys(ordered))


def _names_it(ctx: Context, iri: str, cls: str) -> bool:
    """Whether the question's words beside the class's name are words of the entity's names:
    "which workloads does the stack matrix list?" names the stack matrix (its name's words are
    stopwords to the linker), "list the workloads" names nothing besides the class."""
    label = terms(ctx.engine.class_label(cls))
    rest = {t for t in ctx.parsed.terms if t not in label and t not in terms("list")}
    doc = ctx.engine.lexical.docs.get(iri)
    return doc is not None and bool(rest & doc.name_terms)


def list_members(ctx: Context) -> Answer | None:
    """Members of a layer, of a category (skos:broader), of an entity (its parameters, its
    parts), or of a class the question names ("what workloads are there?")."""
    cls = ctx.engine.class_named_in(ctx.question)
    target = ctx.candidates[0] if ctx.candidates else None
    if target and cls and target.how not in NAMED_HOW and not _names_it(ctx, target.iri, cls):
        target = None  # "list the workloads": the class is asked for, not what its words describe
    if target and cls and cls != str(SG.Layer) and ctx.catalog.is_a(target.iri, cls):
        # "the layers of the nine layer model": the class's name ("layer model") is part of the
        # name of the thing asked about, whose members are wanted, not every layer model.
        cls = None
    # "what is in the control plane?" names the class of the layer it names, in the same words:
    # it asks what is in that layer, not for every control plane.
    if (
        target
        and ctx.catalog.is_a(target.iri, SG.Layer)
        and (cls is None or cls == str(SG.Layer) or ctx.catalog.is_a(target.iri, cls))
    ):
        return layer_overview(ctx, target.iri)
    members: list[str] = []
    predicate = SKOS + "broader"
    if target:
        facts = ctx.facts(target.iri)
        for predicate in MEMBER_PREDICATES:  # the first kind of membership the entity has
            members = facts.incoming(predicate)
            if cls:
                members = [m for m in members if ctx.catalog.is_a(m, cls)]
            if members:
                break
    if members and target:
        ref = ctx.evidence.entity(target.iri)
        members = sorted(
            members, key=lambda m: (ctx.engine.positions.get(m, 99), ctx.catalog.label(m).lower())
        )
        for member in members:
            ctx.evidence.fact(member, predicate, target.iri)
        shown = [ctx.catalog.display(m) for m in members[:24]]
        more = f" and {len(members) - 24} more" if len(members) > 24 else ""
        text = f"{ref.display}: {join(shown)}{more}."
        definition = ctx.catalog.get(target.iri).definition
        if definition:
            text += " " + first_sentences(definition, 400)
        return ctx.answer(text, intents.LIST, 0.9 * target.score + 0.1)
    if cls:
        return list_class(ctx, cls)
    return None


def list_class(ctx: Context, cls: str) -> Answer | None:
    """Every entity of a class, e.g. the ten workloads or the six design choices."""
    members = [iri for iri in ctx.engine.entities_of(cls.rsplit("#", 1)[-1])]
    if ctx.model_hint and cls == str(SG.Layer):
        members = [m for m in members if (r := ctx.catalog.get(m)) and r.model == ctx.model_hint]
    if not members:
        return None
    members.sort(key=lambda m: (ctx.engine.positions.get(m, 99), ctx.catalog.label(m).lower()))
    for member in members[:40]:
        ctx.evidence.entity(member)
        ctx.evidence.fact(
            member, "http://www.w3.org/1999/02/22-rdf-syntax-ns#type", cls, ctx.engine.class_label(cls)
        )
    shown = [ctx.catalog.display(m) for m in members[:30]]
    more = f" and {len(members) - 30} more" if len(members) > 30 else ""
    noun = ctx.engine.class_label(cls)
    text = f"The graph has {len(members)} {noun}{'s' if len(members) != 1 and not noun.endswith('s') else ''}: {join(shown)}{more}."
    return ctx.answer(text, intents.LIST, 0.8)


def compare(ctx: Context) -> Answer | None:
    subjects = ctx.candidates[:3]
    if len(subjects) < 2:
        return None
    from stackgraph.graph.answering.knowledge import expansion

    lines = []
    for cand in subjects:
        ref = ctx.evidence.entity(cand.iri)
        places = placements(ctx, cand.iri)
        rec = ctx.catalog.get(cand.iri)
        spelled = expansion(ctx, cand.iri)  # a comparison is often asked by someone new to both
        line = f"{ref.label} ({spelled})" if spelled else ref.label
        if places:
            line += f" sits in {describe_places(ctx, places, ctx.model_hint)}"
        line = sentence(line)
        if rec and rec.definition:
            line += " " + first_sentences(rec.definition, 260)
        settings = settings_for(ctx, cand.iri)
        if settings:
            line += " " + settings  # what tells two strategies of one layer apart
        lines.append(line)
    related = _direct_relation(ctx, subjects[0].iri, subjects[1].iri)
    if related:
        lines.append(related)
    shared = _shared(ctx, subjects[0].iri, subjects[1].iri)
    if shared:
        lines.append(shared)
    return ctx.answer("\n".join(lines), intents.COMPARE, min(c.score for c in subjects))


#: Edges two things compared can share, with the verb that says so of both.
_SHARED = (
    (SG.implements, "implement"),
    (SG.uses, "use"),
    (SG.mitigates, "fix"),
)


def _shared(ctx: Context, a: str, b: str) -> str:
    """What two things compared have in common in the graph: "Both vLLM and Triton Inference
    Server implement continuous batching and PagedAttention." (a comparison of alternatives is
    as much what they share as where each sits); empty when they share no edge."""
    parts = []
    for predicate, verb in _SHARED:
        theirs = set(ctx.facts(b).iris(predicate))
        common = [o for o in ctx.facts(a).iris(predicate) if o in theirs]
        for other in common:
            ctx.evidence.fact(a, predicate, other)
            ctx.evidence.fact(b, predicate, other)
            ctx.evidence.entity(other)
        if common:
            parts.append(f"{verb} {join([ctx.catalog.display(o) for o in common])}")
    if not parts:
        return ""
    return sentence(f"Both {ctx.catalog.display(a)} and {ctx.catalog.display(b)} {join(parts)}")


def _direct_relation(ctx: Context, a: str, b: str) -> str | None:
    facts = ctx.facts(a)
    for predicate, values in facts.out.items():
        if URIRef(b) in values:
            from stackgraph.graph.answering.evidence import predicate_label

            ctx.evidence.fact(a, predicate, b)
            return sentence(
                f"{ctx.catalog.label(a)} {predicate_label(ctx.engine, predicate)} {ctx.catalog.label(b)}"
            )
    return None


def crosswalk(ctx: Context) -> Answer | None:
    layers = ctx.of_type("Layer")
    if not layers:
        return None
    lines = []
    for cand in layers[:2]:
        facts = ctx.facts(cand.iri)
        matches = []
        seen: set[str] = set()
        for name in MAPPINGS:
            for other in facts.iris(SKOS + name):
                if other not in seen:
                    seen.add(other)
                    matches.append((name, other, False))
        for name in MAPPINGS:
            for other in facts.incoming(SKOS + name):
                if other not in seen:  # stated from the other side: read it the other way round
                    seen.add(other)
                    matches.append((_INVERSE.get(name, name), other, True))
        ctx.evidence.entity(cand.iri)
        if not matches:
            continue
        parts = []
        for name, other, inverse in sorted(
            matches, key=lambda m: (MAPPINGS.index(m[0]), _position(ctx, m[1]))
        ):
            stated = _INVERSE.get(name, name) if inverse else name
            ctx.evidence.fact(other if inverse else cand.iri, SKOS + stated, cand.iri if inverse else other)
            ctx.evidence.entity(other)
            parts.append(
                f"{layer_phrase(ctx.catalog, other, with_model=True)} ({name.replace('Match', ' match')})"
            )
        lines.append(f"{layer_phrase(ctx.catalog, cand.iri, with_model=True)} corresponds to {join(parts)}.")
    if not lines:
        return None
    return ctx.answer(" ".join(lines), intents.CROSSWALK, 0.85)


#: Stress levels of the stack matrix, highest first.
STRESS_RANK = {"critical": 4, "high": 3, "moderate": 2, "low": 1}
#: Said after levels read from cells the source lost the boundaries of.
RECONSTRUCTED_LEVELS = (
    " (Levels reconstructed from the stack matrix, whose cell boundaries were lost in the source.)"
)


@dataclass(frozen=True)
class StressCell:
    """One cell of a workload's row in the stack matrix: how much one layer matters to it."""

    layer: str
    level: str  # "critical", "high", "moderate" or "low"
    reconstructed: bool  # read from a cell whose boundaries the source lost
    source: Node | None  # the section the cell rests on


def _stress_cells(ctx: Context, workload: str) -> list[StressCell]:
    """The cells of a workload's row that name both a layer and a level; read by the row
    (``workload_stress``) and by the column (``_stressing``)."""
    cells = []
    for q in ctx.facts(workload).qualified.get(str(SG.stress), []):
        layer, level = q.one(SG.layer), q.one(SG.level)
        if layer is None or level is None:
            continue
        reconstructed = str(q.one(SG.basis) or "").endswith("reconstructed")
        cells.append(
            StressCell(str(layer), str(level).rsplit("#", 1)[-1], reconstructed, q.one(URIRef(DCT_SOURCE)))
        )
    return cells


def _record_cell(ctx: Context, workload: str, cell: StressCell) -> None:
    """A cell said in an answer: the stress fact, with the section it rests on."""
    ctx.evidence.fact(
        workload, SG.stress, cell.layer, f"{layer_phrase(ctx.catalog, cell.layer)} at {cell.level}"
    )
    ctx.evidence.source_iri(cell.source)


def _layers_named(ctx: Context) -> list[str]:
    """The layers the question names, by name ("the network fabric layer") or by what the linker
    read as one ("storage" for the storage data path), first named first."""
    named = [c.iri for c in ctx.of_type("Layer") if c.how in NAMED_HOW]
    named += [m.iri for m in ctx.parsed.mentions if ctx.catalog.is_a(m.iri, SG.Layer)]
    return list(dict.fromkeys(named))


def workload_stress(ctx: Context) -> Answer | None:
    workloads = ctx.of_type("Workload")
    asked = _layers_named(ctx)
    if not any(c.how in NAMED_HOW for c in workloads):
        # "Which workload stresses the fabric most?" names a layer and asks for workloads (the
        # word "workload" matches every one of them by their class, naming none).
        layer = next(iter(asked), None) or next((c.iri for c in ctx.of_type("Layer")), None)
        if layer is not None:
            return _stressing(ctx, layer)
    if not workloads:
        return None
    wl = workloads[0].iri
    ref = ctx.evidence.entity(wl)
    # "How much does RAG stress the fabric?" names the cell it asks for: that cell comes first,
    # then the whole row it sits in.
    levels: dict[str, list[str]] = {}
    named: list[str] = []
    reconstructed = False
    for cell in _stress_cells(ctx, wl):
        levels.setdefault(cell.level, []).append(cell.layer)
        reconstructed |= cell.reconstructed
        _record_cell(ctx, wl, cell)
        if cell.layer in asked:
            ctx.evidence.entity(cell.layer)
            named.append(f"{layer_phrase(ctx.catalog, cell.layer)} at {cell.level}")
    if not levels:
        return None
    parts = []
    for name in sorted(levels, key=lambda n: -STRESS_RANK.get(n, 0)):
        layers = sorted(levels[name], key=lambda layer: _position(ctx, layer))
        parts.append(f"{name}: {join([layer_phrase(ctx.catalog, layer) for layer in layers])}")
    row = "; ".join(parts) + "."
    if named:
        text = f"{ref.label} stresses {join(named)}. Its whole row of the stack matrix — {row}"
    else:
        text = f"{ref.label} stresses the nine-layer stack as follows — {row}"
    if reconstructed:
        text += RECONSTRUCTED_LEVELS
    return ctx.answer(text, intents.STRESS, 0.85)


def _stressing(ctx: Context, layer: str) -> Answer | None:
    """The workloads that stress a layer, by level, the highest first: "which workload hammers
    storage the hardest?" reads the stack matrix by its column."""
    levels: dict[str, list[str]] = {}
    reconstructed = False
    for wl in ctx.catalog.records:
        if not ctx.catalog.is_a(wl, SG.Workload):
            continue
        for cell in _stress_cells(ctx, wl):
            if cell.layer != layer:
                continue
            levels.setdefault(cell.level, []).append(wl)
            reconstructed |= cell.reconstructed
            ctx.evidence.entity(wl)
            _record_cell(ctx, wl, cell)
    if not levels:
        return None
    ctx.evidence.entity(layer)
    parts = [
        f"{name}: {join(sorted(ctx.catalog.label(w) for w in levels[name]))}"
        for name in sorted(levels, key=lambda n: -STRESS_RANK.get(n, 0))
    ]
    text = (
        f"The workloads that stress {layer_phrase(ctx.catalog, layer)}, by the stack matrix — "
        + "; ".join(parts)
        + "."
    )
    if reconstructed:
        text += RECONSTRUCTED_LEVELS
    return ctx.answer(text, intents.STRESS, 0.85)


#: Which text property a layer-detail question asks for, by the words it asks with, in this order.
_DETAIL = (
    (re.compile(r"\bfail|\bbreak|\bbroke|\b(?:goes|go|went)\s+wrong", re.IGNORECASE), SG.failureMode),
    (re.compile(r"\bresponsib|\bowns?\b|\bowned\b|\bdo(?:es)?\b", re.IGNORECASE), SG.responsibility),
)


def layer_detail(ctx: Context) -> Answer | None:
    wanted = [SG.assumption] if intents.asks_for_assumption(ctx.question) else []
    wanted += [prop for cue, prop in _DETAIL if cue.search(ctx.question) and prop not in wanted]
    layers = ctx.of_type("Layer")
    layer = layers[0].iri if layers else _layer_of_subject(ctx, (wanted or [SG.responsibility])[0])
    if layer is None:
        return None
    facts = ctx.facts(layer)
    parts = []
    for prop in wanted[:2] or [SG.responsibility]:
        for text in facts.texts(prop):
            ctx.evidence.fact(layer, prop, text)
            parts.append(sentence(text))
    if not parts:
        return None
    ctx.evidence.entity(layer)
    head = f"{layer_phrase(ctx.catalog, layer, with_model=True)}: "
    return ctx.answer(head + " ".join(parts), intents.ASSUME, 0.9)


def _layer_of_subject(ctx: Context, prop: URIRef) -> str | None:
    """The layer, in the model the question names, of what the question is about when that is no
    layer: where it fits, else the layer owning most of the problems it checks ("which assumption
    of the 8-layer map is that breaking?" about `ibstat`: L2, which owns a port below its rated
    speed). With no model named, in a conversation, the layer of the model that says ``prop`` of
    its layers ("how does it fail?" after Volcano: the ops map's L5, whose failure mode it is).
    None without a subject, a model or a conversation, or a layer found."""
    if not ctx.candidates or not (ctx.model_hint or ctx.from_conversation):
        return None
    facts = ctx.facts(ctx.candidates[0].iri)
    found = list(facts.iris(SG.fitsIn))
    for problem in facts.incoming(SG.diagnosedBy):
        found += ctx.facts(problem).iris(SG.ownedBy)
    if ctx.model_hint:
        in_model = [layer for layer in found if ctx.model_hint in ctx.facts(layer).iris(SG.inModel)]
    else:
        in_model = [layer for layer in found if ctx.facts(layer).texts(prop)]
    if not in_model:
        return None
    return max(dict.fromkeys(in_model), key=in_model.count)


def layer_for_text(ctx: Context, min_score: float = 0.2) -> Answer | None:
    """ "Which layer owns scheduling, isolation and rollout?" with no entity named: the layer
    whose responsibility and description share the most with the question."""
    if not (intents.asks_for_layer(ctx.question) or ctx.intent == intents.ASSUME):
        return None  # only a question that asks for a layer gets one by description
    model = ctx.model_hint
    pool = [r.iri for r in ctx.catalog.layers(model)] if model else [r.iri for r in ctx.catalog.layers()]
    hits = ctx.engine.lexical.search(ctx.question, candidates=pool, k=3)
    if not hits or hits[0][1] < min_score:
        return None
    # Ties go to the layer whose stated responsibility names more of the question's words.
    asked = set(ctx.parsed.terms)

    def named_in_responsibility(layer: str) -> int:
        return len(asked & set(terms(" ".join(ctx.facts(layer).texts(SG.responsibility)))))

    top = [h for h in hits if h[1] >= hits[0][1] - 1e-9]
    layer, score = max(top, key=lambda h: (named_in_responsibility(h[0]), h[0]))
    facts = ctx.facts(layer)
    ctx.evidence.entity(layer)
    text = f"{layer_phrase(ctx.catalog, layer, with_model=True)} owns that."
    responsibility = facts.text(SG.responsibility)
    if responsibility:
        ctx.evidence.fact(layer, SG.responsibility, responsibility)
        text += f" Its responsibility: {responsibility.rstrip('.')}."
    rec = ctx.catalog.get(layer)
    if rec and rec.definition and (not responsibility or rec.definition[:40] not in responsibility):
        text += " " + first_sentences(rec.definition, 300)
    return ctx.answer(text, intents.ASSUME, 0.5 + score / 2)
