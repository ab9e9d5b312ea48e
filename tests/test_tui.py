"""The TUI through Textual's Pilot: each flow driven by keys and clicks, checked against the engine.

Every app here shares the session's engine (the built-in graph, name matching only), so the tests
run fast and the answers are the engine's own; STACKGRAPH_DATA_DIR points the history at a
temporary directory so nothing is written to the real home.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import rdflib
from textual.widgets import (
    DataTable,
    Input,
    Markdown,
    OptionList,
    Select,
    Static,
    TabbedContent,
    TextArea,
    Tree,
)

from stackgraph.graph.conversation import Conversation
from stackgraph.graph.engine import Engine
from stackgraph.graph.sparql import ParseError, run_query
from stackgraph.tui import keys
from stackgraph.tui.answer import AnswerView, strip_prefixes
from stackgraph.tui.app import StackgraphApp
from stackgraph.tui.entity import EntityPane
from stackgraph.tui.export import ExportPane
from stackgraph.tui.history import DATA_DIR_ENV, MAX_ENTRIES, Cursor, History
from stackgraph.tui.triage import TriagePane

SIZE = (100, 36)


@pytest.fixture(autouse=True)
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "data"
    monkeypatch.setenv(DATA_DIR_ENV, str(path))
    return path


async def settle(pilot, rounds: int = 3) -> None:
    """Let posted messages start their workers, the workers finish, and their results draw."""
    for _ in range(rounds):
        await pilot.pause()
        await pilot.app.workers.wait_for_complete()
        await queries_done(pilot)
    await pilot.pause()


async def queries_done(pilot, timeout: float = 30.0) -> None:
    """SPARQL queries run in daemon threads, not workers: wait until the pane has its result."""
    import asyncio

    pane = pilot.app.query_one("#sparql-pane")
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while pane.running and loop.time() < deadline:
        await asyncio.sleep(0.02)
    await pilot.pause()


async def ask(pilot, question: str) -> AnswerView:
    pilot.app.query_one("#ask-input", Input).focus()
    await pilot.press(*question)
    await pilot.press("enter")
    await settle(pilot)
    return list(pilot.app.query(AnswerView))[-1]


def a_member(engine: Engine):
    """A technology placed in a layer of the first model that has members."""
    return next(info.members[0] for info in engine.layers() if info.members)


def active(app) -> str:
    return app.query_one(TabbedContent).active


# ---------------------------------------------------------------------------------- ask


async def test_a_question_gets_the_engines_answer_with_its_layer_and_evidence(engine: Engine) -> None:
    member = a_member(engine)
    question = f"where does {member.label} fit?"
    expected = engine.ask(question)
    assert expected.answered
    app = StackgraphApp(engine=engine)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()  # the tabs finish mounting after the first frame
        view = await ask(pilot, question)
        assert view.answer == expected
        shown = view.query_one(".answer", Markdown).source
        assert expected.answer in shown
        layers = [e for e in expected.entities if e.code]
        assert layers and all(layer.display in shown for layer in layers)
        details = view.query_one(".details-text", Markdown).source
        assert expected.facts and expected.facts[0].text in details
        assert strip_prefixes(expected.sparql[0]) in details
        assert view.query_one(".details").collapsed  # "how I answered" starts collapsed

        # ctrl+o: the answer's SPARQL in the SPARQL tab, run at once.
        await pilot.press("ctrl+o")
        await settle(pilot)
        assert active(app) == "sparql"
        assert app.query_one("#sparql-editor", TextArea).text == strip_prefixes(expected.sparql[0])
        status = str(app.query_one("#sparql-status", Static).content)
        assert "row" in status or "ASK" in status
        assert app.query_one("#sparql-table", DataTable).row_count > 0


async def test_a_follow_up_resolves_it_against_the_previous_turn(engine: Engine) -> None:
    member = a_member(engine)
    first, follow_up = f"where does {member.label} fit?", "what is it?"
    conversation = Conversation()
    engine.ask(first, conversation)
    expected = engine.ask(follow_up, conversation)
    assert member.iri in [e.iri for e in expected.entities]
    app = StackgraphApp(engine=engine)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()  # the tabs finish mounting after the first frame
        await ask(pilot, first)
        view = await ask(pilot, follow_up)
        assert view.answer == expected
        assert member.label in view.query_one(".answer", Markdown).source

        # ctrl+n forgets the conversation: the same follow-up no longer knows what "it" is.
        await pilot.press("ctrl+n")
        fresh = await ask(pilot, follow_up)
        assert fresh.answer == engine.ask(follow_up)
        assert fresh.answer != expected


async def test_a_declined_question_offers_suggestions_and_clicking_one_asks_about_it(engine: Engine) -> None:
    question = "what is a flurbo?"
    expected = engine.ask(question)
    assert not expected.answered and expected.suggestions
    app = StackgraphApp(engine=engine)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()  # the tabs finish mounting after the first frame
        view = await ask(pilot, question)
        assert view.has_class("-declined")
        choices = view.query_one(".suggestions", OptionList)
        assert choices.display and choices.option_count == len(expected.suggestions)
        await pilot.click(choices, offset=(4, 0))
        await settle(pilot)
        views = list(app.query(AnswerView))
        assert len(views) == 2
        chosen = expected.suggestions[0]
        assert views[1].question == f"What is {chosen.display}?"
        assert views[1].answer is not None and views[1].answer.answered
        assert chosen.iri in [e.iri for e in views[1].answer.entities]


async def test_up_and_down_walk_the_question_history(engine: Engine) -> None:
    app = StackgraphApp(engine=engine)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()  # the tabs finish mounting after the first frame
        await ask(pilot, "where does JAX fit?")
        await ask(pilot, "what is it?")
        box = app.query_one("#ask-input", Input)
        await pilot.press(*"draft")
        await pilot.press("up")
        assert box.value == "what is it?"
        await pilot.press("up")
        assert box.value == "where does JAX fit?"
        await pilot.press("down", "down")
        assert box.value == "draft"


async def test_questions_typed_while_the_graph_loads_are_answered_once_it_has(data_dir: Path) -> None:
    app = StackgraphApp(semantic=False)  # no engine given: the app loads the built-in graph itself
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"where does JAX fit?")
        await pilot.press("enter")
        await pilot.pause()
        view = app.query_one(AnswerView)
        if app.engine is None:  # the usual case: painted and typing long before the graph is in
            assert "Queued" in str(view.query_one(".waiting", Static).content)
        await settle(pilot, rounds=5)
        assert app.engine is not None
        assert view.answer is not None and view.answer.answered
        assert "JAX" in view.query_one(".answer", Markdown).source


# ---------------------------------------------------------------------------------- browse and entity


async def test_browse_to_an_entity_follow_a_link_then_back_and_forward(engine: Engine) -> None:
    layer = next(info for info in engine.layers("nine") if info.members)
    member = sorted(layer.members, key=lambda m: m.label.casefold())[0]
    app = StackgraphApp(engine=engine)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()  # the tabs finish mounting after the first frame
        await pilot.press("f3")
        await settle(pilot)
        tree = app.query_one("#browse-tree", Tree)
        assert app.focused is tree
        for _ in range(60):
            if tree.cursor_node is not None and tree.cursor_node.data == layer.layer.iri:
                break
            await pilot.press("down")
        assert tree.cursor_node.data == layer.layer.iri
        await pilot.press("enter")  # a layer expands
        assert active(app) == "browse"
        await pilot.press("down", "enter")  # its first technology opens
        await settle(pilot)
        assert active(app) == "entity"
        page = app.query_one(EntityPane)
        assert page.current == member.iri
        header = str(app.query_one("#entity-header", Static).content)
        assert member.label in header
        assert layer.layer.display in header  # the placement names the layer

        # enter on the highlighted link opens it; b goes back, f forward again.
        links = app.query_one("#entity-links", OptionList)
        assert app.focused is links
        target = page._targets[links.highlighted]
        assert target
        await pilot.press("enter")
        await settle(pilot)
        assert page.current == target
        assert page.description is not None and page.description.entity.iri == target
        await pilot.press("b")
        await settle(pilot)
        assert page.current == member.iri and member.label in str(
            app.query_one("#entity-header", Static).content
        )
        await pilot.press("f")
        await settle(pilot)
        assert page.current == target


async def test_the_entity_page_groups_edges_by_predicate(engine: Engine) -> None:
    member = a_member(engine)
    desc = engine.describe(member.iri)
    app = StackgraphApp(engine=engine)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()  # the tabs finish mounting after the first frame
        app.open_entity(member.iri)
        await settle(pilot)
        links = app.query_one("#entity-links", OptionList)
        prompts = [str(links.get_option_at_index(i).prompt) for i in range(links.option_count)]
        for edge in desc.outgoing:
            assert edge.predicate_label in prompts
        for edge in desc.incoming:
            assert f"incoming: {edge.predicate_label}" in prompts
        if desc.sources:
            assert "sources" in prompts


# ---------------------------------------------------------------------------------- triage


def a_path_to_layers(engine: Engine) -> tuple[str, list[int], object]:
    """A symptom with a tree and the option indexes of a walk that ends at owning layers."""
    for iri in engine.entities_of("Symptom"):
        state = engine.triage(iri)
        if state.done:
            continue
        stack = [[]]
        while stack:
            picks = stack.pop()
            answers: list[str] = []
            state = engine.triage(iri, answers)
            for pick in picks:
                answers.append(state.options[pick])
                state = engine.triage(iri, answers)
            if state.done:
                if state.layers:
                    return iri, picks, state
                continue
            stack.extend(picks + [i] for i in reversed(range(len(state.options))))
    pytest.skip("no triage tree ends at a layer")


async def test_triage_walks_a_tree_to_the_owning_layers(engine: Engine) -> None:
    symptom, picks, expected = a_path_to_layers(engine)
    app = StackgraphApp(engine=engine)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()  # the tabs finish mounting after the first frame
        await pilot.press("f5")
        await settle(pilot)
        pane = app.query_one(TriagePane)
        symptoms = app.query_one("#triage-symptoms", OptionList)
        symptoms.focus()
        index = pane._symptoms.index(symptom)
        assert index < pane._symptoms.index(next(i for i in reversed(pane._symptoms) if i))  # trees first
        symptoms.highlighted = index
        await pilot.press("enter")
        await settle(pilot)
        for pick in picks:
            assert pane.state is not None and not pane.state.done
            assert app.focused is app.query_one("#triage-options", OptionList)
            await pilot.press(*["down"] * pick, "enter")
            await settle(pilot)
        assert pane.state == expected
        result = app.query_one("#triage-result", Markdown).source
        assert expected.conclusion in result
        for layer in expected.layers:
            assert layer.display in result
        assert app.query_one("#triage-commands").commands == list(expected.diagnostics)
        path = str(app.query_one("#triage-path", Static).content)
        assert all(q in path and a in path for q, a in zip(expected.asked, expected.taken, strict=True))

        # u takes the last answer back; r restarts.
        await pilot.press("u")
        await settle(pilot)
        assert pane.state is not None and not pane.state.done and len(pane.state.taken) == len(picks) - 1
        await pilot.press("r")
        await settle(pilot)
        assert pane.state.taken == ()

        # enter on an owning layer opens its page.
        for pick in picks:
            await pilot.press(*["down"] * pick, "enter")
            await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        assert active(app) == "entity"
        assert app.query_one(EntityPane).current == expected.layers[0].iri


# ---------------------------------------------------------------------------------- sparql


SELECT_LAYERS = "SELECT ?layer ?code WHERE { ?layer a sg:Layer ; sg:code ?code } ORDER BY ?code ?layer"


async def run_in_editor(pilot, query: str) -> None:
    editor = pilot.app.query_one("#sparql-editor", TextArea)
    editor.load_text(query)
    editor.focus()
    await pilot.press("ctrl+r")
    await settle(pilot)


async def test_a_sparql_query_shows_rows_with_prefixed_names(engine: Engine) -> None:
    expected = run_query(engine.graph, SELECT_LAYERS)
    assert expected.rows
    app = StackgraphApp(engine=engine)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()  # the tabs finish mounting after the first frame
        await pilot.press("f6")
        await run_in_editor(pilot, SELECT_LAYERS)
        table = app.query_one("#sparql-table", DataTable)
        assert table.row_count == len(expected.rows)
        assert [str(c.label) for c in table.ordered_columns] == ["layer", "code"]
        first = table.get_row_at(0)
        assert first[0].startswith("kg:") and first[1] == str(expected.rows[0][1])
        assert str(app.query_one("#sparql-status", Static).content) == f"{len(expected.rows)} rows"


async def test_ask_and_construct_queries(engine: Engine) -> None:
    app = StackgraphApp(engine=engine)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()  # the tabs finish mounting after the first frame
        await pilot.press("f6")
        await run_in_editor(pilot, "ASK { ?l a sg:Layer }")
        assert "yes" in str(app.query_one("#sparql-status", Static).content)
        assert app.query_one("#sparql-boolean", Static).display
        await run_in_editor(pilot, "ASK { kg:no-such-thing ?p ?o }")
        assert str(app.query_one("#sparql-boolean", Static).content) == "no"
        query = "CONSTRUCT { ?l sg:code ?c } WHERE { ?l a sg:Layer ; sg:code ?c }"
        await run_in_editor(pilot, query)
        table = app.query_one("#sparql-table", DataTable)
        assert table.display and [str(c.label) for c in table.ordered_columns] == [
            "subject",
            "predicate",
            "object",
        ]
        assert table.row_count == len(run_query(engine.graph, query).graph)
        assert table.get_row_at(0)[1] == "sg:code"


async def test_a_syntax_error_is_shown_with_line_and_column_and_the_cursor_goes_there(engine: Engine) -> None:
    bad = "SELECT ?x WHERE {\n  ?x a sg:Layer .\n  FILTER(?x = )\n}"
    with pytest.raises(ParseError) as caught:
        run_query(engine.graph, bad)
    assert caught.value.line
    app = StackgraphApp(engine=engine)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()  # the tabs finish mounting after the first frame
        await pilot.press("f6")
        await run_in_editor(pilot, bad)
        status = app.query_one("#sparql-status", Static)
        assert status.has_class("-error")
        assert f"line {caught.value.line}, column {caught.value.column}" in str(status.content)
        editor = app.query_one("#sparql-editor", TextArea)
        assert editor.cursor_location == (caught.value.line - 1, caught.value.column - 1)


async def test_the_guard_refuses_updates_in_the_tui_too(engine: Engine) -> None:
    app = StackgraphApp(engine=engine)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()  # the tabs finish mounting after the first frame
        await pilot.press("f6")
        await run_in_editor(pilot, "INSERT DATA { kg:a kg:b kg:c }")
        status = app.query_one("#sparql-status", Static)
        assert status.has_class("-error")
    assert not run_query(engine.graph, "ASK { kg:a kg:b kg:c }").boolean


# ---------------------------------------------------------------------------------- export


async def test_export_the_current_entity_to_a_file(engine: Engine, tmp_path: Path) -> None:
    member = a_member(engine)
    out = tmp_path / "out.nt"
    app = StackgraphApp(engine=engine)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()  # the tabs finish mounting after the first frame
        app.open_entity(member.iri)
        await settle(pilot)
        await pilot.press("x")
        await settle(pilot)
        assert active(app) == "export"
        assert app.query_one("#export-source", Select).value == "entity"
        app.query_one("#export-format", Select).value = "ntriples"
        await settle(pilot)
        preview = app.query_one("#export-preview", TextArea).text
        assert f"<{member.iri}>" in preview
        written = app.query_one(ExportPane).output
        assert written is not None and preview[:1000] == written.data[:1000]
        path = app.query_one("#export-path", Input)
        assert path.value.endswith(".nt")
        path.value = str(out)[:-3]
        path.focus()
        await pilot.press("end", *".nt")
        await pilot.press("ctrl+s")
        await pilot.pause()
    graph = rdflib.Graph().parse(out, format="nt")
    assert (rdflib.URIRef(member.iri), None, None) in graph
    assert out.read_text(encoding="utf-8") == written.data


async def test_export_the_current_sparql_results_as_csv(engine: Engine, tmp_path: Path) -> None:
    expected = run_query(engine.graph, SELECT_LAYERS)
    out = tmp_path / "layers.csv"
    app = StackgraphApp(engine=engine)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()  # the tabs finish mounting after the first frame
        await pilot.press("f6")
        await run_in_editor(pilot, SELECT_LAYERS)
        await pilot.press("f7")
        await settle(pilot)
        assert app.query_one("#export-source", Select).value == "results"
        app.query_one("#export-format", Select).value = "csv"
        await settle(pilot)
        app.query_one("#export-path", Input).value = str(out)
        await pilot.press("ctrl+s")
        await pilot.pause()
    lines = out.read_text(encoding="utf-8").splitlines()
    assert lines[0] == "layer,code" and len(lines) == len(expected.rows) + 1


# ---------------------------------------------------------------------------------- palette and keys


async def test_the_palette_jumps_to_an_entity_by_name(engine: Engine) -> None:
    member = a_member(engine)
    app = StackgraphApp(engine=engine)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()  # the tabs finish mounting after the first frame
        await pilot.press("ctrl+g")
        await pilot.pause()
        await pilot.press(*member.label)
        await pilot.pause(0.6)  # the palette searches after a short debounce
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        assert active(app) == "entity"
        assert app.query_one(EntityPane).current == member.iri


async def test_the_palette_runs_any_action(engine: Engine) -> None:
    app = StackgraphApp(engine=engine)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()  # the tabs finish mounting after the first frame
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"SPARQL: Run")
        await pilot.pause(0.6)
        await pilot.press("enter")
        await settle(pilot)
        assert active(app) == "sparql"
        assert app.query_one("#sparql-table", DataTable).row_count > 0


def test_every_binding_has_an_id_a_description_and_an_action_to_run() -> None:
    app = StackgraphApp(engine=None)
    panes = {
        "ask": "AskPane",
        "browse": "BrowsePane",
        "entity": "EntityPane",
        "triage": "TriagePane",
        "sparql": "SparqlPane",
        "export": "ExportPane",
    }
    import stackgraph.tui.app as app_module

    ids = []
    for group in keys.GROUPS:
        target = app if group.pane is None else getattr(app_module, panes[group.pane])
        for binding in group.bindings:
            assert binding.id and binding.description
            assert binding.id in keys.HELP
            name = binding.action.split("(")[0]
            assert hasattr(target, f"action_{name}"), (group.title, binding.action)
            ids.append(binding.id)
    assert len(ids) == len(set(ids))


# ---------------------------------------------------------------------------------- persistence


async def test_history_is_kept_between_runs_in_the_data_directory(engine: Engine, data_dir: Path) -> None:
    question = "where does JAX fit?"
    app = StackgraphApp(engine=engine)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()  # the tabs finish mounting after the first frame
        await ask(pilot, question)
        await pilot.press("f6")
        await run_in_editor(pilot, SELECT_LAYERS)
    saved = json.loads((data_dir / "history.json").read_text(encoding="utf-8"))
    assert saved["questions"] == [question] and saved["queries"] == [SELECT_LAYERS]

    again = StackgraphApp(engine=engine)
    async with again.run_test(size=SIZE) as pilot:
        await pilot.press("up")
        assert again.query_one("#ask-input", Input).value == question
        await pilot.press("f6")
        await pilot.press("alt+up")
        assert again.query_one("#sparql-editor", TextArea).text == SELECT_LAYERS


def test_history_ignores_a_corrupt_file_and_caps_its_length(tmp_path: Path) -> None:
    path = tmp_path / "history.json"
    path.write_text("{not json", encoding="utf-8")
    history = History(path)
    assert history.entries("questions") == []
    for i in range(MAX_ENTRIES + 5):
        history.add("questions", f"q{i}")
    history.add("questions", "q10")  # a repeat moves to the end
    reloaded = History(path)
    items = reloaded.entries("questions")
    assert len(items) == MAX_ENTRIES and items[-1] == "q10" and items.count("q10") == 1
    cursor = Cursor(reloaded, "questions")
    assert cursor.previous("typing") == "q10"
    assert cursor.next() == "typing"
    assert cursor.next() is None


def test_an_unwritable_data_directory_is_not_an_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("", encoding="utf-8")
    history = History(blocker / "sub" / "history.json")
    history.add("queries", "ASK {}")
    assert history.entries("queries") == ["ASK {}"]
    assert not history.save()


# ---------------------------------------------------------------------------------- small screens


async def test_the_app_works_at_80_by_24(engine: Engine) -> None:
    member = a_member(engine)
    app = StackgraphApp(engine=engine)
    async with app.run_test(size=(80, 24)) as pilot:
        for pane, title, _key in keys.TABS:
            tab = app.query_one(f"#--content-tab-{pane}")
            assert title in str(tab.label)
            assert tab.region.right <= 80 and tab.region.height > 0
        view = await ask(pilot, f"where does {member.label} fit?")
        assert view.answer is not None and view.answer.answered
        assert view.region.height > 0
        box = app.query_one("#ask-input", Input)
        assert box.region.bottom <= 24 - 1  # above the footer
        await pilot.press("f6")
        await run_in_editor(pilot, SELECT_LAYERS)
        assert app.query_one("#sparql-table", DataTable).region.height >= 3


# ---------------------------------------------------------------------------------- startup and the command


def test_the_app_module_does_not_import_the_graph_stack() -> None:
    """First paint must not wait for rdflib or the models: the engine loads in a worker."""
    import subprocess
    import sys

    code = (
        "import sys, stackgraph.tui.app; "
        "print(sorted(m for m in ('rdflib', 'pyoxigraph', 'onnxruntime', 'torch', 'stackgraph.graph.engine') "
        "if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_stackgraph_without_a_command_opens_the_tui(monkeypatch: pytest.MonkeyPatch) -> None:
    from stackgraph.cli import main as cli_main
    from stackgraph.cli import tui as cli_tui

    ran = []
    monkeypatch.setattr(cli_tui, "run", lambda args: ran.append(args) or 0)
    parser = cli_main.build_parser()
    # The subparser captured the real ``run`` when it registered; point it at the stand-in.
    parser._subparsers._group_actions[0].choices["tui"].set_defaults(run=cli_tui.run)  # type: ignore[union-attr]
    monkeypatch.setattr(cli_main, "build_parser", lambda: parser)
    assert cli_main.main([]) == 0
    assert ran and ran[0].command == "tui" and ran[0].store is None and ran[0].data == []


def test_a_missing_data_file_is_reported_before_the_app_starts(capsys: pytest.CaptureFixture[str]) -> None:
    from stackgraph.cli import main as cli_main

    assert cli_main.main(["tui", "--data", "/nonexistent/facts.ttl"]) == 2
    assert "no such file" in capsys.readouterr().err


# ---------------------------------------------------------------------------------- issue 14: the chat log


def _fully_visible(view, log) -> bool:
    return log.region.y <= view.region.y and view.region.bottom <= log.region.bottom


QUESTIONS = (
    "where does NVLink fit?",
    "what is it?",
    "which layer owns CUDA OOM?",
    "where does JAX fit?",
    "what is a flurbo?",
)


async def test_the_newest_answer_is_shown_whole_after_five_questions_and_a_resize(engine: Engine) -> None:
    app = StackgraphApp(engine=engine)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        for question in QUESTIONS:
            await ask(pilot, question)
        log = app.query_one("#ask-log")
        newest = list(app.query(AnswerView))[-1]
        assert newest.question == QUESTIONS[-1] and newest.answer is not None
        assert log.max_scroll_y > 0  # the conversation no longer fits: the test means something
        assert _fully_visible(newest, log)
        assert _fully_visible(newest.query_one(".suggestions"), log)  # "did you mean" not hidden
        await pilot.resize_terminal(100, 30)
        await settle(pilot)
        assert _fully_visible(newest, log)
        assert log.scroll_y == log.max_scroll_y

        # PageUp/PageDown from the question box scroll the log, and the box keeps focus.
        await pilot.press("pageup")
        await pilot.pause()
        assert log.scroll_y < log.max_scroll_y
        assert app.focused is app.query_one("#ask-input")
        await pilot.press("pagedown", "pagedown", "pagedown")
        await pilot.pause()
        assert log.scroll_y == log.max_scroll_y


async def test_a_follow_up_is_marked_with_what_it_is_about(engine: Engine) -> None:
    member = a_member(engine)
    app = StackgraphApp(engine=engine)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        first = await ask(pilot, f"where does {member.label} fit?")
        assert first.about is None and not first.query(".about")
        follow = await ask(pilot, "what is it?")
        assert follow.about == member.iri
        assert member.display in str(follow.query_one(".about", Static).content)


async def test_y_copies_the_focused_answer_and_s_its_sparql(engine: Engine) -> None:
    member = a_member(engine)
    app = StackgraphApp(engine=engine)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        first = await ask(pilot, f"where does {member.label} fit?")
        await ask(pilot, "what is a flurbo?")
        await pilot.press("shift+tab")  # the newest answer takes focus
        assert isinstance(app.focused, AnswerView) and app.focused.question == "what is a flurbo?"
        await pilot.press("up")  # the answer above
        assert app.focused is first
        await pilot.press("y")
        assert first.answer is not None and first.answer.answer in app.clipboard
        assert any("Copied" in n.message for n in app._notifications)
        await pilot.press("s")
        assert app.clipboard == "\n\n".join(strip_prefixes(q) for q in first.answer.sparql)
        await pilot.press("down", "down")  # past the newest: back to the question box
        assert app.focused is app.query_one("#ask-input")


async def test_help_lists_the_keys_of_the_current_tab_first_and_closes(engine: Engine) -> None:
    app = StackgraphApp(engine=engine)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("f5")
        await settle(pilot)
        await pilot.press("question_mark")  # outside a text box, ? is the help key
        await pilot.pause()
        from stackgraph.tui.help import HelpScreen

        assert isinstance(app.screen, HelpScreen)
        groups = [str(s.content) for s in app.screen.query(".help-group").results(Static)]
        assert groups[0].startswith("Triage")
        for binding in keys.TRIAGE:
            assert keys.HELP[binding.id] in groups[0]
        assert "Cursor word left" not in "".join(groups)  # Textual's generic editing keys stay out
        await pilot.press("escape")
        assert not isinstance(app.screen, HelpScreen)
        # In the question box "?" is typed, F1 still opens help.
        await pilot.press("f2")
        await pilot.press(*"why?")
        assert app.query_one("#ask-input", Input).value == "why?"
        await pilot.press("f1")
        assert isinstance(app.screen, HelpScreen)
        assert str(app.screen.query(".help-group").first(Static).content).startswith("Ask")
        await pilot.press("f1")
        assert not isinstance(app.screen, HelpScreen)


async def test_tab_labels_show_their_keys_and_the_footer_shows_quit(engine: Engine) -> None:
    app = StackgraphApp(engine=engine)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        for pane, title, key in keys.TABS:
            label = str(app.query_one(f"#--content-tab-{pane}").label)
            assert title in label and key.upper() in label
        footer = " ".join(str(k.render()) for k in app.query("FooterKey"))
        assert "Quit" in footer


# ---------------------------------------------------------------------------------- issue 14: safe export


async def _export_results(pilot, fmt: str) -> None:
    await pilot.press("f6")
    await run_in_editor(pilot, SELECT_LAYERS)
    await pilot.press("f7")
    await settle(pilot)
    pilot.app.query_one("#export-format", Select).value = fmt
    await settle(pilot)


async def test_export_asks_before_overwriting_and_reports_the_absolute_path(
    engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from stackgraph.tui.confirm import Confirm

    monkeypatch.chdir(tmp_path)
    existing = tmp_path / "layers.csv"
    existing.write_text("keep me", encoding="utf-8")
    app = StackgraphApp(engine=engine)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await _export_results(pilot, "csv")
        app.query_one("#export-path", Input).value = "layers.csv"  # relative, as typed
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert isinstance(app.screen, Confirm)
        await pilot.press("n")
        await pilot.pause()
        assert existing.read_text(encoding="utf-8") == "keep me"
        assert "Not saved" in str(app.query_one("#export-status", Static).content)
        await pilot.press("ctrl+s")
        await pilot.pause()
        await pilot.press("y")
        await pilot.pause()
        status = str(app.query_one("#export-status", Static).content)
        assert str(existing) in status  # the absolute path, not "layers.csv"
    assert existing.read_text(encoding="utf-8").splitlines()[0] == "layer,code"


async def test_the_file_extension_follows_the_format(engine: Engine, tmp_path: Path) -> None:
    from stackgraph.tui.export import RESULT_EXTENSIONS

    app = StackgraphApp(engine=engine)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await _export_results(pilot, "csv")
        path = app.query_one("#export-path", Input)
        path.value = str(tmp_path / "mine.csv")  # a name the user chose
        app.query_one("#export-format", Select).value = "json"
        await settle(pilot)
        assert path.value == str(tmp_path / f"mine{RESULT_EXTENSIONS['json']}")


async def test_a_screenshot_goes_to_the_current_directory(
    engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    app = StackgraphApp(engine=engine)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        app.deliver_screenshot("shot.svg")
        await settle(pilot)
        await pilot.pause(0.2)
    assert (tmp_path / "shot.svg").read_text(encoding="utf-8").startswith("<svg")


# ---------------------------------------------------------------------------------- issue 14: shared history


def test_two_running_apps_append_to_one_history_without_losing_entries(tmp_path: Path) -> None:
    import subprocess
    import sys

    path = tmp_path / "history.json"
    script = (
        "import sys; from pathlib import Path; from stackgraph.tui.history import History\n"
        "h = History(Path(sys.argv[1]))\n"
        "for i in range(40): h.add('questions', f'{sys.argv[2]}-{i}')\n"
    )
    procs = [subprocess.Popen([sys.executable, "-c", script, str(path), name]) for name in ("a", "b")]
    assert [p.wait(timeout=60) for p in procs] == [0, 0]
    items = History(path).entries("questions")
    assert sorted(items) == sorted(f"{n}-{i}" for n in "ab" for i in range(40))


def test_a_history_walk_sees_what_another_app_added(tmp_path: Path) -> None:
    path = tmp_path / "history.json"
    mine, theirs = History(path), History(path)
    mine.add("questions", "mine")
    theirs.add("questions", "theirs")
    assert theirs.entries("questions") == ["mine", "theirs"]  # read-merge, not overwrite
    assert Cursor(mine, "questions").previous("") == "theirs"


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


# ---------------------------------------------------------------------------------- issue 14: SPARQL workbench


def test_the_editor_highlights_sparql_tokens() -> None:
    from stackgraph.tui.sparql_editor import tokens

    line = 'SELECT ?x WHERE { ?x a sg:Layer ; rdfs:label "é ok" . <http://x/y> ?p 42 } # note'
    found = {line[start:end]: name for start, end, name in tokens(line)}
    assert found["SELECT"] == found["WHERE"] == found["a"] == "keyword"
    assert found["?x"] == found["?p"]
    assert found["sg:Layer"] == found["rdfs:label"] != found["?x"]
    assert found['"é ok"'] == "string" and found["# note"] == "comment" and found["42"] == "number"
    assert "<http://x/y>" in found and "ok" not in found  # words inside a string are not keywords


async def test_the_editor_completes_keywords_and_the_graphs_terms(engine: Engine) -> None:
    from stackgraph.tui.sparql_editor import SparqlEditor

    app = StackgraphApp(engine=engine)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("f6")
        await settle(pilot)
        editor = app.query_one("#sparql-editor", SparqlEditor)
        assert "sg:Layer" in editor.terms and "rdfs:label" in editor.terms
        assert editor._highlights[0][0] == (0, 6, "keyword")  # SELECT of the default query
        editor.load_text("")
        await pilot.press(*"sel")
        assert editor.suggestion == "ect"
        await pilot.press("tab")
        await pilot.press(*" * WHERE { ?s a sg:La")
        assert editor.suggestion == "yer"
        await pilot.press("tab")
        assert editor.text == "select * WHERE { ?s a sg:Layer"
        await pilot.press("alt+a")  # select-all, which F7 (the Export tab) used to hide
        assert editor.selected_text == editor.text


def _blocking_run_query(monkeypatch: pytest.MonkeyPatch):
    """Replace the guard's run_query with one that waits for a go (and records its time limit)."""
    import threading

    import stackgraph.graph.sparql as sparql

    real = sparql.run_query
    go = threading.Event()
    calls: list[float | None] = []

    def slow(graph, query, **kwargs):
        calls.append(kwargs.get("timeout_s"))
        go.wait(10)
        return real(graph, query, **kwargs)

    monkeypatch.setattr(sparql, "run_query", slow)
    return go, calls


