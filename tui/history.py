"""Question and query history, kept between runs in the user's data directory.

One small JSON file (``history.json``) holds a list per kind ("questions", "queries"), oldest
first, capped at ``MAX_ENTRIES``. The directory is ``platformdirs.user_data_dir("stackgraph")``
unless ``STACKGRAPH_DATA_DIR`` says otherwise (tests point it at a temporary directory). A history
that cannot be read or written is never an error the user has to deal with: the app keeps working
with what it has in memory.

Several apps may run at once: each ``add`` takes a lock beside the file, reads what the others
wrote, merges its entry in and writes the result, so no app overwrites another's entries.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from filelock import FileLock, Timeout

#: Seconds an app waits for another to finish writing before it keeps the entry in memory only.
LOCK_TIMEOUT = 2.0
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
        self.reload()

    def _read(self) -> dict[str, list[str]] | None:
        """The file's lists, or None when it is missing or unreadable."""
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(data, dict):
            return None
        out: dict[str, list[str]] = {}
        for kind in KINDS:
            items = data.get(kind)
            out[kind] = (
                [i for i in items if isinstance(i, str)][-MAX_ENTRIES:] if isinstance(items, list) else []
            )
        return out

    def reload(self) -> None:
        """Take in what other running apps have added since (the question box does at each walk)."""
        data = self._read()
        if data is not None:
            self._entries = data

    def entries(self, kind: str) -> list[str]:
        """The entries of one kind, oldest first (a copy)."""
        return list(self._entries[kind])

    def add(self, kind: str, entry: str) -> None:
        """Remember ``entry`` as the newest of its kind; a repeat moves to the end instead of doubling."""
        entry = entry.strip()
        if not entry:
            return
        self._remember(self._entries, kind, entry)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with FileLock(str(self.path) + ".lock", timeout=LOCK_TIMEOUT):
                merged = self._read()
                if merged is None:  # no file yet, or a corrupt one: start from what this app has
                    merged = {k: list(v) for k, v in self._entries.items()}
                else:
                    self._remember(merged, kind, entry)
                if self._write(merged):
                    self._entries = merged
        except (OSError, Timeout):
            return  # kept in memory; the next add tries again

    @staticmethod
    def _remember(entries: dict[str, list[str]], kind: str, entry: str) -> None:
        items = entries[kind]
        if entry in items:
            items.remove(entry)
        items.append(entry)
        del items[:-MAX_ENTRIES]

    def save(self) -> bool:
        """Write the file atomically; False (and nothing raised) when the directory is not writable."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError:
            return False
        return self._write(self._entries)

    def _write(self, entries: dict[str, list[str]]) -> bool:
        try:
            fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".history-", suffix=".json")
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                json.dump(entries, out, ensure_ascii=False, indent=1)
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
            self.history.reload()  # a new walk sees what other running apps added
            items = self.history.entries(self.kind)
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
