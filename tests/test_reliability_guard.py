"""The SPARQL guard against escape, comment, case, nesting and IRI tricks, on every surface.

Each query in the corpus would reach a listener on 127.0.0.1 if the guard let it through (SERVICE
to that address, or FROM it). The test asserts the surface refuses it with one line and that the
listener saw no connection at all: a refusal that still made the request would not count.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator

import pytest
import rdflib
from fastmcp import Client
from starlette.applications import Starlette
from starlette.testclient import TestClient

from stackgraph.cli.main import main
from stackgraph.graph import sparql, sparql_text, worker_pool
from stackgraph.graph.engine import Engine
from stackgraph.graph.sparql import QueryError, run_query
from stackgraph.server.mcp_server import build_server
from stackgraph.server.sparql_endpoint import sparql_routes


class Listener:
    """A TCP listener on 127.0.0.1 that records every connection it accepts."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.port = self.sock.getsockname()[1]
        self.hits: list[bytes] = []
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                conn.settimeout(1)
                with contextlib.suppress(OSError):
                    self.hits.append(conn.recv(200) or b"(connected)")

    def close(self) -> None:
        self.sock.close()


@pytest.fixture(scope="module")
def listener() -> Iterator[Listener]:
    listening = Listener()
    yield listening
    listening.close()


def corpus(port: int) -> dict[str, str]:
    """Hostile queries by name; ``URL`` is the listener."""
    url = f"http://127.0.0.1:{port}/internal"
    pattern = f"SERVICE <{url}> {{ ?s ?p ?o }}"
    return {
        # the reported escape: to rdflib a string, to Oxigraph a quote and then code
        "u-escaped quote": (f'SELECT * WHERE {{ BIND("\\u0022 AS ?a) BIND(" AS ?b) {pattern} # " AS ?c)\n}}'),
        "U-escaped quote": f'SELECT * WHERE {{ BIND("\\U00000022 AS ?a) BIND(" AS ?b) {pattern} # "\n}}',
        "u-escaped apostrophe": f"SELECT * WHERE {{ BIND('\\u0027 AS ?a) BIND(' AS ?b) {pattern} # '\n}}",
        "escape spelling an escape": f'SELECT * WHERE {{ BIND("\\u005Cu0022 AS ?a) {pattern} # "\n}}',
        "u-escaped newline ends a comment": f"SELECT * WHERE {{ ?x ?y ?z # note\\u000A {pattern} }}",
        "u-escaped keyword": f"SELECT * WHERE {{ \\u0053ERVICE <{url}> {{ ?s ?p ?o }} }}",
        "u-escaped IRI": f"SELECT * WHERE {{ SERVICE <http\\u003A//127.0.0.1:{port}/x> {{ ?s ?p ?o }} }}",
        "u-escaped IRI brackets": f"SELECT * WHERE {{ SERVICE \\u003C{url}\\u003E {{ ?s ?p ?o }} }}",
        "CR ends a comment": f"SELECT * WHERE {{ ?x ?y ?z # note\r {pattern} \n}}",
        "long-string quote escape": f"SELECT * WHERE {{ BIND('''\\u0027\\u0027\\u0027 AS ?a) {pattern} # '''\n}}",
        "lower case": f"select * where {{ service <{url}> {{ ?s ?p ?o }} }}",
        "mixed case silent": f"SELECT * WHERE {{ SeRvIcE SiLeNt <{url}> {{ ?s ?p ?o }} }}",
        "no spaces": f"SELECT*WHERE{{SERVICE<{url}>{{?s?p?o}}}}",
        "comment between tokens": f"SELECT * WHERE {{ SERVICE#x\n<{url}>#y\n{{ ?s ?p ?o }} }}",
        "variable endpoint": f"SELECT * WHERE {{ VALUES ?e {{ <{url}> }} SERVICE ?e {{ ?s ?p ?o }} }}",
        "in OPTIONAL": f"SELECT * WHERE {{ ?a ?b ?c OPTIONAL {{ {pattern} }} }}",
        "in FILTER EXISTS": f"SELECT * WHERE {{ ?a ?b ?c FILTER EXISTS {{ {pattern} }} }}",
        "in a sub-query": f"SELECT * WHERE {{ {{ SELECT * WHERE {{ {pattern} }} }} }}",
        "in ASK": f"ASK {{ {pattern} }}",
        "in CONSTRUCT": f"CONSTRUCT {{ ?s ?p ?o }} WHERE {{ {pattern} }}",
        "FROM": f"SELECT * FROM <{url}> WHERE {{ ?s ?p ?o }}",
        "FROM NAMED escaped": f"SELECT * FROM NAMED \\u003C{url}> WHERE {{ ?s ?p ?o }}",
        "LOAD": f"LOAD <{url}>",
        "deep nesting": "SELECT * WHERE " + "{ " * 40 + pattern + " }" * 40,
        "deep parentheses": "SELECT * WHERE { ?s ?p ?o FILTER(" + "(" * 60 + "?o" + ")" * 60 + ") }",
        "oversized": f"SELECT * WHERE {{ {pattern} }} #" + "x" * 96_000,
    }


