"""The passage ranker, the passage answerer and how answers compete (issue 11).

Questions here are written for these tests, in the words of a problem report; none is taken from
an evaluation set. Each checks a mechanism: the whole report is matched, named technologies are a
prior and not the subject, the answer covering more of the question wins, follow-ups say what
they were about, and questions outside the graph stay declined.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from stackgraph.graph.answering import compete
from stackgraph.graph.conversation import Conversation
from stackgraph.graph.engine import Engine
from stackgraph.graph.lexical import terms
from stackgraph.graph.store import KG, SG


def test_every_passage_is_about_a_catalogued_entity_and_reads_as_a_sentence(engine: Engine) -> None:
    index = engine.passages
    assert len(index.passages) > 500
    for passage in index.passages:
        assert passage.subject in engine.catalog
        assert passage.text.strip()
        assert engine.catalog.display(passage.subject) in passage.text


def test_must_match_statements_become_passages(engine: Engine) -> None:
    must = [p for p in engine.passages.passages if p.predicate == str(SG.mustMatch)]
    assert must, "the graph states what must match what"
    assert all(" must match " in p.text for p in must)


def test_bm25_prefers_the_passage_sharing_the_rare_words(engine: Engine) -> None:
    hits = engine.passages.rank("ports negotiated below their rated speed", use_semantic=False, k=3)
    assert hits
    best = hits[0].passage
    assert {"negotiat", "rat", "speed"} & set(terms(best.text)) or "speed" in best.text.lower()
    assert hits[0].score >= hits[-1].score


def test_named_entities_are_a_prior_not_a_filter(engine: Engine) -> None:
    question = "pods wait forever because only some of the job's workers could be placed"
    kubernetes = engine.resolve("Kubernetes").iri
    plain = engine.passages.rank(question, use_semantic=False, k=20)
    favoured = engine.passages.rank(question, named=[kubernetes], use_semantic=False, k=20)
    assert plain and favoured
    # The prior moves the named entity's passages up ...
    rank_of = {h.passage.key: n for n, h in enumerate(favoured)}
    for n, hit in enumerate(plain):
        if hit.passage.subject == kubernetes and hit.passage.key in rank_of:
            assert rank_of[hit.passage.key] <= n
    # ... but passages about other entities still compete.
    assert any(h.passage.subject != kubernetes for h in favoured[:5])


def test_a_named_engines_settings_share_the_prior_of_passages_that_mention_it(engine: Engine) -> None:
    """No statement of a setting names its engine ("splits model layers across pipeline stages"),
    yet a report naming the engine is about its settings too: they get the mentioned prior."""
    from stackgraph.graph.answering import passages
    from stackgraph.graph.answering.evidence import fetch

    engines = [iri for iri in engine.entities_of("Technology") if fetch(engine, iri).incoming(SG.parameterOf)]
    assert engines, "the graph should hold an engine with settings"
    served = engines[0]
    setting = fetch(engine, served).incoming(SG.parameterOf)[0]
    statement = next(p for p in engine.passages.passages if p.subject == setting and not p.relation)
    question = " ".join(terms(statement.object))
    plain = {h.passage.key: h.score for h in engine.passages.rank(question, use_semantic=False, k=50)}
    favoured = {
        h.passage.key: h.score
        for h in engine.passages.rank(question, named=[served], use_semantic=False, k=50)
    }
    assert favoured[statement.key] == pytest.approx(plain[statement.key] + passages.MENTIONED_PRIOR)


def test_coverage_counts_only_words_the_graph_knows(engine: Engine) -> None:
    question = "my flibbertigibbet shows uncorrected ECC errors"
    said = "a GPU shows uncorrected ECC errors"
    assert compete.coverage(engine, question, said) == pytest.approx(1.0)
    assert compete.coverage(engine, question, said, known_only=False) < 1.0
    assert compete.coverage(engine, question, "nothing relevant here") < 0.5


def test_a_long_report_is_answered_from_what_it_describes(engine: Engine) -> None:
    report = (
        "We run PyTorch jobs on Kubernetes. Our distributed job needs eight pods, the scheduler "
        "placed six of them and the other two stay pending, so the six sit idle holding GPUs."
    )
    answer = engine.ask(report)
    assert answer.answered
    low = answer.answer.lower()
    assert "gang" in low or "all-or-nothing" in low, answer.answer
    assert answer.facts and answer.sources


def test_the_passage_answer_records_its_evidence(engine: Engine) -> None:
    answer = engine.ask("the user-space verbs library in my container does not match the host kernel modules")
    assert answer.answered
    assert answer.facts
    assert all(f.subject and f.predicate for f in answer.facts)
    assert answer.sparql


def test_a_definition_question_keeps_its_definition(engine: Engine) -> None:
    answer = engine.ask("What is NVLink?")
    assert answer.answered
    assert answer.answer.startswith("NVLink")


@pytest.mark.parametrize(
    "question",
    [
        "How do I train my dog to sit?",
        "which command restarts my home router",
        "why is the sky blue?",
        # A neighbouring area (ontology/outside_topics.txt): building native code from source.
        "CMake build of my CUDA extension fails at the link step with undefined reference to cudaMalloc",
    ],
)
def test_questions_outside_the_graph_stay_declined(semantic_engine: Engine, question: str) -> None:
    assert not semantic_engine.ask(question).answered


@pytest.mark.parametrize(
    ("question", "area"),
    [
        (
            "the Postgres client in our web app throws connection terminated after the pool sits idle overnight",
            "database connection pools",
        ),
        ("vite hot reload inside the dev container only works with polling enabled", "front-end dev servers"),
        (
            "my GPU usage in games drops and FPS stutters since the last Proton update",
            "PC games running slowly",
        ),
    ],
)
def test_a_declined_question_names_the_area_it_belongs_to(
    semantic_engine: Engine, question: str, area: str
) -> None:
    """Declined with the neighbouring area it is about (ontology/outside_topics.txt), so the reader
    knows where to ask instead, not only that the graph knows nothing near it."""
    answer = semantic_engine.ask(question)
    assert not answer.answered
    assert f"does not cover that area ({area}" in answer.answer, answer.answer


@pytest.mark.parametrize(
    "follow_up",
    [
        "how do I check it?",
        # No "it": "pause", "frames" and "switch" are said of PFC, so the question asks about it.
        "and where would I see pause frames counted on the switch?",
        # "prove" is no word of the graph's, but a report word for checking: no subject of its own.
        "what do I run to prove it?",
        # Typed without apostrophes: "whats" and "ok" are no words of the question's own.
        "ok so whats the first thing to check then",
    ],
)
def test_follow_up_reports_its_context(engine: Engine, follow_up: str) -> None:
    conversation = Conversation()
    assert engine.ask("what is PFC?", conversation).answered
    follow = engine.ask(follow_up, conversation)
    assert follow.answered
    assert follow.context and "PFC" in follow.context
    assert follow.to_dict()["context"] == follow.context
    assert "PFC" in follow.answer


def test_off_topic_follow_up_is_declined_and_standalone_question_has_no_context(engine: Engine) -> None:
    conversation = Conversation()
    engine.ask("what is PFC?", conversation)
    assert not engine.ask("what is the best pizza in Naples?", conversation).answered
    alone = engine.ask("What does nvidia-smi topo -m show?", conversation)
    assert alone.answered
    assert alone.context is None
    assert "context" not in alone.to_dict()


@pytest.mark.parametrize(
    "follow_up",
    [
        "and what about knitting a scarf?",  # leans by its wording ("and what about")
        "how do I fix a leaking tap?",  # ordinary words only: read as leaning before
        "what about my sourdough starter, it is not rising?",  # "it" is the starter
        "so how do I cook rice?",  # no phrase of its own, but no word the graph uses
        "and how do I repair my bicycle wheel?",  # a wheel the graph could know, but a bicycle's
        "and how do I learn to paint?",  # the thing to do ("to paint") is outside the graph
        "is it going to snow tonight?",  # "it" points at nothing said: the weather's "it"
        "how much would it cost to visit Lisbon?",  # only asking words ("cost") besides outside ones
        # Three or more words of its own that no statement of NCCL holds, whatever its wording
        # leans on ("and how"), though "table", "block" and "port" are words the graph uses.
        "and how do I align a table in markdown?",
        "and how do I indent a block in python?",
        "and how do I set up port forwarding on my router?",
    ],
)
def test_follow_up_bringing_its_own_subject_from_outside_the_graph_is_declined(
    engine: Engine, follow_up: str
) -> None:
    conversation = Conversation()
    assert engine.ask("what is NCCL?", conversation).answered
    answer = engine.ask(follow_up, conversation)
    assert not answer.answered
    assert answer.context is None


@pytest.mark.parametrize(
    "follow_up",
    [
        "what about the KV cache?",
        "what about my inference pods?",
        "can it run on a desktop?",
        "which setting do I bump?",
        "ok, and how do I check it?",  # "ok" is chatter, not a subject from outside
        "is it worth it?",
        "what's the quickest way to fix it?",
    ],
)
def test_follow_up_whose_subject_the_graph_knows_or_that_asks_about_it_leans_on_context(
    engine: Engine, follow_up: str
) -> None:
    # A phrase the graph knows, or one said of "it" (what the conversation is about), is no
    # subject from outside: the follow-up is still answered.
    conversation = Conversation()
    assert engine.ask("what is NCCL?", conversation).answered
    assert engine.ask(follow_up, conversation).answered


def test_follow_up_pointing_back_at_a_declined_turn_is_declined(engine: Engine) -> None:
    # "it" is the bread the declined turn asked about, not PFC from the turn before.
    conversation = Conversation()
    assert engine.ask("what is PFC?", conversation).answered
    assert not engine.ask("how do I bake sourdough bread?", conversation).answered
    assert not engine.ask("how long does it take?", conversation).answered
    # A question that names its subject is answered, and context resumes from it.
    assert engine.ask("what is NCCL?", conversation).answered
    follow = engine.ask("how do I check it?", conversation)
    assert follow.answered and follow.context and "NCCL" in follow.context


def test_follow_up_after_a_declined_turn_about_a_known_thing_is_about_that_thing(engine: Engine) -> None:
    # "who invented the GPU?" is declined (no people in the graph), but it was about the GPU.
    conversation = Conversation()
    assert engine.ask("what is PFC?", conversation).answered
    assert not engine.ask("who invented the GPU?", conversation).answered
    follow = engine.ask("what layer is it in?", conversation)
    assert follow.answered
    assert follow.context == "GPU"


def test_follow_up_after_a_name_the_graph_lacks_is_declined(engine: Engine) -> None:
    conversation = Conversation()
    assert engine.ask("what is NCCL?", conversation).answered
    assert not engine.ask("what is CXL memory pooling?", conversation).answered
    assert not engine.ask("where does it fit?", conversation).answered


def test_input_that_is_no_question_keeps_the_conversation(engine: Engine) -> None:
    conversation = Conversation()
    assert engine.ask("what is PFC?", conversation).answered
    assert engine.ask("   ", conversation).error
    follow = engine.ask("how do I check it?", conversation)
    assert follow.answered and follow.context and "PFC" in follow.context


@pytest.mark.parametrize(
    "question",
    [
        "Volume creation is failing after successful deployment",
        "pods wait forever because only some of the job's workers could be placed",
    ],
)
def test_weak_matches_are_offered_as_closest_not_asserted(engine: Engine, question: str) -> None:
    from stackgraph.graph.answering import reports
    from stackgraph.graph.answering.context import Context

    ctx = Context(engine, question, None, 0.0, [], None)
    hits = reports.rank(ctx)
    answer = reports.from_passages(ctx)
    assert hits and answer is not None
    hedged = answer.answer.startswith("The closest the graph knows:")
    assert hedged == (hits[0].score < reports.ASSERT_SCORE)
    if hedged:
        assert answer.confidence <= 0.5


def test_the_passage_cache_gives_the_index_it_was_built_from(
    engine: Engine, tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from stackgraph.graph.answering import passages

    monkeypatch.setenv("STACKGRAPH_CACHE_DIR", str(tmp_path))
    built = passages.load_or_build(engine)  # nothing cached yet: builds and writes
    assert list((tmp_path / "passages").glob("*.json"))
    cached = passages.load_or_build(engine)
    assert cached.passages == built.passages
    assert cached._terms == built._terms
    question = "the port negotiated below its rated speed and collectives got slow"
    assert [h.passage.key for h in cached.rank(question, use_semantic=False)] == [
        h.passage.key for h in built.rank(question, use_semantic=False)
    ]


def test_an_unreadable_passage_cache_is_rebuilt(
    engine: Engine, tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from stackgraph.graph.answering import passages

    monkeypatch.setenv("STACKGRAPH_CACHE_DIR", str(tmp_path))
    path = passages._cache_path(engine)
    path.parent.mkdir(parents=True)
    path.write_text("{not json", encoding="utf-8")
    index = passages.load_or_build(engine)
    assert len(index.passages) > 500


def test_the_passage_cache_is_keyed_by_the_stopwords_it_was_stemmed_with(
    engine: Engine, tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from stackgraph.graph import linking
    from stackgraph.graph.answering import passages

    monkeypatch.setenv("STACKGRAPH_CACHE_DIR", str(tmp_path))
    before = passages._cache_path(engine)
    edited = tmp_path / "linking.py"
    edited.write_bytes(Path(linking.__file__).read_bytes() + b"\n# another stopword\n")
    monkeypatch.setattr(linking, "__file__", str(edited))
    assert passages._cache_path(engine) != before


def test_a_named_problem_is_favoured_over_the_definitions_of_technologies_named_beside_it(
    engine: Engine,
) -> None:
    """In a report the problem named is the subject; a technology named beside it is context, so
    its definition gets less of the naming prior than the problem's passages get."""
    problem = next(iri for iri in sorted(engine.problems) if engine.catalog.get(iri).definition)
    technology = next(
        iri
        for iri in engine.entities_of("Technology")
        if engine.catalog.get(iri) and engine.catalog.get(iri).definition
    )
    question = f"{engine.catalog.display(technology)} {engine.catalog.display(problem)}"
    hits = engine.passages.rank(question, named=[technology, problem], use_semantic=False, k=40)
    # Without the model the fused score is word overlap plus the prior: their difference is the prior.
    prior = {
        (h.passage.subject, h.passage.predicate.endswith("definition")): h.score - h.lexical for h in hits
    }
    assert (problem, True) in prior and (technology, True) in prior
    assert prior[(problem, True)] > prior[(technology, True)] + 0.1


