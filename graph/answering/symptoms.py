"""Answers about problems: which layer owns a symptom and why, how to diagnose it, how to triage."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from rdflib import URIRef

from stackgraph.graph.answering import intents
from stackgraph.graph.answering.compete import narrower
from stackgraph.graph.answering.context import (
    DESCRIBED_COVERAGE,
    NAMED_HOW,
    NEGATION,
    SEMANTIC_RELEVANT,
    STRONG_LINK,
    Candidate,
    Context,
)
from stackgraph.graph.answering.evidence import EntityFacts, Evidence, fetch
from stackgraph.graph.answering.passages import SEMANTIC_WEIGHT
from stackgraph.graph.answering.remedies import fixes_for, fixes_of_problem
from stackgraph.graph.answering.text import first_sentences, join, layer_phrase, one_line, sentence, unsaid
from stackgraph.graph.catalog import normalize
from stackgraph.graph.lexical import terms
from stackgraph.graph.model import Answer
from stackgraph.graph.store import SG

if TYPE_CHECKING:
    from stackgraph.graph.engine import Engine

SKOS = "http://www.w3.org/2004/02/skos/core#"
PROBLEM_TYPES = ("Symptom", "TriageBranch", "Cause", "TriageStep")


#: Passage score at which the question describes a likely cause, whose fix is then said.
CAUSE_DESCRIBED = 0.55
#: Passages ranked to tell which likely cause the question describes.
CAUSE_POOL = 30
#: What a cause owned by the layer of something the question names gains over its passage score.
LAYER_AFFINITY = 0.1
#: What a cause that something the question names fixes gains over its passage score.
FIX_AFFINITY = 0.1


def problem_candidates(ctx: Context) -> list[Candidate]:
    return ctx.of_type(*PROBLEM_TYPES)


def descend(ctx: Context, iri: str) -> str:
    """From a symptom (or a step), follow the triage branches the question's own words select,
    as deep as they go: "will not start ... stuck in Pending" ends at the Pending branch. When its
    words select none, the branch whose passages clearly match the question best, by meaning too
    ("the dataloader can't keep up" is the data-loading branch)."""
    current = iri
    seen = {iri}
    # What the report found fine selects no branch ("queue + gen look normal": not queueing).
    # An option of the asker's program selects no branch ("num_workers=4" is no "fewer workers").
    question_terms = set(ctx.parsed.ranking_terms) - ctx.parsed.in_settings
    ruled_out = ctx.parsed.ruled_out

    def found_fine(word: str) -> bool:
        stems = set(terms(word)) if ruled_out else set()
        return bool(stems) and stems <= ruled_out

    question_words = {w for w in ctx.question.lower().replace("'", "").split() if not found_fine(w)}
    for _ in range(6):
        facts = ctx.facts(current)
        steps = facts.iris(SG.triage) + facts.iris(SG.nextStep)
        if ctx.catalog.is_a(current, SG.TriageStep):
            steps = [current]
        best, best_score = None, 0.0
        for step in steps:
            step_facts = ctx.facts(step)
            for branch in step_facts.iris(SG.branch):
                score = _branch_score(ctx, step_facts, branch, question_terms, question_words)
                if score > best_score:
                    best, best_score = branch, score
        if best is None or best in seen or best_score < 0.5:
            break
        seen.add(best)
        current = best
    if current == iri:
        return _branch_by_meaning(ctx, iri) or _next_unchecked(ctx, iri) or iri
    return current


def _next_unchecked(ctx: Context, iri: str) -> str | None:
    """The first branch, in the triage's order, after those the report found fine: "low SM util,
    but the dataloader is NOT it" has checked the first question of the tree (data loading), so
    the next one (collectives) is where to look. None when the report rules out no branch."""
    branches = triage_branches(ctx.engine, iri)
    done = [checked(ctx.engine, b, ctx.parsed.ruled_out) for b in branches]
    if not any(done):
        return None
    return next((b for b, found_fine in zip(branches, done, strict=True) if not found_fine), None)


def _checks_found_fine(ctx: Context) -> dict[str, list[str]]:
    """The causes whose own checks the report names and found fine, each with the problems it is
    a likely cause of: what the report says was fine is what the check shows ("all NV18, so the
    nvlink side is fine" of `nvidia-smi topo -m`, which shows whether GPUs talk over NVLink)."""
    fine = ctx.parsed.ruled_out
    if not fine:
        return {}
    # Run, not only named: written as its command ("ran nvidia-smi topo -m") or said with what it
    # found ("ibstat says Active"); "uncorrectable ECC error" names the error an ECC check finds.
    ran = {
        m.iri
        for m in ctx.parsed.mentions
        if ctx.catalog.is_a(m.iri, SG.Diagnostic)
        and (_written_as_command(ctx, m.iri) or intents.says_it_found(ctx.question, m.surface))
    }
    cleared: dict[str, list[str]] = {}
    for check in ran:
        facts = fetch(ctx.engine, check)
        if not fine & set(terms(facts.text(SG.shows) or "")):
            continue
        for cause in facts.incoming(SG.whereToLook) + facts.incoming(SG.diagnosedBy):
            if ctx.catalog.is_a(cause, SG.Cause):
                cleared[cause] = fetch(ctx.engine, cause).incoming(SG.likelyCause)
    return cleared


def _written_as_command(ctx: Context, check: str) -> bool:
    """Whether the question writes the check's command (its program and first argument at least:
    "nvidia-smi topo -m")."""
    command = fetch(ctx.engine, check).text(SG.commandText)
    words = normalize(command).split()[:3] if command else []
    return len(words) >= 2 and " ".join(words) in ctx.parsed.normalized


def _symptoms_of(engine: Engine, branch: str) -> list[str]:
    """The symptoms whose triage trees open with ``branch``."""
    return [s for s in sorted(engine.problems) if branch in triage_branches(engine, s)]


def triage_branches(engine: Engine, symptom: str) -> list[str]:
    """The first branches of a symptom's triage trees, in the order the seed asks them."""
    found = [
        b for step in fetch(engine, symptom).iris(SG.triage) for b in fetch(engine, step).iris(SG.branch)
    ]
    return sorted(found, key=lambda b: engine.positions.get(b, 99))


def checked(engine: Engine, branch: str, ruled_out: frozenset[str]) -> bool:
    """Whether what was found fine names the branch: its answer, its conclusion or any of its
    names ("dataloader bottleneck"; "so not the fabric" for collectives, which conclude in it)."""
    if not ruled_out:
        return False
    record = engine.catalog.get(branch)
    facts = fetch(engine, branch)
    said = [*facts.texts(SG.answer), *facts.texts(SG.conclusion)]
    said += engine.catalog.all_labels(record) if record else []
    return bool(set(terms(" ".join(said))) & ruled_out)


def next_in_triage(engine: Engine, focus: str, ruled_out: frozenset[str]) -> str | None:
    """ "what's next on the list?": the triage branch to check after the conversation's subject
    (a symptom, or one of its branches already looked at) and after every branch the turns so
    far found fine; None when the subject is no triaged problem or nothing is left."""
    symptoms = [focus] if engine.catalog.is_a(focus, SG.Symptom) else []
    if not symptoms and engine.catalog.is_a(focus, SG.TriageBranch):
        symptoms = _symptoms_of(engine, focus)
    for symptom in symptoms:
        branches = triage_branches(engine, symptom)
        if focus not in branches and not any(checked(engine, b, ruled_out) for b in branches):
            # Nothing looked at yet: "the right doc WAS retrieved but ranked too low, now what?"
            # asks what to do about a finding, which the question's own words say.
            continue
        after = branches[branches.index(focus) + 1 :] if focus in branches else branches
        found = next((b for b in after if not checked(engine, b, ruled_out)), None)
        if found is not None:
            return found
    return None


#: Passage score a triage branch needs to be the one a report describes in its own words, and
#: its lead over the next branch ("the dataloader can't keep up" is the data-loading branch; a
#: bare "latency increased" matches every branch alike and stays at the symptom).
BRANCH_MATCH = 0.40
BRANCH_LEAD = 0.05


def _branch_by_meaning(ctx: Context, iri: str) -> str | None:
    """The branch of the symptom's triage tree whose passages best match the whole question,
    words and meaning, when one clearly does; the branches' answers ("Data loading starved?")
    rarely share the report's words."""
    from stackgraph.graph.triage_tree import tree_nodes

    roots = ctx.facts(iri).iris(SG.triage) or [iri]  # a symptom's trees, or the step itself
    nodes = {node for root in roots for node in tree_nodes(ctx.engine, root)}
    branches = {node for node in nodes if ctx.catalog.is_a(node, SG.TriageBranch)}
    scores = _passage_scores(ctx, {b for b in branches if not ctx.contradicts(b)})
    ranked = sorted(scores.items(), key=lambda kv: -kv[1])
    if not ranked or ranked[0][1] < BRANCH_MATCH:
        return None
    if len(ranked) > 1 and ranked[0][1] - ranked[1][1] < BRANCH_LEAD:
        return None
    return ranked[0][0]


def _branch_score(
    ctx: Context, step: EntityFacts, branch: str, q_terms: set[str], q_words: set[str]
) -> float:
    facts = ctx.facts(branch)
    answer = " ".join(facts.texts(SG.answer))
    answer_terms = set(terms(answer))
    low = answer.lower().strip(" ?.")
    if low in ("yes", "no"):
        asked = set(terms(" ".join(step.texts(SG.question))))
        if not asked or len(asked & q_terms) < max(1, len(asked) // 2):
            return 0.0
        negated = bool(q_words & NEGATION)
        return 1.0 if (low == "no") == negated else 0.0
    if not answer_terms:
        return 0.0
    weight = ctx.engine.lexical.weight
    covered = math.fsum(weight(t) for t in answer_terms & q_terms)
    return covered / math.fsum(weight(t) for t in answer_terms)


#: Least word-overlap or cosine for a described problem to count as the one the question reports.
DESCRIBED_PROBLEM_MIN = 0.45
#: Word overlap below which a described problem's words are noise to the choice among problems
#: ("zero errors anywhere" shares one word with uncorrected ECC errors).
WORDS_COUNT = 0.25


def described_problem(ctx: Context) -> Candidate | None:
    """The symptom, branch or cause the question describes without naming it."""
    lexical, semantic = ctx.described(ctx.engine.problems)
    scores = dict(lexical)
    for iri, score in semantic:
        scores[iri] = max(scores.get(iri, 0.0), score)
    eligible = [iri for iri, score in scores.items() if score >= DESCRIBED_PROBLEM_MIN]
    if not eligible:
        return None
    # Among the eligible, the one both measures favour: "CUDA error: uncorrectable ECC error" is
    # nearest in meaning to CUDA OOM (both "CUDA error"), but its words are the ECC cause's.
    by_words = {iri: score for iri, score in lexical if score >= WORDS_COUNT}
    by_meaning = dict(semantic)
    floor = min(by_meaning.values(), default=0.0)
    fused = {
        iri: (1 - SEMANTIC_WEIGHT) * by_words.get(iri, 0.0) + SEMANTIC_WEIGHT * by_meaning.get(iri, floor)
        for iri in eligible
    }
    iri = max(eligible, key=lambda i: (fused[i], scores[i], i))
    return Candidate(iri, scores[iri], "described")


def owner_of_symptom(ctx: Context) -> Answer | None:
    reported = intents.looks_like_symptom(ctx.question)
    # A problem the question names weakly ("scheduling") counts only in a problem report; one
    # found from the question's description of it ("an agent keeps calling tools") counts unless
    # the wording asked something else ("which layer owns scheduling, isolation and rollout?").
    described_ok = ctx.intent is None
    problems = [
        c
        for c in problem_candidates(ctx)
        if c.score >= STRONG_LINK or reported or (c.how in ("lexical", "semantic") and described_ok)
    ]
    if not problems:
        if not reported:
            return None  # only a question that reports a problem may be matched to one
        described = read_on_a_metric(ctx) or described_problem(ctx)
        if described is None:
            return None
        problems = [described]
    # What the report says it has is no absence it reports ("the traces show ..." of "no trace").
    problems = [c for c in problems if not ctx.contradicts(c.iri)] or problems
    # Nor is what it found fine: "retrieval and queueing flat" names the retrieval branch, whose
    # symptom is then what the report is about, read down its other branches.
    # So is a cause whose own check the report ran and found fine ("ran nvidia-smi topo -m, all
    # NV18, nvlink side looks fine" clears GPU traffic crossing the CPU root complex): the
    # problem it is a cause of is what the report is about.
    cleared = _checks_found_fine(ctx)
    fine = [c for c in problems if checked(ctx.engine, c.iri, ctx.parsed.ruled_out) or c.iri in cleared]
    if fine:
        kept = [c for c in problems if c not in fine]
        problems = (
            kept
            or [
                Candidate(s, c.score, c.how)
                for c in fine
                for s in _symptoms_of(ctx.engine, c.iri) or cleared.get(c.iri, [])
            ]
            or problems
        )
    problems = _described_by_match(ctx, problems)
    target = descend(ctx, problems[0].iri)
    text = explain_problem(ctx, target)
    if not text:
        return None
    return ctx.answer(text, intents.OWNER, 0.55 + 0.45 * problems[0].score)


def read_on_a_metric(ctx: Context) -> Candidate | None:
    """The symptom a metric the report names is the reading of: a report of "GPU-Util only 2%"
    names the metric that diagnoses throughput dropping with GPUs underutilised, and reports that
    symptom, not a question about the metric. None when it names no metric that diagnoses exactly
    one symptom."""
    for cand in ctx.candidates:
        if cand.how not in NAMED_HOW or not ctx.catalog.is_a(cand.iri, SG.Metric):
            continue
        facts = ctx.facts(cand.iri)
        read = [
            s
            for s in dict.fromkeys(facts.incoming(SG.diagnosedBy) + facts.incoming(SG.whereToLook))
            if ctx.catalog.is_a(s, SG.Symptom)
        ]
        if len(read) == 1:
            return Candidate(read[0], cand.score, "metric")
    return None


def _described_by_match(ctx: Context, problems: list[Candidate]) -> list[Candidate]:
    """``problems`` with those found by description (word overlap or meaning against their names
    and sentences) reordered by how well their best passage matches the whole question, after the
    ones the question names: "the traces show requests sitting in the queue" is nearer in meaning
    to "no trace available" by its words, but its statements are the queueing branch's."""
    named = [c for c in problems if c.how in NAMED_HOW]
    described = [c for c in problems if c.how not in NAMED_HOW]
    if len(described) < 2:
        return problems
    best = _passage_scores(ctx, {c.iri for c in described})
    return named + sorted(described, key=lambda c: -best.get(c.iri, 0.0))


def explain_problem(ctx: Context, iri: str) -> str:
    """Owner layers, likely causes and where to look for a symptom, branch or cause."""
    facts = ctx.facts(iri)
    ref = ctx.evidence.entity(iri)
    # Each owner with the edge that names it: the problem's own, else its first cause's.
    owned_by = {layer: (iri, edge) for layer, edge in facts.iris_by_edge(SG.ownedBy, SG.leadsTo).items()}
    held = {
        cause: (iri, edge) for cause, edge in facts.iris_by_edge(SG.likelyCause, SG.suggestsCause).items()
    }
    held |= _causes_named_fixes_address(ctx, iri, held)
    matched = _by_match(ctx, in_triage_order(ctx.engine, iri, list(held)))
    # A cause the report cleared with its own check comes last, and is not the one described.
    cleared = _checks_found_fine(ctx)
    matched = sorted(matched, key=lambda pair: pair[0] in cleared)
    causes = [cause for cause, _ in matched]
    conclusion = facts.text(SG.conclusion)
    parts: list[str] = []
    label = ref.label
    if conclusion:
        ctx.evidence.fact(iri, SG.conclusion, conclusion)
        parts.append(sentence(f"{label} points to {conclusion}"))
    if causes:
        cause_texts = []
        for cause in causes[:4]:
            ctx.evidence.fact(*held[cause], cause)
            ctx.evidence.entity(cause)
            rec = ctx.catalog.get(cause)
            text = rec.label if rec else cause
            if rec and rec.definition and len(causes) <= 2 and rec.definition.lower() != text.lower():
                text += f" ({first_sentences(rec.definition, 220).rstrip('.')})"
            cause_texts.append(text)
            if not owned_by:
                owned_by = {layer: (cause, SG.ownedBy) for layer in ctx.facts(cause).iris(SG.ownedBy)}
        lead = "Likely cause" if len(cause_texts) == 1 else "Likely causes"
        parts.append(f"{lead}: {join(cause_texts, 'or')}.")
        if matched[0][1] >= CAUSE_DESCRIBED and matched[0][0] not in cleared:
            fixes = fixes_for(ctx, causes[0], " ".join(parts))  # the cause the question describes
            if fixes:
                parts.append(fixes)
    if owned_by:
        for layer, (subject, edge) in owned_by.items():
            ctx.evidence.fact(subject, edge, layer)
            ctx.evidence.entity(layer)
        parts.insert(0, f"{label} is owned by {_layers_by_model(ctx, list(owned_by))}.")
    rec = ctx.catalog.get(iri) if ref else None
    if rec and rec.definition and (not parts or (not causes and ctx.catalog.is_a(iri, SG.Cause))):
        # A cause is its own explanation: "Liveness probe misconfigured for slow startup" says
        # what it is only with its definition (probes tuned for a web service kill a pod that
        # takes minutes to load).
        ctx.evidence.fact(iri, SKOS + "definition", rec.definition)
        parts.append(f"{label}: {first_sentences(rec.definition, 400)}")
    own_fixes = fixes_for(ctx, iri, " ".join(parts))  # what mitigates the problem itself
    if own_fixes and own_fixes not in parts:
        parts.append(own_fixes)
    look = where_to_look(ctx, iri, facts)
    if look:
        parts.append(f"Where to look: {join(look)}.")
    else:
        beside = where_to_look_beside(ctx, iri, " ".join(parts).lower()) or where_to_look_above(ctx, iri)
        if beside:
            parts.append(beside)
    for note in [n for n in facts.texts(SG.note) if len(n) >= 40][:1]:
        if len(" ".join(parts)) + len(note) < 900:
            parts.append(sentence(first_sentences(note, 300)))
    return " ".join(parts)


def _causes_named_fixes_address(
    ctx: Context, iri: str, held: dict[str, tuple[str, URIRef]]
) -> dict[str, tuple[str, URIRef]]:
    """Likely causes of the symptoms a triage branch opens or is related to, beyond its own, that
    something the question names fixes, each with the symptom that holds it: "pods stuck Pending
    that should all start at once, our coscheduling config..." reads as the Pending branch, whose
    causes are resources and scheduling, while the gang scheduling it names fixes the Pending
    pod's third cause, the partial placement of a distributed job."""
    fixes = _named_fixes(ctx)
    if not fixes:
        return {}
    found: dict[str, tuple[str, URIRef]] = {}
    related = [r for r in ctx.facts(iri).iris(SKOS + "related") if r in ctx.engine.problems]
    for symptom in dict.fromkeys(_symptoms_of(ctx.engine, iri) + related):
        for cause in ctx.facts(symptom).iris(SG.likelyCause):
            if cause not in held and fixes & set(ctx.facts(cause).incoming(SG.mitigates)):
                found.setdefault(cause, (symptom, SG.likelyCause))
    return found


def _named_fixes(ctx: Context) -> set[str]:
    """What the question names that fixes some problem (gang scheduling, quantization)."""
    problems = ctx.engine.problems
    return {
        cand.iri
        for cand in ctx.candidates
        if cand.how in NAMED_HOW and cand.iri not in problems and ctx.facts(cand.iri).iris(SG.mitigates)
    }


def in_triage_order(engine: Engine, symptom: str, causes: list[str]) -> list[str]:
    """``causes`` in the order the symptom's triage asks about them (the branch suggesting each),
    the others after them as they were: of causes a report matches alike, the seed's first
    question ("is data loading starved?") comes first."""
    order: dict[str, int] = {}
    for n, branch in enumerate(triage_branches(engine, symptom)):
        for cause in fetch(engine, branch).iris(SG.suggestsCause):
            order.setdefault(cause, n)
    return sorted(causes, key=lambda cause: order.get(cause, len(order) + 1))


def _by_match(ctx: Context, causes: list[str]) -> list[tuple[str, float]]:
    """Causes with how well their best passage matches the whole question (words and meaning),
    best first, stable otherwise: the report often describes one of them ("6 of 8 pods scheduled,
    the rest pending"). What the report names weighs in too: a cause owned by the layer of a thing
    it names (``LAYER_AFFINITY``), or fixed by a thing it names (``FIX_AFFINITY``)."""
    unique = list(dict.fromkeys(causes))
    best = _passage_scores(ctx, set(unique))
    near = _named_layers(ctx)
    if near:
        # A cause owned by a layer where something the report names sits is the likelier one:
        # "checkpoint saving is slow on our Lustre, GPUs idle" is storage throughput (Lustre is
        # L1 compute and storage), not scheduling, however alike their sentences read.
        for cause in unique:
            facts = ctx.facts(cause)
            if near & set(facts.iris(SG.ownedBy) + facts.iris(SG.leadsTo)):
                best[cause] = best.get(cause, 0.0) + LAYER_AFFINITY
    fixes = _named_fixes(ctx)
    if fixes:
        # A cause that something the report names fixes is the one it is about: a report naming
        # its coscheduling plugin is about placing a job all or nothing.
        for cause in unique:
            if fixes & set(ctx.facts(cause).incoming(SG.mitigates)):
                best[cause] = best.get(cause, 0.0) + FIX_AFFINITY
    return sorted(((c, best.get(c, 0.0)) for c in unique), key=lambda pair: -pair[1])


def _named_layers(ctx: Context) -> set[str]:
    """The layers where the things the question names sit, problems and layers themselves aside."""
    problems = ctx.engine.problems
    layers: set[str] = set()
    for cand in ctx.candidates:
        if cand.how not in NAMED_HOW or cand.iri in problems or ctx.catalog.is_a(cand.iri, SG.Layer):
            continue
        layers.update(ctx.facts(cand.iri).iris(SG.fitsIn))
    return layers


def _passage_scores(ctx: Context, subjects: set[str]) -> dict[str, float]:
    """Each of ``subjects`` with the score of its best passage among the question's top ones."""
    from stackgraph.graph.answering.reports import rank

    best: dict[str, float] = {}
    for hit in rank(ctx, k=CAUSE_POOL):
        if hit.passage.subject in subjects:
            best.setdefault(hit.passage.subject, hit.score)
    return best


def _layers_by_model(ctx: Context, layers: list[str]) -> str:
    by_model: dict[str, list[str]] = {}
    for layer in layers:
        rec = ctx.catalog.get(layer)
        by_model.setdefault(rec.model if rec and rec.model else "", []).append(layer)
    from stackgraph.graph.answering.text import model_name

    chunks = []
    for model, members in sorted(by_model.items(), key=lambda kv: kv[0] != (ctx.model_hint or kv[0])):
        members.sort(key=lambda layer: ctx.engine.positions.get(layer, 99))
        chunks.append(f"{join([layer_phrase(ctx.catalog, m) for m in members])} in the {model_name(model)}")
    return "; ".join(chunks)


def where_to_look(ctx: Context, iri: str, facts: EntityFacts, record: bool = True) -> list[str]:
    """The checks of a problem as the reader runs them; ``record``: add them to the evidence (not
    when they are only weighed, as another problem's checks may be)."""
    found = []
    for target, edge in facts.iris_by_edge(SG.whereToLook, SG.diagnosedBy).items():
        if record:
            ctx.evidence.fact(iri, edge, target)
            ctx.evidence.entity(target)
        found.append(diagnostic_name(ctx, target, record))
    if not found:
        for text in facts.texts(SG.whereToLook):
            found.append(text)
    return list(dict.fromkeys(found))


def where_to_look_beside(ctx: Context, iri: str, said: str) -> str:
    """For a problem with no checks of its own, the checks of a related problem, saying whose they
    are: a slow cold start has none, but the storage-bound slowness beside it is looked at with
    `iostat -x`, fio and gdscheck. Empty when no related problem has any left unsaid."""
    for other, via in _problems_beside(ctx, iri):
        other_facts = ctx.facts(other)
        checks = other_facts.iris(SG.whereToLook) + other_facts.iris(SG.diagnosedBy)
        if other not in ctx.engine.problems or not checks:
            continue
        look = [w for w in where_to_look(ctx, other, other_facts, record=False) if w.lower() not in said]
        if look:
            where_to_look(ctx, other, other_facts)
            for subject, prop, obj in via:
                ctx.evidence.fact(subject, prop, obj)
            return f"Where to look (as for the related {ctx.catalog.display(other)}): {join(look[:3])}."
    return ""


#: Edges up a triage tree, from a branch to its step and from a step to the one before or its symptom.
_UP_THE_TREE = (SG.branch, SG.nextStep, SG.triage)
#: Edges climbed at most from a branch to the symptom whose tree it is in.
TREE_HEIGHT = 4


def where_to_look_above(ctx: Context, iri: str) -> str:
    """For a triage branch with no checks near it, the checks of the symptom it branches from:
    "time going to retrieval" has none, but a slow answer is first looked at in a trace
    (Langfuse or Arize Phoenix). Empty when no symptom above it has checks."""
    frontier, path = [iri], {iri: []}
    for _ in range(TREE_HEIGHT):
        above = []
        for node in frontier:
            for prop in _UP_THE_TREE:
                for parent in ctx.facts(node).incoming(prop):
                    if parent not in path:
                        path[parent] = [*path[node], (parent, str(prop), node)]
                        above.append(parent)
        for node in above:
            facts = ctx.facts(node)
            if node in ctx.engine.problems and ctx.catalog.is_a(node, SG.Symptom):
                look = where_to_look(ctx, node, facts)
                if look:
                    for subject, prop, obj in path[node]:
                        ctx.evidence.fact(subject, prop, obj)
                    return f"Where to look (as for {ctx.catalog.display(node)}): {join(look[:3])}."
        frontier = above
    return ""


def _problems_beside(ctx: Context, iri: str) -> list[tuple[str, list[tuple[str, str, str]]]]:
    """Problems near ``iri`` whose checks may stand in for its own, nearest first, each with the
    edges that lead there: its related problems, then through each of its likely causes, the
    cause's related causes and the symptoms they are the likely cause of ("data loading starved"
    points at storage throughput, related to the disk I/O that `iostat -x` shows). The symptom
    whose triage ``iri`` belongs to is broader, not beside it: its checks are where it started. For
    a cause, last, the symptoms it is the likely cause of and their related problems."""
    related = SKOS + "related"
    found = [(other, [(iri, related, other)]) for other in ctx.facts(iri).iris(related)]
    facts = ctx.facts(iri)
    for prop in (SG.likelyCause, SG.suggestsCause):
        for cause in facts.iris(prop):
            step = (iri, str(prop), cause)
            near = [(cause, [step])] + [
                (other, [step, (cause, related, other)]) for other in ctx.facts(cause).iris(related)
            ]
            for problem, path in near:
                found.append((problem, path))
                for symptom in ctx.facts(problem).incoming(SG.likelyCause):
                    if narrower(ctx.engine, iri, symptom):
                        continue  # the symptom whose triage ``iri`` is a branch of: broader, not beside
                    found.append((symptom, [*path, (symptom, str(SG.likelyCause), problem)]))
    # A cause with no checks is looked at where the symptoms it explains are, or beside them: the
    # slow startup of a container with tens of gigabytes of weights is a slow cold start, whose
    # storage-bound neighbour `iostat -x` shows.
    for symptom in ctx.facts(iri).incoming(SG.likelyCause):
        step = (symptom, str(SG.likelyCause), iri)
        found.append((symptom, [step]))
        found.extend((other, [step, (symptom, related, other)]) for other in ctx.facts(symptom).iris(related))
    return found


#: How many of the question's best passages are searched for the problem a report describes.
DESCRIBED_PROBLEM_HITS = 5


def remedy_described(ctx: Context) -> Answer | None:
    """The fix of the problem a report describes, with where to look, when what it names is no
    problem with a fix: "how to prevent the job from running while some pods are still pending due
    to insufficient resources?" names a cause the graph fixes nothing of, while its description
    matches a partially placed job, which gang scheduling fixes; "reduce the load time of the
    model" names a technology, while it describes slow startup, which NVMe storage fixes. None
    when the question asks no fix, or none of its best passages is about a problem the graph names
    a fix for."""
    if ctx.parsed is None or not ctx.parsed.asks_for_remedy or not ctx.candidates:
        return None
    if ctx.from_conversation:
        return None  # "and what fixes it?" describes nothing: its problem is the one named before
    from stackgraph.graph.answering.reports import ASSERT_SCORE, rank

    named = {c.iri for c in ctx.candidates}
    seen: set[str] = set()
    for hit in rank(ctx)[:DESCRIBED_PROBLEM_HITS]:
        subject = hit.passage.subject
        if hit.score < ASSERT_SCORE:
            break  # only a guess at what the report describes
        if subject in seen or subject in named or subject not in ctx.engine.problems:
            continue
        seen.add(subject)
        ctx.evidence = Evidence(ctx.engine)
        rec = ctx.catalog.get(subject)
        opening = ""
        if rec is not None and rec.definition:
            ctx.evidence.entity(subject)
            ctx.evidence.fact(subject, SKOS + "definition", rec.definition)
            opening = sentence(f"{ctx.catalog.display(subject)}: {first_sentences(rec.definition, 300)}")
        fixes = fixes_of_problem(ctx, subject, opening)
        if fixes:
            look = where_to_look(ctx, subject, ctx.facts(subject))
            checks = [f"Where to look: {join(look[:3])}."] if look else []
            return ctx.answer(" ".join([opening, *fixes, *checks]).strip(), intents.PRACTICE, 0.7)
    return None


def diagnostic_name(ctx: Context, iri: str, record: bool = True) -> str:
    """A check as the reader runs it: its command, else its name with the tools that do it ("Trace
    latency across spans (with OpenTelemetry for LLMs: Langfuse or Arize Phoenix)")."""
    facts = ctx.facts(iri)
    command = facts.text(SG.commandText)
    if command:
        if record:
            ctx.evidence.fact(iri, SG.commandText, command)
        return f"`{one_line(command)}`"
    tools = _tools_for(ctx, iri, facts, record)
    return f"{ctx.catalog.label(iri)} (with {tools})" if tools else ctx.catalog.label(iri)


#: At most this many tools are named for one check.
TOOLS_NAMED = 2


def _tools_for(ctx: Context, iri: str, facts: EntityFacts, record: bool = True) -> str:
    """The tools implementing a check, or what a practice uses, each with its kinds: empty when
    the graph names none. ``record``: add the edges used to the evidence."""
    checks = [iri, *facts.iris(SG.uses)]
    if record:
        for used in checks[1:]:
            ctx.evidence.fact(iri, SG.uses, used)
    named = []
    for check in checks:
        for tool in ctx.facts(check).incoming(SG.implements)[:TOOLS_NAMED]:
            kinds = ctx.facts(tool).incoming(SKOS + "broader")[:TOOLS_NAMED]
            if record:
                ctx.evidence.fact(tool, SG.implements, check)
                ctx.evidence.entity(tool)
                for kind in kinds:
                    ctx.evidence.fact(kind, SKOS + "broader", tool)
            label = ctx.catalog.label(tool)
            named.append(f"{label}: {join([ctx.catalog.label(k) for k in kinds], 'or')}" if kinds else label)
    return join(named[:TOOLS_NAMED], "or")


#: At most this many of the tools that read a metric are named beside it.
METRIC_TOOLS = 2


def _medium_checked(ctx: Context, step: str) -> str | None:
    """What a step of a path runs over (``sg:involves``, named after "over" in the step's label:
    GPUDirect Storage of "Storage to GPU over GPUDirect Storage"), when the graph has checks
    for it."""
    label = ctx.catalog.label(step)
    if " over " not in label:
        return None
    over = set(terms(label.split(" over ", 1)[1]))
    for iri in ctx.facts(step).iris(SG.involves):
        names = ctx.catalog.all_labels(ctx.catalog.get(iri))
        if any(set(terms(n)) and set(terms(n)) <= over for n in names) and ctx.facts(iri).iris(
            SG.diagnosedBy
        ):
            return iri
    return None


def diagnose(ctx: Context) -> Answer | None:
    """Commands, tools and metrics for what the question names, else for what it describes."""
    found: list[tuple[str, str, URIRef]] = []  # (diagnostic, subject it checks, the edge between)
    if (
        ctx.parsed is not None
        and not ctx.parsed.asks_for_check
        and not problem_candidates(ctx)
        and intents.looks_like_symptom(ctx.question)
        and read_on_a_metric(ctx) is not None
    ):
        # "GPU-Util is only 2%, how do I get it up?" reports a reading, not how to take one.
        reading = owner_of_symptom(ctx)
        if reading is not None:
            return reading
    subjects = ctx.candidates[:3]
    if any(c.score >= STRONG_LINK for c in subjects):
        # A common word naming something only weakly ("resources" of "insufficient resources",
        # an exact match discounted when linked) beside a name said surely ("terraform apply wants
        # to destroy 12 resources") is no subject whose checks answer the question.
        subjects = [c for c in subjects if not (c.how == "exact" and c.score < STRONG_LINK)]
    checked: str | None = None  # the subject whose checks come first
    for cand in subjects:
        iri = cand.iri
        if ctx.catalog.is_a(iri, SG.Diagnostic):
            found.append((iri, iri, SG.diagnosedBy))
            # A metric is read with tools ("how do I monitor GPU usage?": DCGM Exporter, nvidia-smi).
            found += [
                (tool, iri, SG.diagnosedBy) for tool in ctx.facts(iri).iris(SG.diagnosedBy)[:METRIC_TOOLS]
            ]
            checked = checked or iri
            continue
        target = descend(ctx, iri) if ctx.catalog.is_a(iri, SG.Symptom) else iri
        facts = ctx.facts(target)
        checks = facts.iris_by_edge(SG.diagnosedBy, SG.whereToLook)
        found += [(diag, target, edge) for diag, edge in checks.items()]
        if not checks:
            # A practice is carried out with the commands and tools it uses ("Treat the plan as the
            # review artifact": terraform plan -out, terraform show -json, jq): those are its how-to.
            found += [(d, target, SG.uses) for d in facts.iris(SG.uses) if ctx.catalog.is_a(d, SG.Diagnostic)]
        if not checks and not found:
            # A step of a path is checked where it runs over: "how do I check it's in use?" of
            # storage feeding the GPU over GPUDirect Storage is answered by gdscheck.
            medium = _medium_checked(ctx, target)
            if medium is not None:
                found += [(d, medium, e) for d, e in ctx.facts(medium).iris_by_edge(SG.diagnosedBy).items()]
        if not facts.iris(SG.diagnosedBy):
            for cause in facts.iris_by_edge(SG.likelyCause, SG.suggestsCause):
                found += [(d, cause, SG.diagnosedBy) for d in ctx.facts(cause).iris(SG.diagnosedBy)]
        checked = checked or (iri if found else None)
    if not found:
        hits, semantic = ctx.described(ctx.engine.diagnostics, k=3, semantic_k=8)
        hits = [
            (iri, sc)
            for iri, sc in hits
            if ctx.engine.lexical.coverage(ctx.question, iri) >= DESCRIBED_COVERAGE
        ]
        semantic = [(iri, sc) for iri, sc in semantic if sc >= SEMANTIC_RELEVANT]
        best = _merge(hits, semantic)
        if best and best[0][1] >= 0.35:
            found = [(best[0][0], best[0][0], SG.diagnosedBy)]
            found += [(iri, iri, SG.diagnosedBy) for iri, s in best[1:2] if s >= max(0.45, best[0][1] - 0.05)]
    if not found:
        return None
    found = _with_earlier_steps(ctx, found)
    if checked is not None and not ctx.catalog.is_a(checked, SG.Diagnostic):
        # The answer is about what it checks: after "how do I check it?", "it" is still that.
        ctx.evidence.entity(checked)
    lines = []
    seen = set()
    for diag, subject, edge in found:
        if diag in seen:
            continue
        seen.add(diag)
        if subject != diag:
            ctx.evidence.fact(subject, edge, diag)
        ctx.evidence.entity(diag)
        facts = ctx.facts(diag)
        name = diagnostic_name(ctx, diag)
        what = facts.text(SG.shows) or (ctx.catalog.get(diag).definition if ctx.catalog.get(diag) else None)
        # Commands read the same way (three OpenStack listings) share their advice: said once.
        shown = unsaid(first_sentences(what, 260), " ".join(lines)) if what else ""
        if what:
            ctx.evidence.fact(diag, SG.shows, what)
        # A command is run, a metric watched ("Watch GPU utilization"), a tool used.
        verb = "Run" if name.startswith("`") else "Watch" if ctx.catalog.is_a(diag, SG.Metric) else "Use"
        line = f"{verb} {name}: {shown}" if shown else f"{verb} {name}."
        lines.append(sentence(line))
        if len(lines) == 4:
            break
    if checked is not None and not ctx.catalog.is_a(checked, SG.Diagnostic):
        # Named by the subject whose checks these are, not by a subject named first that has none.
        subject = checked
        head = f"To check {ctx.catalog.label(subject)}:"
        rec = ctx.catalog.get(subject)
        if rec is not None and rec.definition and subject in ctx.engine.problems:
            # What the problem is comes first: the checks are read against it.
            ctx.evidence.fact(subject, SKOS + "definition", rec.definition)
            head = f"{sentence(f'{rec.label}: {first_sentences(rec.definition, 240)}')} {head}"
        lines.insert(0, head)
    score = subjects[0].score if subjects else 0.7
    return ctx.answer(" ".join(lines), intents.DIAGNOSE, 0.5 + 0.5 * score)


def _with_earlier_steps(ctx: Context, found: list[tuple[str, str, URIRef]]) -> list[tuple[str, str, URIRef]]:
    """Each command that is a later step of a flow comes after the steps before it
    (``Context.steps_before``): "how do I list what terraform will destroy?" runs the plan first."""
    out: list[tuple[str, str, URIRef]] = []
    for item in found:
        out += [(b, b, SG.diagnosedBy) for b in ctx.steps_before(item[0]) if all(b != o[0] for o in out)]
        out.append(item)
    return out


def _merge(*lists: list[tuple[str, float]]) -> list[tuple[str, float]]:
    scores: dict[str, float] = {}
    for items in lists:
        for iri, score in items:
            scores[iri] = max(scores.get(iri, 0.0), score)
    return sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))


