"""A remote SPARQL 1.1 triplestore as the graph: ``--store URL`` reads it, ``stackgraph push`` fills it.

Both go through plain SPARQL 1.1 protocol requests (rdflib's SPARQLStore for queries, SPARQL
Update and, where the server has it, the Graph Store Protocol for push), so any SPARQL 1.1 server
works; Oxigraph server and Virtuoso are the ones tested.

- ``--store`` takes the *query* endpoint (Oxigraph: ``http://host:7878/query``, Virtuoso:
  ``http://host:8890/sparql``). To read one named graph instead of the server's default graph, add
  the protocol's own parameter: ``http://host:7878/query?default-graph-uri=https://example.org/g``.
- ``push`` takes the *update* endpoint (Oxigraph: ``/update``; Virtuoso: ``/sparql`` after granting
  SPARQL_UPDATE). graph/push.py sends one bulk upload where the server takes it, else
  ``INSERT DATA`` in batches (:func:`push_graph` here). Blank nodes are only the same node within
  one request, so every group of triples joined by blank nodes travels in a single batch (as
  ``INSERT {...} WHERE {}``, the form Virtuoso accepts blank nodes in). Push then writes a
  manifest (:func:`read_manifest`) in a graph of its own.
- A store with a manifest for this installation's built-in graph is not read whole at start
  (graph/remote_catalog.py). Any other store's catalog is read whole as plain SELECTs fetched as
  CSV (:func:`select_csv`, 4x faster than rdflib's XML client at 100k entities), once per URL and
  triple count, and cached on disk.
- ``--data`` with ``--store`` is refused: the remote store is the whole graph, and silently mixing
  local files into some answers and not into others (SPARQL sent to the server would not see
  them) would be worse than an error. Push the files instead (``stackgraph push URL --data F``).
"""

from __future__ import annotations

import csv
import hashlib
import io
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import rdflib
from rdflib.plugins.stores.sparqlstore import SPARQLStore, SPARQLUpdateStore
from rdflib.term import BNode, Node

from stackgraph.graph.store import PREFIXES, DataFileError, LoadedGraph

#: Triples per INSERT DATA request; Virtuoso wants at most about 1,000.
DEFAULT_BATCH = 500

_COUNT_QUERY = "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }"

Triple = tuple[Node, Node, Node]


class RemoteStoreError(DataFileError):
    """The remote store cannot be used. A DataFileError, so every surface already reports it as one
    line ("URL: reason") the way it reports a bad ``--data`` file."""


def _reason(error: BaseException) -> str:
    """One line for the user. rdflib's connector hides urllib errors behind a ValueError ("You did
    something wrong..."), so look down the exception chain for the real one first."""
    link: BaseException | None = error
    while link is not None:
        if isinstance(link, urllib.error.URLError):
            error = link
            break
        link = link.__cause__ or link.__context__
    if isinstance(error, urllib.error.HTTPError):
        try:
            body = error.read().decode("utf-8", "replace").strip().splitlines()
        except Exception:  # the body is a courtesy; the status line is enough
            body = []
        return f"HTTP {error.code} {error.reason}" + (f": {body[0][:200]}" if body else "")
    if isinstance(error, urllib.error.URLError):
        return f"cannot reach the endpoint ({error.reason})"
    return " ".join(str(error).split())[:300] or type(error).__name__


def describe_error(error: BaseException) -> str:
    """The one-line reason a request to a remote store failed (for the SPARQL guard's messages)."""
    return _reason(error)


