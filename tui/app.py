"""StackgraphApp: the terminal app (Ask, Browse, Entity, Triage, SPARQL, Export tabs).

The app paints before the graph exists: the engine is built in a thread worker started after the
first refresh, and the semantic model loads after that, in the same worker. Until then the
question box already takes questions (they queue) and the status bar says what is loading. Tests
and scripts pass a ready ``engine`` instead, which makes the app start instantly and behave
deterministically.

The panes never talk to each other: they post the messages in ``messages.py`` and the app moves
the user to the right tab.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual import on, work
from textual.app import App, ComposeResult
from textual.command import CommandPalette
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Footer, TabbedContent, TabPane

from stackgraph.tui import keys
from stackgraph.tui.ask import AskPane
from stackgraph.tui.browse import BrowsePane
from stackgraph.tui.entity import EntityPane
from stackgraph.tui.export import ExportPane
from stackgraph.tui.help import HelpScreen
from stackgraph.tui.history import History
from stackgraph.tui.messages import AskQuestion, ExportEntity, OpenEntity, OpenSparql
from stackgraph.tui.palette import ActionsProvider, EntityProvider, GotoEntityProvider
from stackgraph.tui.sparql import SparqlPane
from stackgraph.tui.status import StatusBar
from stackgraph.tui.triage import TriagePane

if TYPE_CHECKING:
    from stackgraph.graph.engine import Engine


class StackgraphApp(App[None]):
    """The stackgraph terminal app."""

    TITLE = "stackgraph"
    CSS_PATH = [
        "app.tcss",
        "status.tcss",
        "answer.tcss",
        "ask.tcss",
        "browse.tcss",
        "entity.tcss",
        "triage.tcss",
        "sparql.tcss",
        "export.tcss",
    ]
    BINDINGS = keys.APP
    COMMANDS = App.COMMANDS | {ActionsProvider, EntityProvider}

    def __init__(
        self,
        engine: Engine | None = None,
        *,
        data: Sequence[str | Path] = (),
        store_url: str | None = None,
        semantic: bool = True,
        history: History | None = None,
    ) -> None:
        """With ``engine``, use it as is; without, load the graph (``data``, ``store_url``) in a
        worker after the first paint. ``semantic`` says whether to load the embedding model too."""
        super().__init__()
        #: The engine, once it exists; None while the graph loads.
        self.engine: Engine | None = None
        self._given_engine = engine
        self._data = list(data)
        self._store_url = store_url
        self._semantic = semantic
        self.history = history if history is not None else History()

    def compose(self) -> ComposeResult:
        yield StatusBar(id="status")
        panes = {
            "ask": lambda: AskPane(self.history, id="ask-pane"),
            "browse": lambda: BrowsePane(id="browse-pane"),
            "entity": lambda: EntityPane(id="entity-pane"),
            "triage": lambda: TriagePane(id="triage-pane"),
            "sparql": lambda: SparqlPane(self.history, id="sparql-pane"),
            "export": lambda: ExportPane(id="export-pane"),
        }
        with TabbedContent(id="tabs", initial="ask"):
            for name, title, key in keys.TABS:
                # The label shows the tab's key: the footer has no room for six of them.
                with TabPane(Content.assemble(title, (f" {key.upper()}", "dim")), id=name):
                    yield panes[name]()
        yield Footer()

    # ------------------------------------------------------------------ the engine

    def on_mount(self) -> None:
        self.query_one(AskPane).focus_default()
        status = self.query_one(StatusBar)
        if self._given_engine is not None:
            self._engine_ready(self._given_engine)
            if self._given_engine.semantic and self._semantic:
                self._prepare_semantic(self._given_engine)
        else:
            status.busy("Loading the graph… (you can type a question already)")
            self.call_after_refresh(self._load_engine)

    @work(thread=True, exclusive=True, group="engine")
    def _load_engine(self) -> None:
        from stackgraph.graph.engine import Engine
        from stackgraph.graph.store import DataFileError

        try:
            engine = Engine.load(self._data, self._store_url, semantic=self._semantic)
        except DataFileError as problem:  # a bad --data file: bad input, as on every command
            self.call_from_thread(self._engine_failed, str(problem), 2)
            return
        except Exception as problem:  # OSError, a remote store down: the app cannot work
            self.call_from_thread(self._engine_failed, f"{type(problem).__name__}: {problem}", 1)
            return
        self.call_from_thread(self._engine_ready, engine)
        if engine.semantic:
            self.call_from_thread(self._prepare_semantic, engine)

    def _prepare_semantic(self, engine: Engine) -> None:
        """Load the embedding model in a daemon thread.

        Not a worker: Textual's workers run in the default executor, which the interpreter joins
        at exit, so quitting during a cold model load (seconds) would hang the terminal.
        """
        status = self.query_one(StatusBar)
        status.busy(self._summary(engine) + " · loading the semantic model…")
        threading.Thread(
            target=self._warm_up, args=(engine, status), name="stackgraph-semantic", daemon=True
        ).start()

    def _warm_up(self, engine: Engine, status: StatusBar) -> None:
        try:
            engine.prepare_semantic()
        except Exception as problem:  # matching by name still works without the model
            self._from_thread(status.error, f"{self._summary(engine)} · semantic matching off: {problem}")
            return
        self._from_thread(status.ready, self._summary(engine) + " · semantic matching ready")

    def _from_thread(self, callback, *args) -> None:
        """call_from_thread that does nothing once the app has closed."""
        with contextlib.suppress(RuntimeError):
            self.call_from_thread(callback, *args)

    @staticmethod
    def _summary(engine: Engine) -> str:
        where = f"remote store {engine.loaded.store_url}" if engine.loaded.store_url else "built-in graph"
        extra = f" + {len(engine.loaded.data_files)} data file(s)" if engine.loaded.data_files else ""
        return f"{where}{extra} · {len(engine.catalog.records):,} entities"

    def _engine_ready(self, engine: Engine) -> None:
        self.engine = engine
        status = self.query_one(StatusBar)
        status.ready(self._summary(engine) + ("" if engine.semantic else " · name matching"))
        for pane in self._panes():
            pane.engine_ready(engine)

    def _engine_failed(self, message: str, code: int) -> None:
        from rich.text import Text

        one_line = " ".join(message.split())
        self.exit(return_code=code, message=Text(f"stackgraph: error: could not load the graph: {one_line}"))

    def _panes(self) -> list[Any]:
        return [
            self.query_one(AskPane),
            self.query_one(BrowsePane),
            self.query_one(EntityPane),
            self.query_one(TriagePane),
            self.query_one(SparqlPane),
            self.query_one(ExportPane),
        ]

    # ------------------------------------------------------------------ tabs and navigation

    def pane(self, name: str) -> Any:
        """The widget inside tab ``name`` ("ask", "browse", …)."""
        return self.query_one(f"#{name}-pane")

    def action_show_tab(self, name: str) -> None:
        self.query_one(TabbedContent).active = name
        self.pane(name).focus_default()

    @on(TabbedContent.TabActivated)
    def _tab_activated(self, event: TabbedContent.TabActivated) -> None:
        name = event.pane.id or ""
        if name == "export":
            self._offer_exports()
        if name:
            self.pane(name).focus_default()

    def _offer_exports(self, prefer: str | None = None) -> None:
        entity_pane = self.query_one(EntityPane)
        sparql_pane = self.query_one(SparqlPane)
        entity = None
        if entity_pane.current and entity_pane.description is not None:
            entity = (entity_pane.current, entity_pane.description.entity.display)
        self.query_one(ExportPane).set_sources(
            entity, sparql_pane.last_query, sparql_pane.last_result, prefer
        )

    def open_entity(self, iri: str) -> None:
        """Show the page of ``iri`` in the Entity tab."""
        self.action_show_tab("entity")
        self.query_one(EntityPane).show(iri)

    @on(OpenEntity)
    def _open_entity(self, message: OpenEntity) -> None:
        self.open_entity(message.iri)

    @on(OpenSparql)
    def _open_sparql(self, message: OpenSparql) -> None:
        self.action_show_tab("sparql")
        self.query_one(SparqlPane).load(message.query, run=message.run)

    @on(AskQuestion)
    def _ask(self, message: AskQuestion) -> None:
        self.action_show_tab("ask")
        self.query_one(AskPane).ask(message.question)

    @on(ExportEntity)
    def _export_entity(self, message: ExportEntity) -> None:
        self.query_one(TabbedContent).active = "export"
        self._offer_exports(prefer="entity")
        self.query_one(ExportPane).focus_default()

    # ------------------------------------------------------------------ app-wide actions

    def deliver_screenshot(
        self, filename: str | None = None, path: str | None = None, time_format: str | None = None
    ) -> str | None:
        """The palette's Screenshot: into the current directory (Textual's default, ~/Downloads,
        may not exist), and the toast names the absolute path."""
        return super().deliver_screenshot(filename, path or str(Path.cwd()), time_format)

    def action_toggle_keys(self) -> None:
        """F1 or ?: open the help screen on the current tab's keys, or close it."""
        if isinstance(self.screen, HelpScreen):
            self.screen.dismiss()
            return
        if isinstance(self.screen, ModalScreen):  # a palette or a prompt is open: not over it
            return
        self.push_screen(HelpScreen(self.query_one(TabbedContent).active or None))

    def action_goto_entity(self) -> None:
        if not CommandPalette.is_open(self):
            self.push_screen(
                CommandPalette(providers=[GotoEntityProvider], placeholder="Go to an entity by name…")
            )

    async def run_keyed_action(self, pane: str | None, action: str) -> None:
        """Run a binding's action as its key would (the palette's commands call this)."""
        if pane is None:
            await self.run_action(action)
            return
        self.action_show_tab(pane)
        await self.run_action(action, self.pane(pane))
