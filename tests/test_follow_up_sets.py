"""Two-turn conversations, scored the way ``../shared/eval/score.py --chat`` scores them (issue 11).

The scorer runs one ``stackgraph ask --chat`` process per conversation, too slow for hundreds of
them in CI; here the same judge reads answers from one engine in this process. The sets:

- ``follow_ups.jsonl``: 170 conversations we wrote (follow-ups leaning on context, off-topic ones);
- ``follow_ups_blind.jsonl``: 150 written by a helper that read only the seeds, without seeing the
  engine: 60 follow-ups on the first turn's subject, 45 everyday and 45 technical off-topic ones.
  Four of its failures were fixed by mechanisms after it was first scored (see the closing note
  of issue 11), so the bar guards those fixes rather than measuring the engine blind.
- ``follow_ups_blind6.jsonl``: 36 more written the same way (six off-topic second turns), scored
  blind at 27/36 when it arrived;
- ``follow_ups_blind7.jsonl``: 36 more (six off-topic), scored blind at 33/36 when it arrived.
- ``follow_ups_blind9.jsonl``: 36 more (five off-topic), scored blind at 29/36 when it arrived.
- ``follow_ups_blind10.jsonl``: 36 more (six off-topic), scored blind at 30/36 when it arrived.
- ``follow_ups_blind11.jsonl``: 36 more (six off-topic, three of three turns), scored blind at
  21/36 when it arrived.
- ``follow_ups_blind12.jsonl``: 36 more (six off-topic, three walking a triage tree), scored blind
  at 26/36 when it arrived.
- ``follow_ups_blind13.jsonl``: 36 more (six off-topic, second turns pointing back without a
  pronoun), scored blind at 21/36 when it arrived.
- ``follow_ups_blind14.jsonl``: 36 more (six off-topic, a third of them after a problem report),
  scored blind at 20/36 when it arrived, on the session's first and last commits alike.
- ``follow_ups_blind15.jsonl``: 36 more (six off-topic), scored blind at 25/36 when it arrived.
- ``follow_ups_blind16.jsonl``: 36 more (six off-topic, three sneaky), kept unseen until mid-session:
  25/36 on the session's first commit, and still 25/36 after the mechanisms found on other sets.
- ``follow_ups_blind17.jsonl``: 36 more (six off-topic, three sneaky), scored blind at 29/36 on the
  session's first commit and 28/36 on the commit then current (a loss then fixed).
- ``follow_ups_blind18.jsonl``: 36 more (six off-topic, three sneaky), never read while the engine
  was worked on: 27/36 on the session's first commit, 28/36 when it arrived, 30/36 at its end.
- ``follow_ups_blind19.jsonl``: 36 more (six off-topic, three sneaky), written blind and never read
  while the engine was worked on: 28/36 on the session's first commit and when it arrived.
- ``follow_ups_blind20.jsonl``: 36 more (six off-topic, three sneaky), written blind and never read
  while the engine was worked on: 28/36 on the session's first commit and when it arrived.
- ``follow_ups_blind21.jsonl``: 36 more (six off-topic, four sneaky, twelve of three turns), written
  blind and never read while the engine was worked on: 24/36 on the session's first commit and
  when it arrived.
- ``follow_ups_blind22.jsonl``: 36 more (six off-topic, fifteen of three turns), written blind and
  never read while the engine was worked on: 22/36 on the session's first commit and at its end.
- ``follow_ups_blind23.jsonl``: 36 more (six off-topic, fifteen of three turns), written blind and
  not read while the engine was worked on: 22/36 on the session's first commit, 23/36 at its end
  (read from the next session on).
- ``follow_ups_blind24.jsonl`` and ``follow_ups_blind25.jsonl``: 36 more each (six off-topic,
  sixteen and seventeen of three turns), written blind and not read while the engine was worked
  on: 23/36 and 26/36 on the session's first commit and at its end (read from the next session
  on: 24/36 and 27/36 at its end).
- ``follow_ups_blind26.jsonl`` and ``follow_ups_blind27.jsonl``: 36 more each (six off-topic,
  fifteen and sixteen of three turns; the second in a colleague's Slack voice), written blind and
  not read while the engine was worked on: 30/36 and 26/36 on the session's first commit and
  at its end (read from the next session on: 31/36 and 28/36 at its end).
- ``follow_ups_blind28.jsonl``: 36 more (six off-topic, sixteen of three turns), written blind
  and not read while the engine was worked on: 28/36 on the session's first commit and at its
  end (read from the next session on: 28/36 at its start).
- ``follow_ups_blind29.jsonl``: 40 more (eight off-topic, of two and three turns), written blind
  and not read while the engine was worked on: 32/40 on the session's first commit and at its
  end (read from the next session on: 32/40 at its end).
- ``follow_ups_blind30.jsonl``: 40 more (eight off-topic, 24 of three turns), written blind and
  never read while the engine was worked on: 34/40 on the session's first commit and at its end.
- ``follow_ups_blind31.jsonl``: 40 more (eight off-topic), written blind; scored 34/40 on the first
  commit of the session that added it, then read as a development set (35/40 at its end).
- ``follow_ups_blind32.jsonl``: 40 more (eight off-topic, some opening with a long incident
  report), written blind and never read while the engine was worked on: 29/40 on the session's
  first commit and at its end; 29/40 at the end of the next session too, still unread but for one
  item glimpsed in a search over every set.
- ``follow_ups_blind33.jsonl``: 40 more (eight off-topic), written blind; scored 31/40 on the first
  commit of the session that added it, then read as a development set (33/40 at its end).
- ``follow_ups_blind34.jsonl``: 40 more (eight off-topic, five of three turns), written blind and
  never read while the engine was worked on: 25/40 on the session's first commit and at its end;
  25/40 at the end of the next session too, still unread.
- ``follow_ups_blind35.jsonl``: 40 more (eight off-topic, five of three turns), written blind;
  scored 31/40 on the first commit of the session that added it, then read as a development set
  (35/40 at its end).
- ``follow_ups_blind36.jsonl``: 40 more (eight off-topic, five of three turns), written blind;
  scored 27/40 on the first commit of the session that added it (six of its eight off-topic last
  turns answered), then read as a development set.
- ``follow_ups_blind37.jsonl``: 40 more (eight off-topic, eight of three turns), written blind;
  scored 28/40 on the first commit of the session that added it, then read as a development set.
- ``follow_ups_blind38.jsonl``: 40 more (eight off-topic, eight of three turns), written blind;
  scored 28/40 when it arrived later in that session, then read as a development set.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import Judge, last_answer, read_items

from stackgraph.graph.engine import Engine

EVAL = Path(__file__).parent / "eval"

#: Least share of conversations whose last answer passes, per set.
BARS = {
    "follow_ups.jsonl": 0.97,
    "follow_ups_blind.jsonl": 0.90,
    "follow_ups_blind6.jsonl": 0.85,
    "follow_ups_blind7.jsonl": 0.85,
    "follow_ups_blind9.jsonl": 0.75,
    "follow_ups_blind10.jsonl": 0.88,
    "follow_ups_blind11.jsonl": 0.7,
    "follow_ups_blind12.jsonl": 0.8,
    "follow_ups_blind13.jsonl": 0.6,
    "follow_ups_blind14.jsonl": 0.5,
    "follow_ups_blind15.jsonl": 0.8,
    "follow_ups_blind16.jsonl": 0.65,
    "follow_ups_blind17.jsonl": 0.75,
    "follow_ups_blind18.jsonl": 0.75,
    "follow_ups_blind19.jsonl": 0.75,
    "follow_ups_blind20.jsonl": 0.75,
    "follow_ups_blind21.jsonl": 0.6,
    "follow_ups_blind22.jsonl": 0.55,
    "follow_ups_blind23.jsonl": 0.6,
    "follow_ups_blind24.jsonl": 0.6,
    "follow_ups_blind25.jsonl": 0.7,
    "follow_ups_blind26.jsonl": 0.75,
    "follow_ups_blind27.jsonl": 0.65,
    "follow_ups_blind28.jsonl": 0.7,
    "follow_ups_blind29.jsonl": 0.75,
    "follow_ups_blind30.jsonl": 0.8,
    "follow_ups_blind31.jsonl": 0.8,
    "follow_ups_blind32.jsonl": 0.65,
    "follow_ups_blind33.jsonl": 0.75,
    "follow_ups_blind34.jsonl": 0.55,
    "follow_ups_blind35.jsonl": 0.8,
    "follow_ups_blind36.jsonl": 0.65,
    "follow_ups_blind37.jsonl": 0.75,
    "follow_ups_blind38.jsonl": 0.7,
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(BARS))
def test_the_last_answer_of_each_conversation_passes(
    semantic_engine: Engine, shared_judge: Judge, name: str
) -> None:
    items = read_items(EVAL / name)
    failed = []
    for item in items:
        answer = last_answer(semantic_engine, item["turns"])
        why = shared_judge(item, {"answered": answer.answered, "answer": answer.answer}, 1200)
        if why:
            failed.append(f"{item['id']}: {item['turns'][-1]!r}: {why}")
    share = 1 - len(failed) / len(items)
    assert share >= BARS[name], f"{share:.1%} of {len(items)} passed:\n" + "\n".join(failed)


def test_every_eval_question_is_one_line() -> None:
    """The shared scorer sends one question per line to ``stackgraph ask --json -``: a question
    with a line break in it would be asked as several (a pasted log's lines, each answered)."""
    for path in sorted(EVAL.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                item = json.loads(line)
                for text in [item.get("q", ""), *item.get("turns", [])]:
                    assert "\n" not in text and "\r" not in text, (path.name, item["id"])
