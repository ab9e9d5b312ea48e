"""Run a function with a deadline that holds even when the work is stuck in native code.

Oxigraph evaluates SPARQL in Rust with the GIL released: no Python mechanism (signals, async
exceptions) can interrupt it. ``in_child`` forks, runs the work in the child and kills the child at
the deadline, so time, CPU and memory are really bounded; the result travels back pickled through a
pipe. ``in_thread`` is the cheap variant for work that is only waiting (a remote store answering):
the caller stops waiting at the deadline and the thread is abandoned, to end when its work does.
"""

from __future__ import annotations

import contextlib
import faulthandler
import os
import pickle
import select
import signal
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

with contextlib.suppress(ImportError):  # not on Windows, where in_child is not available either
    import resource

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


def can_fork() -> bool:
    return hasattr(os, "fork")


def _limit_memory(extra_mb: int) -> None:
    """In the child: allow ``extra_mb`` of address space beyond what it inherited."""
    try:
        with open("/proc/self/statm") as statm:
            inherited = int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
        ceiling = inherited + extra_mb * 1024 * 1024
        _, hard = resource.getrlimit(resource.RLIMIT_AS)
        if hard != resource.RLIM_INFINITY:
            ceiling = min(ceiling, hard)
        resource.setrlimit(resource.RLIMIT_AS, (ceiling, hard))
    except (OSError, ValueError, NameError):  # no /proc or no rlimits: the deadline still holds
        pass


def _one_line(error: BaseException) -> str:
    return " ".join(str(error).split())[:500]


def in_child(work: Callable[[], T], timeout_s: float, memory_mb: int) -> T:
    """Run ``work`` in a forked child with a deadline and a memory ceiling; return its result.

    ``work`` must return something picklable. Raises Deadline (the child is killed), ChildDied or
    WorkFailed. The child sees the parent's memory as it was at the fork (copy-on-write).
    """
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never return into the caller's code, never run its atexit handlers
        try:
            os.close(read_fd)
            faulthandler.disable()  # a crash here is the parent's to report, not a traceback dump
            _limit_memory(memory_mb)
            try:
                payload: tuple[Any, ...] = ("ok", work())
            except BaseException as error:  # noqa: BLE001 - everything goes back to the parent
                payload = ("error", type(error).__name__, _one_line(error))
            view = memoryview(pickle.dumps(payload, protocol=pickle.HIGHEST_PROTOCOL))
            while view:
                view = view[os.write(write_fd, view) :]
        finally:
            os._exit(0)
    os.close(write_fd)
    chunks: list[bytes] = []
    finished = False
    deadline = time.monotonic() + timeout_s
    poller = select.poll()  # not select.select: a busy server may hold file descriptors above 1024
    poller.register(read_fd, select.POLLIN | select.POLLHUP)
    try:
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not poller.poll(remaining * 1000):
                raise Deadline()
            chunk = os.read(read_fd, 1 << 16)
            if not chunk:
                finished = True
                break
            chunks.append(chunk)
    finally:
        os.close(read_fd)
        if not finished:
            with contextlib.suppress(ProcessLookupError):  # it may have just finished
                os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    if not chunks:
        raise ChildDied()
    payload = pickle.loads(b"".join(chunks))
    if payload[0] == "error":
        raise WorkFailed(payload[1], payload[2])
    return payload[1]


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


__all__ = ["ChildDied", "Deadline", "WorkFailed", "can_fork", "in_child", "in_thread"]
