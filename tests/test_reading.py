"""How a question is read before it is answered: its words, the names inside compound words,
layer codes beside a model's name, and follow-ups read with the turn they follow (issue 11).

The questions are written for these tests; none is taken from an evaluation set.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest

from stackgraph.graph.answering import intents
from stackgraph.graph.answering.question import Question, ruled_out_terms
from stackgraph.graph.conversation import Conversation
from stackgraph.graph.engine import Engine
from stackgraph.graph.lexical import stem, terms
from stackgraph.graph.model import Answer


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("traces", "trace"),  # the old stemmer cut "traces" to "trac" and missed "trace"
        ("statuses", "status"),
        ("branches", "branch"),
        ("running", "run"),
        ("scheduled", "scheduling"),
    ],
)
def test_inflections_share_a_stem(a: str, b: str) -> None:
    assert stem(a) == stem(b)


def test_a_word_ending_in_s_is_not_cut_unless_plural() -> None:
    assert stem("status") == "status"
    assert stem("bus") == "bus"


def test_an_acronyms_plural_is_the_acronym() -> None:
    assert terms("two GPUs and three NICs") == terms("two GPU and three NIC")


def test_a_model_numbers_plural_names_the_model(engine: Engine) -> None:
    for text in ("which layer owns the h100s?", "our H100s and A100s", "the h100s/a100s in rack 3"):
        assert "NVIDIA H100" in _names(engine, text), text


def test_a_hyphenated_word_meets_the_same_word_written_together() -> None:
    assert set(terms("scaleup")) <= set(terms("scale-up interconnect"))
    assert set(terms("finetuning")) <= set(terms("fine-tuning a model"))


def _names(engine: Engine, text: str) -> list[str]:
    return [engine.catalog.display(m.iri) for m in engine.linker.mentions(text)]


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("our EFA-enabled hosts lose the fabric", "EFA"),
        ("the process cannot load libibverbs.so", "libibverbs"),
        ("a NCCL/RCCL job hangs", "RCCL"),
        ("a NCCL/RCCL job hangs", "NCCL"),
    ],
)
def test_names_inside_compound_words_are_found(engine: Engine, text: str, name: str) -> None:
    assert name in _names(engine, text)


def test_a_compound_word_that_is_a_name_stays_one_name(engine: Engine) -> None:
    assert _names(engine, "run nvidia-smi on the node") == ["nvidia-smi"]


def test_a_layer_code_beside_a_named_model_is_that_models_layer(engine: Engine) -> None:
    mentions = engine.linker.mentions("what is L4 of the eight-layer operational map for?")
    codes = [m for m in mentions if m.how == "code"]
    assert [engine.catalog.display(m.iri) for m in codes] == ["L4 Terraform & Automation"]
    assert codes[0].surface == "l4"
    answer = engine.ask("what is L4 of the eight-layer operational map for?")
    assert "Terraform" in answer.answer


def _follow_up(engine: Engine, first: str, then: str) -> Answer:
    """``then`` asked as a follow-up of ``first`` (which must be answered) in one conversation."""
    conversation = Conversation()
    assert engine.ask(first, conversation).answered
    return engine.ask(then, conversation)


def test_a_follow_up_is_matched_together_with_the_turn_it_follows(engine: Engine) -> None:
    follow = _follow_up(engine, "what is the KV cache?", "which vLLM knob sets its data type?")
    assert follow.answered
    assert "kv_cache_dtype" in follow.answer
    assert follow.context == "KV cache"


def test_a_why_follow_up_is_answered_from_its_subjects_own_sentences(engine: Engine) -> None:
    follow = _follow_up(engine, "tell me about eight L6", "why does it exist?")
    assert follow.answered
    assert "deterministic" in follow.answer
    assert "L6" in (follow.context or follow.answer)


@pytest.mark.parametrize(
    ("question", "unknown"),
    [
        ("What is the Zorblax scheduler?", "Zorblax"),
        ("where does FooBarNet fit in the nine-layer model?", "FooBarNet"),
        ("what does the vLLM frobnicate_ratio parameter do?", "frobnicate_ratio"),
        ("What is QWXZ in InfiniBand?", "QWXZ"),
    ],
)
def test_a_name_the_graph_lacks_is_declined_and_said(engine: Engine, question: str, unknown: str) -> None:
    answer = engine.ask(question)
    assert not answer.answered
    assert unknown in answer.answer
    assert answer.suggestions, "the closest entities are offered"


@pytest.mark.parametrize(
    "question",
    [
        "What is MIG on an H100?",  # names it knows, written as names
        "where does NVLink fit?",
        "What does gpu_memory_utilization control?",
        "What is Kubernets?",  # a misspelt name is still that name
    ],
)
def test_names_the_graph_has_are_not_unknown(engine: Engine, question: str) -> None:
    answer = engine.ask(question)
    assert answer.answered, answer.answer


def test_asking_what_else_sits_there_lists_the_last_subjects_layer(engine: Engine) -> None:
    follow = _follow_up(engine, "where does NCCL fit?", "what else sits there?")
    assert follow.answered
    assert "MPI" in follow.answer and "NIXL" in follow.answer
    assert follow.context and "L5" in follow.context


def test_a_follow_up_in_ordinary_words_with_one_the_graph_never_uses_leans_on_context(
    engine: Engine,
) -> None:
    follow = _follow_up(engine, "HTTP 504 in the middle of a long reply", "which setting do I adjust?")
    assert follow.answered
    assert "proxy_read_timeout" in follow.answer
    assert follow.context


def test_a_follow_up_asking_for_the_checks_in_words_of_checking_leans_on_context(engine: Engine) -> None:
    # "tools", "commands", "run", "verify" say what kind of answer is asked (checks), not a new
    # subject that the last one's statements lack.
    follow = _follow_up(
        engine, "all-reduce got slow across nodes, I suspect the links", "which commands do i run to verify?"
    )
    assert follow.answered and follow.context
    assert "ibstat" in follow.answer or "nccl-tests" in follow.answer


def test_a_plural_pointer_after_things_the_follow_up_names_points_at_them(engine: Engine) -> None:
    # "those" follows the two things the turn names: it asks about them, not about NVLink.
    question = Question.parse(engine, "and Kueue / Volcano — are those in the control plane?")
    assert question.points_back and question.points_at_own_names
    assert not Question.parse(engine, "and Kueue — is it in the control plane?").points_at_own_names
    assert not Question.parse(engine, "how do those compare to Kueue and Volcano?").points_at_own_names
    follow = _follow_up(engine, "what is NVLink?", "and Kueue / Volcano — are those in the control plane?")
    assert follow.answered and follow.context is None
    assert "NVLink" not in follow.answer[:200] and "Volcano" in follow.answer


def test_a_new_topic_about_a_thing_the_graph_lacks_is_declined_after_other_turns(engine: Engine) -> None:
    # The turn names Kafka, but its subject is a novel summary for a book club: a new topic.
    follow = _follow_up(
        engine,
        "what does Kafka do in the migration",
        "and how do I write a kafka novel summary for my book club?",
    )
    assert not follow.answered
    # Too little to tell a new topic: one foreign word, or a head word the graph uses.
    from stackgraph.graph.answering.turns import new_foreign_topic

    assert new_foreign_topic(engine, Question.parse(engine, "what should I set my home AC thermostat to?"))
    assert not new_foreign_topic(
        engine, Question.parse(engine, "what else do we need to lock down the registry")
    )
    assert not new_foreign_topic(engine, Question.parse(engine, "how do i tell a sw bug from a bad link?"))


def test_a_follow_up_in_words_the_graph_never_uses_stands_alone(engine: Engine) -> None:
    follow = _follow_up(engine, "what is PFC?", "can you recommend a good pasta recipe?")
    assert not follow.answered
    assert follow.context is None


@pytest.mark.parametrize(
    "question",
    [
        "is it worth buying a new sofa this year?",
        "is it a good idea to repaint my kitchen?",
        "how do I tell my landlord without it being rude",
    ],
)
def test_an_it_standing_for_what_follows_points_at_nothing_said_before(engine: Engine, question: str) -> None:
    """English puts "it" before a long subject ("is it worth <doing something>"): that "it" is the
    sofa, not the conversation's subject, so the follow-up stands alone (and is declined)."""
    follow = _follow_up(engine, "what is GPUDirect RDMA?", question)
    assert not follow.answered, follow.answer
    assert follow.context is None


def test_is_it_worth_it_still_asks_about_the_subject(engine: Engine) -> None:
    follow = _follow_up(engine, "what is GPUDirect RDMA?", "is it worth turning on?")
    assert follow.answered and follow.context == "GPUDirect RDMA"


def test_a_practice_names_what_it_uses_and_what_implements_that(engine: Engine) -> None:
    answer = engine.ask("why should distributed jobs be scheduled all-or-nothing?")
    assert answer.answered
    assert "gang scheduling (implemented by Volcano)" in answer.answer
    implements = [f for f in answer.facts if f.predicate.endswith("#implements")]
    assert [(f.subject_label, f.object_label) for f in implements] == [("Volcano", "gang scheduling")]
    assert all(f.basis and f.source for f in implements), "evidence carries its basis and source"


def test_a_named_problem_leads_its_answer_over_a_neighbour_that_shares_more_words(engine: Engine) -> None:
    answer = engine.ask("HTTP 504 in the middle of a long reply")
    assert answer.answer.startswith("HTTP 504")


def test_a_follow_up_asking_for_a_kind_of_thing_finds_it_next_to_the_subject(
    semantic_engine: Engine,
) -> None:
    engine = semantic_engine
    follow = _follow_up(engine, "explain the gang-scheduling problem", "which plugin fixes that?")
    assert follow.answered
    assert "Volcano" in follow.answer


def test_a_check_for_a_problem_says_first_what_the_problem_is(engine: Engine) -> None:
    answer = engine.ask("how do I check for slow collectives?")
    assert answer.answered
    assert answer.answer.startswith("Slow collectives: ")
    assert "ibstat" in answer.answer
    assert any(
        f.predicate.endswith("#definition") and f.subject_label == "Slow collectives" for f in answer.facts
    )


def test_a_named_technologys_passages_keep_their_prior_by_what_they_say_of_the_question(
    engine: Engine,
) -> None:
    question = "In NCCL 2.18 across 8 nodes throughput drops once we pass 4 nodes and the NICs keep sending pause frames"
    parsed = Question.parse(engine, question)
    hits = engine.passages.rank(
        question,
        parsed.named,
        k=5,
        use_semantic=False,
        query_terms=parsed.terms,
        residual=parsed.residual_terms,
    )
    top = [hit.passage.text for hit in hits[:3]]
    assert not any(t.startswith("NCCL: NCCL is one of") for t in top), "a placement note is not what is asked"
    assert "pause frames" in top[0]


def test_a_definition_nobody_asked_for_loses_a_tie_to_the_passages(semantic_engine: Engine) -> None:
    answer = semantic_engine.ask(
        "Using NCCL with many nodes, performance degradation. NIC sends pause frames."
    )
    assert answer.answered
    assert not answer.answer.startswith(("NCCL:", "NCCL (")), (
        "the report names NCCL in passing; it asks no definition"
    )


def test_an_unknown_name_in_a_sentence_that_only_sets_the_scene_is_context(engine: Engine) -> None:
    answer = engine.ask("Our KV cache spills into host RAM and local NVMe. Where does that fit?")
    assert answer.answered, answer.answer


def test_a_report_describing_one_likely_cause_is_told_what_fixes_it(semantic_engine: Engine) -> None:
    answer = semantic_engine.ask(
        "which layer owns this: a training job got some of its worker pods placed, they hold GPUs, "
        "and the remaining pods are pending forever"
    )
    assert answer.answered
    assert "What fixes Partial placement of a distributed job" in answer.answer
    assert "Volcano" in answer.answer
    mitigates = [f for f in answer.facts if f.predicate.endswith("#mitigates")]
    assert mitigates and all(f.object_label == "Partial placement of a distributed job" for f in mitigates)


@pytest.mark.parametrize(
    "report",
    [
        "gpu utilization is low, the dataloader just cannot keep up",
        # Longer, with its own asides: the branch still matches best by a clear lead, if less
        # closely than a report that says nothing else (``symptoms.BRANCH_MATCH``).
        "low GPU utilization during training and the CPU is busy. it looks like the GPUs sit waiting "
        "for the next batch of data to arrive. is that normal?",
    ],
)
def test_a_report_in_its_own_words_reaches_the_triage_branch_it_describes(
    semantic_engine: Engine, report: str
) -> None:
    answer = semantic_engine.ask(report)
    assert answer.answered
    assert "data loading starved" in answer.answer.lower()
    assert "L1" in answer.answer


def test_a_bare_symptom_matching_every_branch_alike_stays_at_the_symptom(semantic_engine: Engine) -> None:
    answer = semantic_engine.ask("latency increased")
    assert answer.answered
    assert answer.answer.startswith("Latency increased")
    assert "time going to" not in answer.answer.split(".")[0]


def test_a_misspelt_name_is_a_subject_like_the_name(engine: Engine) -> None:
    from stackgraph.graph.answering import link

    question = Question.parse(engine, "Can GDRcopy run over the Cray SlignShot interconnect?")
    first = link(engine, question)[0]
    assert (engine.catalog.display(first.iri), first.how) == ("Slingshot", "fuzzy")


def test_a_problem_is_told_with_what_fixes_it_and_what_each_fix_is(semantic_engine: Engine) -> None:
    answer = semantic_engine.ask("which layer owns it when an agent loop does not terminate?")
    assert answer.answered
    assert "What fixes Agent loop does not terminate" in answer.answer
    assert "fail loudly" in answer.answer  # what the iteration limit is, not only its name


