"""The SPARQL tab: an editor, a run key, and the results as a table.

Queries go through ``stackgraph.graph.sparql.run_query``, the same guard every surface uses
(read-only, no SERVICE or FROM, a time limit and a row cap), in a thread worker. The ontology's
prefixes are predeclared, as everywhere else. IRIs show as prefixed names; an ASK shows yes or no;
a CONSTRUCT or DESCRIBE shows its triples. A syntax error is reported with its line and column,
and the editor's cursor jumps there.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual import work
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import DataTable, Static, TextArea

from stackgraph.tui import keys
from stackgraph.tui.history import Cursor
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

#: Longest text shown in one cell; the export tab has the full values.
MAX_CELL = 80


def _cell(text: str) -> str:
    return text if len(text) <= MAX_CELL else text[: MAX_CELL - 1] + "…"


class SparqlPane(Vertical):
    """Editor above, status line, results below."""

    BINDINGS = keys.SPARQL

    def __init__(self, history: History, **kwargs) -> None:
        super().__init__(**kwargs)
        self.engine: Engine | None = None
        self.history = history
        self.cursor = Cursor(history, "queries")
        #: The last query that ran without error, and what it returned (the Export tab uses them).
        self.last_query: str | None = None
        self.last_result: QueryResult | None = None

    def compose(self) -> ComposeResult:
        yield Static(
            "[dim]ctrl+r runs · alt+↑/↓ earlier queries · the ontology's prefixes are predeclared[/dim]",
            id="sparql-prefixes",
        )
        yield TextArea(DEFAULT_QUERY, id="sparql-editor", show_line_numbers=True, soft_wrap=False)
        yield Static("", id="sparql-status")
        yield Static("", id="sparql-boolean")
        yield DataTable(id="sparql-table", zebra_stripes=True, cursor_type="row")

    def focus_default(self) -> None:
        self.query_one("#sparql-editor", TextArea).focus()

    def engine_ready(self, engine: Engine) -> None:
        from stackgraph.graph.store import PREFIXES

        self.engine = engine
        names = " ".join(f"{p}:" for p in PREFIXES)
        self.query_one("#sparql-prefixes", Static).update(
            Content.styled(f"Predeclared: {names}  ·  ctrl+r runs", "dim")
        )

    # ------------------------------------------------------------------ editing

    @property
    def text(self) -> str:
        return self.query_one("#sparql-editor", TextArea).text

    def load(self, query: str, run: bool = False) -> None:
        """Put ``query`` in the editor (the Ask tab's ctrl+o lands here) and optionally run it."""
        editor = self.query_one("#sparql-editor", TextArea)
        editor.load_text(query)
        self.cursor.reset()
        if run:
            self.action_run()

    def action_history_previous(self) -> None:
        query = self.cursor.previous(self.text)
        if query is not None:
            self.query_one("#sparql-editor", TextArea).load_text(query)

    def action_history_next(self) -> None:
        query = self.cursor.next()
        if query is not None:
            self.query_one("#sparql-editor", TextArea).load_text(query)

    # ------------------------------------------------------------------ running

    def _status(self, text: str | Content, error: bool = False) -> None:
        status = self.query_one("#sparql-status", Static)
        status.update(text)
        status.set_class(error, "-error")

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
        self._status("Running…")
        self.query_one("#sparql-table", DataTable).loading = True
        self._run(query)

    @work(thread=True, exclusive=True, group="sparql")
    def _run(self, query: str) -> None:
        from stackgraph.graph.sparql import QueryError, run_query

        assert self.engine is not None
        try:
            result = run_query(self.engine.graph, query)
        except QueryError as problem:
            deliver(self.app, self._failed, problem)
            return
        deliver(self.app, self._show, query, result)

    def _failed(self, problem: QueryError) -> None:
        self.query_one("#sparql-table", DataTable).loading = False
        self._status(Content.assemble(("✗ ", "bold"), str(problem)), error=True)
        line, column = getattr(problem, "line", None), getattr(problem, "column", None)
        if line:
            editor = self.query_one("#sparql-editor", TextArea)
            editor.cursor_location = (line - 1, max((column or 1) - 1, 0))

    def _show(self, query: str, result: QueryResult) -> None:
        from stackgraph.graph.sparql import short_name

        self.last_query, self.last_result = query, result
        table = self.query_one("#sparql-table", DataTable)
        boolean = self.query_one("#sparql-boolean", Static)
        table.loading = False
        table.clear(columns=True)
        more = f" (the first {result.max_rows}; there are more)" if result.truncated else ""
        if result.kind == "ask":
            table.display = False
            boolean.display = True
            boolean.update(Content.styled("yes" if result.boolean else "no", "bold"))
            self._status(f"ASK → {'yes' if result.boolean else 'no'}")
            return
        table.display = True
        boolean.display = False
        if result.graph is not None:
            triples = sorted(tuple(short_name(term) for term in triple) for triple in result.graph)
            table.add_columns("subject", "predicate", "object")
            table.add_rows([tuple(_cell(t) for t in triple) for triple in triples])
            noun = "triple" if len(triples) == 1 else "triples"
            self._status(f"{result.kind.upper()} → {len(triples)} {noun}{more}")
            return
        table.add_columns(*result.vars)
        table.add_rows([tuple(_cell(short_name(term)) for term in row) for row in result.rows])
        noun = "row" if len(result.rows) == 1 else "rows"
        self._status(f"{len(result.rows)} {noun}{more}")
