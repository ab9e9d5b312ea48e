"""Paths between entities, with networkx: "how is GPUDirect Storage related to NVMe-oF?".

The entity graph (entities as nodes, their entity-to-entity edges, and qualified relations folded
into direct edges) is built once per engine. Layers are hubs that connect almost everything, so a
path through a layer costs more than a direct relation; the path returned is the cheapest.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import networkx as nx

from stackgraph.graph.answering.evidence import predicate_label
from stackgraph.graph.catalog import PREFIX_DECL
from stackgraph.graph.model import PathEdge
from stackgraph.graph.store import SG

if TYPE_CHECKING:
    from stackgraph.graph.engine import Engine

#: Edges that say nothing about how two things relate.
_SKIP = {
    "http://purl.org/dc/terms/source",
    "http://www.w3.org/1999/02/22-rdf-syntax-ns#type",
    "https://w3id.org/stackgraph/ns#inModel",
}
#: Cost of stepping through a layer node (a hub) instead of along a direct relation.
LAYER_COST = 3.0

_EDGES = (
    PREFIX_DECL
    + """SELECT ?s ?p ?o WHERE {
  { ?s ?p ?o . FILTER(isIRI(?o)) }
  UNION
  { ?s ?via ?b . ?b sg:layer ?o . FILTER(isBlank(?b) || ?via IN (sg:placement, sg:stress)) BIND(?via AS ?p) }
}"""
)


def entity_graph(engine: Engine) -> nx.MultiDiGraph:
    if engine.entity_graph is not None:
        return engine.entity_graph
    graph = nx.MultiDiGraph()
    records = engine.catalog.records
    edges = {(str(row.s), str(row.p), str(row.o)) for row in engine.graph.query(_EDGES)}
    # Sorted: the store's row order can differ between processes, and the order edges are added in
    # decides which of several equally short paths networkx finds (see ``_undirected``).
    for s, p, o in sorted(edges):
        if p in _SKIP or s not in records or o not in records or s == o:
            continue
        graph.add_edge(s, o, key=p, predicate=p)
    engine.entity_graph = graph
    return graph


def _undirected(graph: nx.MultiDiGraph) -> nx.MultiGraph:
    """The graph with directions dropped, built once, neighbours in a fixed order.

    ``to_undirected(as_view=True)`` iterates a node's neighbours as a set union, whose order
    changes with the process's hash seed; ties between equally short paths then went to a
    different path in each process. The same question should get the same path."""
    undirected = graph.graph.get("undirected")
    if undirected is None:
        undirected = nx.MultiGraph()
        undirected.add_nodes_from(sorted(graph.nodes))
        undirected.add_edges_from(sorted((u, v, k) for u, v, k in graph.edges(keys=True)))
        graph.graph["undirected"] = undirected
    return undirected


def _weight(engine: Engine, u: str, v: str) -> float:
    return LAYER_COST if engine.catalog.is_a(v, SG.Layer) or engine.catalog.is_a(u, SG.Layer) else 1.0


def _edge(engine: Engine, graph: nx.MultiDiGraph, u: str, v: str) -> PathEdge:
    if graph.has_edge(u, v):
        predicate = sorted(graph[u][v])[0]
        source, target = u, v
    else:
        predicate = sorted(graph[v][u])[0]
        source, target = v, u
    return PathEdge(
        source=engine.catalog.ref(source),
        predicate=predicate,
        predicate_label=predicate_label(engine, predicate),
        target=engine.catalog.ref(target),
    )


def shortest_path(engine: Engine, a: str, b: str, max_hops: int = 6) -> list[PathEdge]:
    """The cheapest undirected path from a to b as edges in their stored direction; [] if none."""
    graph = entity_graph(engine)
    if a not in graph or b not in graph:
        return []
    undirected = _undirected(graph)
    try:
        nodes = nx.shortest_path(undirected, a, b, weight=lambda u, v, _d: _weight(engine, u, v))
    except nx.NetworkXNoPath:
        return []
    if len(nodes) - 1 > max_hops:
        return []
    return [_edge(engine, graph, u, v) for u, v in zip(nodes, nodes[1:], strict=False)]


def distances(engine: Engine, iri: str, cutoff: int = 2) -> dict[str, int]:
    """Hops from ``iri`` to each entity within ``cutoff``, either direction; a layer is reached
    but not walked through (it is next to everything it holds)."""
    graph = entity_graph(engine)
    if iri not in graph:
        return {}
    undirected = _undirected(graph)
    found = {iri: 0}
    frontier = [iri]
    for hop in range(1, cutoff + 1):
        reached = []
        for node in frontier:
            if hop > 1 and engine.catalog.is_a(node, SG.Layer):
                continue
            for other in undirected.neighbors(node):
                if other not in found:
                    found[other] = hop
                    reached.append(other)
        frontier = reached
    return found


def neighborhood(engine: Engine, iri: str, depth: int = 1, limit: int = 50) -> tuple[list[PathEdge], int]:
    """Edges within ``depth`` hops (either direction), nearest first, stable order."""
    graph = entity_graph(engine)
    if iri not in graph:
        return [], 0
    undirected = _undirected(graph)
    distance = nx.single_source_shortest_path_length(undirected, iri, cutoff=max(1, depth))
    edges: list[tuple[int, str, str, str]] = []
    seen = set()
    for node, dist in distance.items():
        if dist >= depth + 1:
            continue
        for _, target, key in graph.out_edges(node, keys=True):
            if (
                target in distance
                and (node, key, target) not in seen
                and max(dist, distance[target]) <= depth
            ):
                seen.add((node, key, target))
                edges.append((min(dist, distance[target]), node, key, target))
        for source, _, key in graph.in_edges(node, keys=True):
            if (
                source in distance
                and (source, key, node) not in seen
                and max(dist, distance[source]) <= depth
            ):
                seen.add((source, key, node))
                edges.append((min(dist, distance[source]), source, key, node))
    edges.sort(
        key=lambda e: (e[0], engine.catalog.label(e[1]).lower(), e[2], engine.catalog.label(e[3]).lower())
    )
    page = [
        PathEdge(engine.catalog.ref(s), p, predicate_label(engine, p), engine.catalog.ref(o))
        for _, s, p, o in edges[:limit]
    ]
    return page, len(edges)
