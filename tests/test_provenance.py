"""Statement provenance: every relation triple has its own source section and basis; answers and
entity pages carry them; sources are cited by title; the corrected facts stay corrected."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from functools import lru_cache
from pathlib import Path

import pytest
import rdflib
from rdflib import URIRef
from rdflib.namespace import DCTERMS, RDF, RDFS, SKOS

from stackgraph.cli.main import main
from stackgraph.graph.engine import Engine
from stackgraph.graph.store import KG, SG, load_graph

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "ontology" / "README.md"
FILE_NAME = re.compile(r"\b\d{3}_[0-9a-f]{16}\.txt\b")


@pytest.fixture(scope="module")
def graph() -> rdflib.Graph:
    return load_graph().graph


def _readme_query() -> str:
    text = README.read_text(encoding="utf-8")
    found = re.findall(r"```sparql\n(.*?)```", text, re.DOTALL)
    assert found, "ontology/README.md has no ```sparql block"
    return found[0]


# ---------------------------------------------------------------- the documented query


def test_readme_query_lists_every_relation_with_section_and_basis(graph: rdflib.Graph) -> None:
    from stackgraph.graph.catalog import PREFIX_DECL

    rows = list(graph.query(PREFIX_DECL + _readme_query()))
    predicates = {str(r.predicate).rsplit("#", 1)[-1] for r in rows}
    assert predicates == {"ownedBy", "likelyCause", "diagnosedBy", "fitsIn"}
    expected = sum(
        len(set(graph.subject_objects(SG[p]))) for p in ("ownedBy", "likelyCause", "diagnosedBy", "fitsIn")
    )
    assert len({(r.subject, r.predicate, r.object) for r in rows}) == expected
    lacking = [(r.subject, r.predicate, r.object) for r in rows if r.basis is None or r.section is None]
    assert lacking == []


def test_readme_query_finds_a_triple_without_provenance(graph: rdflib.Graph) -> None:
    """The query is not vacuous: an ownedBy edge added without a statement shows up unsourced."""
    from stackgraph.graph.catalog import PREFIX_DECL
    from stackgraph.graph.store import new_graph

    copy = new_graph()
    copy += graph
    copy.add((KG["sym-http-429"], SG.ownedBy, KG["ops-L1"]))
    rows = list(copy.query(PREFIX_DECL + _readme_query()))
    lacking = [r for r in rows if r.basis is None or r.section is None]
    assert [(str(r.subject), str(r.object)) for r in lacking] == [
        (str(KG["sym-http-429"]), str(KG["ops-L1"]))
    ]


def test_statements_file_is_up_to_date() -> None:
    seeds = ROOT.parent / "shared" / "seeds"
    if not seeds.is_dir():
        pytest.skip("the seed texts are not beside the repository")
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "build_statements.py"), "--check"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr


def test_statement_nodes_have_iris(graph: rdflib.Graph) -> None:
    statements = set(graph.subjects(RDF.type, RDF.Statement))
    assert len(statements) > 2000
    assert all(isinstance(s, rdflib.URIRef) and str(s).startswith(str(KG) + "st-") for s in statements)
    for cls in (SG.Placement, SG.Stress):
        nodes = set(graph.subjects(RDF.type, cls))
        assert nodes and all(isinstance(n, rdflib.URIRef) for n in nodes)


# ---------------------------------------------------------------- answers and pages carry it


def test_ask_json_facts_carry_their_own_source_and_basis(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ask", "--json", "--no-semantic", "where does TTFT fit?"]) == 0
    body = json.loads(capsys.readouterr().out)
    assert body["facts"]
    for fact in body["facts"]:
        assert fact["basis"] in {"stated", "inferred", "reconstructed", "authored"}
        assert fact["source"] and fact["source"]["display"].count(" § ") == 1
    fits = [f for f in body["facts"] if f["predicate"].endswith("#fitsIn")]
    assert fits and all(f["basis"] == "inferred" for f in fits)
    # TTFT is a glossary term: its placement cites the glossary, not the nine-layer sections of L2.
    assert {s["document"] for s in body["sources"]} == {"004_55fa503474d771b7.txt"}
    assert "inferred" in body["answer"].lower()


def test_answer_says_inferred_only_when_a_fact_is(engine: Engine) -> None:
    stated = engine.ask("where does UALink fit?")
    assert stated.answered and stated.facts
    assert all(f.basis != "inferred" for f in stated.facts)
    assert "inferred" not in stated.answer.lower()
    inferred = engine.ask("where does TTFT fit?")
    assert any(f.basis == "inferred" for f in inferred.facts) and "inferred" in inferred.answer.lower()


def test_describe_json_edges_carry_their_own_source_and_basis(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["describe", "--json", "HTTP 504"]) == 0
    body = json.loads(capsys.readouterr().out)
    owned = [e for e in body["outgoing"] if e["predicate"].endswith("#ownedBy")]
    assert owned and all(e["basis"] == "inferred" for e in owned)  # §12 names no layer
    assert all(e["source"]["iri"] == str(KG["doc-004-s12"]) for e in owned)
    for edge in body["outgoing"] + body["incoming"]:
        assert edge["basis"] and edge["source"], edge


def test_layer_diagnostics_are_sourced(graph: rdflib.Graph, engine: Engine) -> None:
    page = engine.describe("ops-L2")
    diagnosed = [e for e in page.outgoing if e.predicate == str(SG.diagnosedBy)]
    assert diagnosed and all(e.sources and e.sources[0].iri == str(KG["doc-002-l2"]) for e in diagnosed)


#: Facts an answer takes from a qualified node name the node's layer as their object.
QUALIFIED = (SG.stress, SG.placement)


def _problem_questions(graph: rdflib.Graph) -> list[str]:
    """Questions about every symptom and triage branch (its cause, its owner, its checks) and every
    workload's stress: the answers that read two edges at once (a symptom's likely cause and a
    branch's suggested one, a check's whereToLook and diagnosedBy, ownedBy and leadsTo)."""
    asked = []
    for kind in (SG.Symptom, SG.TriageBranch):
        for node in graph.subjects(RDF.type, kind):
            label = graph.value(node, RDFS.label)
            if label:
                asked += [
                    f"{label}: what causes it?",
                    f"how do I check {label}?",
                    f"which layer owns {label}?",
                ]
    for workload in graph.subjects(RDF.type, SG.Workload):
        asked.append(f"which layers does {graph.value(workload, RDFS.label)} stress?")
    return sorted(asked)


def test_every_fact_an_answer_records_is_a_triple_the_graph_holds(
    graph: rdflib.Graph, engine: Engine
) -> None:
    # A fact names the edge the answer read: a triage branch's cause is sg:suggestsCause, not the
    # symptom's sg:likelyCause; a check reached by sg:diagnosedBy is not recorded as sg:whereToLook.
    questions = _problem_questions(graph)
    assert len(questions) > 100
    recorded = 0
    for question in questions:
        for fact in engine.ask(question).facts:
            if fact.object.startswith("http"):
                recorded += 1
                subject, predicate, obj = URIRef(fact.subject), URIRef(fact.predicate), URIRef(fact.object)
                if (
                    predicate in QUALIFIED
                ):  # held through its node: (workload, sg:stress, node, sg:layer, layer)
                    held = any((node, SG.layer, obj) in graph for node in graph.objects(subject, predicate))
                else:
                    held = (subject, predicate, obj) in graph
                assert held, (question, fact.subject_label, fact.predicate_label, fact.object_label)
    assert recorded > len(questions)


# ---------------------------------------------------------------- sources by title


def test_every_document_has_a_title_and_short_name(graph: rdflib.Graph) -> None:
    docs = set(graph.subjects(RDF.type, SG.Source))
    assert len(docs) == 4
    for doc in docs:
        assert (
            graph.value(doc, DCTERMS.title)
            and graph.value(doc, SG.shortName)
            and graph.value(doc, SG.fileName)
        )
    title = graph.value(KG["doc-002"], DCTERMS.title)
    assert str(title) == "The AI Stack Explained — From Application Down to Silicon"


@pytest.mark.parametrize(
    "argv",
    [
        ["ask", "--no-semantic", "where does TTFT fit?"],
        ["ask", "--no-semantic", "HTTP 504 mid-sentence, which layer owns it?"],
        ["describe", "NVLink"],
    ],
)
def test_text_surfaces_cite_titles_not_file_names(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert " § " in out
    assert not FILE_NAME.search(out), out


def test_mcp_text_rendering_cites_titles() -> None:
    from stackgraph.server import render

    page = {
        "items": [
            {
                "document": "000_fa8781ee52850678.txt",
                "section": "S",
                "iri": "x",
                "title": "T",
                "display": "T § S",
            }
        ]
    }
    assert render._sources(page) == "Sources: T § S"


# ---------------------------------------------------------------- the stack matrix


_SYMBOLS = {"·": "low", "■": "moderate", "■■": "high", "■■■": "critical"}


def _splits(row: str, cells: int) -> list[tuple[str, ...]]:
    @lru_cache(None)
    def go(i: int, left: int) -> tuple[tuple[str, ...], ...]:
        if left == 0:
            return ((),) if i == len(row) else ()
        out = []
        for symbol, level in _SYMBOLS.items():
            if row.startswith(symbol, i):
                out += [(level, *rest) for rest in go(i + len(symbol), left - 1)]
        return tuple(out)

    return list(go(0, cells))


def test_forced_matrix_cells_are_stated_and_the_rest_reconstructed(graph: rdflib.Graph) -> None:
    """A cell is forced when every split of its printed row into 11 cells gives it the same level."""
    layers = sorted(
        graph.subjects(SG.inModel, KG["nine-layer-model"]),
        key=lambda layer: int(graph.value(layer, SG.position)),
    )
    forced_count = 0
    for workload, row in graph.subject_objects(SG.matrixRow):
        splits = _splits(str(row), len(layers))
        assert splits, f"{workload}: no split of {row} into {len(layers)} cells"
        by_layer = {graph.value(st, SG.layer): st for st in graph.objects(workload, SG.stress)}
        for i, layer in enumerate(layers):
            stress = by_layer[layer]
            level = str(graph.value(stress, SG.level)).rsplit("#", 1)[-1]
            assert level in {s[i] for s in splits}, (workload, layer)
            forced = len({s[i] for s in splits}) == 1
            forced_count += forced
            assert graph.value(stress, SG.basis) == (SG.stated if forced else SG.reconstructed), (
                workload,
                layer,
            )
    assert forced_count == 7


# ---------------------------------------------------------------- corrected facts


def _statement(graph: rdflib.Graph, s, p, o) -> rdflib.URIRef | None:
    for st in graph.subjects(RDF.subject, s):
        if (st, RDF.predicate, p) in graph and (st, RDF.object, o) in graph:
            return st
    return None


def test_corrected_facts(graph: rdflib.Graph) -> None:
    # Host kernel drivers run outside Kubernetes, L6-L9 (seed 000): not with the CUDA runtime in L4.
    assert (KG["nvidia-driver"], SG.fitsIn, KG["nine-L4"]) not in graph
    # "Non-NVIDIA accelerators (AMD ROCm/RCCL, TPU/XLA)": ROCm, XLA and RCCL are no kind of accelerator.
    for name in ("rocm", "xla", "rccl"):
        assert (KG[name], SKOS.broader, KG["non-nvidia-accelerators"]) not in graph
        assert (KG[name], SKOS.related, KG["non-nvidia-accelerators"]) in graph
    assert (KG["kv-cache-tiering"], SKOS.broader, KG["kv-cache-offload"]) not in graph
    owner = _statement(graph, KG["cause-gateway-proxy-timeout"], SG.ownedBy, KG["ops-L8"])
    assert owner is not None and graph.value(owner, SG.basis) == SG.inferred
    # Ops layers are described by seed 002 and the H100 is not in seed 000.
    for i in range(1, 9):
        cited = {graph.value(s, DCTERMS.isPartOf) for s in graph.objects(KG[f"ops-L{i}"], DCTERMS.source)}
        assert KG["doc-000"] not in cited
    assert not {
        s
        for s in graph.objects(KG["nvidia-h100"], DCTERMS.source)
        if (s, DCTERMS.isPartOf, KG["doc-000"]) in graph
    }
    # The glossary's lead sentences of sections 1 and 3 are descriptions of those sections.
    assert "Nothing above this layer works" in str(graph.value(KG["doc-004-s01"], DCTERMS.description))
    assert "multi-node training/inference possible" in str(
        graph.value(KG["doc-004-s03"], DCTERMS.description)
    )


def test_storage_diagnostics_show_the_seed_text(graph: rdflib.Graph) -> None:
    seed = ROOT.parent / "shared" / "seeds" / "004_55fa503474d771b7.txt"
    for name in ("cmd-iostat-x", "fio", "gdscheck"):
        shows = [str(o) for o in graph.objects(KG[name], SG.shows)]
        assert shows == ["Disk I/O can't keep up with model loading"]
        if seed.exists():
            assert shows[0] in seed.read_text(encoding="utf-8")


def test_one_definition_per_entity(graph: rdflib.Graph) -> None:
    counts: dict = {}
    for s, o in graph.subject_objects(SKOS.definition):
        counts[(s, o.language)] = counts.get((s, o.language), 0) + 1
    assert [k for k, n in counts.items() if n > 1] == []
