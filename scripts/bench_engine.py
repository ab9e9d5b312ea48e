"""Benchmark the question engine (numbers for the closing note, not a test).

Measures:
- load: process start to a ready engine (graph parsed, catalog built), best of 5 cold processes;
- warm answer latency over the development questions (p50, p95, max, mean), after one warm-up pass,
  and the mean over the 100 real users' questions of realworld_dev.jsonl;
- cold `stackgraph ask --json "where does UALink fit?"` (whole process, best of 5);
- cold semantic question (one that names no entity, so the embedding model is needed), best of 5.

Usage: python scripts/bench_engine.py [--questions ../shared/eval/questions.jsonl] [--runs 5]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(share * (len(ordered) - 1))))
    return ordered[index]


def cold(command: list[str], runs: int) -> float:
    best = float("inf")
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(command, capture_output=True, check=False)
        best = min(best, time.perf_counter() - started)
    return best


def warm_latencies(engine, questions: list[str]) -> list[float]:
    """Milliseconds per ask, five passes after a warm-up pass, per-text caches cleared each time."""
    for q in questions:  # warm-up: caches, lazy indexes, the embedding model
        engine.ask(q)
    latencies = []
    for _ in range(5):
        for q in questions:
            # Forget per-text lookups so each ask pays for its own linking and model encode; only
            # what is loaded once per engine (graph facts, indexes, the model) stays warm.
            engine.linker._semantic_cache.clear()
            engine.lexical._recent.clear()
            started = time.perf_counter()
            engine.ask(q)
            latencies.append((time.perf_counter() - started) * 1000)
    return latencies


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--questions", default=str(ROOT.parent / "shared" / "eval" / "questions.jsonl"))
    parser.add_argument(
        "--real-questions", default=str(ROOT.parent / "shared" / "eval" / "realworld_dev.jsonl")
    )
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()

    stackgraph = shutil.which("stackgraph") or str(Path(sys.executable).parent / "stackgraph")
    load_code = "import time; t=time.perf_counter(); from stackgraph.graph.engine import Engine; e=Engine.load(); e.catalog; print(time.perf_counter()-t)"
    loads = [
        float(
            subprocess.run(
                [sys.executable, "-c", load_code], capture_output=True, text=True, check=True
            ).stdout
        )
        for _ in range(args.runs)
    ]
    whole = cold(
        [sys.executable, "-c", "from stackgraph.graph.engine import Engine; Engine.load()"], args.runs
    )
    print(
        f"load (in process, best of {args.runs}): {min(loads) * 1000:.0f} ms; process start to ready: {whole * 1000:.0f} ms"
    )

    from stackgraph.graph.conversation import Conversation
    from stackgraph.graph.engine import Engine

    engine = Engine.load()
    items = [json.loads(line) for line in Path(args.questions).read_text().splitlines() if line.strip()]
    questions = [it["q"] for it in items if "q" in it]
    latencies = warm_latencies(engine, questions)
    for it in items:
        if "turns" in it:
            conversation = Conversation()
            for q in it["turns"]:
                engine.ask(q, conversation)
    print(
        f"warm answer latency over {len(questions)} questions x5: p50 {statistics.median(latencies):.2f} ms, "
        f"p95 {percentile(latencies, 0.95):.2f} ms, max {max(latencies):.2f} ms, mean {statistics.mean(latencies):.2f} ms"
    )
    real_path = Path(args.real_questions)
    if real_path.is_file():
        real = [json.loads(line)["q"] for line in real_path.read_text().splitlines() if line.strip()]
        real_latencies = warm_latencies(engine, real)
        print(
            f"warm answer latency over {len(real)} real users' questions x5: "
            f"mean {statistics.mean(real_latencies):.2f} ms, p50 {statistics.median(real_latencies):.2f} ms, "
            f"p95 {percentile(real_latencies, 0.95):.2f} ms"
        )
    fit = cold([stackgraph, "ask", "--json", "where does UALink fit?"], args.runs)
    print(f'cold `stackgraph ask --json "where does UALink fit?"` (best of {args.runs}): {fit:.2f} s')
    semantic_q = "my first token takes ages to arrive"
    sem = cold([stackgraph, "ask", "--json", semantic_q], args.runs)
    print(f'cold semantic `stackgraph ask --json "{semantic_q}"` (best of {args.runs}): {sem:.2f} s')


if __name__ == "__main__":
    main()