def test_a_named_technologys_definition_keeps_its_prior_only_when_little_else_is_asked(
    engine: Engine,
) -> None:
    """ "What is X?" asks for X's definition; a question that says more than X's name asks about
    something X has or needs, so X's definition loses its naming prior while X's other statements
    keep theirs."""
    technology = next(
        iri
        for iri in engine.entities_of("Technology")
        if engine.catalog.get(iri) and engine.catalog.get(iri).definition
    )
    name = engine.catalog.display(technology)
    asked = [
        t
        for t in terms("which switch buffers and cable lengths does a deployment require")
        if t in engine.passages.idf
    ]
    assert len(asked) >= 2

    def prior(residual: list[str]) -> float:
        hits = engine.passages.rank(name, named=[technology], use_semantic=False, k=40, residual=residual)
        own = [
            h for h in hits if h.passage.subject == technology and h.passage.predicate.endswith("definition")
        ]
        assert own
        return own[0].score - own[0].lexical

    assert prior([]) > 0.1  # "what is X?": nothing asked beyond the name
    assert prior(asked) < 0.01


def test_a_relationship_answer_leaving_out_a_named_entity_meets_the_passages(engine: Engine) -> None:
    """A path between two of three named parameters answers part of the question: the passages
    that say all three then compete, and often win."""
    import itertools

    params = engine.entities_of("ConfigurationParameter")[:8]
    combos = list(itertools.islice(itertools.combinations(params, 3), 12))
    complete = 0
    for trio in combos:
        names = [engine.catalog.display(p) for p in trio]
        answer = engine.ask(f"What is the relationship between {names[0]}, {names[1]} and {names[2]}?")
        complete += all(n.lower() in answer.answer.lower() for n in names)
    assert complete >= len(combos) // 4


def _opening(text: str) -> str:
    return " ".join(text.lower().split())[:60]


def _shared_statements(engine: Engine) -> list[list]:
    """Groups of passages of different entities that state the same sentence."""
    groups: dict[str, list] = {}
    for passage in engine.passages.passages:
        if not passage.relation:
            groups.setdefault(_opening(passage.object), []).append(passage)
    return [g for g in groups.values() if len({p.subject for p in g}) > 1]


def test_a_statement_two_entities_carry_is_said_once(engine: Engine) -> None:
    groups = _shared_statements(engine)
    assert groups, "the graph states some sentences on more than one entity"
    asked = 0
    for group in groups[:12]:
        text = group[0].object
        answer = engine.ask(" ".join(text.split()[:14]))
        if not answer.answered:
            continue
        asked += 1
        said = " ".join(answer.answer.lower().split())
        assert said.count(_opening(text)) <= 1, answer.answer
    assert asked >= 6


