"""The SPARQL guard, runner and formats (graph/sparql.py) and the ``stackgraph sparql`` command."""

from __future__ import annotations

import csv
import io
import json
import math
import os
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest
import rdflib
from rdflib.compare import isomorphic
from rdflib.query import Result

from stackgraph.cli import sparql as cli_sparql
from stackgraph.cli.main import main
from stackgraph.graph import sparql, worker_pool
from stackgraph.graph.sparql import (
    MAX_ROWS,
    EvaluationError,
    ParseError,
    QueryError,
    Refused,
    Timeout,
    check_query,
    format_result,
    run_query,
)
from stackgraph.graph.store import KG, SG, new_graph

# A small graph in the ontology's shape: 60 layers-ish entities, labels with awkward characters.
_TURTLE = """
@prefix sg: <https://w3id.org/stackgraph/ns#> .
@prefix kg: <https://w3id.org/stackgraph/id/> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix skos: <http://www.w3.org/2004/02/skos/core#> .
kg:nvlink a sg:Technology ; rdfs:label "NVLink" ; skos:altLabel "NVLink 5"@en ; sg:fitsIn kg:nine-L8 ;
    sg:placement [ a sg:Placement ; sg:layer kg:nine-L8 ; sg:role "scale-up interconnect" ] .
kg:nine-L8 a sg:Layer ; rdfs:label "Node Interconnect" ; sg:code "L8" ; sg:position 8 .
kg:odd a sg:Technology ; rdfs:label "tab\\there, \\"quoted\\", comma\\nand newline" .
"""


def _make_graph() -> rdflib.Graph:
    graph = new_graph()
    graph.parse(data=_TURTLE, format="turtle")
    for i in range(60):
        graph.add((KG[f"thing-{i}"], rdflib.RDF.type, SG.Technology))
        graph.add((KG[f"thing-{i}"], rdflib.RDFS.label, rdflib.Literal(f"thing {i}")))
    return graph


@pytest.fixture(scope="module")
def graph() -> rdflib.Graph:
    return _make_graph()


# ------------------------------------------------------------------------------------------ guard

UPDATES = [
    ("INSERT DATA { kg:a kg:b kg:c }", "INSERT DATA"),
    ("PREFIX ex: <http://example.org/>\nINSERT DATA { ex:a ex:b ex:c }", "INSERT DATA"),
    ("DELETE DATA { kg:nvlink rdfs:label 'NVLink' }", "DELETE DATA"),
    ("DELETE WHERE { ?s ?p ?o }", "DELETE WHERE"),
    ("DELETE { ?s ?p ?o } INSERT { ?s ?p 'x' } WHERE { ?s ?p ?o }", "DELETE/INSERT"),
    ("WITH <http://example.org/g> DELETE { ?s ?p ?o } WHERE { ?s ?p ?o }", "DELETE/INSERT"),
    ("CLEAR ALL", "CLEAR"),
    ("DROP GRAPH <http://example.org/g>", "DROP"),
    ("CREATE GRAPH <http://example.org/g>", "CREATE"),
    ("ADD DEFAULT TO <http://example.org/g>", "ADD"),
    ("MOVE DEFAULT TO <http://example.org/g>", "MOVE"),
    ("COPY DEFAULT TO <http://example.org/g>", "COPY"),
]


@pytest.mark.parametrize(("update", "operation"), UPDATES)
def test_updates_are_refused_and_change_nothing(graph: rdflib.Graph, update: str, operation: str) -> None:
    before = len(graph)
    with pytest.raises(Refused, match="not allowed") as caught:
        run_query(graph, update)
    assert operation in str(caught.value)
    assert len(graph) == before


class _Recorder(BaseHTTPRequestHandler):
    """A local HTTP server standing in for a remote endpoint: it counts every request."""

    hits: list[str] = []

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        self.hits.append(self.path)
        self.send_response(200)
        self.send_header("Content-Type", "text/turtle")
        self.end_headers()
        self.wfile.write(b"<http://example.org/s> <http://example.org/p> <http://example.org/o> .\n")

    do_POST = do_GET

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def remote_url():
    server = HTTPServer(("127.0.0.1", 0), _Recorder)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/sparql"
    server.shutdown()


