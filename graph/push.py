"""``stackgraph push``: fill a remote store with the graph in bulk, and leave a note of what was sent.

Sending a million triples as SPARQL ``INSERT DATA`` batches took longer than the 400 s the scale
bench allows; the same triples as one N-Triples document posted to the server's Graph Store
Protocol endpoint take about 8 s on Oxigraph. So push:

1. writes the graph as N-Triples with Oxigraph's own serializer into a temporary file (one triple
   per line, so progress is counted by newlines; no per-triple Python conversion);
2. posts that file, streamed in 1 MB pieces, to the store endpoint in ONE request, so blank nodes
   stay the same nodes throughout (the protocol gives every request its own blank nodes). On
   Oxigraph (``/update`` -> ``/store``) the request asks for the server's bulk loader
   (``no_transaction``: not atomic, what was loaded before a failure stays, as with batches);
3. falls back to ``INSERT DATA`` batches (graph/remote.py) where the server has no such endpoint
   (Virtuoso's ``/sparql``, or a 404/405/415 from the guessed one);
4. writes a *push manifest* (:data:`MANIFEST_GRAPH`, a named graph of its own, so the pushed graph
   is exactly the local one): the built-in graph's content hash, a fresh push id, and the built-in
   entities the user files add facts to. ``--store`` readers (graph/remote_catalog.py) use it to
   take the built-in part of the catalog from the local files instead of reading it from the store.
"""

from __future__ import annotations

import tempfile
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from urllib.parse import urlencode, urlsplit, urlunsplit

import rdflib

from stackgraph.graph.remote import (
    DEFAULT_BATCH,
    MANIFEST_GRAPH,
    RemoteStoreError,
    describe_error,
    manifest_subject,
    push_graph,
)
from stackgraph.graph.store import SG, builtin_files, builtin_hash, oxigraph_of

#: Bytes per piece of the streamed upload (each piece reports progress).
UPLOAD_PIECE = 1 << 20
#: Seconds the bulk upload may take (the server reads it as fast as it can load it).
UPLOAD_TIMEOUT = 1800
#: HTTP statuses that mean "no Graph Store endpoint here": fall back to INSERT DATA.
_NO_GSP = {400, 404, 405, 406, 415, 501}

Progress = Callable[[int, int], None]


def store_endpoint(update_url: str) -> str | None:
    """The Graph Store Protocol endpoint beside an update endpoint: Oxigraph serves ``/update``
    and ``/store`` side by side. None when the URL does not end in ``/update`` (Virtuoso)."""
    parts = urlsplit(update_url)
    if not parts.path.endswith("/update"):
        return None
    return urlunsplit(parts._replace(path=parts.path[: -len("update")] + "store", query=""))


def _dump_ntriples(graph: rdflib.Graph, out: Path) -> int:
    """Write ``graph`` as N-Triples to ``out``; return the number of triples.

    An embedded graph is dumped by Oxigraph itself (1.1M triples in about 2 s); any other rdflib
    graph by rdflib's serializer.
    """
    view = oxigraph_of(graph)
    if view is not None:
        import pyoxigraph as ox

        # A path, not a Python file: pyoxigraph then writes in Rust (2 s at 1.1M triples, not 20).
        view.store.dump(str(out), format=ox.RdfFormat.N_TRIPLES, from_graph=view.name)
    else:
        graph.serialize(destination=str(out), format="nt", encoding="utf-8")
    return _lines(out)


def _write_sources(sources: Sequence[Path], directory: Path) -> list[Path]:
    """Each source file as N-Triples in ``directory``, converted by Oxigraph's parser and
    serializer without a store: 3 s for the 100k-entity inventory, where dumping the cached
    on-disk store it was loaded into takes 13-16 s. Parsed as graph/userdata.load_file loads them
    (same format, base IRI, blank node labels kept), and sent as one document, so blank nodes
    are joined across files exactly as in the local store; named graphs go to the default graph."""
    import pyoxigraph as ox

    from stackgraph.graph.userdata import rdf_format

    written = []
    for number, path in enumerate(sources):
        fmt = rdf_format(Path(path))
        quads = ox.parse(path=str(path), format=fmt, base_iri=Path(path).resolve().as_uri())
        if fmt in (ox.RdfFormat.TRIG, ox.RdfFormat.N_QUADS, ox.RdfFormat.JSON_LD):
            quads = (ox.Quad(q.subject, q.predicate, q.object) for q in quads)
        out = directory / f"{number}.nt"
        ox.serialize(quads, output=str(out), format=ox.RdfFormat.N_TRIPLES)
        written.append(out)
    return written


def _lines(path: Path) -> int:
    with path.open("rb") as handle:
        return sum(piece.count(b"\n") for piece in iter(lambda: handle.read(UPLOAD_PIECE), b""))


def _pieces(paths: Sequence[Path], total: int, progress: Progress | None) -> Iterator[bytes]:
    """The files' bytes in pieces; progress in triples (lines: files may repeat a triple, which
    the store then holds once)."""
    sent = 0
    for path in paths:
        with path.open("rb") as handle:
            while piece := handle.read(UPLOAD_PIECE):
                yield piece
                sent += piece.count(b"\n")
                if progress is not None:
                    progress(min(total, sent), total)


def _post_files(url: str, paths: Sequence[Path], total: int, progress: Progress | None) -> None:
    """POST ``paths`` (N-Triples) to ``url`` as one streamed document. Raises urllib errors."""
    request = urllib.request.Request(
        url,
        data=_pieces(paths, total, progress),
        method="POST",
        headers={
            "Content-Type": "application/n-triples",
            "Content-Length": str(sum(path.stat().st_size for path in paths)),
        },
    )
    with urllib.request.urlopen(request, timeout=UPLOAD_TIMEOUT) as response:
        response.read()


