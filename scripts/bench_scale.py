"""Benchmark large user inventories (numbers for the closing note, not a test).

For each size (entities; ~11 triples each) it generates an inventory (scripts/scale_inventory.py)
and measures, each in a fresh process with a fresh cache (the ONNX model is shared):

- first start: ``stackgraph ask --data INV "where does UALink fit?"`` with nothing cached, timed
  to the answer's first line on stdout (ready) and to the process exit (caches written);
- later start: the same command again (caches written by the first);
- warm answer: mean and p95 of ``Engine.ask`` over a few questions, in one process, after one pass;
- peak memory (max RSS) of the first start;
- with ``--server``: the same inventory pushed into an Oxigraph server on loopback
  (``stackgraph push``), then ``stackgraph ask --store URL`` cold, and warm in one process, and
  the development questions asked of the server and of the embedded store (answers compared).

Usage: python scripts/bench_scale.py [--sizes 1000 10000 100000] [--server | --server-only] [--timeout 600]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))

from scale_inventory import write_inventory  # noqa: E402

QUESTION = "where does UALink fit?"
WARM_QUESTIONS = (
    "where does UALink fit?",
    "where does GPU gpu-000005 fit?",
    "what is NVLink?",
    "which layer owns CUDA OOM?",
)

_WARM = """
import json, statistics, sys, time
from stackgraph.graph.engine import Engine
data, store = json.loads(sys.argv[1]), sys.argv[2] or None
engine = Engine.load(data, store_url=store, semantic=False)
questions = json.loads(sys.argv[3])
for q in questions: engine.ask(q)
times = []
for _ in range(5):
    for q in questions:
        t = time.perf_counter(); engine.ask(q); times.append(time.perf_counter() - t)
times.sort()
print(json.dumps({"mean_ms": 1000 * statistics.mean(times), "p95_ms": 1000 * times[int(0.95 * (len(times) - 1))],
                  "answer": engine.ask(questions[0]).answer.splitlines()[0],
                  "answers": [engine.ask(q).answer for q in questions]}))
