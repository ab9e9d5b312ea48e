"""Score every evaluation set in one process, with the shared scorer's judge (a working tool).

`make test` scores each set by running `stackgraph ask --json -` under the shared scorer, once per
set and once per conversation: faithful, but minutes. Working on the engine needs the same verdicts
over every set in seconds, and a record to compare two versions of the engine item by item. This
script loads the engine once, asks every item (conversations turn by turn in one `Conversation`),
judges the answer with `score.py`'s own `judge`, and prints one line per set.

Usage:
    python scripts/eval_report.py                      # every set: shared dev sets + tests/eval
    python scripts/eval_report.py SET.jsonl ...        # only these sets
    python scripts/eval_report.py --dump run.jsonl     # also write each item's verdict and answer
    python scripts/eval_report.py --compare a.jsonl b.jsonl   # items whose verdict differs
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHARED_EVAL = ROOT.parent / "shared" / "eval"


def load_judge():
    """The shared scorer's `judge`, so a verdict here is the verdict `make test` gives."""
    spec = importlib.util.spec_from_file_location("shared_score", SHARED_EVAL / "score.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.judge


def default_sets() -> list[Path]:
    shared = [SHARED_EVAL / "questions.jsonl", SHARED_EVAL / "realworld_dev.jsonl"]
    return [p for p in shared if p.is_file()] + sorted((ROOT / "tests" / "eval").glob("*.jsonl"))


def score_sets(paths: list[Path]) -> list[dict]:
    from stackgraph.graph.conversation import Conversation
    from stackgraph.graph.engine import Engine

    judge = load_judge()
    engine = Engine.load()
    records = []
    for path in paths:
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            item = json.loads(line)
            if "turns" in item:
                conversation = Conversation()
                answer = None
                for turn in item["turns"]:
                    answer = engine.ask(turn, conversation)
            else:
                answer = engine.ask(item["q"])
            body = answer.to_dict()
            why = judge(item, body, 1200)
            records.append(
                {
                    "set": path.stem,
                    "id": item["id"],
                    "answerable": item.get("answerable", True),
                    "ok": why is None,
                    "why": why,
                    "q": item.get("q") or " / ".join(item["turns"]),
                    "answer": body.get("answer", ""),
                    "answered": bool(body.get("answered")),
                    "facts": body.get("facts", []),
                    "context": body.get("context"),
                }
            )
    return records


def summary(records: list[dict]) -> None:
    by_set: dict[str, list[dict]] = {}
    for record in records:
        by_set.setdefault(record["set"], []).append(record)
    for name, items in by_set.items():
        ok = sum(r["ok"] for r in items)
        ood = [r for r in items if not r["answerable"]]
        ood_answered = sum(r["answered"] for r in ood)
        print(f"{name:28s} {ok:4d}/{len(items):<4d} off-topic answered {ood_answered}/{len(ood)}")
    ok = sum(r["ok"] for r in records)
    print(f"{'total':28s} {ok:4d}/{len(records)}")


def compare(before: Path, after: Path) -> None:
    def read(path: Path) -> dict[tuple[str, str], dict]:
        rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        return {(r["set"], r["id"]): r for r in rows}

    old, new = read(before), read(after)
    gained = lost = 0
    for key in sorted(old.keys() & new.keys()):
        a, b = old[key], new[key]
        if a["ok"] == b["ok"]:
            continue
        gained += b["ok"]
        lost += a["ok"]
        mark = "+" if b["ok"] else "-"
        print(f"{mark} {key[0]}/{key[1]}: {b['q'][:160]}")
        print(f"    was: {a['answer'][:200]!r}")
        print(f"    now: {b['answer'][:200]!r}")
    print(f"gained {gained}, lost {lost}")


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("sets", nargs="*", type=Path, help="question files (default: every set)")
    parser.add_argument("--dump", type=Path, help="write one JSON line per item to this file")
    parser.add_argument("--compare", nargs=2, type=Path, metavar=("BEFORE", "AFTER"))
    args = parser.parse_args()
    if args.compare:
        compare(*args.compare)
        return 0
    paths = args.sets or default_sets()
    missing = [str(p) for p in paths if not p.is_file()]
    if missing:
        print(f"eval_report: no such question file: {', '.join(missing)}", file=sys.stderr)
        return 2
    records = score_sets(paths)
    summary(records)
    if args.dump:
        args.dump.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
