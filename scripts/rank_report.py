"""Where the passage ranker puts the passage that answers each question (a diagnostic, not a test).

For every answerable single question of each file, the passages are ranked as the passage answerer
ranks them (``reports.rank``: the question's named entities as the prior) and each is read as the
answer it would give alone: its sentence, its subject's definition and where its subject sits (the
same parts ``reports.from_passages`` says). The first passage whose answer holds every ``expect``
group is the right one; its rank is printed with our top 3, then ranks@1/3/15 per file.

Ranking failures show as a rank above 1; a rank of "-" means no passage in the pool says it (the
answer must come from another answerer, or composition must join passages).

Holding the expected strings can be luck (a long passage that names "L6" and "L7" in passing), so
items that cite the seed line settling them (``why``) are also ranked by that line: the settling
passage is the first whose words cover at least ``SETTLES`` of the line's words, and its rank is
printed as ``why N`` with its own ranks@1/3/15.

Usage: python scripts/rank_report.py FILE.jsonl [FILE.jsonl ...] [--quiet] [--lexical]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from stackgraph.graph.answering import link, reports, sanitize
from stackgraph.graph.answering.context import Context
from stackgraph.graph.answering.passages import Hit
from stackgraph.graph.answering.question import Question
from stackgraph.graph.engine import Engine
from stackgraph.graph.lexical import terms

#: Passages ranked per question: the pool's whole size, so "not found" means not in the pool.
DEPTH = 100
#: Ranks reported in the summary.
CUTS = (1, 3, 15)
#: Share of the ``why`` line's words a passage must hold to count as the one that settles the item.
SETTLES = 0.7


def says(ctx: Context, hit: Hit) -> str:
    """What the answer built from this passage alone would say."""
    passage = hit.passage
    parts = [passage.text]
    definition = reports._definition(ctx, passage)
    if definition:
        parts.append(definition)
    parts.append(reports._whereabouts(ctx, passage.subject, " ".join(parts)))
    return " ".join(parts)


def holds(text: str, groups: list[list[str]]) -> bool:
    low = text.lower()
    return all(any(alt.lower() in low for alt in group) for group in groups)


def settles(hit: Hit, why: str) -> bool:
    """Whether the passage states the seed line that settles the item."""
    wanted = set(terms(why))
    return bool(wanted) and len(wanted & set(terms(hit.passage.text))) >= SETTLES * len(wanted)


def why_rank(item: dict, hits: list[Hit]) -> int | None:
    """The 1-based rank of the first passage stating the item's ``why`` line, if it has one."""
    why = item.get("why")
    if not why:
        return None
    return next((n for n, hit in enumerate(hits, 1) if settles(hit, why)), None)


def right_rank(engine: Engine, item: dict, use_semantic: bool) -> tuple[int | None, list[Hit]]:
    """The 1-based rank of the first passage whose answer holds all expect groups, and the ranking."""
    text = sanitize(item["q"])
    parsed = Question.parse(engine, text)
    candidates = link(engine, parsed)
    ctx = Context(
        engine,
        text,
        parsed.intent.intent,
        parsed.intent.strength,
        candidates,
        parsed.model_hint,
        parsed=parsed,
    )
    hits = reports.rank(ctx, k=DEPTH, use_semantic=use_semantic)
    for n, hit in enumerate(hits, 1):
        if holds(says(ctx, hit), item.get("expect", [])):
            return n, hits
    return None, hits


def short(engine: Engine, hit: Hit) -> str:
    predicate = hit.passage.predicate.rsplit("#", 1)[-1].rsplit("/", 1)[-1]
    return f"{hit.score:.2f} {predicate:<14.14} {hit.passage.text[:80]!r}"


def report(engine: Engine, path: Path, quiet: bool, use_semantic: bool) -> dict[int | None, int]:
    items = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    items = [it for it in items if "q" in it and it.get("answerable", True) and it.get("expect")]
    tally: dict[int | None, int] = {}
    whys: dict[int | None, int] = {}
    print(f"== {path} ({len(items)} answerable single questions)")
    for item in items:
        rank, hits = right_rank(engine, item, use_semantic)
        why = why_rank(item, hits)
        if item.get("why"):
            whys[why] = whys.get(why, 0) + 1
        answer = engine.ask(item["q"])
        passed = holds(answer.answer, item["expect"]) and answer.answered
        tally[rank] = tally.get(rank, 0) + 1
        if quiet:
            continue
        mark = "ok  " if passed else "FAIL"
        said = f" why {why if why else '-':>3}" if item.get("why") else ""
        print(f"{item['id']:>6} rank {rank if rank else '-':>3}{said} {mark} {item['q'][:100]!r}")
        if rank != 1:
            for hit in hits[:3]:
                print(f"{'':>17}{short(engine, hit)}")
            if rank:
                print(f"{'':>13}{rank:>3}: {short(engine, hits[rank - 1])}")
    print(f"ranks {_cuts(tally)}")
    if whys:
        print(f"why   {_cuts(whys)}")
    return tally


def _cuts(tally: dict[int | None, int]) -> str:
    total = sum(tally.values())
    cuts = "  ".join(f"@{c} {sum(n for r, n in tally.items() if r and r <= c)}/{total}" for c in CUTS)
    return f"{cuts}  not in pool {tally.get(None, 0)}"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("files", nargs="+", type=Path)
    parser.add_argument("--quiet", action="store_true", help="print only the summary per file")
    parser.add_argument("--lexical", action="store_true", help="rank by word overlap only (no model)")
    args = parser.parse_args()
    engine = Engine.load()
    for path in args.files:
        report(engine, path, args.quiet, use_semantic=not args.lexical)


if __name__ == "__main__":
    main()
