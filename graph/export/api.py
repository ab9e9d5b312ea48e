"""``export()``: the one function every surface (CLI, MCP, TUI) calls to export a subgraph.

Names are resolved by the engine (labels, alternative labels, IRIs, layer codes; an unknown name
raises UnknownEntity with the closest matches). A SPARQL CONSTRUCT or DESCRIBE runs through the
guarded runner (graph/sparql.py: time limit, row cap, no SERVICE or updates) instead.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from types import MappingProxyType
from typing import Any

from rdflib import URIRef
from rdflib.namespace import RDF

from stackgraph.graph.catalog import Catalog, local_name, normalize
from stackgraph.graph.export import dot, graphml, markdown, mermaid, rdf, view
from stackgraph.graph.export.errors import ExportError
from stackgraph.graph.export.subgraph import (
    DEFAULT_DEPTH,
    DEFAULT_MAX_NODES,
    Subgraph,
    check_max_nodes,
    extract,
    new_memory_graph,
    plain,
)

#: Every format, in the order help texts list them.
FORMATS = ("turtle", "ntriples", "jsonld", "graphml", "mermaid", "dot", "svg", "png", "markdown")
#: Formats whose output is bytes rather than text.
BINARY_FORMATS = frozenset({"png"})
#: Formats drawn from the reader's view only (no literals needed from the subgraph).
DIAGRAM_FORMATS = frozenset({"graphml", "mermaid", "dot", "svg", "png"})
#: Formats that need Graphviz ``dot`` installed.
GRAPHVIZ_FORMATS = frozenset({"svg", "png"})
ALIASES = {
    "ttl": "turtle",
    "nt": "ntriples",
    "n-triples": "ntriples",
    "json-ld": "jsonld",
    "json": "jsonld",
    "md": "markdown",
    "mmd": "mermaid",
    "gv": "dot",
    "graphviz": "dot",
}
EXTENSIONS = {
    "turtle": ".ttl",
    "ntriples": ".nt",
    "jsonld": ".jsonld",
    "graphml": ".graphml",
    "mermaid": ".mmd",
    "dot": ".dot",
    "svg": ".svg",
    "png": ".png",
    "markdown": ".md",
}
MEDIA_TYPES = {
    "turtle": "text/turtle",
    "ntriples": "application/n-triples",
    "jsonld": "application/ld+json",
    "graphml": "application/graphml+xml",
    "mermaid": "text/vnd.mermaid",
    "dot": "text/vnd.graphviz",
    "svg": "image/svg+xml",
    "png": "image/png",
    "markdown": "text/markdown",
}


def normalize_format(fmt: str) -> str:
    """The canonical name of a format ("ttl" -> "turtle"); ExportError for an unknown one."""
    key = str(fmt).strip().lower().lstrip(".")
    key = ALIASES.get(key, key)
    if key not in FORMATS:
        raise ExportError(f"unknown export format {fmt!r}; use one of {', '.join(FORMATS)}")
    return key


def format_for_path(path: str) -> str | None:
    """The format a file name's extension implies (``out.ttl`` -> "turtle"), or None (no or an
    unknown extension: callers should ask for ``--format`` rather than guess)."""
    suffix = path.rsplit(".", 1)[-1].lower() if "." in path else ""
    for fmt, ext in EXTENSIONS.items():
        if ext == f".{suffix}":
            return fmt
    return ALIASES.get(suffix)


def export(
    engine: Any,
    names_or_iris: Sequence[str] = (),
    fmt: str = "turtle",
    depth: int = DEFAULT_DEPTH,
    predicates: Sequence[str] | None = None,
    sparql: str | None = None,
    max_nodes: int = DEFAULT_MAX_NODES,
) -> str | bytes:
    """Export the subgraph around ``names_or_iris`` (or the result of a ``sparql`` CONSTRUCT) in
    ``fmt`` (see FORMATS); bytes for PNG, text for the rest.

    Raises UnknownEntity (a name matching nothing, with suggestions), ExportError (bad format,
    depth, cap or predicate; RendererMissing when svg/png need Graphviz and it is absent) and, for
    ``sparql``, stackgraph.graph.sparql.QueryError.
    """
    fmt = normalize_format(fmt)
    sub = collect(
        engine, names_or_iris, depth, predicates, sparql, max_nodes, relations_only=fmt in DIAGRAM_FORMATS
    )
    return render(sub, engine.catalog, fmt)


def collect(
    engine: Any,
    names_or_iris: Sequence[str] = (),
    depth: int = DEFAULT_DEPTH,
    predicates: Sequence[str] | None = None,
    sparql: str | None = None,
    max_nodes: int = DEFAULT_MAX_NODES,
    relations_only: bool = False,
) -> Subgraph:
    """The subgraph :func:`export` renders, for callers that also want to know what was cut.
    ``relations_only`` is enough (and faster) for the DIAGRAM_FORMATS."""
    if sparql:
        return from_sparql(engine, sparql, max_nodes)
    iris, corrected = resolve_names(engine, names_or_iris)
    sub = extract(
        engine, iris, depth=depth, predicates=predicates, max_nodes=max_nodes, relations_only=relations_only
    )
    if corrected:
        sub = dataclasses.replace(sub, origin=MappingProxyType({**sub.origin, "corrected": tuple(corrected)}))
    return sub


def resolve_names(engine: Any, names: Sequence[str]) -> tuple[list[str], list[tuple[str, str]]]:
    """The IRIs ``names`` denote, and (name given, entity's display name) for each name that was
    not one of the entity's own names: a corrected spelling the caller should tell the user about.

    Raises UnknownEntity (with the closest names) for a name that matches nothing.
    """
    iris, corrected = [], []
    for name in names:
        ref = engine.resolve(name)
        iris.append(ref.iri)
        rec = engine.catalog.get(ref.iri)
        own = {normalize(ref.display), normalize(ref.iri), normalize(local_name(ref.iri))}
        if rec is not None:
            own |= {normalize(label) for label in engine.catalog.all_labels(rec)}
            if rec.code:
                own |= {normalize(rec.code), normalize(f"{rec.code} {rec.label}")}
        if ref.score is not None and normalize(name) not in own:
            corrected.append((name, ref.display))
    return iris, corrected


def render(sub: Subgraph, catalog: Catalog, fmt: str, title: str | None = None) -> str | bytes:
    """A collected subgraph in one format."""
    fmt = normalize_format(fmt)
    if fmt in rdf.SERIALIZERS:
        return rdf.SERIALIZERS[fmt](sub.graph)
    # GraphML is data for graph tools, not a picture: every entity goes in.
    cap = None if fmt == "graphml" else view.DIAGRAM_MAX_NODES
    diagram = view.build(sub, catalog, title=title or default_title(sub, catalog), max_nodes=cap)
    if fmt == "mermaid":
        return mermaid.to_mermaid(diagram)
    if fmt == "dot":
        return dot.to_dot(diagram)
    if fmt == "svg":
        return dot.to_svg(diagram)
    if fmt == "png":
        return dot.to_png(diagram)
    if fmt == "graphml":
        return graphml.to_graphml(diagram, catalog)
    return markdown.to_markdown(sub, catalog, diagram)


def default_title(sub: Subgraph, catalog: Catalog) -> str:
    if sub.origin.get("sparql"):
        return "SPARQL CONSTRUCT result"
    names = ", ".join(catalog.display(iri) for iri in sub.seeds)
    hops = "hop" if sub.depth == 1 else "hops"
    return f"{names} ({sub.depth} {hops})"


def from_sparql(engine: Any, query: str, max_nodes: int = DEFAULT_MAX_NODES) -> Subgraph:
    """The graph a CONSTRUCT or DESCRIBE query builds, run through the SPARQL guard.

    RDF formats get the constructed triples as they are; diagrams show the entities among them
    (IRIs the catalog knows, plus any other subject), capped at ``max_nodes``.
    """
    from stackgraph.graph.sparql import MAX_ROWS, check_query, run_query

    max_nodes = check_max_nodes(max_nodes)
    kind = check_query(query)
    if kind not in ("construct", "describe"):
        raise ExportError(f"--sparql needs a CONSTRUCT or DESCRIBE query to export, not {kind.upper()}")
    result = run_query(engine.graph, query, max_rows=MAX_ROWS)
    if result.graph is None:  # pragma: no cover - run_query always sets it for these kinds
        raise ExportError("the query returned no graph")
    out = new_memory_graph()
    for s, p, o in result.graph:
        out.add((s, p, plain(o)))
    catalog: Catalog = engine.catalog
    candidates: set[str] = set()
    for s, p, o in out:
        if isinstance(s, URIRef):
            candidates.add(str(s))
        if isinstance(o, URIRef) and p != RDF.type and str(o) in catalog:
            candidates.add(str(o))
    ranked = sorted(candidates, key=lambda iri: (catalog.label(iri).casefold(), iri))
    nodes, omitted = ranked[:max_nodes], ranked[max_nodes:]
    return Subgraph(
        graph=out,
        seeds=(),
        nodes=tuple(nodes),
        distance=MappingProxyType(dict.fromkeys(nodes, 0)),
        omitted=tuple(omitted),
        cut_at=0 if omitted else None,
        depth=0,
        max_nodes=max_nodes,
        origin=MappingProxyType({"sparql": query, "truncated": result.truncated}),
    )