def test_a_listing_of_what_is_named_yields_to_what_the_question_asks_of_it(
    semantic_engine: Engine,
) -> None:
    answer = semantic_engine.ask("what are the steps of migrating our workloads to another datacenter?")
    assert answer.answered
    assert "pre-staging" in answer.answer
    assert not answer.answer.startswith("The graph has 10 workloads")


def test_a_listing_the_question_asks_for_stays(semantic_engine: Engine) -> None:
    answer = semantic_engine.ask("which workloads does the stack matrix list?")
    assert answer.answered
    assert "Pre-training" in answer.answer and "RAG" in answer.answer


def test_a_definition_names_what_implements_it_and_its_kinds(engine: Engine) -> None:
    assert "implemented by Volcano" in engine.ask("what is gang scheduling?").answer
    guardrails = engine.ask("what are guardrails?")
    assert "includes Llama Guard and NeMo Guardrails" in guardrails.answer
    assert any(
        f.subject_label == "NeMo Guardrails" and f.object_label == "Guardrails" for f in guardrails.facts
    )


def test_a_lower_case_qualifier_in_a_labels_parenthesis_names_nothing(engine: Engine) -> None:
    names = _names(engine, "multi-node parallel training over NCCL is slow")
    assert "S Storage Data Path" not in names  # from "Storage Data Path (parallel)"
    assert "CUDA Out of Memory (OOM)" in _names(engine, "vLLM hits OOM on startup")  # an acronym is a name


def test_a_problem_named_only_by_a_common_word_gets_no_problem_prior(engine: Engine) -> None:
    from stackgraph.graph.answering.passages import PROBLEM_PRIOR

    # "image" alone is an alias of the image problem; said in passing it names no problem.
    question = "the image we pull is big and our customers wait for replies"
    parsed = Question.parse(engine, question)
    problem = next(m.iri for m in parsed.mentions if engine.catalog.display(m.iri) == "image problem")

    def score(weak: set[str]) -> float:
        hits = engine.passages.rank(question, [problem], k=200, use_semantic=False, weak=weak)
        return next(h.score for h in hits if h.passage.subject == problem)

    assert score(set()) - score({problem}) == pytest.approx(PROBLEM_PRIOR)


def test_a_close_statement_about_another_subject_fills_a_free_slot(engine: Engine) -> None:
    from stackgraph.graph.answering import link, reports
    from stackgraph.graph.answering.context import Context
    from stackgraph.graph.answering.passages import Hit

    question = "something about storage"
    parsed = Question.parse(engine, question)
    candidates = link(engine, parsed)
    ctx = Context(
        engine, question, parsed.intent.intent, parsed.intent.strength, candidates, None, parsed=parsed
    )
    subjects: list[str] = []
    passages = []
    for passage in engine.passages.passages:  # three statements about three subjects, no word of the question
        if passage.subject not in subjects and not set(terms(passage.text)) & set(parsed.terms):
            subjects.append(passage.subject)
            passages.append(passage)
        if len(passages) == 4:
            break
    best = reports.ASSERT_SCORE + 0.3  # a confident answer: a hedged one offers every close rival anyway
    hits = [
        Hit(p, best * share, share, 0.0) for p, share in zip(passages, [1.0, 0.95, 0.9, 0.5], strict=True)
    ]
    chosen = reports.choose(ctx, hits)
    assert [h.passage for h in chosen] == passages[:3], "two close rivals are said; a far one is not"


def _best_score_with_and_without_synonyms(
    engine: Engine, monkeypatch, report: str, holds: Callable[[str], bool], k: int = 200
) -> tuple[float, float]:
    """The best lexical score, among a report's top ``k`` passages, of a passage whose text
    ``holds`` what is looked for: with the report-word synonyms counted, then weighted zero."""
    from stackgraph.graph.answering import passages

    def best() -> float:
        hits = engine.passages.rank(report, k=k, use_semantic=False)
        return max(h.score for h in hits if holds(h.passage.text))

    with_synonyms = best()
    monkeypatch.setattr(passages, "SYNONYM_WEIGHT", 0.0)
    return with_synonyms, best()


@pytest.mark.parametrize(
    ("graph_word", "report_words", "report", "holds", "k"),
    [
        (
            "slow",
            ("crawling",),
            "our gradient sync across racks is crawling",
            lambda text: "slow" in terms(text),
            200,
        ),
        # "If you own infrastructure, start at L2": a report says infra.
        (
            "infrastructure",
            ("infra",),
            "on call for the infra, which end do i start from",
            lambda text: "If you own infrastructure" in text,
            300,
        ),
        # "Splits long prompt prefill into chunks": a report says the prompt is huge or giant.
        (
            "long",
            ("huge", "giant"),
            "one giant prompt stalls the other running requests",
            lambda text: "prefill" in text,
            200,
        ),
        # "Accelerators are not divisible like CPU": a report asks to share a card or for a fraction.
        (
            "divisible",
            ("fractional", "sharing"),
            "can two containers use one gpu at the same time with a fractional allocation?",
            lambda text: "not divisible" in text,
            200,
        ),
    ],
    ids=["crawling", "infra", "huge", "sharing"],
)
def test_a_reports_everyday_word_meets_the_graphs_word_for_it(
    engine: Engine,
    monkeypatch,
    graph_word: str,
    report_words: tuple[str, ...],
    report: str,
    holds: Callable[[str], bool],
    k: int,
) -> None:
    from stackgraph.graph.lexical import synonyms

    assert all(stem(graph_word) in synonyms()[stem(word)] for word in report_words)
    with_synonyms, without = _best_score_with_and_without_synonyms(engine, monkeypatch, report, holds, k=k)
    assert with_synonyms > without


def test_a_passage_answer_about_a_problem_says_what_fixes_its_one_cause(engine: Engine) -> None:
    answer = engine.ask("half the workers of a distributed job got placed and now hold their GPUs idle")
    assert answer.answered
    assert "What fixes" in answer.answer and "gang scheduling" in answer.answer


def test_where_a_thing_fits_names_its_cross_cutting_concern(engine: Engine) -> None:
    answer = engine.ask("where do guardrails fit?")
    assert "security cross-cutting concern" in answer.answer
    assert any(f.predicate.endswith("#concern") for f in answer.facts), (
        "the concern is a fact with its source"
    )


def test_a_definition_says_what_the_thing_mitigates(engine: Engine) -> None:
    answer = engine.ask("what is gang scheduling?")
    assert "mitigates Partial placement" in answer.answer


def test_a_thing_without_a_definition_is_told_by_its_note_not_its_type(engine: Engine) -> None:
    answer = engine.ask("what is gang scheduling?")
    assert "is a technology" not in answer.answer
    assert "all-or-nothing" in answer.answer


@pytest.mark.parametrize(
    ("clause", "said"),
    [
        ("It mitigates HTTP 401 mid-stream (RAG)", "It mitigates HTTP 401 mid-stream (RAG)."),
        ("(Inferred, not stated in the sources: a.)", "(Inferred, not stated in the sources: a.)"),
        ("It runs on GPUs (not CPUs.)", "It runs on GPUs (not CPUs.)"),
    ],
)
def test_a_clause_ending_in_a_label_with_brackets_still_ends_with_a_full_stop(clause: str, said: str) -> None:
    from stackgraph.graph.answering.text import sentence

    assert sentence(clause) == said


def test_a_setting_written_as_an_identifier_is_the_subject_not_in_passing(semantic_engine: Engine) -> None:
    answer = semantic_engine.ask("cannot start qwen 7b on a 12gb gpu, gpu_memory_utilization=1")
    assert answer.answered
    assert answer.answer.startswith("gpu_memory_utilization"), answer.answer[:200]


def test_a_problem_answer_names_the_fixes_the_seeds_give_it(engine: Engine) -> None:
    answer = engine.ask("disk I/O cannot keep up with model loading, what fixes it?")
    assert "What fixes" in answer.answer and "NVMe" in answer.answer
    fixes = [f for f in answer.facts if f.predicate.endswith("#mitigates")]
    assert fixes and all(f.source and f.basis for f in fixes), "each fix is a fact with its source and basis"


def test_slow_model_loads_from_network_storage_are_answered_with_the_storage_that_fixes_them(
    engine: Engine,
) -> None:
    # The glossary's NVMe row says network storage is the bottleneck for weight loading; the
    # operational map's slow-startup cause is that load. The answer names the fix, as inferred.
    answer = engine.ask("our inference pods take ten minutes to come up, the weights sit on an NFS share")
    assert "NVMe" in answer.answer, answer.answer[:300]
    fix = next(f for f in answer.facts if f.predicate.endswith("#mitigates") and "NVMe" in f.subject_label)
    assert fix.basis == "inferred" and fix.source is not None


def test_a_problem_with_no_checks_of_its_own_borrows_those_of_the_related_problem(engine: Engine) -> None:
    # The slow cold start has no checks in the graph; the storage-bound slowness related to it
    # does. The answer says whose checks they are and records the relation it followed.
    answer = engine.ask("cold starts of our model servers are slow, how do I check it")
    assert "Where to look (as for the related Storage-bound slowness)" in answer.answer, answer.answer[:400]
    assert "iostat" in answer.answer
    related = [f for f in answer.facts if f.predicate.endswith("core#related")]
    assert related and related[0].object_label == "Storage-bound slowness"
    assert related[0].source is not None and related[0].basis


def test_a_fix_defined_by_the_sentence_already_said_is_not_defined_again(engine: Engine) -> None:
    answer = engine.ask("our long generations keep getting spurious 401s mid-stream when the JWT expires")
    assert "JWT expiration tuning" in answer.answer
    assert answer.answer.lower().count("typical web apis") <= 1, answer.answer


def test_a_check_without_a_command_names_the_tools_that_do_it(engine: Engine) -> None:
    answer = engine.ask("my agent is slow, where do I look?")
    assert "OpenTelemetry for LLMs" in answer.answer, answer.answer
    assert any(f.predicate.endswith("#implements") for f in answer.facts)


def test_the_same_question_gets_the_same_answer_whatever_the_hash_seed() -> None:
    """Whatever a set's order decides follows the process's hash seed: sums over sets of words
    (near-ties went one way or the other), the order names were read in (two names as close to
    a misspelling: the first tied one won, and "FSDP2" named FSDP in some processes only), and
    the order of alternative labels (two expansions of one length: "CUDA runtime" or "CUDA
    Toolkit"). Each of these questions got two or three answers across these seeds."""
    import os
    import subprocess
    import sys

    questions = (
        "How do control planes fail in the operational map?\n"
        "FSDP2 across 4 nodes: what changes for memory?\n"
        "CUDA vs NVIDIA Container Toolkit?\n"
    )

    def ask(seed: str) -> str:
        env = {**os.environ, "PYTHONHASHSEED": seed}
        command = [sys.executable, "-m", "stackgraph.cli.main", "ask", "--json", "--no-semantic", "-"]
        out = subprocess.run(
            command, input=questions, env=env, capture_output=True, text=True, check=True, timeout=120
        )
        return out.stdout

    assert ask("1") == ask("3") == ask("4")


@pytest.mark.parametrize(
    ("question", "unknown"),
    [
        ("What is the Kubernetes of gardening?", "gardening"),  # a metaphor on a name the graph knows
        ("What does vLLM's marmalade mode do?", "marmalade"),  # an invented feature of a known engine
        ("Define an NVLink tambourine.", "tambourine"),
        ("what’s the Kubernetes of gardening?", "gardening"),  # typed with a typographic apostrophe
    ],
)
def test_a_definition_of_a_phrase_with_a_word_the_graph_never_uses_is_declined(
    engine: Engine, question: str, unknown: str
) -> None:
    answer = engine.ask(question)
    assert not answer.answered
    assert f"I don't know {unknown}" in answer.answer


@pytest.mark.parametrize(
    "question",
    [
        "What are the main drawbacks of NVIDIA MIG?",  # words for what is asked of the subject
        "what is the purpse of NCCL?",  # one slip of the keys from an English word
        "describe how NCCL picks transports",  # a clause, not a name
        "what does vLLM do when requests pile up?",  # only "vLLM" is asked about
    ],
)
def test_words_that_are_not_the_subject_of_a_definition_do_not_decline_it(
    engine: Engine, question: str
) -> None:
    assert engine.ask(question).answered


@pytest.mark.slow
@pytest.mark.parametrize(
    "question",
    [
        "unable to open my container from localhost",  # "container" is all the graph knows of it
        "cannot compile vLLM from source on my laptop",  # building vLLM is not in the seeds
    ],
)
def test_a_fallback_answer_with_no_statement_matching_more_than_one_word_is_declined(
    semantic_engine: Engine, question: str
) -> None:
    answer = semantic_engine.ask(question)
    assert not answer.answered
    assert answer.suggestions  # the closest things the graph knows are still offered


def test_a_report_whose_words_the_graph_holds_is_still_answered(engine: Engine) -> None:
    answer = engine.ask("the dataloader cannot keep up and GPU utilization is low")
    assert answer.answered
    assert "data loading" in answer.answer.lower()


def test_what_a_declined_question_asks_about_is_named_once_in_its_own_order(engine: Engine) -> None:
    # "Naples" is unknown as a name and as a word of the subject: said once, after "pizza".
    answer = engine.ask("what is the best pizza in Naples?")
    assert not answer.answered
    assert answer.answer.startswith("I don't know pizza Naples:")


def test_an_answer_about_a_fix_names_the_other_fixes_of_the_same_problem(engine: Engine) -> None:
    answer = engine.ask("I set gpu_memory_utilization to 1 and vLLM will not load")
    assert "gpu_memory_utilization fixes KV cache / batch size exceeds VRAM budget, as do" in answer.answer
    others = {f.subject for f in answer.facts if f.predicate.endswith("#mitigates")}
    assert len(others) >= 2, "each knob named is a fact"


