"""Triage conclusions and the entity page's copy, labels and places (Pilot)."""

from __future__ import annotations

import pytest
import rdflib
from textual.widgets import (
    Markdown,
    OptionList,
    Static,
)
from tui_support import (  # noqa: F401  (data_dir: the autouse fixture that isolates history)
    SIZE,
    a_path_to_layers,
    data_dir,
    settle,
)

from stackgraph.graph.engine import Engine
from stackgraph.tui.app import StackgraphApp
from stackgraph.tui.entity import EntityPane
from stackgraph.tui.triage import TriagePane

# ---------------------------------------------------------------------------------- issue 14: triage


def _linked_checks(engine: Engine, subjects: list[str]) -> tuple[set[str], set[str]]:
    """(command lines, labels of other checks) linked to ``subjects``, read from the graph itself."""
    values = " ".join(f"<{s}>" for s in subjects)
    query = (
        "SELECT ?d ?cmd ?label WHERE { VALUES ?s { VALUES_HERE } ?s sg:diagnosedBy|sg:whereToLook ?d ."
        " OPTIONAL { ?d sg:commandText ?cmd } OPTIONAL { ?d rdfs:label ?label } }"
    )
    rows = engine.graph.query(
        query.replace("VALUES_HERE", values),
        initNs={"sg": "https://w3id.org/stackgraph/ns#", "rdfs": str(rdflib.RDFS)},
    )
    commands = {str(r.cmd) for r in rows if r.cmd is not None}
    others = {str(r.label) for r in rows if r.cmd is None and r.label is not None}
    return commands, others


def a_symptom_without_a_tree_whose_layers_have_other_diagnostics(engine: Engine):
    """A symptom concluded at once whose owning layers carry diagnostics not linked to it."""
    for iri in engine.entities_of("Symptom"):
        state = engine.triage(iri)
        if not state.done or not state.layers:
            continue
        own = _linked_checks(engine, [iri, *(c.iri for c in state.causes)])
        layer_only = _linked_checks(engine, [layer.iri for layer in state.layers])
        if (layer_only[0] | layer_only[1]) - (own[0] | own[1]):
            return iri, state, own, layer_only
    pytest.skip("no symptom whose layers have diagnostics of their own")


async def test_triage_lists_only_the_checks_linked_to_the_symptom_or_its_causes(engine: Engine) -> None:
    iri, state, (commands, others), (layer_commands, layer_others) = (
        a_symptom_without_a_tree_whose_layers_have_other_diagnostics(engine)
    )
    assert set(state.diagnostics) == commands
    assert set(state.look_at) == others
    # The conclusion names the owning layers instead of repeating the symptom's name.
    assert state.conclusion != state.symptom.label
    assert all(layer.display in state.conclusion for layer in state.layers)
    app = StackgraphApp(engine=engine)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("f5")
        await settle(pilot)
        app.query_one(TriagePane).start(iri)
        await settle(pilot)
        shown = app.query_one("#triage-result", Markdown).source
        rows = app.query_one("#triage-commands").commands
        assert set(rows) == commands
        for extra in (layer_commands | layer_others) - (commands | others):
            assert extra not in rows and extra not in shown


async def test_number_keys_answer_and_the_path_shows_questions_and_answers(engine: Engine) -> None:
    symptom, picks, expected = a_path_to_layers(engine)
    app = StackgraphApp(engine=engine)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("f5")
        await settle(pilot)
        pane = app.query_one(TriagePane)
        pane.start(symptom)
        await settle(pilot)
        for pick in picks:
            await pilot.press(str(pick + 1))
            await settle(pilot)
        assert pane.state == expected
        path = str(app.query_one("#triage-path", Static).content)
        for question, answer in zip(expected.asked, expected.taken, strict=True):
            assert question in path and answer in path
        if expected.diagnostics:
            commands = app.query_one("#triage-commands", OptionList)
            commands.focus()
            await pilot.press("y")
            assert app.clipboard == expected.diagnostics[0]


async def test_a_command_row_copies_with_enter(engine: Engine) -> None:
    iri = next(
        i for i in engine.entities_of("Symptom") if engine.triage(i).done and engine.triage(i).diagnostics
    )
    expected = engine.triage(iri).diagnostics
    app = StackgraphApp(engine=engine)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("f5")
        await settle(pilot)
        app.query_one(TriagePane).start(iri)
        await settle(pilot)
        commands = app.query_one("#triage-commands", OptionList)
        assert commands.display and commands.option_count == len(expected)
        commands.focus()
        await pilot.press("end", "enter")
        assert app.clipboard == expected[-1]


# ---------------------------------------------------------------------------------- issue 14: entity page


def _with_hidden_labels(engine: Engine):
    for iri in engine.entities_of("Technology"):
        record = engine.catalog.get(iri)
        if record is not None and record.hidden_labels - record.alt_labels:
            return iri, record
    pytest.skip("no technology with a hidden label")


async def test_the_entity_page_hides_hidden_labels_copies_iris_and_back_keeps_the_place(
    engine: Engine,
) -> None:
    iri, record = _with_hidden_labels(engine)
    app = StackgraphApp(engine=engine)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        app.open_entity(iri)
        await settle(pilot)
        header = str(app.query_one("#entity-header", Static).content)
        for hidden in record.hidden_labels - record.alt_labels:
            assert hidden not in header.split("also:")[-1].split("\n")[0].split(", ")
        pane = app.query_one(EntityPane)
        links = app.query_one("#entity-links", OptionList)
        openable = [i for i, target in enumerate(pane._targets) if target]
        assert len(openable) >= 2
        links.highlighted = openable[1]
        target = pane._targets[openable[1]]
        await pilot.press("y")
        assert app.clipboard == target
        await pilot.press("enter")
        await settle(pilot)
        assert pane.current == target
        await pilot.press("b")
        await settle(pilot)
        assert pane.current == iri
        assert links.highlighted == openable[1]  # the place on the page is kept
