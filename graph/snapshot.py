"""A graph handed to query workers: dumped once to an N-Triples file, loaded once per worker.

A worker is a separate process started by the forkserver (graph/worker_pool.py), so it does not
share the server's memory. The parent writes its Oxigraph store's triples to a private temporary
file (Oxigraph's own dump: about a second per million triples) and the worker bulk-loads it into
an in-memory store the first time a query names that snapshot. A snapshot is remade when the
graph's size changes; the files are removed when the process exits.
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
import threading
import uuid
import weakref
from dataclasses import dataclass
from pathlib import Path

import rdflib

from stackgraph.graph.store import oxigraph_of


@dataclass(frozen=True)
class Snapshot:
    """What a worker needs to rebuild the graph: the file, and the prefixes bound on the graph."""

    token: str
    path: str
    namespaces: tuple[tuple[str, str], ...]


_LOCK = threading.Lock()
_MADE: weakref.WeakKeyDictionary[rdflib.Graph, tuple[int, Snapshot]] = weakref.WeakKeyDictionary()
_DIRECTORY: list[Path] = []


def _directory() -> Path:
    if not _DIRECTORY:
        path = Path(tempfile.mkdtemp(prefix="stackgraph-snapshots-"))
        atexit.register(shutil.rmtree, path, True)
        _DIRECTORY.append(path)
    return _DIRECTORY[0]


def can_snapshot(graph: rdflib.Graph) -> bool:
    """Only graphs on the embedded Oxigraph store (every graph the project builds) can be dumped."""
    return oxigraph_of(graph) is not None


def snapshot_of(graph: rdflib.Graph) -> Snapshot:
    """The current snapshot of ``graph``, written now if the graph is new or changed size."""
    import pyoxigraph as ox

    view = oxigraph_of(graph)
    if view is None:
        raise TypeError("only graphs on the embedded store can be snapshotted (see can_snapshot)")
    size = len(view.store)  # the whole store's quads: 0.1 ms, where len(graph) takes 20
    with _LOCK:
        made = _MADE.get(graph)
        if made is not None and made[0] == size:
            return made[1]
        token = uuid.uuid4().hex
        path = _directory() / f"{token}.nt"
        view.store.dump(str(path), format=ox.RdfFormat.N_TRIPLES, from_graph=view.name)
        namespaces = tuple((str(prefix), str(iri)) for prefix, iri in graph.namespaces())
        snapshot = Snapshot(token=token, path=str(path), namespaces=namespaces)
        if made is not None:
            Path(made[1].path).unlink(missing_ok=True)
        _MADE[graph] = (size, snapshot)
        return snapshot


# ---------------------------------------------------------------------------- in the worker

_LOADED: dict[str, rdflib.Graph] = {}


def load(snapshot: Snapshot) -> rdflib.Graph:
    """The graph of ``snapshot`` in this worker, loaded on first use (the last two are kept)."""
    graph = _LOADED.get(snapshot.token)
    if graph is not None:
        return graph
    import pyoxigraph as ox
    from oxrdflib import OxigraphStore
    from rdflib.graph import DATASET_DEFAULT_GRAPH_ID

    store = ox.Store()
    store.bulk_load(path=snapshot.path, format=ox.RdfFormat.N_TRIPLES)
    graph = rdflib.Graph(store=OxigraphStore(store=store), identifier=DATASET_DEFAULT_GRAPH_ID)
    for prefix, iri in snapshot.namespaces:
        graph.bind(prefix, iri, override=True, replace=True)
    while len(_LOADED) >= 2:
        _LOADED.pop(next(iter(_LOADED)))
    _LOADED[snapshot.token] = graph
    return graph


__all__ = ["Snapshot", "can_snapshot", "load", "snapshot_of"]