@pytest.mark.parametrize(
    ("question", "unknown"),
    [
        ("a GPU for painting portraits?", "painting portraits"),
        ("Kubernetes for my wedding?", "wedding"),
    ],
)
def test_a_name_beside_ordinary_words_the_graph_never_uses_is_declined(
    engine: Engine, question: str, unknown: str
) -> None:
    # The only thing the graph knows here is the name: its definition would answer another question.
    answer = engine.ask(question)
    assert not answer.answered
    assert answer.answer.startswith(f"I don't know {unknown}:")


def test_forum_chatter_around_a_name_is_not_taken_for_another_topic(engine: Engine) -> None:
    assert engine.ask("Hi, I wonder if gdrcopy works with NCCL").answered


@pytest.mark.slow
def test_of_the_problems_a_report_describes_the_one_whose_statements_match_it_is_answered(
    semantic_engine: Engine,
) -> None:
    # "traces" is nearest in words to the branch with no trace; the report's statements are the
    # queueing branch's, which the serving layers own.
    answer = semantic_engine.ask("latency is bad and traces show requests sitting in the queue for seconds")
    assert answer.answer.startswith("Latency increased: time going to queueing"), answer.answer
    assert "no trace available" not in answer.answer


def test_the_stack_matrix_is_an_entity_with_its_legend(engine: Engine) -> None:
    answer = engine.ask("how is each cell of the stack matrix rated?")
    assert answer.answered
    assert all(level in answer.answer for level in ("low", "moderate", "high", "critical")), answer.answer
    assert any(f.source and f.source.iri.endswith("doc-001-stack-matrix") for f in answer.facts)


def test_an_answer_about_a_technology_says_what_uses_it(engine: Engine) -> None:
    # Where to look for SSE trouble is the thing that streams it: the AI Gateway.
    answer = engine.ask("the event-stream of chat tokens is buffered until the end")
    assert "SSE is used by AI Gateway" in answer.answer, answer.answer
    assert any(f.predicate.endswith("#uses") and f.object.endswith("/sse") for f in answer.facts)


def test_the_inferred_note_names_only_what_the_cut_answer_still_says() -> None:
    from stackgraph.graph.answering.context import say_inferred
    from stackgraph.graph.answering.text import MAX_ANSWER_CHARS
    from stackgraph.graph.model import Fact

    def inferred(subject: str, obj: str) -> Fact:
        return Fact("s", "p", "o", subject, "fits in", obj, basis="inferred")

    text = "Alpha fits in L1. " + "Filler words about the stack. " * 60 + "Zeta fits in L9."
    said = say_inferred(text, [inferred("Alpha", "L1"), inferred("Zeta", "L9")])
    assert len(said) <= MAX_ANSWER_CHARS
    assert "Alpha — fits in → L1" in said
    assert "Zeta" not in said  # its sentence was cut: the note does not name it either


def test_a_report_word_synonym_of_a_graph_word_is_not_foreign(engine: Engine) -> None:
    # "confirm" is no word of the graph, but the report-word table pairs it with "verify", which
    # is: it says nothing outside the graph. "gaming" has no such partner.
    question = Question.parse(engine, "how do I confirm the fabric is lossless for gaming?")
    foreign, known = question.words_beyond_names(engine)
    assert "confirm" not in foreign
    assert "gaming" in foreign
    assert known


def test_a_report_that_rules_out_a_triage_branch_is_sent_to_the_next_one(engine: Engine) -> None:
    """The throughput triage asks data loading first, then collectives: "the dataloader is not
    it" has answered the first question, so the next one is where to look (L2), in the report's
    own turn and in the follow-up that asks which layer to go after."""
    assert "dataload" in ruled_out_terms("low util, but the dataloader is NOT it")
    report = "training throughput dropped and gpu utilization is low, but the dataloader is not it: its queue is always full"
    answer = engine.ask(report)
    assert answer.answer.startswith("Throughput dropped: collectives slow"), answer.answer
    conversation = Conversation()
    engine.ask(
        "gpus are underutilized during training, and the input pipeline isn't it, prefetch is always ahead",
        conversation,
    )
    answer = engine.ask("ok so which layer of the operational map should I go after?", conversation)
    assert "collectives slow is owned by L2" in answer.answer, answer.answer


@pytest.mark.parametrize(
    ("question", "layer"),
    [
        ("what is the top layer of the eight-layer map?", "L8 Applications & Agents"),
        ("what's the bottom layer of the nine-layer model?", "L9 Accelerator & Memory"),
        ("in the 8-layer map, what does the layer below L5 do?", "L4 Terraform & Automation"),
        ("which layer sits above L4 in the operational map?", "L5 Kubernetes & Containers"),
        ("what is the layer under nine-layer L7?", "L8 Node Interconnect"),
    ],
)
def test_a_layer_named_by_its_place_in_the_stack(engine: Engine, question: str, layer: str) -> None:
    """The nine-layer model counts down from the application (L1 on top), the operational map up
    from the hardware (L1 at the bottom): sg:topLayer and sg:bottomLayer say which."""
    assert engine.ask(question).answer.startswith(layer)


def test_the_layer_above_or_below_the_one_just_named(engine: Engine) -> None:
    for first, then, layer in (
        ("what is L2 of the eight-layer map?", "and the one above it?", "L3 Cloud & OpenStack"),
        ("what is nine-layer L6?", "what's the layer right under that one?", "L7 Network Fabric"),
    ):
        conversation = Conversation()
        engine.ask(first, conversation)
        assert engine.ask(then, conversation).answer.startswith(layer)


def test_the_layer_below_it_is_below_the_layer_the_question_names_first(engine: Engine) -> None:
    """ "it" in "what does L5 assume about the layer below it?" is L5, not the layer a
    conversation named before."""
    ops_l2, ops_l4, ops_l5 = (engine.resolve(f"eight {code}").iri for code in ("L2", "L4", "L5"))
    text = "in the 8-layer map what does L5 assume about the layer below it?"
    linked = {m.iri for m in Question.parse(engine, text, near=ops_l2).mentions}
    assert {ops_l5, ops_l4} <= linked and engine.resolve("eight L1").iri not in linked


def test_every_layer_model_says_which_end_is_the_top(engine: Engine) -> None:
    for model in engine.entities_of("LayerModel"):
        order = engine.linker.layer_order(model)
        codes = [engine.catalog.get(layer).code for layer in order]
        assert len(order) >= 8 and order[0] == engine.stack_ends[model][0], model
        assert codes == sorted(codes) or codes == sorted(codes, reverse=True)


def test_a_name_written_as_an_ordinary_word_is_still_named_in_a_follow_up(engine: Engine) -> None:
    """ "besides volcano, which other plugins ...?" names Volcano though "volcano" is an English
    word: it is no request for the layer the last answer named."""
    from stackgraph.graph.answering import link
    from stackgraph.graph.answering.turns import follow_up
    from stackgraph.graph.conversation import Turn

    partial, layer = engine.resolve("Partial placement of a distributed job"), engine.resolve("eight L5")
    conversation = Conversation(
        [Turn("q", "owner_of_symptom", partial.iri, (layer.iri,), answer="It is L5's.")]
    )
    parsed = Question.parse(
        engine, "besides volcano, which other batch scheduling plugins does the glossary list for this?"
    )
    candidates, _ = follow_up(engine, parsed, link(engine, parsed), conversation)
    assert candidates[0].iri != layer.iri
    assert engine.resolve("Volcano").iri in {c.iri for c in candidates}


@pytest.mark.parametrize(
    ("then", "branch"),
    [
        (
            "the dataloader is fine and the workers aren't starved either. what's next on the list?",
            "collectives slow",
        ),
        ("nccl-tests look normal, so not the fabric. what should I check next?", "data loading starved"),
        ("the dataloader is fine and the workers aren't starved either. so what's left?", "collectives slow"),
    ],
)
def test_whats_next_is_the_triage_branch_not_yet_ruled_out(engine: Engine, then: str, branch: str) -> None:
    """The throughput tree asks data loading, then collectives, then workers: what the turns
    found fine is skipped, and "next on the list" asks for no listing."""
    from stackgraph.graph.answering import intents

    assert intents.detect("ok so whats next on the list?").intent != intents.LIST
    conversation = Conversation()
    engine.ask("our training got slower and gpu utilization is low", conversation)
    answer = engine.ask(then, conversation)
    assert answer.answer.startswith(f"Throughput dropped: {branch}"), answer.answer
    assert answer.context == f"Throughput dropped: {branch}"


def test_now_what_after_a_finding_with_nothing_ruled_out_is_no_next_step(engine: Engine) -> None:
    """ "the right chunk was retrieved, it ranked too low. now what?" asks about that finding,
    not for the tree's first question."""
    conversation = Conversation()
    engine.ask("our rag assistant gave a wrong answer, where do I start", conversation)
    answer = engine.ask("ok the right chunk was retrieved, it just ranked too low. now what?", conversation)
    assert "not retrieved" not in answer.answer.split(".")[0]


def test_a_turn_nothing_answers_alone_leans_on_the_conversation_that_holds_its_words(
    engine: Engine,
) -> None:
    """ "how would I verify the compute side really came back, and which column should I trust"
    points back with no pronoun: alone the graph has nothing on it; after NoValidHost it asks for
    that problem's check, whose columns the last answer did not yet explain."""
    turn = "how would I verify the compute side really came back, and which column should I trust"
    assert not engine.ask(turn).answered
    conversation = Conversation()
    engine.ask("every vm we launch on openstack fails with NoValidHost since the upgrade", conversation)
    answer = engine.ask(turn, conversation)
    assert answer.answered and answer.context == "NoValidHost", answer.answer
    assert "State is reality" in answer.answer
    # A turn that shares a word with the last answer but asks something else stays declined.
    conversation = Conversation()
    engine.ask("what do spine switches do in a leaf-spine fabric", conversation)
    assert not engine.ask("any good stretches for a sore spine after a long day?", conversation).answered


def test_foreign_subject_is_the_head_of_a_phrase_the_graph_lacks(engine: Engine) -> None:
    def subject(text: str) -> str | None:
        return Question.parse(engine, text).foreign_subject(engine)

    assert subject("and what about knitting a scarf?") == "scarf"
    assert subject("how do I fix a leaking tap?") == "leaking tap"
    assert subject("what about the KV cache?") is None  # a name
    assert subject("what about my inference pods?") is None  # words the graph uses
    assert subject("what is the best way?") is None  # a word that only says what is asked
    assert subject("whats the actual win over the old one?") is None  # a benefit asked of it
    # A word before an object pronoun is the verb after the phrase, not its head.
    assert subject("which layer would the ops triage tree send me to for that?") is None
    assert subject("would the corner bakery send me a cake?") == "corner bakery"
    # So is a word in -s before "to": "the team wants to swap it" is about the team, not "wants".
    assert subject("the team wants to swap it for a bigger model") is None
    assert subject("the bakery wants to sell me a cake") == "bakery"
    assert subject("can it run on a desktop?") is None  # said of "it", the conversation's subject
    assert subject("how do I oil my bicycle wheel?") == "bicycle wheel"  # a wheel, but a bicycle's
    assert subject("how do I learn to paint?") == "paint"  # a thing to do
    assert subject("how do I learn to debug it?") is None  # a thing to do the graph knows
    # The verb of a thing to do is no modifier of its object: catching regressions is about
    # regressions, baking bread about bread.
    assert subject("so how are we supposed to catch regressions then?") is None
    assert subject("how do I learn to bake bread?") == "bake bread"
    # A thing to do to what was said ("to catch that?") is done to the conversation's subject.
    assert subject("what sits in the request path to catch that?") is None
    assert subject("how do I get the printer to print that?") == "printer"
    # What follows a thing as a past participle says something of it, and is no head of its own.
    assert subject("what is the assumption baked into L2 there?") is None
    assert subject("how long is the bread baked in the oven?") == "bread"
    # "the ops article" is where the asker read it (a seed), not a thing outside the graph.
    assert subject("what does the ops article call that kind of risk?") is None
    # "the credit" says what is asked of the thing pointed at (which layer earns the speed-up).
    assert subject("in the nine-layer model which layer gets the credit for that?") is None
    # Nor is an adverb after it: "the compute side actually came back" is about the compute side.
    assert subject("how do I check whether the compute side actually came back?") is None
    # After a word pointing back, a thing of the asker's own said in two or more words the graph
    # never uses is a subject of its own; one such word, or no possessive, says where "it" is.
    assert subject("does it do the same to my garden hose nozzle?") == "garden hose nozzle"
    assert subject("can it run on my desktop?") is None
    assert subject("is that a common bias?") is None


def test_a_follow_up_naming_only_what_the_graph_lacks_stands_alone(engine: Engine) -> None:
    """ "should I use Flyway or Liquibase on it?" after a question on MLOps asks about the two
    things it names, which the graph lacks: "it" says where they would run, so the turn is not
    answered as a question about MLOps."""
    conversation = Conversation()
    engine.ask("where does experiment tracking fit in the nine-layer model?", conversation)
    turn = "should I use Flyway or Liquibase on it for the schema migrations?"
    answer = engine.ask(turn, conversation)
    assert answer.context is None and "experiment tracking" not in answer.answer.lower(), answer.answer
    # A follow-up naming nothing new still leans on the conversation.
    conversation = Conversation()
    engine.ask("where does experiment tracking fit in the nine-layer model?", conversation)
    assert engine.ask("and which layer stores its artifacts?", conversation).context is not None


def test_a_bare_layer_code_after_a_turn_about_a_model_is_that_models_layer(engine: Engine) -> None:
    """ "what sits in L5 there?" after the eight-layer map is its L5 (Kubernetes & Containers),
    not the nine-layer model's (Communication Libraries), which the same words mean alone."""
    conversation = Conversation()
    engine.ask("tell me about the eight-layer operational map", conversation)
    answer = engine.ask("and what sits in L5 there?", conversation)
    assert answer.answered and answer.answer.startswith("L5 Kubernetes & Containers"), answer.answer
    assert engine.ask("and what sits in L5 there?").answer.startswith("L5 Communication Libraries")