def _touched_builtin_entities(graph: rdflib.Graph) -> list[str]:
    """Built-in subjects (IRIs) that ``graph`` has facts about which the built-in graph lacks: the
    records a ``--store`` reader must read from the store rather than from its local files."""
    view = oxigraph_of(graph)
    if view is None:
        return []
    import pyoxigraph as ox

    builtin = ox.Store()
    for path in builtin_files():
        builtin.bulk_load(path=str(path), format=ox.RdfFormat.TURTLE)
    # Only what the catalog holds matters: named subjects with a label. The store holds the
    # built-in graph whole, so a subject has user facts exactly when it has more triples. One
    # grouped count per store, in Rust: per-subject pattern calls on a cached on-disk store took 2.6 s.
    label = ox.NamedNode(str(rdflib.RDFS.label))
    subjects = sorted(
        {
            q.subject.value
            for q in builtin.quads_for_pattern(None, label, None, ox.DefaultGraph())
            if isinstance(q.subject, ox.NamedNode)
        }
    )
    query = (
        "SELECT ?s (COUNT(*) AS ?n) WHERE { VALUES ?s { "
        + " ".join(f"<{s}>" for s in subjects)
        + " } ?s ?p ?o } GROUP BY ?s"
    )

    def counts(store: ox.Store, **options: object) -> dict[str, int]:
        return {row["s"].value: int(row["n"].value) for row in store.query(query, **options)}

    before, after = counts(builtin), counts(view.store, **view.query_options)
    return sorted(s for s in subjects if after.get(s, 0) != before.get(s, 0))


def manifest_update(graph_iri: str | None, push_id: str, touched: list[str], keep_touched: bool) -> str:
    """The update that records a push: replaces the hash and id, and the touched entities unless
    ``keep_touched`` (a push without ``--clear`` adds to what an earlier push left)."""
    subject = f"<{manifest_subject(graph_iri)}>"
    drops = ["builtinHash", "pushId"] + ([] if keep_touched else ["touches"])
    parts = [f"DELETE WHERE {{ GRAPH <{MANIFEST_GRAPH}> {{ {subject} <{SG}{p}> ?o }} }}" for p in drops]
    facts = [
        f'{subject} <{SG}builtinHash> "{builtin_hash()}"',
        f'{subject} <{SG}pushId> "{push_id}"',
        *(f"{subject} <{SG}touches> <{iri}>" for iri in touched),
    ]
    parts.append(f"INSERT DATA {{ GRAPH <{MANIFEST_GRAPH}> {{\n" + " .\n".join(facts) + " .\n} }")
    return " ;\n".join(parts)


def _update(update_url: str, text: str) -> None:
    request = urllib.request.Request(
        update_url,
        data=urlencode({"update": text}).encode(),
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    )
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            response.read()
    except OSError as error:
        raise RemoteStoreError(update_url, describe_error(error)) from None


def push(
    graph: rdflib.Graph,
    update_url: str,
    graph_iri: str | None = None,
    clear: bool = False,
    batch_size: int | None = None,
    progress: Progress | None = None,
    notice: Callable[[str], None] | None = None,
    sources: Sequence[Path] | None = None,
) -> int:
    """Send every triple of ``graph`` to the store behind ``update_url``; return how many.

    Bulk (one Graph Store Protocol POST) where the server offers it, INSERT DATA batches otherwise
    or when ``batch_size`` is given; then the push manifest. Raises RemoteStoreError (one line).
    ``notice`` receives one-line remarks for the user (the fallback taken). ``sources``: the files
    ``graph`` was loaded from (the built-in Turtle first); the bulk upload then converts them
    instead of dumping the store.
    """
    push_id = uuid.uuid4().hex
    touched = _touched_builtin_entities(graph)
    gsp = store_endpoint(update_url) if batch_size is None else None
    sent: int | None = None
    if gsp is not None:
        if clear:
            _update(update_url, f"CLEAR SILENT GRAPH <{graph_iri}>" if graph_iri else "CLEAR SILENT DEFAULT")
        target = [("graph", graph_iri)] if graph_iri else [("default", "")]
        url = gsp + "?" + urlencode([*target, ("no_transaction", ""), ("lenient", "")])
        with tempfile.TemporaryDirectory(prefix="stackgraph-push-") as tmp:
            if sources is not None:  # (no len(graph): counting a cached on-disk store takes 20 s)
                files = _write_sources(sources, Path(tmp))
                total = sum(_lines(path) for path in files)
            else:
                files = [Path(tmp) / "graph.nt"]
                total = _dump_ntriples(graph, files[0])
            try:
                _post_files(url, files, total, progress)
                sent = total
            except urllib.error.HTTPError as error:
                if error.code not in _NO_GSP:
                    raise RemoteStoreError(gsp, describe_error(error)) from None
                if notice is not None:
                    notice(
                        f"{gsp} does not take bulk loads ({describe_error(error)}); sending INSERT DATA batches"
                    )
            except OSError as error:
                raise RemoteStoreError(gsp, describe_error(error)) from None
    if sent is None:
        sent = push_graph(
            graph, update_url, graph_iri, batch_size or DEFAULT_BATCH, clear and gsp is None, progress
        )
    _update(update_url, manifest_update(graph_iri, push_id, touched, keep_touched=not clear))
    return sent


__all__ = ["UPLOAD_PIECE", "manifest_update", "push", "store_endpoint"]
