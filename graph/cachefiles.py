"""Writing and reading cache files so that a crash or a power loss never leaves one that breaks a run.

Every cache (the embedding index, validation markers, the catalog, user-data stores) is written to a
temporary file beside its target, flushed and fsync'ed, then renamed over the target, and the
directory is fsync'ed so the rename itself is durable. Without the fsync a power loss can leave a
renamed but empty file (a 0-byte ``.npz``), which is what made every later ``ask`` fail.

Readers still validate what they read: a file that is empty, not what its format says, or made
for other content is reported in one line and rebuilt, never a traceback.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path


def log(message: str) -> None:
    """One line on stderr: caches speak up only when something is rebuilt or cannot be written."""
    print(f"stackgraph: {message}", file=sys.stderr, flush=True)


def cache_root() -> Path:
    """Where models and indexes are cached: ``$STACKGRAPH_CACHE_DIR`` or the platform's user cache."""
    override = os.environ.get("STACKGRAPH_CACHE_DIR")
    if override:
        return Path(override)
    import platformdirs

    return Path(platformdirs.user_cache_dir("stackgraph"))


def fsync_directory(directory: Path) -> None:
    """Make a rename in ``directory`` durable (a no-op where directories cannot be opened)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


@contextlib.contextmanager
def atomic_target(dest: Path) -> Iterator[Path]:
    """Yield a temporary path beside ``dest``; on success fsync it and rename it over ``dest``.

    Two processes writing the same file each write their own temporary and the last rename wins, so
    a reader sees either no file or a whole one, never a torn or empty one.
    """
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=".tmp", dir=dest.parent)
    os.close(fd)
    tmp = Path(name)
    try:
        yield tmp
        with tmp.open("rb+") as handle:
            os.fsync(handle.fileno())
        tmp.chmod(0o644)  # mkstemp makes 0600; a cache may be shared (CI, containers)
        os.replace(tmp, dest)
        fsync_directory(dest.parent)
    finally:
        tmp.unlink(missing_ok=True)


def write_bytes(dest: Path, data: bytes) -> None:
    with atomic_target(dest) as tmp:
        tmp.write_bytes(data)


__all__ = ["atomic_target", "cache_root", "fsync_directory", "log", "write_bytes"]