#: The most steps and branches walked up from a node to the symptom whose tree holds it.
TREE_DEPTH = 8


def _triaged(ctx: Context, iri: str) -> str:
    """The symptom whose triage tree holds ``iri`` (a step, or a branch of one), else ``iri``:
    "what's the order to look at things when latency goes up?" is nearest the latency tree's
    first step, and the tree to walk is its symptom's."""
    start = iri
    for _ in range(TREE_DEPTH):
        facts = ctx.facts(iri)
        if facts.iris(SG.triage):
            return iri
        # Up from a branch to its step, from a step to the symptom (or to the branch whose answer
        # led to it: the RAG tree's later questions hang off the branch before them).
        parents = facts.incoming(SG.triage) or facts.incoming(SG.branch) or facts.incoming(SG.nextStep)
        if not parents:
            return start
        iri = parents[0]
    return start


def triage_overview(ctx: Context) -> Answer | None:
    problems = problem_candidates(ctx)
    if not problems:
        # "What's the order to check things when a training job gets slower?" names no symptom:
        # the one its words describe is the tree to walk.
        described = described_problem(ctx)
        if described is None:
            return None
        problems = [described]
    symptom = _triaged(ctx, problems[0].iri)
    facts = ctx.facts(symptom)
    steps = facts.iris(SG.triage)
    if not steps:
        return owner_of_symptom(ctx)
    ctx.evidence.entity(symptom)
    lines = []
    for step in steps:
        step_facts = ctx.facts(step)
        question = step_facts.text(SG.question) or ctx.catalog.label(step)
        action = step_facts.text(SG.action)
        ctx.evidence.fact(symptom, SG.triage, step)
        line = f"Triage for {ctx.catalog.label(symptom)}: {question}"
        if action:
            line += f" ({action})"
        lines.append(line)
        # In the order the seed asks them: the first branch is the first thing to rule out.
        for branch in sorted(step_facts.iris(SG.branch), key=lambda b: ctx.engine.positions.get(b, 99)):
            b = ctx.facts(branch)
            ctx.evidence.fact(step, SG.branch, branch)
            answer = b.text(SG.answer) or ctx.catalog.label(branch)
            conclusion = b.text(SG.conclusion) or ""
            layers = [layer_phrase(ctx.catalog, layer) for layer in b.iris(SG.leadsTo)]
            lines.append(f"- {answer} → {conclusion}" + (f" ({join(layers)})" if layers else ""))
    return ctx.answer("\n".join(lines), intents.TRIAGE, 0.9)


__all__ = ["owner_of_symptom", "diagnose", "triage_overview", "explain_problem", "URIRef"]
