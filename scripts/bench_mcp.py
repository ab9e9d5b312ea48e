#!/usr/bin/env python
"""Load benchmark for the MCP server over HTTP: N concurrent clients, each making M tool calls.

Starts ``stackgraph serve`` on a free 127.0.0.1 port itself (loopback only), waits until the graph
is loaded, warms up, then runs N clients at once. Each client opens its own HTTP connection and
MCP session (initialize, notifications/initialized) and makes M ``tools/call`` requests back to
back, cycling through technologies the graph places. Reports p50/p95/p99 latency, throughput and
errors (HTTP failures, JSON-RPC errors, ``isError`` results, timeouts).

The clients speak the streamable HTTP protocol directly with httpx, so that the figures measure
the server rather than client-side schema validation (the official SDK client spends ~5 ms of
CPU per call validating structured content, on the same two cores as the server).

    python scripts/bench_mcp.py                       # 50 clients x 50 calls of where_fits
    python scripts/bench_mcp.py --clients 10 --calls 20 --tool search --json
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from typing import Any

import httpx

MAX_CLIENTS, MAX_CALLS, MAX_SECONDS = 200, 1000, 900
PROTOCOL = "2025-06-18"
HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


@dataclass
class Stats:
    latencies_ms: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def decode(response: httpx.Response) -> dict[str, Any]:
    """The JSON-RPC message of a response, whether sent as JSON or as one SSE event."""
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        for line in response.text.splitlines():
            if line.startswith("data:"):
                return json.loads(line[5:])
        raise ValueError("event stream without data")
    return response.json()


class Session:
    """One MCP client: its own connection and session id."""

    def __init__(self, url: str, token: str | None) -> None:
        headers = dict(HEADERS)
        if token:
            headers["authorization"] = f"Bearer {token}"
        self.client = httpx.AsyncClient(headers=headers, timeout=60.0, limits=httpx.Limits(max_connections=1))
        self.url = url
        self.next_id = 0

    async def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.next_id += 1
        response = await self.client.post(
            self.url, json={"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}
        )
        response.raise_for_status()
        if sid := response.headers.get("mcp-session-id"):
            self.client.headers["mcp-session-id"] = sid
        return decode(response)

    async def open(self) -> None:
        reply = await self.request(
            "initialize",
            {
                "protocolVersion": PROTOCOL,
                "capabilities": {},
                "clientInfo": {"name": "bench_mcp", "version": "1"},
            },
        )
        if "error" in reply:
            raise RuntimeError(f"initialize failed: {reply['error']}")
        self.client.headers["mcp-protocol-version"] = reply["result"].get("protocolVersion", PROTOCOL)
        await self.client.post(self.url, json={"jsonrpc": "2.0", "method": "notifications/initialized"})

    async def call(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        return await self.request("tools/call", {"name": tool, "arguments": arguments})

    async def close(self) -> None:
        if "mcp-session-id" in self.client.headers:
            with contextlib.suppress(httpx.HTTPError):
                await self.client.delete(self.url)
        await self.client.aclose()


def arguments_for(tool: str, name: str) -> dict[str, Any]:
    return {
        "where_fits": {"technology": name},
        "describe": {"entity": name},
        "search": {"text": name},
        "neighbors": {"entity": name},
        "ask": {"question": f"where does {name} fit?"},
    }[tool]


async def pick_names(url: str, token: str | None, tool: str, wanted: int = 20) -> list[str]:
    """Technologies the graph answers ``tool`` for (checked once, before timing)."""
    session = Session(url, token)
    await session.open()
    try:
        layers = await session.call("list_layers", {"limit": 50})
        items = layers["result"]["structuredContent"]["layers"]["items"]
        names = list(
            dict.fromkeys(m["label"] for layer in items for m in layer["members"] if not m.get("code"))
        )
        good = []
        for name in names:
            reply = await session.call(tool, arguments_for(tool, name))
            if "result" in reply and not reply["result"].get("isError"):
                good.append(name)
            if len(good) >= wanted:
                break
        if not good:
            raise RuntimeError(f"no technology gets an answer from {tool}; is the graph loaded?")
        return good
    finally:
        await session.close()


async def run_client(
    url: str, token: str | None, tool: str, names: list[str], calls: int, index: int, stats: Stats
) -> None:
    session = Session(url, token)
    try:
        await session.open()
        for i in range(calls):
            name = names[(index + i) % len(names)]
            started = time.perf_counter()
            try:
                reply = await session.call(tool, arguments_for(tool, name))
            except (httpx.HTTPError, ValueError) as error:
                stats.errors.append(f"{type(error).__name__}: {error}")
                continue
            elapsed = (time.perf_counter() - started) * 1000
            if "error" in reply:
                stats.errors.append(f"json-rpc error: {reply['error']}")
            elif reply["result"].get("isError"):
                stats.errors.append(f"tool error: {reply['result']['content'][0]['text'][:120]}")
            else:
                stats.latencies_ms.append(elapsed)
    except Exception as error:  # a client that cannot even open counts all its calls as errors
        stats.errors.extend(
            [f"session failed: {type(error).__name__}: {error}"] * max(0, calls - len(stats.latencies_ms))
        )
    finally:
        await session.close()


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(p / 100 * len(ordered)) - 1))]


def start_server(port: int, token: str | None, extra: list[str]) -> subprocess.Popen:
    env = dict(os.environ)
    env.pop("STACKGRAPH_TOKEN", None)
    if token:
        env["STACKGRAPH_TOKEN"] = token
    command = [
        sys.executable,
        "-m",
        "stackgraph.cli",
        "serve",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--log-level",
        "WARNING",
        *extra,
    ]
    return subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


async def wait_ready(
    base: str, token: str | None, process: subprocess.Popen, timeout: float = 120.0
) -> float:
    started = time.perf_counter()
    headers = {"authorization": f"Bearer {token}"} if token else {}
    async with httpx.AsyncClient(headers=headers) as client:
        while time.perf_counter() - started < timeout:
            if process.poll() is not None:
                raise RuntimeError(f"server exited: {process.stderr.read() if process.stderr else ''}")
            try:
                response = await client.get(f"{base}/healthz")
                if response.status_code == 200 and response.json().get("graph_loaded"):
                    return time.perf_counter() - started
            except httpx.HTTPError:
                pass
            await asyncio.sleep(0.1)
    raise RuntimeError("server not ready in time")


async def bench(args: argparse.Namespace) -> dict[str, Any]:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    url = f"{base}/mcp"
    token = "bench-" + os.urandom(8).hex()
    extra = ["--stateless"] if args.stateless else []
    if args.no_semantic:
        extra.append("--no-semantic")
    process = start_server(port, token, extra)
    try:
        ready_s = await wait_ready(base, token, process)
        names = await pick_names(url, token, args.tool)
        stats = Stats()
        started = time.perf_counter()
        await asyncio.wait_for(
            asyncio.gather(
                *(run_client(url, token, args.tool, names, args.calls, i, stats) for i in range(args.clients))
            ),
            timeout=args.max_seconds,
        )
        wall = time.perf_counter() - started
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
    lat = stats.latencies_ms
    return {
        "tool": args.tool,
        "clients": args.clients,
        "calls_per_client": args.calls,
        "mode": "stateless" if args.stateless else "sessions",
        "ok": len(lat),
        "errors": len(stats.errors),
        "error_samples": sorted(set(stats.errors))[:5],
        "p50_ms": round(percentile(lat, 50), 2) if lat else None,
        "p95_ms": round(percentile(lat, 95), 2) if lat else None,
        "p99_ms": round(percentile(lat, 99), 2) if lat else None,
        "max_ms": round(max(lat), 2) if lat else None,
        "mean_ms": round(statistics.fmean(lat), 2) if lat else None,
        "calls_per_s": round(len(lat) / wall, 1) if wall else None,
        "wall_s": round(wall, 2),
        "server_ready_s": round(ready_s, 2),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--clients", type=int, default=50, help=f"concurrent clients (1-{MAX_CLIENTS}, default 50)"
    )
    parser.add_argument("--calls", type=int, default=50, help=f"calls per client (1-{MAX_CALLS}, default 50)")
    parser.add_argument(
        "--tool", default="where_fits", choices=["where_fits", "describe", "search", "neighbors", "ask"]
    )
    parser.add_argument("--stateless", action="store_true", help="run the server without MCP sessions")
    parser.add_argument(
        "--no-semantic", action="store_true", help="run the server without the embedding model"
    )
    parser.add_argument(
        "--max-seconds", type=float, default=300.0, help=f"give up after this long (at most {MAX_SECONDS})"
    )
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    args = parser.parse_args(argv)
    if not (
        1 <= args.clients <= MAX_CLIENTS
        and 1 <= args.calls <= MAX_CALLS
        and 0 < args.max_seconds <= MAX_SECONDS
    ):
        parser.error(f"bounds: clients 1-{MAX_CLIENTS}, calls 1-{MAX_CALLS}, max-seconds up to {MAX_SECONDS}")
    report = asyncio.run(bench(args))
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(
            f"{report['clients']} clients x {report['calls_per_client']} {report['tool']} calls ({report['mode']}): "
            f"p50 {report['p50_ms']} ms, p95 {report['p95_ms']} ms, p99 {report['p99_ms']} ms, max {report['max_ms']} ms; "
            f"{report['calls_per_s']} calls/s; errors {report['errors']}"
        )
        for sample in report["error_samples"]:
            print(f"  error: {sample}")
    return 0 if report["errors"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
