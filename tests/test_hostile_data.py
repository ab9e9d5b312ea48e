"""Hostile ``--data`` files: refused in one line, quickly, without touching the network or other files.

Every hostile file is generated here. Network cases point at a listener on 127.0.0.1 that records
every connection: it must record none.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from stackgraph.graph.store import DataFileError, load_graph

PREFIXES = """@prefix sg: <https://w3id.org/stackgraph/ns#> .
@prefix kg: <https://w3id.org/stackgraph/id/> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix dct: <http://purl.org/dc/terms/> .
"""
OWN_SOURCE = """<https://example.org/own#doc> a sg:Source ; rdfs:label "Our notes" ; sg:fileName "notes.md" .
<https://example.org/own#s1> a sg:SourceSection ; rdfs:label "Parts" ; dct:isPartOf <https://example.org/own#doc> .
"""


@pytest.fixture
def listener():
    """A TCP listener on a random loopback port that counts connections."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    server.settimeout(0.2)
    hits: list[int] = []
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            hits.append(1)
            conn.close()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield server.getsockname()[1], hits
    stop.set()
    thread.join(timeout=2)
    server.close()


def _refused(path: Path) -> str:
    started = time.perf_counter()
    with pytest.raises(DataFileError) as caught:
        load_graph([path])
    assert time.perf_counter() - started < 10
    message = str(caught.value)
    assert "\n" not in message and message.startswith(str(path))
    return message


@pytest.mark.parametrize("scheme", ["http", "file"])
def test_jsonld_context_that_is_not_inline_is_never_fetched(tmp_path, listener, scheme) -> None:
    port, hits = listener
    context = (
        f"http://127.0.0.1:{port}/context.jsonld" if scheme == "http" else (tmp_path / "ctx.jsonld").as_uri()
    )
    (tmp_path / "ctx.jsonld").write_text(
        json.dumps({"@context": {"label": "http://www.w3.org/2000/01/rdf-schema#label"}})
    )
    hostile = tmp_path / "remote.jsonld"
    hostile.write_text(json.dumps({"@context": context, "@id": "https://example.org/x", "label": "x"}))
    assert "@context that is not inline" in _refused(hostile)
    time.sleep(0.3)
    assert hits == []


def test_jsonld_context_inside_a_list_or_import_is_refused(tmp_path, listener) -> None:
    port, hits = listener
    hostile = tmp_path / "listed.jsonld"
    remote = f"http://127.0.0.1:{port}/c"
    hostile.write_text(
        json.dumps(
            {
                "@context": [{"@version": 1.1, "@import": remote}],
                "@id": "https://example.org/y",
                "@type": remote,
            }
        )
    )
    _refused(hostile)
    time.sleep(0.3)
    assert hits == []


def test_an_inline_jsonld_context_loads(tmp_path) -> None:
    good = tmp_path / "inline.jsonld"
    good.write_text(
        json.dumps(
            {
                "@context": {"label": "http://www.w3.org/2000/01/rdf-schema#label"},
                "@id": "https://example.org/z",
                "label": "zed",
            }
        )
    )
    graph = load_graph([good], check_data=False).graph
    assert any(str(o) == "zed" for o in graph.objects())


def _bomb(levels: int, fanout: int) -> str:
    lines = ['<?xml version="1.0"?>', "<!DOCTYPE rdf:RDF [", '<!ENTITY lol0 "lol">']
    for i in range(1, levels):
        lines.append(f'<!ENTITY lol{i} "' + f"&lol{i - 1};" * fanout + '">')
    lines.append("]>")
    lines.append(
        '<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" '
        'xmlns:rdfs="http://www.w3.org/2000/01/rdf-schema#">'
        f'<rdf:Description rdf:about="https://example.org/a"><rdfs:label>&lol{levels - 1};</rdfs:label>'
        "</rdf:Description></rdf:RDF>"
    )
    return "\n".join(lines)


