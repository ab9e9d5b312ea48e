"""GraphML of a subgraph (through networkx), for yEd, Gephi, Cytoscape and graph tooling.

It is the reader's view (view.Diagram), not the raw triples: one node per entity with its label,
IRI, family and most specific type, and one edge per related pair whose ``label`` reads like the
diagrams ("fits in (scale-up interconnect)") and whose ``predicates`` lists the IRIs behind it.
"""

from __future__ import annotations

import io
import re

import networkx as nx

from stackgraph.graph.catalog import Catalog
from stackgraph.graph.export.view import Diagram


def to_networkx(diagram: Diagram, catalog: Catalog) -> nx.DiGraph:
    graph = nx.DiGraph(name=diagram.title)
    if diagram.note:
        graph.graph["note"] = diagram.note
    for node in diagram.nodes:
        attrs = {"label": node.label, "iri": node.iri, "family": node.family, "seed": node.seed}
        rec = catalog.get(node.iri)
        if rec is not None:
            attrs["type"] = catalog.most_specific_type(rec)
            if rec.code:
                attrs["code"] = rec.code
            if rec.definition:
                attrs["definition"] = rec.definition
        graph.add_node(node.iri, **attrs)
    for edge in diagram.edges:
        graph.add_edge(edge.source, edge.target, label=edge.label, predicates=" ".join(edge.predicates))
    return graph


def to_graphml(diagram: Diagram, catalog: Catalog) -> str:
    buffer = io.BytesIO()
    nx.write_graphml(to_networkx(diagram, catalog), buffer, encoding="utf-8", prettyprint=True)
    return _xs_booleans(buffer.getvalue().decode("utf-8"))


def _xs_booleans(text: str) -> str:
    """networkx writes a Python bool as ``True``/``False``, which is not xs:boolean (yEd refuses
    the file): lower-case the values of every key declared ``attr.type="boolean"``."""
    keys = set(re.findall(r'<key id="([^"]+)"[^>]*attr\.type="boolean"', text))
    if not keys:
        return text
    pattern = re.compile(r'(<data key="(?:' + "|".join(map(re.escape, keys)) + r')">)(True|False)(</data>)')
    return pattern.sub(lambda m: m.group(1) + m.group(2).lower() + m.group(3), text)
