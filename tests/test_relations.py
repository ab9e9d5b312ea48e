"""Questions asking what stands in one relation to a named thing (issue 11): "what does the GPU
Operator deploy?", "what implements gang scheduling?". Built from the graph's own edges: every
subject of each verb relation is asked both ways, by its label."""

from __future__ import annotations

import pytest

from stackgraph.graph.answering.relations import VERBS
from stackgraph.graph.conversation import Conversation
from stackgraph.graph.engine import Engine
from stackgraph.graph.store import SG

PREFIX = "PREFIX sg: <https://w3id.org/stackgraph/ns#> PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#> "


def _edges(engine: Engine, predicate: str) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for row in engine.graph.query(PREFIX + f"SELECT ?s ?o WHERE {{ ?s <{predicate}> ?o }}"):
        found.setdefault(str(row.s), set()).add(str(row.o))
    return found


def _linked_whole(engine: Engine, iri: str) -> bool:
    """Whether the entity's label, asked as a question, links to the entity itself."""
    label = engine.catalog.label(iri)
    short = len(label.split()) <= 4  # a sentence-long label makes a report, not a question
    return short and any(m.iri == iri for m in engine.linker.mentions(f"what is {label}?"))


@pytest.mark.parametrize("predicate", [str(p) for p in VERBS if "runsOn" not in p])
def test_what_a_thing_does_by_a_verb_is_its_edges(engine: Engine, predicate: str) -> None:
    forms, singular, _ = VERBS[predicate]
    base = min(forms, key=len)
    asked = 0
    for subject, objects in sorted(_edges(engine, predicate).items()):
        if not _linked_whole(engine, subject):
            continue
        label = engine.catalog.label(subject)
        answer = engine.ask(f"what does {label} {base}?")
        assert answer.answered, answer.answer
        assert answer.answer.startswith(f"{label} {singular} "), answer.answer
        stated = {f.object for f in answer.facts if f.subject == subject and f.predicate == predicate}
        assert stated == objects, answer.answer
        assert all(f.basis and f.sources for f in answer.facts)
        asked += 1
    assert asked, f"no subject of {predicate} is asked by its label"


def test_what_a_thing_installs_is_what_it_deploys(engine: Engine) -> None:
    """ "install" is the everyday word for the graph's ``deploys``: asked either way round."""
    answer = engine.ask("what does the network operator install?")
    assert answer.answer.startswith("Network Operator deploys MOFED/DOCA"), answer.answer
    conversation = Conversation()
    engine.ask("what is NVIDIA Fabric Manager?", conversation)
    follow = engine.ask("what installs it?", conversation)
    assert "Ansible deploys NVIDIA Fabric Manager" in follow.answer, follow.answer


def test_what_does_it_to_a_thing_is_read_from_the_other_end(engine: Engine) -> None:
    implemented = {}
    for subject, objects in _edges(engine, "https://w3id.org/stackgraph/ns#implements").items():
        for obj in objects:
            implemented.setdefault(obj, set()).add(subject)
    asked = 0
    for obj, subjects in sorted(implemented.items()):
        if not _linked_whole(engine, obj):
            continue
        answer = engine.ask(f"what implements {engine.catalog.label(obj)}?")
        assert answer.answered, answer.answer
        first = answer.answer.split(". ")[0]
        assert all(engine.catalog.label(s) in first for s in subjects), answer.answer
        asked += 1
    assert asked >= 3


@pytest.mark.parametrize(
    "question",
    [
        "we use NCCL over RoCE and the job hangs after a few steps",  # a report, not a question
        "what do I need to use RoCE?",  # what the asker needs, not what uses RoCE
        "what's the single most useful practice with terraform",  # "useful" is no "use"
    ],
)
def test_a_verb_in_passing_asks_no_relation(engine: Engine, question: str) -> None:
    answer = engine.ask(question)
    assert answer.intent != "related", answer.answer


def test_a_follow_up_asks_the_relation_of_the_conversations_subject(semantic_engine: Engine) -> None:
    from stackgraph.graph.conversation import Conversation

    conversation = Conversation()
    semantic_engine.ask("what is Volcano?", conversation)
    answer = semantic_engine.ask("does it run on kubernetes?", conversation)
    assert answer.answer.startswith("Volcano runs on Kubernetes."), answer.answer


