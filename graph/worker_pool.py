"""Pre-started worker processes for work that must be killable at a deadline (SPARQL parsing and
evaluation), started through multiprocessing's forkserver.

Oxigraph evaluates in Rust with the GIL released and pyparsing can take seconds on a crafted text:
neither can be interrupted from Python, so the work runs in another process that is killed when its
time is up. That process used to be ``os.fork()``-ed per query from the server itself, which has
threads (uvicorn's, the embedding search's, OpenBLAS's): a fork copies locks held by other threads,
and OpenBLAS's pre-fork handler waited on a worker thread that waited for the GIL, so the server
wedged for good under mixed load. Here the main process never forks. The forkserver is a fresh,
single-threaded interpreter (started once, by fork+exec) that imports ``PRELOAD`` and forks the
workers; a worker inherits none of the server's sockets, so it can never hold the listening port.

Each worker:
- dies with its parent: ``PR_SET_PDEATHSIG`` (the forkserver exits when the main process dies, even
  by ``kill -9``, and takes the workers with it), and an idle worker exits when its pipe closes;
- gets, per call, a CPU limit (``RLIMIT_CPU``: the call's time plus a margin) and an address-space
  ceiling (``RLIMIT_AS``: what it uses plus the call's ``memory_mb``);
- is killed at the call's deadline and replaced in the background; one that crashed or ran out of
  memory is replaced too.

The deadline counts from when a worker takes the call; waiting for a free worker is bounded
separately (``WAIT_S``), so a burst of requests queues instead of timing out.
"""

from __future__ import annotations

import contextlib
import ctypes
import multiprocessing
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from multiprocessing.connection import Connection
from typing import Any

from stackgraph.graph.isolation import ChildDied, Deadline, WorkFailed

with contextlib.suppress(ImportError):  # not on Windows, where there is no pool either
    import resource

#: Workers kept running (environment STACKGRAPH_SPARQL_WORKERS); one per core, at most 4.
SIZE: int = int(os.environ.get("STACKGRAPH_SPARQL_WORKERS", "0") or 0) or max(1, min(4, os.cpu_count() or 1))
#: The longest a call waits for a free worker before it is refused as busy.
WAIT_S: float = 60.0
#: Modules the forkserver imports once, so that a new worker is ready in milliseconds.
PRELOAD: list[str] = ["stackgraph.graph.sparql"]
_PR_SET_PDEATHSIG = 1
#: CPU seconds a call may use beyond its wall-clock deadline before the kernel stops it.
_CPU_MARGIN_S = 2


class Busy(Exception):
    """No worker became free within ``WAIT_S``."""


def available() -> bool:
    """Whether workers can be started here (a POSIX system with the forkserver start method)."""
    return "forkserver" in multiprocessing.get_all_start_methods()


# ------------------------------------------------------------------------------------ the worker


def _die_with_parent() -> None:
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() == 1:  # the parent is already gone: nobody will ever send work
        os._exit(0)


def _close_inherited(keep: int) -> None:
    """Close every descriptor but stdio and the worker's pipe.

    multiprocessing hands each child the forkserver's "alive" pipe and the resource tracker's pipe
    (so that a child could start processes of its own). A worker that held them would keep the
    forkserver alive after the server died, and the forkserver's death is what stops a busy worker
    (``PR_SET_PDEATHSIG``): so they go, with anything else inherited.
    """
    from multiprocessing import forkserver, resource_tracker

    with contextlib.suppress(AttributeError):
        forkserver._forkserver._forkserver_alive_fd = None  # type: ignore[attr-defined]
        resource_tracker._resource_tracker._fd = None  # type: ignore[attr-defined]
    try:
        descriptors = [int(name) for name in os.listdir("/proc/self/fd")]
    except OSError:
        return
    for fd in descriptors:
        if fd > 2 and fd != keep:
            with contextlib.suppress(OSError):
                os.close(fd)


def _limit(timeout_s: float, memory_mb: int) -> None:
    """Bound this call: CPU seconds from now, and address space beyond what is in use now."""
    with contextlib.suppress(OSError, ValueError, NameError):
        usage = resource.getrusage(resource.RUSAGE_SELF)
        used = int(usage.ru_utime + usage.ru_stime)
        _, hard = resource.getrlimit(resource.RLIMIT_CPU)
        soft = used + int(timeout_s) + _CPU_MARGIN_S
        resource.setrlimit(
            resource.RLIMIT_CPU, (soft if hard == resource.RLIM_INFINITY else min(soft, hard), hard)
        )
    with contextlib.suppress(OSError, ValueError, NameError):
        with open("/proc/self/statm") as statm:
            in_use = int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
        ceiling = in_use + memory_mb * 1024 * 1024
        _, hard = resource.getrlimit(resource.RLIMIT_AS)
        if hard != resource.RLIM_INFINITY:
            ceiling = min(ceiling, hard)
        resource.setrlimit(resource.RLIMIT_AS, (ceiling, hard))


def _one_line(error: BaseException) -> str:
    return " ".join(str(error).split())[:500]


def _worker_main(conn: Connection) -> None:
    """Serve calls until the pipe closes. Runs in the worker process."""
    _close_inherited(conn.fileno())
    _die_with_parent()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the whole group; the parent decides
    os.environ["RUST_BACKTRACE"] = "0"  # an out-of-memory abort is reported by the parent in one line
    while True:
        try:
            function, args, setup, timeout_s, memory_mb = conn.recv()
        except (EOFError, OSError):
            os._exit(0)
        try:
            _limit(timeout_s, 1 << 20)  # the setup (loading a graph) is not the query's memory
            if setup is not None:
                setup[0](*setup[1])
            _limit(timeout_s, memory_mb)
            reply: tuple[Any, ...] = ("ok", function(*args))
        except BaseException as error:  # noqa: BLE001 - everything goes back to the caller
            reply = ("error", type(error).__name__, _one_line(error))
        try:
            conn.send(reply)
        except (OSError, ValueError):
            os._exit(0)


