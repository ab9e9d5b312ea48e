"""The subgraph around some entities: what every export format starts from.

Entities within ``depth`` hops of the seeds, in both directions, are selected breadth first. A hop
is a direct edge between two entities or a qualified one through a blank node (a placement, a
stress), which counts as one hop, like the shortcut it qualifies. The subgraph is then the induced
graph on those entities, plus:

* every literal of every selected entity (definitions, assumptions, commands);
* every blank node hanging off a selected entity, followed completely, so that a placement keeps
  its layer, role, basis and source even when the layer itself was not selected;
* the labels and types of every other node mentioned (classes, source sections with their
  document's title, short name and file name, stress levels, layers seen only through a blank node).

The number of entities is capped (``max_nodes``); the seeds always stay, the nearest and best
connected entities come first, and what the cap left out is recorded so renderers can say so.
Everything is sorted, so the same graph always gives the same subgraph.
"""

from __future__ import annotations

import difflib
import re
import weakref
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import rdflib
from rdflib import BNode, Literal, URIRef
from rdflib.namespace import OWL, RDF, RDFS, XSD

from stackgraph.graph.catalog import PREFIX_DECL, Catalog
from stackgraph.graph.export.errors import ExportError
from stackgraph.graph.export.vocab import NON_RELATIONS, QUALIFIED, Vocab, is_qualified, vocab_for
from stackgraph.graph.store import PREFIXES

#: Hops followed when the caller does not say.
DEFAULT_DEPTH = 1
#: Deeper than this reaches most of the graph from any entity and helps nobody.
MAX_DEPTH = 4
#: Entities in one export when the caller does not say: what a diagram can still show legibly.
DEFAULT_MAX_NODES = 50
#: The largest cap a caller may ask for (the whole graph is a few hundred entities).
HARD_MAX_NODES = 2000

_NEIGHBOUR_QUERY = """
SELECT DISTINCT ?n ?p ?m WHERE {
  VALUES ?n { %s }
  %s
  { ?n ?p ?m }
  UNION { ?m ?p ?n }
  UNION { ?n ?p ?b . FILTER(isBlank(?b) || ?p IN (<https://w3id.org/stackgraph/ns#placement>, <https://w3id.org/stackgraph/ns#stress>)) ?b ?q ?m }
  UNION { ?m ?p ?b . FILTER(isBlank(?b) || ?p IN (<https://w3id.org/stackgraph/ns#placement>, <https://w3id.org/stackgraph/ns#stress>)) ?b ?q ?n }
  FILTER(isIRI(?m))
}
"""

# A SELECT rather than a CONSTRUCT: rdflib copies a CONSTRUCT result into a new graph triple by
# triple, which costs more than the query. UNION branches (not OPTIONAL) so that the blank-node
# patterns always join on a bound ?o.
_TRIPLES_QUERY = """
SELECT ?s ?p ?o ?q ?v ?r ?w WHERE {
  VALUES ?s { %s }
  { ?s ?p ?o %s }
  UNION { ?s ?p ?o . FILTER(isBlank(?o) || ?p IN (<https://w3id.org/stackgraph/ns#placement>, <https://w3id.org/stackgraph/ns#stress>)) ?o ?q ?v }
  UNION { ?s ?p ?o . FILTER(isBlank(?o) || ?p IN (<https://w3id.org/stackgraph/ns#placement>, <https://w3id.org/stackgraph/ns#stress>)) ?o ?q ?v . FILTER(isBlank(?v)) ?v ?r ?w }
}
"""
# Diagrams need the relations only: skip literals and the labels of leaves (much less to copy).
_RELATIONS_ONLY = ". FILTER(!isLiteral(?o))"

