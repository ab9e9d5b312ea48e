"""A real triplestore behind ``--store``: Oxigraph server on loopback, filled with ``stackgraph push``.

The ``oxigraph`` binary comes with the PyPI package ``oxigraph`` (a test dependency); without it the
tests that need a server are skipped with that reason.
"""

from __future__ import annotations

import csv
import io
import json
import shutil
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
import rdflib

from stackgraph.cli.main import main
from stackgraph.graph.remote import RemoteStoreError, batches, count_triples, open_remote, remote_graph
from stackgraph.graph.sparql import Timeout, run_query
from stackgraph.graph.store import load_graph

QUESTIONS = Path("/work/shared/eval/questions.jsonl")
NAMED = "https://w3id.org/stackgraph/graph/test"
SG_NS = "https://w3id.org/stackgraph/ns#"


def _oxigraph_binary() -> str | None:
    beside_python = Path(sys.executable).with_name("oxigraph")
    return str(beside_python) if beside_python.exists() else shutil.which("oxigraph")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def oxigraph(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Base URL of a fresh Oxigraph server (``/query``, ``/update``), stopped after the module."""
    binary = _oxigraph_binary()
    if binary is None:
        pytest.skip("the oxigraph server binary is missing: pip install oxigraph==0.5.13")
    port = _free_port()
    location = tmp_path_factory.mktemp("oxigraph")
    process = subprocess.Popen(
        [binary, "serve", "--location", str(location), "--bind", f"127.0.0.1:{port}", "--timeout-s", "5"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 15
    while True:
        try:
            urllib.request.urlopen(
                base + "/query?" + urllib.parse.urlencode({"query": "ASK {}"}), timeout=1
            ).read()
            break
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                process.kill()
                pytest.fail(f"oxigraph did not start: {process.stderr.read().decode()[-500:]}")
            time.sleep(0.1)
    yield base
    process.terminate()
    try:
        process.wait(10)
    except subprocess.TimeoutExpired:
        process.kill()


@pytest.fixture(scope="module")
def pushed(oxigraph: str) -> str:
    """The built-in graph pushed into the server's default graph; returns the query URL."""
    assert main(["push", oxigraph + "/update", "--clear"]) == 0
    return oxigraph + "/query"


def _canonical(graph: rdflib.Graph) -> set:
    """The graph's triples with blank nodes canonically relabelled (RDFC-1.0, in Rust: rdflib's
    own isomorphism test takes half a minute on the built-in graph's blank nodes)."""
    import pyoxigraph

    dataset = pyoxigraph.Dataset(
        pyoxigraph.parse(
            graph.serialize(format="nt", encoding="utf-8"), format=pyoxigraph.RdfFormat.N_TRIPLES
        )
    )
    dataset.canonicalize(pyoxigraph.CanonicalizationAlgorithm.RDFC_1_0)
    return {str(quad) for quad in dataset}


# ------------------------------------------------------------------------------------------ push


def test_push_copies_the_whole_graph(pushed: str, capsys) -> None:
    local = load_graph().graph
    remote = open_remote(pushed, [])
    assert count_triples(remote.graph) == len(local) > 1000
    dump = remote.graph.query("CONSTRUCT WHERE { ?s ?p ?o }").graph
    assert _canonical(dump) == _canonical(local), "blank-node facts must survive batching"


def test_push_reports_progress_and_total(oxigraph: str, capsys) -> None:
    assert main(["push", oxigraph + "/update", "--clear", "--batch", "1000"]) == 0
    captured = capsys.readouterr()
    total = len(load_graph().graph)
    assert f"pushed {total:,}/{total:,} triples" in captured.err
    assert captured.out.startswith(f"pushed {total:,} triples to {oxigraph}/update (the default graph)")


def test_push_clear_makes_pushing_idempotent(oxigraph: str) -> None:
    query = oxigraph + "/query"
    assert main(["push", oxigraph + "/update", "--clear"]) == 0
    first = count_triples(remote_graph(query))
    assert main(["push", oxigraph + "/update", "--clear"]) == 0
    assert count_triples(remote_graph(query)) == first


def test_push_into_a_named_graph_with_data(oxigraph: str) -> None:
    extra = Path(__file__).parent / "data" / "sparql_user_data.ttl"
    default_before = count_triples(remote_graph(oxigraph + "/query"))
    assert main(["push", oxigraph + "/update", "--graph", NAMED, "--data", str(extra), "--clear"]) == 0
    named = open_remote(oxigraph + "/query?" + urllib.parse.urlencode({"default-graph-uri": NAMED}), [])
    assert count_triples(named.graph) == len(load_graph([extra]).graph)
    rows = run_query(named.graph, "SELECT ?l WHERE { <https://example.org/cluster-a> rdfs:label ?l }").rows
    assert [str(r[0]) for r in rows] == ["cluster A"]
    assert count_triples(remote_graph(oxigraph + "/query")) == default_before


def test_push_to_a_bad_endpoint_fails_in_one_line(oxigraph: str, capsys) -> None:
    assert main(["push", oxigraph + "/nowhere"]) == 1
    err = capsys.readouterr().err
    assert "HTTP 404" in err and err.count("\n") == 1


def test_batches_keep_blank_node_groups_whole() -> None:
    graph = rdflib.Graph()
    ex = rdflib.Namespace("http://example.org/")
    for i in range(25):
        graph.add((ex[f"s{i}"], ex.p, rdflib.Literal(i)))
    chain = [rdflib.BNode() for _ in range(4)]
    graph.add((ex.root, ex.q, chain[0]))
    for a, b in zip(chain, chain[1:], strict=False):
        graph.add((a, ex.next, b))
    graph.add((chain[-1], ex.value, rdflib.Literal("end")))
    parts = list(batches(graph, size=4))
    assert sum(len(p) for p in parts) == len(graph)
    holding = [
        p for p in parts if any(isinstance(t[0], rdflib.BNode) or isinstance(t[2], rdflib.BNode) for t in p)
    ]
    assert len(holding) == 1 and len(holding[0]) == 5  # the whole chain, even above the batch size
    assert all(len(p) <= 4 for p in parts if p is not holding[0])


# ------------------------------------------------------------------------------------------ --store


def test_sparql_over_the_store_matches_embedded(pushed: str, capsys) -> None:
    query = "SELECT ?s ?label WHERE { ?s rdfs:label ?label } ORDER BY ?s ?label LIMIT 200"
    assert main(["sparql", "--format", "csv", query]) == 0
    embedded = capsys.readouterr().out
    assert main(["sparql", "--store", pushed, "--format", "csv", query]) == 0
    remote = capsys.readouterr().out
    assert list(csv.reader(io.StringIO(remote))) == list(csv.reader(io.StringIO(embedded)))
    assert len(list(csv.reader(io.StringIO(remote)))) == 201


def test_catalog_over_the_store_matches_embedded(pushed: str) -> None:
    """The remote catalog is read as plain CSV SELECTs joined in Python; it must hold exactly what
    the embedded one-query catalog holds (labels, types, codes, models, definitions, sources)."""
    from stackgraph.graph.catalog import Catalog

    embedded = Catalog(load_graph().graph)
    remote = Catalog(remote_graph(pushed))
    assert len(remote.records) == len(embedded.records) > 100
    assert list(remote.records) == list(embedded.records)
    differing = [iri for iri, rec in embedded.records.items() if remote.records[iri] != rec]
    assert differing == []
    assert dict(remote._parents) == dict(embedded._parents)
    assert any(rec.sources for rec in remote.records.values())


def test_bulk_read_from_an_unreachable_store_is_one_clear_error() -> None:
    from stackgraph.graph.remote import select_csv

    graph = remote_graph(f"http://127.0.0.1:{_free_port()}/query")
    with pytest.raises(RemoteStoreError, match="cannot reach the endpoint"):
        list(select_csv(graph, "SELECT ?s WHERE { ?s ?p ?o }"))


def _update(oxigraph: str, text: str) -> None:
    urllib.request.urlopen(
        urllib.request.Request(
            oxigraph + "/update", data=text.encode(), headers={"Content-Type": "application/sparql-update"}
        )
    ).read()


def test_remote_content_hash_follows_the_store(pushed: str, oxigraph: str) -> None:
    """After push, the hash follows the push manifest's id (no count of a million triples at every
    start); a store that push did not fill is keyed by its triple count."""
    first = open_remote(pushed, [])
    assert first.store_url == pushed and first.data_files == []
    assert first.push_manifest is not None
    assert open_remote(pushed, []).content_hash == first.content_hash
    assert main(["push", oxigraph + "/update", "--clear"]) == 0
    assert open_remote(pushed, []).content_hash != first.content_hash

    other = "https://example.org/filled-by-hand"
    by_hand = oxigraph + "/query?" + urllib.parse.urlencode({"default-graph-uri": other})
    _update(
        oxigraph,
        f"INSERT DATA {{ GRAPH <{other}> {{ <https://example.org/a> <https://example.org/b> 'c' }} }}",
    )
    before = open_remote(by_hand, [])
    assert before.push_manifest is None
    _update(
        oxigraph,
        f"INSERT DATA {{ GRAPH <{other}> {{ <https://example.org/x> <https://example.org/y> 'z' }} }}",
    )
    assert open_remote(by_hand, []).content_hash != before.content_hash
    _update(oxigraph, f"DROP GRAPH <{other}>")


def test_store_with_data_is_refused(pushed: str, tmp_path: Path, capsys) -> None:
    extra = tmp_path / "x.ttl"
    extra.write_text("")
    with pytest.raises(RemoteStoreError, match="stackgraph push"):
        open_remote(pushed, [extra])
    assert main(["sparql", "--store", pushed, "--data", str(extra), "ASK {}"]) == 2
    assert "--data cannot be combined with --store" in capsys.readouterr().err


def test_unreachable_store_is_one_clear_error() -> None:
    with pytest.raises(RemoteStoreError, match="cannot reach the endpoint"):
        open_remote(f"http://127.0.0.1:{_free_port()}/query", [])
    with pytest.raises(RemoteStoreError, match="http"):
        open_remote("ftp://example.org/sparql", [])


def test_remote_query_times_out_on_time(pushed: str) -> None:
    graph = remote_graph(pushed)
    started = time.monotonic()
    with pytest.raises(Timeout):
        run_query(graph, "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i }", timeout_s=1)
    assert time.monotonic() - started < 2.5


# ------------------------------------------------------------------------------------------ the engine


def _engine_or_skip():
    try:
        from stackgraph.graph.engine import Engine
    except ImportError as error:
        pytest.skip(f"engine not ready: {error}")
    if not hasattr(Engine, "ask"):
        pytest.skip("engine not ready: Engine.ask is missing")
    engine = Engine.load(semantic=False)
    try:
        engine.ask("where does NVLink fit?")
    except (ImportError, NotImplementedError, AttributeError) as error:
        pytest.skip(f"engine not ready: {error}")
    return Engine, engine


def _ask(engine, item: dict):
    if "turns" in item:
        from stackgraph.graph.conversation import Conversation

        conversation = Conversation()
        for turn in item["turns"]:
            answer = engine.ask(turn, conversation)
        return answer
    return engine.ask(item["q"])


def _first_difference(a: str, b: str) -> str:
    at = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
    start = max(0, at - 40)
    return f"embedded ...{a[start : at + 60]!r} vs --store ...{b[start : at + 60]!r}"


def test_development_questions_get_the_same_answers_over_the_store(pushed: str) -> None:
    if not QUESTIONS.exists():
        pytest.skip(f"{QUESTIONS} is not on this machine")
    engine_cls, embedded = _engine_or_skip()
    remote = engine_cls.load(store_url=pushed, semantic=False)
    assert remote.loaded.store_url == pushed
    items = [json.loads(line) for line in QUESTIONS.read_text().splitlines() if line.strip()]
    differences = []
    for item in items:
        local_answer, remote_answer = _ask(embedded, item), _ask(remote, item)
        if local_answer.answer != remote_answer.answer:
            differences.append(
                f"{item['id']}: {_first_difference(local_answer.answer, remote_answer.answer)}"
            )
    assert not differences, f"{len(differences)} of {len(items)} answers differ:\n" + "\n".join(differences)


def test_push_notes_what_it_pushed(oxigraph: str, tmp_path: Path) -> None:
    """The manifest names the built-in content and the built-in entities the user files add to,
    in a graph of its own (the pushed graph stays exactly the local one)."""
    from stackgraph.graph.remote import read_manifest
    from stackgraph.graph.store import builtin_hash

    extra = tmp_path / "more.ttl"
    extra.write_text(
        "@prefix kg: <https://w3id.org/stackgraph/id/> .\n"
        "@prefix skos: <http://www.w3.org/2004/02/skos/core#> .\n"
        'kg:nvlink skos:hiddenLabel "nvlink-test-alias" .\n'
    )
    target = oxigraph + "/query?" + urllib.parse.urlencode({"default-graph-uri": NAMED})
    assert main(["push", oxigraph + "/update", "--graph", NAMED, "--data", str(extra), "--clear"]) == 0
    manifest = read_manifest(remote_graph(target))
    assert manifest is not None and manifest.builtin_hash == builtin_hash()
    assert manifest.touched == {"https://w3id.org/stackgraph/id/nvlink"}
    assert count_triples(remote_graph(target)) == len(load_graph([extra]).graph)
    assert main(["push", oxigraph + "/update", "--graph", NAMED, "--clear"]) == 0
    assert read_manifest(remote_graph(target)).touched == frozenset()


# ------------------------------------------------------------------------------- without a copy

INVENTORY_GRAPH = "https://w3id.org/stackgraph/graph/inventory"


@pytest.fixture(scope="module")
def inventory_store(oxigraph: str, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path]:
    """A small generated inventory pushed with the built-in graph into a named graph of its own:
    (query URL reading that graph, the inventory file)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
    from scale_inventory import write_inventory

    inventory = write_inventory(60, tmp_path_factory.mktemp("inventory") / "inventory.ttl")
    update = oxigraph + "/update"
    assert main(["push", update, "--graph", INVENTORY_GRAPH, "--data", str(inventory), "--clear"]) == 0
    return oxigraph + "/query?" + urllib.parse.urlencode({"default-graph-uri": INVENTORY_GRAPH}), inventory


def test_store_entities_are_read_when_a_question_names_them(inventory_store) -> None:
    """At start only the built-in part is known (from local files); a question naming an inventory
    part reads that part from the store, and the answer is the one the embedded store gives."""
    from stackgraph.graph.engine import Engine
    from stackgraph.graph.remote_catalog import OverlayCatalog

    url, inventory = inventory_store
    remote = Engine.load(store_url=url, semantic=False)
    embedded = Engine.load([inventory], semantic=False)
    assert isinstance(remote.catalog, OverlayCatalog)
    part = "https://example.org/inventory/gpu-5"
    assert part in embedded.catalog and part not in remote.catalog
    assert len(remote.catalog.records) < len(embedded.catalog.records)
    for question in (
        "where does GPU gpu-000005 fit?",
        "what is switch switch-000012?",
        "where does NVLink fit?",
    ):
        assert remote.ask(question).answer == embedded.ask(question).answer, question
    assert part in remote.catalog and remote.catalog.get(part) == embedded.catalog.get(part)
    assert remote.resolve("nic nic-000011").iri == "https://example.org/inventory/nic-11"
    assert "https://example.org/inventory/node-48" not in remote.catalog  # never named


def test_a_store_not_filled_by_push_is_read_whole(oxigraph: str) -> None:
    """Without a push manifest the store may hold anything: the catalog is read from it whole."""
    from stackgraph.graph.engine import Engine
    from stackgraph.graph.remote_catalog import OverlayCatalog

    other = "https://example.org/by-hand-engine"
    _update(
        oxigraph,
        f"INSERT DATA {{ GRAPH <{other}> {{ <https://example.org/t> a <{SG_NS}Technology> ; "
        f"<http://www.w3.org/2000/01/rdf-schema#label> 'Hand Tech' }} }}",
    )
    try:
        url = oxigraph + "/query?" + urllib.parse.urlencode({"default-graph-uri": other})
        engine = Engine.load(store_url=url, semantic=False)
        assert not isinstance(engine.catalog, OverlayCatalog)
        assert list(engine.catalog.records) == []  # the class tree is not there either: nothing is an entity
    finally:
        _update(oxigraph, f"DROP GRAPH <{other}>")


def test_phrases_cover_the_spellings_of_a_name() -> None:
    from stackgraph.graph.remote_catalog import phrases

    found = phrases("where does gpu GPU-000005 fit?")
    assert {"gpu GPU-000005", "GPU GPU-000005", "gpu gpu-000005", "Gpu Gpu-000005", "fit"} <= found
    assert "fit?" not in found and "where does gpu GPU-000005 fit" in found
    assert {"GPUs", "gpus"} <= phrases("GPU")
    assert "switch" in phrases("switches") or "switche" in phrases("switches")


def test_bulk_push_of_files_is_the_local_graph(oxigraph: str, tmp_path: Path) -> None:
    """The bulk upload converts the files themselves (not the store): blank nodes (placements)
    and a TriG file's named graph must come out as the local store has them."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
    from scale_inventory import write_inventory

    inventory = write_inventory(25, tmp_path / "inventory.ttl")
    lines = (Path(__file__).parent / "data" / "sparql_user_data.ttl").read_text().splitlines()
    prefixes = [line for line in lines if line.startswith("@prefix")]
    facts = [line for line in lines if line.startswith("<")]
    trig = tmp_path / "more.trig"
    trig.write_text("\n".join(prefixes) + "\n<https://example.org/g> {\n" + "\n".join(facts) + "\n}\n")
    target = "https://w3id.org/stackgraph/graph/files"
    assert (
        main(["push", oxigraph + "/update", "--graph", target, "--data", str(inventory), "--data", str(trig)])
        == 0
    )
    remote = remote_graph(oxigraph + "/query?" + urllib.parse.urlencode({"default-graph-uri": target}))
    local = load_graph([inventory, trig]).graph
    assert _canonical(remote.query("CONSTRUCT WHERE { ?s ?p ?o }").graph) == _canonical(local)
    _update(oxigraph, f"DROP GRAPH <{target}>")


def test_names_looked_up_once_are_not_asked_again(inventory_store, monkeypatch) -> None:
    """What discovery read is remembered: the same question again sends no lookup, and a long
    pasted text is looked up by its beginning only (a bounded number of spellings)."""
    from stackgraph.graph import remote_catalog
    from stackgraph.graph.engine import Engine

    url, _inventory = inventory_store
    engine = Engine.load(store_url=url, semantic=False)
    first = engine.ask("where does volume volume-000004 fit?").answer
    assert "volume volume-000004" in first

    def refuse(*_args, **_kwargs):
        raise AssertionError("looked up again")

    monkeypatch.setattr(remote_catalog, "select_csv", refuse)
    assert engine.ask("where does volume volume-000004 fit?").answer == first
    long_text = " ".join(f"word{i} Mixed{i} CASE{i}" for i in range(500))
    beginning = " ".join(long_text.split()[: remote_catalog.MAX_LOOKUP_WORDS])
    assert remote_catalog.phrases(long_text) == remote_catalog.phrases(beginning)
