"""Shared fixtures: one engine per test session (loading is cheap, but linking indexes are not free)."""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from stackgraph.graph.conversation import Conversation
from stackgraph.graph.engine import Engine
from stackgraph.graph.model import Answer

#: The shared development sets, beside the repository.
EVAL = Path(__file__).resolve().parents[2] / "shared" / "eval"
SHARED_SETS = ("questions.jsonl", "realworld_dev.jsonl")

#: The shared scorer's verdict on one item's answer: None when it passes, else why it fails.
Judge = Callable[[dict, dict, int], "str | None"]


def read_items(path: Path) -> list[dict]:
    """The items of a question set: one JSON object per line, blank lines skipped."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def last_answer(engine: Engine, turns: list[str]) -> Answer:
    """The answer to the last of ``turns``, asked in one conversation as ``score.py --chat``
    asks them (the scorer judges the last answer only)."""
    conversation = Conversation()
    for turn in turns:
        answer = engine.ask(turn, conversation)
    return answer


@pytest.fixture(scope="session")
def engine() -> Engine:
    """The built-in graph with name matching only (no embedding model): fast and deterministic."""
    return Engine.load(semantic=False)


@pytest.fixture(scope="session")
def semantic_engine() -> Engine:
    """The built-in graph with semantic matching (loads the packaged MiniLM model once)."""
    return Engine.load(semantic=True)


@pytest.fixture(scope="session")
def single_turn_answers(semantic_engine: Engine) -> dict[str, Answer]:
    """Every single-question item of every set we hold (tests/eval and the shared development
    sets), asked once: the score floors and the answer-length invariant read the same answers
    instead of each asking thousands of questions again."""
    sets = [EVAL / name for name in SHARED_SETS if (EVAL / name).is_file()]
    sets += sorted((Path(__file__).parent / "eval").glob("*.jsonl"))
    questions = {item["q"] for path in sets for item in read_items(path) if "q" in item}
    return {question: semantic_engine.ask(question) for question in sorted(questions)}


@pytest.fixture(scope="session")
def shared_judge() -> Judge:
    """``judge`` from ``../shared/eval/score.py``, so a verdict in the suite is the scorer's own."""
    scorer = EVAL / "score.py"
    if not scorer.is_file():
        pytest.skip(f"the shared scorer is not at {scorer}")
    spec = importlib.util.spec_from_file_location("shared_score", scorer)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.judge