def test_load_is_refused_without_fetching(graph: rdflib.Graph, remote_url: str) -> None:
    _Recorder.hits.clear()
    for text in (f"LOAD <{remote_url}>", f"LOAD SILENT <{remote_url}> INTO GRAPH <http://example.org/g>"):
        with pytest.raises(Refused, match="LOAD is not allowed"):
            run_query(graph, text)
    with pytest.raises(Refused, match="LOAD"):
        run_query(graph, f"INSERT DATA {{ kg:a kg:b kg:c }} ; LOAD <{remote_url}>")
    assert _Recorder.hits == []


SERVICE_QUERIES = [
    "SELECT * WHERE { SERVICE <{url}> { ?s ?p ?o } }",
    "SELECT * WHERE { SERVICE SILENT <{url}> { ?s ?p ?o } }",
    "SELECT * WHERE { ?s a sg:Technology OPTIONAL { SERVICE <{url}> { ?s ?p ?o } } }",
    "SELECT * WHERE { { ?s a sg:Layer } UNION { SERVICE <{url}> { ?s ?p ?o } } }",
    "SELECT * WHERE { ?s a sg:Layer MINUS { SERVICE <{url}> { ?s ?p ?o } } }",
    "SELECT * WHERE { ?s a sg:Layer FILTER EXISTS { SERVICE <{url}> { ?s ?p ?o } } }",
    "SELECT * WHERE { { SELECT ?s WHERE { SERVICE <{url}> { ?s ?p ?o } } } }",
    "ASK { GRAPH ?g { OPTIONAL { SERVICE <{url}> { ?s ?p ?o } } } }",
    "CONSTRUCT { ?s ?p ?o } WHERE { SERVICE <{url}> { ?s ?p ?o } }",
    "SELECT * WHERE { BIND(<{url}> AS ?e) SERVICE ?e { ?s ?p ?o } }",
]


@pytest.mark.parametrize("template", SERVICE_QUERIES)
def test_service_is_refused_anywhere_without_fetching(
    graph: rdflib.Graph, remote_url: str, template: str
) -> None:
    _Recorder.hits.clear()
    with pytest.raises(Refused, match="SERVICE"):
        run_query(graph, template.replace("{url}", remote_url))
    assert _Recorder.hits == []


@pytest.mark.parametrize(
    "query",
    [
        "SELECT * FROM <{url}> WHERE { ?s ?p ?o }",
        "SELECT * FROM NAMED <{url}> WHERE { GRAPH ?g { ?s ?p ?o } }",
        "ASK FROM <{url}> { ?s ?p ?o }",
        "CONSTRUCT { ?s ?p ?o } FROM <{url}> WHERE { ?s ?p ?o }",
        "DESCRIBE kg:nvlink FROM <https://w3id.org/stackgraph/id/>",
    ],
)
def test_dataset_clauses_are_refused(graph: rdflib.Graph, remote_url: str, query: str) -> None:
    _Recorder.hits.clear()
    with pytest.raises(Refused, match="FROM") as caught:
        run_query(graph, query.replace("{url}", remote_url))
    assert "drop the dataset clause" in str(caught.value)
    assert _Recorder.hits == []


def test_guard_reads_the_algebra_not_the_words(graph: rdflib.Graph) -> None:
    # "SERVICE", "FROM", "INSERT" and "LOAD" as data, names and comments are fine.
    query = """# FROM <http://example.org/> SERVICE LOAD
    SELECT ?from ?service WHERE {
      ?service rdfs:label ?from .
      FILTER(!CONTAINS(?from, "SERVICE <http://x> INSERT DATA LOAD"))
    } LIMIT 3"""
    result = run_query(graph, query)
    assert result.vars == ("from", "service")
    assert len(result.rows) == 3


def test_pathological_query_times_out_within_bounds(graph: rdflib.Graph) -> None:
    query = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i . ?j ?k ?l }"
    pool = worker_pool.shared()
    pool.prestart()
    before = set(pool.pids())
    started = time.monotonic()
    with pytest.raises(Timeout, match="timed out after 1 s") as caught:
        run_query(graph, query, timeout_s=1)
    elapsed = time.monotonic() - started
    assert 0.9 <= elapsed < 2.5, elapsed
    assert caught.value.timeout_s == 1
    # the worker that ran it was killed (not left running), and the pool is whole again
    assert [pid for pid in before if not _alive(pid)], "the query's worker must be killed, not left running"
    assert run_query(graph, "ASK { kg:nvlink ?p ?o }").boolean is True


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "State:\tZ" not in state