# ------------------------------------------------------------------------------------ the parent


@contextlib.contextmanager
def _stdio_with_descriptors() -> Iterator[None]:
    """Real standard streams while the forkserver and resource tracker start.

    Both hand ``sys.stderr.fileno()`` to the process they start; an app that captures printing
    (Textual's ``fileno()`` is -1) would make that start fail with "bad value(s) in fds_to_keep".
    Only such a stream is swapped, and only for the moment of the start; the terminal app starts the
    pool before it takes over the terminal, so there this is a fallback.
    """
    swapped = {}
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        try:
            usable = stream is None or stream.fileno() >= 0
        except (AttributeError, OSError, ValueError):
            usable = True  # multiprocessing skips a stream with no descriptor at all
        original = getattr(sys, f"__{name}__")
        if not usable and original is not None:
            swapped[name] = stream
            setattr(sys, name, original)
    try:
        yield
    finally:
        for name, stream in swapped.items():
            setattr(sys, name, stream)


class _Worker:
    def __init__(self, context: Any) -> None:
        self.conn, child_conn = context.Pipe()
        self.process = context.Process(
            target=_worker_main, args=(child_conn,), daemon=True, name="stackgraph-query"
        )
        with _stdio_with_descriptors():
            self.process.start()
        child_conn.close()

    def kill(self) -> None:
        with contextlib.suppress(OSError, ValueError, AttributeError):
            self.process.kill()
            self.process.join(5)
        with contextlib.suppress(OSError):
            self.conn.close()


class Pool:
    """At most ``size`` workers; ``call`` runs a picklable module-level function in one of them."""

    def __init__(self, size: int = SIZE) -> None:
        self.size = max(1, size)
        self._idle: list[_Worker] = []
        self._live = 0
        self._cond = threading.Condition()
        self._context: Any = None

    def _ctx(self) -> Any:
        if self._context is None:
            context = multiprocessing.get_context("forkserver")
            context.set_forkserver_preload(PRELOAD)
            self._context = context
        return self._context

    def _acquire(self, wait_s: float) -> _Worker:
        deadline = time.monotonic() + wait_s
        with self._cond:
            while not self._idle:
                if self._live < self.size:
                    self._live += 1
                    break
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise Busy()
                self._cond.wait(remaining)
            else:
                return self._idle.pop()
        try:
            return _Worker(self._ctx())
        except BaseException:
            with self._cond:
                self._live -= 1
                self._cond.notify()
            raise

    def _release(self, worker: _Worker, healthy: bool) -> None:
        with self._cond:
            if healthy:
                self._idle.append(worker)
            else:
                self._live -= 1
            self._cond.notify()
        if not healthy:
            worker.kill()
            threading.Thread(target=self.prestart, args=(1,), daemon=True, name="query-worker-start").start()

    def prestart(self, count: int | None = None) -> None:
        """Start idle workers (all of them by default) so that no call pays for a start."""
        for _ in range(self.size if count is None else count):
            with self._cond:
                if self._live >= self.size:
                    return
                self._live += 1
            try:
                worker = _Worker(self._ctx())
            except Exception:  # noqa: BLE001 - a call will try again and report the failure
                with self._cond:
                    self._live -= 1
                return
            self._release(worker, True)

    def call(
        self,
        function: Callable[..., Any],
        *args: Any,
        timeout_s: float,
        memory_mb: int,
        setup: tuple[Callable[..., Any], tuple[Any, ...]] | None = None,
    ) -> Any:
        """``function(*args)`` in a worker within ``timeout_s``; raises Deadline, ChildDied, WorkFailed or Busy.

        ``setup`` (a function and its arguments) runs first in the worker, inside the deadline but
        outside the memory ceiling: loading the graph a query runs on is not the query's memory.
        """
        worker = self._acquire(WAIT_S)
        healthy = False
        try:
            worker.conn.send((function, args, setup, timeout_s, memory_mb))
            if not worker.conn.poll(timeout_s):
                raise Deadline()
            reply = worker.conn.recv()
            healthy = reply[0] == "ok" or reply[1] not in ("MemoryError", "RecursionError")
        except (EOFError, OSError) as error:
            raise ChildDied() from error
        finally:
            self._release(worker, healthy)
        if reply[0] == "error":
            raise WorkFailed(reply[1], reply[2])
        return reply[1]

    def pids(self) -> list[int]:
        """Process ids of the idle workers (for tests and diagnostics)."""
        with self._cond:
            return [w.process.pid for w in self._idle if w.process.pid is not None]

    def close(self) -> None:
        with self._cond:
            idle, self._idle = self._idle, []
            self._live -= len(idle)
        for worker in idle:
            worker.kill()


def start() -> None:
    """Start the forkserver now and the workers in the background; call early in a long-running
    server, before it starts threads or loads numpy, so that nothing ever forks a busy process."""
    if not available():
        return
    pool = shared()
    pool._ctx()
    from multiprocessing import forkserver

    with _stdio_with_descriptors():
        forkserver.ensure_running()
    threading.Thread(target=pool.prestart, daemon=True, name="query-worker-start").start()


_POOL: Pool | None = None
_POOL_LOCK = threading.Lock()


def shared() -> Pool:
    """The process's one pool, created on first use."""
    global _POOL
    with _POOL_LOCK:
        if _POOL is None:
            _POOL = Pool()
        return _POOL


__all__ = ["PRELOAD", "SIZE", "WAIT_S", "Busy", "Pool", "available", "shared", "start"]
