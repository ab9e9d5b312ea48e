"""Corrupt caches (a power loss, a full disk, an editor) are rebuilt with one line, never a traceback."""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from stackgraph.graph import cachefiles
from stackgraph.graph.embeddings import EmbeddingIndex

PAIRS = [("kg:a", "alpha"), ("kg:b", "beta"), ("kg:c", "gamma")]


class _FakeEmbedder:
    """Deterministic 8-dimensional vectors: enough to write, read and compare an index."""

    model_id = "fake-8"
    dimension = 8

    def __init__(self) -> None:
        self.encoded = 0

    def encode(self, texts):
        self.encoded += len(texts)
        rows = [
            np.frombuffer((t * 8).encode()[:8].ljust(8, b"x"), dtype=np.uint8).astype(np.float32)
            for t in texts
        ]
        vectors = np.array(rows, dtype=np.float32).reshape(len(texts), 8)
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def _corrupt(path: Path, how: str) -> None:
    if how == "empty npz":
        path.write_bytes(b"")
    elif how == "null json":
        path.with_suffix(".json").write_text("null")
    elif how == "truncated json":
        path.with_suffix(".json").write_text('{"format": 1, "keys": [')
    elif how == "wrong dimension":
        meta = json.loads(path.with_suffix(".json").read_text())
        with path.open("wb") as handle:
            np.savez(handle, vectors=np.zeros((len(meta["keys"]), 5), np.float32), content_hash=np.array("h"))
    elif how == "pickled object":
        with path.open("wb") as handle:
            np.savez(handle, vectors=np.array([object()], dtype=object), content_hash=np.array("h"))


@pytest.mark.parametrize(
    "how", ["empty npz", "null json", "truncated json", "wrong dimension", "pickled object"]
)
def test_a_corrupt_embedding_index_is_rebuilt_with_one_line(tmp_path, capsys, how) -> None:
    embedder = _FakeEmbedder()
    built = EmbeddingIndex.load_or_build(PAIRS, "h", embedder, cache_dir=tmp_path)
    path = EmbeddingIndex.cache_path("h", embedder.model_id, tmp_path)
    capsys.readouterr()
    _corrupt(path, how)
    again = EmbeddingIndex.load_or_build(PAIRS, "h", embedder, cache_dir=tmp_path)
    err = capsys.readouterr().err
    assert embedder.encoded == 2 * len(PAIRS)  # rebuilt, not trusted
    assert err.count("\n") == 1 and "unusable" in err and "rebuilding" in err
    assert np.allclose(again.vectors, built.vectors) and again.keys == built.keys
    repaired = EmbeddingIndex.load_or_build(PAIRS, "h", embedder, cache_dir=tmp_path)
    assert repaired.keys == built.keys
    assert embedder.encoded == 2 * len(PAIRS)  # the rebuilt cache is good again


def test_atomic_writes_fsync_before_the_rename(tmp_path, monkeypatch) -> None:
    events: list[str] = []
    real_fsync, real_replace = os.fsync, os.replace
    monkeypatch.setattr(os, "fsync", lambda fd: (events.append("fsync"), real_fsync(fd))[1])
    monkeypatch.setattr(os, "replace", lambda a, b: (events.append("replace"), real_replace(a, b))[1])
    target = tmp_path / "sub" / "file.bin"
    cachefiles.write_bytes(target, b"data")
    assert target.read_bytes() == b"data"
    assert events[0] == "fsync" and "replace" in events and events.index("fsync") < events.index("replace")
    assert [p.name for p in target.parent.iterdir()] == ["file.bin"]  # no temporary left behind


def _ask(cache: Path, data: Path, question: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, STACKGRAPH_CACHE_DIR=str(cache), STACKGRAPH_DISK_STORE_MIN_BYTES="0")
    command = [sys.executable, "-m", "stackgraph.cli", "ask", "--data", str(data), question]
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)


@pytest.fixture
def inventory(tmp_path) -> Path:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
    from scale_inventory import write_inventory

    return write_inventory(30, tmp_path / "inventory.ttl")


class _Exploit:
    """Unpickling this would run a command: a restricted unpickler must refuse it."""

    def __reduce__(self):
        return (os.system, ("touch /tmp/stackgraph-pwned",))