def test_a_placement_of_everything_named_is_not_replaced_by_a_hedge_or_an_answer_about_else(
    engine: Engine,
) -> None:
    """ "does the nine-layer model need new layers for TPUs with XLA, or where do they land?": the
    placement of TPU and XLA answers it, however many more of its words the closest statements
    about another technology repeat; the same hedge still replaces a definition."""
    from stackgraph.graph.model import Answer

    tpu, xla, ualink = engine.resolve("TPU"), engine.resolve("XLA"), engine.resolve("UALink")
    question = terms("tpus with xla: does the model need new layers or where do they land")
    naming = {tpu.iri: {"tpus"}, xla.iri: {"xla"}}
    placed = Answer("q", True, "TPU fits in L9. XLA fits in L4.", "where_fits", 0.9, entities=(tpu, xla))
    hedge = Answer(
        "q",
        True,
        "The closest the graph knows: UALink maps onto the existing layer rather than needing new layers; "
        "where do they land: the model",
        "where_fits",
        0.5,
        entities=(ualink,),
    )
    assert compete.better(engine, question, placed, hedge, naming=naming) is placed
    defined = Answer("q", True, "TPU: an accelerator. XLA: a compiler.", "define", 0.9, entities=(tpu, xla))
    assert compete.better(engine, question, defined, hedge, naming=naming) is hedge
    # Asserted, but about none of what the question names: the placement still stands.
    elsewhere = Answer(
        "q", True, hedge.answer.removeprefix(compete.HEDGED), "where_fits", 0.8, entities=(ualink,)
    )
    assert compete.better(engine, question, placed, elsewhere, naming=naming) is placed
    assert compete.better(engine, question, defined, elsewhere, naming=naming) is elsewhere


def test_a_comparison_of_what_is_named_is_not_replaced_by_an_answer_about_something_else(
    engine: Engine,
) -> None:
    """ "prometheus+grafana vs langfuse, do they overlap?": the two sides compared answer it, not a
    statement about a third thing that repeats more of the question's words."""
    from stackgraph.graph.model import Answer

    nccl, rccl, ualink = engine.resolve("NCCL"), engine.resolve("RCCL"), engine.resolve("UALink")
    other = "UALink maps onto the existing node interconnect layer rather than needing a new one"
    question = terms(f"nccl vs rccl: {other}")
    naming = {nccl.iri: {"nccl"}, rccl.iri: {"rccl"}}
    compared = Answer(
        "q", True, "NCCL: NVIDIA's library. RCCL: AMD's.", "compare", 0.9, entities=(nccl, rccl)
    )
    elsewhere = Answer("q", True, other, "compare", 0.8, entities=(ualink,))
    assert compete.better(engine, question, compared, elsewhere, naming=naming) is compared
    # A challenger about one of the two sides still competes on what it covers.
    about_one = Answer("q", True, f"RCCL: {other}", "compare", 0.8, entities=(rccl,))
    assert compete.better(engine, question, compared, about_one, naming=naming) is about_one
    # So does one about a third thing the comparison itself says (where the two sides meet).
    meeting = Answer("q", True, "NCCL and RCCL, over UALink.", "compare", 0.9, entities=(nccl, rccl, ualink))
    assert compete.better(engine, question, meeting, elsewhere, naming=naming) is elsewhere


def test_competes_leaf_constants_are_the_engines() -> None:
    # compete imports nothing of the answering package, so it spells these out: they must agree.
    from stackgraph.graph.answering import intents, reports
    from stackgraph.graph.store import SG

    assert (compete.DEFINE, compete.FIT, compete.COMPARE, compete.HEDGED) == (
        intents.DEFINE,
        intents.FIT,
        intents.COMPARE,
        reports.HEDGE,
    )
    assert str(SG.mitigates) == compete.MITIGATES


def test_a_definition_fallback_loses_a_tie_to_a_statement_about_the_same_entity(engine: Engine) -> None:
    from stackgraph.graph.model import Answer

    nccl = engine.resolve("NCCL")
    question = terms("NCCL bootstrap ring")
    definition = Answer("q", True, "NCCL: collective library. ring", "define", 0.9, entities=(nccl,))
    statement = Answer("q", True, "NCCL: ring bootstrap order.", "define", 0.8, entities=(nccl,))
    assert compete.coverage(engine, question, statement.answer) >= compete.coverage(
        engine, question, definition.answer
    )
    assert compete.better(engine, question, definition, statement) is statement
    # Any other first answer keeps its head start on a tie.
    placed = Answer("q", True, definition.answer, "where_fits", 0.9, entities=(nccl,))
    assert compete.better(engine, question, placed, statement) is placed


def test_a_report_sharing_several_words_with_a_statement_is_answered_alone(engine: Engine) -> None:
    """Three distinct words of the question in one statement are evidence even when the rest of
    the question is in words the statement does not use (coverage below the alone bar)."""
    from stackgraph.graph.answering import reports
    from stackgraph.graph.answering.context import Context
    from stackgraph.graph.answering.question import Question

    filler = "our team saw this happen twice during the weekend migration window again"
    tried = 0
    for passage in engine.passages.passages[::7]:
        words = [w for w in passage.object.split() if w.isalpha() and len(w) > 6][:3]
        if passage.relation or len(set(terms(" ".join(words)))) < reports.ALONE_WORDS:
            continue
        question = f"{filler} {' '.join(words)}"
        parsed = Question.parse(engine, question)
        ctx = Context(engine, question, None, 0.0, [], None, parsed=parsed)
        hits = reports.rank(ctx, use_semantic=False)
        if not hits or engine.passages.coverage(parsed.terms, hits[0].passage) >= reports.ALONE_COVERAGE:
            continue
        if len(engine.passages.shared_terms(parsed.terms, hits[0].passage)) < reports.ALONE_WORDS:
            continue
        tried += 1
        assert reports.from_passages(ctx, alone=True, use_semantic=False) is not None
        if tried >= 5:
            break
    assert tried >= 3


def test_a_definition_of_a_name_the_graph_lacks_is_declined(engine: Engine, semantic_engine: Engine) -> None:
    """ "What is a <word>?" for a word the graph uses but names no entity by is declined: the graph
    has no definition of it, however many statements use the word."""
    from stackgraph.graph.answering import question as question_module

    index = engine.passages
    labelled = {
        t
        for rec in (engine.catalog.get(iri) for iri in {p.subject for p in index.passages})
        if rec
        for label in engine.catalog.all_labels(rec)
        for t in terms(label)
    }
    words = sorted(
        {w.lower() for p in index.passages for w in p.object.split() if w.isalpha() and len(w) > 7},
        key=lambda w: -len(index.postings.get(terms(w)[0] if terms(w) else "", ())),
    )
    asked = 0
    for word in words:
        stems = terms(word)
        question = f"What is a {word}?"
        parsed = question_module.Question.parse(engine, question)
        if len(stems) != 1 or stems[0] in labelled or parsed.mentions:
            continue
        assert len(index.postings.get(stems[0], ())) > 0  # the graph uses the word
        for each in (engine, semantic_engine):
            assert not each.ask(question).answered, (question, each.ask(question).answer)
        asked += 1
        if asked >= 4:
            break
    assert asked >= 4


def test_an_entity_stating_a_sentence_already_said_is_named_not_repeated(engine: Engine) -> None:
    from stackgraph.graph.answering import reports
    from stackgraph.graph.answering.context import Context
    from stackgraph.graph.answering.question import Question

    checked = 0
    for group in _shared_statements(engine)[:20]:
        first, other = group[0], next(p for p in group if p.subject != group[0].subject)
        name = engine.catalog.display(other.subject)
        question = f"{' '.join(first.object.split()[:12])} {name}"
        parsed = Question.parse(engine, question)
        ctx = Context(engine, question, None, 0.0, [], None, parsed=parsed)
        hits = reports.rank(ctx, use_semantic=False, k=2)
        keys = {h.passage.key for h in hits}
        if {first.key, other.key} - keys or name.lower() in first.text.lower():
            continue  # both must lead, and the first must not name the other already
        answer = reports.from_passages(ctx, use_semantic=False)
        assert answer is not None
        said = " ".join(answer.answer.lower().split())
        assert said.count(_opening(first.object)) == 1, answer.answer
        assert name.lower() in said
        assert other.subject in {e.iri for e in answer.entities}
        checked += 1
    assert checked >= 3


def test_an_answer_about_a_described_entity_loses_a_tie_to_the_passage_answer(engine: Engine) -> None:
    """The intent's answer keeps its head start only when it is about what the question names."""
    from stackgraph.graph.model import Answer

    question = terms("racks draw more power than the room was built for")
    said = "Racks draw more power than the room was built for."
    density = engine.search("rack power density")[0][0]
    first = Answer("q", True, said, "diagnose", 0.9, entities=(density,))
    passage = Answer("q", True, said, "diagnose", 0.8, entities=(density,))
    assert compete.better(engine, question, first, passage, described=True) is passage
    assert compete.better(engine, question, first, passage, described=False) is first


