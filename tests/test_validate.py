"""SHACL validation (graph/validate.py, ontology/shapes.ttl), `stackgraph validate` / `stats`, and
how unreadable user files are reported (graph/store.py)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import rdflib
from rdflib.namespace import RDF, RDFS, SH, SKOS

from stackgraph.cli.main import main
from stackgraph.graph.store import KG, SG, DataFileError, load_graph, new_graph, parse_file, shapes_file
from stackgraph.graph.validate import ValidationReport, Violation, validate

DCT = rdflib.Namespace("http://purl.org/dc/terms/")
SECTION = KG["doc-000-nine-layer-model"]  # sources.ttl is fixed: every test node cites this section
PREFIXES = """@prefix sg: <https://w3id.org/stackgraph/ns#> .
@prefix kg: <https://w3id.org/stackgraph/id/> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix dct: <http://purl.org/dc/terms/> .
"""


def _listing(report: ValidationReport, limit: int = 25) -> str:
    return "\n".join(
        f"{v.focus}: {v.message} [{v.shape}] {v.path or ''} {v.value or ''}"
        for v in report.violations[:limit]
    )


@pytest.fixture(scope="module")
def builtin() -> rdflib.Graph:
    return load_graph().graph


@pytest.fixture(scope="module")
def builtin_report(builtin: rdflib.Graph) -> ValidationReport:
    return validate(builtin)


def test_builtin_graph_conforms(builtin_report: ValidationReport) -> None:
    assert builtin_report.conforms, (
        f"{len(builtin_report.violations)} violations:\n{_listing(builtin_report)}"
    )
    assert builtin_report.violations == ()


def test_validation_leaves_the_graph_unchanged(
    builtin: rdflib.Graph, builtin_report: ValidationReport
) -> None:
    assert len(builtin) == len(load_graph().graph)


# ---------------------------------------------------------------- the shapes file itself


@pytest.fixture(scope="module")
def shapes() -> rdflib.Graph:
    return rdflib.Graph().parse(shapes_file(), format="turtle")


def test_shapes_are_valid_shacl(shapes: rdflib.Graph) -> None:
    from pyshacl.entrypoints import meta_validate

    conforms, _graph, text = meta_validate(shapes)
    assert conforms, text


def test_every_reporting_shape_has_a_name_and_a_message(shapes: rdflib.Graph) -> None:
    """What users read: every shape that can produce a result says what it checks, in words."""
    in_lists = set(shapes.objects(None, RDF.first))  # sh:or members: their results are not reported
    reporting = {s for s in shapes.subjects(SH.path, None) if s not in in_lists}
    reporting |= set(shapes.objects(None, SH.sparql))
    reporting |= set(shapes.subjects(SH["or"], None))
    node_shapes = set(shapes.subjects(RDF.type, SH.NodeShape))
    assert len(reporting) > 40
    missing_message = [s for s in reporting if shapes.value(s, SH.message) is None]
    missing_name = [s for s in reporting | node_shapes if shapes.value(s, SH.name) is None]
    assert not missing_message
    assert not missing_name


# ---------------------------------------------------------------- breaking a copy of the graph


def _a_layer(graph: rdflib.Graph) -> tuple[rdflib.URIRef, rdflib.Literal, rdflib.URIRef]:
    rows = list(
        graph.query(
            "SELECT ?layer ?code ?model WHERE { ?layer a/rdfs:subClassOf* sg:Layer ; sg:code ?code ; sg:inModel ?model }"
            " ORDER BY ?layer LIMIT 1",
            initNs={"sg": str(SG), "rdfs": str(RDFS)},
        )
    )
    assert rows, "the built-in graph has no layer with a code"
    return rows[0][0], rows[0][1], rows[0][2]


def _entity(graph: rdflib.Graph, iri: rdflib.URIRef, kind: rdflib.URIRef, label: str) -> None:
    graph.add((iri, RDF.type, kind))
    graph.add((iri, RDFS.label, rdflib.Literal(label)))
    graph.add((iri, DCT.source, SECTION))


def _stress(
    graph: rdflib.Graph, workload: rdflib.URIRef, layer: rdflib.URIRef, level: rdflib.URIRef
) -> rdflib.BNode:
    node = rdflib.BNode()
    graph.add((workload, SG.stress, node))
    for p, o in (
        (RDF.type, SG.Stress),
        (SG.layer, layer),
        (SG.level, level),
        (SG.basis, SG.stated),
        (DCT.source, SECTION),
    ):
        graph.add((node, p, o))
    return node


def _break_everything(graph: rdflib.Graph) -> dict[str, dict]:
    """Apply every named break to ``graph``; return what each one must produce."""
    layer, code, model = _a_layer(graph)
    expected: dict[str, dict] = {}

    graph.remove((layer, SG.code, None))
    expected["layer without code"] = {"focus": layer, "shape": "layer code", "path": SG.code}

    duplicate = KG["test-duplicate-layer"]
    _entity(graph, duplicate, SG.Layer, "Test duplicate layer")
    other_layer = KG["test-other-layer"]
    _entity(graph, other_layer, SG.Layer, "Test other layer")
    for node in (duplicate, other_layer):
        graph.add((node, SG.code, rdflib.Literal("T1")))
        graph.add((node, SG.inModel, model))
    expected["two layers share a code in one model"] = {
        "focus": duplicate,
        "shape": "layer code unique",
        "message_has": '"T1"',
    }

    fits = KG["test-fits-without-placement"]
    _entity(graph, fits, SG.Technology, "Test fits without placement")
    graph.add((fits, SG.fitsIn, other_layer))
    expected["fitsIn without placement"] = {
        "focus": fits,
        "shape": "fitsIn has a placement",
        "value": other_layer,
    }

    unplaced = KG["test-placement-without-layer"]
    _entity(graph, unplaced, SG.Technology, "Test placement without layer")
    placement = rdflib.BNode()
    graph.add((unplaced, SG.placement, placement))
    for p, o in ((RDF.type, SG.Placement), (SG.basis, SG.stated), (DCT.source, SECTION)):
        graph.add((placement, p, o))
    expected["placement without layer"] = {
        "focus_text": f"{unplaced.n3(graph.namespace_manager)} sg:placement [ ]",
        "shape": "placement layer",
        "path": SG.layer,
    }

    command = KG["test-command-without-text"]
    _entity(graph, command, SG.Command, "Test command without text")
    graph.add((command, SG.shows, rdflib.Literal("nothing, it has no text")))
    expected["command without commandText"] = {
        "focus": command,
        "shape": "command text",
        "path": SG.commandText,
    }

    workload = KG["test-workload"]
    _entity(graph, workload, SG.Workload, "Test workload")
    _stress(graph, workload, layer, SG.extreme)
    _stress(graph, workload, layer, SG.low)
    expected["stress with a bad level"] = {
        "shape": "stress level value",
        "value": SG.extreme,
        "path": SG.level,
    }
    expected["workload with too few stresses"] = {"focus": workload, "shape": "workload stresses"}
    expected["two stresses on one layer"] = {
        "focus": workload,
        "shape": "workload stress layers distinct",
        "value": layer,
    }

    misspelt = KG["test-misspelt-layer"]
    _entity(graph, misspelt, SG.Technology, "Test misspelt layer")
    typo = KG["nine-l8-typo"]
    graph.add((misspelt, SG.fitsIn, typo))
    expected["fitsIn a misspelt layer"] = {
        "focus": misspelt,
        "shape": "fits in points at a layer",
        "value": typo,
    }
    expected["dangling reference"] = {"focus": misspelt, "shape": "reference is defined", "value": typo}

    untyped = KG["test-untyped"]
    graph.add((untyped, SG.pairsWith, misspelt))
    expected["described but untyped"] = {"focus": untyped, "shape": "described thing has a type"}

    labels = KG["test-two-labels"]
    _entity(graph, labels, SG.Technology, "Test two labels")
    graph.add((labels, RDFS.label, rdflib.Literal("Test 2 labels")))
    expected["two labels"] = {"focus": labels, "shape": "entity has one label", "path": RDFS.label}

    unsourced = KG["test-cites-a-document"]
    graph.add((unsourced, RDF.type, SG.Technology))
    graph.add((unsourced, RDFS.label, rdflib.Literal("Test cites a document")))
    graph.add((unsourced, DCT.source, KG["doc-000"]))
    expected["source is a document, not a section"] = {"focus": unsourced, "shape": "source is a section"}

    symptom = KG["test-symptom"]
    _entity(graph, symptom, SG.Symptom, "Test symptom")
    expected["symptom leads nowhere"] = {"focus": symptom, "shape": "symptom has an owner"}

    branch = KG["test-branch"]
    _entity(graph, branch, SG.TriageBranch, "Test branch")
    graph.add((branch, SG.answer, rdflib.Literal("yes")))
    graph.add((branch, SG.conclusion, rdflib.Literal("nothing")))
    expected["triage branch leads nowhere"] = {"focus": branch, "shape": "triage branch leads somewhere"}

    blank = KG["test-blank-label"]
    graph.add((blank, RDF.type, SG.Technology))
    graph.add((blank, RDFS.label, rdflib.Literal("  ")))
    graph.add((blank, DCT.source, SECTION))
    expected["blank label"] = {"focus": blank, "shape": "entity label text", "path": RDFS.label}

    unsure = KG["test-unsure-placement"]
    _entity(graph, unsure, SG.Technology, "Test unsure placement")
    graph.add((unsure, SG.fitsIn, layer))
    guess = rdflib.BNode()
    graph.add((unsure, SG.placement, guess))
    for p, o in ((RDF.type, SG.Placement), (SG.layer, layer), (SG.basis, SG.guessed), (DCT.source, SECTION)):
        graph.add((guess, p, o))
    expected["placement with an unknown basis"] = {
        "shape": "basis value",
        "value": SG.guessed,
        "path": SG.basis,
    }
    _break_statements(graph, expected, misspelt)
    _break_matrix(graph, expected)
    defined = KG["test-two-definitions"]
    _entity(graph, defined, SG.Technology, "Test two definitions")
    graph.add((defined, SKOS.definition, rdflib.Literal("One thing.")))
    graph.add((defined, SKOS.definition, rdflib.Literal("Another thing.")))
    expected["two definitions in one language"] = {"focus": defined, "shape": "one definition per language"}
    return expected


def _statement(
    graph: rdflib.Graph, name: str, triple: tuple, basis: rdflib.URIRef | None, source
) -> rdflib.URIRef:
    node = KG[name]
    graph.add((node, RDF.type, RDF.Statement))
    for p, o in zip((RDF.subject, RDF.predicate, RDF.object), triple, strict=True):
        graph.add((node, p, o))
    if basis is not None:
        graph.add((node, SG.basis, basis))
    if source is not None:
        graph.add((node, DCT.source, source))
    return node


def _break_statements(graph: rdflib.Graph, expected: dict[str, dict], subject: rdflib.URIRef) -> None:
    """Statement nodes that lack a basis, a source, a triple, or describe a triple the graph lacks."""
    triple = (subject, RDF.type, SG.Technology)
    nobasis = _statement(graph, "test-st-no-basis", triple, None, SECTION)
    expected["statement without basis"] = {"shape": "statement basis", "value": nobasis}
    nosource = _statement(graph, "test-st-no-source", triple, SG.stated, None)
    expected["statement without source"] = {"shape": "statement source", "value": nosource}
    document = _statement(graph, "test-st-document-source", triple, SG.stated, KG["doc-000"])
    expected["statement cites a document, not a section"] = {"shape": "statement source", "value": document}
    two = _statement(graph, "test-st-two-objects", triple, SG.stated, SECTION)
    graph.add((two, RDF.object, SG.Layer))
    expected["statement names two objects"] = {"shape": "statement names one triple", "value": two}
    stale = _statement(graph, "test-st-stale", (subject, SG.fitsIn, KG["nine-L1"]), SG.stated, SECTION)
    expected["statement about a triple the graph lacks"] = {"shape": "statement is asserted", "value": stale}


def _break_matrix(graph: rdflib.Graph, expected: dict[str, dict]) -> None:
    """A row whose levels spell other squares than printed, and one whose levels are too long."""
    cells = KG["test-matrix-cells"]
    _entity(graph, cells, SG.Workload, "Test matrix cells")
    graph.add((cells, SG.matrixRow, rdflib.Literal("■■·")))
    graph.add((cells, SG.stress, KG["test-stress-cells-1"]))
    graph.add((cells, SG.stress, KG["test-stress-cells-2"]))
    for node, layer, level in (
        (KG["test-stress-cells-1"], KG["nine-L1"], SG.high),
        (KG["test-stress-cells-2"], KG["nine-L2"], SG.moderate),  # the row has a dot here
    ):
        for p, o in ((RDF.type, SG.Stress), (SG.layer, layer), (SG.level, level), (SG.basis, SG.stated)):
            graph.add((node, p, o))
        graph.add((node, DCT.source, SECTION))
    expected["matrix cell differs from the printed row"] = {
        "focus": cells,
        "shape": "matrix cell matches the row",
        "value": KG["test-stress-cells-2"],
    }
    long = KG["test-matrix-long"]
    _entity(graph, long, SG.Workload, "Test matrix long")
    graph.add((long, SG.matrixRow, rdflib.Literal("■")))
    _stress(graph, long, KG["nine-L1"], SG.critical)
    expected["matrix row and levels differ in length"] = {"focus": long, "shape": "matrix row length"}


@pytest.fixture(scope="module")
def broken(builtin: rdflib.Graph) -> tuple[rdflib.Graph, dict[str, dict], ValidationReport]:
    graph = new_graph()
    graph += builtin
    expected = _break_everything(graph)
    return graph, expected, validate(graph)


BREAKS = [
    "layer without code",
    "two layers share a code in one model",
    "fitsIn without placement",
    "placement without layer",
    "command without commandText",
    "stress with a bad level",
    "workload with too few stresses",
    "two stresses on one layer",
    "fitsIn a misspelt layer",
    "dangling reference",
    "described but untyped",
    "two labels",
    "source is a document, not a section",
    "symptom leads nowhere",
    "triage branch leads nowhere",
    "blank label",
    "placement with an unknown basis",
    "statement without basis",
    "statement without source",
    "statement cites a document, not a section",
    "statement names two objects",
    "statement about a triple the graph lacks",
    "matrix cell differs from the printed row",
    "matrix row and levels differ in length",
    "two definitions in one language",
]


def _matches(violation: Violation, want: dict, graph: rdflib.Graph) -> bool:
    name = lambda node: node.n3(graph.namespace_manager)  # noqa: E731
    checks = [violation.shape == want["shape"], violation.severity == "Violation", bool(violation.message)]
    if "focus" in want:
        checks.append(violation.focus == name(want["focus"]))
    if "focus_text" in want:
        checks.append(violation.focus == want["focus_text"])
    if "path" in want:
        checks.append(violation.path == name(want["path"]))
    if "value" in want:
        checks.append(violation.value == name(want["value"]))
    if "message_has" in want:
        checks.append(want["message_has"] in violation.message)
    return all(checks)


@pytest.mark.parametrize("name", BREAKS)
def test_each_break_is_reported_by_its_shape(broken, name: str) -> None:
    graph, expected, report = broken
    assert not report.conforms
    want = expected[name]
    hits = [v for v in report.violations if _matches(v, want, graph)]
    assert hits, f"{name}: no violation matching {want}; got:\n{_listing(report, 80)}"


def test_breaks_cover_the_list(broken) -> None:
    assert sorted(broken[1]) == sorted(BREAKS)


def test_every_violation_in_the_broken_copy_comes_from_a_break(
    broken, builtin_report: ValidationReport
) -> None:
    """The built-in graph conforms, so anything reported is about a node the breaks touched."""
    _graph, _expected, report = broken
    if not builtin_report.conforms:
        pytest.fail("the built-in graph does not conform; see test_builtin_graph_conforms")
    # Statement checks report one focus (rdf:Statement) and the offending statement as the value.
    assert all(
        "test-" in v.focus or "test-" in (v.value or "") or v.shape in {"layer code"}
        for v in report.violations
    ), _listing(report, 80)


def test_messages_and_labels_are_readable(broken) -> None:
    graph, _expected, report = broken
    for violation in report.violations:
        assert "://" not in violation.focus  # prefixed names, not full IRIs
        assert not violation.message.startswith(
            ("Less than", "More than", "Value does not")
        )  # not pyshacl's default text
    labelled = [v for v in report.violations if v.focus == "kg:test-command-without-text"]
    assert labelled and labelled[0].focus_label == "Test command without text"


def test_subclass_instances_are_checked_without_the_vocabulary_in_the_graph() -> None:
    """A user graph alone (no vocabulary.ttl) still gets sg:Command checked as an sg:Entity."""
    graph = rdflib.Graph()
    graph.parse(
        data=PREFIXES + 'kg:lonely a sg:Command ; sg:commandText "ls" ; sg:shows "files" .', format="turtle"
    )
    report = validate(graph)
    assert {v.shape for v in report.violations if v.focus == "kg:lonely"} >= {"entity label", "entity source"}
    assert len(graph) == 3


def test_report_serialises(broken) -> None:
    _graph, _expected, report = broken
    body = json.loads(json.dumps(report.to_dict()))
    assert body["conforms"] is False
    first = body["violations"][0]
    assert set(first) == {"focus", "focus_label", "path", "value", "message", "shape", "shape_id", "severity"}


# ---------------------------------------------------------------- unreadable files: one line, file and line


BAD_FILES = {
    "turtle.ttl": (PREFIXES + 'kg:a rdfs:label "fine" .\nkg:b rdfs:label "broken .\n', 6),
    "dot.ttl": (PREFIXES + "kg:a sg:uses kg:b .\nkg:c sg:uses kg:d kg:e .\n", 6),
    "triples.nt": ("<http://x/a> <http://x/b> <http://x/c> .\n<http://x/a> <http://x/b> oops .\n", 2),
    "quads.trig": (
        "@prefix kg: <https://w3id.org/stackgraph/id/> .\nkg:g {\n kg:a kg:b kg:c .\n kg:a kg:b .\n}\n",
        4,
    ),
    "xml.rdf": (
        '<?xml version="1.0"?>\n<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">\n'
        '<rdf:Description rdf:about="http://x/a">\n</rdf:Descriptio>\n</rdf:RDF>\n',
        4,
    ),
    "prefix.rdf": (
        '<?xml version="1.0"?>\n<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">\n'
        '<rdf:Description rdf:about="http://x/a">\n<x:b>oops</x:b>\n</rdf:Description>\n</rdf:RDF>\n',
        4,
    ),
    "data.jsonld": ('{\n  "@id": "http://x/a",\n  "http://x/b": {"@id": "http://x/c"}\n  "oops": 1\n}\n', 4),
}


@pytest.mark.parametrize("name", sorted(BAD_FILES))
def test_malformed_file_names_its_line(tmp_path: Path, name: str) -> None:
    text, line = BAD_FILES[name]
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(DataFileError) as caught:
        parse_file(path)
    assert caught.value.line == line
    message = str(caught.value)
    assert message.startswith(f"{path}:{line}: ")
    assert "\n" not in message
    assert message.count(str(path)) == 1  # the reason does not repeat the file name
    assert len(caught.value.reason) > 5


def test_rdflib_turtle_errors_give_their_line() -> None:
    """rdflib's own Turtle parser (BadSyntax, 0-based ``lines``) is read as well as pyoxigraph's."""
    from stackgraph.graph import store

    with pytest.raises(SyntaxError) as caught:
        rdflib.Graph().parse(
            data=PREFIXES + "kg:a sg:uses kg:b .\n\nkg:c sg:uses kg:d kg:e .\n", format="turtle"
        )
    assert store._line_of(caught.value) == 7
    assert store._reason(caught.value) == "expected '.' or '}' or ']' at end of statement"


def test_a_valid_n3_file_loads(tmp_path: Path) -> None:
    path = tmp_path / "facts.n3"
    path.write_text("<http://x/a> <http://x/b> <http://x/c> .\n")
    assert len(parse_file(path)) == 1


def test_unknown_and_missing_files(tmp_path: Path) -> None:
    with pytest.raises(DataFileError, match="no such file"):
        parse_file(tmp_path / "absent.ttl")
    for name in ("notes.txt", "page.html", "noext"):
        (tmp_path / name).write_text("hello")
        with pytest.raises(DataFileError, match="unknown RDF format"):
            parse_file(tmp_path / name)


def test_a_bad_data_file_never_reaches_the_builtin_graph(tmp_path: Path, builtin: rdflib.Graph) -> None:
    size = len(builtin)
    half = tmp_path / "half.ttl"  # first statement fine, second broken: nothing of it may land
    half.write_text(PREFIXES + 'kg:half-loaded rdfs:label "half" .\nkg:b rdfs:label "broken .\n')
    with pytest.raises(DataFileError):
        load_graph([half])
    good = tmp_path / "good.ttl"
    good.write_text(PREFIXES + 'kg:extra-fact rdfs:label "extra" .\n')
    with pytest.raises(DataFileError):
        load_graph([good, half])
    again = load_graph().graph
    assert len(again) == size
    assert (KG["half-loaded"], None, None) not in again
    with pytest.raises(DataFileError, match="does not conform"):
        load_graph([good])  # parses, but an untyped entity breaks the shapes: refused whole
    assert len(load_graph([good], check_data=False).graph) == size + 1
    assert len(load_graph().graph) == size


# ---------------------------------------------------------------- the commands


def _error_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


def test_cli_validate_builtin(capsys, builtin_report: ValidationReport) -> None:
    code = main(["validate"])
    out = capsys.readouterr().out
    assert code == (0 if builtin_report.conforms else 1)
    if builtin_report.conforms:
        assert out.startswith("OK: the built-in graph conforms")


@pytest.fixture
def broken_file(tmp_path: Path) -> Path:
    path = tmp_path / "mine.ttl"
    path.write_text(
        PREFIXES
        + 'kg:my-command a sg:Command ; rdfs:label "my command" ; sg:shows "something" ;\n'
        + "    dct:source kg:doc-000-nine-layer-model .\n"
    )
    return path


def test_cli_validate_file_with_violations(capsys, broken_file: Path) -> None:
    code = main(["validate", str(broken_file)])
    out = capsys.readouterr().out
    assert code == 1
    assert "kg:my-command  (my command)" in out
    assert "A command needs exactly one sg:commandText" in out
    assert "(shape: command text)" in out
    assert re.search(
        r"^\d+ violations? on \d+ nodes?: the built-in graph with .*mine\.ttl does not conform", out, re.M
    )


def test_cli_validate_json(capsys, broken_file: Path) -> None:
    code = main(["validate", "--json", "--data", str(broken_file)])
    body = json.loads(capsys.readouterr().out)
    assert code == 1
    assert body["conforms"] is False
    assert body["data_files"] == [str(broken_file)]
    mine = [(v["focus"], v["shape"], v["path"]) for v in body["violations"] if "my-command" in v["focus"]]
    assert mine == [("kg:my-command", "command text", "sg:commandText")]


@pytest.mark.parametrize("command", [["validate"], ["stats"]])
def test_cli_malformed_data_is_one_line_with_file_and_line(
    capsys, tmp_path: Path, command: list[str]
) -> None:
    path = tmp_path / "bad.ttl"
    path.write_text(PREFIXES + "kg:a sg:uses kg:b .\nkg:c sg:uses kg:d kg:e .\n")
    code = main([*command, "--data", str(path)])
    err = _error_line(capsys.readouterr().err)
    assert code == 2
    assert err.startswith(f"stackgraph: error: {path}:6: ")


def test_cli_validate_malformed_file_argument(capsys, tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonld"
    path.write_text('{"@id": "http://x/a",\n "oops"}\n')
    assert main(["validate", str(path)]) == 2
    assert _error_line(capsys.readouterr().err).startswith(f"stackgraph: error: {path}:2: ")


@pytest.mark.parametrize(
    ("name", "reason"), [("absent.ttl", "no such file"), ("notes.txt", "unknown RDF format")]
)
def test_cli_unreadable_files(capsys, tmp_path: Path, name: str, reason: str) -> None:
    path = tmp_path / name
    if name.endswith(".txt"):
        path.write_text("not rdf")
    for command in (["validate", str(path)], ["stats", "--data", str(path)]):
        assert main(command) == 2
        err = _error_line(capsys.readouterr().err)
        assert err.startswith(f"stackgraph: error: {path}: {reason}")


def test_cli_validate_with_other_shapes(capsys, tmp_path: Path) -> None:
    shapes = tmp_path / "strict.ttl"
    shapes.write_text(
        "@prefix sh: <http://www.w3.org/ns/shacl#> .\n@prefix sg: <https://w3id.org/stackgraph/ns#> .\n"
        '<urn:x:TechnologyNote> a sh:NodeShape ; sh:targetClass sg:Technology ; sh:name "technology note" ;\n'
        '  sh:property [ sh:path sg:note ; sh:minCount 99 ; sh:name "many notes" ; sh:message "needs 99 notes" ] .\n'
    )
    assert main(["validate", "--json", "--shapes", str(shapes)]) == 1
    body = json.loads(capsys.readouterr().out)
    assert body["violations"] and {v["shape"] for v in body["violations"]} == {"many notes"}
    shapes.write_text("@prefix sh: <http://www.w3.org/ns/shacl#> .\n<urn:x:S> a sh:NodeShape ;\n")
    assert main(["validate", "--shapes", str(shapes)]) == 2
    assert _error_line(capsys.readouterr().err).startswith(f"stackgraph: error: {shapes}:")


def test_cli_stats_text(capsys) -> None:
    builtin = load_graph().graph
    assert main(["stats"]) == 0
    out = capsys.readouterr().out
    assert re.search(rf"^triples\s+{len(builtin):,}$", out, re.M)
    assert re.search(r"^sources\s+4 documents, \d+ sections$", out, re.M)
    # Statements written in our own words (sg:authored) are counted as a basis of their own.
    assert re.search(
        r"^basis\s+stated [\d,]+ · inferred [\d,]+ · reconstructed [\d,]+ · authored [\d,]+$", out, re.M
    )
    assert re.search(r"^loaded in\s+[\d.]+ s \(the built-in graph\)$", out, re.M)
    assert re.search(r"^  layer\s+\d+$", out, re.M)  # classes by their rdfs:label


def test_cli_stats_json(capsys, tmp_path: Path) -> None:
    builtin = load_graph().graph
    assert main(["stats", "--json"]) == 0
    body = json.loads(capsys.readouterr().out)
    assert body["triples"] == len(builtin)
    assert body["sources"] == 4
    assert body["sections"] == len(set(builtin.subjects(RDF.type, SG.SourceSection)))
    assert set(body["basis"]) >= {"stated", "inferred", "reconstructed"}
    placements = builtin.query(
        "SELECT (COUNT(*) AS ?n) WHERE { ?p a sg:Placement ; sg:basis ?b }", initNs={"sg": str(SG)}
    )
    assert sum(body["basis"].values()) >= int(next(iter(placements))[0])
    labels = {c["label"]: c["count"] for c in body["classes"]}
    layers = len(set(builtin.subjects(RDF.type, SG.Layer)))
    assert labels.get("layer", 0) == layers
    assert body["load_seconds"] > 0
    assert body["data_files"] == []

    extra = tmp_path / "extra.ttl"
    # User facts cite the user's own source: the built-in seed documents are not theirs to cite.
    extra.write_text(
        PREFIXES
        + 'kg:my-doc a sg:Source ; rdfs:label "my notes" ; sg:fileName "notes.md" .\n'
        + 'kg:my-doc-tools a sg:SourceSection ; rdfs:label "Tools" ; dct:isPartOf kg:my-doc .\n'
        + 'kg:my-tool a sg:Technology ; rdfs:label "my tool" ; dct:source kg:my-doc-tools .\n'
    )
    assert main(["stats", "--json", "--data", str(extra)]) == 0
    with_extra = json.loads(capsys.readouterr().out)
    assert with_extra["triples"] == len(builtin) + 9
    assert with_extra["entities"] == body["entities"] + 1
    assert with_extra["data_files"] == [str(extra)]


def test_cli_has_no_describe_of_its_own() -> None:
    """`describe` belongs to another module; inspect adds exactly validate and stats."""
    import argparse

    from stackgraph.cli import inspect

    parser = argparse.ArgumentParser()
    subparsers = parser.add_subparsers()
    inspect.register(subparsers)
    assert set(subparsers.choices) == {"validate", "stats"}