def test_only_foreign_counts_words_that_only_say_what_is_asked_as_nothing(engine: Engine) -> None:
    def only_foreign(text: str) -> bool:
        return Question.parse(engine, text).only_foreign(engine)

    assert only_foreign("so how do I cook rice?")
    assert only_foreign("how much would it cost to visit Lisbon?")  # "cost", "much" ask; "it" is idle
    assert not only_foreign("can it run on a desktop?")  # "run" is said of the conversation's "it"
    assert not only_foreign("ok, how do I check it?")  # chatter and asking words only: nothing foreign


def test_asked_for_a_remedy_the_answer_names_what_fixes_one_of_several_causes(engine: Engine) -> None:
    # Slow retrieval has three likely causes (index size, ranking, backend); asked only why,
    # the answer lists them; asked how to improve it, it also says what fixes the first of them
    # that the graph has a fix for (the vector index parameters fix the index size).
    assert Question.parse(engine, "how can we improve it?").asks_for_remedy
    assert not Question.parse(engine, "why is it slow?").asks_for_remedy
    asked = engine.ask("retrieval takes too long per query, how can we improve it?")
    assert asked.answered
    assert "What fixes index size: HNSW" in asked.answer
    assert any(f.predicate.endswith("#mitigates") for f in asked.facts)


def test_a_collective_named_in_a_report_asks_for_no_remedy(engine: Engine) -> None:
    # "all-reduce" and "reduce-scatter" name collectives; "reduce" alone asks to make less of something.
    assert not Question.parse(engine, "our all-reduce got 3x slower overnight").asks_for_remedy
    assert not Question.parse(engine, "reduce-scatter stalls on 16 nodes").asks_for_remedy
    assert Question.parse(engine, "how do we reduce the time to first token?").asks_for_remedy
    # Asking how to handle or deal with a problem asks for its fix; "which layer handles it" does not.
    assert Question.parse(engine, "how to handle long pending pods in a job?").asks_for_remedy
    assert Question.parse(engine, "how do we deal with flapping links?").asks_for_remedy
    assert not Question.parse(engine, "which layer handles rate limiting?").asks_for_remedy
    # Smoothing a problem out is fixing it.
    assert Question.parse(engine, "which knob smooths out the p99 spikes?").asks_for_remedy
    assert Question.parse(engine, "what setting smooths that out").asks_for_remedy


def test_fixes_defined_alike_are_explained_once(engine: Engine) -> None:
    answer = engine.ask("retrieval takes too long per query, how can we improve it?").answer
    assert "HNSW" in answer and "IVFPQ" in answer
    assert answer.count("trades off query speed vs recall accuracy") == 1


def test_a_question_naming_several_things_of_the_graph_is_about_them(engine: Engine) -> None:
    # Asked of two things together in words the passages match poorly ("downsides of k8s and
    # slurm on each node"), the question is still about them: their fallback answer stands.
    from stackgraph.graph.answering import _names_several

    assert _names_several(Question.parse(engine, "downsides of k8s and slurm on each node?"))
    assert not _names_several(Question.parse(engine, "downsides of slurm on each node?"))
    # A name the graph lacks beside them says the question is about something else.
    assert not _names_several(Question.parse(engine, "what is FlurboNet for k8s and slurm?"))


@pytest.mark.slow
def test_a_lone_passage_match_with_no_meaning_in_common_is_declined(semantic_engine: Engine) -> None:
    # "mount" is the only word "how tall is Mount Everest?" shares with "CSI mounts storage",
    # and the two are unrelated in meaning (cosine at or below zero): that is no answer.
    assert not semantic_engine.ask("how tall is Mount Everest?").answered


def test_a_question_for_a_person_is_declined_after_a_joining_word(engine: Engine) -> None:
    assert not engine.ask("and who won the election?").answered
    assert engine.ask("ok, who owns CrashLoopBackOff?").answered  # asks for a layer


@pytest.mark.slow
def test_a_statement_its_subjects_name_already_says_is_not_repeated(semantic_engine: Engine) -> None:
    # The triage branch "Latency increased: time going to retrieval" answers "retrieval": the
    # answer says the branch once, not "...: time going to retrieval: retrieval".
    answer = semantic_engine.ask("the time is going to retrieval, what now?")
    assert answer.answered
    assert "Latency increased: time going to retrieval" in answer.answer
    assert "time going to retrieval: retrieval" not in answer.answer


def test_who_asks_for_a_relation_of_the_graph_when_its_verb_names_one(engine: Engine) -> None:
    # "deploys" is a relation of the graph (the GPU Operator deploys the MIG manager); "invented"
    # is none: the graph holds no people.
    conversation = Conversation()
    assert engine.ask("what is MIG?", conversation).answered
    follow = engine.ask("who deploys it on Kubernetes?", conversation)
    assert follow.answered and "GPU Operator" in follow.answer
    assert not engine.ask("who invented the GPU?").answered


@pytest.mark.parametrize(
    "question", ["what does the device plugin actually do?", "so what does the device plugin really do?"]
)
def test_a_definition_asked_with_chatter_is_the_definition(engine: Engine, question: str) -> None:
    """Chatter ("actually", "really") says nothing of what is asked: the question asks what the
    device plugin is, and a statement about another thing sharing the stray word ("Is the node
    actually advertising accelerators?") is no better answer."""
    answer = engine.ask(question)
    assert answer.answer.startswith("Device plugin:"), answer.answer


def test_chatter_words_count_as_relational_words() -> None:
    from stackgraph.graph.lexical import chatter_terms, chatter_words, relational_words

    assert {"actually", "anyone", "thanks"} <= chatter_words() <= relational_words()
    assert "threat" in relational_words() and "threat" not in chatter_words()
    assert "actual" in chatter_terms()


def test_when_something_happened_is_outside_the_graph(engine: Engine) -> None:
    """The graph holds no dates or history: asked when something happened, in any sentence of a
    turn, it declines, whatever the conversation was about. When something applies is asked of
    what it knows."""
    conversation = Conversation()
    assert engine.ask("what is NCCL?", conversation).answered
    assert not engine.ask("nice. so when was it first released?", conversation).answered
    assert not engine.ask("when did NVIDIA buy Mellanox?").answered
    assert engine.ask("when does gang scheduling matter?").answered


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("who calls the device plugin?", "Kubelet"),
        ("who handles rate limiting?", "AI Gateway"),
        ("who manages the NVSwitch fabric?", "Fabric Manager"),
    ],
)
def test_who_asks_for_a_component_when_its_verb_names_a_role(
    engine: Engine, question: str, expected: str
) -> None:
    answer = engine.ask(question)
    assert answer.answered and expected in answer.answer
    assert not engine.ask("who made NVLink?").answered  # a maker is a person or a company


def test_an_adverb_between_who_and_its_verb_changes_nothing(engine: Engine) -> None:
    # "who normally owns X?" asks for a layer like "who owns X?"; "who really invented X?" for a person.
    assert engine.ask("who normally owns CrashLoopBackOff?").intent == "owner_of_symptom"
    assert not engine.ask("who really invented the GPU?").answered


def test_who_drives_asks_for_the_component_that_drives_it(engine: Engine) -> None:
    # Driving a process is a role in the stack (the MIG manager drives MIG partitioning).
    answer = engine.ask("who drives MIG partitioning on Kubernetes?")
    assert answer.answered and "MIG manager" in answer.answer


def test_a_bare_follow_up_asking_for_the_likeliest_cause_leans_on_the_problem(engine: Engine) -> None:
    # "likely" says how sure, like "probably": it is no word from outside the graph.
    conversation = Conversation()
    assert engine.ask("the NCCL job stalls on many nodes", conversation).answered
    follow = engine.ask("what's the most likely cause?", conversation)  # "what's": "what s"
    assert follow.answered and follow.context


def test_a_follow_up_asking_one_thing_of_it_leans_and_one_about_the_weather_does_not(
    engine: Engine,
) -> None:
    conversation = Conversation()
    assert engine.ask("what is the KV cache?", conversation).answered
    eats = engine.ask("and what eats into it?", conversation)  # one word the graph lacks, of "it"
    assert eats.answered and eats.context == "KV cache"
    conversation = Conversation()
    assert engine.ask("what is the KV cache?", conversation).answered
    assert not engine.ask("will it snow on Christmas?", conversation).answered  # "it" is idle


@pytest.mark.slow
def test_what_is_asked_of_it_is_no_name_the_graph_lacks(semantic_engine: Engine) -> None:
    # "the most important habit with it" asks something of Terraform; "habit" is no entity to
    # define, so the follow-up is not declined for lacking one.
    conversation = Conversation()
    assert semantic_engine.ask("what is Terraform used for here?", conversation).answered
    follow = semantic_engine.ask("what's the most important habit with it?", conversation)
    assert follow.answered and "plan" in follow.answer


@pytest.mark.slow
def test_a_sentence_that_defines_an_entity_is_its_passage_however_often_it_is_repeated(
    semantic_engine: Engine,
) -> None:
    # The runaway agent loop is defined by a sentence the seed repeats on two other entities; a
    # remark repeated that often is dropped from the passages, a definition is not, so the
    # report finds the runaway loop and what stops it.
    texts = [p.text for p in semantic_engine.passages.passages]
    assert any(t.startswith("Agent loop does not terminate: Loops that fail") for t in texts)
    answer = semantic_engine.ask("my agent never stops looping, how do I stop that from happening?")
    assert answer.answered and "iteration limit" in answer.answer


@pytest.mark.slow
def test_a_report_word_meets_the_graphs_word_for_the_same_step(semantic_engine: Engine) -> None:
    # "vector search" is what the triage tree calls retrieval: the report finds the retrieval
    # branch and its causes rather than the general advice to trace first.
    question = "our trace shows most of the latency is the vector search step, what usually causes that?"
    answer = semantic_engine.ask(question)
    assert answer.answered
    assert "index size" in answer.answer


@pytest.mark.parametrize(
    "question",
    ["what causes that?", "what usually causes that?", "what could cause slow collectives?"],
)
def test_asking_what_causes_a_problem_asks_for_its_owner_and_cause(question: str) -> None:
    from stackgraph.graph.answering import intents

    assert intents.detect(question).intent == intents.OWNER


def test_a_plural_common_word_names_a_problem_only_weakly(engine: Engine) -> None:
    # "prompt" is an alias of the prompt problem, and one ordinary word: "prompts" in passing is
    # no report of that problem, whether or not the model's vocabulary lists the plural.
    from stackgraph.graph.answering import link
    from stackgraph.graph.answering.context import STRONG_LINK

    for text in (
        "how do I let vLLM serve long context prompt",
        "how do I let vLLM serve long context prompts",
    ):
        found = {c.iri.rsplit("/", 1)[-1]: c.score for c in link(engine, Question.parse(engine, text))}
        assert found["cause-prompt"] < STRONG_LINK


def test_a_command_without_a_definition_is_said_by_what_it_shows(engine: Engine) -> None:
    # The seed says what nvidia-smi topo -m shows, not what it is: "is a command" answered nothing.
    answer = engine.ask("what does nvidia-smi topo -m show?")
    assert answer.answered
    assert "GPU-to-GPU link types" in answer.answer
    assert "is a command" not in answer.answer
    assert any(f.predicate.endswith("#shows") for f in answer.facts)


def test_what_is_in_a_layer_named_by_its_class_lists_the_layer(engine: Engine) -> None:
    # "the control plane" names both the CP layer and its class; asked what is in it, the answer is
    # the layer's members, not "the graph has 1 control plane".
    answer = engine.ask("what is in the control plane?")
    assert answer.answered
    assert "Volcano" in answer.answer and "Kueue" in answer.answer
    assert "The graph has 1" not in answer.answer


def test_a_definition_says_what_deploys_the_thing(engine: Engine) -> None:
    # The glossary's Ansible row installs NVIDIA Fabric Manager; the Fabric Manager's own
    # definition only says it is "installed with the drivers": asked what installs it, the
    # answer names what deploys it, first.
    answer = engine.ask("what installs NVIDIA Fabric Manager?")
    assert answer.answered and answer.answer.startswith("Ansible deploys NVIDIA Fabric Manager"), (
        answer.answer
    )
    assert any(f.predicate.endswith("#deploys") for f in answer.facts)


@pytest.mark.parametrize(
    ("question", "expected", "wrong"),
    [
        # A question that says nothing besides its names is answered by their passages first.
        ("how does ops L2 map to the nine-layer model?", "L2 GPUs & Networking", "L7 Models"),
        # "map X onto Y" asks for the crosswalk like "how does X map to Y".
        ("map L2 of the eight-layer map onto the nine-layer model", "L8 Node Interconnect", "EVPN"),
        # Asked how a technology maps to a model, the answer is where it sits in that model.
        ("how does vLLM map to the operational map?", "L7 Models & RAG / Data", None),
    ],
)
def test_mapping_questions_are_answered_about_what_they_name(
    engine: Engine, question: str, expected: str, wrong: str | None
) -> None:
    answer = engine.ask(question)
    assert answer.answered
    assert answer.answer.startswith(expected) or expected in answer.answer[:200]
    if wrong:
        assert not answer.answer.startswith(wrong) and wrong not in answer.answer[:60]


def test_what_is_it_after_where_it_fits_is_its_definition(engine: Engine) -> None:
    # "what is it?" asks what NVLink is and nothing more: a passage on NVLink that matched the
    # two turns read together does not replace its definition.
    conversation = Conversation()
    assert engine.ask("where does NVLink fit?", conversation).answered
    answer = engine.ask("what is it?", conversation)
    assert answer.context == "NVLink"
    assert answer.answer.startswith("NVLink: High-bandwidth GPU-to-GPU interconnect")


