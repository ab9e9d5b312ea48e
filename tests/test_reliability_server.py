"""The real server under abuse: a cold start under concurrent SPARQL, slow and surplus connections,
kill -9 in the middle of a query, idle MCP sessions, and a short mixed load. Each test starts its own
``stackgraph serve`` on a free loopback port and keeps to a few seconds; scripts/bench_load.py runs
the same scenarios at full size (1,000 requests, 50 clients x 20 calls, 60 s of mixed load).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

if not sys.platform.startswith("linux"):
    pytest.skip("process and socket checks read /proc", allow_module_level=True)

STACKGRAPH = str(Path(sys.executable).with_name("stackgraph"))
SLOW_Q = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i . ?j ?k ?l }"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class Served:
    process: subprocess.Popen
    port: int
    log: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def log_text(self) -> str:
        return self.log.read_text(errors="replace")


def start(tmp_path: Path, port: int | None = None, *, semantic: bool = False, **env: str) -> Served:
    port = port or free_port()
    log = tmp_path / f"serve-{port}-{time.monotonic_ns()}.log"
    args = [STACKGRAPH, "serve", "--port", str(port), "--log-level", "WARNING"]
    if not semantic:
        args.append("--no-semantic")
    with open(log, "wb") as out:
        process = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, env={**os.environ, **env})
    served = Served(process, port, log)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        assert process.poll() is None, served.log_text()
        with (
            contextlib.suppress(OSError),
            urllib.request.urlopen(f"{served.url}/healthz", timeout=2) as response,
        ):
            if json.load(response).get("graph_loaded"):
                return served
        time.sleep(0.1)
    raise AssertionError(f"the server did not become ready: {served.log_text()}")


def stop(served: Served) -> None:
    if served.process.poll() is None:
        served.process.send_signal(signal.SIGTERM)
        try:
            served.process.wait(15)
        except subprocess.TimeoutExpired:
            served.process.kill()
            served.process.wait(5)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Served]:
    served = start(tmp_path, STACKGRAPH_REQUEST_READ_TIMEOUT_S="1", STACKGRAPH_MAX_CONNECTIONS="30")
    yield served
    stop(served)


def sparql(served: Served, query: str, timeout: float = 30) -> tuple[int, str]:
    data = urllib.parse.urlencode({"query": query}).encode()
    request = urllib.request.Request(
        f"{served.url}/sparql", data=data, headers={"Accept": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def healthy(served: Served) -> bool:
    with urllib.request.urlopen(f"{served.url}/healthz", timeout=5) as response:
        return response.status == 200


def descendants(pid: int) -> set[int]:
    """Every live process below ``pid`` (the forkserver, its workers, the resource tracker)."""
    children: dict[int, list[int]] = {}
    for status in Path("/proc").glob("[0-9]*/status"):
        with contextlib.suppress(OSError, ValueError):
            fields = dict(line.split(":\t", 1) for line in status.read_text().splitlines() if ":\t" in line)
            if not fields.get("State", "").startswith("Z"):
                children.setdefault(int(fields["PPid"]), []).append(int(status.parent.name))
    found, stack = set(), [pid]
    while stack:
        for child in children.get(stack.pop(), []):
            found.add(child)
            stack.append(child)
    return found


# ------------------------------------------------------------------------------------------ tests


def test_a_cold_server_answers_concurrent_sparql_without_errors(tmp_path: Path) -> None:
    """pyparsing's first parses used to race: 497 of 1,000 cold requests got 500, for good."""
    served = start(tmp_path)
    try:
        _concurrent_cold_queries(served)
    finally:
        stop(served)


def _concurrent_cold_queries(server: Served) -> None:
    queries = [f"SELECT ?s WHERE {{ ?s a sg:Layer }} LIMIT {i + 1}" for i in range(200)]
    with ThreadPoolExecutor(64) as pool:
        statuses = list(pool.map(lambda q: sparql(server, q)[0], queries))
    assert statuses.count(200) == len(queries), {s: statuses.count(s) for s in set(statuses)}
    assert sparql(server, "ASK { ?s a sg:Layer }") == (200, sparql(server, "ASK { ?s a sg:Layer }")[1])


def test_a_slow_request_is_closed_and_logged_once(server: Served) -> None:
    started = time.monotonic()
    slow = [socket.create_connection(("127.0.0.1", server.port)) for _ in range(5)]
    for sock in slow:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")  # and never the rest
        sock.settimeout(5)
    silent = socket.create_connection(("127.0.0.1", server.port))  # sends nothing at all
    silent.settimeout(5)
    for sock in [*slow, silent]:
        assert sock.recv(100) == b"", "the server should close a connection that never finishes its request"
        sock.close()
    assert time.monotonic() - started < 4
    assert healthy(server)
    lines = [line for line in server.log_text().splitlines() if "no whole request" in line]
    assert 1 <= len(lines) <= 2, lines  # rate-limited: one line, with a count of the rest next time
    assert "Traceback" not in server.log_text()


def test_connections_beyond_the_cap_are_closed_at_once(server: Served) -> None:
    held = [socket.create_connection(("127.0.0.1", server.port)) for _ in range(45)]
    time.sleep(0.3)
    closed = 0
    for sock in held:
        sock.settimeout(0.2)
        with contextlib.suppress(TimeoutError, ConnectionResetError):
            closed += sock.recv(10) == b""
    assert closed >= 10, closed  # 45 opened, 30 allowed
    for sock in held:
        sock.close()
    time.sleep(0.2)
    assert healthy(server)
    lines = [line for line in server.log_text().splitlines() if "refused a connection" in line]
    assert 1 <= len(lines) <= 2, lines


