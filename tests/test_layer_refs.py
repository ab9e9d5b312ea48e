"""Layer references as agents and people write them resolve to the model they name."""

from __future__ import annotations

import pytest

from stackgraph.graph.engine import Engine
from stackgraph.graph.layer_refs import EIGHT, NINE, find_layer_refs, model_named, whole_layer_ref


@pytest.mark.parametrize(
    ("text", "code", "model"),
    [
        ("eight L5", "L5", EIGHT),
        ("ops L5", "L5", EIGHT),
        ("ops-L5", "L5", EIGHT),
        ("L5 eight", "L5", EIGHT),
        ("L5 (eight-layer)", "L5", EIGHT),
        ("the operational map's L2", "L2", EIGHT),
        ("L2 of the operational map", "L2", EIGHT),
        ("nine L8", "L8", NINE),
        ("nine-L8", "L8", NINE),
        ("layer 5 in the nine-layer model", "L5", NINE),
        ("what is in L6?", "L6", None),
        ("CP layer", "CP", None),
    ],
)
def test_reference_carries_the_model_written_beside_it(text: str, code: str, model: str | None) -> None:
    refs = find_layer_refs(text)
    assert [(r.code, r.model) for r in refs] == [(code, model)]


def test_each_reference_keeps_its_own_model() -> None:
    refs = find_layer_refs("the nine-layer model's L8 and the ops map's L2")
    assert [(r.code, r.model) for r in refs] == [("L8", NINE), ("L2", EIGHT)]


def test_ordinary_words_are_not_codes() -> None:
    assert find_layer_refs("is it s? which layer owns CUDA OOM") == []
    assert find_layer_refs("L9 of the eight-layer map")[0].model is None  # the map stops at L8


def test_model_named_and_whole_reference() -> None:
    assert model_named("in the operational map, what is L2?") == EIGHT
    assert model_named("where does NVLink fit?") is None
    ref, rest = whole_layer_ref("L8 Node Interconnect")
    assert (ref.code, rest) == ("L8", "Node Interconnect")
    assert whole_layer_ref("NVLink") is None


@pytest.mark.parametrize(
    ("name", "iri_end"),
    [
        ("eight L5", "ops-L5"),
        ("ops L5", "ops-L5"),
        ("L5 eight", "ops-L5"),
        ("eight L8", "ops-L8"),
        ("L5 (eight-layer)", "ops-L5"),
        ("the operational map's L2", "ops-L2"),
        ("nine L8", "nine-L8"),
        ("L5", "nine-L5"),
        ("L8 Node Interconnect", "nine-L8"),
        ("CP", "nine-CP"),
        ("layer S", "nine-S"),
    ],
)
def test_resolve_names_a_layer_in_its_model(engine: Engine, name: str, iri_end: str) -> None:
    assert engine.resolve(name).iri.endswith("/" + iri_end)


def test_resolve_with_model_argument(engine: Engine) -> None:
    assert engine.resolve("L5", model="eight").iri.endswith("/ops-L5")


def test_question_reads_the_model_beside_the_code(engine: Engine) -> None:
    answer = engine.ask("what does L2 of the operational map assume about the layer below it?")
    assert answer.answered
    assert "L2 GPUs & Networking" in answer.answer


def test_relative_layer_references_are_found_with_their_base() -> None:
    from stackgraph.graph.layer_refs import find_relative_refs

    (top,) = find_relative_refs("what is the top layer of the eight-layer map?")
    assert (top.direction, top.base) == ("top", None)
    (lowest,) = find_relative_refs("the bottom-most layer")
    assert lowest.direction == "bottom"
    (very,) = find_relative_refs("what sits at the very bottom of the 8-layer ops map?")
    assert very.direction == "bottom"
    assert find_relative_refs("scraping the bottom of the barrel") == []
    (below,) = find_relative_refs("in the 8-layer map, what does the layer below L5 do?")
    assert below.direction == "down" and below.base is not None and below.base.code == "L5"
    (above,) = find_relative_refs("which layer sits above ops L4?")
    assert (
        above.direction == "up"
        and above.base is not None
        and (above.base.code, above.base.model) == ("L4", EIGHT)
    )
    (pointing,) = find_relative_refs("and the one right under it?")
    assert pointing.direction == "down" and pointing.points_back and pointing.base is None
    assert find_relative_refs("the model sits on top of a thin layer of glue") == []
