"""The SPARQL tab: a workbench with a highlighting editor, a time limit, history and a results table.

Queries go through ``stackgraph.graph.sparql.run_query``, the same guard every surface uses
(read-only, no SERVICE or FROM, a time limit and a row cap). The ontology's prefixes are
predeclared, as everywhere else. IRIs show as prefixed names; an ASK shows yes or no; a CONSTRUCT
or DESCRIBE shows its triples. A syntax error is reported with its line and column, the editor's
cursor jumps there, and the old results are cleared so they are never mistaken for this query's.

A query runs in a daemon thread, not a worker: the guard may take up to its time limit, and
Textual joins its worker threads at exit, so quitting mid-query would blank the terminal until
then. Escape cancels: the thread finishes on its own, its result is dropped.
"""

from __future__ import annotations

import contextlib
import threading
from typing import TYPE_CHECKING, Any

from textual import on, work
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.widgets import DataTable, Select, Static

from stackgraph.tui import keys
from stackgraph.tui.clipboard import copy
from stackgraph.tui.history import Cursor
from stackgraph.tui.messages import OpenEntity
from stackgraph.tui.sparql_editor import SparqlEditor
from stackgraph.tui.threads import deliver

if TYPE_CHECKING:
    from stackgraph.graph.engine import Engine
    from stackgraph.graph.sparql import QueryError, QueryResult
    from stackgraph.tui.history import History

DEFAULT_QUERY = """\
SELECT ?layer ?code ?label WHERE {
  ?layer a sg:Layer ; sg:code ?code ; rdfs:label ?label .
}
ORDER BY ?code ?label"""

#: Longest text shown in one cell; the export tab and y have the full values.
MAX_CELL = 80
#: Time limits offered (seconds); only those the guard allows are shown.
TIME_LIMITS = (1, 2, 5, 10, 20, 30, 60)
#: Terms offered for completion, read from the graph once it has loaded.
TERMS_QUERY = "SELECT DISTINCT ?t WHERE { { ?s ?t ?o } UNION { ?s a ?t } } LIMIT 2000"


def _cell(text: str) -> str:
    return text if len(text) <= MAX_CELL else text[: MAX_CELL - 1] + "…"


def time_limits() -> list[tuple[str, float]]:
    """The time-limit choices within the guard's bounds, with its default among them."""
    from stackgraph.graph.sparql import DEFAULT_TIMEOUT_S, MAX_TIMEOUT_S

    values = sorted({float(t) for t in TIME_LIMITS if t <= MAX_TIMEOUT_S} | {DEFAULT_TIMEOUT_S})
    return [(f"limit {v:g} s", v) for v in values]


class ResultsTable(DataTable):
    """The results: a cell cursor; enter on an IRI opens its entity, y copies a cell, Y a row."""

    BINDINGS = keys.RESULTS

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        #: The full values behind the shortened cells (IRIs in full), row by row.
        self.values: list[tuple[str, ...]] = []
        #: Which of them are IRIs (enter opens those).
        self.iris: list[tuple[bool, ...]] = []

    def show(
        self, columns: list[str], values: list[tuple[str, ...]], shown: list[tuple[str, ...]], iris
    ) -> None:
        self.clear(columns=True)
        self.values, self.iris = values, iris
        self.add_columns(*columns)
        self.add_rows(shown)

    def wipe(self) -> None:
        self.clear(columns=True)
        self.values, self.iris = [], []

    def _at_cursor(self) -> tuple[int, int] | None:
        row, column = self.cursor_coordinate
        if 0 <= row < len(self.values) and 0 <= column < len(self.values[row]):
            return row, column
        return None

    def action_copy_cell(self) -> None:
        at = self._at_cursor()
        if at is not None:
            copy(self.app, self.values[at[0]][at[1]], "the cell")

    def action_copy_row(self) -> None:
        at = self._at_cursor()
        if at is not None:
            copy(self.app, "\t".join(self.values[at[0]]), "the row")

    @on(DataTable.CellSelected)
    def _selected(self, event: DataTable.CellSelected) -> None:
        event.stop()
        at = self._at_cursor()
        if at is None or not self.iris[at[0]][at[1]]:
            return
        iri = self.values[at[0]][at[1]]
        engine = getattr(self.app, "engine", None)
        if engine is not None and iri not in engine.catalog:  # a predicate or class: no page of its own
            self.notify("Not an entity of the graph (no page to open); y copies it.", severity="warning")
            return
        self.post_message(OpenEntity(iri))


