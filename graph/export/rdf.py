"""RDF serialisations of a subgraph (Turtle, N-Triples, JSON-LD) that are byte-for-byte stable.

rdflib's serialisers follow the store's order and the store's blank node ids, which differ from
one load to the next. So blank nodes are first renamed canonically (rdflib.compare hashes each
one from its triples, then they are numbered b1, b2, ... in hash order) and triples are inserted
in sorted order; N-Triples lines are sorted outright. Two exports of the same graph are then
identical, and a docs repository that keeps them diffs cleanly.
"""

from __future__ import annotations

import json

import rdflib
from rdflib import BNode
from rdflib.compare import _TripleCanonicalizer

from stackgraph.graph.export.subgraph import new_memory_graph
from stackgraph.graph.store import PREFIXES


def canonical(graph: rdflib.Graph) -> rdflib.Graph:
    """A copy of ``graph`` with blank nodes b1, b2, ... assigned from their content, triples in
    sorted order, and only the project's prefixes that are used bound."""
    triples = sorted(_TripleCanonicalizer(graph).canonical_triples(), key=_triple_key)
    hashed = sorted({t for triple in triples for t in triple if isinstance(t, BNode)})
    renamed = {old: BNode(f"b{i}") for i, old in enumerate(hashed, start=1)}
    out = new_memory_graph()
    for s, p, o in triples:
        out.add((renamed.get(s, s), p, renamed.get(o, o)))
    return out


def _triple_key(triple: tuple) -> tuple:
    return tuple(
        (type(term).__name__, str(term), str(getattr(term, "datatype", "") or "")) for term in triple
    )


def to_turtle(graph: rdflib.Graph) -> str:
    return canonical(graph).serialize(format="turtle")


def to_ntriples(graph: rdflib.Graph) -> str:
    lines = canonical(graph).serialize(format="nt").splitlines()
    return "".join(f"{line}\n" for line in sorted(set(lines)) if line.strip())


def to_jsonld(graph: rdflib.Graph) -> str:
    """JSON-LD with the project's prefixes as the context, keys sorted."""
    text = canonical(graph).serialize(format="json-ld", context=dict(PREFIXES), auto_compact=True)
    data = json.loads(text)
    if isinstance(data.get("@graph"), list):
        data["@graph"].sort(key=lambda node: json.dumps(node, sort_keys=True, ensure_ascii=False))
    return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


SERIALIZERS = {"turtle": to_turtle, "ntriples": to_ntriples, "jsonld": to_jsonld}
