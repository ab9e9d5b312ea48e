"""Subgraph exports: RDF round trips, real Graphviz and Mermaid parsers, goldens, determinism, caps,
and the ``stackgraph export`` command.

Goldens (tests/golden/) come from a small fixture graph (tests/data/export_fixture.ttl plus the
vocabulary) so that they change only when the exporters do. Regenerate them after a deliberate
change with ``STACKGRAPH_UPDATE_GOLDEN=1 pytest tests/test_export.py`` and review the diff.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import rdflib
from mermaid_check import parse_files
from rdflib import BNode, URIRef
from rdflib.compare import isomorphic
from rdflib.namespace import RDFS

from stackgraph.cli import export as cli_export
from stackgraph.cli.main import main
from stackgraph.graph.engine import Engine
from stackgraph.graph.export import api, mermaid
from stackgraph.graph.export.errors import ExportError, RendererMissing
from stackgraph.graph.export.subgraph import extract, subgraph
from stackgraph.graph.store import KG, SG, LoadedGraph, builtin_files, new_graph

TESTS = Path(__file__).parent
FIXTURE = TESTS / "data" / "export_fixture.ttl"
NASTY = TESTS / "data" / "export_nasty.ttl"
GOLDEN = TESTS / "golden"
UPDATE = os.environ.get("STACKGRAPH_UPDATE_GOLDEN") == "1"
HAS_DOT = shutil.which("dot") is not None
NEEDS_DOT = pytest.mark.skipif(not HAS_DOT, reason="Graphviz `dot` missing: apt-get install graphviz")

NVLINK, L8, L7, OPS_L2 = (str(KG[x]) for x in ("nvlink", "nine-L8", "nine-L7", "ops-L2"))
WORKLOAD, SYMPTOM, QUOTES = (str(KG[x]) for x in ("wl-pre-training", "sym-nccl-timeout", "fx-quotes"))
PARSE_FORMATS = {"turtle": "turtle", "ntriples": "nt", "jsonld": "json-ld"}


def fixture_engine() -> Engine:
    graph = new_graph()
    graph.parse(str(builtin_files()[0]), format="ox-turtle")  # the vocabulary only
    graph.parse(str(FIXTURE), format="ox-turtle")
    return Engine(LoadedGraph(graph=graph, content_hash="export-fixture"), semantic=False)


@pytest.fixture(scope="module")
def fx() -> Engine:
    return fixture_engine()


# ------------------------------------------------------------------------------ the subgraph


def test_depth_follows_both_directions(fx: Engine) -> None:
    assert extract(fx, [L8], depth=0).nodes == (L8,)
    near = set(extract(fx, [L8], depth=1).nodes)
    assert NVLINK in near  # incoming sg:fitsIn
    assert OPS_L2 in near  # outgoing skos:broadMatch
    assert str(KG["wl-pre-training"]) in near  # incoming through a stress blank node
    assert str(KG["nine-layer-model"]) in near  # outgoing sg:inModel
    assert str(KG["cause-link-flap"]) not in near  # two hops away (via ops-L2)
    assert str(KG["cause-link-flap"]) in set(extract(fx, [L8], depth=2, max_nodes=200).nodes)


def test_qualified_blank_nodes_are_followed_completely(fx: Engine) -> None:
    graph = subgraph(fx, [WORKLOAD], depth=0)
    stresses = list(graph.objects(URIRef(WORKLOAD), SG.stress))
    assert len(stresses) == 3 and all(isinstance(b, BNode) for b in stresses)
    for bnode in stresses:
        for prop in (SG.layer, SG.level, SG.basis, rdflib.namespace.DCTERMS.source):
            assert graph.value(bnode, prop) is not None, prop
        layer = graph.value(bnode, SG.layer)
        # the layer is outside the depth-0 selection but keeps its label and code
        assert graph.value(layer, RDFS.label) is not None and graph.value(layer, SG.code) is not None
    section = URIRef(KG["doc-900-matrix"])
    doc = graph.value(section, rdflib.namespace.DCTERMS.isPartOf)
    assert str(graph.value(doc, SG.fileName)) == "900_fixture.txt"
    assert graph.value(SG.critical, RDFS.label) is not None


def test_induced_edges_only(fx: Engine) -> None:
    graph = subgraph(fx, [NVLINK], depth=1)
    # ops-L2 is two hops from NVLink: L8's broadMatch edge to it must not be in the subgraph
    assert (URIRef(L8), rdflib.namespace.SKOS.broadMatch, URIRef(OPS_L2)) not in graph
    assert (URIRef(NVLINK), SG.fitsIn, URIRef(L8)) in graph


def test_predicates_limit_the_walk(fx: Engine) -> None:
    sub = extract(fx, [L8], depth=1, predicates=["fits in"])
    assert set(sub.nodes) == {L8, NVLINK, str(KG["nvswitch"]), str(KG["ualink"]), QUOTES}
    # asking for the shortcut also brings its qualified form (the placements)
    assert any(sub.graph.triples((URIRef(NVLINK), SG.placement, None)))
    assert not any(sub.graph.triples((URIRef(NVLINK), SG.pairsWith, None)))
    with pytest.raises(ExportError, match="closest: sg:fitsin"):
        extract(fx, [L8], predicates=["sg:fitsInn"])


def test_cap_keeps_seeds_and_says_what_was_left_out(fx: Engine) -> None:
    sub = extract(fx, [L8, WORKLOAD], depth=2, max_nodes=4)
    assert sub.nodes[:2] == (L8, WORKLOAD) and len(sub.nodes) == 4
    assert sub.omitted and sub.cut_at == 1
    for fmt in ("mermaid", "dot", "markdown"):
        text = api.render(sub, fx.catalog, fmt).replace("<BR/>", " ")  # DOT wraps the note over lines
        assert f"{len(sub.omitted)} more entities 1 hop away left out" in text, fmt
        assert "cap 4 nodes" in text and "further hops up to depth 2 not explored" in text


@pytest.mark.parametrize("bad", [{"depth": -1}, {"depth": 9}, {"max_nodes": 0}, {"max_nodes": True}])
def test_limits_are_checked(fx: Engine, bad: dict) -> None:
    with pytest.raises(ExportError):
        extract(fx, [L8], **bad)


# ------------------------------------------------------------------------------ RDF formats


@pytest.mark.parametrize("fmt", sorted(PARSE_FORMATS))
def test_rdf_exports_parse_back_isomorphic(fx: Engine, fmt: str) -> None:
    sub = extract(fx, [NVLINK, WORKLOAD, SYMPTOM], depth=1)
    text = api.render(sub, fx.catalog, fmt)
    parsed = rdflib.Graph().parse(data=text, format=PARSE_FORMATS[fmt])
    assert len(parsed) == len(sub.graph) > 50
    assert isomorphic(parsed, sub.graph)


def test_ntriples_are_sorted_with_canonical_blank_nodes(fx: Engine) -> None:
    text = api.export(fx, [WORKLOAD], "ntriples", depth=0)
    lines = text.splitlines()
    assert lines == sorted(lines)
    assert set(re.findall(r"_:(\w+)", text)) == {"b1", "b2", "b3"}


# ------------------------------------------------------------------------------ determinism


def test_every_format_is_deterministic_across_loads() -> None:
    first, second = fixture_engine(), fixture_engine()
    formats = [f for f in api.FORMATS if f not in api.GRAPHVIZ_FORMATS or HAS_DOT]
    for fmt in formats:
        a = api.export(first, ["NVLink", "NCCL timeout"], fmt, depth=2)
        b = api.export(second, ["NVLink", "NCCL timeout"], fmt, depth=2)
        assert a == b, fmt


# ------------------------------------------------------------------------------ diagrams


def test_diagrams_use_labels_layer_codes_and_qualified_edges(fx: Engine) -> None:
    text = api.export(fx, [NVLINK], "mermaid")
    assert "https://" not in text.split("\n", 1)[1]
    assert '[["L8 Node Interconnect"]]' in text
    assert '-->|"fits in (scale-up interconnect) · example of"|' in text
    assert "placement" not in text  # qualified relations are edges, not blank nodes
    assert 'subgraph legend["Legend"]' in text
    # pairsWith is symmetric and stated both ways: drawn once
    assert text.count('"pairs with"') == 2  # NVLink–NVSwitch and end–NVLink
    dot_text = api.export(fx, [NVLINK], "dot")
    assert 'label="L8 Node Interconnect", shape=box3d' in dot_text
    assert 'label="fits in (scale-up interconnect) · example of"' in dot_text


def test_mermaid_escaping_and_ids() -> None:
    raw = 'a "q" [b] {c} (d) #e <f> |g| & `h` \\ i'
    escaped = mermaid.escape(raw)
    assert not set(escaped) & set('"<>|`\\')
    assert "#quot;" in escaped and "#35;e" in escaped and "#amp;" in escaped
    ids = mermaid.node_ids(
        ["https://w3id.org/stackgraph/id/end", "https://w3id.org/stackgraph/id/a.b", "urn:x:a-b"]
    )
    assert all(re.fullmatch(r"n_[A-Za-z0-9_]+", i) for i in ids.values())
    assert len(set(ids.values())) == 3


def _mermaid_files(fx: Engine, tmp_path: Path) -> list[Path]:
    paths = []
    cases = {
        "nasty": api.export(fx, [QUOTES, str(KG["fx-hash"]), str(KG["fx-end"])], "mermaid"),
        "capped": api.export(fx, [L8], "mermaid", depth=2, max_nodes=5),
        "all": api.export(fx, [L8, WORKLOAD, SYMPTOM], "mermaid", depth=2, max_nodes=200),
    }
    for name, text in cases.items():
        path = tmp_path / f"{name}.mmd"
        path.write_text(text, encoding="utf-8")
        paths.append(path)
    page = tmp_path / "page.md"
    page.write_text(api.export(fx, [QUOTES], "markdown"), encoding="utf-8")
    return [*paths, page]


def test_mermaid_output_parses_with_the_real_parser(fx: Engine, tmp_path: Path) -> None:
    paths = _mermaid_files(fx, tmp_path)
    # Controls: what a naive writer produces for these labels, which the parser must reject.
    naive = {
        "quote": 'flowchart LR\n  a[He said "hi"] --> b\n',
        "keyword": 'flowchart LR\n  end["end"] --> b\n',
        "pipe": "flowchart LR\n  a -->|x|y| b\n",
    }
    controls = []
    for name, text in naive.items():
        controls.append(tmp_path / f"broken-{name}.mmd")
        controls[-1].write_text(text, encoding="utf-8")
    result = parse_files([*paths, *controls])
    lines = result.stdout.splitlines()
    assert result.returncode == 1, result.stdout + result.stderr
    errors = [line for line in lines if line.startswith("error")]
    assert len(errors) == len(controls) and all("broken-" in line for line in errors), result.stdout
    assert sum(line.startswith("ok ") for line in lines) == len(paths)


@NEEDS_DOT
def test_dot_output_renders_with_graphviz(fx: Engine) -> None:
    text = api.export(fx, [QUOTES, str(KG["fx-hash"]), L8], "dot", depth=1)
    result = subprocess.run(["dot", "-Tsvg"], input=text, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "<svg" in result.stdout
    # the labels arrive intact (XML-escaped by Graphviz), not cut at a quote or a backslash
    assert "The &quot;quoted&quot; [bracket] {brace} (paren) thing" in result.stdout
    assert "back\\slash 100%" in result.stdout


@NEEDS_DOT
def test_svg_and_png(fx: Engine) -> None:
    svg = api.export(fx, [NVLINK], "svg")
    assert isinstance(svg, str) and "<svg" in svg and "NVLink" in svg
    png = api.export(fx, [NVLINK], "png")
    assert isinstance(png, bytes) and png.startswith(b"\x89PNG\r\n\x1a\n")


def test_missing_dot_gives_a_clear_message(
    fx: Engine, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(RendererMissing, match="apt-get install graphviz") as raised:
        api.export(fx, [NVLINK], "svg")
    assert "\n" not in str(raised.value)


def test_graphml(fx: Engine) -> None:
    import networkx as nx

    text = api.export(fx, [NVLINK], "graphml")
    graph = nx.parse_graphml(text)
    assert graph.nodes[L8]["label"] == "L8 Node Interconnect" and graph.nodes[L8]["code"] == "L8"
    assert graph.edges[NVLINK, L8]["label"].startswith("fits in (scale-up interconnect)")


def test_markdown_page_cites_sources(fx: Engine) -> None:
    text = api.export(fx, [WORKLOAD], "markdown")
    assert "```mermaid\n" in text and "## Entities" in text and "## Facts" in text
    assert "| Pre-training | stresses (critical, reconstructed) | L8 Node Interconnect | [" in text
    # Sources are cited by the document's title; the file name is an identifier, not a citation.
    assert re.search(r"^\d+\. Fixture Stack § Stack matrix$", text, re.MULTILINE)
    assert "900_fixture.txt" not in text


def test_sparql_construct(fx: Engine) -> None:
    query = "CONSTRUCT { ?t sg:fitsIn ?l } WHERE { ?t sg:fitsIn ?l }"
    text = api.export(fx, [], "turtle", sparql=query)
    parsed = rdflib.Graph().parse(data=text, format="turtle")
    assert (URIRef(NVLINK), SG.fitsIn, URIRef(L8)) in parsed
    assert '-->|"fits in"|' in api.export(fx, [], "mermaid", sparql=query)
    with pytest.raises(ExportError, match="CONSTRUCT or DESCRIBE"):
        api.export(fx, [], "turtle", sparql="SELECT * WHERE { ?s ?p ?o }")


def test_unknown_format(fx: Engine) -> None:
    with pytest.raises(ExportError, match="unknown export format 'pdf'"):
        api.export(fx, [NVLINK], "pdf")
    assert api.normalize_format("ttl") == "turtle" and api.format_for_path("x/y.mmd") == "mermaid"


# ------------------------------------------------------------------------------ goldens

GOLDENS = {"nvlink.mmd": "mermaid", "nvlink.dot": "dot", "nvlink.md": "markdown"}


@pytest.mark.parametrize("name", sorted(GOLDENS))
def test_golden(fx: Engine, name: str) -> None:
    text = api.export(fx, [NVLINK], GOLDENS[name], depth=1)
    path = GOLDEN / name
    if UPDATE or not path.exists():
        path.write_text(text, encoding="utf-8")
        if not UPDATE:
            pytest.fail(f"golden {name} was missing and has been written: review it and rerun")
    assert text == path.read_text(encoding="utf-8"), f"{name} changed; STACKGRAPH_UPDATE_GOLDEN=1 rewrites it"


# ------------------------------------------------------------------------------ the command


def test_cli_formats_match_the_library() -> None:
    assert cli_export.FORMATS == api.FORMATS
    from stackgraph.graph.export import subgraph as sub_module

    assert cli_export.DEFAULT_MAX_NODES == sub_module.DEFAULT_MAX_NODES
    assert cli_export.DEFAULT_DEPTH == sub_module.DEFAULT_DEPTH


def test_cli_unknown_name_is_one_line_with_suggestions(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["export", "--data", str(NASTY), "Zebra hubb zzz qqq"])
    err = capsys.readouterr().err
    assert code == 1
    assert err.count("\n") == 1 and err.startswith("stackgraph: error: no entity named")


def test_cli_exports_nasty_labels(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out = tmp_path / "hub.mmd"
    code = main(["export", "--data", str(NASTY), "kg:fx-nasty-hub", "-o", str(out)])
    assert code == 0, capsys.readouterr().err
    text = out.read_text(encoding="utf-8")
    assert "C#35; #amp; F#35;; #35;quot; 100%" in text  # a literal "#quot;" stays literal
    assert "#lt;script#gt;" in text and "<script>" not in text
    ttl = tmp_path / "hub.ttl"
    assert main(["export", "--data", str(NASTY), "kg:fx-nasty-hub", "-o", str(ttl)]) == 0
    assert (URIRef(KG["fx-nasty-hub"]), SG.uses, URIRef(KG["fx-nasty-end"])) in rdflib.Graph().parse(ttl)
    if (TESTS / "js" / "node_modules" / "mermaid").is_dir():
        assert parse_files([out]).returncode == 0


def test_cli_refuses_binary_to_a_terminal(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sys.stdout.isatty", lambda: True)
    assert main(["export", "kg:fx-nasty-hub", "--format", "png"]) == 2
    assert "-o FILE" in capsys.readouterr().err


def test_cli_needs_names_or_sparql(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["export"]) == 2
    assert "NAME" in capsys.readouterr().err
