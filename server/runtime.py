"""What one server process keeps: the engine, loaded once in the background, and small LRU stores.

The MCP ``initialize`` handshake must not wait for the graph or the embedding model, so the engine
is built on a background thread as soon as the server is built, and the model is loaded right
after it (``Engine.prepare_semantic``). Tools wait for what they need: most only for the engine;
tools that link free text also for the model, so their answers do not depend on how early they
were called. A failed load is remembered and reported by every tool, never raised at start-up.
"""

from __future__ import annotations

import logging
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Generic, TypeVar

if TYPE_CHECKING:
    from stackgraph.graph.conversation import Conversation
    from stackgraph.graph.engine import Engine
    from stackgraph.graph.model import Answer

log = logging.getLogger("stackgraph.server")

#: How long a tool waits for the graph before giving up (loading takes about a second).
ENGINE_WAIT_S = 120.0
#: How long a tool waits for the embedding model before answering without it.
SEMANTIC_WAIT_S = 120.0
#: Conversations kept per process (least recently used dropped first).
MAX_CONVERSATIONS = 512
#: Answers kept so that their cursors can page through long lists.
MAX_CACHED_ANSWERS = 256
#: Complete results of the idempotent shortcut tools, served again without recomputing.
MAX_CACHED_RESULTS = 2048

#: Modules the engine imports lazily, imported on the loading thread before any tool runs: two
#: threads importing rdflib's SPARQL plugin at once can see it half-initialised (circular imports).
WARM_MODULES = (
    "stackgraph.graph.linking",
    "stackgraph.graph.answering",
    "stackgraph.graph.describe",
    "stackgraph.graph.triage",
    "stackgraph.graph.paths",
    "stackgraph.graph.conversation",
    "stackgraph.graph.sparql",
    "stackgraph.graph.export",
)
#: Held while the engine loads and by anyone importing graph modules on another thread meanwhile.
IMPORT_LOCK = threading.RLock()

K = TypeVar("K")
V = TypeVar("V")


class EngineUnavailable(RuntimeError):
    """The engine failed to load or did not load in time; ``str()`` says why, in one line."""


class LRU(Generic[K, V]):
    """A small thread-safe least-recently-used map."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self._items: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: K) -> V | None:
        with self._lock:
            value = self._items.get(key)
            if value is not None:
                self._items.move_to_end(key)
            return value

    def get_or_create(self, key: K, factory: Callable[[], V]) -> V:
        with self._lock:
            value = self._items.get(key)
            if value is None:
                value = self._items[key] = factory()
                while len(self._items) > self.capacity:
                    self._items.popitem(last=False)
            else:
                self._items.move_to_end(key)
            return value

    def put(self, key: K, value: V) -> None:
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self.capacity:
                self._items.popitem(last=False)

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, key: object) -> bool:
        with self._lock:
            return key in self._items


def _warm_imports() -> None:
    import importlib

    for name in WARM_MODULES:
        try:
            importlib.import_module(name)
        except ImportError as error:  # a part not built yet: its tool will say so when called
            log.debug("not importing %s: %s", name, error)


class Runtime:
    """The engine behind one server, plus its conversations and cached answers."""

    def __init__(self, engine_factory: Callable[[], Engine], semantic: bool = True) -> None:
        self._factory = engine_factory
        self._semantic = semantic
        self._engine: Engine | None = None
        self._error: str | None = None
        self._engine_ready = threading.Event()
        self._semantic_ready = threading.Event()
        self._started = False
        self._start_lock = threading.Lock()
        self.conversations: LRU[str, tuple[threading.Lock, Conversation]] = LRU(MAX_CONVERSATIONS)
        self.answers: LRU[str, Answer] = LRU(MAX_CACHED_ANSWERS)
        self.results: LRU[tuple[str, ...], Any] = LRU(MAX_CACHED_RESULTS)

    def start(self) -> None:
        """Begin loading in the background (idempotent)."""
        with self._start_lock:
            if self._started:
                return
            self._started = True
        threading.Thread(target=self._load, name="stackgraph-engine", daemon=True).start()

    def _load(self) -> None:
        started = time.perf_counter()
        try:
            with IMPORT_LOCK:
                engine = self._factory()
                _warm_imports()
                engine.linker  # noqa: B018 - builds the name index now rather than on the first call
            self._engine = engine
            log.info("graph loaded in %.2f s", time.perf_counter() - started)
        except Exception as error:  # any failure must reach the tools as a message, not kill the server
            self._error = " ".join(f"{type(error).__name__}: {error}".split())[:500]
            log.error("the graph failed to load: %s", self._error)
        finally:
            self._engine_ready.set()
        try:
            if self._engine is not None and self._semantic and getattr(self._engine, "semantic", False):
                started = time.perf_counter()
                self._engine.prepare_semantic()
                log.info("embedding model ready in %.2f s", time.perf_counter() - started)
        except Exception as error:  # the engine falls back to lexical linking
            log.warning(
                "embedding model unavailable, linking by names only: %s: %s", type(error).__name__, error
            )
        finally:
            self._semantic_ready.set()

    @property
    def ready(self) -> bool:
        return self._engine_ready.is_set() and self._engine is not None

    def engine(self, semantic: bool = False) -> Engine:
        """The engine, waiting for it (and for the model when ``semantic``) if still loading."""
        self.start()
        if not self._engine_ready.wait(ENGINE_WAIT_S):
            raise EngineUnavailable(
                f"the graph is still loading after {ENGINE_WAIT_S:.0f} s; try again shortly"
            )
        if self._engine is None:
            raise EngineUnavailable(f"the graph failed to load: {self._error}")
        if semantic and not self._semantic_ready.wait(SEMANTIC_WAIT_S):
            log.warning(
                "embedding model still loading after %.0f s; answering without waiting", SEMANTIC_WAIT_S
            )
        return self._engine

    def conversation(self, conversation_id: str) -> tuple[threading.Lock, Conversation]:
        """The conversation under this key (created on first use) and the lock serialising its
        turns. The MCP server's keys carry their scope (``mcp_sessions.conversation_key``)."""
        from stackgraph.graph.conversation import Conversation

        return self.conversations.get_or_create(conversation_id, lambda: (threading.Lock(), Conversation()))

    def remember_answer(self, answer: Answer) -> str:
        """Cache an answer whose lists continue past the first page; returns its token."""
        token = secrets.token_urlsafe(9)
        self.answers.put(token, answer)
        return token