def test_streaming_pathological_query_is_capped_not_timed_out(graph: rdflib.Graph) -> None:
    # Without an aggregate, Oxigraph streams rows: the cap stops it long before the deadline.
    result = run_query(graph, "SELECT * WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i . ?j ?k ?l }", max_rows=50)
    assert len(result.rows) == 50 and result.truncated


def _live_children() -> list[int]:
    me = str(os.getpid())
    found = []
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            fields = dict(line.split(":\t", 1) for line in status.read_text().splitlines() if ":\t" in line)
        except OSError:
            continue
        if fields.get("PPid", "").strip() == me and not fields.get("State", "").startswith("Z"):
            found.append(int(status.parent.name))
    return found


# Every row fails the filter, and the filter cannot be pushed down: one very long ``next()``.
PATHOLOGICAL_ASK = "ASK { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i . ?j ?k ?l FILTER(STR(?c) = CONCAT(STR(?f), STR(?i), STR(?l), 'x')) }"


def test_a_timed_out_query_does_not_poison_the_next(graph: rdflib.Graph) -> None:
    with pytest.raises(Timeout):
        run_query(graph, PATHOLOGICAL_ASK, timeout_s=0.5)
    assert run_query(graph, "ASK { kg:nvlink ?p ?o }").boolean is True


def test_thread_isolation_still_answers_on_time(graph: rdflib.Graph, monkeypatch) -> None:
    # About 3 s of work: the caller gets its Timeout at 0.5 s; the abandoned thread ends on its own.
    monkeypatch.setattr(sparql, "ISOLATION", "thread")
    slow = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i FILTER(STR(?c) != CONCAT(STR(?f), STR(?i))) }"
    children = set(_live_children())
    started = time.monotonic()
    with pytest.raises(Timeout):
        run_query(graph, slow, timeout_s=0.5)
    assert time.monotonic() - started < 1.5
    assert set(_live_children()) <= children  # no process started for it
    assert run_query(graph, "ASK { kg:nvlink ?p ?o }").boolean is True


def test_memory_ceiling_stops_a_query_that_materializes(graph: rdflib.Graph, monkeypatch) -> None:
    monkeypatch.setattr(sparql, "MAX_MEMORY_MB", 48)
    query = "SELECT ?a ?d ?g WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i } ORDER BY ?c ?f ?i"
    with pytest.raises(EvaluationError, match="more than 48 MB of memory"):
        run_query(graph, query, timeout_s=20)
    assert run_query(graph, "ASK { kg:nvlink ?p ?o }").boolean is True


@pytest.mark.parametrize("bad", [0, -1, math.nan, "5", True])
def test_bad_limits_are_refused(graph: rdflib.Graph, bad: object) -> None:
    with pytest.raises(Refused, match="timeout must be a positive number"):
        run_query(graph, "ASK {}", timeout_s=bad)  # type: ignore[arg-type]
    with pytest.raises(Refused, match="row limit must be a positive number"):
        run_query(graph, "ASK {}", max_rows=bad)  # type: ignore[arg-type]


def test_limits_above_the_maximum_are_lowered(graph: rdflib.Graph) -> None:
    result = run_query(graph, "SELECT ?s WHERE { ?s a sg:Technology }", timeout_s=10_000, max_rows=10**9)
    assert result.max_rows == MAX_ROWS
    assert not result.truncated


def test_overlong_query_is_refused(graph: rdflib.Graph) -> None:
    with pytest.raises(Refused, match="characters; the limit is"):
        check_query("ASK {}" + " " * sparql.MAX_QUERY_CHARS)


# ------------------------------------------------------------------------------------------ parse errors


def test_parse_error_has_line_and_column(graph: rdflib.Graph) -> None:
    with pytest.raises(ParseError) as caught:
        run_query(graph, "SELECT ?s WHERE {\n  ?s ?p\n}")
    error = caught.value
    assert error.line == 2 and error.column == 3
    assert str(error).startswith("syntax error at line 2, column 3:")
    assert "\n" not in str(error)