def test_kill_9_mid_query_frees_the_port_and_the_workers(tmp_path: Path) -> None:
    served = start(tmp_path)
    try:
        assert sparql(served, "ASK { ?s ?p ?o }")[0] == 200  # the pool is up
        below = descendants(served.process.pid)
        assert below, "expected the forkserver and its workers below the server"

        def doomed_query() -> None:  # its server is killed under it: the connection drop is expected
            with contextlib.suppress(OSError):
                sparql(served, SLOW_Q + "\n# slow")

        threading.Thread(target=doomed_query, daemon=True).start()
        time.sleep(1.0)  # the slow query is now running in a worker
        served.process.kill()
        served.process.wait(5)
        deadline = time.monotonic() + 5
        while {pid for pid in below if Path(f"/proc/{pid}").exists() and _running(pid)}:
            left = {pid: Path(f"/proc/{pid}/cmdline").read_bytes()[:120] for pid in below if _running(pid)}
            assert time.monotonic() < deadline, f"the server's workers outlived it: {left}"
            time.sleep(0.05)
        again = start(tmp_path, served.port)  # the same port, at once
        try:
            assert sparql(again, "ASK { ?s a sg:Layer }")[0] == 200
        finally:
            stop(again)
    finally:
        stop(served)


def _running(pid: int) -> bool:
    with contextlib.suppress(OSError):
        return "State:\tZ" not in Path(f"/proc/{pid}/status").read_text()
    return False


def _mcp(served: Served, body: dict, session: str | None = None) -> tuple[int, dict, str | None]:
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    if session:
        headers["mcp-session-id"] = session
        headers["mcp-protocol-version"] = "2025-06-18"
    request = urllib.request.Request(f"{served.url}/mcp", data=json.dumps(body).encode(), headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            text = response.read().decode()
            return response.status, json.loads(text) if text else {}, response.headers.get("mcp-session-id")
    except urllib.error.HTTPError as error:
        return error.code, {}, None


def _open_session(served: Served) -> str:
    status, _, session = _mcp(
        served,
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "reliability-test", "version": "1"},
            },
        },
    )
    assert status == 200 and session
    _mcp(served, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session)
    return session


def _call(served: Served, session: str, tool: str, arguments: dict, call_id: int) -> tuple[int, dict]:
    status, body, _ = _mcp(
        served,
        {
            "jsonrpc": "2.0",
            "id": call_id,
            "method": "tools/call",
            "params": {"name": tool, "arguments": arguments},
        },
        session,
    )
    return status, body


def test_idle_mcp_sessions_expire(tmp_path: Path) -> None:
    served = start(tmp_path, STACKGRAPH_MCP_SESSION_IDLE_S="1")
    try:
        session = _open_session(served)
        assert _call(served, session, "list_layers", {}, 2)[0] == 200
        time.sleep(2.5)
        assert _call(served, session, "list_layers", {}, 3)[0] == 404  # the session is gone
        assert _call(served, _open_session(served), "list_layers", {}, 4)[0] == 200
    finally:
        stop(served)


def test_mixed_ask_and_sparql_load_does_not_wedge(tmp_path: Path) -> None:
    """The load that wedged the server for good (MCP ask with embeddings + /sparql), for 6 s."""
    served = start(tmp_path, semantic=True)
    errors: list[str] = []
    counts = {"ask": 0, "sparql": 0}
    stop_at = time.monotonic() + 6

    def asker() -> None:
        session = _open_session(served)
        n = 10
        while time.monotonic() < stop_at:
            n += 1
            status, body = _call(
                served, session, "ask", {"question": f"which layer owns NCCL timeouts? {n}"}, n
            )
            if status != 200 or body.get("result", {}).get("isError"):
                errors.append(f"ask {status} {str(body)[:200]}")
            counts["ask"] += 1

    def querier(k: int) -> None:
        n = 0
        while time.monotonic() < stop_at:
            n += 1
            status, text = sparql(served, f"SELECT ?s WHERE {{ ?s a sg:Layer }} LIMIT {k * 1000 + n}")
            if status != 200:
                errors.append(f"sparql {status} {text[:200]}")
            counts["sparql"] += 1

    try:
        threads = [threading.Thread(target=asker) for _ in range(3)]
        threads += [threading.Thread(target=querier, args=(k,)) for k in range(3)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        assert not any(thread.is_alive() for thread in threads), "a client is stuck: the server wedged"
        assert errors == []
        assert counts["ask"] > 3 and counts["sparql"] > 10, counts
        assert healthy(served)
    finally:
        stop(served)
    assert served.process.returncode is not None  # SIGTERM was honoured


def test_the_refusal_log_is_rate_limited(caplog) -> None:
    from stackgraph.server.limits import RateLimitedLog

    log = RateLimitedLog(interval=0.3)
    with caplog.at_level("WARNING", logger="stackgraph.server.limits"):
        logged = [log.warning("slow", f"closed connection {i}") for i in range(500)]
        time.sleep(0.35)
        log.warning("slow", "closed connection 500")
    assert logged.count(True) == 1
    assert [r.getMessage() for r in caplog.records] == [
        "closed connection 0",
        "closed connection 500 (and 499 more in the last 0.3 s)",
    ]


def test_the_connection_cap_stays_under_the_descriptor_limit() -> None:
    code = (
        "import resource; resource.setrlimit(resource.RLIMIT_NOFILE, (300, 300)); "
        "from stackgraph.server import limits; print(limits.raise_file_limit())"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "172", done.stderr