_LEAF_QUERY = (
    PREFIX_DECL
    + """
CONSTRUCT {
  ?x rdfs:label ?label . ?x a ?type . ?x sg:code ?code .
  ?x dct:isPartOf ?doc . ?doc a ?docType ; rdfs:label ?docLabel ; sg:fileName ?file .
  ?doc dct:title ?title ; sg:shortName ?short .
} WHERE {
  VALUES ?x { %s }
  { ?x rdfs:label ?label }
  UNION { ?x a ?type }
  UNION { ?x sg:code ?code }
  UNION { ?x dct:isPartOf ?doc . ?doc a ?docType ; rdfs:label ?docLabel ; sg:fileName ?file }
  UNION { ?x dct:isPartOf ?doc . ?doc dct:title ?title }
  UNION { ?x dct:isPartOf ?doc . ?doc sg:shortName ?short }
}
"""
)

_CLASS_TYPES = frozenset({OWL.Class, RDFS.Class, OWL.ObjectProperty, OWL.DatatypeProperty, RDF.Property})
_BAD_IRI_CHARS = re.compile(r'[\s<>"{}|^`\\]')


@dataclass(frozen=True)
class Subgraph:
    """A subgraph and how it was cut. ``graph`` is an in-memory rdflib Graph owned by the caller."""

    graph: rdflib.Graph
    #: The entities asked for, in the order given.
    seeds: tuple[str, ...]
    #: Every selected entity: seeds first, then by distance, connectivity and label.
    nodes: tuple[str, ...]
    #: Hops from the nearest seed, for every selected entity.
    distance: Mapping[str, int]
    #: Entities within reach that the cap left out (all at ``cut_at`` hops), in priority order.
    omitted: tuple[str, ...] = ()
    #: The distance at which the cap was hit (entities further out were not explored), or None.
    cut_at: int | None = None
    depth: int = DEFAULT_DEPTH
    max_nodes: int = DEFAULT_MAX_NODES
    #: The predicates the walk was limited to (IRIs), or None for all.
    predicates: tuple[str, ...] | None = None
    #: Free-form provenance of a subgraph not made by walking (a SPARQL CONSTRUCT).
    origin: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))

    @property
    def truncated(self) -> bool:
        return bool(self.omitted)


def subgraph(
    source: Any,
    iris: Iterable[str],
    depth: int = DEFAULT_DEPTH,
    predicates: Sequence[str] | None = None,
    max_nodes: int = DEFAULT_MAX_NODES,
    catalog: Catalog | None = None,
) -> rdflib.Graph:
    """The subgraph around ``iris`` as an rdflib Graph (see :func:`extract` for the details)."""
    return extract(source, iris, depth, predicates, max_nodes, catalog).graph


def extract(
    source: Any,
    iris: Iterable[str],
    depth: int = DEFAULT_DEPTH,
    predicates: Sequence[str] | None = None,
    max_nodes: int = DEFAULT_MAX_NODES,
    catalog: Catalog | None = None,
    relations_only: bool = False,
) -> Subgraph:
    """Select and collect the subgraph around ``iris``.

    ``source`` is an Engine (its graph and catalog are used) or an rdflib Graph (then pass its
    ``catalog`` or one is built). ``predicates`` limits the hops to these predicates (IRIs,
    prefixed names such as ``sg:fitsIn`` or labels such as "fits in"); asking for ``sg:fitsIn``
    or ``sg:stresses`` also follows their qualified forms (placements, stresses).
    ``relations_only`` leaves out the selected entities' literals and the descriptions of other
    nodes: enough for a diagram, several times faster, not for an RDF export. Raises ExportError
    for a bad depth, cap, IRI or predicate.
    """
    graph, catalog = graph_and_catalog(source, catalog)
    vocab = vocab_for(catalog)
    seeds = _check_seeds(iris)
    depth = check_depth(depth)
    max_nodes = check_max_nodes(max_nodes)
    allowed = resolve_predicates(vocab, predicates) if predicates else None

    distance: dict[str, int] = {seed: 0 for seed in seeds}
    order = list(seeds)
    frontier = list(seeds)
    omitted: list[str] = []
    cut_at: int | None = None
    for hop in range(1, depth + 1):
        if not frontier:
            break
        links: dict[str, set[str]] = {}
        only = f"VALUES ?p {{ {_values(allowed)} }}" if allowed else ""
        for row in graph.query(_NEIGHBOUR_QUERY % (_values(frontier), only)):
            near, pred, far = str(row.n), row.p, str(row.m)
            if far in distance or far not in catalog or not _follows(pred, allowed):
                continue
            links.setdefault(far, set()).add(near)
        ranked = sorted(links, key=lambda iri: (-len(links[iri]), catalog.label(iri).casefold(), iri))
        room = max(0, max_nodes - len(order))
        taken, rest = ranked[:room], ranked[room:]
        for iri in taken:
            distance[iri] = hop
        order.extend(taken)
        frontier = taken
        if rest:
            omitted, cut_at = rest, hop
            break

    out = _collect(graph, catalog, order, allowed, relations_only)
    return Subgraph(
        graph=out,
        seeds=tuple(seeds),
        nodes=tuple(order),
        distance=MappingProxyType(distance),
        omitted=tuple(omitted),
        cut_at=cut_at,
        depth=depth,
        max_nodes=max_nodes,
        predicates=tuple(sorted(allowed)) if allowed is not None else None,
    )