NAMES = list(corpus(1))


@pytest.fixture(scope="module")
def graph(engine: Engine) -> rdflib.Graph:
    return engine.graph


def _assert_quiet(listener: Listener) -> None:
    assert listener.hits == [], f"the listener was reached: {listener.hits}"


@pytest.mark.parametrize("name", NAMES)
def test_the_guard_refuses_every_trick_and_nothing_is_fetched(name, listener, graph) -> None:
    query = corpus(listener.port)[name]
    with pytest.raises(QueryError) as caught:
        run_query(graph, query, timeout_s=3)
    message = str(caught.value)
    assert message and "\n" not in message and len(message) < 600
    _assert_quiet(listener)


@pytest.mark.parametrize("name", NAMES)
def test_the_cli_refuses_every_trick_with_one_line(name, listener, capsys) -> None:
    assert main(["sparql", "--timeout", "3", corpus(listener.port)[name]]) != 0
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.strip() and captured.err.strip().count("\n") == 0, captured.err
    assert "Traceback" not in captured.err
    _assert_quiet(listener)


@pytest.fixture(scope="module")
def http(graph) -> TestClient:
    return TestClient(Starlette(routes=sparql_routes(lambda: graph)))


@pytest.mark.parametrize("name", NAMES)
def test_the_http_endpoint_refuses_every_trick(name, listener, http) -> None:
    response = http.post("/sparql", data={"query": corpus(listener.port)[name]})
    assert response.status_code in (400, 413), response.text  # 413: over the body cap
    assert "Traceback" not in response.text
    _assert_quiet(listener)


def test_the_mcp_tool_refuses_every_trick(listener, engine) -> None:
    server = build_server(lambda: engine, semantic=False)

    async def run() -> list[str]:
        failures = []
        async with Client(server) as client:
            for name, query in corpus(listener.port).items():
                result = await client.call_tool("sparql", {"query": query}, raise_on_error=False)
                text = result.content[0].text if result.content else ""
                if not result.is_error or "Traceback" in text:
                    failures.append(f"{name}: {text[:200]}")
        return failures

    assert asyncio.run(run()) == []
    _assert_quiet(listener)


def test_a_plain_query_with_letters_escaped_still_runs(graph) -> None:
    """Escapes for letters stay legal: the guard expands them and the store runs the expanded text."""
    result = run_query(graph, 'ASK { FILTER("caf\\u00E9" = "café") }')
    assert result.boolean is True
    result = run_query(graph, "SELECT ?x WHERE { VALUES ?x { 'service' \"from\" } }")  # words in strings
    assert result.count == 2


def test_the_limits_are_named_in_the_messages() -> None:
    with pytest.raises(sparql.Refused, match=f"characters; the limit is {sparql_text.MAX_QUERY_CHARS:,}"):
        sparql.check_query("ASK {}" + " " * sparql_text.MAX_QUERY_CHARS)
    with pytest.raises(sparql.Refused, match=f"the limit is {sparql_text.MAX_NESTING}"):
        sparql.check_query("ASK " + "{" * 30 + "}" * 30)
    with pytest.raises(sparql.ParseError, match="unterminated string"):
        sparql.check_query('ASK { FILTER("abc\\q") }')


