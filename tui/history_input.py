"""An Input that recalls earlier entries with up/down, like a shell prompt."""

from __future__ import annotations

from textual.widgets import Input

from stackgraph.tui import keys
from stackgraph.tui.history import Cursor, History


class HistoryInput(Input):
    """The question box: up/down walk the persisted question history; submitting records it."""

    BINDINGS = keys.HISTORY_INPUT

    def __init__(self, history: History, kind: str, **kwargs) -> None:
        super().__init__(**kwargs)
        self.history = history
        self.cursor = Cursor(history, kind)

    def remember(self, entry: str) -> None:
        """Add ``entry`` to the history and start the next walk from the newest entry."""
        self.history.add(self.cursor.kind, entry)
        self.cursor.reset()

    def _recall(self, value: str | None) -> None:
        if value is not None:
            self.value = value
            self.cursor_position = len(value)

    def action_history_previous(self) -> None:
        self._recall(self.cursor.previous(self.value))

    def action_history_next(self) -> None:
        self._recall(self.cursor.next())
