"""`make gates` (scripts/score_gate.py): several question files at their floors, scored at once.

Run as CI runs it, through the shared scorer and the real `stackgraph ask`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

GATE = Path(__file__).resolve().parents[1] / "scripts" / "score_gate.py"
SCORER = Path(__file__).resolve().parents[2] / "shared" / "eval" / "score.py"


def _gate(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(GATE), *args], capture_output=True, text=True, timeout=300)


@pytest.fixture
def questions(tmp_path: Path) -> Path:
    """Two questions: one the graph answers as expected, one expecting what no answer says."""
    path = tmp_path / "two.jsonl"
    items = [
        {"id": "a", "q": "where does UALink fit?", "expect": [["L8"]]},
        {"id": "b", "q": "where does NVLink fit?", "expect": [["a string no answer contains"]]},
    ]
    path.write_text("".join(json.dumps(item) + "\n" for item in items))
    return path


def test_each_file_passes_or_fails_at_its_own_floor(questions: Path) -> None:
    if not SCORER.is_file():
        pytest.skip(f"the shared scorer is not at {SCORER}")
    passed = _gate(f"{questions}:50", f"{questions}:40", "--jobs", "2")
    assert passed.returncode == 0, passed.stderr
    assert passed.stdout.count("accuracy 50.0% (1/2)") == 2
    # Reports come whole and in the order given: each heading is followed by its own report.
    assert passed.stdout.index("(at least 50%)") < passed.stdout.index("(at least 40%)")
    failed = _gate(f"{questions}:50", f"{questions}:60")
    assert failed.returncode == 1
    assert "accuracy 50.0% is below 60%" in failed.stderr and "1 of 2 gates failed" in failed.stderr


def test_a_missing_file_is_one_line_and_a_failure(tmp_path: Path) -> None:
    missing = _gate(str(tmp_path / "nope.jsonl") + ":80")
    assert missing.returncode == 1
    assert missing.stderr.strip().count("\n") == 0 and "no such question file" in missing.stderr
