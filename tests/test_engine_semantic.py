"""Semantic matching with the packaged model: descriptions that share no name with the graph."""

from __future__ import annotations

import pytest

from stackgraph.graph.engine import Engine

pytestmark = pytest.mark.slow


def test_paraphrased_symptom_is_found(semantic_engine: Engine) -> None:
    answer = semantic_engine.ask("my first token takes ages to show up")
    assert answer.answered
    assert any("first-token" in e.label.lower() for e in answer.entities)


def test_paraphrase_gets_cause_and_owner(semantic_engine: Engine) -> None:
    answer = semantic_engine.ask("our pods keep restarting over and over")
    assert answer.answered
    assert "probe" in answer.answer.lower()


def test_nonsense_is_still_declined(semantic_engine: Engine) -> None:
    for question in ("what is the capital of France?", "how do I cook pasta al dente", "qwertyuiop zxcvbnm"):
        answer = semantic_engine.ask(question)
        assert not answer.answered, answer.answer
        assert answer.suggestions


def test_search_finds_by_meaning(semantic_engine: Engine) -> None:
    page, total = semantic_engine.search("GPU memory ran out", limit=5)
    assert total >= 1
    assert any("memory" in ref.label.lower() for ref in page)