async def test_escape_cancels_a_running_query_and_its_result_is_dropped(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    from stackgraph.graph.sparql import MAX_TIMEOUT_S
    from stackgraph.tui.sparql import SparqlPane

    app = StackgraphApp(engine=engine)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("f6")
        await settle(pilot)
        go, calls = _blocking_run_query(monkeypatch)  # after the completion terms are read
        limit = app.query_one("#sparql-limit", Select)
        offered = [value for _label, value in limit._options if isinstance(value, float)]
        assert offered and max(offered) <= MAX_TIMEOUT_S
        limit.value = max(offered)
        pane = app.query_one(SparqlPane)
        app.query_one("#sparql-editor", TextArea).load_text(SELECT_LAYERS)
        await pilot.press("ctrl+r")
        await pilot.pause()
        assert pane.running and calls == [max(offered)]  # the chosen limit reaches the guard
        await pilot.press("escape")
        assert not pane.running
        assert "Cancelled" in str(app.query_one("#sparql-status", Static).content)
        go.set()
        await pilot.pause(0.3)
        assert app.query_one("#sparql-table", DataTable).row_count == 0  # the late result is dropped


async def test_quitting_during_a_query_does_not_wait_for_it(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    import time

    app = StackgraphApp(engine=engine)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await settle(pilot)
        go, _calls = _blocking_run_query(monkeypatch)
        await pilot.press("f6", "ctrl+r")
        await pilot.pause()
        started = time.perf_counter()
        await pilot.press("ctrl+q")
    assert time.perf_counter() - started < 2.0
    go.set()


async def test_an_error_clears_the_old_results(engine: Engine) -> None:
    app = StackgraphApp(engine=engine)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("f6")
        await run_in_editor(pilot, SELECT_LAYERS)
        assert app.query_one("#sparql-table", DataTable).row_count > 0
        await run_in_editor(pilot, "SELECT ?x WHERE { ?x a }")
        assert app.query_one("#sparql-status", Static).has_class("-error")
        assert app.query_one("#sparql-table", DataTable).row_count == 0


async def test_enter_on_an_iri_cell_opens_it_and_y_copies_cells_and_rows(engine: Engine) -> None:
    expected = run_query(engine.graph, SELECT_LAYERS)
    app = StackgraphApp(engine=engine)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("f6")
        await run_in_editor(pilot, SELECT_LAYERS)
        table = app.query_one("#sparql-table", DataTable)
        table.focus()
        await pilot.press("y")
        assert app.clipboard == str(expected.rows[0][0])  # the full IRI, not the prefixed name
        await pilot.press("Y")
        assert app.clipboard == f"{expected.rows[0][0]}\t{expected.rows[0][1]}"
        await pilot.press("right", "enter")  # a literal: nothing opens
        assert active(app) == "sparql"
        await pilot.press("left", "enter")
        await settle(pilot)
        assert active(app) == "entity"
        assert app.query_one(EntityPane).current == str(expected.rows[0][0])


async def test_ctrl_f_searches_the_query_history(engine: Engine) -> None:
    app = StackgraphApp(engine=engine)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("f6")
        await run_in_editor(pilot, SELECT_LAYERS)
        await run_in_editor(pilot, "ASK { ?l a sg:Layer }")
        await pilot.press("ctrl+f")
        await pilot.pause()
        await pilot.press(*"code")
        await pilot.pause(0.5)
        await pilot.press("enter")
        await pilot.pause()
        assert app.query_one("#sparql-editor", TextArea).text == SELECT_LAYERS


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


# ---------------------------------------------------------------------------------- issue 14: themes


def _contrast(style) -> float:
    """WCAG contrast ratio between a rich Style's foreground and background."""

    def luminance(color) -> float:
        r, g, b = (c / 255 for c in color.get_truecolor())
        lin = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in (r, g, b)]
        return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]

    a, b = sorted((luminance(style.color), luminance(style.bgcolor)), reverse=True)
    return (a + 0.05) / (b + 0.05)