_BAD_CATALOGS = {
    "empty": b"",
    "null": b"null",
    "torn": pickle.dumps({"cache": "catalog"})[:-3],
    "other content": pickle.dumps({"cache": "catalog", "format": 1, "content_hash": "other"})
    + pickle.dumps(({}, {})),
    "code": pickle.dumps({"cache": "catalog", "format": 1, "content_hash": "h1"}) + pickle.dumps(_Exploit()),
}


@pytest.mark.parametrize("name", sorted(_BAD_CATALOGS))
def test_a_corrupt_catalog_cache_is_rebuilt(tmp_path, monkeypatch, capsys, name) -> None:
    content = _BAD_CATALOGS[name]
    from stackgraph.graph import catalog
    from stackgraph.graph.store import load_graph

    monkeypatch.setenv("STACKGRAPH_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(catalog, "CACHE_MIN_RECORDS", 0)
    graph = load_graph().graph
    built = catalog.load_catalog(graph, "h1")
    path = catalog._cache_path("h1")
    assert path.is_file()
    capsys.readouterr()
    assert catalog.load_catalog(graph, "h1").records == built.records  # read back whole
    assert capsys.readouterr().err == ""  # from the cache, not rebuilt
    path.write_bytes(content)
    capsys.readouterr()
    again = catalog.load_catalog(graph, "h1")
    err = capsys.readouterr().err
    assert again.records == built.records
    assert err.count("\n") == 1 and "catalog cache" in err and "rebuilding" in err
    assert not Path("/tmp/stackgraph-pwned").exists()


def test_an_incomplete_user_data_store_is_rebuilt(tmp_path, inventory) -> None:
    """A cached user-data store is used, then broken, then rebuilt with one line."""
    cache = tmp_path / "cache"
    (cache / "models").parent.mkdir(parents=True, exist_ok=True)
    models = cachefiles.cache_root() / "models"
    if models.exists():
        (cache / "models").symlink_to(models)  # the ONNX model is not what this test is about
    question = "where does GPU gpu-000000 fit?"
    first = _ask(cache, inventory, question)
    assert first.returncode == 0, first.stderr
    stores = list((cache / "stores").iterdir())
    assert len(stores) == 1 and (stores[0] / "stackgraph-complete").is_file()
    (stores[0] / "stackgraph-complete").unlink()  # as if the build had been killed half-way
    second = _ask(cache, inventory, question)
    assert second.returncode == 0 and second.stdout == first.stdout
    # One line about the cache (a slow machine may also say it is saving the store again).
    lines = [line for line in second.stderr.splitlines() if "saving the store" not in line]
    assert len(lines) == 1 and "incomplete; rebuilding it" in lines[0]
    assert (stores[0] / "stackgraph-complete").is_file()


def test_pickled_caches_round_trip_nested_containers(tmp_path) -> None:
    """Two pickles in one file, each read by its own unpickler (shared memo numbering broke sets)."""
    payload = ({"a": {"x", "y"}, "b": {"x"}}, {"a": {"y"}}, {"k": 1})
    path = tmp_path / "t.pickle"
    cachefiles.write_pickle(path, {"format": 1}, payload)
    assert cachefiles.read_pickle(path, {"format": 1}) == payload
    with pytest.raises(ValueError):
        cachefiles.read_pickle(path, {"format": 2})


def test_reading_a_cache_leaves_the_garbage_collector_as_it_was(tmp_path) -> None:
    """Caches are read with the collector paused (graph/cachefiles.py); a read that fails must
    still turn it back on, and one made while it was off must not turn it on."""
    import gc

    path = tmp_path / "t.pickle"
    cachefiles.write_pickle(path, {"format": 1}, {"k": {1, 2}})
    assert gc.isenabled()
    with pytest.raises(ValueError):
        cachefiles.read_pickle(path, {"format": 2})
    assert gc.isenabled()
    path.write_bytes(b"\x80\x05torn")
    with pytest.raises(ValueError):
        cachefiles.read_pickle(path, {"format": 1})
    assert gc.isenabled()
    gc.disable()
    try:
        cachefiles.write_pickle(path, {"format": 1}, {"k": {1, 2}})
        assert cachefiles.read_pickle(path, {"format": 1}) == {"k": {1, 2}}
        assert not gc.isenabled()
    finally:
        gc.enable()


@pytest.mark.parametrize("chunk", [2, 0])
@pytest.mark.parametrize("labelled", [False, True])
def test_persisted_store_keeps_blank_nodes_whole(tmp_path, monkeypatch, chunk, labelled) -> None:
    """The on-disk copy of a store, in chunks smaller than one blank node's quads or in one piece,
    holds the same graph: every placement still joins its entity to its layer. When a blank node
    has a label (it may be an entity, which caches name), the copy keeps its name too."""
    import pyoxigraph as ox
    import rdflib
    from oxrdflib._converter import from_ox
    from rdflib.compare import isomorphic

    from stackgraph.graph import userstore

    monkeypatch.setattr(userstore, "PERSIST_CHUNK", chunk)
    store = ox.Store()
    store.load(
        b"@prefix e: <http://e/> . "
        b"e:a e:placement [ e:layer e:L1 ; e:role 'x' ] , [ e:layer e:L2 ; e:role 'y' ] . "
        b"e:b e:placement [ e:layer e:L3 ] . e:b e:shared _:n . e:a e:shared _:n . _:n e:v 1 . "
        b"e:c e:note 'not a blank node: _:x' ."
        + (b" _:n <http://www.w3.org/2000/01/rdf-schema#label> 'n' ." if labelled else b""),
        format=ox.RdfFormat.TURTLE,
    )
    userstore._persist(store, tmp_path / "stores" / "copy")
    disk = ox.Store.read_only(str(tmp_path / "stores" / "copy"))
    query = (
        "SELECT ?e ?l ?r ?v WHERE { { ?e <http://e/placement> ?p . ?p <http://e/layer> ?l "
        "OPTIONAL { ?p <http://e/role> ?r } } UNION { ?e <http://e/shared> ?n . ?n <http://e/v> ?v } }"
    )

    def rows(s: ox.Store) -> list[tuple]:
        return sorted(tuple(str(sol[v]) for v in ("e", "l", "r", "v")) for sol in s.query(query))

    def graph(s: ox.Store) -> rdflib.Graph:
        g = rdflib.Graph()
        for q in s:
            g.add((from_ox(q.subject), from_ox(q.predicate), from_ox(q.object)))
        return g

    assert len(disk) == len(store) == 12 + labelled
    assert rows(disk) == rows(store) and len(rows(store)) == 5
    assert isomorphic(graph(disk), graph(store))
    blanks = {str(q.subject) for s in (store, disk) for q in s if isinstance(q.subject, ox.BlankNode)}
    assert len(blanks) == (4 if labelled else 8)  # the same four nodes, or four renamed


@pytest.mark.parametrize("breakage", ["shapes", "seed citation"])
def test_a_first_start_that_fails_its_checks_answers_nothing_and_caches_no_store(
    tmp_path, inventory, breakage
) -> None:
    """On a first start the checks run while the catalog is built (graph/userstore.py); data
    that fails them still ends in one line and a non-zero exit, with no answer and no store."""
    text = inventory.read_text()
    if breakage == "shapes":
        text += 'inv:gpu-0 rdfs:label "a second label" .\n'
    else:
        text += "inv:gpu-0 dct:source kg:doc-004-s12 .\n"
    bad = tmp_path / "bad.ttl"
    bad.write_text(text)
    cache = tmp_path / "cache"
    done = _ask(cache, bad, "where does GPU gpu-000000 fit?")
    assert done.returncode != 0 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("stackgraph: error:"), done.stderr
    assert ("does not conform" if breakage == "shapes" else "built-in seed") in done.stderr
    assert not (cache / "stores").exists() or not any((cache / "stores").iterdir())


def test_cache_writes_held_back_run_once_released_and_then_at_once() -> None:
    """`stackgraph ask` holds its cache writes until the first answer is out (the user waits for
    the answer, not the pickles); held writes all run on release, later ones at once."""
    from stackgraph.graph.cachefiles import defer_writes, write_deferred, write_later

    done: list[str] = []
    write_later(lambda: done.append("now"))
    assert done == ["now"]
    defer_writes()
    write_later(lambda: done.append("catalog"))
    write_later(lambda: done.append("names"))
    assert done == ["now"]
    write_deferred()
    assert done == ["now", "catalog", "names"]
    write_later(lambda: done.append("after"))
    assert done == ["now", "catalog", "names", "after"]
