#!/usr/bin/env python
"""Load figures for issue 10 (reliability): each scenario starts its own ``stackgraph serve`` on a
free 127.0.0.1 port with default settings (semantic matching on) and drives it over HTTP.

- ``mcp``: N MCP clients at once (default 50), each making M calls (default 20) cycling through
  ``ask``, ``describe`` and ``sparql``; reports errors and p50/p95 latency.
- ``mixed``: MCP ``ask`` loops and ``/sparql`` loops side by side for S seconds (default 60, 4 + 4
  loops: the load that used to wedge the server for good); reports counts, errors, whether
  ``/healthz`` kept answering, and whether SIGTERM still stops the server.
- ``cold``: R concurrent ``/sparql`` requests (default 1,000, distinct texts) on a server that has
  not parsed a query yet; reports errors.

    python scripts/bench_load.py                 # all three, full size
    python scripts/bench_load.py cold --requests 200 --json
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_mcp import Session, free_port, percentile, start_server, wait_ready  # noqa: E402

LAYER_Q = "SELECT ?layer ?code WHERE {{ ?layer a sg:Layer ; sg:code ?code }} LIMIT {n}"


class Served:
    """A server for one scenario, stopped with SIGTERM (and the time that took) at the end."""

    def __init__(self, semantic: bool) -> None:
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.token = None
        self.process = start_server(self.port, None, [] if semantic else ["--no-semantic"])

    async def __aenter__(self) -> Served:
        self.ready_s = await wait_ready(self.base, None, self.process)
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.stop_s = stop(self.process)


def stop(process: subprocess.Popen) -> float | None:
    """Seconds SIGTERM took to stop the server, or None if it had to be killed."""
    started = time.perf_counter()
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=15)
        return round(time.perf_counter() - started, 2)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(5)
        return None


def mcp_call(i: int, names: list[str]) -> tuple[str, dict[str, Any]]:
    name = names[i % len(names)]
    kind = i % 3
    if kind == 0:
        return "ask", {"question": f"where does {name} fit?"}
    if kind == 1:
        return "describe", {"entity": name}
    return "sparql", {"query": LAYER_Q.format(n=1 + i % 40)}


async def names_of(base: str) -> list[str]:
    session = Session(f"{base}/mcp", None)
    await session.open()
    try:
        reply = await session.call("list_layers", {"limit": 50})
        items = reply["result"]["structuredContent"]["layers"]["items"]
        return list(
            dict.fromkeys(m["label"] for layer in items for m in layer["members"] if not m.get("code"))
        )[:20]
    finally:
        await session.close()


def problem(reply: dict[str, Any]) -> str | None:
    if "error" in reply:
        return f"json-rpc error: {reply['error']}"
    if reply["result"].get("isError"):
        return f"tool error: {reply['result']['content'][0]['text'][:120]}"
    return None


async def scenario_mcp(clients: int, calls: int, semantic: bool) -> dict[str, Any]:
    async with Served(semantic) as served:
        names = await names_of(served.base)
        latencies: list[float] = []
        errors: list[str] = []

        async def client(index: int) -> None:
            session = Session(f"{served.base}/mcp", None)
            try:
                await session.open()
                for i in range(calls):
                    tool, arguments = mcp_call(index * calls + i, names)
                    started = time.perf_counter()
                    try:
                        reply = await session.call(tool, arguments)
                    except (httpx.HTTPError, ValueError) as error:
                        errors.append(f"{tool}: {type(error).__name__}: {error}")
                        continue
                    if (trouble := problem(reply)) is not None:
                        errors.append(f"{tool}: {trouble}")
                    else:
                        latencies.append((time.perf_counter() - started) * 1000)
            except Exception as error:  # noqa: BLE001 - a client that cannot open loses all its calls
                errors.extend([f"session: {type(error).__name__}: {error}"] * (calls - 0))
            finally:
                await session.close()

        started = time.perf_counter()
        await asyncio.wait_for(asyncio.gather(*(client(i) for i in range(clients))), timeout=600)
        wall = time.perf_counter() - started
    return {
        "scenario": f"{clients} MCP clients x {calls} calls (ask, describe, sparql)",
        "ok": len(latencies),
        "errors": len(errors),
        "error_samples": sorted(set(errors))[:5],
        "p50_ms": round(percentile(latencies, 50), 1) if latencies else None,
        "p95_ms": round(percentile(latencies, 95), 1) if latencies else None,
        "calls_per_s": round(len(latencies) / wall, 1),
        "wall_s": round(wall, 1),
        "sigterm_stop_s": served.stop_s,
    }


async def scenario_mixed(seconds: float, askers: int, queriers: int, semantic: bool) -> dict[str, Any]:
    async with Served(semantic) as served:
        names = await names_of(served.base)
        counts = {"ask": 0, "sparql": 0}
        errors: list[str] = []
        health_gaps: list[float] = []
        stop_at = time.monotonic() + seconds

        async def asker(index: int) -> None:
            session = Session(f"{served.base}/mcp", None)
            await session.open()
            try:
                i = index
                while time.monotonic() < stop_at:
                    i += askers
                    try:
                        reply = await session.call(
                            "ask", {"question": f"which layer owns {names[i % len(names)]}?"}
                        )
                        if (trouble := problem(reply)) is not None:
                            errors.append(f"ask: {trouble}")
                    except (httpx.HTTPError, ValueError) as error:
                        errors.append(f"ask: {type(error).__name__}: {error}")
                    counts["ask"] += 1
            finally:
                await session.close()

        async def querier(index: int) -> None:
            async with httpx.AsyncClient(timeout=60) as client:
                n = 0
                while time.monotonic() < stop_at:
                    n += 1
                    query = LAYER_Q.format(n=index * 100_000 + n)  # distinct texts: no parse cache
                    try:
                        response = await client.post(f"{served.base}/sparql", data={"query": query})
                        if response.status_code != 200:
                            errors.append(f"sparql: HTTP {response.status_code} {response.text[:120]}")
                    except httpx.HTTPError as error:
                        errors.append(f"sparql: {type(error).__name__}: {error}")
                    counts["sparql"] += 1

        async def watchdog() -> None:
            async with httpx.AsyncClient(timeout=10) as client:
                while time.monotonic() < stop_at:
                    started = time.perf_counter()
                    try:
                        await client.get(f"{served.base}/healthz")
                    except httpx.HTTPError:
                        health_gaps.append(10.0)
                    health_gaps.append(time.perf_counter() - started)
                    await asyncio.sleep(1)

        await asyncio.wait_for(
            asyncio.gather(
                *(asker(i) for i in range(askers)), *(querier(i) for i in range(queriers)), watchdog()
            ),
            timeout=seconds + 120,
        )
    return {
        "scenario": f"mixed load {seconds:g} s: {askers} MCP ask loops + {queriers} /sparql loops",
        "asks": counts["ask"],
        "sparql_queries": counts["sparql"],
        "errors": len(errors),
        "error_samples": sorted(set(errors))[:5],
        "healthz_worst_s": round(max(health_gaps), 2) if health_gaps else None,
        "sigterm_stop_s": served.stop_s,
        "wedged": served.stop_s is None or (max(health_gaps) if health_gaps else 0) >= 10,
    }


async def scenario_cold(requests: int, semantic: bool) -> dict[str, Any]:
    async with Served(semantic) as served:
        limits = httpx.Limits(max_connections=requests, max_keepalive_connections=0)
        async with httpx.AsyncClient(timeout=120, limits=limits) as client:

            async def one(i: int) -> str | None:
                try:
                    response = await client.post(
                        f"{served.base}/sparql", data={"query": LAYER_Q.format(n=i + 1)}
                    )
                    return (
                        None
                        if response.status_code == 200
                        else f"HTTP {response.status_code}: {response.text[:100]}"
                    )
                except httpx.HTTPError as error:
                    return f"{type(error).__name__}: {error}"

            started = time.perf_counter()
            outcomes = await asyncio.gather(*(one(i) for i in range(requests)))
            wall = time.perf_counter() - started
    errors = [o for o in outcomes if o]
    return {
        "scenario": f"{requests} concurrent /sparql requests on a cold server",
        "ok": requests - len(errors),
        "errors": len(errors),
        "error_samples": sorted(set(errors))[:5],
        "wall_s": round(wall, 1),
        "sigterm_stop_s": served.stop_s,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "scenarios", nargs="*", metavar="SCENARIO", help="mcp, mixed or cold (default: all three)"
    )
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--askers", type=int, default=4)
    parser.add_argument("--queriers", type=int, default=4)
    parser.add_argument("--requests", type=int, default=1000)
    parser.add_argument("--no-semantic", action="store_true", help="serve without the embedding model")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if not (
        1 <= args.clients <= 200
        and 1 <= args.calls <= 1000
        and 0 < args.seconds <= 900
        and 1 <= args.requests <= 5000
    ):
        parser.error("bounds: clients 1-200, calls 1-1000, seconds up to 900, requests 1-5000")
    unknown = set(args.scenarios) - {"mcp", "mixed", "cold"}
    if unknown:
        parser.error(f"unknown scenario {sorted(unknown)[0]!r}: choose from mcp, mixed, cold")
    semantic = not args.no_semantic
    reports = []
    for name in args.scenarios or ["mcp", "mixed", "cold"]:
        if name == "mcp":
            reports.append(asyncio.run(scenario_mcp(args.clients, args.calls, semantic)))
        elif name == "mixed":
            reports.append(asyncio.run(scenario_mixed(args.seconds, args.askers, args.queriers, semantic)))
        else:
            reports.append(asyncio.run(scenario_cold(args.requests, semantic)))
        if not args.json:
            print(json.dumps(reports[-1]), flush=True)
    if args.json:
        print(json.dumps(reports, indent=2))
    return 0 if all(r["errors"] == 0 and not r.get("wedged") for r in reports) else 1


if __name__ == "__main__":
    sys.exit(main())
