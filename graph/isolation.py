"""Deadlines for work, and the errors every kind of isolation reports.

Oxigraph evaluates SPARQL in Rust with the GIL released: no Python mechanism (signals, async
exceptions) can interrupt it, so work that must really stop runs in a worker process that is
killed at the deadline (graph/worker_pool.py). ``in_thread`` is the cheap variant for work that is
only waiting (a remote store answering): the caller stops waiting at the deadline and the thread
is abandoned, to end when its work does.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from typing import Any, TypeVar

with contextlib.suppress(ImportError):  # not on Windows, where in_child is not available either
    pass

T = TypeVar("T")


class Deadline(Exception):
    """The work did not finish in time."""


class ChildDied(Exception):
    """The child ended without an answer: it hit its memory ceiling or crashed."""


class WorkFailed(Exception):
    """The work raised. Across a process only the type name and message survive, so those are
    what is kept; ``error`` is the original exception when the work ran in a thread."""

    def __init__(self, name: str, message: str, error: BaseException | None = None) -> None:
        self.name, self.message, self.error = name, message, error
        super().__init__(f"{name}: {message}")


def _one_line(error: BaseException) -> str:
    return " ".join(str(error).split())[:500]


def in_thread(work: Callable[[], T], timeout_s: float, name: str = "deadline-work") -> T:
    """Run ``work`` in a daemon thread and wait at most ``timeout_s`` for it.

    Raises Deadline (the thread is abandoned and ends when its work does) or WorkFailed.
    """
    box: dict[str, Any] = {}
    done = threading.Event()

    def target() -> None:
        try:
            box["value"] = work()
        except BaseException as error:  # noqa: BLE001 - reported to the waiting caller
            box["error"] = error
        finally:
            done.set()

    threading.Thread(target=target, name=name, daemon=True).start()
    if not done.wait(timeout_s):
        raise Deadline()
    if "error" in box:
        error = box["error"]
        raise WorkFailed(type(error).__name__, _one_line(error), error)
    return box["value"]


__all__ = ["ChildDied", "Deadline", "WorkFailed", "in_thread"]
