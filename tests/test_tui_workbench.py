"""The SPARQL workbench and safe export (Pilot)."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import (
    DataTable,
    Input,
    Select,
    Static,
    TextArea,
)
from tui_support import (  # noqa: F401  (data_dir: the autouse fixture that isolates history)
    SELECT_LAYERS,
    SIZE,
    active,
    data_dir,
    run_in_editor,
    settle,
)

from stackgraph.graph.engine import Engine
from stackgraph.graph.sparql import run_query
from stackgraph.tui.app import StackgraphApp
from stackgraph.tui.entity import EntityPane

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
        await pilot.press("end", *" }", "tab")  # nothing to complete: tab moves on, as elsewhere
        assert app.focused is not editor


def _blocking_run_query(monkeypatch: pytest.MonkeyPatch):
    """Replace the guard's run_query with one that waits for a go (and records its time limit)."""
    import threading

    import stackgraph.graph.sparql as sparql

    real = sparql.run_query
    go, done = threading.Event(), threading.Event()
    calls: list[float | None] = []

    def slow(graph, query, **kwargs):
        calls.append(kwargs.get("timeout_s"))
        go.wait(20)
        try:
            return real(graph, query, **kwargs)
        finally:
            done.set()

    monkeypatch.setattr(sparql, "run_query", slow)
    return go, calls, done


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
        go, calls, done = _blocking_run_query(monkeypatch)  # after the completion terms are read
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
        assert done.wait(20)  # the query has really finished, and its result was handed back…
        for _ in range(5):
            await pilot.pause(0.05)
        assert app.query_one("#sparql-table", DataTable).row_count == 0  # …and dropped


async def test_quitting_during_a_query_does_not_wait_for_it(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    import time

    app = StackgraphApp(engine=engine)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await settle(pilot)
        go, _calls, _done = _blocking_run_query(monkeypatch)
        await pilot.press("f6", "ctrl+r")
        await pilot.pause()
        started = time.perf_counter()
        await pilot.press("ctrl+q")
    assert time.perf_counter() - started < 5.0  # the query would hold it 20 s
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

        # A predicate is an IRI too, but no entity: enter says so instead of opening an empty page.
        await pilot.press("f6")
        await run_in_editor(pilot, "CONSTRUCT { ?l sg:code ?c } WHERE { ?l a sg:Layer ; sg:code ?c }")
        table.focus()
        await pilot.press("right", "enter")
        await settle(pilot)
        assert active(app) == "sparql"
        assert any("Not an entity" in n.message for n in app._notifications)


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
