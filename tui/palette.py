"""Command palette providers: every action of every tab, and every entity by name.

``ActionsProvider`` reads the bindings in ``keys.py`` (so the palette can never miss an action a
key has); ``EntityProvider`` asks ``engine.search`` in a thread, so typing in the palette never
waits on the graph. ``GotoEntityProvider`` is the entity search alone (ctrl+g), which lists the
layers of both models before anything is typed.
"""

from __future__ import annotations

import asyncio
from functools import partial
from typing import TYPE_CHECKING, Any

from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.content import Content

from stackgraph.tui import keys

if TYPE_CHECKING:
    from stackgraph.graph.model import EntityRef

#: Entities offered per search.
MAX_ENTITY_HITS = 12


def _action_commands(app: Any) -> list[tuple[str, str, Any]]:
    """(title, help, callback) for every binding of every tab."""
    out = []
    for group in keys.GROUPS:
        for binding in group.bindings:
            key = app.get_key_display(binding)
            title = f"{group.title}: {binding.description}"
            help_text = f"{keys.HELP.get(binding.id or '', binding.description)}  ({key})"
            out.append((title, help_text, partial(app.run_keyed_action, group.pane, binding.action)))
    return out


class ActionsProvider(Provider):
    """Every key-bound action, searchable by its tab and description."""

    async def discover(self) -> Hits:
        for title, help_text, callback in _action_commands(self.app):
            yield DiscoveryHit(title, callback, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, help_text, callback in _action_commands(self.app):
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, matcher.highlight(title), callback, help=help_text)


def _entity_prompt(ref: EntityRef) -> Content:
    return Content.assemble(("→ ", "dim"), ref.display, (f"  {ref.type}", "dim"))


class EntityProvider(Provider):
    """Entities whose names match what is typed, best first (the engine's own ranking)."""

    async def search(self, query: str) -> Hits:
        engine = getattr(self.app, "engine", None)
        if engine is None or len(query.strip()) < 2:
            return
        refs, _total = await asyncio.to_thread(engine.search, query, None, MAX_ENTITY_HITS)
        for rank, ref in enumerate(refs):
            # The engine's scores are comparable among themselves, not with fuzzy action matches:
            # keep its order and let a close action match still come first.
            score = max(0.05, min(0.95, (ref.score or 0.5)) - rank * 0.01)
            yield Hit(
                score,
                _entity_prompt(ref),
                partial(self.app.open_entity, ref.iri),  # type: ignore[attr-defined]
                text=ref.display,
            )


class GotoEntityProvider(EntityProvider):
    """The entity search on its own; before typing, the layers of both models."""

    async def discover(self) -> Hits:
        engine = getattr(self.app, "engine", None)
        if engine is None:
            return
        layers = await asyncio.to_thread(engine.layers)
        for info in layers:
            ref = info.layer
            yield DiscoveryHit(
                _entity_prompt(ref),
                partial(self.app.open_entity, ref.iri),  # type: ignore[attr-defined]
                text=ref.display,
                help=ref.model or "layer",
            )


def _one_line(query: str) -> str:
    return " ".join(query.split())


class QueryHistoryProvider(Provider):
    """Earlier SPARQL queries, newest first, searchable by any word in them (ctrl+f in SPARQL)."""

    def _queries(self) -> list[str]:
        history = self.app.history  # type: ignore[attr-defined]
        history.reload()  # what other running apps ran too
        return list(reversed(history.entries("queries")))

    def _load(self, query: str) -> None:
        self.app.pane("sparql").load(query)  # type: ignore[attr-defined]

    async def discover(self) -> Hits:
        for query in self._queries():
            yield DiscoveryHit(_one_line(query)[:100], partial(self._load, query), help="earlier query")

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for entry in self._queries():
            line = _one_line(entry)
            score = matcher.match(line)
            if score > 0:
                yield Hit(
                    score, matcher.highlight(line[:100]), partial(self._load, entry), help="earlier query"
                )
