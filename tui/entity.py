"""The Entity tab: one entity's page, with back/forward history like a browser.

The page shows the label, types, layer placements and IRI, then the definition, every edge grouped
by predicate (outgoing first, then incoming) and the sources. Edges to entities are choices in an
OptionList: enter (or a click) on one opens its page.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual import on, work
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from stackgraph.tui import keys
from stackgraph.tui.clipboard import copy
from stackgraph.tui.messages import AskQuestion, ExportEntity, OpenEntity
from stackgraph.tui.threads import deliver

if TYPE_CHECKING:
    from stackgraph.graph.engine import Engine
    from stackgraph.graph.model import Edge, EntityDescription

#: Bases an edge is marked with: the graph's reading rather than the seed's words.
READINGS = ("inferred", "reconstructed")

EMPTY = "[dim]No entity yet: pick one in Browse (F3), press ctrl+g to jump to one by name, or ctrl+t on an answer.[/dim]"


def short_iri(iri: str) -> str:
    from stackgraph.graph.store import PREFIXES

    for prefix, base in PREFIXES.items():
        if iri.startswith(base):
            return f"{prefix}:{iri[len(base) :]}"
    return iri


def header_content(desc: EntityDescription, hidden: frozenset[str] = frozenset()) -> Content:
    """The top of the page: who the entity is and where it sits (the definition scrolls below).

    ``hidden`` are the entity's SKOS hidden labels (misspellings, search terms such as "nickel"):
    they help matching and are not names to show.
    """
    ref = desc.entity
    parts: list[Content] = [Content.styled(ref.display, "bold $accent")]
    kinds = " · ".join(desc.types) or ref.type
    line = Content.assemble((kinds, "italic"))
    shown = [label for label in desc.alt_labels if label not in hidden]
    if shown:
        line = Content.assemble(line, ("  also: ", "dim"), ", ".join(shown[:6]))
    parts.append(line)
    if ref.code:
        parts.append(Content.assemble(("Layer ", "bold"), f"{ref.code} in {ref.model or 'its model'}"))
    for placement in desc.placements:
        layer = placement.layer
        where = layer.display + (f" ({layer.model})" if layer.model else "")
        how = ", ".join(x for x in (placement.role, placement.basis) if x)
        parts.append(Content.assemble(("Layer ", "bold"), where, (f" — {how}" if how else "", "dim")))
    parts.append(Content.styled(short_iri(ref.iri), "dim"))
    return Content("\n").join(parts)


def _grouped(edges: tuple[Edge, ...]) -> dict[str, list[Edge]]:
    groups: dict[str, list[Edge]] = {}
    for edge in edges:
        groups.setdefault(edge.predicate_label, []).append(edge)
    return groups


def link_rows(desc: EntityDescription) -> list[tuple[Content, str | None, bool]]:
    """(prompt, IRI to open or None, is a heading) for every line of the links list."""
    from stackgraph.graph.model import EntityRef

    rows: list[tuple[Content, str | None, bool]] = []
    # The definition and notes scroll with the links, so a long one never hides them.
    if desc.definition:
        rows.append((Content(desc.definition), None, False))
    rows.extend((Content.styled(note, "italic"), None, False) for note in desc.notes)
    for direction, edges, arrow in (("", desc.outgoing, "→"), ("incoming: ", desc.incoming, "←")):
        for label, group in _grouped(edges).items():
            rows.append((Content.styled(f"{direction}{label}", "bold"), None, True))
            for edge in group:
                marks = [m for m in (edge.qualifier, edge.basis if edge.basis in READINGS else None) if m]
                qualifier = Content.styled(f"  ({', '.join(marks)})", "dim") if marks else Content("")
                if isinstance(edge.value, EntityRef):
                    prompt = Content.assemble(
                        f"  {arrow} ", edge.value.display, ("  " + edge.value.type, "dim"), qualifier
                    )
                    rows.append((prompt, edge.value.iri, False))
                else:
                    rows.append((Content.assemble("    ", str(edge.value), qualifier), None, False))
    if desc.sources:
        rows.append((Content.styled("sources", "bold"), None, True))
        rows.extend((Content(f"    {s.display}"), None, False) for s in desc.sources)
    return rows


class EntityPane(Vertical):
    """The page of the current entity, and the history of pages visited."""

    BINDINGS = keys.ENTITY

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.engine: Engine | None = None
        #: The IRI on screen (None before the first page).
        self.current: str | None = None
        #: The description on screen.
        self.description: EntityDescription | None = None
        self.back: list[str] = []
        self.forward: list[str] = []
        self._targets: list[str | None] = []
        #: The highlighted link of each page left, so Back and Forward return to the same place.
        self._places: dict[str, int] = {}

    def compose(self) -> ComposeResult:
        yield Static(EMPTY, id="entity-header")
        yield Static("", id="entity-nav")
        yield OptionList(id="entity-links")

    def focus_default(self) -> None:
        self.query_one("#entity-links", OptionList).focus()

    def engine_ready(self, engine: Engine) -> None:
        self.engine = engine
        if self.current:
            self._load(self.current)

    # ------------------------------------------------------------------ navigation

    def show(self, iri: str, push: bool = True) -> None:
        """Open the page of ``iri``; with ``push``, the page on screen goes on the back stack."""
        if self.current:
            highlighted = self.query_one("#entity-links", OptionList).highlighted
            if highlighted is not None:
                self._places[self.current] = highlighted
        if push and self.current and self.current != iri:
            self.back.append(self.current)
            self.forward.clear()
        self.current = iri
        if self.engine is not None:
            self._load(iri)

    def action_back(self) -> None:
        if not self.back:
            self.notify("Nothing to go back to.", severity="warning")
            return
        if self.current:
            self.forward.append(self.current)
        self.show(self.back.pop(), push=False)

    def action_forward(self) -> None:
        if not self.forward:
            self.notify("Nothing to go forward to.", severity="warning")
            return
        if self.current:
            self.back.append(self.current)
        self.show(self.forward.pop(), push=False)

    def action_copy_iri(self) -> None:
        """y: the highlighted link's IRI, or the page's own when no link is highlighted."""
        links = self.query_one("#entity-links", OptionList)
        index = links.highlighted
        target = self._targets[index] if index is not None and index < len(self._targets) else None
        iri = target or self.current
        if iri:
            copy(self.app, iri, "the IRI")

    def action_export(self) -> None:
        if self.current:
            self.post_message(ExportEntity(self.current))

    def action_ask_about(self) -> None:
        if self.description is not None:
            self.post_message(AskQuestion(f"Where does {self.description.entity.display} fit?"))

    # ------------------------------------------------------------------ loading and drawing

    @work(thread=True, exclusive=True, group="entity")
    def _load(self, iri: str) -> None:
        from stackgraph.graph.model import UnknownEntity

        assert self.engine is not None
        try:
            desc = self.engine.describe(iri)
        except UnknownEntity as problem:
            deliver(self.app, self._failed, str(problem))
            return
        deliver(self.app, self._draw, desc)

    def _failed(self, message: str) -> None:
        self.description = None
        self.query_one("#entity-header", Static).update(Content.styled(message, "$error"))
        self.query_one("#entity-links", OptionList).clear_options()

    def _draw(self, desc: EntityDescription) -> None:
        self.description = desc
        record = self.engine.catalog.get(desc.entity.iri) if self.engine is not None else None
        hidden = frozenset(record.hidden_labels) if record is not None else frozenset()
        self.query_one("#entity-header", Static).update(header_content(desc, hidden))
        nav = []
        if self.back:
            nav.append(f"b back ({len(self.back)})")
        if self.forward:
            nav.append(f"f forward ({len(self.forward)})")
        nav.append("enter opens a linked entity")
        self.query_one("#entity-nav", Static).update(Content.styled(" · ".join(nav), "dim"))
        rows = link_rows(desc)
        self._targets = [iri for _prompt, iri, _heading in rows]
        links = self.query_one("#entity-links", OptionList)
        links.set_options(
            Option(prompt, id=f"row-{i}", disabled=iri is None)
            for i, (prompt, iri, _heading) in enumerate(rows)
        )
        first = next((i for i, iri in enumerate(self._targets) if iri), None)
        place = self._places.get(desc.entity.iri)
        links.highlighted = place if place is not None and place < len(rows) else first

    @on(OptionList.OptionSelected, "#entity-links")
    def _selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        iri = self._targets[event.option_index] if event.option_index < len(self._targets) else None
        if iri:
            self.post_message(OpenEntity(iri))
