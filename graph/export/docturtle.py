"""The Turtle file beside each entity page: the entity's own triples, blank nodes included.

Each file is the entity's concise bounded description (its triples, and those of the blank nodes
they reach: placements, stresses), so it is exactly what ``DESCRIBE`` on the endpoint returns.
The graph is read once, not once per entity.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

import rdflib
from rdflib import BNode, URIRef

from stackgraph.graph.store import PREFIXES


def turtle_files(graph: rdflib.Graph, pages: Iterable[tuple[str, str]]) -> dict[str, bytes]:
    """{path of the .ttl file: Turtle} for (entity IRI, page path) pairs."""
    by_subject: dict[rdflib.term.Node, list[tuple]] = defaultdict(list)
    for triple in graph:
        by_subject[triple[0]].append(triple)
    files = {}
    for iri, path in pages:
        out = rdflib.Graph()
        for prefix, namespace in PREFIXES.items():
            out.bind(prefix, namespace, override=True)
        stack: list[rdflib.term.Node] = [URIRef(iri)]
        seen: set[rdflib.term.Node] = set()
        while stack:
            node = stack.pop()
            if node in seen:
                continue
            seen.add(node)
            for triple in by_subject.get(node, ()):
                out.add(triple)
                if isinstance(triple[2], BNode):
                    stack.append(triple[2])
        files[path[: -len(".md")] + ".ttl"] = out.serialize(format="turtle", encoding="utf-8")
    return files


__all__ = ["turtle_files"]