def test_what_a_subject_is_for_belongs_to_the_subject(engine: Engine) -> None:
    # "the best GPU for gaming" is no GPU of this graph; "the best GPU for inference" is.
    assert not engine.ask("what's the best GPU for gaming at 1440p?").answered
    assert engine.ask("what's the best GPU for inference?").answered
    assert engine.ask("what is NCCL used for?").answered


def test_a_question_about_an_ordinary_thing_outside_the_graph_is_declined(engine: Engine) -> None:
    # "a good book" is what is asked for; "deep learning" only says which book. A name the graph
    # lacks ("the gdrcopy") is no such thing: real reports name software in passing.
    assert not engine.ask("recommend a good book about deep learning").answered
    assert engine.ask("HI, I wonder if the gdrcopy can be used in RCCL lib.").answered


@pytest.mark.slow
def test_a_layer_model_named_beside_a_technology_frames_the_question(semantic_engine: Engine) -> None:
    # "the nine-layer model" says which model to answer in; its own "see related models" passage
    # matches "relate" but says nothing of NCCL.
    answer = semantic_engine.ask("how does NCCL relate to the nine-layer model?")
    assert answer.answered
    assert answer.answer.startswith("NCCL")
    assert "L5 Communication Libraries" in answer.answer


def test_a_definition_fallback_of_a_named_product_gives_way_to_the_statement_of_its_kind(
    engine: Engine,
) -> None:
    # Milvus is a vector database; asked how to tune one, its definition is only a fallback and
    # the statements about vector databases and their index parameters answer, the setting asked
    # for first. A triage branch found by description still keeps its place against its
    # symptom's general passage.
    answer = engine.ask(
        "Milvus search latency grew with the collection size; which vector database setting trades speed against recall?"
    )
    assert answer.answer.startswith("HNSW"), answer.answer[:200]
    assert "Vector databases:" in answer.answer and not answer.answer.startswith("Milvus")


def test_a_contraction_without_its_apostrophe_and_involved_say_nothing_of_the_subject(
    engine: Engine,
) -> None:
    # "isnt" is "isn't" typed fast; "involved" asks how things relate. Neither is a name the
    # graph lacks, so the question about the Kubelet it names is answered, alone or as a follow-up.
    answer = engine.ask("so kubelet isnt involved at all?")
    assert answer.answered and "Kubelet" in answer.answer
    conversation = Conversation()
    assert engine.ask("what is NCCL?", conversation).answered
    assert engine.ask("so the CNI isnt involved at all then?", conversation).answered


def _name_parts(engine: Engine) -> dict[str, set[str]]:
    """Words written in the graph's names that are no name on their own and no ordinary English,
    each with the entities whose names hold it (between two and eight of them)."""
    catalog = engine.catalog
    whole = {label.lower() for rec in catalog.records.values() for label in catalog.all_labels(rec)}
    written: dict[str, str] = {}
    holders: dict[str, set[str]] = {}
    for rec in catalog.records.values():
        for label in catalog.all_labels(rec):
            for term in terms(label):
                holders.setdefault(term, set()).add(rec.iri)
            for word in re.findall(r"[A-Za-z][A-Za-z0-9]+", label):
                low = word.lower()
                plural = low.endswith("s") and low[:-1] in engine.common_words
                if (
                    len(terms(word)) == 1
                    and low not in whole
                    and low not in engine.common_words
                    and not plural
                ):
                    written.setdefault(terms(word)[0], word)
    return {w: holders[t] for t, w in written.items() if 2 <= len(holders[t]) <= 8}


def test_a_word_that_is_part_of_several_names_is_answered_by_them(engine: Engine) -> None:
    words = _name_parts(engine)
    assert len(words) >= 10, "the graph's names share enough words to test this"
    for word, iris in sorted(words.items()):
        if Question.parse(engine, f"what is {word}?").mentions:
            continue  # a fuzzy or code reading names an entity: answered as that entity
        answer = engine.ask(f"what is {word}?")
        assert answer.answered, answer.answer
        # Said to be part of names, or a passage about one of them answered better.
        assert any(engine.catalog.label(i) in answer.answer for i in iris), answer.answer
        assert all(f.basis and f.sources for f in answer.facts)


def test_a_word_that_is_part_of_names_is_said_to_be_no_entry_itself(engine: Engine) -> None:
    word, iris = next((w, i) for w, i in sorted(_name_parts(engine).items()) if len(i) >= 3)
    answer = engine.ask(f"what is {word}?")
    opening, _, rest = answer.answer.partition(";")
    assert "no entry of its own" in opening, answer.answer
    assert sum(engine.catalog.label(i) in rest for i in iris) >= 2


def test_an_ordinary_word_in_names_is_still_no_subject(engine: Engine) -> None:
    answer = engine.ask("what is an index?")
    assert not answer.answered


@pytest.mark.parametrize("manner", ["in plain terms", "in a nutshell", "in layman's terms", "briefly"])
def test_how_to_tell_the_answer_is_not_what_it_is_about(engine: Engine, manner: str) -> None:
    for name in ("PagedAttention", "NCCL", "gang scheduling"):
        plain = engine.ask(f"what is {name}?")
        told = engine.ask(f"what is {name} {manner}?")
        assert told.answered, told.answer
        assert told.answer.split(".")[0] == plain.answer.split(".")[0]


def test_a_report_writing_part_of_several_names_is_offered_their_statements(semantic_engine: Engine) -> None:
    """Few of the report's words meet any statement, but one of them is part of the names of a
    few entities (RDMA verbs, RDMA NIC, GPUDirect RDMA): the nearest statements about those are
    offered, hedged, rather than the report declined."""
    answer = semantic_engine.ask("Warning: could not find any RDMA devices, falling back to TCP")
    assert answer.answered, answer.answer
    assert answer.answer.startswith("The closest the graph knows:")
    assert "RDMA verbs" in answer.answer or "RDMA NIC" in answer.answer


@pytest.mark.parametrize(
    ("question", "back"),
    [
        ("which one would I use to span across nodes?", True),
        ("and that one?", True),
        ("which ones support RDMA?", True),
        ("one GPU per pod, is that enough?", True),  # "that"
        ("one GPU per pod is enough", False),
    ],
)
def test_a_choice_among_what_was_said_points_back(engine: Engine, question: str, back: bool) -> None:
    assert Question.parse(engine, question).points_back is back


def test_which_one_after_a_comparison_answers_with_one_of_the_two(semantic_engine: Engine) -> None:
    conversation = Conversation()
    semantic_engine.ask(
        "tensor_parallel_size vs pipeline_parallel_size, what's the difference?", conversation
    )
    answer = semantic_engine.ask("which one would I use to span across nodes?", conversation)
    assert answer.answered and answer.context, answer.answer
    assert "pipeline_parallel_size" in answer.answer.split(".")[0] + answer.answer.split(".")[1]


def test_went_and_got_say_nothing_of_what_a_report_is_about() -> None:
    """ "step time got WORSE" matched "Answers got worse" (a RAG symptom) by "got" as much as by
    "worse"; they are the past of "go" and "get", already stopwords."""
    assert terms("we went from 8 to 16 nodes and step time got worse") == [
        "16",
        "node",
        "step",
        "time",
        "wors",
    ]


def test_a_report_of_worse_step_time_meets_slowness(semantic_engine: Engine) -> None:
    answer = semantic_engine.ask("we went from 8 to 16 nodes on the training job and step time got WORSE")
    assert answer.answered
    assert "Answers got worse" not in answer.answer.split(".")[0], answer.answer


@pytest.mark.parametrize(
    ("text", "name"), [("what is a kv cahce", "KV cache"), ("what is gang shceduling", "gang scheduling")]
)
def test_one_swapped_pair_in_a_run_of_words_still_names_it(engine: Engine, text: str, name: str) -> None:
    assert name in _names(engine, text)


@pytest.mark.parametrize(
    ("question", "person"),
    [
        ("who does the MIG partitioning on our GPU nodes?", False),  # "does" is the verb: what does it
        ("who invented the GPU?", True),
        ("who did the first GPU?", True),  # history, a person
        ("who fixes it, us or the network team?", False),  # which team owns the fix
        ("who won the game last night?", True),
    ],
)
def test_who_does_a_task_asks_for_a_part_of_the_stack(engine: Engine, question: str, person: bool) -> None:
    assert Question.parse(engine, question).asks_for_person is person


@pytest.mark.parametrize(
    ("question", "code"),
    [("we keep getting 429s from the gateway", "429"), ("lots of 504s on long replies", "504")],
)
def test_a_status_code_said_in_the_plural_names_its_symptom(engine: Engine, question: str, code: str) -> None:
    from stackgraph.graph.catalog import normalize

    assert f" {code} " in f" {normalize(question)} "
    mentions = Question.parse(engine, question).mentions
    assert any(code in engine.catalog.label(m.iri) for m in mentions), mentions


@pytest.mark.parametrize(
    ("report", "ruled_out"),
    [
        ("trace shows retrieval and queueing flat, its all generation time", {"retriev", "queue"}),
        ("queue + gen look normal, the extra time is in retrieval", {"queue", "gen"}),
        ("the dataloader is fine, workers aren't starved", {"dataload", "worker", "starv"}),
        ("the network isn't the bottleneck, GPUs are idle", {"network", "bottleneck"}),
        # Fast is fine too, and "itself" is no thing found fine.
        ("first token takes 8 seconds on our RAG chat, generation itself is fast", {"generat"}),
        # Said fine in one place and troubled in another: still the problem.
        ("NCCL hangs on 16 nodes, a single node is fine", set()),
        # A thing missing or not done is the trouble itself, not a thing found fine.
        ("nvidia-fabricmanager is not installed, so CUDA init fails with 802", set()),
        ("why isn't Kubernetes one of the layers?", set()),
    ],
)
def test_what_a_report_found_fine_is_ruled_out(report: str, ruled_out: set[str]) -> None:
    from stackgraph.graph.answering.question import ruled_out_terms

    assert ruled_out_terms(report) == ruled_out


def test_a_triage_branch_found_fine_is_not_the_one_answered(semantic_engine: Engine) -> None:
    """Of the three places a slow answer's time goes, the report says two are flat: the branch
    answered is the third, whichever of the others its words name first."""
    answer = semantic_engine.ask("the trace shows retrieval and queueing flat, it is all generation time")
    assert "time going to retrieval" not in answer.answer and "time going to queueing" not in answer.answer
    assert "generation" in answer.answer


def test_a_reports_template_headings_are_not_matched(engine: Engine) -> None:
    from stackgraph.graph.answering.question import heading_terms

    report = (
        "#### Describe the bug: vector search takes 20 seconds on 30M items "
        "#### Expected behavior: fast replies #### Steps to reproduce: topk=10, the bug shows every time"
    )
    # "bug" is said outside a heading too: it stays; the headings' other words go.
    assert heading_terms(report) == {"describ", "expect", "behavior", "step", "reproduc"}
    parsed = Question.parse(engine, report)
    assert "expect" in parsed.terms and "expect" not in parsed.ranking_terms


def test_the_versions_a_report_pastes_under_its_environment_heading_are_not_matched(engine: Engine) -> None:
    from stackgraph.graph.answering.question import environment_terms

    report = (
        "### Describe the bug other streams freeze while one huge prompt is processed on the GPU "
        "### Your current environment PyTorch 2.5.1, CUDA 12.4, NVIDIA driver 550.127, GPU: A10G "
        "### Expected behavior no freeze"
    )
    env = environment_terms(report)
    # Said only in the environment section: the versions and what they are of.
    assert {"pytorch", "cuda", "driver", "a10g"} <= env
    # Said outside it too ("GPU"), or only after it ("Expected behavior"): kept.
    assert "gpu" not in env and "freez" not in env and "behavior" not in env
    parsed = Question.parse(engine, report)
    assert "driver" in parsed.terms and "driver" not in parsed.ranking_terms
    assert environment_terms("the NVIDIA driver version does not match CUDA") == frozenset()


def test_a_branch_found_fine_is_not_descended_into(semantic_engine: Engine) -> None:
    """The triage tree is walked with the words the report does not rule out: "queueing and
    generation look normal" leaves the retrieval branch."""
    answer = semantic_engine.ask(
        "the trace puts the extra time in retrieval; queueing and generation look normal"
    )
    assert answer.answer.startswith("Latency increased: time going to retrieval"), answer.answer


def test_asking_for_layers_with_no_subject_of_its_own_leans_on_the_conversation(
    semantic_engine: Engine,
) -> None:
    conversation = Conversation()
    semantic_engine.ask("my pods are stuck in CrashLoopBackOff while loading a big model", conversation)
    answer = semantic_engine.ask("which layers should i go after in the 8-layer map?", conversation)
    assert "CrashLoopBackOff" in answer.answer and "L5 Kubernetes & Containers" in answer.answer, (
        answer.answer
    )


@pytest.mark.parametrize(
    "report",
    [
        "p99 latency doubled since the upgrade",
        "our token spend tripled this week",
        "error rate shot up after the deploy",
    ],
)
def test_a_change_in_size_is_a_word_of_trouble(report: str) -> None:
    from stackgraph.graph.answering import intents

    assert intents.looks_like_symptom(report)


def test_a_branch_for_something_absent_is_not_what_a_report_having_it_describes(engine: Engine) -> None:
    """ "the traces show requests waiting in line" shares "trace" with the branch for having no
    trace, but has traces: it describes what they found (queueing). Without traces, that branch
    is still the one."""
    having = engine.ask(
        "latency doubled since monday, our traces say requests wait in line before generation, which layers?"
    )
    assert "no trace available" not in having.answer, having.answer
    lacking = engine.ask("latency doubled since monday and we have zero tracing, which layers?")
    assert "no trace available" in lacking.answer, lacking.answer


