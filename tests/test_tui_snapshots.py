"""SVG snapshots of the TUI's main screens (pytest-textual-snapshot), asserted.

The app runs on a small fixed graph (tests/data/tui_fixture.ttl over the vocabulary), not the
built-in data, so the pictures change when the app changes and not when the ontology grows.
Regenerate after a deliberate UI change with ``pytest --snapshot-update tests/test_tui_snapshots.py``
and look at the SVGs under tests/__snapshots__/ before committing them.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from stackgraph.graph.engine import Engine
from stackgraph.graph.store import LoadedGraph, builtin_files, new_graph
from stackgraph.tui.app import StackgraphApp
from stackgraph.tui.history import DATA_DIR_ENV, History

FIXTURE = Path(__file__).parent / "data" / "tui_fixture.ttl"
SIZE = (100, 36)


@pytest.fixture(scope="module")
def fixture_engine() -> Engine:
    graph = new_graph()
    graph.parse(str(builtin_files()[0]), format="ox-turtle")  # the vocabulary only
    graph.parse(str(FIXTURE), format="ox-turtle")
    return Engine(LoadedGraph(graph, content_hash="tui-fixture"), semantic=False)


@pytest.fixture
def app(fixture_engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> StackgraphApp:
    monkeypatch.setenv(DATA_DIR_ENV, str(tmp_path))
    return StackgraphApp(engine=fixture_engine, history=History(tmp_path / "history.json"))


async def settle(pilot) -> None:
    for _ in range(3):
        await pilot.pause()
        await pilot.app.workers.wait_for_complete()
        while pilot.app.query_one("#sparql-pane").running:  # queries run in daemon threads
            await pilot.pause(0.02)
    # A blinking cursor would make the picture depend on timing.
    for widget in pilot.app.query("Input, TextArea"):
        widget.cursor_blink = False
    # A table sizes its columns to fit new rows on a later refresh; on a loaded machine (a CI run)
    # one pause could photograph the columns still at their headers' width.
    for _ in range(3):
        await pilot.pause(0.05)


def test_ask_with_an_answer_and_its_evidence(snap_compare, app: StackgraphApp) -> None:
    async def run_before(pilot) -> None:
        await pilot.pause()  # the tabs finish mounting after the first frame
        await pilot.press(*"where does NVLink fit?", "enter")
        await settle(pilot)
        await pilot.click(".details CollapsibleTitle")
        await settle(pilot)
        pilot.app.query_one("#ask-log").scroll_home(animate=False)
        await settle(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_ask_declined_with_suggestions_at_80x24(snap_compare, app: StackgraphApp) -> None:
    async def run_before(pilot) -> None:
        await pilot.pause()  # the tabs finish mounting after the first frame
        await pilot.press(*"what is a flurbo?", "enter")
        await settle(pilot)

    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)


def test_browse(snap_compare, app: StackgraphApp) -> None:
    async def run_before(pilot) -> None:
        await pilot.pause()  # the tabs finish mounting after the first frame
        await pilot.press("f3")
        await settle(pilot)
        await pilot.press("e", "down", "down")
        await settle(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_entity_page(snap_compare, app: StackgraphApp) -> None:
    async def run_before(pilot) -> None:
        await pilot.pause()  # the tabs finish mounting after the first frame
        pilot.app.open_entity("https://w3id.org/stackgraph/id/nvlink")
        await settle(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_triage_at_its_conclusion(snap_compare, app: StackgraphApp) -> None:
    async def run_before(pilot) -> None:
        await pilot.pause()  # the tabs finish mounting after the first frame
        await pilot.press("f5")
        await settle(pilot)
        await pilot.press("enter")  # NCCL timeout, the first symptom with a tree
        await settle(pilot)
        await pilot.press("down", "enter")  # all ranks
        await settle(pilot)
        await pilot.press("enter")  # no: the ports are not all Active
        await settle(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_sparql_with_results(snap_compare, app: StackgraphApp) -> None:
    async def run_before(pilot) -> None:
        await pilot.pause()  # the tabs finish mounting after the first frame
        await pilot.press("f6")
        await pilot.press("ctrl+r")
        await settle(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_ask_after_five_questions_at_80x24_shows_the_newest_answer(snap_compare, app: StackgraphApp) -> None:
    async def run_before(pilot) -> None:
        await pilot.pause()  # the tabs finish mounting after the first frame
        for question in (
            "where does NVLink fit?",
            "what is it?",
            "where does InfiniBand fit?",
            "what is NVSwitch?",
            "what is a flurbo?",
        ):
            await pilot.press(*question, "enter")
            await settle(pilot)

    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)


def test_help_on_the_ask_tab(snap_compare, app: StackgraphApp) -> None:
    async def run_before(pilot) -> None:
        await pilot.pause()  # the tabs finish mounting after the first frame
        await pilot.press("f1")
        await settle(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_sparql_error_state(snap_compare, app: StackgraphApp) -> None:
    async def run_before(pilot) -> None:
        await pilot.pause()  # the tabs finish mounting after the first frame
        await pilot.press("f6")
        await pilot.press("ctrl+r")  # results first, so the test shows the error clears them
        await settle(pilot)
        editor = pilot.app.query_one("#sparql-editor")
        editor.load_text("SELECT ?layer WHERE {\n  ?layer a sg:Layer ;\n  FILTER(?layer = )\n}")
        await pilot.press("ctrl+r")
        await settle(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_export_overwrite_prompt(snap_compare, app: StackgraphApp) -> None:
    # A fixed folder, not tmp_path: the prompt shows the absolute path, and the picture must not vary.
    folder = Path(tempfile.gettempdir()) / "stackgraph-snapshots"
    folder.mkdir(exist_ok=True)
    existing = folder / "nvlink.ttl"
    existing.write_text("# already here\n", encoding="utf-8")

    async def run_before(pilot) -> None:
        await pilot.pause()  # the tabs finish mounting after the first frame
        pilot.app.open_entity("https://w3id.org/stackgraph/id/nvlink")
        await settle(pilot)
        await pilot.press("x")
        await settle(pilot)
        pilot.app.query_one("#export-path").value = str(existing)
        await pilot.press("ctrl+s")
        await settle(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)
