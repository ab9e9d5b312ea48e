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
    TextArea,
    Tree,
)
from tui_support import (  # noqa: F401  (data_dir: the autouse fixture that isolates history)
    SELECT_LAYERS,
    SIZE,
    a_member,
    a_path_to_layers,
    active,
    ask,
    data_dir,
    run_in_editor,
    settle,
)

from stackgraph.graph.conversation import Conversation
from stackgraph.graph.engine import Engine
from stackgraph.graph.sparql import ParseError, run_query
from stackgraph.tui import keys
from stackgraph.tui.answer import AnswerView, strip_prefixes
from stackgraph.tui.app import StackgraphApp
from stackgraph.tui.entity import EntityPane
from stackgraph.tui.export import ExportPane
from stackgraph.tui.history import MAX_ENTRIES, Cursor, History
from stackgraph.tui.triage import TriagePane

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


async def test_questions_typed_while_the_graph_loads_are_answered_once_it_has(data_dir: Path) -> None:  # noqa: F811
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


async def test_history_is_kept_between_runs_in_the_data_directory(engine: Engine, data_dir: Path) -> None:  # noqa: F811
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
