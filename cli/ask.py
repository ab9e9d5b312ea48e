"""``stackgraph ask``: questions in, answers out (text for people, JSON lines for programs)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING

from stackgraph.cli.common import (
    EXIT_NOT_FOUND,
    EXIT_OK,
    EXIT_USAGE,
    add_graph_options,
    error,
    keep_loaded,
    open_graph,
)

if TYPE_CHECKING:
    from stackgraph.graph.engine import Engine
    from stackgraph.graph.model import Answer

EXAMPLES = """examples:
  stackgraph ask "which layer owns CUDA OOM?"
  stackgraph ask --json "where does UALink fit?"
  printf 'where does NCCL fit?\\nand how do I test it?\\n' | stackgraph ask --json --chat -
"""


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "ask",
        help="answer a question about the AI infrastructure stack",
        description="Answer a question from the graph, with the facts, sources and SPARQL behind it.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "question", nargs="+", help="the question, or - to read one question per line from stdin"
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object per answer")
    parser.add_argument("--chat", action="store_true", help="with -: treat the lines as one conversation")
    parser.add_argument(
        "--no-semantic", action="store_true", help="match names only; never load the embedding model"
    )
    parser.add_argument(
        "--explain", action="store_true", help="text mode: also print facts, sources and SPARQL"
    )
    add_graph_options(parser)
    parser.set_defaults(run=run)


def _render_text(answer: Answer, explain: bool) -> str:
    lines = [answer.answer]
    if not answer.answered and answer.suggestions and not answer.error:
        pass  # the answer text already names the suggestions
    if answer.sources:
        lines.append("")
        lines.append("Sources: " + "; ".join(s.display for s in answer.sources[:6]))
    if explain:
        lines.append(f"Intent: {answer.intent}  confidence {answer.confidence:.2f}")
        for fact in answer.facts:
            cited = f"; {fact.source.display}" if fact.source else ""
            lines.append(f"  {fact.text} ({fact.basis}{cited})")
        for query in answer.sparql:
            lines.append(
                "SPARQL:\n"
                + query.split("\n", len([ln for ln in query.split("\n") if ln.startswith("PREFIX")]))[-1]
            )
    return "\n".join(lines)


def _questions_from_stdin() -> list[bytes]:
    data = sys.stdin.buffer.read()
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    return [line[:-1] if line.endswith(b"\r") else line for line in lines]


def run(args: argparse.Namespace) -> int:
    from stackgraph.graph.cachefiles import defer_writes, write_deferred
    from stackgraph.graph.conversation import Conversation
    from stackgraph.graph.engine import Engine
    from stackgraph.graph.store import DataFileError

    batch = args.question == ["-"]
    if args.chat and not batch:
        return error("--chat reads a conversation from stdin: use `stackgraph ask --chat -`")
    defer_writes()  # caches a first start builds are written once the first answer is out
    try:
        engine = Engine(open_graph(args, background_checks=True), semantic=not args.no_semantic)
        _ = engine.linker  # every question needs the name tables: built (or read) before freezing
    except DataFileError as problem:
        return error(str(problem))
    except (OSError, ValueError) as problem:
        return error(str(problem))
    keep_loaded()
    if not batch:
        answer = engine.ask(" ".join(args.question))
        _emit(answer, args)
        write_deferred()
        _finish_copies(args)
        return EXIT_OK if answer.answered else (EXIT_USAGE if answer.error else EXIT_NOT_FOUND)
    conversation = Conversation() if args.chat else None
    lines = _questions_from_stdin()
    if not lines:
        return error("no questions on stdin: give one question per line")
    valid = 0
    for raw in lines:
        answer = _ask_raw(engine, raw, conversation)
        valid += not answer.error
        _emit(answer, args)
        write_deferred()
    _finish_copies(args)
    if not valid:  # a batch in which nothing was a question is a usage error, as one bad question is
        return error(f"none of the {len(lines)} lines on stdin was a question that could be asked")
    return EXIT_OK


def _finish_copies(args: argparse.Namespace) -> None:
    """A first start with --data saves its store on disk after answering: wait for it, visibly."""
    if args.data:
        from stackgraph.graph.userstore import finish_copies

        finish_copies()


def _ask_raw(engine: Engine, raw: bytes, conversation) -> Answer:
    """One stdin line: invalid UTF-8 becomes a declined answer, never a crash of the batch."""
    try:
        text: str | bytes = raw.decode("utf-8")
    except UnicodeDecodeError:
        text = raw
    try:
        return engine.ask(text, conversation)  # type: ignore[arg-type]
    except Exception as problem:  # a bug must cost one line of the batch, not the rest
        from stackgraph.graph.answering import declined

        print(
            f"stackgraph: error: internal error on one question: {type(problem).__name__}: {problem}",
            file=sys.stderr,
        )
        return declined(engine, str(text)[:200], error=f"internal error ({type(problem).__name__})")


def _emit(answer: Answer, args: argparse.Namespace) -> None:
    if args.json:
        sys.stdout.write(json.dumps(answer.to_dict(), ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(_render_text(answer, args.explain) + "\n")
        if args.question == ["-"]:
            sys.stdout.write("\n")
    sys.stdout.flush()