def split_store_url(url: str) -> tuple[str, str | None]:
    """(endpoint, default graph IRI): a ``default-graph-uri`` query parameter names the graph."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise RemoteStoreError(url, "the store must be an http(s) URL of a SPARQL query endpoint")
    params = parse_qsl(parts.query, keep_blank_values=True)
    graphs = [value for key, value in params if key == "default-graph-uri"]
    rest = urlencode([(key, value) for key, value in params if key != "default-graph-uri"])
    return urlunsplit(parts._replace(query=rest)), (graphs[0] if graphs else None)


class _Store(SPARQLStore):
    """rdflib's SPARQLStore with a fixed, weighted Accept header.

    rdflib builds ``Accept: application/sparql-results+xml, application/rdf+xml`` from a set, so the
    order changes from process to process; Virtuoso honours the order and, when RDF/XML comes
    first, answers a SELECT in RDF/XML (its result-set vocabulary), which rdflib then fails to read.
    """

    #: The graph read as the default graph (``default-graph-uri``), or None for the server's own.
    graph_iri: str | None = None

    def response_mime_types(self) -> str:
        return "application/sparql-results+xml, application/rdf+xml;q=0.9"


#: Seconds one bulk read (a catalog column) may take before the store counts as unusable.
SELECT_TIMEOUT = 120


def select_csv(graph: rdflib.Graph, query: str, dataset: bool = True) -> Iterator[list[str]]:
    """The rows of a SELECT on a remote store as strings, fetched as SPARQL CSV results.

    Why not rdflib's client: it asks for XML and builds an rdflib term per cell; for the catalog
    of a 1.1M-triple store (100k entities) that was most of a 54 s start. CSV is read by the csv
    module in C. CSV cannot tell an unbound cell from an empty string, so callers send only plain
    patterns that bind every variable. Raises RemoteStoreError (one line) when the store fails.
    """
    store = graph.store
    if not isinstance(store, _Store):
        raise TypeError("select_csv needs a graph made by remote_graph")
    params = [("query", query)]
    if store.graph_iri and dataset:  # without it the server's own dataset, named graphs included
        params.append(("default-graph-uri", store.graph_iri))
    request = urllib.request.Request(
        store.query_endpoint,
        data=urlencode(params).encode(),
        headers={"Accept": "text/csv", "Content-Type": "application/x-www-form-urlencoded"},
    )
    try:
        with urllib.request.urlopen(request, timeout=SELECT_TIMEOUT) as response:
            text = io.TextIOWrapper(response, encoding="utf-8", newline="")
            rows = csv.reader(text)
            next(rows, None)  # the header: the variables, in the order the query selects them
            yield from rows
    except (OSError, csv.Error, UnicodeDecodeError) as error:
        raise RemoteStoreError(store.query_endpoint, _reason(error)) from None


def remote_graph(store_url: str) -> rdflib.Graph:
    """An rdflib Graph whose every query goes to the endpoint (rdflib's SPARQLStore, XML results).

    Only the project's prefixes are bound (not rdflib's thirty defaults): rdflib sends every bound
    prefix as a PREFIX line with every query.
    """
    endpoint, graph_iri = split_store_url(store_url)
    store = _Store(query_endpoint=endpoint)
    store.graph_iri = graph_iri
    graph = rdflib.Graph(
        store=store, identifier=rdflib.URIRef(graph_iri) if graph_iri else None, bind_namespaces="none"
    )
    for prefix, iri in PREFIXES.items():
        store.bind(prefix, rdflib.URIRef(iri), override=True)
    return graph


def count_triples(graph: rdflib.Graph) -> int:
    return int(next(iter(graph.query(_COUNT_QUERY))).n)


# ---------------------------------------------------------------------------------- the manifest

#: The named graph where ``stackgraph push`` notes what it pushed (graph/push.py), apart from the
#: pushed graph itself so that the store holds exactly the local graph.
MANIFEST_GRAPH = "https://w3id.org/stackgraph/push"
_DEFAULT_TARGET = MANIFEST_GRAPH + "#default-graph"


def manifest_subject(graph_iri: str | None) -> str:
    """The manifest's node for one pushed graph (the named graph, or the default graph)."""
    return graph_iri or _DEFAULT_TARGET


@dataclass(frozen=True)
class PushManifest:
    """What the last ``stackgraph push`` into this graph recorded."""

    #: Content hash of the built-in Turtle that was pushed (graph.store.builtin_hash).
    builtin_hash: str
    #: A fresh id per push: the cheap fingerprint of the store's content (keys caches).
    push_id: str
    #: Built-in entities the pushed user files add facts to (their records are read remotely).
    touched: frozenset[str]


def read_manifest(graph: rdflib.Graph) -> PushManifest | None:
    """The push manifest for ``graph``'s target (None when nothing was pushed there by push, or
    the note is incomplete). One small query; raises RemoteStoreError when the store fails."""
    store = graph.store
    subject = manifest_subject(getattr(store, "graph_iri", None))
    query = f"SELECT ?p ?o WHERE {{ GRAPH <{MANIFEST_GRAPH}> {{ <{subject}> ?p ?o }} }}"
    values: dict[str, list[str]] = {}
    for predicate, value in select_csv(graph, query, dataset=False):
        values.setdefault(predicate.rsplit("#", 1)[-1], []).append(value)
    hashes, ids = values.get("builtinHash", []), values.get("pushId", [])
    if len(hashes) != 1 or len(ids) != 1:
        return None
    return PushManifest(hashes[0], ids[0], frozenset(values.get("touches", [])))


