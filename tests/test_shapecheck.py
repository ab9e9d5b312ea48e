"""The shapes compiled to SPARQL (graph/shapecheck.py) find exactly what pyshacl finds."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import rdflib

from stackgraph.graph.shapecheck import Unsupported, compile_shapes, load_checks
from stackgraph.graph.store import load_graph, shapes_file
from stackgraph.graph.validate import validate, validate_sparql

BROKEN = """@prefix sg: <https://w3id.org/stackgraph/ns#> .
@prefix kg: <https://w3id.org/stackgraph/id/> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix skos: <http://www.w3.org/2004/02/skos/core#> .
@prefix dct: <http://purl.org/dc/terms/> .
@prefix ex: <https://example.org/> .
ex:doc a sg:Source ; rdfs:label "notes" .
ex:sec a sg:SourceSection ; dct:isPartOf ex:doc .
kg:t-nolabel a sg:Technology ; dct:source ex:sec .
kg:t-twolabels a sg:Technology ; rdfs:label "one" , "two" ; dct:source ex:sec .
kg:t-blank a sg:Technology ; rdfs:label " " ; dct:source ex:sec .
kg:t-number a sg:Technology ; rdfs:label 42 ; dct:source ex:sec .
kg:t-nosource a sg:Technology ; rdfs:label "no source" .
kg:t-badsource a sg:Technology ; rdfs:label "bad source" ; dct:source kg:nine-L1 .
kg:t-fits a sg:Technology ; rdfs:label "fits only" ; dct:source ex:sec ; sg:fitsIn kg:nine-L8 .
kg:t-placed a sg:Technology ; rdfs:label "placed only" ; dct:source ex:sec ;
    sg:placement [ a sg:Placement ; sg:layer kg:nine-L8 ; sg:role "r" ; sg:basis sg:stated ; dct:source ex:sec ] .
kg:t-nolayer a sg:Technology ; rdfs:label "placement without layer" ; dct:source ex:sec ;
    sg:placement [ sg:role "r" ; sg:basis kg:nine-L2 ] .
kg:t-notlayer a sg:Technology ; rdfs:label "fits in a non-layer" ; dct:source ex:sec ; sg:fitsIn ex:doc ;
    sg:placement [ a sg:Placement ; sg:layer ex:doc ; sg:basis sg:stated ; dct:source ex:sec ] .
kg:t-dangling a sg:Technology ; rdfs:label "dangling" ; dct:source ex:sec ; skos:related kg:no-such-thing .
kg:untyped rdfs:label "untyped" ; dct:source ex:sec .
kg:c-bare a sg:Command ; rdfs:label "bare command" ; dct:source ex:sec .
kg:b-nowhere a sg:TriageBranch ; rdfs:label "leads nowhere" ; dct:source ex:sec .
kg:s-orphan a sg:Symptom ; rdfs:label "orphan symptom" ; dct:source ex:sec .
kg:l-dup a sg:Layer ; rdfs:label "duplicate" ; dct:source ex:sec ; sg:code "L1" ; sg:inModel kg:nine-layer-model .
"""


def _key(violation) -> tuple:
    return (
        violation.focus,
        violation.shape_id,
        violation.shape,
        violation.path,
        violation.value,
        violation.message,
    )


@pytest.fixture(scope="module")
def broken_graph(tmp_path_factory) -> rdflib.Graph:
    path = tmp_path_factory.mktemp("shapes") / "broken.ttl"
    path.write_text(BROKEN)
    return load_graph([path], check_data=False).graph


def test_sparql_checks_find_what_pyshacl_finds(broken_graph) -> None:
    expected = validate(broken_graph)
    found = validate_sparql(broken_graph, load_checks())
    assert not expected.conforms and not found.conforms
    assert len(expected.violations) >= 15  # the fixture breaks many shapes, not one
    assert sorted(map(_key, found.violations)) == sorted(map(_key, expected.violations))


def test_the_builtin_graph_passes_both(broken_graph) -> None:
    builtin = load_graph().graph
    started = time.perf_counter()
    report = validate_sparql(builtin, load_checks())
    assert report.conforms and report.violations == ()
    assert time.perf_counter() - started < 5


def test_progress_is_reported_for_every_check(broken_graph) -> None:
    seen: list[tuple[int, int]] = []
    checks = load_checks()
    validate_sparql(broken_graph, checks, progress=lambda done, total: seen.append((done, total)))
    assert seen[-1] == (len(checks), len(checks)) and len(seen) == len(checks)


def test_shapes_beyond_the_translation_are_refused_not_half_checked(tmp_path) -> None:
    shapes = rdflib.Graph().parse(shapes_file())
    custom = tmp_path / "custom.ttl"
    custom.write_text(
        "@prefix sh: <http://www.w3.org/ns/shacl#> . @prefix ex: <https://example.org/> .\n"
        "ex:S a sh:NodeShape ; sh:targetClass ex:C ; sh:property [ sh:path ex:p ; sh:hasValue ex:v ] .\n"
    )
    with pytest.raises(Unsupported):
        compile_shapes(rdflib.Graph().parse(custom))
    assert compile_shapes(shapes)  # the project's own shapes translate whole


def test_a_large_file_is_validated_with_progress_on_stderr(tmp_path) -> None:
    import subprocess
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
    from scale_inventory import write_inventory

    inventory = write_inventory(12_000, tmp_path / "inventory.ttl")  # ~130k triples: past pyshacl's limit
    command = [sys.executable, "-m", "stackgraph.cli", "validate", str(inventory)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "OK:" in done.stdout
    assert (
        "checking the shapes:" in done.stderr and f"{len(load_checks())}/{len(load_checks())}" in done.stderr
    )


def test_every_precheck_holds_where_its_check_finds_something(broken_graph) -> None:
    """A precheck answering false skips its check: it must be true wherever the check has rows."""
    from stackgraph.graph.shapecheck import _ask, run_checks

    checks = load_checks()
    assert sum(c.precheck is not None for c in checks) >= len(checks) // 2
    found = {f.check for f in run_checks(broken_graph, [c for c in checks if c.precheck is None])}
    broken = 0
    for check in checks:
        if check.precheck is None:
            continue
        if list(broken_graph.query(check.query)):
            broken += 1
            assert _ask(broken_graph, check.precheck), check.name
    assert broken >= 5  # maxCount, datatype, class and pattern checks the fixture breaks
    assert found  # and checks without a precheck
