"""Question and query history, kept between runs in the user's data directory.

One small JSON file (``history.json``) holds a list per kind ("questions", "queries"), oldest
first, capped at ``MAX_ENTRIES``. The directory is ``platformdirs.user_data_dir("stackgraph")``
unless ``STACKGRAPH_DATA_DIR`` says otherwise (tests point it at a temporary directory). A history
that cannot be read or written is never an error the user has to deal with: the app keeps working
with what it has in memory.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

#: Environment variable that overrides the data directory.
DATA_DIR_ENV = "STACKGRAPH_DATA_DIR"
#: Entries kept per kind; the oldest go first.
MAX_ENTRIES = 200
KINDS = ("questions", "queries")


def data_dir() -> Path:
    """Where stackgraph keeps what it remembers between runs."""
    override = os.environ.get(DATA_DIR_ENV)
    if override:
        return Path(override)
    from platformdirs import user_data_dir

    return Path(user_data_dir("stackgraph", appauthor=False))


class History:
    """Persisted lists of entries per kind; ``add`` saves at once (a crash loses nothing)."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path if path is not None else data_dir() / "history.json"
        self._entries: dict[str, list[str]] = {kind: [] for kind in KINDS}
        self._load()

    def _load(self) -> None:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return
        if not isinstance(data, dict):
            return
        for kind in KINDS:
            items = data.get(kind)
            if isinstance(items, list):
                self._entries[kind] = [i for i in items if isinstance(i, str)][-MAX_ENTRIES:]

    def entries(self, kind: str) -> list[str]:
        """The entries of one kind, oldest first (a copy)."""
        return list(self._entries[kind])

    def add(self, kind: str, entry: str) -> None:
        """Remember ``entry`` as the newest of its kind; a repeat moves to the end instead of doubling."""
        entry = entry.strip()
        if not entry:
            return
        items = self._entries[kind]
        if entry in items:
            items.remove(entry)
        items.append(entry)
        del items[:-MAX_ENTRIES]
        self.save()

    def save(self) -> bool:
        """Write the file atomically; False (and nothing raised) when the directory is not writable."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".history-", suffix=".json")
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                json.dump(self._entries, out, ensure_ascii=False, indent=1)
            os.replace(tmp, self.path)
        except OSError:
            return False
        return True


class Cursor:
    """Walks one kind of history with previous/next, the way a shell does.

    Moving back from the draft remembers the draft, so moving forward past the newest entry
    gives back what the user was typing.
    """

    def __init__(self, history: History, kind: str) -> None:
        self.history = history
        self.kind = kind
        self._index: int | None = None
        self._draft = ""

    def reset(self) -> None:
        self._index = None

    def previous(self, current: str) -> str | None:
        items = self.history.entries(self.kind)
        if not items:
            return None
        if self._index is None:
            self._draft = current
            self._index = len(items)
        if self._index == 0:
            return None
        self._index -= 1
        return items[self._index]

    def next(self) -> str | None:
        items = self.history.entries(self.kind)
        if self._index is None:
            return None
        self._index += 1
        if self._index >= len(items):
            self._index = None
            return self._draft
        return items[self._index]
