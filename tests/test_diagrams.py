"""Diagrams stay readable: at most ~20 entities drawn with an "and N more" note, layers drawn as
boxes around what is placed in them, GraphML that graph tools accept."""

from __future__ import annotations

import re
import shutil
import xml.etree.ElementTree as ET

import pytest

from stackgraph.graph.export import api, view
from stackgraph.graph.export.subgraph import extract

GRAPHML = "{http://graphml.graphdrawing.org/xmlns}"


@pytest.fixture(scope="module")
def big(engine):
    l8 = engine.resolve("L8 Node Interconnect").iri
    return extract(engine, [l8], depth=2, max_nodes=200, relations_only=True)


def test_a_big_subgraph_draws_at_most_the_cap_and_says_how_many_more(engine, big) -> None:
    assert len(big.nodes) > 2 * view.DIAGRAM_MAX_NODES  # the case worth testing
    diagram = view.build(big, engine.catalog)
    assert len(diagram.nodes) == view.DIAGRAM_MAX_NODES
    assert big.seeds[0] in {n.iri for n in diagram.nodes}
    hidden = len(big.nodes) - view.DIAGRAM_MAX_NODES + len(big.omitted)
    assert diagram.note.startswith(f"and {hidden} more entities not drawn")
    drawn = {n.iri for n in diagram.nodes}
    assert all(e.source in drawn and e.target in drawn for e in diagram.edges)
    for fmt in ("mermaid", "dot"):
        text = api.render(big, engine.catalog, fmt).replace("<BR/>", " ")
        assert f"and {hidden} more entities" in text, fmt


def test_layers_are_boxes_around_what_is_placed_in_them(engine, big) -> None:
    diagram = view.build(big, engine.catalog)
    assert diagram.clusters
    edges = {(e.source, e.target): set(e.predicates) for e in diagram.edges}
    seen: set[str] = set()
    for cluster in diagram.clusters:
        layer, *members = cluster.members
        assert layer == cluster.layer and members
        for iri in members:
            assert view.LAYER_RELATIONS & edges.get((iri, layer), set()), iri
        assert not seen & set(cluster.members)  # no entity drawn twice
        seen |= set(cluster.members)
    mermaid = api.render(big, engine.catalog, "mermaid")
    assert mermaid.count("  subgraph c_") == len(diagram.clusters)
    dot = api.render(big, engine.catalog, "dot")
    assert dot.count('subgraph "cluster_') == len(diagram.clusters)


def test_graphml_holds_every_entity_and_xs_booleans(engine, big) -> None:
    root = ET.fromstring(api.render(big, engine.catalog, "graphml"))
    booleans = {k.get("id") for k in root.iter(f"{GRAPHML}key") if k.get("attr.type") == "boolean"}
    assert booleans
    values = [d.text for d in root.iter(f"{GRAPHML}data") if d.get("key") in booleans]
    assert values and set(values) <= {"true", "false"} and "true" in values
    assert len(list(root.iter(f"{GRAPHML}node"))) == len(big.nodes)


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz dot is not installed")
def test_the_big_svg_is_legible_at_page_width(engine, big) -> None:
    svg = api.render(big, engine.catalog, "svg")
    width = float(re.search(r'<svg width="([\d.]+)pt"', svg).group(1))
    assert width < 1600, width  # 10 pt labels stay above ~6 px on a 1000 px page