# ---------------------------------------------------------------------- collecting triples


def _collect(
    graph: rdflib.Graph,
    catalog: Catalog,
    nodes: list[str],
    allowed: frozenset[str] | None,
    relations_only: bool = False,
) -> rdflib.Graph:
    nodeset = {URIRef(n) for n in nodes}
    query = _TRIPLES_QUERY % (_values(nodes), _RELATIONS_ONLY if relations_only else "")
    direct: set[tuple] = set()
    around: dict[BNode, set[tuple]] = {}  # blank node -> its (predicate, object) pairs
    for row in graph.query(query):
        direct.add((row.s, row.p, row.o))
        if row.q is not None:
            around.setdefault(row.o, set()).add((row.q, row.v))
        if row.r is not None:
            around.setdefault(row.v, set()).add((row.r, row.w))
    out = new_memory_graph()
    keep_bnodes: list[rdflib.term.Node] = []  # qualified nodes: blank, or named (placements, stresses)
    for s, p, o in direct:
        if s not in nodeset:
            continue
        if isinstance(o, Literal):
            out.add((s, p, plain(o)))
        elif is_qualified(p, o):
            if _follows(p, allowed):
                out.add((s, p, o))
                keep_bnodes.append(o)
        elif o in nodeset:
            if p in NON_RELATIONS or _follows(p, allowed):
                out.add((s, p, o))
        elif str(o) not in catalog:
            out.add((s, p, o))  # a class, a source section, a stress level: a leaf
    seen: set[rdflib.term.Node] = set()
    while keep_bnodes:
        bnode = keep_bnodes.pop()
        if bnode in seen:
            continue
        seen.add(bnode)
        for p, o in around.get(bnode, ()):
            out.add((bnode, p, plain(o)))
            if isinstance(o, BNode):
                keep_bnodes.append(o)
    leaves = {o for o in out.objects() if isinstance(o, URIRef) and o not in nodeset and o not in seen}
    if leaves and not relations_only:
        described = graph.query(_LEAF_QUERY % _values(str(x) for x in leaves)).graph
        classes = set(out.objects(None, RDF.type))
        for s, p, o in described or ():
            if p == RDF.type and (s in classes or o in _CLASS_TYPES):
                continue
            out.add((s, p, plain(o)))
    return out


def plain(term: rdflib.term.Node) -> rdflib.term.Node:
    """``"x"`` for ``"x"^^xsd:string``: the same RDF 1.1 term, which the Oxigraph store always types
    explicitly; plain literals keep Turtle readable and the graph comparable with parsed files."""
    if isinstance(term, Literal) and term.datatype == XSD.string:
        return Literal(str(term))
    return term