def test_unknown_prefix_is_a_parse_error_at_its_position(graph: rdflib.Graph) -> None:
    with pytest.raises(ParseError, match="unknown prefix 'foo:'") as caught:
        run_query(graph, "SELECT * WHERE {\n  ?s foo:bar ?o }")
    assert (caught.value.line, caught.value.column) == (2, 6)


@pytest.mark.parametrize("text", ["", "   \n", "SELEKT * WHERE { ?s ?p ?o }", "hello"])
def test_garbage_is_a_parse_error(graph: rdflib.Graph, text: str) -> None:
    with pytest.raises(ParseError):
        run_query(graph, text)


def test_all_errors_are_query_errors() -> None:
    for cls in (ParseError, Refused, Timeout, EvaluationError):
        assert issubclass(cls, QueryError)


# ------------------------------------------------------------------------------------------ results


def test_prefixes_are_predeclared(graph: rdflib.Graph) -> None:
    result = run_query(graph, "SELECT ?l WHERE { kg:nvlink sg:fitsIn ?x ; skos:altLabel ?l }")
    assert result.rows == ((rdflib.Literal("NVLink 5", lang="en"),),)


def test_a_query_may_declare_its_own_prefixes(graph: rdflib.Graph) -> None:
    result = run_query(graph, "PREFIX t: <https://w3id.org/stackgraph/id/>\nASK { t:nvlink ?p ?o }")
    assert result.kind == "ask" and result.boolean is True


def test_row_cap_truncates_explicitly(graph: rdflib.Graph) -> None:
    result = run_query(graph, "SELECT ?s WHERE { ?s a sg:Technology }", max_rows=10)
    assert len(result.rows) == 10 and result.truncated and result.max_rows == 10
    exact = run_query(graph, "SELECT ?s WHERE { ?s a sg:Technology } LIMIT 10", max_rows=10)
    assert len(exact.rows) == 10 and not exact.truncated
    small = run_query(graph, "SELECT ?s WHERE { ?s a sg:Technology } LIMIT 5", max_rows=10)
    assert len(small.rows) == 5 and not small.truncated


def test_row_cap_applies_to_construct_triples(graph: rdflib.Graph) -> None:
    result = run_query(graph, "CONSTRUCT WHERE { ?s rdfs:label ?l }", max_rows=7)
    assert result.graph is not None and len(result.graph) == 7 and result.truncated


def test_result_kinds(graph: rdflib.Graph) -> None:
    assert run_query(graph, "ASK { kg:nothing ?p ?o }").boolean is False
    described = run_query(graph, "DESCRIBE kg:nvlink")
    assert described.kind == "describe" and (KG.nvlink, SG.fitsIn, KG["nine-L8"]) in described.graph
    unbound = run_query(
        graph, "SELECT ?s ?missing WHERE { ?s sg:code 'L8' OPTIONAL { ?s sg:nope ?missing } }"
    )
    assert unbound.rows == ((KG["nine-L8"], None),)


def test_simple_literals_come_back_without_xsd_string(graph: rdflib.Graph) -> None:
    (row,) = run_query(graph, "SELECT ?l WHERE { kg:nvlink rdfs:label ?l }").rows
    assert row[0] == rdflib.Literal("NVLink") and row[0].datatype is None


# ------------------------------------------------------------------------------------------ formats

SELECT_Q = "SELECT ?s ?label ?code WHERE { ?s rdfs:label ?label OPTIONAL { ?s sg:code ?code } } ORDER BY ?s"
CONSTRUCT_Q = "CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o FILTER(?s IN (kg:nvlink, kg:odd, kg:nine-L8)) }"


def _rows_of(result: Result) -> set[tuple]:
    return {tuple(row) for row in result}


def test_select_json_xml_tsv_round_trip_through_rdflib_parsers(graph: rdflib.Graph) -> None:
    result = run_query(graph, SELECT_Q)
    expected = set(result.rows)
    assert len(expected) == len(result.rows) > 60
    for fmt in ("json", "xml", "tsv"):
        parsed = Result.parse(io.StringIO(format_result(result, fmt)), format=fmt)
        assert [str(v) for v in parsed.vars] == ["s", "label", "code"], fmt
        assert _rows_of(parsed) == expected, fmt