def test_a_layer_model_named_alone_in_a_follow_up_qualifies_the_last_question(
    semantic_engine: Engine,
) -> None:
    from stackgraph.graph.conversation import Conversation

    conversation = Conversation()
    semantic_engine.ask("which layer owns CUDA OOM?", conversation)
    answer = semantic_engine.ask("and in the eight-layer map?", conversation)
    assert answer.answer.startswith("CUDA Out of Memory (OOM) is owned by"), answer.answer
    assert answer.answer.index("eight-layer operational map") < answer.answer.index("nine-layer model")


@pytest.mark.parametrize("predicate", [str(p) for p in VERBS if "runsOn" not in p])
def test_a_verb_asked_of_two_named_things_gives_the_edges_of_both(engine: Engine, predicate: str) -> None:
    """ "what do the GPU Operator and the Network Operator deploy?" asks it of both: each one's
    edges are said, the first's first, when neither stands at the other end of the other's."""
    forms, singular, _ = VERBS[predicate]
    base = min(forms, key=len)
    edges = _edges(engine, predicate)
    subjects = [s for s in sorted(edges) if _linked_whole(engine, s)]
    pairs = [
        (a, b)
        for a in subjects
        for b in subjects
        if a < b and b not in edges[a] and a not in edges[b] and not edges[a] & edges[b]
    ]
    if not pairs:
        pytest.skip("no two subjects of this relation with distinct edges")
    first, second = pairs[0]
    one, two = engine.catalog.label(first), engine.catalog.label(second)
    answer = engine.ask(f"what do {one} and {two} {base}?")
    assert answer.answered, answer.answer
    for subject, label in ((first, one), (second, two)):
        said = f"{label} {singular} "
        assert said in answer.answer, (said, answer.answer)
        for other in edges[subject]:
            assert engine.catalog.label(other) in answer.answer, (other, answer.answer)


def test_names_sharing_their_last_word_after_a_slash_are_both_named(engine: Engine) -> None:
    mentions = engine.linker.mentions("what do the gpu/network operators deploy?")
    named = {engine.catalog.label(m.iri) for m in mentions}
    assert {"GPU Operator", "Network Operator"} <= named, named
    # Before a single word takes the name they share ("parallelism" alone is a layer's name).
    strategies = {engine.catalog.label(m.iri) for m in engine.linker.mentions("tensor/pipeline parallelism?")}
    assert {"Tensor parallelism", "Pipeline parallelism"} <= strategies, strategies
    # Only when every part makes a name with the word after it.
    assert not any(m.surface.startswith("tcp") for m in engine.linker.mentions("the tcp/ip operators"))


def test_asking_what_else_a_thing_does_leaves_out_what_was_named(engine: Engine) -> None:
    conversation = Conversation()
    engine.ask("does the GPU Operator deploy the GPU driver as a DaemonSet?", conversation)
    follow = engine.ask("what else do the gpu/network operators deploy that way?", conversation)
    assert follow.answered
    assert "MOFED" in follow.answer and "nvidia-peermem" in follow.answer, follow.answer
    assert "GPU Operator deploys GPU driver" not in follow.answer


def test_a_follow_up_asking_for_a_thing_of_a_kind_gets_the_one_that_implements_the_subject(
    engine: Engine,
) -> None:
    """ "which scheduler plugin does that?" after a turn about gang scheduling: the thing named by
    that kind word that implements the subject. Built from the graph: every implements edge whose
    implementer's names hold a word its target's names lack."""
    from stackgraph.graph.answering.evidence import fetch

    asked = 0
    for iri in sorted(engine.catalog.records):
        record = engine.catalog.get(iri)
        for target in fetch(engine, iri).iris(SG.implements):
            target_words = set(engine.catalog.display(target).lower().split())
            words = [
                w
                for label in engine.catalog.all_labels(record)
                for w in label.lower().split()
                if w.isalpha()
                and len(w) > 4
                and w not in target_words
                and w not in engine.catalog.label(iri).lower()
            ]
            if not words:
                continue
            conversation = Conversation()
            engine.ask(f"what is {engine.catalog.label(target)}?", conversation)
            follow = engine.ask(f"which {words[0]} does that?", conversation)
            if follow.intent != "related":
                continue
            # Any implementer of the target whose names hold the word answers it ("which apache
            # does CDC?": Airflow or Kafka).
            implementers = {
                other
                for other in fetch(engine, target).incoming(SG.implements)
                if any(
                    words[0] in label.lower()
                    for label in engine.catalog.all_labels(engine.catalog.get(other))
                )
            }
            said = [
                f.subject
                for f in follow.facts
                if f.predicate == str(SG.implements) and f.subject in implementers
            ]
            assert said and engine.catalog.label(said[0]) in follow.answer, (words[0], follow.answer)
            asked += 1
    assert asked >= 3, asked


