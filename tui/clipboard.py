"""Copying by keyboard: one helper so every pane copies the same way and says so in a toast.

Textual sends the text to the terminal with OSC 52 (tmux and most terminals pass it to the system
clipboard) and keeps it in ``App.clipboard``, which is what Textual's own paste reads and what the
tests check.
"""

from __future__ import annotations

from typing import Any

#: Characters of the copied text quoted in the toast.
PREVIEW = 48


def copy(app: Any, text: str, what: str) -> bool:
    """Put ``text`` on the clipboard and toast ``what`` was copied; False (and a warning) when empty."""
    if not text.strip():
        app.notify(f"Nothing to copy: no {what} here.", severity="warning")
        return False
    app.copy_to_clipboard(text)
    first = text.strip().splitlines()[0]
    quoted = first if len(first) <= PREVIEW else first[: PREVIEW - 1] + "…"
    app.notify(f"Copied {what}: {quoted}", title="Copied", timeout=3)
    return True