class SparqlPane(Vertical):
    """Hint and time limit, editor, status line, results."""

    BINDINGS = keys.SPARQL

    def __init__(self, history: History, **kwargs) -> None:
        super().__init__(**kwargs)
        self.engine: Engine | None = None
        self.history = history
        self.cursor = Cursor(history, "queries")
        #: The last query that ran without error, and what it returned (the Export tab uses them).
        self.last_query: str | None = None
        self.last_result: QueryResult | None = None
        #: Bumped by every run and cancel: a thread whose number is stale drops its result.
        self._generation = 0
        #: True while a query runs.
        self.running = False

    def compose(self) -> ComposeResult:
        with Horizontal(id="sparql-top"):
            yield Static(
                "[dim]ctrl+r runs · escape cancels · ctrl+f history · tab completes[/dim]",
                id="sparql-prefixes",
            )
            # Filled once the engine is in: the bounds live in graph.sparql, which imports rdflib,
            # and the first paint must not wait for that.
            yield Select([], prompt="time limit", compact=True, id="sparql-limit")
        yield SparqlEditor(DEFAULT_QUERY, id="sparql-editor", show_line_numbers=True, soft_wrap=False)
        yield Static("", id="sparql-status")
        yield Static("", id="sparql-boolean")
        yield ResultsTable(id="sparql-table", zebra_stripes=True, cursor_type="cell")

    def focus_default(self) -> None:
        self.query_one("#sparql-editor", SparqlEditor).focus()

    def engine_ready(self, engine: Engine) -> None:
        from stackgraph.graph.sparql import DEFAULT_TIMEOUT_S
        from stackgraph.graph.store import PREFIXES

        self.engine = engine
        limit = self.query_one("#sparql-limit", Select)
        limit.set_options(time_limits())
        limit.value = DEFAULT_TIMEOUT_S
        names = " ".join(f"{p}:" for p in PREFIXES)
        self.query_one("#sparql-prefixes", Static).update(
            Content.styled(f"Predeclared: {names} · esc cancels", "dim")
        )
        self._read_terms()

    @work(thread=True, exclusive=True, group="sparql-terms")
    def _read_terms(self) -> None:
        """Prefixes and the graph's classes and properties as prefixed names, for completion."""
        from stackgraph.graph.sparql import QueryError, run_query, short_name
        from stackgraph.graph.store import PREFIXES

        assert self.engine is not None
        terms = [f"{prefix}:" for prefix in PREFIXES]
        with contextlib.suppress(QueryError):
            result = run_query(self.engine.graph, TERMS_QUERY)
            names = {short_name(row[0]) for row in result.rows if row and row[0] is not None}
            terms += sorted(n for n in names if ":" in n and not n.startswith(("<", "_:")))
        deliver(self.app, self._set_terms, terms)

    def _set_terms(self, terms: list[str]) -> None:
        self.query_one("#sparql-editor", SparqlEditor).terms = terms

    # ------------------------------------------------------------------ editing

    @property
    def text(self) -> str:
        return self.query_one("#sparql-editor", SparqlEditor).text

    def load(self, query: str, run: bool = False) -> None:
        """Put ``query`` in the editor (the Ask tab's ctrl+o lands here) and optionally run it."""
        editor = self.query_one("#sparql-editor", SparqlEditor)
        editor.load_text(query)
        self.cursor.reset()
        if run:
            self.action_run()

    def action_history_previous(self) -> None:
        query = self.cursor.previous(self.text)
        if query is not None:
            self.query_one("#sparql-editor", SparqlEditor).load_text(query)

    def action_history_next(self) -> None:
        query = self.cursor.next()
        if query is not None:
            self.query_one("#sparql-editor", SparqlEditor).load_text(query)

    def action_search_history(self) -> None:
        from textual.command import CommandPalette

        from stackgraph.tui.palette import QueryHistoryProvider

        if not CommandPalette.is_open(self.app):
            self.app.push_screen(
                CommandPalette(providers=[QueryHistoryProvider], placeholder="Search earlier queries…")
            )

    # The editor's and the table's keys, for the palette (which runs actions on the pane).
    def action_select_all(self) -> None:
        self.focus_default()
        self.query_one("#sparql-editor", SparqlEditor).action_select_all()

    def action_select_line(self) -> None:
        self.focus_default()
        self.query_one("#sparql-editor", SparqlEditor).action_select_line()

    def action_accept_suggestion(self) -> None:
        self.query_one("#sparql-editor", SparqlEditor).action_accept_suggestion()

    def action_copy_cell(self) -> None:
        self.query_one("#sparql-table", ResultsTable).action_copy_cell()

    def action_copy_row(self) -> None:
        self.query_one("#sparql-table", ResultsTable).action_copy_row()

    def action_focus_limit(self) -> None:
        self.query_one("#sparql-limit", Select).focus()

    # ------------------------------------------------------------------ running

    def _status(self, text: str | Content, error: bool = False) -> None:
        status = self.query_one("#sparql-status", Static)
        status.update(text)
        status.set_class(error, "-error")

    @property
    def time_limit(self) -> float | None:
        """The chosen limit in seconds; None (the guard's default) before the engine is in."""
        value = self.query_one("#sparql-limit", Select).value
        return float(value) if isinstance(value, (int, float)) else None

    def action_run(self) -> None:
        query = self.text
        if not query.strip():
            self._status("Nothing to run: write a query first.", error=True)
            return
        self.history.add("queries", query)
        self.cursor.reset()
        if self.engine is None:
            self._status("The graph is still loading; run again in a moment.", error=True)
            return
        limit = self.time_limit
        shown = f"limit {limit:g} s · " if limit else ""
        self._status(Content.styled(f"Running… ({shown}escape cancels)", "italic"))
        self.query_one("#sparql-table", ResultsTable).loading = True
        self._generation += 1
        self.running = True
        threading.Thread(
            target=self._run,
            args=(self.engine, query, limit, self._generation),
            name="stackgraph-sparql",
            daemon=True,
        ).start()

    def action_cancel(self) -> None:
        if not self.running:
            return
        self._generation += 1
        self.running = False
        self.query_one("#sparql-table", ResultsTable).loading = False
        self._status("Cancelled: the query's result will be ignored.")

    def _run(self, engine: Engine, query: str, limit: float | None, generation: int) -> None:
        from stackgraph.graph.sparql import QueryError, run_query

        try:
            outcome: Any = run_query(engine.graph, query, timeout_s=limit)
        except QueryError as problem:
            outcome = problem
        with contextlib.suppress(RuntimeError):  # the app has closed meanwhile
            self.app.call_from_thread(self._finished, generation, query, outcome)

    def _finished(self, generation: int, query: str, outcome: Any) -> None:
        from stackgraph.graph.sparql import QueryError

        if generation != self._generation:  # cancelled, or a newer run replaced it
            return
        self.running = False
        if isinstance(outcome, QueryError):
            self._failed(outcome)
        else:
            self._show(query, outcome)

    def _failed(self, problem: QueryError) -> None:
        table = self.query_one("#sparql-table", ResultsTable)
        table.loading = False
        table.wipe()  # the old rows were another query's: never leave them under an error
        self.query_one("#sparql-boolean", Static).display = False
        table.display = True
        self._status(Content.assemble(("✗ ", "bold"), str(problem)), error=True)
        line, column = getattr(problem, "line", None), getattr(problem, "column", None)
        if line:
            editor = self.query_one("#sparql-editor", SparqlEditor)
            editor.cursor_location = (line - 1, max((column or 1) - 1, 0))

    def _show(self, query: str, result: QueryResult) -> None:
        import rdflib

        from stackgraph.graph.sparql import short_name

        self.last_query, self.last_result = query, result
        table = self.query_one("#sparql-table", ResultsTable)
        boolean = self.query_one("#sparql-boolean", Static)
        table.loading = False
        table.wipe()
        more = f" (the first {result.max_rows}; there are more)" if result.truncated else ""
        if result.kind == "ask":
            table.display = False
            boolean.display = True
            boolean.update(Content.styled("yes" if result.boolean else "no", "bold"))
            self._status(f"ASK → {'yes' if result.boolean else 'no'}")
            return
        table.display = True
        boolean.display = False

        def full(term) -> str:
            return "" if term is None else str(term)

        if result.graph is not None:
            triples = sorted(result.graph, key=lambda t: tuple(short_name(x) for x in t))
            rows, columns = [tuple(triple) for triple in triples], ["subject", "predicate", "object"]
            noun = "triple" if len(rows) == 1 else "triples"
            summary = f"{result.kind.upper()} → {len(rows)} {noun}{more}"
        else:
            rows, columns = [tuple(row) for row in result.rows], list(result.vars)
            noun = "row" if len(rows) == 1 else "rows"
            summary = f"{len(rows)} {noun}{more}"
        table.show(
            columns,
            [tuple(full(t) for t in row) for row in rows],
            [tuple(_cell(short_name(t)) for t in row) for row in rows],
            [tuple(isinstance(t, rdflib.URIRef) for t in row) for row in rows],
        )
        self._status(summary)