def new_memory_graph() -> rdflib.Graph:
    """An in-memory graph with the project's prefixes: exports are small and read per triple."""
    out = rdflib.Graph()
    for prefix, iri in PREFIXES.items():
        out.bind(prefix, iri, override=True)
    return out


# ---------------------------------------------------------------------- arguments


def graph_and_catalog(source: Any, catalog: Catalog | None = None) -> tuple[rdflib.Graph, Catalog]:
    """(graph, catalog) from an Engine or a Graph (building a catalog when none is given)."""
    if isinstance(source, rdflib.Graph):
        return source, catalog if catalog is not None else Catalog(source)
    return source.graph, catalog if catalog is not None else source.catalog


def check_depth(depth: int) -> int:
    if not isinstance(depth, int) or isinstance(depth, bool) or not 0 <= depth <= MAX_DEPTH:
        raise ExportError(f"depth must be an integer from 0 to {MAX_DEPTH}, not {depth!r}")
    return depth


def check_max_nodes(max_nodes: int) -> int:
    if not isinstance(max_nodes, int) or isinstance(max_nodes, bool) or not 1 <= max_nodes <= HARD_MAX_NODES:
        raise ExportError(f"max nodes must be an integer from 1 to {HARD_MAX_NODES}, not {max_nodes!r}")
    return max_nodes


def _check_seeds(iris: Iterable[str]) -> list[str]:
    seeds: list[str] = []
    for iri in iris:
        iri = str(iri)
        if not iri or _BAD_IRI_CHARS.search(iri) or ":" not in iri:
            raise ExportError(f"not an IRI: {iri!r}")
        if iri not in seeds:
            seeds.append(iri)
    if not seeds:
        raise ExportError("nothing to export: give at least one entity")
    return seeds


def _values(iris: Iterable[str]) -> str:
    return " ".join(f"<{iri}>" for iri in sorted(set(iris)))


def _follows(predicate: rdflib.term.Node, allowed: frozenset[str] | None) -> bool:
    if predicate in NON_RELATIONS:
        return False
    return allowed is None or str(predicate) in allowed


def resolve_predicates(vocab: Vocab, names: Iterable[str]) -> frozenset[str]:
    """Predicate IRIs for names given as IRIs, prefixed names, local names or labels.

    Raises ExportError naming the closest known predicates for a name that matches none.
    """
    by_name = _predicate_names(vocab)
    chosen: set[str] = set()
    for name in names:
        key = name.strip().strip("<>").casefold()
        if key not in by_name:
            close = difflib.get_close_matches(key, sorted(by_name), n=3, cutoff=0.6)
            hint = f"; closest: {', '.join(close)}" if close else ""
            raise ExportError(f"unknown predicate {name!r}{hint}")
        chosen |= by_name[key]
    for qualified, shortcut in QUALIFIED.items():
        if str(shortcut) in chosen:
            chosen.add(str(qualified))
    return frozenset(chosen)


_NAME_CACHE: weakref.WeakKeyDictionary[Vocab, dict[str, set[str]]] = weakref.WeakKeyDictionary()


def _predicate_names(vocab: Vocab) -> dict[str, set[str]]:
    """Every way of naming each predicate (IRI, prefixed, local name, label), folded: built once."""
    cached = _NAME_CACHE.get(vocab)
    if cached is None:
        cached = {}
        for iri in set(vocab.used_predicates) | set(vocab.predicate_labels):
            forms = {iri, _curie(iri), iri.rsplit("#", 1)[-1].rsplit("/", 1)[-1], vocab.predicate_label(iri)}
            for form in forms:
                cached.setdefault(form.casefold(), set()).add(iri)
        _NAME_CACHE[vocab] = cached
    return cached


def _curie(iri: str) -> str:
    for prefix, base in PREFIXES.items():
        if iri.startswith(base):
            return f"{prefix}:{iri[len(base) :]}"
    return iri