def test_select_json_is_sparql_results_json(graph: rdflib.Graph) -> None:
    data = json.loads(
        format_result(run_query(graph, "SELECT ?l WHERE { kg:nvlink skos:altLabel ?l }"), "json")
    )
    assert data["head"]["vars"] == ["l"]
    assert data["results"]["bindings"] == [{"l": {"type": "literal", "value": "NVLink 5", "xml:lang": "en"}}]


def test_select_csv_quotes_awkward_values(graph: rdflib.Graph) -> None:
    text = format_result(run_query(graph, "SELECT ?s ?l WHERE { ?s rdfs:label ?l } ORDER BY ?s"), "csv")
    rows = list(csv.reader(io.StringIO(text, newline="")))
    assert rows[0] == ["s", "l"]
    assert [str(KG.odd), 'tab\there, "quoted", comma\nand newline'] in rows
    assert text.endswith("\r\n")


def test_tsv_escapes_tabs_and_newlines(graph: rdflib.Graph) -> None:
    text = format_result(run_query(graph, "SELECT ?l WHERE { kg:odd rdfs:label ?l }"), "tsv")
    assert text == '?l\n"tab\\there, \\"quoted\\", comma\\nand newline"\n'


def test_table_shows_prefixed_names_and_counts(graph: rdflib.Graph) -> None:
    result = run_query(graph, "SELECT ?s ?code WHERE { ?s sg:code ?code }")
    lines = format_result(result, "table").splitlines()
    assert lines[0].split() == ["s", "code"]
    assert lines[2].split() == ["kg:nine-L8", "L8"]
    assert lines[-1] == "(1 row)"
    capped = format_result(run_query(graph, "SELECT ?s WHERE { ?s a sg:Technology }", max_rows=3), "table")
    assert "truncated at 3" in capped.splitlines()[-1]


def test_ask_formats(graph: rdflib.Graph) -> None:
    result = run_query(graph, "ASK { kg:nvlink sg:fitsIn ?l }")
    assert json.loads(format_result(result, "json"))["boolean"] is True
    assert Result.parse(io.StringIO(format_result(result, "xml")), format="xml").askAnswer is True
    assert (
        format_result(result, "table")
        == format_result(result, "csv")
        == format_result(result, "tsv")
        == "true"
    )


@pytest.mark.parametrize(
    ("fmt", "rdflib_format"),
    [("turtle", "turtle"), ("ntriples", "nt"), ("jsonld", "json-ld"), ("xml", "xml")],
)
def test_graph_formats_round_trip(graph: rdflib.Graph, fmt: str, rdflib_format: str) -> None:
    result = run_query(graph, CONSTRUCT_Q)
    assert result.graph is not None and len(result.graph) >= 10
    parsed = rdflib.Graph().parse(data=format_result(result, fmt), format=rdflib_format)
    assert isomorphic(parsed, result.graph)


def test_graph_table(graph: rdflib.Graph) -> None:
    text = format_result(run_query(graph, "DESCRIBE kg:nine-L8"), "table")
    assert text.splitlines()[0].split() == ["subject", "predicate", "object"]
    assert "kg:nine-L8  sg:code" in " ".join(text.split("\n"))


def test_formats_not_for_the_query_form_are_rejected(graph: rdflib.Graph) -> None:
    with pytest.raises(ValueError, match="not for SELECT"):
        format_result(run_query(graph, "SELECT * WHERE { ?s ?p ?o } LIMIT 1"), "turtle")
    with pytest.raises(ValueError, match="not for CONSTRUCT"):
        format_result(run_query(graph, CONSTRUCT_Q), "csv")


def test_guard_module_imports_no_web_or_ui_framework() -> None:
    code = "import sys, stackgraph.graph.sparql; print(sorted(m for m in ('starlette', 'fastmcp', 'textual') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


# ------------------------------------------------------------------------------------------ CLI


def test_cli_format_choices_match_the_library() -> None:
    assert set(cli_sparql.FORMATS) == set(sparql.SELECT_FORMATS) | set(sparql.GRAPH_FORMATS)


LAYER_Q = "SELECT ?s ?label WHERE { ?s a sg:Source ; rdfs:label ?label } ORDER BY ?s"


