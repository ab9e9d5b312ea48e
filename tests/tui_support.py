"""What the TUI's Pilot tests share: the app's size, waiting for work to finish, asking, picking data.

Every app in these tests shares the session's engine (the built-in graph, name matching only), so
the tests run fast and the answers are the engine's own; ``data_dir`` points the history at a
temporary directory so nothing is written to the real home (each test module imports it).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Input, TabbedContent, TextArea

from stackgraph.graph.engine import Engine
from stackgraph.tui.answer import AnswerView
from stackgraph.tui.history import DATA_DIR_ENV

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


SELECT_LAYERS = "SELECT ?layer ?code WHERE { ?layer a sg:Layer ; sg:code ?code } ORDER BY ?code ?layer"


async def run_in_editor(pilot, query: str) -> None:
    editor = pilot.app.query_one("#sparql-editor", TextArea)
    editor.load_text(query)
    editor.focus()
    await pilot.press("ctrl+r")
    await settle(pilot)