def open_remote(store_url: str, data_paths: list[Path]) -> LoadedGraph:
    """The graph behind ``--store URL``. Raises RemoteStoreError when it cannot be used.

    ``content_hash`` keys caches (the embedding index). After ``stackgraph push`` it hashes the URL
    and the push's id from the manifest (one small query; counting 1.1M triples takes 0.7 s on
    Oxigraph); otherwise the URL and the triple count, so a same-size edit on the server is not
    noticed until the count changes. Edits made to a pushed store by other means than push are
    not noticed either: push again.
    """
    if data_paths:
        raise RemoteStoreError(
            data_paths[0],
            f"--data cannot be combined with --store; load the file into the store first: "
            f"stackgraph push UPDATE_URL --data {data_paths[0]}",
        )
    graph = remote_graph(store_url)
    manifest = read_manifest(graph)
    if manifest is not None:
        key = f"push {manifest.push_id}"
    else:
        try:
            key = str(count_triples(graph))
        except Exception as error:  # urllib, parser and protocol errors all mean "not usable"
            raise RemoteStoreError(store_url, _reason(error)) from None
    digest = hashlib.sha256(f"{store_url}\n{key}".encode()).hexdigest()[:16]
    return LoadedGraph(
        graph=graph, content_hash=digest, data_files=[], store_url=store_url, push_manifest=manifest
    )


# ---------------------------------------------------------------------------------------- push


def batches(triples: Iterable[Triple], size: int = DEFAULT_BATCH) -> Iterator[list[Triple]]:
    """Split triples into batches of about ``size``, keeping blank-node-connected triples together
    (a batch may exceed ``size`` only to hold one such group whole)."""
    parent: dict[BNode, BNode] = {}

    def find(node: BNode) -> BNode:
        parent.setdefault(node, node)
        while parent[node] != node:
            parent[node] = parent[parent[node]]
            node = parent[node]
        return node

    plain: list[Triple] = []
    linked: list[Triple] = []
    for triple in triples:
        blanks = [term for term in (triple[0], triple[2]) if isinstance(term, BNode)]
        if not blanks:
            plain.append(triple)
            continue
        linked.append(triple)
        roots = [find(b) for b in blanks]
        for root in roots[1:]:
            parent[root] = roots[0]
    groups: dict[BNode, list[Triple]] = {}
    for triple in linked:
        blank = triple[0] if isinstance(triple[0], BNode) else triple[2]
        groups.setdefault(find(blank), []).append(triple)
    batch: list[Triple] = []
    for unit in [[t] for t in plain] + list(groups.values()):
        if batch and len(batch) + len(unit) > size:
            yield batch
            batch = []
        batch.extend(unit)
    if batch:
        yield batch


def insert_data(triples: Iterable[Triple], graph_iri: str | None = None) -> str:
    """One update request adding ``triples``, written in N-Triples syntax (SPARQL accepts it as is).

    ``INSERT DATA`` when there are no blank nodes; otherwise ``INSERT { ... } WHERE {}``, which the
    standard gives the same meaning (one solution, so each label is one fresh blank node) and which
    Virtuoso accepts, while it refuses blank nodes in ``INSERT DATA``.
    """
    triples = list(triples)
    body = "\n".join(f"{s.n3()} {p.n3()} {o.n3()} ." for s, p, o in triples)
    if graph_iri:
        body = f"GRAPH <{graph_iri}> {{\n{body}\n}}"
    if any(isinstance(s, BNode) or isinstance(o, BNode) for s, _, o in triples):
        return f"INSERT {{\n{body}\n}} WHERE {{}}"
    return f"INSERT DATA {{\n{body}\n}}"


def push_graph(
    graph: rdflib.Graph,
    update_url: str,
    graph_iri: str | None = None,
    batch_size: int = DEFAULT_BATCH,
    clear: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> int:
    """Send every triple of ``graph`` to a SPARQL 1.1 Update endpoint; return how many were sent.

    With ``clear``, the target graph (or the default graph) is emptied first, so pushing twice does
    not duplicate blank-node facts. Raises RemoteStoreError on the first failed request (what was
    sent before stays on the server: SPARQL Update has no cross-request transaction).
    """
    store = SPARQLUpdateStore(query_endpoint=update_url, update_endpoint=update_url, autocommit=True)
    triples = list(graph)
    total, sent = len(triples), 0

    def send(text: str) -> None:
        try:
            store.update(text)  # queryGraph None: rdflib adds no GRAPH block of its own
        except Exception as error:
            store.rollback()  # otherwise the failed edit is retried with the next request
            raise RemoteStoreError(update_url, _reason(error)) from None

    if clear:
        send(f"CLEAR SILENT GRAPH <{graph_iri}>" if graph_iri else "CLEAR SILENT DEFAULT")
    for batch in batches(triples, batch_size):
        send(insert_data(batch, graph_iri))
        sent += len(batch)
        if progress is not None:
            progress(sent, total)
    return sent


__all__ = [
    "DEFAULT_BATCH",
    "MANIFEST_GRAPH",
    "PushManifest",
    "manifest_subject",
    "read_manifest",
    "describe_error",
    "RemoteStoreError",
    "batches",
    "count_triples",
    "insert_data",
    "open_remote",
    "push_graph",
    "remote_graph",
    "select_csv",
    "split_store_url",
]
