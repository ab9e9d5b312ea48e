"""Shared fixtures: one engine per test session (loading is cheap, but linking indexes are not free)."""

from __future__ import annotations

import pytest

from stackgraph.graph.engine import Engine


@pytest.fixture(scope="session")
def engine() -> Engine:
    """The built-in graph with name matching only (no embedding model): fast and deterministic."""
    return Engine.load(semantic=False)


@pytest.fixture(scope="session")
def semantic_engine() -> Engine:
    """The built-in graph with semantic matching (loads the packaged MiniLM model once)."""
    return Engine.load(semantic=True)