def test_many_patterns_in_one_group_are_a_one_line_refusal(graph) -> None:
    """pyparsing recurses once per triple pattern; past the parser's limit that is a refusal, not a crash."""
    query = "SELECT * WHERE { " + " ".join(f"?s{i} ?p ?o{i} ." for i in range(1000)) + " }"
    assert len(query) < 20_000  # under the size cap: the refusal is the parser's, not the size check's
    with pytest.raises(sparql.Refused, match="too complex"):
        run_query(graph, query)


def test_a_group_of_a_few_hundred_patterns_is_still_a_query() -> None:
    """Python's default recursion limit refused a group of about 90 patterns: a real query's size."""
    query = "SELECT * WHERE { " + " ".join(f"?s{i} sg:p ?o{i} ." for i in range(300)) + " }"
    assert sparql.check_query(query) == "select"


def test_concurrent_first_parses_in_one_process_all_succeed() -> None:
    """With isolation off the guard parses in-process; pyparsing's first calls must not race."""
    code = """
import threading
from stackgraph.graph import sparql
errors = []
def check(i):
    try:
        assert sparql.check_query(f"SELECT ?s WHERE {{ ?s a sg:Layer FILTER(?s != <urn:x:{i}>) }} LIMIT {i + 1}") == "select"
    except Exception as error:
        errors.append(f"{type(error).__name__}: {error}")
threads = [threading.Thread(target=check, args=(i,)) for i in range(32)]
for t in threads: t.start()
for t in threads: t.join()
print(len(errors), errors[:3])
"""
    env = {**os.environ, "STACKGRAPH_SPARQL_ISOLATION": "thread"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "0 []"


@pytest.mark.parametrize("separator", ["\u2028", "\u2029", "\u0085", "\x0b", "\x0c", "\x00"])
def test_characters_that_might_end_a_comment_never_reach_the_listener(separator, listener, graph) -> None:
    """Oxigraph ends a comment only at LF; the guard's reading ends it at CR or LF. A query whose
    SERVICE hides behind another line-ish character is either refused or runs with it commented out."""
    query = (
        f"SELECT * WHERE {{ ?x ?y ?z # note{separator} SERVICE <http://127.0.0.1:{listener.port}/x> "
        "{ ?s ?p ?o } \n }"
    )
    with contextlib.suppress(QueryError):
        run_query(graph, query, timeout_s=3)
    _assert_quiet(listener)


def test_a_full_pool_answers_busy_not_a_hang(graph, http, monkeypatch) -> None:
    pool = worker_pool.Pool(size=1)
    pool.prestart()
    monkeypatch.setattr(worker_pool, "_POOL", pool)
    monkeypatch.setattr(worker_pool, "WAIT_S", 0.3)
    slow = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i . ?j ?k ?l } # busy"

    def occupy() -> None:
        with contextlib.suppress(QueryError):
            run_query(graph, slow, timeout_s=3)

    thread = threading.Thread(target=occupy)
    thread.start()
    try:
        deadline = time.monotonic() + 10
        while pool.pids() and time.monotonic() < deadline:  # until the one worker is taken
            time.sleep(0.02)
        time.sleep(0.3)  # past the check, into the slow evaluation
        with pytest.raises(sparql.Overloaded, match="busy"):
            run_query(graph, "ASK { ?s ?p ?o } # while busy")
        response = http.post("/sparql", data={"query": "ASK { ?s ?p ?o } # while busy, over HTTP"})
        assert response.status_code == 503, response.text
    finally:
        thread.join(10)
        pool.close()


def test_a_slow_parse_is_stopped_by_the_deadline(graph) -> None:
    """Parsing is inside the time limit: a text under the size cap that pyparsing takes seconds on."""
    query = "SELECT * WHERE { ?s ?p ?o FILTER(" + " || ".join(f'?o = "v{i}"' for i in range(1200)) + ") }"
    assert len(query) < sparql_text.MAX_QUERY_CHARS
    started = time.monotonic()
    with pytest.raises(sparql.Refused, match="to parse"):
        run_query(graph, query, timeout_s=0.5)
    assert time.monotonic() - started < 3
    assert run_query(graph, "ASK { ?s ?p ?o } # after a slow parse").boolean is True
