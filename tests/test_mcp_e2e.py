"""End to end: the official ``mcp`` SDK client (v2 API) against real ``stackgraph mcp`` and
``stackgraph serve`` subprocesses, over stdio and over streamable HTTP, plus the HTTP guard
(token, Origin) and the refusal to listen beyond loopback without a token.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator

import httpx
import httpx2
import pytest
from mcp import Client, MCPError, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

STACKGRAPH = [sys.executable, "-m", "stackgraph.cli"]
TOKEN = "e2e-" + os.urandom(8).hex()


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("STACKGRAPH_TOKEN", "STACKGRAPH_ALLOWED_ORIGINS")}
    env.update(extra)
    return env


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


async def _exercise(client: Client) -> None:
    """What every transport must carry: tools with schemas, calls, resources, prompts."""
    tools = {t.name: t for t in (await client.list_tools()).tools}
    assert {"ask", "where_fits", "triage", "sparql", "export_subgraph"} <= set(tools)
    assert tools["where_fits"].annotations.read_only_hint is True
    layers = await client.call_tool("list_layers", {"model": "nine"})
    assert not layers.is_error and layers.structured_content["layers"]["total"] >= 1
    member = next(
        m["label"]
        for item in layers.structured_content["layers"]["items"]
        for m in item["members"]
        if not m.get("code")
    )
    found = await client.call_tool("search", {"text": member, "limit": 3})
    assert found.structured_content["results"]["items"][0]["label"] == member
    unknown = await client.call_tool("describe", {"entity": "Qwxzy Hyperfabric 9000"})
    assert unknown.is_error and "unknown entity" in unknown.content[0].text
    ontology = await client.read_resource("stackgraph://ontology.ttl")
    assert "sg:" in ontology.contents[0].text or "stackgraph" in ontology.contents[0].text
    prompt = await client.get_prompt("place_technology", {"name": member})
    assert "where_fits" in prompt.messages[0].content.text


# ----------------------------------------------------------------------------------------- stdio


async def test_stdio_with_the_official_sdk_client():
    params = StdioServerParameters(
        command=STACKGRAPH[0], args=[*STACKGRAPH[1:], "mcp", "--no-semantic"], env=_env()
    )
    async with Client(params, read_timeout_seconds=120) as client:
        await _exercise(client)


#: Process start to the initialize answer, at most.
INITIALIZE_SECONDS = 10.0


def test_stdio_stdout_carries_only_protocol_and_initialize_is_fast():
    """Raw JSON-RPC over the pipes: time to the initialize answer, and every stdout line is protocol."""
    started = time.perf_counter()
    process = subprocess.Popen(
        [*STACKGRAPH, "mcp"],  # the default: the embedding model loads in the background
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=_env(),
    )
    assert process.stdin and process.stdout
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "e2e", "version": "1"},
        },
    }
    process.stdin.write((json.dumps(initialize) + "\n").encode())
    process.stdin.flush()
    first = json.loads(process.stdout.readline())
    latency = time.perf_counter() - started
    print(f"initialize answered {latency:.2f} s after process start")
    assert first["id"] == 1 and first["result"]["serverInfo"]["name"] == "stackgraph"
    # About 1.5 s on an idle machine. The bound catches the costly regression (importing
    # sentence-transformers and torch before serving: 10 s and more) and leaves room for a busy
    # machine (7.4 s seen with six scoring processes on the same two cores).
    assert latency < INITIALIZE_SECONDS, f"initialize took {latency:.2f} s"
    messages = [
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "list_layers", "arguments": {}},
        },
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {"name": "search", "arguments": {"text": "GPU"}},
        },
    ]
    for message in messages:
        process.stdin.write((json.dumps(message) + "\n").encode())
    process.stdin.flush()
    replies = [json.loads(process.stdout.readline()) for _ in range(2)]
    rest, errors = process.communicate(timeout=120)  # closes stdin: the server ends
    lines = [line for line in rest.decode().splitlines() if line.strip()]
    for line in lines:
        assert json.loads(line)["jsonrpc"] == "2.0", f"non-protocol output on stdout: {line[:200]!r}"
    assert {r["id"] for r in replies} == {2, 3}
    assert all("result" in r and not r["result"].get("isError") for r in replies), replies
    assert process.returncode == 0, errors.decode()[-2000:]


# ----------------------------------------------------------------------------------------- HTTP


@pytest.fixture(scope="module")
def http_server() -> Iterator[str]:
    port = _free_port()
    process = subprocess.Popen(
        [
            *STACKGRAPH,
            "serve",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--no-semantic",
            "--log-level",
            "WARNING",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=_env(STACKGRAPH_TOKEN=TOKEN),
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            assert process.poll() is None, process.stderr.read().decode() if process.stderr else ""
            try:
                response = httpx.get(
                    f"{base}/healthz", headers={"authorization": f"Bearer {TOKEN}"}, timeout=2
                )
                if response.status_code == 200 and response.json()["graph_loaded"]:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        else:
            raise AssertionError("stackgraph serve did not start")
        yield base
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()


async def test_http_with_the_official_sdk_client_and_a_token(http_server):
    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}, timeout=60) as http,
        Client(streamable_http_client(f"{http_server}/mcp", http_client=http)) as client,
    ):
        await _exercise(client)


def _leaves(error: BaseException) -> list[BaseException]:
    if isinstance(error, BaseExceptionGroup):
        return [leaf for inner in error.exceptions for leaf in _leaves(inner)]
    return [error]


async def test_http_sdk_client_without_the_token_is_refused(http_server):
    # The SDK reports the 401 as an MCPError ("Server returned an error response") inside task groups.
    with pytest.raises(BaseExceptionGroup) as refused:
        async with Client(f"{http_server}/mcp") as client:
            await client.list_tools()
    assert any(isinstance(leaf, MCPError) for leaf in _leaves(refused.value)), refused.value


def test_http_token_and_origin_checks_cover_mcp_and_sparql(http_server):
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "e2e", "version": "1"},
        },
    }
    mcp_headers = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
    auth = {"authorization": f"Bearer {TOKEN}"}
    sparql = f"{http_server}/sparql"
    query = {"query": "ASK { ?s ?p ?o }"}
    with httpx.Client(timeout=30) as http:
        assert http.post(f"{http_server}/mcp", json=initialize, headers=mcp_headers).status_code == 401
        wrong = {"authorization": "Bearer not-the-token"}
        assert (
            http.post(f"{http_server}/mcp", json=initialize, headers={**mcp_headers, **wrong}).status_code
            == 401
        )
        ok = http.post(f"{http_server}/mcp", json=initialize, headers={**mcp_headers, **auth})
        assert ok.status_code == 200
        evil = {"origin": "http://evil.example"}
        forbidden = http.post(f"{http_server}/mcp", json=initialize, headers={**mcp_headers, **auth, **evil})
        assert forbidden.status_code == 403
        local = http.post(
            f"{http_server}/mcp",
            json=initialize,
            headers={**mcp_headers, **auth, "origin": "http://localhost:5173"},
        )
        assert local.status_code == 200
        assert http.get(sparql, params=query).status_code == 401
        assert http.get(sparql, params=query, headers={**auth, **evil}).status_code == 403
        answered = http.get(
            sparql, params=query, headers={**auth, "accept": "application/sparql-results+json"}
        )
        assert answered.status_code == 200 and answered.json()["boolean"] is True


def test_serve_refuses_a_public_address_without_a_token():
    port = _free_port()
    started = time.perf_counter()
    done = subprocess.run(
        [*STACKGRAPH, "serve", "--host", "0.0.0.0", "--port", str(port)],
        capture_output=True,
        text=True,
        env=_env(),
        timeout=60,
    )
    assert done.returncode != 0
    message = done.stderr.strip().splitlines()
    assert len(message) == 1 and "STACKGRAPH_TOKEN" in message[0] and "0.0.0.0" in message[0]
    assert time.perf_counter() - started < 30
    with socket.socket() as sock:
        assert sock.connect_ex(("127.0.0.1", port)) != 0


# ------------------------------------------------------------------- what an agent reads (issue 13)


@pytest.fixture(scope="module")
def expected():
    from mcp_agent_checks import expected as compute

    from stackgraph.graph.engine import Engine

    return compute(Engine.load(semantic=False))


async def test_agent_defects_over_stdio(expected, tmp_path):
    from mcp_agent_checks import check_all, checked

    params = StdioServerParameters(
        command=STACKGRAPH[0], args=[*STACKGRAPH[1:], "mcp", "--no-semantic"], env=_env()
    )
    async with Client(params, read_timeout_seconds=120) as client:
        await check_all(client, expected, tmp_path)
        # stdio serves one client: a name the agent chooses is a conversation of its own.
        await checked(
            client,
            "ask",
            {"question": f"Where does {expected.remembered} fit?", "conversation_id": "incident-42"},
        )
        follow = await checked(
            client, "ask", {"question": "and how do I test it?", "conversation_id": "incident-42"}
        )
        assert expected.remembered in follow.structured_content["answer"]


def _http_client(base: str, **kwargs) -> tuple[httpx2.AsyncClient, Client]:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}, timeout=60)
    return http, Client(streamable_http_client(f"{base}/mcp", http_client=http), **kwargs)


async def test_agent_defects_over_http(http_server, expected, tmp_path):
    from mcp_agent_checks import check_all

    http, client = _http_client(http_server)
    async with http, client:
        await check_all(client, expected, tmp_path)


async def test_http_conversations_do_not_leak_across_sessions(http_server, expected):
    from mcp_agent_checks import check_issued_conversation, checked, error

    question = f"Where does {expected.remembered} fit?"
    follow_up = "and how do I test it?"
    # Handshake-era sessions: the same agent-chosen name in two sessions is two conversations.
    http_a, a = _http_client(http_server, mode="legacy")
    http_b, b = _http_client(http_server, mode="legacy")
    async with http_a, a, http_b, b:
        await checked(a, "ask", {"question": question, "conversation_id": "incident-42"})
        other = await checked(b, "ask", {"question": follow_up, "conversation_id": "incident-42"})
        assert expected.remembered not in other.structured_content["answer"]
        own = await checked(a, "ask", {"question": follow_up, "conversation_id": "incident-42"})
        assert expected.remembered in own.structured_content["answer"]
    # Stateless requests (the SDK's default): no session to scope a chosen name by, so it is
    # refused; the id the server issues continues the conversation.
    http_c, c = _http_client(http_server)
    async with http_c, c:
        message = error(await c.call_tool("ask", {"question": follow_up, "conversation_id": "incident-42"}))
        assert "no MCP session" in message
        await check_issued_conversation(c, expected)