def test_a_follow_up_asking_for_a_tool_gets_what_implements_the_subject_whatever_its_name(
    engine: Engine,
) -> None:
    """ "which tool does that?" asks for a thing of any kind: what implements the conversation's
    subject answers (Volcano for gang scheduling), not what the turn's other words name."""
    conversation = Conversation()
    engine.ask("what is gang scheduling?", conversation)
    follow = engine.ask("which tool does that on kubernetes?", conversation)
    assert "Volcano" in follow.answer.split(". ")[0], follow.answer
    assert any(f.predicate == str(SG.implements) for f in follow.facts)


@pytest.mark.parametrize(
    "question",
    ["which scheduler gives me gang scheduling on k8s?", "which tool does gang scheduling on kubernetes?"],
)
def test_a_thing_of_a_kind_asked_for_what_the_question_names_is_what_implements_it(
    engine: Engine, question: str
) -> None:
    """Not the default scheduler that "scheduler" and "k8s" name, which does not solve gang
    scheduling: the scheduler (or, for "tool", the thing of any kind) that implements it."""
    answer = engine.ask(question)
    assert answer.answer.startswith("Volcano implements gang scheduling"), answer.answer


@pytest.mark.parametrize(
    ("question", "asks"),
    [
        ("what happens if I set max_num_seqs too high?", True),
        ("and if i crank it way up what breaks first?", True),
        ("raised it to 512, what goes wrong now?", True),
        ("what happens when NCCL hangs?", False),
        ("what breaks the all-reduce on 16 nodes?", False),
    ],
)
def test_asking_what_breaks_when_pushed_too_far(question: str, asks: bool) -> None:
    from stackgraph.graph.answering import intents

    assert intents.asks_what_breaks(question) is asks


def test_what_breaks_when_a_setting_is_pushed_too_far_is_what_it_governs(semantic_engine: Engine) -> None:
    """Every setting that mitigates a problem: pushed too far, the answer names that problem and
    the symptoms it is a likely cause of, with the edges as facts."""
    rows = semantic_engine.graph.query(
        "PREFIX sg: <https://w3id.org/stackgraph/ns#> PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#> "
        "SELECT DISTINCT ?setting ?label WHERE { ?setting sg:mitigates ?problem ; rdfs:label ?label . "
        "?symptom sg:likelyCause ?problem . FILTER(CONTAINS(?label, '_')) }"
    )
    checked = 0
    for row in rows:
        answer = semantic_engine.ask(f"what breaks if I set {row.label} way too high?")
        page = semantic_engine.describe(str(row.setting))
        mitigated = [e.value.display for e in page.outgoing if e.predicate == str(SG.mitigates)]
        assert answer.answered and any(name in answer.answer for name in mitigated), answer.answer
        assert any(f.predicate == str(SG.likelyCause) for f in answer.facts), answer.answer
        checked += 1
    assert checked >= 2


def test_what_replaces_a_thing_asks_for_its_equivalent(engine: Engine) -> None:
    """ "what replaces NCCL?" asks for what plays NCCL's role elsewhere (RCCL), an edge that holds
    both ways: asked of either end, the other is the answer, and the fact cited is the one the
    graph states (RCCL equivalent of NCCL), not its mirror."""
    for question in ("so what replaces NCCL?", "what does RCCL replace?", "what's the equivalent of CUDA?"):
        answer = engine.ask(question)
        assert answer.answered and "is the equivalent of" in answer.answer, (question, answer.answer)
    replaced = engine.ask("what replaces NCCL?")
    assert replaced.answer.startswith("RCCL is the equivalent of NCCL"), replaced.answer
    assert any(
        f.subject.endswith("/rccl") and f.predicate.endswith("#equivalentOf") and f.object.endswith("/nccl")
        for f in replaced.facts
    ), replaced.facts
    assert all(f.basis and f.source for f in replaced.facts)