"""


def _run(
    command: list[str], env: dict[str, str], timeout: float, stamps: dict[str, float] | None = None
) -> tuple[float, int, subprocess.CompletedProcess | None]:
    """(seconds, peak RSS in MB, result) of one process; result None when it ran past ``timeout``.

    ``stamps["ready"]`` gets the seconds until the first line of the answer reached stdout: what the
    user waits for, which can come well before the exit (a first start still writing its caches).
    """
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    streams: dict[str, str] = {}

    def read_out() -> None:
        lines = []
        for line in process.stdout:
            if not lines and stamps is not None:
                stamps["ready"] = time.perf_counter() - started
            lines.append(line)
        streams["out"] = "".join(lines)

    readers = [
        threading.Thread(target=read_out),
        threading.Thread(target=lambda: streams.__setitem__("err", process.stderr.read())),
    ]
    for reader in readers:
        reader.start()
    killer = threading.Timer(timeout, process.kill)
    killer.start()
    _pid, status, usage = os.wait4(process.pid, 0)  # reaped here, so its own rusage is ours to read
    killer.cancel()
    process.returncode = os.waitstatus_to_exitcode(status)
    for reader in readers:
        reader.join()
    seconds = time.perf_counter() - started
    rss = int(usage.ru_maxrss / 1024)
    if seconds >= timeout:
        return float("inf"), rss, None
    return (
        seconds,
        rss,
        subprocess.CompletedProcess(command, process.returncode, streams["out"], streams["err"]),
    )


def _fresh_cache(base: Path, name: str) -> Path:
    cache = base / name
    cache.mkdir(parents=True)
    models = Path(os.environ.get("STACKGRAPH_CACHE_DIR") or _default_cache()) / "models"
    if models.exists():
        (cache / "models").symlink_to(models)
    return cache


def _default_cache() -> str:
    import platformdirs

    return platformdirs.user_cache_dir("stackgraph")


def _stackgraph() -> str:
    return shutil.which("stackgraph") or str(Path(sys.executable).parent / "stackgraph")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def embedded(size: int, inventory: Path, work: Path, timeout: float) -> dict:
    env = dict(os.environ, STACKGRAPH_CACHE_DIR=str(_fresh_cache(work, f"cache-{size}")))
    command = [_stackgraph(), "ask", "--data", str(inventory), QUESTION]
    stamps: dict[str, float] = {}
    first, first_rss, result = _run(command, env, timeout, stamps)
    later, _rss, again = _run(command, env, timeout)
    warm = _warm(json.dumps([str(inventory)]), "", env, timeout)
    if result and again and (result.returncode, result.stdout) != (again.returncode, again.stdout):
        print(
            f"  first and later start differ at {size}: rc {result.returncode} vs {again.returncode}; "
            f"{result.stdout[:200]!r} vs {again.stdout[:200]!r}; stderr {result.stderr[-300:]!r}",
            file=sys.stderr,
        )
    return {
        "size": size,
        "first_s": first,
        "ready_s": stamps.get("ready", float("inf")),
        "later_s": later,
        "rss_mb": first_rss,
        "same_answer": bool(result and again and result.returncode == 0 and result.stdout == again.stdout),
        **warm,
    }


def _warm(data: str, store: str, env: dict[str, str], timeout: float) -> dict:
    command = [sys.executable, "-c", _WARM, data, store, json.dumps(list(WARM_QUESTIONS))]
    try:
        done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=timeout)
        return json.loads(done.stdout.strip().splitlines()[-1])
    except (subprocess.TimeoutExpired, json.JSONDecodeError, IndexError):
        return {
            "mean_ms": float("inf"),
            "p95_ms": float("inf"),
            "answer": "(timeout or error)",
            "answers": [],
        }


#: The development questions the server's answers are compared on with the embedded store's.
DEV_QUESTIONS = ROOT.parent / "shared" / "eval" / "questions.jsonl"


def _same_as_embedded(
    store: str, inventory: Path, work: Path, size: int, env: dict[str, str], timeout: float
) -> tuple[int, int]:
    """(answers alike, questions asked): the development set asked of the server (``--store``)
    and of the embedded store holding the same inventory (``--data``), one batch each."""
    if not DEV_QUESTIONS.is_file():
        return 0, 0
    rows = [
        json.loads(line) for line in DEV_QUESTIONS.read_text(encoding="utf-8").splitlines() if line.strip()
    ]
    text = "".join(row["q"] + "\n" for row in rows if "q" in row)
    embedded_env = dict(env, STACKGRAPH_CACHE_DIR=str(_fresh_cache(work, f"compare-cache-{size}")))
    runs = []
    for graph, run_env in ((["--store", store], env), (["--data", str(inventory)], embedded_env)):
        done = subprocess.run(
            # Without the model, as the warm figures: embedding 100k new texts takes minutes.
            [_stackgraph(), "ask", *graph, "--no-semantic", "--json", "-"],
            input=text,
            capture_output=True,
            text=True,
            env=run_env,
            timeout=timeout,
        )
        runs.append([(a["answered"], a["answer"]) for a in map(json.loads, done.stdout.splitlines())])
    remote, embedded = runs
    questions = text.splitlines()
    for question, r, e in zip(questions, remote, embedded, strict=False):
        if r != e:  # show where: the answers often agree for hundreds of characters
            at = next(
                (i for i, (a, b) in enumerate(zip(r[1], e[1], strict=False)) if a != b),
                min(len(r[1]), len(e[1])),
            )
            start = max(0, at - 60)
            print(
                f"  differs: {question!r} (answered {r[0]} / {e[0]})\n    store:    ...{r[1][start : at + 100]!r}\n"
                f"    embedded: ...{e[1][start : at + 100]!r}",
                file=sys.stderr,
            )
    return sum(r == e for r, e in zip(remote, embedded, strict=False)), len(questions)


def server(size: int, inventory: Path, work: Path, timeout: float) -> dict:
    binary = Path(sys.executable).with_name("oxigraph")
    if not binary.exists():
        return {"size": size, "error": "no oxigraph binary (pip install oxigraph==0.5.13)"}
    port = _free_port()
    location = work / f"oxigraph-{size}"
    process = subprocess.Popen(
        [str(binary), "serve", "--location", str(location), "--bind", f"127.0.0.1:{port}"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(100):
            try:
                urllib.request.urlopen(f"{base}/query?query=ASK%7B%7D", timeout=1)
                break
            except OSError:
                time.sleep(0.1)
        env = dict(os.environ, STACKGRAPH_CACHE_DIR=str(_fresh_cache(work, f"server-cache-{size}")))
        push, _rss, pushed = _run(
            [_stackgraph(), "push", f"{base}/update", "--data", str(inventory)], env, timeout
        )
        sent = re.search(r" in ([0-9.]+) s$", pushed.stdout.strip()) if pushed else None
        command = [_stackgraph(), "ask", "--store", f"{base}/query", QUESTION]
        cold, cold_rss, result = _run(command, env, timeout)
        if result is None or result.returncode != 0:
            print(f"  ask --store failed at {size}: {result and result.stderr[-300:]!r}", file=sys.stderr)
        warm = _warm("[]", f"{base}/query", env, timeout)
        same, asked = _same_as_embedded(f"{base}/query", inventory, work, size, env, timeout)
        return {
            "dev_same": same,
            "dev_asked": asked,
            "size": size,
            "push_s": push,
            "send_s": float(sent.group(1)) if sent else float("inf"),
            "cold_s": cold,
            "cold_rss_mb": cold_rss,
            "ok": bool(pushed and pushed.returncode == 0 and result and result.returncode == 0),
            **warm,
        }
    finally:
        process.terminate()
        process.wait(timeout=10)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 100000])
    parser.add_argument(
        "--server", action="store_true", help="also measure an Oxigraph server filled by push"
    )
    parser.add_argument(
        "--server-only", action="store_true", help="measure only the Oxigraph server (push, --store)"
    )
    parser.add_argument("--timeout", type=float, default=600, help="seconds per command before giving up")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="stackgraph-scale-") as tmp:
        work = Path(tmp)
        if not args.server_only:
            print(
                "| entities | first start: answer / exit | later start | warm mean / p95 | peak RSS "
                "| same answer |"
            )
            print("|---|---|---|---|---|---|")
        answers: dict[int, list[str]] = {}
        for size in args.sizes:
            inventory = write_inventory(size, work / f"inventory-{size}.ttl")
            if args.server_only:
                continue
            row = embedded(size, inventory, work, args.timeout)
            answers[size] = row.get("answers", [])
            print(
                f"| {size:,} | {row['ready_s']:.1f} s / {row['first_s']:.1f} s | {row['later_s']:.1f} s | "
                f"{row['mean_ms']:.1f} / {row['p95_ms']:.1f} ms | {row['rss_mb']:,} MB | {row['same_answer']} |",
                flush=True,
            )
        if args.server or args.server_only:
            print()
            print(
                "| entities (Oxigraph server) | push (of which sending) | cold ask --store | peak RSS "
                "| warm mean / p95 | ok |"
            )
            print("|---|---|---|---|---|---|")
            for size in args.sizes:
                inventory = work / f"inventory-{size}.ttl"
                row = server(size, inventory, work, args.timeout)
                if "error" in row:
                    print(f"| {size:,} | {row['error']} | | |")
                    continue
                print(
                    f"| {size:,} | {row['push_s']:.1f} s ({row['send_s']:.1f} s) | {row['cold_s']:.1f} s | "
                    f"{row['cold_rss_mb']:,} MB | {row['mean_ms']:.1f} / {row['p95_ms']:.1f} ms | {row['ok']} |",
                    flush=True,
                )
                print(f"  first answer line: {row['answer']}", flush=True)
                print(
                    f"  same answers as embedded on the development set: {row['dev_same']}/{row['dev_asked']}",
                    flush=True,
                )
                if answers.get(size):
                    same = row.get("answers") == answers[size]
                    print(
                        f"  same answers as embedded on {len(WARM_QUESTIONS)} questions: {same}", flush=True
                    )
    print(f"\nload average at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