def test_only_a_branch_for_something_absent_is_contradicted_by_having_it(engine: Engine) -> None:
    from stackgraph.graph.answering.context import Context
    from stackgraph.graph.store import KG

    no_trace, queueing = (
        str(KG["triage-latency-increased-no-trace"]),
        str(KG["triage-latency-increased-queueing"]),
    )

    def contradicted(question: str, branch: str) -> bool:
        return Context(engine, question, None, 0.0, [], None).contradicts(branch)

    assert contradicted("the traces show requests waiting in line", no_trace)
    assert not contradicted("we have no traces for the chat service", no_trace)
    assert not contradicted("there is zero tracing on that service", no_trace)
    assert not contradicted("the traces show requests waiting in line", queueing)  # no absence
    # A tool that provides the thing, named, says it is there: Langfuse traces.
    assert contradicted("p95 doubled since monday, we have langfuse on the service", no_trace)
    assert not contradicted("p95 doubled since monday, we don't have langfuse yet", no_trace)


def test_a_plural_pointer_stands_for_every_thing_of_the_kind_the_last_turn_named(engine: Engine) -> None:
    """ "where do they fit?" after a turn naming two schedulers asks where both fit; the first
    alone is half the answer. A singular "it" still means the conversation's subject."""
    conversation = Conversation()
    engine.ask("we are weighing Volcano against Kueue for our batch training jobs", conversation)
    both = engine.ask("ok so where do they fit?", conversation)
    assert "Volcano" in both.answer and "Kueue" in both.answer, both.answer
    conversation = Conversation()
    engine.ask("we are weighing Volcano against Kueue for our batch training jobs", conversation)
    one = engine.ask("ok so where does it fit?", conversation)
    assert one.answered and one.context is not None, one.answer


def test_a_name_said_to_be_absent_is_not_asked_about(engine: Engine) -> None:
    """ "where does Lustre go, there's no L10" asks where Lustre goes; L10 is said not to exist."""
    assert Question.parse(engine, "where does Lustre go, there is no L10 in the list").unknown_names == ()
    assert Question.parse(engine, "where does L10 go in the list?").unknown_names == ("L10",)


def test_a_word_pointing_back_at_the_reported_trouble_is_not_matched(engine: Engine) -> None:
    """ "What's this problem called?" names no problem of its own: matched, "problem" would favour
    the graph's "scheduling problem" over the statement describing the trouble reported."""
    report = "two of the three pods got placed, the third waits in Pending. what is this problem called?"
    parsed = Question.parse(engine, report)
    assert parsed.pointing == {"problem"}
    assert "problem" in parsed.terms and "problem" not in parsed.ranking_terms
    said_too = Question.parse(engine, "this problem looks like a scheduling problem, is it?")
    assert said_too.pointing == frozenset() and "problem" in said_too.ranking_terms
    assert Question.parse(engine, "how do I get rid of that error? CUDA error 802").pointing == frozenset()


def test_what_a_check_found_carries_the_report_on(semantic_engine: Engine) -> None:
    """A turn that reports what a check found, asking nothing, narrows the problem under way as if
    said in the first report; the next "that" is the narrowed problem, not the check."""
    conversation = Conversation()
    semantic_engine.ask("the p95 latency of our assistant doubled since friday", conversation)
    found = semantic_engine.ask(
        "the trace shows requests waiting in the queue at the inference endpoint, generation is normal",
        conversation,
    )
    assert found.answered and (found.context or "").startswith("Latency increased"), found.context
    owners = semantic_engine.ask("which layers own that?", conversation)
    assert "queueing" in owners.answer.split(" is owned by ")[0], owners.answer
    assert "L2 GPUs & Networking" in owners.answer and "L5 Kubernetes" in owners.answer


def test_a_finding_about_something_else_does_not_carry_the_report_on(semantic_engine: Engine) -> None:
    conversation = Conversation()
    semantic_engine.ask("all-reduce got slow on our 8 node job", conversation)
    aside = semantic_engine.ask(
        "the delivery tracker says my pizza order came back to the shop", conversation
    )
    assert not aside.answered and aside.context is None, aside.answer


def test_after_a_check_the_conversation_is_still_about_what_was_checked(engine: Engine) -> None:
    """ "How do I check it?" answers with a tool, but the answer is about what it checks: the next
    "it" is still that thing, not the tool."""
    conversation = Conversation()
    engine.ask("what is GPUDirect Storage?", conversation)
    checked = engine.ask("how do I check it's actually working?", conversation)
    assert checked.entities[0].label == "GPUDirect Storage" and "gdscheck" in checked.answer, checked.answer
    placed = engine.ask("and which layer of the nine-layer model is it in?", conversation)
    assert placed.context == "GPUDirect Storage" and "S Storage Data Path" in placed.answer, placed.answer


def test_a_setting_asked_for_alone_is_asked_of_the_conversation(engine: Engine) -> None:
    """ "Which knob do I turn down first?" names no subject: it asks for a setting of the problem
    under way. Words saying a setting is wanted are no subject of the turn's own; a turn that
    asks for the setting of something the graph lacks ("the cake baking temperature") still
    stands alone."""
    conversation = Conversation()
    engine.ask("our vLLM pods keep getting CUDA OOM at high concurrency", conversation)
    knob = engine.ask("which knob do I turn down first?", conversation)
    assert knob.context == "CUDA Out of Memory (OOM)" and "gpu_memory_utilization" in knob.answer, knob.answer
    other = Conversation()
    engine.ask("what is NCCL?", other)
    assert not engine.ask("which setting controls the cake baking temperature?", other).answered


def test_why_a_problem_with_no_cause_happens_is_the_reason_behind_its_fixes(semantic_engine: Engine) -> None:
    """The graph gives a runaway agent loop no cause, but what fixes it says why it happens (such
    loops are the default failure): "why does that happen?" is answered from there, not by a
    statement that shares the word "happen"."""
    conversation = Conversation()
    semantic_engine.ask("our agent keeps calling the same tool forever", conversation)
    why = semantic_engine.ask("why does that happen?", conversation)
    assert why.answered and why.context == "Agent loop does not terminate", why.answer
    assert "Treat every tool as an authenticated API endpoint" not in why.answer.split(". ")[0], why.answer
    assert "default failure" in why.answer or "non-deterministic" in why.answer, why.answer


def test_why_a_problem_with_a_cause_happens_is_its_cause_not_a_practice_sharing_a_word(
    engine: Engine,
) -> None:
    """ "Why does that happen?" after NoValidHost shares only "happen" with a practice about tool
    endpoints ("...that happens to have a model as its client"), which neither applies to nor
    fixes NoValidHost: the answer is the problem's cause."""
    conversation = Conversation()
    engine.ask("NoValidHost when booting GPU VMs but the hypervisors look empty", conversation)
    why = engine.ask("why does that happen?", conversation)
    assert "control plane state" in why.answer, why.answer
    assert "Treat every tool as an authenticated API endpoint" not in why.answer, why.answer


def test_why_asked_of_it_for_a_named_purpose_is_about_it(engine: Engine) -> None:
    """ "Why would I want it for training?" after NVMe-oF asks why NVMe-oF: "training" says what
    for, and a sentence about training is no answer."""
    conversation = Conversation()
    engine.ask("what's NVMe-oF?", conversation)
    why = engine.ask("why would I want it for training?", conversation)
    assert why.context == "NVMe-oF" and "65,535" in why.answer, why.answer
    assert "Training: application" not in why.answer, why.answer


def test_a_two_letter_word_is_no_slip_of_a_name(engine: Engine) -> None:
    """ "to size" is one letter from the name "tp size", but a two-letter word is too short to
    mistype: the question names no tensor_parallel_size. Longer slips still read as the name."""

    def named(question: str) -> set[str]:
        return {m.iri.rsplit("/", 1)[-1] for m in Question.parse(engine, question).mentions}

    assert "param-tensor-parallel-size" not in named(
        "what's the recommended way to size a GPU cluster's network?"
    )
    assert "param-tensor-parallel-size" in named("what does tp size do in vllm?")
    # What RAG products call their indexed documents is RAG's corpus: a knowledge base.
    assert "rag" in named("my PDFs are in the knowledge base but the chatbot says it can't find them")
    # A product of a family the seeds name is that family: an MI300 is of the AMD MI-series.
    assert "amd-mi-series" in named("we're adding TPU nodes next to our H100 and MI300 boxes")
    assert "nvlink" in named("how do I check NVLnik between GPUs?")


def test_a_remark_that_asks_nothing_carries_the_report_on(semantic_engine: Engine) -> None:
    """A turn that asks nothing and names nothing, in the graph's own words, is more detail on the
    report under way: read with it, the conversation keeps its subject, and the question after it
    is answered about that subject rather than alone (and declined)."""
    conversation = Conversation()
    semantic_engine.ask(
        "batch jobs from one team keep starving the chat users on our shared gateway."
        " we cap every API key at 600 requests per minute.",
        conversation,
    )
    remark = semantic_engine.ask("both teams stay under the cap though", conversation)
    assert remark.answered and remark.context is not None, remark.answer
    asked = semantic_engine.ask("so why isn't that request cap enough?", conversation)
    assert asked.answered and asked.context == remark.context, (asked.context, asked.answer)


def test_a_statement_after_a_statement_is_more_of_the_same_report(semantic_engine: Engine) -> None:
    """Two turns that ask nothing are one report told in two goes, whatever the second names: the
    low GPU utilization said after a slow first token is no vLLM memory setting to define, so the
    question after them asks what is behind the slow first token."""
    conversation = Conversation()
    semantic_engine.ask(
        "time to first token on the RAG chat endpoint sits near 5 seconds, after that tokens stream quickly",
        conversation,
    )
    semantic_engine.ask("GPU utilization looks low the whole time", conversation)
    asked = semantic_engine.ask("what's usually behind that pattern?", conversation)
    assert asked.context and "first-token" in asked.context, asked.context
    assert "index lookup" in asked.answer and "chunking" in asked.answer, asked.answer
    # A finding that rules some branches out leaves them out of what comes next.
    conversation = Conversation()
    semantic_engine.ask("chat latency doubled since tuesday", conversation)
    semantic_engine.ask("trace shows retrieval and queueing flat, its all generation time", conversation)
    causes = semantic_engine.ask("ok what usually causes that?", conversation)
    assert "generation" in causes.answer.split(".")[0], causes.answer
    # A question asks, with or without its question mark; a statement does not.
    assert not intents.is_statement("how do I check it")
    assert not intents.is_statement("ok so which layer owns it")
    assert intents.is_statement("no errors, it just hasn't started")


def test_the_argument_for_something_pointed_at_is_asked_of_it(semantic_engine: Engine) -> None:
    """ "the main argument for that design" asks for the case for the thing pointed at, as "the
    reason for it" does: "argument" is no thing of its own that the graph lacks."""
    conversation = Conversation()
    semantic_engine.ask("we're moving the GPU racks to a leaf-spine fabric", conversation)
    asked = semantic_engine.ask("what's the main argument for that design?", conversation)
    assert asked.answered and "non-blocking" in asked.answer, asked.answer


def test_a_turn_saying_only_what_is_asked_leans_on_the_conversation(semantic_engine: Engine) -> None:
    """ "what's the usual culprit?" names no subject: its words only say what is asked of one (a
    cause), so it asks about the problem under way, not about a thing called a culprit."""
    conversation = Conversation()
    semantic_engine.ask("our container dies right at startup on the brand new GPU nodes", conversation)
    culprit = semantic_engine.ask("what's the usual culprit?", conversation)
    assert culprit.answered and "Driver/CUDA version mismatch" in culprit.answer, culprit.answer


def test_a_remark_with_words_from_elsewhere_is_no_detail_of_the_report(semantic_engine: Engine) -> None:
    conversation = Conversation()
    semantic_engine.ask("all-reduce got slow on our 8 node job", conversation)
    aside = semantic_engine.ask("my neighbour's dog barks all night", conversation)
    assert not aside.answered and aside.context is None, aside.answer


def test_what_to_use_instead_leans_on_the_conversation(semantic_engine: Engine) -> None:
    """ "Instead" says the turn asks for another thing than the one under way: its subject is the
    conversation's, not one of its own that no statement of that subject shares a word with."""
    conversation = Conversation()
    semantic_engine.ask(
        "our model store is an old NFS filer on spinning disks and cold-loading a checkpoint takes 20 minutes",
        conversation,
    )
    asked = semantic_engine.ask("what should the weights live on instead?", conversation)
    assert asked.answered and asked.context == "Slow cold start", (asked.context, asked.answer)


def test_a_turn_with_a_subject_of_its_own_is_off_the_conversation(engine: Engine) -> None:
    """A turn naming nothing is off the conversation when it says three words the graph never uses
    and none of the last turn's own words: "also how do I ..." leans by its wording only."""
    from stackgraph.graph.answering.turns import off_the_conversation

    conversation = Conversation()
    engine.ask("langfuse shows the retrieval span of our rag app tripled since friday", conversation)

    def off(turn: str) -> bool:
        return off_the_conversation(engine, Question.parse(engine, turn), conversation)

    assert off("also how do i program the thermostat so the bedroom warms up at dawn in winter?")
    assert not off("also why is that span slower on winter mornings at dawn?")  # says "span" again
    assert not off("also which graph store holds the vectors?")  # no words of a subject of its own


def test_where_a_known_thing_fits_is_asked_though_an_unknown_name_follows_it(engine: Engine) -> None:
    """A placement question places the first thing it names; a name the graph lacks written after
    it says more about that thing. Named first, the unknown name is still what is asked about."""
    placed = engine.ask("where does moving the KV cache offload onto ZQX memory sit in the nine-layer model?")
    assert placed.answered and "L2" in placed.answer, placed.answer
    assert Question.parse(engine, "where does ZQX fit next to NVLink?").unknown_names == ("ZQX",)
    assert not engine.ask("where does ZQX fit next to NVLink?").answered
    # A definition still asks about every name of its subject.
    assert Question.parse(engine, "what is the KV cache offload to ZQX memory?").unknown_names == ("ZQX",)


