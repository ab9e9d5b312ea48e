"""Connection limits for the HTTP server: a time limit on reading a request, a cap on open
connections, and one rate-limited log line per refusal.

uvicorn arms no timer until a first request has been answered, so a client that sends its headers a
byte at a time (or never) holds a connection, and a file descriptor, for as long as it likes; enough
of them exhaust the descriptors and every ``accept()`` then logs a traceback. ``GuardedH11Protocol``
closes a connection whose request (headers and body) has not fully arrived within
``REQUEST_READ_TIMEOUT_S``, and closes new connections at once beyond ``MAX_CONNECTIONS``. Either way
the log gets a line, at most one per ``LOG_INTERVAL_S`` with a count of the rest.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import threading
import time
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

with contextlib.suppress(ImportError):
    import resource

#: Seconds a client has to send a whole request (headers and body) once it starts one.
REQUEST_READ_TIMEOUT_S: float = float(os.environ.get("STACKGRAPH_REQUEST_READ_TIMEOUT_S", "10"))
#: Open connections beyond this are closed on arrival (each holds a file descriptor).
MAX_CONNECTIONS: int = int(os.environ.get("STACKGRAPH_MAX_CONNECTIONS", "2048"))
#: Idle seconds before a kept-alive connection is closed (uvicorn's own timer).
KEEP_ALIVE_S: int = 5
#: Largest request head h11 will buffer (uvicorn's default, stated so it is a named limit).
MAX_HEAD_BYTES: int = 16 * 1024
LOG_INTERVAL_S: float = 5.0

log = logging.getLogger("stackgraph.server.limits")


class RateLimitedLog:
    """One warning per ``interval`` for a kind of event; the next line counts what was left out."""

    def __init__(self, interval: float = LOG_INTERVAL_S) -> None:
        self.interval = interval
        self._last: dict[str, float] = {}
        self._skipped: dict[str, int] = {}
        self._lock = threading.Lock()

    def warning(self, kind: str, message: str) -> bool:
        """Log ``message`` unless ``kind`` was logged in the last interval; True when logged."""
        now = time.monotonic()
        with self._lock:
            if now - self._last.get(kind, -self.interval) < self.interval:
                self._skipped[kind] = self._skipped.get(kind, 0) + 1
                return False
            self._last[kind] = now
            skipped = self._skipped.pop(kind, 0)
        suffix = f" (and {skipped} more in the last {self.interval:g} s)" if skipped else ""
        log.warning("%s%s", message, suffix)
        return True


REFUSALS = RateLimitedLog()
#: The cap in force: ``MAX_CONNECTIONS``, lowered by ``raise_file_limit`` to stay under the
#: descriptor limit (past it every accept() fails and asyncio logs a traceback for each).
_cap: int = MAX_CONNECTIONS
#: Descriptors kept free for everything but client connections (logs, pipes to workers, the store).
_RESERVED_FDS = 128


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with a request-read deadline and a connection cap."""

    _read_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        if len(self.connections) > MAX_CONNECTIONS:
            REFUSALS.warning(
                "cap",
                f"refused a connection from {_peer(self.client)}: {MAX_CONNECTIONS} connections are open",
            )
            transport.close()
            return
        self._arm()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.conn.their_state in (h11.IDLE, h11.SEND_BODY):  # a request is still arriving
            self._arm()
        else:
            self._disarm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _arm(self) -> None:
        if self._read_timer is None:
            self._read_timer = self.loop.call_later(REQUEST_READ_TIMEOUT_S, self._read_timed_out)

    def _disarm(self) -> None:
        if self._read_timer is not None:
            self._read_timer.cancel()
            self._read_timer = None

    def _read_timed_out(self) -> None:
        self._read_timer = None
        if self.conn.their_state not in (h11.IDLE, h11.SEND_BODY) or self.transport.is_closing():
            return
        if self.timeout_keep_alive_task is not None:
            return  # an idle kept-alive connection: uvicorn's keep-alive timer owns it
        REFUSALS.warning(
            "slow",
            f"closed a connection from {_peer(self.client)}: no whole request within {REQUEST_READ_TIMEOUT_S:g} s",
        )
        self.transport.close()


def _peer(client: Any) -> str:
    return f"{client[0]}:{client[1]}" if client else "an unknown peer"


def raise_file_limit() -> int:
    """Let the process open as many descriptors as its hard limit allows, and keep the connection
    cap below that; returns the cap in force."""
    global _cap
    with contextlib.suppress(OSError, ValueError, NameError):
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        wanted = hard if hard != resource.RLIM_INFINITY else 65536
        if soft < wanted:
            resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
        soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
        _cap = min(MAX_CONNECTIONS, max(16, soft - _RESERVED_FDS))
    return _cap


def uvicorn_options() -> dict[str, Any]:
    """The keyword arguments ``uvicorn.run`` gets for these limits."""
    return {
        "http": GuardedH11Protocol,
        "timeout_keep_alive": KEEP_ALIVE_S,
        "h11_max_incomplete_event_size": MAX_HEAD_BYTES,
    }


__all__ = [
    "MAX_CONNECTIONS",
    "REQUEST_READ_TIMEOUT_S",
    "GuardedH11Protocol",
    "RateLimitedLog",
    "raise_file_limit",
    "uvicorn_options",
]
