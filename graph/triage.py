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
    current = steps[0] if steps else None
    node = symptom
    sources = list(catalog.get(symptom).sources) if catalog.get(symptom) else []
    action = fetch(engine, current).text(SG.action) if current else None
    while current is not None:
        options = _options(engine, current)
        if len(taken) == len(answers):
            question = fetch(engine, current).text(SG.question) or catalog.label(current)
            return TriageState(
                ref,
                question,
                tuple(a for a, _ in options),
                tuple(taken),
                action=action,
                sources=tuple(sources),
            )
        given = answers[len(taken)]
        branch = _match(options, given)
        if branch is None:
            choices = "; ".join(f"{i}. {a}" for i, (a, _) in enumerate(options, 1))
            raise TriageError(f"{given!r} is not an answer to this step; choose one of: {choices}")
        taken.append(next(a for a, b in options if b == branch))
        node = branch
        sources += [
            s for s in (catalog.get(branch).sources if catalog.get(branch) else []) if s not in sources
        ]
        nxt = fetch(engine, branch).iris(SG.nextStep)
        current = nxt[0] if nxt else None
        action = fetch(engine, current).text(SG.action) if current else fetch(engine, branch).text(SG.action)
    return _conclude(engine, ref, node, tuple(taken), action, sources)


def _conclude(
    engine: Engine, ref: EntityRef, node: str, taken: tuple[str, ...], action: str | None, sources: list
) -> TriageState:
    catalog = engine.catalog
    facts = fetch(engine, node)
    layers = facts.iris(SG.leadsTo) or facts.iris(SG.ownedBy)
    causes = facts.iris(SG.suggestsCause) + facts.iris(SG.likelyCause)
    diagnostics: list[str] = []
    for subject in [node, *causes, *layers]:
        for diag in fetch(engine, subject).iris(SG.diagnosedBy) + fetch(engine, subject).iris(SG.whereToLook):
            text = fetch(engine, diag).text(SG.commandText) or catalog.label(diag)
            if text not in diagnostics:
                diagnostics.append(text)
    if node == ref.iri and not layers:
        conclusion = facts.text(SG.conclusion) or "This symptom has no triage tree; see its owner and causes."
    else:
        conclusion = facts.text(SG.conclusion) or catalog.label(node)
    return TriageState(
        symptom=ref,
        question=None,
        options=(),
        taken=taken,
        conclusion=conclusion,
        layers=tuple(catalog.ref(layer) for layer in layers),
        causes=tuple(catalog.ref(c) for c in causes),
        diagnostics=tuple(diagnostics[:12]),
        action=action,
        sources=tuple(sources),
    )
