"""The Export tab: the current entity's neighbourhood, or the current SPARQL results, to a file.

Entities go through ``stackgraph.graph.export.export`` (every format: Turtle, N-Triples, JSON-LD,
GraphML, Mermaid, DOT, SVG/PNG, Markdown); a CONSTRUCT/DESCRIBE query goes through the same
function (it re-runs the query under the SPARQL guard); SELECT and ASK results are written in the
W3C result formats by ``stackgraph.graph.sparql.format_result``. The preview is exactly what Save
writes.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from textual import on, work
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.widgets import Button, Input, Select, Static, TextArea

from stackgraph.tui import keys
from stackgraph.tui.confirm import Confirm
from stackgraph.tui.threads import deliver

if TYPE_CHECKING:
    from stackgraph.graph.engine import Engine
    from stackgraph.graph.sparql import QueryResult

#: Characters of output the preview shows; Save always writes everything.
MAX_PREVIEW = 20_000
#: File extensions of the SPARQL result formats (the export formats have their own table).
RESULT_EXTENSIONS = {"table": ".txt", "json": ".srj", "csv": ".csv", "tsv": ".tsv", "xml": ".srx"}


def known_extensions() -> set[str]:
    """Every extension an export or a result format writes (so a format switch can replace it)."""
    from stackgraph.graph.export.api import EXTENSIONS

    return set(EXTENSIONS.values()) | set(RESULT_EXTENSIONS.values())


def with_extension(name: str, extension: str) -> str:
    """``name`` with its format extension replaced by ``extension``; other suffixes are kept."""
    path = Path(name)
    if path.suffix.lower() in known_extensions() and path.suffix.lower() != extension:
        return str(path.with_suffix(extension))
    return name


@dataclass(frozen=True)
class Output:
    """What the preview shows and Save writes."""

    data: str | bytes
    extension: str

    @property
    def size(self) -> int:
        return len(self.data if isinstance(self.data, bytes) else self.data.encode("utf-8"))


class ExportPane(Vertical):
    """Source, format and depth pickers, a file name, a preview."""

    BINDINGS = keys.EXPORT

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.engine: Engine | None = None
        self.entity: tuple[str, str] | None = None  # (IRI, label)
        self.query: str | None = None
        self.result: QueryResult | None = None
        #: The output on screen (None while it is being made, or after an error).
        self.output: Output | None = None
        self._auto_path = ""

    def compose(self) -> ComposeResult:
        with Horizontal(id="export-row"):
            yield Select(
                [], id="export-source", prompt="Nothing to export yet", compact=True, allow_blank=True
            )
            # Filled by set_sources with the formats the source has.
            yield Select([("turtle", "turtle")], id="export-format", compact=True, allow_blank=False)
            yield Select(
                [(f"depth {d}", d) for d in (1, 2, 3)],
                id="export-depth",
                value=1,
                allow_blank=False,
                compact=True,
            )
        with Horizontal(id="export-file-row"):
            yield Input(placeholder="file to write", id="export-path", compact=True)
            yield Button("Save", id="export-save", compact=True, variant="primary")
        yield Static(
            "[dim]Open an entity page or run a query, then pick a format. ctrl+s saves.[/dim]",
            id="export-status",
        )
        yield TextArea("", id="export-preview", read_only=True, soft_wrap=False)

    def focus_default(self) -> None:
        self.query_one("#export-format", Select).focus()

    def engine_ready(self, engine: Engine) -> None:
        self.engine = engine

    # ------------------------------------------------------------------ sources

    def set_sources(
        self,
        entity: tuple[str, str] | None,
        query: str | None,
        result: QueryResult | None,
        prefer: str | None = None,
    ) -> None:
        """What can be exported now; ``prefer`` ("entity" or "results") picks the source shown."""
        self.entity, self.query, self.result = entity, query, result
        options: list[tuple[str, str]] = []
        if entity is not None:
            options.append((f"Entity: {entity[1]}", "entity"))
        if result is not None:
            options.append((f"SPARQL results ({result.kind.upper()})", "results"))
        source = self.query_one("#export-source", Select)
        current = source.value
        values = [value for _label, value in options]
        wanted = (
            prefer if prefer in values else current if current in values else (values[0] if values else None)
        )
        with self.prevent(Select.Changed):
            source.set_options(options)
            if wanted is not None:
                source.value = wanted
        if wanted is None:
            self._status("Open an entity page or run a query first: there is nothing to export yet.")
            return
        self._source_changed(wanted)

    def _formats(self, source: str) -> tuple[str, ...]:
        from stackgraph.graph.export.api import FORMATS

        if source == "results" and self.result is not None and self.result.kind in ("select", "ask"):
            from stackgraph.graph.sparql import SELECT_FORMATS

            return SELECT_FORMATS
        return FORMATS

    def _source_changed(self, source: str) -> None:
        formats = self._formats(source)
        fmt = self.query_one("#export-format", Select)
        keep = fmt.value if fmt.value in formats else formats[0]
        with self.prevent(Select.Changed):
            fmt.set_options([(name, name) for name in formats])
            fmt.value = keep
        self.query_one("#export-depth", Select).disabled = source != "entity"
        self.refresh_preview()

    @on(Select.Changed)
    def _changed(self, event: Select.Changed) -> None:
        event.stop()
        if event.select.id == "export-source" and isinstance(event.value, str):
            self._source_changed(event.value)
        else:
            self.refresh_preview()

    # ------------------------------------------------------------------ preview

    def _status(self, text: str | Content, error: bool = False) -> None:
        status = self.query_one("#export-status", Static)
        status.update(text)
        status.set_class(error, "-error")

    def refresh_preview(self) -> None:
        source = self.query_one("#export-source", Select).value
        fmt = self.query_one("#export-format", Select).value
        depth = self.query_one("#export-depth", Select).value
        if self.engine is None or not isinstance(source, str) or not isinstance(fmt, str):
            return
        self.output = None
        self._status("Exporting…")
        self._make(source, fmt, int(depth) if isinstance(depth, int) else 1)

    @work(thread=True, exclusive=True, group="export")
    def _make(self, source: str, fmt: str, depth: int) -> None:
        from stackgraph.graph.export.api import EXTENSIONS, export
        from stackgraph.graph.model import UnknownEntity
        from stackgraph.graph.sparql import QueryError, format_result

        engine = self.engine
        assert engine is not None
        try:
            if source == "entity" and self.entity is not None:
                output = Output(export(engine, [self.entity[0]], fmt, depth=depth), EXTENSIONS[fmt])
            elif self.result is not None and self.result.kind in ("select", "ask"):
                output = Output(format_result(self.result, fmt), RESULT_EXTENSIONS.get(fmt, f".{fmt}"))
            elif self.query is not None:
                output = Output(export(engine, (), fmt, sparql=self.query), EXTENSIONS[fmt])
            else:
                return
        except (ValueError, UnknownEntity, QueryError) as problem:  # ExportError is a ValueError
            deliver(self.app, self._failed, str(problem))
            return
        deliver(self.app, self._show, source, output)

    def _failed(self, message: str) -> None:
        self.output = None
        self.query_one("#export-preview", TextArea).load_text("")
        self._status(Content.assemble(("✗ ", "bold"), message), error=True)

    def _default_name(self, source: str, extension: str) -> str:
        if source == "entity" and self.entity is not None:
            stem = self.entity[0].rstrip("/").rsplit("/", 1)[-1].rsplit("#", 1)[-1] or "entity"
        else:
            stem = "results"
        return f"{stem}{extension}"

    def _show(self, source: str, output: Output) -> None:
        self.output = output
        preview = self.query_one("#export-preview", TextArea)
        if isinstance(output.data, bytes):
            preview.load_text(
                f"(binary {output.extension[1:].upper()} data, {output.size:,} bytes: save it to view it)"
            )
        else:
            text = output.data
            if len(text) > MAX_PREVIEW:
                text = (
                    text[:MAX_PREVIEW]
                    + f"\n… ({len(output.data) - MAX_PREVIEW:,} more characters are saved too)"
                )
            preview.load_text(text)
        path = self.query_one("#export-path", Input)
        if not path.value or path.value == self._auto_path:
            self._auto_path = self._default_name(source, output.extension)
            path.value = self._auto_path
        else:
            path.value = with_extension(path.value, output.extension)
        self._status(
            Content.styled(f"{output.size:,} bytes ready · ctrl+s writes them to the file below", "dim")
        )

    # ------------------------------------------------------------------ saving

    @on(Button.Pressed, "#export-save")
    def _save_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.action_save()

    @on(Input.Submitted, "#export-path")
    def _path_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.action_save()

    def action_save(self) -> None:
        """Write the preview to the named file; an existing file is overwritten only after a yes."""
        if self.output is None:
            self._status("Nothing to save yet: wait for the preview.", error=True)
            return
        raw = self.query_one("#export-path", Input).value.strip()
        if not raw:
            self._status("Name the file to write first.", error=True)
            return
        path = Path(raw).expanduser().absolute()
        if path.is_dir():
            self._status(f"{path} is a folder: name a file in it.", error=True)
            return
        if path.exists():
            output = self.output

            def answered(yes: bool | None) -> None:
                if yes:
                    self._write(path, output)
                else:
                    self._status(f"Not saved: {path} already exists and was left as it is.")

            self.app.push_screen(Confirm(f"{path} already exists.\nOverwrite it?"), answered)
            return
        self._write(path, self.output)

    def _write(self, path: Path, output: Output) -> None:
        try:
            if isinstance(output.data, bytes):
                path.write_bytes(output.data)
            else:
                path.write_text(output.data, encoding="utf-8")
        except OSError as problem:
            self._status(f"Could not write {path}: {problem.strerror or problem}", error=True)
            return
        self._status(Content.assemble(("✓ ", "bold $success"), f"Wrote {output.size:,} bytes to {path}"))
        self.notify(f"Saved {path}")
