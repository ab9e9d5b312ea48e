"""Single-question sets at their floors, scored the way ``../shared/eval/score.py`` scores them.

The two shared development sets and the engine's own extra set are scored through the real
``stackgraph ask --json -`` by ``make gates`` (``scripts/score_gate.py``). The many sets written
after them (real users' reports, paraphrases, off-topic questions; see the README) used to be
scored that way too, one ``stackgraph ask`` process per set: three of CI's twenty minutes spent
loading the engine again and again to answer questions this suite already answers once (the
``single_turn_answers`` fixture, which the answer-length invariant also reads). Here the shared
scorer's own ``judge`` reads those answers (a set's conversations are asked turn by turn in one
``Conversation``, as ``score.py --chat`` asks them), so a verdict is the one ``make gates`` would give.

A floor is the least share (percent) of a set's items whose answer passes. Sets that arrived
blind keep a floor near their score, so a change that loses items there fails here.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import Judge, last_answer, read_items

from stackgraph.graph.engine import Engine
from stackgraph.graph.model import Answer

EVAL = Path(__file__).parent / "eval"

#: Least share (percent) of each set's items that must pass.
FLOORS = {
    "realworld_heldout.jsonl": 85,
    "paraphrase_fresh.jsonl": 95,
    "realworld_fresh.jsonl": 80,
    "realworld_blind2.jsonl": 75,
    "realworld_blind4.jsonl": 80,
    "realworld_blind4a.jsonl": 70,
    "realworld_blind5.jsonl": 75,
    "realworld_blind6.jsonl": 80,
    "realworld_blind6a.jsonl": 65,
    "realworld_blind9.jsonl": 70,
    "realworld_blind10.jsonl": 75,
    "realworld_blind11.jsonl": 60,
    "realworld_blind12.jsonl": 55,
    "realworld_blind14.jsonl": 75,
    "realworld_blind15.jsonl": 60,
    "realworld_blind16.jsonl": 55,
    "realworld_blind18.jsonl": 45,
    "realworld_blind19.jsonl": 55,
    "realworld_blind21.jsonl": 50,
    "realworld_blind22.jsonl": 70,
    "realworld_blind23.jsonl": 65,
    "realworld_blind24.jsonl": 70,
    "realworld_blind25.jsonl": 65,
    "realworld_blind26.jsonl": 60,
    "realworld_blind27.jsonl": 75,
    "realworld_blind28.jsonl": 70,
    "realworld_blind29.jsonl": 78,
    "realworld_blind30.jsonl": 85,
    "realworld_blind31.jsonl": 70,
    "realworld_blind32.jsonl": 60,
    "realworld_blind33.jsonl": 65,
    "realworld_blind34.jsonl": 70,
    "realworld_blind35.jsonl": 65,
    "realworld_blind36.jsonl": 50,
    "realworld_blind37.jsonl": 65,
    "realworld_blind38.jsonl": 65,
    "realworld_blind39.jsonl": 75,
    "realworld_blind40.jsonl": 45,
    "realworld_blind41.jsonl": 70,
    "realworld_blind42.jsonl": 60,
    "realworld_blind43.jsonl": 60,
    "realworld_blind44.jsonl": 60,
    "realworld_blind45.jsonl": 60,
    "realworld_blind46.jsonl": 65,
    "realworld_blind47.jsonl": 60,
    "realworld_blind48.jsonl": 60,
    "realworld_blind49.jsonl": 75,
    "realworld_blind50.jsonl": 55,
    "realworld_blind51.jsonl": 60,
    "realworld_blind52.jsonl": 65,
    "realworld_blind53.jsonl": 70,
    "realworld_blind54.jsonl": 50,
    "realworld_blind55.jsonl": 75,
    "realworld_blind56.jsonl": 75,
    "realworld_blind57.jsonl": 75,
    "realworld_blind58.jsonl": 70,
    "realworld_blind59.jsonl": 60,
    "realworld_blind60.jsonl": 80,
    "realworld_blind61.jsonl": 75,
    "paraphrase_blind5.jsonl": 85,
    "paraphrase_blind6.jsonl": 85,
    "paraphrase_blind7.jsonl": 85,
    "paraphrase_blind8.jsonl": 90,
    "paraphrase_blind9.jsonl": 90,
    "paraphrase_blind10.jsonl": 90,
    "paraphrase_blind11.jsonl": 90,
    "paraphrase_blind12.jsonl": 75,
    "paraphrase_blind13.jsonl": 80,
    "paraphrase_blind14.jsonl": 90,
    "paraphrase_blind15.jsonl": 75,
    "paraphrase_blind16.jsonl": 90,
    "paraphrase_blind17.jsonl": 90,
    "paraphrase_blind18.jsonl": 80,
    "paraphrase_blind19.jsonl": 75,
    "paraphrase_blind20.jsonl": 85,
    "paraphrase_blind21.jsonl": 85,
    "paraphrase_blind22.jsonl": 80,
    "paraphrase_blind23.jsonl": 85,
    "paraphrase_blind24.jsonl": 85,
    "paraphrase_blind25.jsonl": 85,
    "paraphrase_blind26.jsonl": 75,
    "paraphrase_blind27.jsonl": 80,
    "paraphrase_blind28.jsonl": 85,
    "paraphrase_blind29.jsonl": 85,
    "offtopic_real1.jsonl": 70,
    "offtopic_real2.jsonl": 60,
    "offtopic_real3.jsonl": 35,
    "offtopic_real4.jsonl": 30,
    "offtopic_real5.jsonl": 75,
    "offtopic_real6.jsonl": 75,
    "probes.jsonl": 92,
    "written_reports.jsonl": 80,
}


@pytest.mark.slow
@pytest.mark.parametrize("name", list(FLOORS))
def test_each_set_reaches_its_floor(
    single_turn_answers: dict[str, Answer], semantic_engine: Engine, shared_judge: Judge, name: str
) -> None:
    items = read_items(EVAL / name)
    failed = []
    for item in items:
        if "turns" in item:  # a few sets hold conversations too: the last answer is scored
            answer = last_answer(semantic_engine, item["turns"])
        else:
            answer = single_turn_answers[item["q"]]
        why = shared_judge(item, answer.to_dict(), 1200)
        if why:
            question = item.get("q") or " / ".join(item["turns"])
            failed.append(f"{item['id']}: {question[:120]!r}: {why}")
    share = 100 * (1 - len(failed) / len(items))
    assert share >= FLOORS[name], f"{share:.1f}% of {len(items)} passed:\n" + "\n".join(failed)


def test_every_single_question_set_has_a_floor_or_a_reason_not_to() -> None:
    """A new set dropped into tests/eval without a floor would be scored by nobody."""
    gated_by_make = {"questions_extra.jsonl"}
    unscored = {
        path.name
        for path in EVAL.glob("*.jsonl")
        if not path.name.startswith("follow_ups")
        and path.name not in FLOORS
        and path.name not in gated_by_make
    }
    assert not unscored