def test_rdfxml_entity_bomb_is_refused_in_a_child_without_a_backtrace(tmp_path) -> None:
    """Run in a child with a memory ceiling: were the bomb expanded, the child would die, not pass."""
    bomb = tmp_path / "bomb.rdf"
    bomb.write_text(_bomb(10, 10))
    code = (
        "import resource, sys\n"
        "resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))\n"
        "from stackgraph.cli.main import main\n"
        f"sys.exit(main(['ask', '--data', {str(bomb)!r}, 'where does NVLink fit?']))\n"
    )
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert time.perf_counter() - started < 30
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "expansion bomb" in done.stderr
    assert "panicked" not in done.stderr and "Traceback" not in done.stderr


def test_quadratic_blowup_and_external_entities_are_refused(tmp_path) -> None:
    big = "x" * 1000
    quadratic = tmp_path / "quadratic.rdf"
    quadratic.write_text(
        f'<?xml version="1.0"?>\n<!DOCTYPE r [<!ENTITY big "{big}">]>\n'
        '<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" '
        'xmlns:rdfs="http://www.w3.org/2000/01/rdf-schema#">'
        '<rdf:Description rdf:about="https://example.org/a"><rdfs:label>' + "&big;" * 2000 + "</rdfs:label>"
        "</rdf:Description></rdf:RDF>"
    )
    assert "expand to more than" in _refused(quadratic)
    external = tmp_path / "external.rdf"
    external.write_text(
        '<?xml version="1.0"?>\n<!DOCTYPE r [<!ENTITY secret SYSTEM "file:///etc/passwd">]>\n'
        '<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"/>'
    )
    assert "external entity" in _refused(external)


def test_namespace_entities_in_rdfxml_still_load(tmp_path) -> None:
    ok = tmp_path / "ns.rdf"
    ok.write_text(
        '<?xml version="1.0"?>\n<!DOCTYPE rdf:RDF [<!ENTITY ex "https://example.org/">]>\n'
        '<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" '
        'xmlns:rdfs="http://www.w3.org/2000/01/rdf-schema#">'
        '<rdf:Description rdf:about="&ex;a"><rdfs:label>a</rdfs:label></rdf:Description></rdf:RDF>'
    )
    graph = load_graph([ok], check_data=False).graph
    assert any(str(s) == "https://example.org/a" for s in graph.subjects())


def test_trig_named_graphs_are_loaded_not_dropped(tmp_path) -> None:
    trig = tmp_path / "mine.trig"
    trig.write_text(
        PREFIXES
        + "{ "
        + OWN_SOURCE
        + ' }\n<https://example.org/g> { kg:my-trig-tool a sg:Technology ; rdfs:label "trig tool" ; '
        "dct:source <https://example.org/own#s1> . }\n"
    )
    loaded = load_graph([trig])
    labels = {str(o) for o in loaded.graph.objects()}
    assert "trig tool" in labels
    from stackgraph.graph.engine import Engine

    assert Engine(loaded, semantic=False).resolve("trig tool").iri.endswith("my-trig-tool")


def test_user_facts_may_not_cite_the_builtin_seeds(tmp_path) -> None:
    citing = tmp_path / "citing.ttl"
    citing.write_text(
        PREFIXES + 'kg:mine a sg:Technology ; rdfs:label "mine" ; dct:source kg:doc-000-nine-layer-model .\n'
    )
    message = _refused(citing)
    assert "kg:mine cites kg:doc-000-nine-layer-model" in message and "your own sources" in message
    own = tmp_path / "own.ttl"
    own.write_text(
        PREFIXES
        + OWN_SOURCE
        + 'kg:mine a sg:Technology ; rdfs:label "mine" ; dct:source <https://example.org/own#s1> .\n'
    )
    assert len(load_graph([own]).graph) > len(load_graph().graph)


def test_a_failed_file_leaves_nothing_behind(tmp_path) -> None:
    good = tmp_path / "good.ttl"
    good.write_text(PREFIXES + OWN_SOURCE)
    bad = tmp_path / "bad.ttl"
    bad.write_text(PREFIXES + 'kg:x a sg:Technology ;\n  rdfs:label "broken\n')
    with pytest.raises(DataFileError) as caught:
        load_graph([good, bad])
    assert str(caught.value).startswith(f"{bad}:")
    assert len(load_graph([good], check_data=False).graph) == len(load_graph().graph) + 6


def test_unknown_format_names_the_known_ones(tmp_path) -> None:
    odd = tmp_path / "facts.csv"
    odd.write_text("a,b\n")
    assert "use .json" in _refused(odd)