def test_a_passage_about_a_command_says_the_command_even_unplaced(engine: Engine) -> None:
    """A command's "shows" statement is answered with the command to run, whether or not the
    graph places the command in a layer."""
    from stackgraph.graph.answering import reports
    from stackgraph.graph.answering.context import Context
    from stackgraph.graph.answering.evidence import fetch
    from stackgraph.graph.answering.placement import placements
    from stackgraph.graph.answering.question import Question
    from stackgraph.graph.answering.symptoms import one_line

    checked = 0
    for passage in engine.passages.passages:
        if passage.predicate != str(SG.shows):
            continue
        command = fetch(engine, passage.subject).text(SG.commandText)
        question = " ".join(passage.object.split()[:16])
        parsed = Question.parse(engine, question)
        ctx = Context(engine, question, None, 0.0, [], None, parsed=parsed)
        if not command or placements(ctx, passage.subject):
            continue
        hits = reports.rank(ctx, use_semantic=False, k=1)
        if not hits or hits[0].passage.key != passage.key:
            continue
        answer = reports.from_passages(ctx, use_semantic=False)
        assert answer is not None and one_line(command) in answer.answer, answer
        checked += 1
    assert checked >= 2


def test_a_passage_answer_spells_out_its_subjects_acronym_once(engine: Engine) -> None:
    from stackgraph.graph.answering import reports
    from stackgraph.graph.answering.context import Context
    from stackgraph.graph.answering.knowledge import expansion
    from stackgraph.graph.answering.question import Question

    checked = 0
    for passage in engine.passages.passages:
        if passage.predicate != reports.SKOS_DEFINITION:
            continue
        question = " ".join(passage.object.split()[:14])
        parsed = Question.parse(engine, question)
        ctx = Context(engine, question, None, 0.0, [], None, parsed=parsed)
        spelled = expansion(ctx, passage.subject)
        if not spelled or spelled.lower() in passage.text.lower():
            continue
        hits = reports.rank(ctx, use_semantic=False, k=1)
        if not hits or hits[0].passage.key != passage.key:
            continue
        answer = reports.from_passages(ctx, use_semantic=False)
        assert answer is not None
        label = engine.catalog.display(passage.subject)
        assert answer.answer.startswith(f"{label} ({spelled})"), answer.answer
        assert answer.answer.count(f"({spelled})") == 1
        checked += 1
        if checked >= 5:
            break
    assert checked >= 3


def test_an_inventory_adds_passages_without_reweighing_the_stacks_words(engine: Engine, tmp_path) -> None:
    """Word rarity (BM25's and the entity index's) is taken over the built-in graph: loading an
    inventory full of "node" and "GPU" leaves what those words weigh, so the stack's questions
    are answered as they are without it (and as a remote store holding the inventory answers
    them), while the inventory's own statements are still searched."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
    from scale_inventory import write_inventory

    with_inventory = Engine.load([write_inventory(40, tmp_path / "inventory.ttl")], semantic=False)
    for word in ("node", "GPU", "switch", "cluster"):
        (stem,) = terms(word)
        assert with_inventory.passages.idf[stem] == engine.passages.idf[stem], word
        assert with_inventory.lexical.weight(stem) == engine.lexical.weight(stem), word
    assert len(with_inventory.passages.passages) > len(engine.passages.passages)
    question = "which layer owns a node whose GPUs are not advertised?"
    assert with_inventory.ask(question).answer == engine.ask(question).answer


def test_every_entity_has_a_passage_even_when_its_only_sentence_is_shared(engine: Engine) -> None:
    # gdscheck, fio and iostat all "show: Disk I/O can't keep up with model loading": a sentence
    # shared by three entities reads as a section's remark, but it is all the graph says of each
    # of them, so dropping it would leave them unmatchable by what a report describes.
    subjects = {p.subject for p in engine.passages.passages}
    assert set(engine.catalog.records) <= subjects
    texts = {p.text for p in engine.passages.passages}
    assert "gdscheck shows: Disk I/O can't keep up with model loading" in texts


def test_the_sentence_that_asks_is_found_among_the_report_sentences(engine: Engine) -> None:
    from stackgraph.graph.answering.question import Question

    report = "Serving is on 2 boxes with TP=8 over InfiniBand, version 4.2.1. Which setting spreads layers over both boxes?"
    assert set(Question.parse(engine, report).asked_terms) == set(
        terms("which setting spreads layers over both boxes")
    )
    assert Question.parse(engine, "which setting spreads layers over both boxes?").asked_terms == ()
    assert Question.parse(engine, "TP=8 on one box. It does not fit.").asked_terms == ()


def test_words_of_the_sentence_that_asks_weigh_more_than_the_context_around_it(engine: Engine) -> None:
    # The context names tensor parallelism; the question asks what spreads layers across nodes.
    question = "Serving is on 2 boxes with tensor parallel 8 each. Which setting splits layers across nodes?"
    asked = terms("which setting splits layers across nodes")
    index = engine.passages
    plain = index.rank(question, use_semantic=False, k=60)
    stressed = index.rank(question, use_semantic=False, k=60, asked=asked)

    # Scores are shares of the best; what counts is the asked passage against the context's.
    def gap(hits: list) -> float:
        pipeline = next(h.score for h in hits if h.passage.text.startswith("pipeline_parallel_size"))
        return hits[0].score - pipeline

    assert gap(stressed) < gap(plain)


def _alone_context(engine: Engine, question: str):
    from stackgraph.graph.answering.context import Context
    from stackgraph.graph.answering.question import Question

    parsed = Question.parse(engine, question, None)
    return Context(engine, question, None, 0.0, [], parsed.model_hint, parsed=parsed)


def test_a_chance_best_passage_gives_way_to_a_close_runner_up_that_means_the_question(
    semantic_engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Standing alone, the best passage must share words with the question or mean it; when it
    only met a word or two by chance, a runner-up nearly as good that does mean it answers."""
    from stackgraph.graph.answering import reports
    from stackgraph.graph.answering.passages import Hit

    engine = semantic_engine
    question = "zzqx frobnicate wibble"  # words no passage holds: only the crafted ranking decides
    chance, meant = engine.passages.passages[0], engine.passages.passages[1]
    near = reports.ALONE_SEMANTIC + 0.1
    ranking = [Hit(chance, 0.6, 0.9, 0.0), Hit(meant, 0.58, 0.5, near)]
    monkeypatch.setattr(reports, "rank", lambda ctx, k=8, use_semantic=True: list(ranking))
    monkeypatch.setattr(engine.passages, "semantic", lambda q: [0.0])
    answer = reports.from_passages(_alone_context(engine, question), alone=True)
    assert answer is not None
    assert answer.answer.startswith(engine.catalog.display(meant.subject))

    # A runner-up too far behind the best (below CLOSE_SHARE of its score) stays out: declined.
    ranking[1] = Hit(meant, 0.6 * reports.CLOSE_SHARE - 0.05, 0.5, near)
    assert reports.from_passages(_alone_context(engine, question), alone=True) is None
    # And so does one close in score that means the question no more than the best does.
    ranking[1] = Hit(meant, 0.58, 0.5, reports.ALONE_SEMANTIC - 0.1)
    assert reports.from_passages(_alone_context(engine, question), alone=True) is None


@pytest.mark.parametrize("word", ["flag", "knob", "option"])
def test_a_setting_called_by_another_name_is_no_name_the_graph_lacks(engine: Engine, word: str) -> None:
    """The graph says "setting" and "parameter"; users say "flag" or "knob". "Is there a vLLM
    flag for that?" asks for a setting, not about a thing called "flag" that the graph lacks."""
    answer = engine.ask(f"is there a vllm {word} for that?")
    assert answer.answered, answer.answer


