"""A subgraph as a reader sees it: labelled nodes in families, labelled edges, a legend, a note.

Mermaid, DOT, GraphML and the Markdown page all draw from this one view, so they agree on what a
node is called ("L8 Node Interconnect"), what family it is drawn as, which edges are shown and how
they read. Qualified relations become one labelled edge ("fits in (scale-up interconnect)")
instead of a blank node, and replace the shortcut they qualify; symmetric relations are drawn
once; several relations between the same two entities share one edge.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass

import rdflib
from rdflib import Literal, URIRef
from rdflib.namespace import DCTERMS

from stackgraph.graph.catalog import Catalog
from stackgraph.graph.export.subgraph import Subgraph
from stackgraph.graph.export.vocab import NON_RELATIONS, QUALIFIED, Vocab, is_qualified, vocab_for
from stackgraph.graph.model import SourceRef
from stackgraph.graph.store import SG

#: Longest label drawn in a node or on an edge; longer ones end in an ellipsis.
MAX_LABEL = 70
#: Most entities a diagram draws: past about 20 a picture is a hairball at page width. The rest are
#: named in an "and N more" note (the RDF and Markdown exports still hold every entity).
DIAGRAM_MAX_NODES = 20
#: Relations that place an entity in a layer: a diagram draws the entity inside that layer's box.
LAYER_RELATIONS = frozenset(str(p) for p in (SG.fitsIn, SG.placement, SG.exampleOf, SG.ownedBy, SG.leadsTo))


@dataclass(frozen=True)
class Family:
    """How one class of entity is drawn, in every diagram language."""

    key: str
    label: str
    cls: str
    #: Mermaid shape delimiters around the quoted label.
    mermaid: tuple[str, str]
    #: Graphviz node shape.
    dot_shape: str
    fill: str
    stroke: str


# Most specific first: an entity is drawn as the first family it belongs to.
FAMILIES: tuple[Family, ...] = (
    Family("layer", "layer", str(SG.Layer), ("[[", "]]"), "box3d", "#dbeafe", "#1e40af"),
    Family("model", "layer model", str(SG.LayerModel), ("[(", ")]"), "cylinder", "#e0e7ff", "#3730a3"),
    Family("plane", "plane", str(SG.Plane), (">", "]"), "folder", "#ede9fe", "#5b21b6"),
    Family(
        "concern",
        "cross-cutting concern",
        str(SG.CrossCuttingConcern),
        ("[/", "\\]"),
        "trapezium",
        "#fae8ff",
        "#86198f",
    ),
    Family("workload", "workload", str(SG.Workload), ("([", "])"), "oval", "#dcfce7", "#166534"),
    Family("symptom", "symptom", str(SG.Symptom), ("{{", "}}"), "hexagon", "#fee2e2", "#991b1b"),
    Family("cause", "cause", str(SG.Cause), ("[/", "/]"), "parallelogram", "#ffedd5", "#9a3412"),
    Family("diagnostic", "diagnostic", str(SG.Diagnostic), ("[\\", "\\]"), "note", "#fef9c3", "#854d0e"),
    Family("triage", "triage step", str(SG.TriageStep), ("{", "}"), "diamond", "#fce7f3", "#9d174d"),
    Family("branch", "triage branch", str(SG.TriageBranch), ("(", ")"), "octagon", "#fdf2f8", "#9d174d"),
    Family("design", "design choice", str(SG.DesignChoice), ("[", "]"), "component", "#f1f5f9", "#334155"),
    Family("practice", "practice", str(SG.Practice), ("[", "]"), "tab", "#ecfccb", "#3f6212"),
    Family(
        "parameter",
        "configuration parameter",
        str(SG.ConfigurationParameter),
        ("[", "]"),
        "cds",
        "#e0f2fe",
        "#075985",
    ),
    Family("flow", "flow step", str(SG.FlowStep), ("[", "]"), "rarrow", "#f5f5f4", "#44403c"),
    Family("technology", "technology", str(SG.Technology), ("(", ")"), "ellipse", "#ffffff", "#0f766e"),
    Family("entity", "other", "", ("[", "]"), "box", "#ffffff", "#6b7280"),
)
FAMILY_BY_KEY = {f.key: f for f in FAMILIES}


@dataclass(frozen=True)
class NodeView:
    iri: str
    label: str
    family: str
    seed: bool


@dataclass(frozen=True)
class EdgeView:
    source: str
    target: str
    #: What the edge says, each relation once ("fits in (scale-up interconnect) · example of").
    label: str
    predicates: tuple[str, ...]


@dataclass(frozen=True)
class Cluster:
    """A layer drawn as a box around itself and the entities placed in it."""

    layer: str
    label: str
    #: IRIs drawn inside the box, the layer first.
    members: tuple[str, ...]


@dataclass(frozen=True)
class Diagram:
    title: str
    nodes: tuple[NodeView, ...]
    edges: tuple[EdgeView, ...]
    #: The families drawn, in legend order.
    families: tuple[Family, ...]
    #: What the size caps left out, as one sentence ("and 30 more entities ..."), or None.
    note: str | None
    #: Layers with the entities placed in them; a node is in at most one cluster.
    clusters: tuple[Cluster, ...] = ()


def shorten(text: str, limit: int = MAX_LABEL) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def family_of(catalog: Catalog, iri: str) -> Family:
    for family in FAMILIES:
        if family.cls and catalog.is_a(iri, family.cls):
            return family
    return FAMILY_BY_KEY["entity"]


def qualified_label(graph: rdflib.Graph, vocab: Vocab, predicate: URIRef, bnode: rdflib.term.Node) -> str:
    """ "fits in (scale-up interconnect)", "stresses (critical, reconstructed)": a qualified
    relation read as its shortcut plus its role or level, and its basis unless stated."""
    shortcut = QUALIFIED.get(predicate)
    name = vocab.predicate_label(shortcut if shortcut is not None else predicate)
    parts: list[str] = []
    for prop in (SG.role, SG.level):
        for value in sorted(graph.objects(bnode, prop), key=str):
            parts.append(str(value) if isinstance(value, Literal) else vocab.value_label(value))
    for basis in sorted(graph.objects(bnode, SG.basis), key=str):
        if basis != SG.stated:
            parts.append(vocab.value_label(basis))
    return f"{name} ({', '.join(parts)})" if parts else name


def qualified_target(graph: rdflib.Graph, bnode: rdflib.term.Node) -> URIRef | None:
    """The entity a qualified relation points at: its sg:layer, else its first other IRI object."""
    layer = graph.value(bnode, SG.layer)
    if isinstance(layer, URIRef):
        return layer
    for p, o in sorted(graph.predicate_objects(bnode), key=lambda po: (str(po[0]), str(po[1]))):
        if isinstance(o, URIRef) and p not in NON_RELATIONS and p not in (SG.basis, SG.level):
            return o
    return None


def relation_edges(sub: Subgraph, catalog: Catalog) -> list[tuple[str, str, str, str]]:
    """(source, predicate, target, label) for every relation between selected entities, with
    qualified relations read through their blank node and the shortcuts they qualify dropped."""
    graph, vocab = sub.graph, vocab_for(catalog)
    nodes = set(sub.nodes)
    qualified: list[tuple[str, str, str, str]] = []
    plain: list[tuple[str, str, str, str]] = []
    for s in sub.nodes:
        for p, o in graph.predicate_objects(URIRef(s)):
            if p in NON_RELATIONS or p == DCTERMS.source:
                continue
            if is_qualified(p, o):
                target = qualified_target(graph, o)
                if target is not None and str(target) in nodes:
                    qualified.append((s, str(p), str(target), qualified_label(graph, vocab, p, o)))
            elif isinstance(o, URIRef) and str(o) in nodes:
                plain.append((s, str(p), str(o), vocab.predicate_label(p)))
    shortcuts = {(s, str(QUALIFIED[URIRef(p)]), t) for s, p, t, _ in qualified if URIRef(p) in QUALIFIED}
    plain = [e for e in plain if (e[0], e[1], e[2]) not in shortcuts]
    present = {(s, p, t) for s, p, t, _ in plain}
    seen_symmetric: set[tuple[str, str, str]] = set()
    edges: list[tuple[str, str, str, str]] = []
    for s, p, t, label in sorted(set(qualified + plain)):
        inverse = vocab.inverse_of.get(p)
        if inverse is not None and (t, inverse, s) in present:
            continue  # the same fact read the other way round is drawn already
        if p in vocab.symmetric:
            a, b = sorted((s, t))
            if (a, p, b) in seen_symmetric:
                continue
            seen_symmetric.add((a, p, b))
            s, t = a, b
        edges.append((s, p, t, label))
    return edges


def _qualified_first(item: tuple[str, str]) -> tuple[bool, str]:
    label, predicate = item
    return (URIRef(predicate) not in QUALIFIED, label)


#: Longest edge label a picture draws (the full text stays in GraphML and in DOT tooltips).
MAX_EDGE_LABEL = 48


def _kinds(catalog: Catalog, iris: tuple[str, ...] | list[str], most: int = 4) -> str:
    """ "100 technology, 35 diagnostic, 20 practice, 15 cause, 26 other": the biggest kinds first."""
    kinds = sorted(
        Counter(family_of(catalog, iri).label for iri in iris).items(), key=lambda kv: (-kv[1], kv[0])
    )
    shown = [f"{n} {kind}" for kind, n in kinds[:most]]
    rest = sum(n for _, n in kinds[most:])
    return ", ".join(shown + ([f"{rest} other"] if rest else []))


def _note(sub: Subgraph, catalog: Catalog, undrawn: tuple[str, ...], max_nodes: int | None) -> str | None:
    """One sentence for everything left out: by the diagram's cap and by the subgraph's."""
    left_out = undrawn + sub.omitted
    if not left_out:
        return None
    noun = "entity" if len(left_out) == 1 else "entities"
    if not undrawn and sub.cut_at:  # only the export's cap: say how far out they are
        hops = "hop" if sub.cut_at == 1 else "hops"
        text = (
            f"and {len(left_out)} more {noun} {sub.cut_at} {hops} away left out ({_kinds(catalog, left_out)})"
        )
    else:
        text = f"and {len(left_out)} more {noun} not drawn ({_kinds(catalog, left_out)})"
    caps = [f"diagram cap {max_nodes} nodes"] if undrawn and max_nodes else []
    if sub.omitted:
        caps.append(f"cap {sub.max_nodes} nodes")
    if sub.cut_at is not None and sub.cut_at < sub.depth:
        caps.append(f"further hops up to depth {sub.depth} not explored")
    return text + ("; " + ", ".join(caps) if caps else "")


def clusters_of(nodes: tuple[NodeView, ...], edges: tuple[EdgeView, ...]) -> tuple[Cluster, ...]:
    """Each drawn layer with the drawn entities an edge in LAYER_RELATIONS places in it (an entity
    placed in several drawn layers goes with the first by label, so no node is drawn twice)."""
    layers = {n.iri: n for n in nodes if n.family == "layer"}
    home: dict[str, str] = {}
    for edge in sorted(edges, key=lambda e: (layers[e.target].label if e.target in layers else "", e.source)):
        if edge.target in layers and edge.source not in layers and LAYER_RELATIONS & set(edge.predicates):
            home.setdefault(edge.source, edge.target)
    members: dict[str, list[str]] = {layer: [layer] for layer in layers}
    for iri, layer in sorted(home.items()):
        members[layer].append(iri)
    return tuple(
        Cluster(layer=layer, label=layers[layer].label, members=tuple(found))
        for layer, found in sorted(members.items(), key=lambda kv: layers[kv[0]].label)
        if len(found) > 1
    )


def build(
    sub: Subgraph, catalog: Catalog, title: str | None = None, max_nodes: int | None = DIAGRAM_MAX_NODES
) -> Diagram:
    """The reader's view of a subgraph (every renderer's input).

    At most ``max_nodes`` entities are drawn (None: all), the first in the subgraph's own ranking
    (seeds, then nearest and best connected); the note says how many more there are.
    """
    seeds = set(sub.seeds)
    drawn = sub.nodes if max_nodes is None else sub.nodes[:max_nodes]
    undrawn = tuple(iri for iri in sub.nodes if iri not in set(drawn))
    kept = set(drawn)
    nodes = tuple(
        NodeView(
            iri=iri,
            label=shorten(catalog.display(iri)),
            family=family_of(catalog, iri).key,
            seed=iri in seeds,
        )
        for iri in sorted(drawn)
    )
    grouped: dict[tuple[str, str], list[tuple[str, str]]] = defaultdict(list)
    for s, p, t, label in relation_edges(sub, catalog):
        if s in kept and t in kept:
            grouped[(s, t)].append((label, p))
    edges = tuple(
        EdgeView(
            source=s,
            target=t,
            label=shorten(
                " · ".join(dict.fromkeys(label for label, _ in sorted(items, key=_qualified_first)))
            ),
            predicates=tuple(sorted({p for _, p in items})),
        )
        for (s, t), items in sorted(grouped.items())
    )
    present = {n.family for n in nodes}
    families = tuple(f for f in FAMILIES if f.key in present)
    if title is None:
        title = ", ".join(catalog.display(iri) for iri in sub.seeds) or "stackgraph"
    return Diagram(
        title=title,
        nodes=nodes,
        edges=edges,
        families=families,
        note=_note(sub, catalog, undrawn, max_nodes),
        clusters=clusters_of(nodes, edges),
    )


def sources_of_node(sub: Subgraph, catalog: Catalog, iri: str) -> list[SourceRef]:
    """The sources an entity cites, read from the subgraph (falls back to the catalog)."""
    vocab = vocab_for(catalog)
    refs = vocab.sources_of(sub.graph.objects(URIRef(iri), DCTERMS.source))
    rec = catalog.get(iri)
    return refs or (list(rec.sources) if rec else [])
