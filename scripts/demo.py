"""The main job on the built-in graph: load it once, answer a set of example questions, and show
how long it took. Run by `make demo` (the first quickstart command)."""

from __future__ import annotations

import time

from stackgraph.graph.engine import Engine

QUESTIONS = (
    "Which layer owns CUDA OOM?",
    "Where does UALink fit?",
    "How do I check NVLink links?",
    "The workload will not start and the pod is stuck in Pending",
    "What is TTFT?",
    "Why is storage a parallel data path?",
    "What technologies are in the transport layer?",
    "compare NVLink and InfiniBand",
    "What's the capital of France?",
)


def main() -> None:
    started = time.perf_counter()
    engine = Engine.load()
    print(
        f"graph loaded: {len(engine.graph):,} triples, {len(engine.catalog.records):,} entities "
        f"in {time.perf_counter() - started:.2f} s\n"
    )
    for question in QUESTIONS:
        t0 = time.perf_counter()
        answer = engine.ask(question)
        elapsed = (time.perf_counter() - t0) * 1000
        status = "answered" if answer.answered else "declined"
        print(f"Q: {question}\n   [{answer.intent}, {status}, {elapsed:.0f} ms]\nA: {answer.answer}\n")


if __name__ == "__main__":
    main()