def test_a_follow_up_read_with_the_turn_before_is_ranked_for_what_it_asks(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Read together with the turn before ("is PFC needed for RoCE? and who tracks pause frames"),
    the follow-up is what is asked, question mark or not: the words it weighs as asked are its own,
    not the earlier question's (which would win every ranking by repeating the first answer)."""
    from stackgraph.graph.answering import reports

    seen: list[tuple[str, ...]] = []
    real = reports.rank

    def spy(ctx, k=8, use_semantic=True):
        seen.append(ctx.parsed.asked_terms)
        return real(ctx, k=k, use_semantic=use_semantic)

    conversation = Conversation()
    assert engine.ask("is PFC needed for RoCE?", conversation).answered
    monkeypatch.setattr(reports, "rank", spy)
    engine.ask("and what tool tracks the pause frames", conversation)
    follow_up_terms = set(terms("and what tool tracks the pause frames"))
    assert seen and all(set(asked) == follow_up_terms for asked in seen), seen


def test_a_new_question_about_an_outside_thing_after_other_turns_gets_no_nearest_guess(
    semantic_engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A weak (hedged) passage match for a question whose subject is outside the graph ("a good
    lasagna recipe") and that names nothing the graph has: asked after other turns, the topic
    changed and the nearest statements are no answer; asked alone, the hedged offer stands (such
    a phrase is often a report's own setting)."""
    from stackgraph.graph.answering import reports
    from stackgraph.graph.answering.passages import Hit

    engine = semantic_engine
    question = "nice. whats a good lasagna recipe that fits the memory budget"
    passage = next(
        p for p in engine.passages.passages if p.subject.endswith("/cause-kv-cache-batch-exceeds-vram")
    )
    weak = Hit(passage, reports.ASSERT_SCORE - 0.05, 0.6, reports.ALONE_SEMANTIC + 0.05)
    monkeypatch.setattr(reports, "rank", lambda ctx, k=8, use_semantic=True: [weak])
    ctx = _alone_context(engine, question)
    assert not ctx.parsed.mentions and ctx.parsed.foreign_subject(engine, ordinary=True)
    alone = reports.from_passages(ctx)
    assert alone is not None and alone.answer.startswith(reports.HEDGE)
    ctx = _alone_context(engine, question)
    ctx.after_turns = True
    assert reports.from_passages(ctx) is None


def test_a_word_pointing_back_covers_its_own_sentence_only(engine: Engine) -> None:
    """ "great, that worked. whats a good lasagna recipe?": "that" points back in the first
    sentence; the second brings a subject of its own, and the follow-up is declined."""
    conversation = Conversation()
    assert engine.ask("what does max_num_seqs limit in vLLM?", conversation).answered
    follow = engine.ask("great, that worked. whats a good lasagna recipe for tonight", conversation)
    assert not follow.answered, follow.answer


def test_a_follow_up_is_not_answered_with_the_definition_just_given(engine: Engine) -> None:
    """ "why should I care about it?" right after "what is the KV cache?" wants something beyond
    the definition the reader has just read: the follow-up's answer does not give it again."""
    conversation = Conversation()
    first = engine.ask("what is the KV cache?", conversation)
    definition = engine.catalog.get(first.entities[0].iri).definition
    assert first.answered and definition and definition[:60] in first.answer
    follow = engine.ask("why should i care about it?", conversation)
    assert follow.answered
    assert definition[:60] not in follow.answer, follow.answer


def test_a_definition_given_in_passing_is_said_again_when_the_follow_up_asks_its_words(
    semantic_engine: Engine,
) -> None:
    """The first answer is about RAG and names, third, the tool that runs the ingestion "as a DAG";
    "what runs those steps as a DAG?" asks for that tool, so its definition is the answer again,
    while RAG's own definition stays unrepeated."""
    conversation = Conversation()
    first = semantic_engine.ask(
        "how does a RAG ingestion pipeline chunk and embed documents into the vector store", conversation
    )
    airflow = semantic_engine.catalog.get(str(KG["apache-airflow"])).definition
    assert airflow[:50] in first.answer and not first.answer.startswith(airflow[:50])
    follow = semantic_engine.ask("and what runs those steps as a DAG?", conversation)
    assert airflow[:50] in follow.answer[:300], follow.answer


def test_the_subjects_own_definition_is_said_again_when_the_follow_up_asks_two_of_its_words(
    semantic_engine: Engine,
) -> None:
    """ "where does the standby rack keep its models?" asks anew two words of the definition just
    given ("keeps models pre-staged on NVMe"): that is the answer, said again. One word in common
    is chance (see the KV cache test above)."""
    conversation = Conversation()
    first = semantic_engine.ask("what is active-passive warm standby?", conversation)
    definition = semantic_engine.catalog.get(first.entities[0].iri).definition
    assert definition[:40] in first.answer[:200]
    follow = semantic_engine.ask("and where does the standby rack keep its models exactly?", conversation)
    assert "pre-staged on NVMe" in follow.answer[:400], follow.answer


def test_a_follow_up_points_at_the_last_layer_by_its_head_noun(engine: Engine) -> None:
    """ "that fabric" after an answer placing RoCE in L7 Network Fabric means that layer, as "that
    layer" would: what else sits there is the layer's members, not RoCE's placement again."""
    conversation = Conversation()
    assert (
        "L7 Network Fabric" in engine.ask("where does RoCE fit in the nine-layer model?", conversation).answer
    )
    follow = engine.ask("what else sits in that fabric?", conversation)
    assert follow.answered and follow.context and "Network Fabric" in follow.context
    assert "InfiniBand" in follow.answer, follow.answer


def test_how_to_carry_out_a_practice_gives_the_commands_it_uses(engine: Engine) -> None:
    """A practice has no checks of its own; the commands and tools it uses are how it is done.
    Built from the graph: every practice that uses diagnostics and has no checks."""
    from stackgraph.graph.answering.context import Candidate, Context
    from stackgraph.graph.answering.evidence import fetch
    from stackgraph.graph.answering.symptoms import diagnose

    asked = 0
    for iri, rec in sorted(engine.catalog.records.items()):
        if not engine.catalog.is_a(iri, SG.Practice):
            continue
        facts = fetch(engine, iri)
        if facts.iris(SG.diagnosedBy) or facts.iris(SG.whereToLook):
            continue
        used = [d for d in facts.iris(SG.uses) if engine.catalog.is_a(d, SG.Diagnostic)]
        if not used:
            continue
        ctx = Context(
            engine, f"how do I do this: {rec.label}?", "diagnose", 1.0, [Candidate(iri, 0.95, "exact")], None
        )
        answer = diagnose(ctx)
        assert answer is not None, rec.label
        for d in used[:4]:
            assert any(e.iri == d for e in answer.entities), (rec.label, d)
        asked += 1
    assert asked


def test_asking_for_a_fix_of_a_problem_gives_what_mitigates_its_causes(engine: Engine) -> None:
    """The remedy answerer says what mitigates a problem's likely causes. Built from the graph:
    every symptom without fixes of its own one of whose first two likely causes has some."""
    from stackgraph.graph.answering import remedies
    from stackgraph.graph.answering.context import Candidate, Context
    from stackgraph.graph.answering.evidence import fetch
    from stackgraph.graph.answering.question import Question

    asked = 0
    for iri in sorted(engine.catalog.records):
        if not engine.catalog.is_a(iri, SG.Symptom):
            continue
        facts = fetch(engine, iri)
        causes = (facts.iris(SG.likelyCause) + facts.iris(SG.suggestsCause))[:2]
        fixes = [f for c in causes for f in fetch(engine, c).incoming(SG.mitigates)]
        if facts.incoming(SG.mitigates) or not fixes:
            continue
        question = "what tool fixes it?"
        parsed = Question.parse(engine, question, None)
        ctx = Context(
            engine, question, None, 0.0, [Candidate(iri, 0.95, "conversation")], None, parsed=parsed
        )
        answer = remedies.remedy(ctx)
        assert answer is not None and "What fixes" in answer.answer, iri
        assert any(engine.catalog.label(f) in answer.answer for f in fixes), answer.answer
        assert all(f in {e.iri for e in answer.entities} for f in fixes[:1]), answer.entities
        asked += 1
    assert asked >= 3


@pytest.mark.slow
def test_a_report_naming_a_problem_with_no_fix_gets_the_fix_of_the_problem_it_describes(
    semantic_engine: Engine,
) -> None:
    """ "how do we prevent it?" after a report that names a problem the graph fixes nothing of
    (a cause in a pod's events) while describing another in its words: the fix of the described
    one answers. Built from the graph: every symptom with a fix, described by its label beside a
    problem without one."""
    engine = semantic_engine
    from stackgraph.graph.answering import symptoms
    from stackgraph.graph.answering.context import Candidate, Context
    from stackgraph.graph.answering.evidence import fetch
    from stackgraph.graph.answering.question import Question

    def fixes_of(iri: str) -> list[str]:
        facts = fetch(engine, iri)
        causes = facts.iris(SG.likelyCause) + facts.iris(SG.suggestsCause)
        return facts.incoming(SG.mitigates) + [
            f for c in causes for f in fetch(engine, c).incoming(SG.mitigates)
        ]

    named = next(iri for iri in sorted(engine.problems) if not fixes_of(iri))
    asked = 0
    for iri in sorted(engine.catalog.records):
        fixes = fixes_of(iri) if engine.catalog.is_a(iri, SG.Symptom) else []
        if not fixes:
            continue
        question = (
            f"{engine.catalog.label(iri)}, and {engine.catalog.label(named)} too. how do we prevent it?"
        )
        parsed = Question.parse(engine, question, None)
        ctx = Context(engine, question, None, 0.0, [Candidate(named, 0.95, "exact")], None, parsed=parsed)
        answer = symptoms.remedy_described(ctx)
        assert answer is not None and "What fixes" in answer.answer, (question, answer)
        assert any(engine.catalog.label(f) in answer.answer for f in fixes), answer.answer
        assert any(f.predicate == str(SG.mitigates) for f in answer.facts)
        asked += 1
    assert asked >= 10
    # Asked after an earlier turn, "what fixes it?" describes nothing of its own.
    question = "and how do we prevent it?"
    parsed = Question.parse(engine, question, None)
    ctx = Context(
        engine, question, None, 0.0, [Candidate(named, 0.95, "conversation")], None, True, parsed=parsed
    )
    assert symptoms.remedy_described(ctx) is None


def test_an_answer_naming_a_fix_is_kept_against_one_naming_none_when_a_fix_is_asked(engine: Engine) -> None:
    from stackgraph.graph.answering import compete

    fixing = engine.ask("what fixes a partially scheduled distributed job?")
    other = engine.ask("what is a pending pod?")
    assert compete.names_fix(fixing) and not compete.names_fix(other)
    question = ["pending", "pod", "pod", "event", "schedul", "prevent"]
    assert compete.better(engine, question, fixing, other, asks_fix=True) is fixing
    assert compete.better(engine, question, fixing, other, asks_fix=False) is other


def test_a_follow_up_asking_what_fixes_it_gets_the_fix_not_the_checks(engine: Engine) -> None:
    """ "which tool would fix it?" reads like a request for checks ("tool"), but asks for a fix."""
    conversation = Conversation()
    assert engine.ask("what is a partially scheduled distributed job?", conversation).answered
    follow = engine.ask("which tool would fix it in kubernetes?", conversation)
    assert follow.answered and "What fixes" in follow.answer, follow.answer
    assert "Volcano" in follow.answer or "gang scheduling" in follow.answer


def test_how_to_check_a_metric_names_the_tools_that_read_it(engine: Engine) -> None:
    """A metric is read with tools: "how do I check the VRAM allocation?" names them (DCGM
    Exporter, nvidia-smi), not only the metric. Built from the graph: every metric with tools."""
    from stackgraph.graph.answering.evidence import fetch

    asked = 0
    for iri in sorted(engine.catalog.records):
        tools = fetch(engine, iri).iris(SG.diagnosedBy) if engine.catalog.is_a(iri, SG.Metric) else []
        if not tools:
            continue
        answer = engine.ask(f"how do I check the {engine.catalog.label(iri)}?")
        assert any(engine.catalog.label(t) in answer.answer for t in tools[:2]), answer.answer
        assert any(f.predicate == str(SG.diagnosedBy) and f.subject == iri for f in answer.facts)
        asked += 1
    assert asked >= 3


def test_a_comparison_says_what_the_two_share(engine: Engine) -> None:
    """Alternatives are compared by what they share as well as where each sits: "Both vLLM and
    Triton Inference Server implement continuous batching ...". Built from the graph: every pair
    of alternatives sharing an implements, uses or mitigates edge."""
    from stackgraph.graph.answering.evidence import fetch

    asked = 0
    for a in sorted(engine.catalog.records):
        for b in fetch(engine, a).iris(SG.alternativeTo):
            shared = [
                o
                for p in (SG.implements, SG.uses, SG.mitigates)
                for o in fetch(engine, a).iris(p)
                if o in fetch(engine, b).iris(p)
            ]
            if not shared:
                continue
            answer = engine.ask(f"compare {engine.catalog.label(a)} and {engine.catalog.label(b)}")
            if answer.intent != "compare":
                continue
            assert "Both " in answer.answer, answer.answer
            assert engine.catalog.display(shared[0]) in answer.answer, answer.answer
            asked += 1
    assert asked >= 2


def test_a_triage_branch_with_no_checks_near_it_is_looked_at_as_its_symptom(engine: Engine) -> None:
    """ "the correct document was retrieved" has no checks of its own nor beside it: the symptom
    it branches from is first looked at in its retrieval logs, and the answer says so and whose
    checks they are. Built from the graph: every such branch of a symptom with checks."""
    from stackgraph.graph.answering import symptoms
    from stackgraph.graph.answering.context import Candidate, Context
    from stackgraph.graph.answering.evidence import fetch

    asked = 0
    for iri in sorted(engine.catalog.records):
        if not engine.catalog.is_a(iri, SG.TriageBranch):
            continue
        ctx = Context(engine, "which layer?", None, 0.0, [Candidate(iri, 0.95, "exact")], None)
        facts = fetch(engine, iri)
        if symptoms.where_to_look(ctx, iri, facts, record=False) or symptoms.where_to_look_beside(
            ctx, iri, ""
        ):
            continue
        text = symptoms.explain_problem(ctx, iri)
        above = symptoms.where_to_look_above(ctx, iri)
        if not above:
            continue
        assert "Where to look (as for " in text, text
        assert any(f.predicate == str(SG.branch) and f.object == iri for f in ctx.evidence.facts)
        asked += 1
    assert asked >= 2


def test_a_passage_saying_again_what_the_chosen_ones_say_is_left_out(engine: Engine) -> None:
    """Three statements of one sentence in other words ("liveness probes tuned for a web service
    kill the pod ...") take the room the checks need: a passage whose words the chosen ones
    mostly say already is left out when a layer or a thing the answer names says it."""
    from stackgraph.graph.answering import reports
    from stackgraph.graph.answering.passages import Hit, Passage

    said = (
        "Liveness probes tuned for a web service will kill the pod repeatedly before it ever becomes ready."
    )
    first = Passage("a", "urn:x:a", "urn:p", said, f"probe: {said}")
    again = Passage(
        "b", "urn:x:b", "urn:p", "liveness probes tuned for a web service kill the pod repeatedly", "..."
    )
    other = Passage(
        "c", "urn:x:c", "urn:p", "GPUs are exposed through a device plugin as extended resources", "..."
    )
    chosen = [Hit(first, 1.0, 1.0, 1.0)]
    assert reports._restates(again, chosen)
    assert not reports._restates(other, chosen)
    assert not reports._restates(Passage("d", "urn:x:d", "urn:p", "liveness probes", "..."), chosen)


def test_a_larger_tensor_parallel_group_that_is_slower_is_the_more_gpus_no_faster_symptom(
    engine: Engine,
) -> None:
    # The symptom's names cover tensor parallelism too: its answer is the interconnect.
    answer = engine.ask("raising tensor parallel size from 2 to 4 made generation slower, why?")
    assert answer.answered and "NVLink" in answer.answer, answer.answer


def test_where_a_layer_runs_is_its_k8s_role(engine: Engine) -> None:
    """ "Where does L3 run?" asks the K8S-ROLE column, not the layer's members. Built from the
    graph: every layer of the nine-layer model with a runsIn value."""
    from stackgraph.graph.answering.evidence import fetch

    asked = 0
    for layer in engine.catalog.layers():
        runs = fetch(engine, layer.iri).text(SG.runsIn)
        if not runs or not layer.code or not layer.code.startswith("L"):
            continue
        answer = engine.ask(
            f"where does {layer.code} of the nine-layer model run, on the host or in containers?"
        )
        assert answer.answered and "runs " in answer.answer, answer.answer
        assert any(f.predicate == str(SG.runsIn) and f.subject == layer.iri for f in answer.facts)
        asked += 1
    assert asked >= 5


def test_a_layer_asked_of_something_described_follows_the_passage_that_describes_it(
    engine: Engine,
) -> None:
    """ "which tier owns scoring outputs against graded criteria?" names nothing: the passage on
    the evaluation suite answers what is described, and where its subject sits (L6 of the
    eight-layer map) is what was asked, so it follows that passage rather than trail the others
    and be clipped."""
    answer = engine.ask(
        "which tier of the 8-layer map owns scoring outputs against graded criteria and tracking spend?"
    )
    assert answer.answered
    first, _, rest = answer.answer.partition("treat a failing test.")
    assert "evaluation suite" in first, answer.answer
    assert rest.lstrip().startswith("It applies to L6 AI Engineering & LLMOps"), answer.answer


def test_a_question_asking_for_a_part_of_a_named_thing_is_answered_by_its_part(
    semantic_engine: Engine,
) -> None:
    """ "what kubelet component lines up ..." asks for a thing the kubelet uses, not for the
    kubelet: the passages of its neighbours lead (the Topology Manager), not its own sentence."""
    from stackgraph.graph.answering.question import Question

    question = "what kubelet component lines up the GPU and the network card a container receives under one CPU socket?"
    assert Question.parse(semantic_engine, question).part_of == str(KG["kubelet"])
    assert Question.parse(semantic_engine, "what does the kubelet do?").part_of is None
    answer = semantic_engine.ask(question)
    assert answer.answer.startswith("Topology Manager"), answer.answer


def test_the_words_naming_a_layer_model_beside_the_question_rank_nothing(semantic_engine: Engine) -> None:
    """ "in the nine-layer co-design stack, which layer covers ...": the model's words only say
    whose layers are asked for; matched against statements they find the model's own notes (its
    co-design method), not what the question describes."""
    from stackgraph.graph.answering.question import Question

    question = "in the nine-layer co-design stack, which layer covers the short fast links between the accelerators of one box?"
    parsed = Question.parse(semantic_engine, question)
    assert parsed.model_hint == str(KG["nine-layer-model"])
    assert "co-design" not in " ".join(parsed.ranking_terms) and "link" in parsed.ranking_terms
    assert Question.parse(semantic_engine, "what is the nine-layer model?").model_words == set()
    answer = semantic_engine.ask(question)
    assert "co-design and teaching model" not in answer.answer and "L8" in answer.answer, answer.answer


def test_a_layer_model_asked_about_keeps_its_words_in_the_ranking(engine: Engine) -> None:
    """ "and in the nine-layer one?" asks what that model says, its own design choices included:
    only a question asking for one of its layers has the model's name as a mere qualifier."""
    from stackgraph.graph.answering.question import Question

    asked = Question.parse(engine, "kubernetes is its own layer in the ops map, and in the nine-layer one?")
    assert asked.model_words == set()
    qualified = Question.parse(
        engine, "which layer of the nine-layer stack owns the fast links inside a server?"
    )
    assert qualified.model_words and not qualified.model_words & set(qualified.ranking_terms)


@pytest.mark.parametrize(
    "question",
    [
        "how do I check GPU usage for pods in kubernetes?",
        "is there a way to get GPU utilization stats for each pod in our cluster?",
    ],
)
def test_a_check_asked_for_a_named_measurement_is_kept_against_statements_naming_none(
    engine: Engine, question: str
) -> None:
    """Asked how to see a measurement the question names, the tools that read it answer; the
    statements that share more of its other words ("pods", "Kubernetes") name no check."""
    answer = engine.ask(question)
    assert "DCGM Exporter" in answer.answer and "nvidia-smi" in answer.answer, answer.answer
    # A metric is watched, a tool used.
    assert "Watch GPU utilization" in answer.answer and "Use NVIDIA DCGM Exporter" in answer.answer


@pytest.mark.parametrize(
    ("question", "asks"),
    [
        ("how do I check NVLink?", True),
        ("which command shows the port state?", True),
        ("is there a way to get GPU usage per pod?", True),
        # What to do, not what to look at.
        ("how do we know we're not making the model worse?", False),
        ("How do I troubleshoot the problem?", False),
        ("I want to choose which tools I expose to my MCP client", False),
    ],
)
def test_a_check_is_asked_for_only_in_the_words_of_looking(question: str, asks: bool) -> None:
    from stackgraph.graph.answering import intents

    assert intents.asks_for_check(question) is asks


def test_a_setting_asked_for_is_named_before_the_technique_it_switches_on(semantic_engine: Engine) -> None:
    """ "which engine flag helps?": the technique (chunked prefill) and its flag
    (`enable_chunked_prefill`) are described in the same words; the flag is what was asked, so it
    leads. Asked what the technique is, the technique still does."""
    flag = semantic_engine.ask(
        "chat decode stutters whenever a giant summarization prompt arrives; which engine flag helps?"
    )
    assert flag.answer.startswith("enable_chunked_prefill"), flag.answer
    from stackgraph.graph.answering import intents

    assert not intents.asks_for_setting("what is chunked prefill?")


def test_a_thing_to_turn_up_or_down_is_a_setting_asked_for(semantic_engine: Engine) -> None:
    """ "which timeout should I bump?" names no setting word, but what one bumps, raises or tunes
    is a setting: after a report of 504s on long completions it asks for the gateway's read
    timeout, rather than standing alone (and declined)."""
    from stackgraph.graph.answering import intents

    assert intents.asks_for_setting("which timeout should I bump?")
    assert intents.asks_for_setting("what limit do we raise first")
    assert not intents.asks_for_setting("which layer should I check first?")
    conversation = Conversation()
    semantic_engine.ask(
        "long chat completions die with HTTP 504 at the gateway, the short ones finish fine", conversation
    )
    bump = semantic_engine.ask("which timeout should I raise?", conversation)
    assert bump.answered and "proxy_read_timeout" in bump.answer, bump.answer


def test_a_supplement_never_restates_what_the_answer_rests_on(semantic_engine: Engine) -> None:
    """The statements added to an answer say what it leaves out: not the likely cause it gave
    already, nor its checks in other words ("Where to look: nccl-tests, switch telemetry" after
    "Where to look: NCCL tests and switch telemetry")."""
    answer = semantic_engine.ask(
        "all-reduce hangs after a few hundred steps across 8 nodes, one node alone runs fine"
    )
    assert answer.answer.count("Where to look") == 1 and "Also:" not in answer.answer, answer.answer


def test_generation_in_a_report_meets_the_decode_steps_it_is(semantic_engine: Engine) -> None:
    """Users say "generations" for what the serving engine's parameters call decode steps: a
    huge prompt slowing the running generations is what chunked prefill interleaves with decode."""
    hits = semantic_engine.passages.rank(
        "running generations get extremely slow when a huge prompt comes in", k=3
    )
    assert hits[0].passage.subject.endswith("/chunked-prefill"), [h.passage.subject for h in hits]


RELATED = "http://www.w3.org/2004/02/skos/core#related"


def test_a_cause_with_no_checks_is_looked_at_where_its_symptom_is(engine: Engine) -> None:
    """A cause no check is named for borrows the checks of the symptom it explains or of a problem
    beside that symptom, and the answer says whose they are and records the edges it followed.
    Built from the graph: every such cause whose symptoms (or their neighbours) have checks."""
    from stackgraph.graph.answering import symptoms
    from stackgraph.graph.answering.context import Candidate, Context
    from stackgraph.graph.answering.evidence import fetch

    asked = 0
    for iri in sorted(engine.catalog.records):
        if not engine.catalog.is_a(iri, SG.Cause):
            continue
        facts = fetch(engine, iri)
        if facts.iris(SG.whereToLook) or facts.iris(SG.diagnosedBy) or facts.iris(RELATED):
            continue
        explained = facts.incoming(SG.likelyCause)
        near = [*explained, *(o for s in explained for o in fetch(engine, s).iris(RELATED))]
        if not any(
            fetch(engine, n).iris(SG.whereToLook) + fetch(engine, n).iris(SG.diagnosedBy) for n in near
        ):
            continue
        ctx = Context(engine, "which layer?", None, 0.0, [Candidate(iri, 0.95, "exact")], None)
        text = symptoms.where_to_look_beside(ctx, iri, "")
        assert text.startswith("Where to look (as for the related "), (iri, text)
        recorded = {(f.subject, f.predicate, f.object) for f in ctx.evidence.facts}
        assert any(p == str(SG.likelyCause) and o == iri for _, p, o in recorded), recorded
        asked += 1
    assert asked >= 2


def test_a_triage_is_listed_in_the_order_the_seed_asks_it(engine: Engine) -> None:
    """The first branch of a triage is the first thing to rule out: the overview lists every
    triaged symptom's branches in their seed positions, whatever order the store returns them in."""
    from stackgraph.graph.answering import symptoms

    asked = 0
    for iri in sorted(engine.problems):
        branches = symptoms.triage_branches(engine, iri)
        if len(branches) < 2:
            continue
        answer = engine.ask(f"what is the triage for {engine.catalog.label(iri)}?")
        if answer.intent != "triage":
            continue
        lines = [line for line in answer.answer.splitlines() if line.startswith("- ")]
        answers = [fetch_answer(engine, b) for b in branches]
        listed = [a for line in lines for a in answers if line.startswith(f"- {a} ")]
        assert listed[: len(answers)] == answers, (iri, answer.answer)
        asked += 1
    assert asked >= 3


def fetch_answer(engine: Engine, branch: str) -> str:
    from stackgraph.graph.answering.evidence import fetch

    return fetch(engine, branch).text(SG.answer) or engine.catalog.label(branch)


def test_causes_a_report_tells_apart_by_no_word_keep_the_seeds_order(semantic_engine: Engine) -> None:
    """ "GPU utilisation stays low while we train" says the symptom and none of its four causes:
    which one reads a hair nearer in meaning is chance, so the statements of its causes are
    ranked in the order its triage asks about them, and the answer leads with the first."""
    from stackgraph.graph.answering import reports, symptoms
    from stackgraph.graph.answering.context import Context
    from stackgraph.graph.answering.question import Question

    symptom = str(KG["sym-throughput-dropped"])
    question = "GPU utilisation stays low while we train, sometimes at 0%"
    ctx = Context(
        semantic_engine, question, None, 0.0, [], None, parsed=Question.parse(semantic_engine, question)
    )
    causes = [
        h.passage.object
        for h in reports.rank(ctx, k=8)
        if h.passage.subject == symptom and h.passage.predicate == str(SG.likelyCause)
    ]
    assert len(causes) >= 2
    ordered = symptoms.in_triage_order(semantic_engine, symptom, causes)
    assert causes == ordered
    assert ordered[0] == str(KG["cause-storage-throughput"])  # "data loading starved?" is asked first


def test_a_report_of_a_metric_reading_is_answered_as_the_symptom_it_reads(semantic_engine: Engine) -> None:
    """A metric that diagnoses one symptom, named in a report of its reading ("GPU-Util only 2%"),
    is the symptom reported: the answer explains that symptom, where asking how to watch the
    metric is answered by its tools."""
    reading = semantic_engine.ask(
        "Volatile GPU-Util is low, only 2%, while our model trains and memory usage sits at 8 GB. How do I get it higher?"
    )
    assert reading.answered
    assert "Throughput dropped, GPUs underutilised" in reading.answer, reading.answer
    watching = semantic_engine.ask("how do I check GPU utilization per pod?")
    assert "Throughput dropped" not in watching.answer.split(".")[0], watching.answer


def test_a_report_naming_a_technology_is_not_answered_by_where_it_fits(semantic_engine: Engine) -> None:
    """A problem report whose first answer fell back to where a technology it names sits (NVMe,
    from "on an NVMe SSD") lets the passages matched to the whole report compete as for a
    definition fallback: the storage-bound problem and its checks answer it."""
    answer = semantic_engine.ask(
        "Slow loading of models: a few of ours take forever to load from the NVMe SSD while others "
        "fly through. Where do I find out why?"
    )
    assert answer.answered
    assert not answer.answer.startswith("High-speed NVMe storage fits in"), answer.answer
    assert "Disk I/O" in answer.answer or "iostat" in answer.answer, answer.answer


def test_more_gpus_no_faster_is_checked_with_nccl_tests_as_an_inference(engine: Engine) -> None:
    """NCCL tests tell a bad link from a software bug in multi-node setups (§8): the graph reads
    them as a check of a job that got slower with more nodes, and says the reading is its own."""
    answer = engine.ask("how do I check More GPUs, no faster?")
    assert "NCCL tests" in answer.answer, answer.answer
    fact = next(
        f for f in answer.facts if f.object == str(KG["nccl-tests"]) and f.predicate == str(SG.diagnosedBy)
    )
    assert fact.basis == "inferred"


def test_checks_are_told_by_name_alone_when_what_they_show_does_not_fit(engine: Engine) -> None:
    """The command to run matters more than the gloss on it: told briefly, a problem's checks are
    their names without what each shows, and one the answer already names is not told again."""
    from stackgraph.graph.answering import reports
    from stackgraph.graph.answering.context import Context
    from stackgraph.graph.answering.question import Question

    question = "our training job got slower after we added nodes"
    ctx = Context(engine, question, None, 0.0, [], None, parsed=Question.parse(engine, question))
    problem = str(KG["sym-more-gpus-no-faster"])
    full = reports._checks_unsaid(ctx, "", problem)
    brief = reports._checks_unsaid(ctx, "", problem, brief=True)
    assert full.startswith("To check More GPUs, no faster: ") and "(" in full, full
    assert brief.startswith("To check More GPUs, no faster: ") and "(" not in brief, brief
    assert len(brief) < len(full)
    named = reports._checks_unsaid(ctx, "Where to look: `ibstat`.", problem, brief=True)
    assert "`ibstat`" in brief and "`ibstat`" not in named, named


def test_a_word_a_statement_explains_in_passing_is_defined_by_that_statement(engine: Engine) -> None:
    """No entity is named "SYS", but the topology check's statement says what SYS means: asked
    what it means, that statement answers. A word no statement explains is still declined."""
    answer = engine.ask("what does SYS mean?")
    assert answer.answered, answer.answer
    assert "CPU root complex" in answer.answer, answer.answer
    assert answer.facts and all(f.basis and f.source for f in answer.facts)
    assert not engine.ask("what does PIX mean?").answered


def test_the_container_runtimes_cuda_requirement_error_names_the_driver_mismatch(engine: Engine) -> None:
    """The NVIDIA container runtime's own words for an image needing a newer driver ("requirement
    error: unsatisfied condition: cuda>=12.4") name the driver/CUDA version mismatch, wherever in a
    report they stand."""
    from stackgraph.graph.answering.question import Question

    report = (
        "How can I tell which driver a docker image needs? Mine fails with nvidia-container-cli: "
        "requirement error: unsatisfied condition: cuda>=12.4 on our 535 hosts"
    )
    assert str(KG["cause-driver-cuda-version-mismatch"]) in Question.parse(engine, report).named


def test_a_symptom_named_after_a_thing_is_not_replaced_by_what_the_thing_is(engine: Engine) -> None:
    """A report of a failure of a thing ("stuck calling the same tool until the recursion limit":
    the agent loop that does not terminate) is answered by the failure and its fix, not by the
    thing's definition, however many more of the report's words the definition repeats. Every
    symptom whose name holds a thing's name of two words or more is tried."""
    from stackgraph.graph.model import Answer

    problems = engine.problems
    tried = 0
    for symptom in engine.entities_of("Symptom"):
        said = f" {' '.join(terms(engine.catalog.display(symptom)))} "
        for rec in engine.catalog.records.values():
            if rec.iri in problems or not any(
                len(t := terms(name)) >= 2 and f" {' '.join(t)} " in said
                for name in engine.catalog.all_labels(rec)
            ):
                continue
            thing = engine.resolve(rec.label)
            failure = engine.resolve(engine.catalog.display(symptom))
            if thing is None or failure is None or thing.iri != rec.iri:
                continue
            definition = rec.definition or rec.label
            question = terms(f"{definition} keeps happening to us")
            first = Answer(
                "q",
                True,
                f"{failure.label} is owned by a layer.",
                "owner_of_symptom",
                0.8,
                entities=(failure,),
            )
            challenger = Answer("q", True, definition, "owner_of_symptom", 0.8, entities=(thing,))
            assert compete.better(engine, question, first, challenger, True) is first, (symptom, rec.iri)
            tried += 1
    assert tried >= 1


def test_on_a_long_report_a_clear_lead_in_what_is_covered_wins_under_the_fixed_margin(engine: Engine) -> None:
    """A long report's words are mostly covered by neither answer: one covering a good part more
    of them than the other (a quarter more, and at least ``SMALL_MARGIN``) wins even when the gap
    is under ``MARGIN``. (Short questions keep the fixed margin: see what breaks when a setting is
    pushed too far, in test_relations.)"""
    from stackgraph.graph.model import Answer

    filler = "kubernetes pod nvlink lustre kafka airflow milvus slurm volcano grafana prometheus terraform"
    report = terms(f"{filler} driver uncorrectable ecc error stalls")
    first = Answer("q", True, "Align the driver version.", "why", 0.8)
    challenger = Answer("q", True, "A driver error.", "diagnose", 0.6)
    mine = compete.coverage(engine, report, first.answer)
    theirs = compete.coverage(engine, report, challenger.answer)
    assert len(set(report)) >= compete.LONG_QUESTION_TERMS
    assert compete.SMALL_MARGIN <= theirs - mine < compete.MARGIN and theirs >= compete.CLEAR_LEAD * mine
    assert compete.better(engine, report, first, challenger) is challenger


def test_a_placement_given_to_a_report_of_a_problem_gives_way_to_the_problem(engine: Engine) -> None:
    """ "... gpus look underused, only 28 of 32 workers are running. which layer owns this?" names
    a metric in passing: its placement is no answer when the passages find the problem the
    report describes, though a placement of all that is named holds against other statements."""
    from stackgraph.graph.model import Answer

    metric = engine.resolve("tokens/sec")
    problem = engine.resolve("Throughput dropped: fewer workers running")
    assert metric is not None and problem is not None and problem.iri in engine.problems
    question = terms(
        "training tok/s down, gpus underused, only 28 of 32 workers running. which layer owns this"
    )
    naming = {metric.iri: {"tok"}}
    placed = Answer("q", True, "tokens/sec fits in L6.", "where_fits", 0.9, entities=(metric,))
    found = Answer(
        "q",
        True,
        "Throughput dropped: fewer workers running, GPUs underused.",
        "diagnose",
        0.7,
        entities=(problem,),
    )
    assert compete.better(engine, question, placed, found, True, naming=naming) is found
    assert compete.better(engine, question, placed, found, False, naming=naming) is placed