def test_the_subject_a_definition_asks_about_stays_in_its_sentence(engine: Engine) -> None:
    """ "What's the meaning of X. I am working on ... I want to know ..." asks about X: the words
    of the sentences after it ("am", "want") are no part of the subject, nor names it lacks."""
    question = (
        "What's the meaning of the KV cache. I am working on the tests of our fork. I want to know "
        "what it holds in vllm (@pytest.mark.parametrize) Really appreciate your tips"
    )
    unknown = Question.parse(engine, question).unknown_names
    assert not {"am", "want", "working", "tests"} & {w.lower() for w in unknown}, unknown


@pytest.mark.parametrize("turn", ["whats the real cause tho?", "is that risky or is secops being paranoid"])
def test_chat_shorthand_and_judgement_words_do_not_change_the_topic(engine: Engine, turn: str) -> None:
    """ "tho", "risky", "paranoid" say how the asker feels about the subject, not a new one."""
    conversation = Conversation()
    engine.ask(
        "we load community finetunes as pytorch_model.bin pickle files onto the gpu nodes", conversation
    )
    answer = engine.ask(turn, conversation)
    assert answer.answered and answer.context is not None, answer.answer


def test_asking_what_next_leans_on_the_problem_under_way(engine: Engine) -> None:
    """ "looked at the switch ports, all clean, now what?" names what was checked: the next check
    is asked of the problem the conversation is about, not of the switches, and not of the last
    check an answer explained ("where do I look next?" after the allocatable GPUs)."""
    conversation = Conversation()
    engine.ask(
        "distributed training over roce freezes after a few hundred steps, one node alone is fine",
        conversation,
    )
    answer = engine.ask("looked at the switch ports, all up and clean, now what?", conversation)
    assert answer.answered and answer.context == "Multi-node cluster stalls", answer.answer
    conversation = Conversation()
    engine.ask("my 8-gpu pod has been Pending for an hour", conversation)
    engine.ask("the nodes' allocatable column shows 8 nvidia.com/gpu each", conversation)
    answer = engine.ask("ok where do i look next", conversation)
    assert answer.context == "Pending pod" and "Events" in answer.answer, answer.answer


def test_a_finding_named_before_what_next_stands_as_the_answer(engine: Engine) -> None:
    """ "the right doc WAS retrieved but ranked too low, now what?" names the triage branch it
    found: that branch answers, not the next one after the conversation's problem."""
    conversation = Conversation()
    engine.ask("our rag assistant answered wrong, what do i check first", conversation)
    answer = engine.ask("ok the right doc was retrieved but ranked too low. now what", conversation)
    assert "ranked too low" in answer.answer and "not retrieved" not in answer.answer, answer.answer


def test_a_bare_why_asks_why_of_the_last_answer_whatever_follows_it(engine: Engine) -> None:
    """ "why tho? i thought the container image was self contained" opens by asking only why: of
    what was just answered, however the sentence after it names a container."""
    from stackgraph.graph.answering import intents

    assert intents.asks_bare_why("why tho? i thought images were self contained")
    assert intents.asks_bare_why("but why? that makes no sense")
    assert not intents.asks_bare_why("why does NCCL hang on 16 nodes?")
    conversation = Conversation()
    engine.ask(
        "pods built on the new cuda runtime image die right at startup on our older gpu nodes", conversation
    )
    answer = engine.ask(
        "why tho? i thought the container image was supposed to be self contained", conversation
    )
    assert answer.context == "Container dies on startup", answer.answer


def test_a_fallback_definition_in_a_conversation_gives_way_to_the_statement_asked_for(
    semantic_engine: Engine,
) -> None:
    """ "any risk with that? what should we insist on?" about pickled weights asks for a practice:
    the subject's definition is only a fallback, and the nearest statement read with the turn
    before (prefer safetensors over pickle files) answers it, however unsure."""
    conversation = Conversation()
    semantic_engine.ask(
        "a researcher wants to drop a fine-tuned checkpoint from some unknown hf repo onto our gpu nodes, "
        "its files are pytorch_model.bin",
        conversation,
    )
    answer = semantic_engine.ask("any risk with that? what should we insist on?", conversation)
    assert "Prefer safetensors over legacy" in answer.answer, answer.answer


def test_a_follow_up_asking_for_a_setting_gets_one(semantic_engine: Engine) -> None:
    """ "what engine setting limits how long those may get?" after long prompts on vLLM asks for a
    setting: the answer leading with one (max_model_len) beats a listing of what vLLM relates to,
    which names none."""
    conversation = Conversation()
    semantic_engine.ask(
        "users want to paste entire repos, around 200k tokens, into the model we serve on vllm", conversation
    )
    answer = semantic_engine.ask("what engine setting limits how long those may get?", conversation)
    assert "max_model_len" in answer.answer.split(".")[0], answer.answer


def test_a_follow_up_mostly_in_words_the_graph_never_uses_stands_alone(engine: Engine) -> None:
    """ "can we write those off over three or five years on the company's taxes?" points back at the
    servers just named, but says more words the graph never uses (years, company, taxes, ...) than
    words it does: it is about something else, and is not answered about the servers."""
    conversation = Conversation()
    engine.ask("procurement just approved twelve more h100 servers for the training cluster", conversation)
    answer = engine.ask(
        "can we write those off over three or five years on the company's taxes, which is cheaper",
        conversation,
    )
    assert answer.context is None and not answer.answered, answer.answer
    # Two such words ("bias", "surveys"; "known" only says what is asked) are too few to tell.
    assert (
        len(Question.parse(engine, "is that a known bias of such surveys?").words_beyond_names(engine)[0])
        == 2
    )


@pytest.mark.parametrize(
    ("first", "then", "starts"),
    [
        # "it" would lean on the KV cache; the aside says the turn is about what it names.
        (
            "what is the KV cache?",
            "separate question - which layer owns it, the NCCL library?",
            "NCCL fits in L5",
        ),
        # "different question" is no part of what is asked: its words match nothing.
        ("what is PFC?", "different question, where does UALink fit?", "UALink fits in L8"),
    ],
)
def test_a_turn_that_says_it_changes_the_subject_is_read_on_its_own(
    engine: Engine, first: str, then: str, starts: str
) -> None:
    answer = _follow_up(engine, first, then)
    assert answer.answer.startswith(starts), answer.answer
    assert answer.context is None


def test_only_an_aside_announces_a_change_of_subject(engine: Engine) -> None:
    """ "unrelated" set off by a comma, colon, dash or "but" opens an aside; said of the trouble
    ("unrelated errors show up") it is a word of the question."""
    assert Question.parse(engine, "unrelated: where does UALink fit?").changes_topic
    assert Question.parse(engine, "NCCL is fine. Different topic, what is PFC?").changes_topic
    plain = Question.parse(engine, "unrelated errors show up in the NCCL log")
    assert not plain.changes_topic and "unrel" in plain.terms


def test_a_setting_asked_after_a_problem_is_answered_with_the_settings_that_fix_it(engine: Engine) -> None:
    """ "which engine setting should I change?" after an OOM report asks for the fixes that are
    settings: those mitigating the OOM's likely cause, each with what it does, not the problem's
    owners again."""
    answer = _follow_up(
        engine,
        "our vllm server OOMs with CUDA out of memory when traffic grows",
        "which engine setting should I change?",
    )
    assert answer.context == "CUDA Out of Memory (OOM)"
    lead = answer.answer.split(" (Inferred")[0]
    assert "The settings that fix KV cache / batch size exceeds VRAM budget" in lead, answer.answer
    for setting in ("gpu_memory_utilization (Fraction of GPU VRAM", "kv_cache_dtype (", "max_num_seqs ("):
        assert setting in lead, answer.answer


def test_a_fix_asked_of_several_named_problems_comes_from_the_first_one_with_a_fix(engine: Engine) -> None:
    """ "any fix for insufficient resources leaving half the workers pending ...?" names a cause
    the graph knows no fix of before the Pending pods, one of whose causes (a partially placed
    job) gang scheduling fixes: the fix asked for is that one, not the checks of the first name."""
    answer = engine.ask(
        "any fix for insufficient resources leaving half the workers pending while the rest already run?"
    )
    assert answer.answer.startswith("What fixes Partial placement of a distributed job: gang scheduling"), (
        answer.answer
    )
    assert "Volcano" in answer.answer


def test_a_trace_finding_is_answered_by_the_branch_it_selects(semantic_engine: Engine) -> None:
    """A report that says what its trace found has read the trace: the answer is the branch the
    finding points to (generation: longer outputs or a slower device), not the advice to take a
    trace. What it found fine, in one word or two ("generation time is flat"), is no branch of it."""
    generation = semantic_engine.ask(
        "latency doubled after we moved to a wordier model; our trace shows almost all of it in the generation span"
    )
    assert generation.answer.startswith("Latency increased: time going to generation"), generation.answer
    assert "generat" in ruled_out_terms("the retrieval span grew, generation time is flat")
    retrieval = semantic_engine.ask(
        "p95 went up, the trace says the retrieval span is what grew and generation time is flat. why?"
    )
    assert retrieval.answer.startswith("Latency increased: time going to retrieval"), retrieval.answer
    # A branch found fine leaves its symptom's other branches: retrieval and queueing flat.
    rest = semantic_engine.ask(
        "chat latency doubled since tuesday, the trace shows retrieval and queueing flat, its all generation time"
    )
    assert rest.answer.startswith("Latency increased: time going to generation"), rest.answer


@pytest.mark.parametrize(
    ("text", "set_aside"),
    [
        ("trace shows most of the time goes to retrieval not generation", {"generat"}),
        ("the time goes to retrieval, not generation", {"generat"}),
        ("it is the storage rather than the fabric", {"fabric"}),
        ("we cap it in the loop code instead of the prompt", {"prompt"}),
    ],
)
def test_what_a_contrast_sets_aside_is_ruled_out(text: str, set_aside: set[str]) -> None:
    assert set_aside <= ruled_out_terms(text)


@pytest.mark.parametrize(
    "text",
    [
        "the agent loop does not terminate",
        "pods not ready after the upgrade",
        "jobs not starting on the new nodes",
        "why not use the gpu operator",
        "nccl not found in the image",
    ],
)
def test_a_denied_state_is_the_trouble_not_a_thing_set_aside(text: str) -> None:
    assert not ruled_out_terms(text), ruled_out_terms(text)


def test_a_contrast_in_a_finding_selects_the_branch_it_keeps(semantic_engine: Engine) -> None:
    """ "most of the time goes to retrieval not generation" names both branches of the latency
    triage; the one it sets aside is no finding."""
    conversation = Conversation()
    semantic_engine.ask("latency on our rag agent jumped, we finally added tracing", conversation)
    semantic_engine.ask("trace shows most of the time goes to retrieval not generation", conversation)
    answer = semantic_engine.ask("so which layers r we looking at?", conversation)
    assert answer.answer.startswith("Latency increased: time going to retrieval"), answer.answer


def test_the_one_picks_a_part_of_what_was_just_listed(semantic_engine: Engine) -> None:
    """ "and the budget one?" after the three constraints that belong in the loop is the part named
    by that word: a budget per task, what it covers."""
    conversation = Conversation()
    first = semantic_engine.ask("which constraints belong in the agent loop itself?", conversation)
    assert first.context is None and "a budget per task" in first.answer, first.answer
    answer = semantic_engine.ask("and the budget one, what should it cover?", conversation)
    assert answer.answer.startswith("A budget per task"), answer.answer
    assert "wall-clock" in answer.answer and answer.context == "A budget per task"


@pytest.mark.parametrize(
    ("typed", "read"),
    [
        ("cool, which colo is cheapest?", "which colo is cheapest?"),
        ("ok thanks! and what about L4?", "and what about L4?"),
        (
            "Hi guys, how can i get the ib library in a container?",
            "how can i get the ib library in a container?",
        ),
        ("cooling, what does it need?", "cooling, what does it need?"),
        ("ok so where does it fit?", "ok so where does it fit?"),
    ],
)
def test_an_opening_interjection_is_no_part_of_the_question(engine: Engine, typed: str, read: str) -> None:
    assert Question.parse(engine, typed).text == read


def test_an_interjection_says_nothing_of_what_its_word_names(semantic_engine: Engine) -> None:
    """ "cool, which colo ... is cheapest?" after a turn on rack power asks for prices of a place
    the graph does not hold; "cool" says nothing of cooling."""
    conversation = Conversation()
    semantic_engine.ask("what do dense accelerator racks draw?", conversation)
    answer = semantic_engine.ask(
        "cool, which colo in frankfurt is cheapest for 100kW racks right now?", conversation
    )
    assert not answer.answered, answer.answer


@pytest.mark.parametrize(
    "turn",
    [
        "what should we check first?",
        "before we do that, what should we look at first?",
        "where do i even start?",
    ],
)
def test_what_to_check_first_after_a_problem_is_the_first_question_of_its_triage(
    semantic_engine: Engine, turn: str
) -> None:
    """ "what should we check first?" after a bad RAG answer asks for the first question of that
    problem's triage (was the right document retrieved?), not the general advice on triage order."""
    assert intents.detect(turn).intent == intents.TRIAGE
    conversation = Conversation()
    semantic_engine.ask(
        "our internal rag bot gave a totally wrong answer about the leave policy", conversation
    )
    answer = semantic_engine.ask(turn, conversation)
    assert "Was the correct document retrieved at all?" in answer.answer.split(". ")[0], answer.answer


