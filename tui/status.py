"""The one-line bar at the top: the app's name, what the engine is doing, and a busy indicator.

It says nothing time-dependent (no clock, no durations), so screenshots of the app are stable.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import LoadingIndicator, Static


class StatusBar(Horizontal):
    """Title on the left, state on the right; the spinner shows while work is in the background."""

    def compose(self) -> ComposeResult:
        yield Static(" stackgraph ", id="status-title")
        yield LoadingIndicator(id="status-busy")
        yield Static("", id="status-text")

    def busy(self, text: str) -> None:
        self.query_one("#status-busy").display = True
        self._say(text, error=False)

    def ready(self, text: str) -> None:
        self.query_one("#status-busy").display = False
        self._say(text, error=False)

    def error(self, text: str) -> None:
        self.query_one("#status-busy").display = False
        self._say(text, error=True)

    def _say(self, text: str, error: bool) -> None:
        label = self.query_one("#status-text", Static)
        label.update(text)
        label.set_class(error, "-error")

    @property
    def text(self) -> str:
        return str(self.query_one("#status-text", Static).content)