@pytest.mark.parametrize("fmt", ["table", "json", "csv", "tsv", "xml"])
def test_cli_select_every_format(capsys, fmt: str) -> None:
    assert main(["sparql", "--format", fmt, LAYER_Q]) == 0
    out = capsys.readouterr().out
    if fmt == "table":
        assert out.splitlines()[0].split() == ["s", "label"] and "kg:doc-000" in out
    else:
        parsed = Result.parse(io.StringIO(out), format=fmt) if fmt != "csv" else None
        if parsed is not None:
            assert str(KG["doc-000"]) in {str(row[0]) for row in parsed}
        else:
            assert list(csv.reader(io.StringIO(out)))[0] == ["s", "label"]


@pytest.mark.parametrize(
    ("fmt", "rdflib_format"),
    [("turtle", "turtle"), ("ntriples", "nt"), ("jsonld", "json-ld"), ("xml", "xml")],
)
def test_cli_construct_every_format(capsys, fmt: str, rdflib_format: str) -> None:
    assert main(["sparql", "--format", fmt, "DESCRIBE kg:doc-000"]) == 0
    parsed = rdflib.Graph().parse(data=capsys.readouterr().out, format=rdflib_format)
    assert (KG["doc-000"], rdflib.RDF.type, SG.Source) in parsed


def test_cli_json_flag_and_ask(capsys) -> None:
    assert main(["sparql", "--json", "ASK { kg:doc-000 a sg:Source }"]) == 0
    assert json.loads(capsys.readouterr().out)["boolean"] is True
    assert main(["sparql", "ASK { kg:doc-000 a sg:Layer }"]) == 0
    assert capsys.readouterr().out == "false\n"


def test_cli_reads_a_file_and_stdin(capsys, tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / "q.rq"
    path.write_text(LAYER_Q)
    assert main(["sparql", "-f", str(path), "--format", "csv"]) == 0
    from_file = capsys.readouterr().out
    monkeypatch.setattr(sys, "stdin", io.StringIO(LAYER_Q))
    assert main(["sparql", "-f", "-", "--format", "csv"]) == 0
    assert capsys.readouterr().out == from_file and "doc-000" in from_file


def test_cli_parse_error_is_one_line_with_position_exit_2(capsys) -> None:
    assert main(["sparql", "SELECT ?s WHERE {\n  ?s ?p\n}"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "line 2, column 3" in err


def test_cli_refused_exit_2(capsys) -> None:
    assert main(["sparql", "INSERT DATA { kg:a kg:b kg:c }"]) == 2
    assert "not allowed" in capsys.readouterr().err


def test_cli_timeout_exit_3(capsys) -> None:
    code = main(
        ["sparql", "--timeout", "1", "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i }"]
    )
    assert code == 3
    assert "timed out after 1 s" in capsys.readouterr().err


def test_cli_limit_warns_on_truncation(capsys) -> None:
    assert main(["sparql", "--limit", "2", "--format", "csv", "SELECT * WHERE { ?s ?p ?o }"]) == 0
    captured = capsys.readouterr()
    assert len(list(csv.reader(io.StringIO(captured.out)))) == 3
    assert "truncated at 2 rows" in captured.err


def test_cli_usage_errors(capsys, tmp_path: Path) -> None:
    assert main(["sparql", "--format", "turtle", "SELECT * WHERE { ?s ?p ?o }"]) == 2
    assert "not for SELECT" in capsys.readouterr().err
    assert main(["sparql"]) == 2
    assert main(["sparql", "-f", str(tmp_path / "missing.rq")]) == 2
    assert "missing.rq" in capsys.readouterr().err


def test_cli_data_file_is_queried(capsys) -> None:
    extra = Path(__file__).parent / "data" / "sparql_user_data.ttl"
    query = "SELECT ?l WHERE { <https://example.org/cluster-a> rdfs:label ?l }"
    assert main(["sparql", "--data", str(extra), "--format", "csv", query]) == 0
    assert "cluster A" in capsys.readouterr().out


def test_cli_default_formats(capsys) -> None:
    assert main(["sparql", "DESCRIBE kg:doc-000"]) == 0
    described = rdflib.Graph().parse(data=capsys.readouterr().out, format="turtle")
    assert (KG["doc-000"], rdflib.RDF.type, SG.Source) in described
    assert main(["sparql", "--json", "DESCRIBE kg:doc-000"]) == 0
    assert len(rdflib.Graph().parse(data=capsys.readouterr().out, format="json-ld")) == len(described)