def test_how_a_thing_fails_is_its_own_layers_failure_mode(semantic_engine: Engine) -> None:
    """ "how does it fail?" after Volcano asks for the failure mode of Volcano's layer in the model
    that says how layers fail (the eight-layer map's L5), not of a layer found by the words of the
    question alone."""
    conversation = Conversation()
    semantic_engine.ask("what is Volcano?", conversation)
    fails = semantic_engine.ask("how does it fail?", conversation)
    assert "L5 Kubernetes & Containers" in fails.answer.split(":")[1], fails.answer


@pytest.mark.parametrize(
    ("turns", "reading"),
    [
        (
            [
                "NoValidHost on every gpu flavor since the upgrade",
                "openstack compute service list says they're all enabled",
                "so that means compute is fine?",
            ],
            "administrative",
        ),
        (
            [
                "16 node training keeps stalling in allreduce",
                "ibstat shows every port Active",
                "that rules out the links right?",
            ],
            "rated speed",
        ),
    ],
)
def test_asked_if_a_finding_settles_it_the_answer_says_how_to_read_the_check(
    semantic_engine: Engine, turns: list[str], reading: str
) -> None:
    """ "so that rules them out, right?" after "ibstat shows every port Active" asks how to read
    what the check found: what the check shows ("a port negotiated below its rated speed ..."),
    not the problem's answer again."""
    conversation = Conversation()
    for turn in turns:
        answer = semantic_engine.ask(turn, conversation)
    assert reading in answer.answer and answer.context, answer.answer


def test_a_check_is_said_to_have_found_something_right_after_its_name() -> None:
    assert intents.says_it_found("ibstat shows every port Active", "ibstat")
    assert intents.says_it_found("nccl-tests came back at 90 GB/s", "nccl-tests")
    assert not intents.says_it_found("should I run ibstat? the trace shows nothing", "ibstat")
    assert intents.asks_if_settled("so that rules them out, right?")
    assert not intents.asks_if_settled("what rules apply to that?")


def test_a_report_naming_the_check_it_ran_gets_what_the_check_shows(semantic_engine: Engine) -> None:
    """A report that read a check gets how to read it ("Read Events, not Status"), however much
    of its answer gives only the command."""
    answer = semantic_engine.ask(
        "pods stuck in Pending. kubectl describe pod shows nothing useful in the output"
    )
    assert "Read Events, not Status" in answer.answer, answer.answer


def test_a_phrase_describing_what_was_named_before_is_about_it(semantic_engine: Engine) -> None:
    """ "the collective library" after a turn naming NCCL is NCCL (the NVIDIA Collective
    Communications Library), not the collective operations its first word names."""
    conversation = Conversation()
    semantic_engine.ask("our training stack is pytorch on cuda with nccl today", conversation)
    answer = semantic_engine.ask(
        "we're adding amd gpus, what replaces the collective library there?", conversation
    )
    assert answer.context == "NCCL" and "RCCL" in answer.answer, answer.answer


def test_a_check_the_report_ran_and_a_layer_named_in_passing_keep_the_problem_under_way(
    semantic_engine: Engine,
) -> None:
    """ "ran nccl-tests and busbw falls off a cliff" reports what a check found (a cliff is how
    far it fell, not a thing the graph lacks), and "what should the network team check then?"
    names a layer only by an ordinary word: both are about the stall under way."""
    assert intents.reports_a_finding("ran nccl-tests and busbw falls off a cliff across the spine")
    conversation = Conversation()
    for turn in (
        "32-node training on roce keeps hanging",
        "ran nccl-tests and busbw falls off a cliff across the spine",
        "what should the network team check on their side then?",
    ):
        answer = semantic_engine.ask(turn, conversation)
        assert answer.context in (None, "Multi-node cluster stalls"), (turn, answer.context)
    assert answer.context == "Multi-node cluster stalls" and "PFC" in answer.answer, answer.answer


@pytest.mark.parametrize(
    ("text", "name", "unused"),
    [
        ("our logs say GPU Direct RDMA Disabled for HCA 0", "gpu direct rdma", True),
        ("can't use gdr between the two boxes", "gdr", True),
        ("how to enable GDR for our new NICs?", "gdr", True),
        ("gdr is not being used on node 3", "gdr", True),
        ("GDR works fine on every node", "gdr", False),
        ("we rely on GDR for every job", "gdr", False),
    ],
)
def test_a_named_thing_said_to_be_out_of_use_is_recognised(text: str, name: str, unused: bool) -> None:
    assert intents.says_not_in_use(text, name) is unused


def test_a_technology_said_to_be_out_of_use_gets_what_it_relies_on(engine: Engine) -> None:
    """A report that the GPUDirect RDMA path is disabled wants the host kernel module that path
    relies on, which statements about RDMA fabrics matching more of its words never name; the
    same technology asked about in use gets no such line."""
    answer = engine.ask(
        "the training logs print 'GPU Direct RDMA Disabled for HCA 0' on every node of our RoCE "
        "cluster, traffic otherwise flows fine over the fabric. what are we missing?"
    )
    assert "relies on" in answer.answer and "nvidia-peermem" in answer.answer, answer.answer
    assert any(f.predicate.endswith("#uses") for f in answer.facts)
    assert "relies on" not in engine.ask("where does GPUDirect RDMA fit?").answer


@pytest.mark.parametrize(
    ("text", "name", "asks"),
    [
        ("what switches and settings do we need to run RoCE on our fabric?", "roce", True),
        ("what does GPUDirect RDMA require on the host?", "gpudirect rdma", True),
        ("what are the prerequisites for nvme-of", "nvme-of", True),
        ("we need RoCE for training, where does it fit?", "roce", False),
        ("RoCE needs to be fast, but what is it?", "roce", False),
    ],
)
def test_a_question_asking_what_a_named_thing_needs_is_recognised(text: str, name: str, asks: bool) -> None:
    assert intents.asks_what_it_needs(text, name) is asks


def test_asked_what_a_technology_needs_the_answer_gives_what_pairs_with_it(engine: Engine) -> None:
    """RoCE needs lossless Ethernet: PFC pairs with it. A report that a technology is out of use
    gets only what it relies on, not what merely pairs with it."""
    answer = engine.ask("what gear do we need to use RoCE between our racks?")
    assert "pairs with PFC" in answer.answer, answer.answer
    assert not intents.asks_what_it_needs("how can I use a CUDA version compatible with my OS?", "cuda")
    assert not intents.says_not_in_use("how can I use a CUDA version compatible with my OS?", "cuda")


def test_which_of_the_layers_asks_where_a_thing_fits(engine: Engine) -> None:
    """ "which of the nine co-design layers is HBM a property of?" asks for a layer like "which
    layer", whatever words stand between "which of the" and "layers"."""
    assert intents.detect("which of the nine co-design layers is HBM a property of?").intent == intents.FIT
    answer = engine.ask("HBM size per card: which of the nine layers is that a property of?")
    assert "L9 Accelerator & Memory" in answer.answer, answer.answer


def test_a_spot_or_slot_pointed_back_at_is_the_last_layer(engine: Engine) -> None:
    """ "the counterpart in that spot" after a question placing CUDA asks what else sits in its
    layer, not what is CUDA's equivalent."""
    assert Conversation.refers_to_layer("what's the AMD option in that spot?")
    assert Conversation.refers_to_layer("anything else in the same slot?")
    assert not Conversation.refers_to_layer("we hit a bad spot in training")
    conversation = Conversation()
    engine.ask("which of the nine layers does cuDNN sit in?", conversation)
    answer = engine.ask("and the google-side option in that spot?", conversation)
    assert "XLA" in answer.answer, answer.answer


def test_a_closing_then_carries_on_from_the_last_turn() -> None:
    """ "which of the two would enforce the limits then?" leans on the turn before, as "it" does;
    a "then" inside a sentence ("if X then Y") does not."""
    assert Conversation.leans_on_context("which of the two would enforce tokens-per-minute limits then?")
    assert Conversation.leans_on_context("why isn't reading the code enough then?")
    assert not Conversation.leans_on_context("when a job fails then restarts, where do I look for logs?")


def test_a_backend_of_something_else_is_no_retrieval_backend(engine: Engine) -> None:
    """The latency triage's "backend" is the retrieval backend; "the storage backend of our
    training cluster" or "NCCL's socket backend" is another one, so the word alone names nothing."""
    from stackgraph.graph.store import KG

    storage = Question.parse(engine, "the storage backend of our training cluster chokes every hour")
    assert str(KG["cause-retrieval-backend"]) not in {m.iri for m in storage.mentions}
    retrieval = Question.parse(engine, "is our slow retrieval backend the problem?")
    assert str(KG["cause-retrieval-backend"]) in {m.iri for m in retrieval.mentions}


def test_an_option_of_the_askers_program_selects_no_triage_branch(engine: Engine) -> None:
    """ "--workers=10" and "num_workers=4" name the asker's own options: their words are no
    report of fewer workers running, which would point at the scheduler."""
    parsed = Question.parse(engine, "training is slow, main.py --workers=10 and num_workers=4 on the loader")
    assert {"worker", "num"} <= parsed.in_settings
    report = (
        "training got slow, GPU utilisation sits near 5% while batches take ages to arrive,"
        " I run python train.py --workers=8 and num_workers=8 on the dataloaders"
    )
    answer = engine.ask(report)
    assert answer.answered
    assert "Throughput dropped: fewer workers running" not in answer.answer, answer.answer


def test_a_last_sentence_asking_without_its_question_mark_is_the_one_that_asks(engine: Engine) -> None:
    """Typed at 2am without a question mark, "is there an engine flag for this" still asks for a
    setting; a last sentence that only reports asks nothing."""
    asked = Question.parse(engine, "long prompts stall every other stream. is there an engine flag for this")
    assert asked.asks_for_setting
    assert "engin" in asked.asked_terms or "flag" in asked.asked_terms
    reported = Question.parse(engine, "long prompts stall every other stream. the flag docs say nothing")
    assert not reported.asked_terms


def test_whats_supposed_to_asks_what_does_a_job_not_what_a_word_means(engine: Engine) -> None:
    """ "what's supposed to spread that traffic?" asks which thing does a job; "supposed" is no
    name the graph lacks."""
    parsed = Question.parse(engine, "what's supposed to spread that traffic over all the spine links?")
    assert "supposed" not in parsed.unknown_names


def test_a_checklist_of_absences_rules_its_items_out() -> None:
    """ "no xid, no ecc" lists what was looked at and found clean; a single "no GPU found" is the
    trouble itself."""
    assert {"xid", "ecc"} <= ruled_out_terms(
        "one box is 30% slower than the rest. no xid, no ecc, dmesg quiet"
    )
    assert {"xid", "ecc"} <= ruled_out_terms("No Xid errors, no ECC errors on the slow node")
    assert not ruled_out_terms("no GPU found on the node after the upgrade")


def test_a_verdict_asked_on_what_the_report_named_is_the_verdict_on_its_problem(engine: Engine) -> None:
    """ "so is vllm broken?" after a report naming vLLM asks whose fault the problem under way is:
    the answer stays on the problem (a CrashLoopBackOff whose likely cause is the liveness probe),
    not on what vLLM is. A question about another thing still stands alone."""
    report = (
        "our vllm pod on kubernetes goes into CrashLoopBackOff while it is still loading the model"
        " weights, nothing in the logs"
    )
    answers = {}
    for follow_up in ("so is vllm broken?", "is NCCL used by vLLM?"):
        conversation = Conversation()
        engine.ask(report, conversation)
        answers[follow_up] = engine.ask(follow_up, conversation)
    verdict = answers["so is vllm broken?"]
    assert verdict.context == "CrashLoopBackOff", (verdict.context, verdict.answer)
    assert "liveness probe" in verdict.answer.lower(), verdict.answer
    assert answers["is NCCL used by vLLM?"].context != "CrashLoopBackOff"


def test_asked_whether_what_was_just_said_is_the_cause_the_answer_is_about_that_cause(engine: Engine) -> None:
    """ "the liveness probe is the 30s one from our web template" then "so is that the actual
    cause?": of the CrashLoopBackOff's likely causes, the one the turn before put forward (its name
    holds "liveness probe") is what is asked about, and answered."""
    conversation = Conversation()
    for turn in (
        "our inference pod is in crashloopbackoff on a big model",
        "it gets killed while still loading weights, the liveness probe is the 30s one we use for web apps",
    ):
        engine.ask(turn, conversation)
    answer = engine.ask("so is that the actual cause?", conversation)
    assert answer.context == "Liveness probe misconfigured for slow startup", (answer.context, answer.answer)
    assert answer.answer.startswith("Liveness probe misconfigured"), answer.answer


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("startupProbe", ["startup", "probe"]),
        ("you can't assertEqual a reply", ["assert", "equal"]),
        ("nodeSelector", ["node", "selector"]),
    ],
)
def test_an_identifier_in_camel_case_says_its_words(text: str, words: list[str]) -> None:
    """ "a startupProbe on /health" speaks of a startup probe; a name written in camel case from
    a capital ("PyTorch", "DeepSpeed") or with a run of capitals ("vLLM", "cuDNN") stays one word."""
    said = terms(text)
    assert all(stem(w) in said for w in words), said
    assert terms("PyTorch DeepSpeed vLLM cuDNN") == [
        stem(w) for w in ("pytorch", "deepspeed", "vllm", "cudnn")
    ]


def test_a_camel_case_assertion_meets_the_seeds_words_for_it(semantic_engine: Engine) -> None:
    """ "you can't assertEqual an LLM reply" says what the seed says in words ("you cannot assert
    equality on a generated response"): the answer leads with that statement, not with why teams
    need an evaluation suite at all."""
    answer = semantic_engine.ask(
        "you can't assertEqual an LLM reply, so how do teams catch regressions when they switch models?"
    )
    assert answer.answered and "cannot assert equality" in answer.answer[:150], answer.answer