@pytest.mark.parametrize("theme", ["textual-dark", "textual-light"])
async def test_title_is_readable_and_declined_answers_look_different(engine: Engine, theme: str) -> None:
    member = a_member(engine)
    app = StackgraphApp(engine=engine)
    async with app.run_test(size=SIZE) as pilot:
        app.theme = theme
        await pilot.pause()
        answered = await ask(pilot, f"where does {member.label} fit?")
        declined = await ask(pilot, "what is a flurbo?")
        await pilot.press("f3")  # neither answer focused: their resting colours
        await pilot.pause()
        assert _contrast(app.query_one("#status-title").rich_style) >= 4.5
        assert declined.has_class("-declined") and not answered.has_class("-declined")
        assert declined.styles.border_left[1] != answered.styles.border_left[1]


def test_the_first_paint_does_not_import_the_graph_stack() -> None:
    """Composing every tab (not just importing the app) must not pull in rdflib: first paint ≈ 1 s."""
    import subprocess
    import sys

    code = (
        "import asyncio, sys\n"
        "from stackgraph.tui.app import StackgraphApp\n"
        "StackgraphApp._load_engine = lambda self: None  # the worker's job, not the first paint's\n"
        "async def main():\n"
        "    app = StackgraphApp(semantic=False)\n"
        "    async with app.run_test(size=(100, 30)) as pilot:\n"
        "        await pilot.pause()\n"
        "        assert app.query_one('#sparql-editor') and app.query_one('#export-preview')\n"
        "        print(sorted(m for m in ('rdflib', 'pyoxigraph', 'stackgraph.graph.engine') if m in sys.modules))\n"
        "asyncio.run(main())\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == "[]"
