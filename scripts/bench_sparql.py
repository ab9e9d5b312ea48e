#!/usr/bin/env python3
"""Benchmark SPARQL: over HTTP (the /sparql endpoint under uvicorn), in process (run_query), and the
answer latency of the question engine with the graph in Oxigraph server (--store) vs embedded.

Usage:
    python scripts/bench_sparql.py [--seconds 5] [--concurrency 1,4] [--no-store]

The endpoint runs in a separate process (``--serve PORT`` re-runs this script as the server), so
the client does not compete with it for the GIL; on a 2-core machine client and server still share
the CPU, so read the figures as a lower bound for a real deployment. Every query goes through the
guard: parsed and vetted in a worker process (the verdict cached per query text), then run in a
worker with a deadline (graph/worker_pool.py).
"distinct text" rows add a comment with a counter to every query, so the parse cache never hits.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Callable
from pathlib import Path

POINT = "SELECT ?label WHERE { kg:nvlink rdfs:label ?label }"
TWO_HOP = "SELECT ?x ?y WHERE { kg:nvlink ?p ?x . ?x ?q ?y } LIMIT 100"
QUESTIONS = Path("/work/shared/eval/questions.jsonl")


def serve(port: int) -> None:
    import uvicorn
    from starlette.applications import Starlette

    from stackgraph.graph.store import load_graph
    from stackgraph.server.sparql_endpoint import sparql_routes

    graph = load_graph().graph
    app = Starlette(routes=sparql_routes(lambda: graph))
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", access_log=False)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for(url: str, process: subprocess.Popen, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while True:
        try:
            urllib.request.urlopen(url, timeout=1).read()
            return
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"server at {url} did not start") from None
            time.sleep(0.1)


def measure(call: Callable[[int], None], seconds: float, concurrency: int = 1) -> dict[str, float]:
    """Run ``call`` in ``concurrency`` threads for ``seconds``; queries/s and latency percentiles."""
    latencies: list[float] = []
    lock = threading.Lock()
    stop = time.monotonic() + seconds
    counter = [0]

    def worker() -> None:
        local = []
        while time.monotonic() < stop:
            with lock:
                counter[0] += 1
                n = counter[0]
            started = time.perf_counter()
            call(n)
            local.append(time.perf_counter() - started)
        with lock:
            latencies.extend(local)

    for _ in range(3):  # warm-up
        call(0)
    started = time.monotonic()
    threads = [threading.Thread(target=worker) for _ in range(concurrency)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.monotonic() - started
    latencies.sort()
    return {
        "qps": len(latencies) / elapsed,
        "p50_ms": statistics.median(latencies) * 1000,
        "p95_ms": latencies[int(len(latencies) * 0.95) - 1] * 1000,
        "n": len(latencies),
    }


def http_caller(base: str, query: str, distinct: bool) -> Callable[[int], None]:
    import httpx

    client = httpx.Client(timeout=30)  # one keep-alive connection per caller thread would be nicer;
    # httpx.Client is thread-safe and pools connections, which is what a real client does.

    def call(n: int) -> None:
        text = f"# {n}\n{query}" if distinct else query
        response = client.get(
            base, params={"query": text}, headers={"Accept": "application/sparql-results+json"}
        )
        response.raise_for_status()

    return call


def row(name: str, figures: dict[str, float]) -> str:
    return f"| {name} | {figures['qps']:,.0f} | {figures['p50_ms']:.2f} | {figures['p95_ms']:.2f} | {figures['n']:,} |"


def bench_queries(seconds: float, concurrencies: list[int]) -> list[str]:
    from stackgraph.graph.sparql import run_query
    from stackgraph.graph.store import PREFIXES, load_graph

    lines = ["| query | queries/s | p50 ms | p95 ms | n |", "|---|---|---|---|---|"]
    port = free_port()
    server = subprocess.Popen([sys.executable, __file__, "--serve", str(port)])
    base = f"http://127.0.0.1:{port}/sparql"
    try:
        wait_for(base + "?" + urllib.parse.urlencode({"query": "ASK {}"}), server)
        for name, query in (("point", POINT), ("2-hop", TWO_HOP)):
            for concurrency in concurrencies:
                for distinct in (False, True):
                    label = f"HTTP {name}, {concurrency} client{'s' if concurrency > 1 else ''}"
                    label += ", distinct text" if distinct else ""
                    lines.append(
                        row(label, measure(http_caller(base, query, distinct), seconds, concurrency))
                    )
    finally:
        server.terminate()
        server.wait(10)

    graph = load_graph().graph
    for name, query in (("point", POINT), ("2-hop", TWO_HOP)):
        lines.append(
            row(f"in process run_query {name}", measure(lambda n, q=query: run_query(graph, q), seconds))
        )
        lines.append(
            row(
                f"in process run_query {name}, distinct text",
                measure(lambda n, q=query: run_query(graph, f"# {n}\n{q}"), seconds),
            )
        )
        lines.append(
            row(
                f"in process graph.query {name} (unguarded, reference)",
                measure(lambda n, q=query: list(graph.query(q, initNs=PREFIXES)), seconds),
            )
        )
    return lines


def bench_answers() -> list[str]:
    try:
        from stackgraph.graph.engine import Engine
    except ImportError as error:
        return [f"answer latency: engine not ready ({error})"]
    binary = Path(sys.executable).with_name("oxigraph")
    binary_path = str(binary) if binary.exists() else shutil.which("oxigraph")
    if binary_path is None:
        return ["answer latency: no oxigraph binary (pip install oxigraph)"]
    if not QUESTIONS.exists():
        return [f"answer latency: {QUESTIONS} missing"]
    items = [json.loads(line) for line in QUESTIONS.read_text().splitlines() if line.strip()]
    questions = [item["q"] for item in items if "q" in item]
    port = free_port()
    with tempfile.TemporaryDirectory() as location:
        server = subprocess.Popen(
            [
                binary_path,
                "serve",
                "--location",
                location,
                "--bind",
                f"127.0.0.1:{port}",
                "--timeout-s",
                "30",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            base = f"http://127.0.0.1:{port}"
            wait_for(base + "/query?" + urllib.parse.urlencode({"query": "ASK {}"}), server)
            from stackgraph.cli.main import main

            push_started = time.perf_counter()
            main(["push", base + "/update"])
            push_s = time.perf_counter() - push_started
            results = {}
            for name, kwargs in (
                ("embedded", {}),
                ("--store (Oxigraph server)", {"store_url": base + "/query"}),
            ):
                started = time.perf_counter()
                engine = Engine.load(semantic=False, **kwargs)
                load_s = time.perf_counter() - started
                for q in questions[:3]:
                    engine.ask(q)  # warm-up
                latencies = []
                for q in questions:
                    t = time.perf_counter()
                    engine.ask(q)
                    latencies.append((time.perf_counter() - t) * 1000)
                latencies.sort()
                results[name] = (
                    load_s,
                    statistics.median(latencies),
                    latencies[int(len(latencies) * 0.95) - 1],
                )
        finally:
            server.terminate()
            server.wait(10)
    lines = [
        f"push of the built-in graph into Oxigraph server: {push_s:.2f} s",
        "",
        f"| engine (semantic off, {len(questions)} development questions) | load s | answer p50 ms | answer p95 ms |",
        "|---|---|---|---|",
    ]
    for name, (load_s, p50, p95) in results.items():
        lines.append(f"| {name} | {load_s:.2f} | {p50:.1f} | {p95:.1f} |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seconds", type=float, default=5.0, help="measuring time per row")
    parser.add_argument("--concurrency", default="1,4", help="HTTP client threads, comma-separated")
    parser.add_argument("--no-store", action="store_true", help="skip the answer-latency part")
    parser.add_argument("--serve", type=int, metavar="PORT", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.serve)
        return
    print(f"machine: {os.cpu_count()} cores, python {sys.version.split()[0]}")
    print("\n".join(bench_queries(args.seconds, [int(c) for c in args.concurrency.split(",")])))
    if not args.no_store:
        print()
        print("\n".join(bench_answers()))


if __name__ == "__main__":
    main()
