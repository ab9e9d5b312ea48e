"""Walking a symptom's triage tree one answer at a time (for the TUI and the MCP ``triage`` tool)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from stackgraph.graph.answering.evidence import fetch
from stackgraph.graph.catalog import normalize
from stackgraph.graph.model import EntityRef, TriageState
from stackgraph.graph.store import SG

if TYPE_CHECKING:
    from stackgraph.graph.engine import Engine


class TriageError(ValueError):
    """An answer that is not one of the step's options; the message lists the options."""


def _steps(engine: Engine, iri: str) -> list[str]:
    facts = fetch(engine, iri)
    if engine.catalog.is_a(iri, SG.TriageStep):
        return [iri]
    return facts.iris(SG.triage) + facts.iris(SG.nextStep)


def _options(engine: Engine, step: str) -> list[tuple[str, str]]:
    """(answer text, branch IRI) for a step, in the order the source lists them."""
    branches = fetch(engine, step).iris(SG.branch)
    out = []
    for branch in branches:
        facts = fetch(engine, branch)
        answer = facts.text(SG.answer) or engine.catalog.label(branch)
        position = facts.text(SG.position)
        out.append((int(position) if position and position.isdigit() else 99, answer, branch))
    out.sort(key=lambda item: (item[0], item[2]))
    return [(answer, branch) for _, answer, branch in out]


def _match(options: list[tuple[str, str]], given: str) -> str | None:
    wanted = normalize(given)
    for answer, branch in options:
        if normalize(answer) == wanted or branch == given:
            return branch
    for index, (_answer, branch) in enumerate(options, 1):
        if wanted == str(index):
            return branch
    starts = [branch for answer, branch in options if normalize(answer).startswith(wanted) and wanted]
    return starts[0] if len(starts) == 1 else None


def walk(engine: Engine, symptom: str, answers: list[str]) -> TriageState:
    """Follow ``answers`` from the symptom's first question; stop at a conclusion or the next question."""
    catalog = engine.catalog
    ref = catalog.ref(symptom)
    steps = _steps(engine, symptom)
    if not steps and answers:
        raise TriageError(
            f"{catalog.label(symptom)} has no triage tree, so there is no question to answer; "
            "call with no answers for its owner, causes and checks"
        )
    taken: list[str] = []
    asked: list[str] = []
    current = steps[0] if steps else None
    node = symptom
    sources = list(catalog.get(symptom).sources) if catalog.get(symptom) else []
    action = fetch(engine, current).text(SG.action) if current else None
    while current is not None:
        options = _options(engine, current)
        question = fetch(engine, current).text(SG.question) or catalog.label(current)
        if len(taken) == len(answers):
            return TriageState(
                ref,
                question,
                tuple(a for a, _ in options),
                tuple(taken),
                action=action,
                sources=tuple(sources),
                asked=tuple(asked),
            )
        given = answers[len(taken)]
        branch = _match(options, given)
        if branch is None:
            choices = "; ".join(f"{i}. {a}" for i, (a, _) in enumerate(options, 1))
            raise TriageError(f"{given!r} is not an answer to this step; choose one of: {choices}")
        taken.append(next(a for a, b in options if b == branch))
        asked.append(question)
        node = branch
        sources += [
            s for s in (catalog.get(branch).sources if catalog.get(branch) else []) if s not in sources
        ]
        nxt = fetch(engine, branch).iris(SG.nextStep)
        current = nxt[0] if nxt else None
        action = fetch(engine, current).text(SG.action) if current else fetch(engine, branch).text(SG.action)
    return _conclude(engine, ref, node, tuple(taken), action, sources, tuple(asked))


def _checks(engine: Engine, subjects: list[str]) -> tuple[list[str], list[str]]:
    """(command lines, other things to inspect) the graph links to ``subjects``.

    Only what is linked to the conclusion, the symptom or its causes: the owning layers' own
    diagnostics are about the layer in general (``ibstat`` for a GPU layer), not this symptom.
    """
    commands: list[str] = []
    others: list[str] = []
    seen: set[str] = set()
    for subject in dict.fromkeys(subjects):
        facts = fetch(engine, subject)
        for diag in facts.iris(SG.diagnosedBy) + facts.iris(SG.whereToLook):
            if diag in seen:
                continue
            seen.add(diag)
            command = fetch(engine, diag).text(SG.commandText)
            if command:
                commands.append(command)
            else:
                others.append(engine.catalog.label(diag))
    return commands, others


def _owned_by(layers: list[EntityRef]) -> str:
    names = [layer.display + (f" ({layer.model})" if layer.model else "") for layer in layers]
    listed = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
    return f"Owned by {listed}."


def _conclude(
    engine: Engine,
    ref: EntityRef,
    node: str,
    taken: tuple[str, ...],
    action: str | None,
    sources: list,
    asked: tuple[str, ...] = (),
) -> TriageState:
    catalog = engine.catalog
    facts = fetch(engine, node)
    layers = facts.iris(SG.leadsTo) or facts.iris(SG.ownedBy)
    causes = facts.iris(SG.suggestsCause) + facts.iris(SG.likelyCause)
    commands, others = _checks(engine, [node, ref.iri, *causes])
    layer_refs = [catalog.ref(layer) for layer in layers]
    # Concluding at the symptom itself, the source's note on it says why those layers own it; at
    # the end of a tree, the questions answered on the way are the reason.
    reason = facts.text(SG.note) if node == ref.iri else None
    conclusion = facts.text(SG.conclusion)
    if not conclusion:
        # No conclusion text in the source: say who owns it rather than repeat the symptom's name.
        conclusion = (
            _owned_by(layer_refs) if layer_refs else "The graph names no owning layer for this symptom."
        )
    return TriageState(
        symptom=ref,
        question=None,
        options=(),
        taken=taken,
        conclusion=conclusion,
        layers=tuple(layer_refs),
        causes=tuple(catalog.ref(c) for c in causes),
        diagnostics=tuple(commands),
        action=action,
        sources=tuple(sources),
        asked=asked,
        look_at=tuple(others),
        reason=reason,
    )
