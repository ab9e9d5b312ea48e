"""Semantic matching with the packaged model: descriptions that share no name with the graph."""

from __future__ import annotations

import pytest

from stackgraph.graph.answering.question import Question
from stackgraph.graph.engine import Engine

pytestmark = pytest.mark.slow


def _assert_declined_as_outside(engine: Engine, question: str, area: str | None = None) -> None:
    """The question is declined as belonging to a neighbouring area the graph does not cover,
    and, given ``area``, the decline names it."""
    answer = engine.ask(question)
    assert not answer.answered and "does not cover that area" in answer.answer, question
    if area is not None:
        assert area in answer.answer, (question, answer.answer)


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


def test_a_question_nearer_a_topic_outside_the_graph_is_declined(semantic_engine: Engine) -> None:
    # Both share words with statements of the graph (a wheel's build error and a container's
    # startup failure; a 401 and the JWT that expires mid-stream) but mean something it does not
    # cover: Python packaging, downloading from a model hub.
    for question in (
        "pip keeps failing to build the wheel for our attention kernel package, gcc error code 1",
        "downloading the gated model from the hub returns 401 even though I set my token",
    ):
        answer = semantic_engine.ask(question)
        assert not answer.answered, answer.answer[:200]
        assert "does not cover that area" in answer.answer  # and says which area it is
        assert answer.suggestions  # still says what the graph knows nearest


def test_where_the_weights_come_from_is_no_question_about_a_hubs_access(semantic_engine: Engine) -> None:
    """The neighbouring area is access to a hub's gated repositories (tokens, 401s); keeping models
    in a hub of one's own is the graph's private registry, and is answered."""
    answer = semantic_engine.ask(
        "can we keep models in a hub inside our own network instead of pulling from huggingface?"
    )
    assert answer.answered, answer.answer[:200]
    assert "Private Hugging Face" in answer.answer


def test_neighbouring_areas_people_often_ask_about_are_declined(semantic_engine: Engine) -> None:
    """Licences of weights and code, and reproducing a paper's numbers, are asked in the same
    threads as serving and training problems; no seed says anything of them."""
    for question in (
        "does the apache license on the code also cover the model weights?",
        "paper says 78.2 on the benchmark but my run of their eval script gives 74",
        "how do I add new special tokens to the tokenizer vocabulary and resize the embeddings",
        # Generation sampling settings and fine-tuning hyperparameters: no seed sets them.
        "what top_p and temperature should I use for creative writing with my model?",
        "how should I pick the LoRA rank and alpha for a small dataset?",
        # Buying hardware: the graph says how GPUs are used, not what they cost.
        "how much does leasing an 8x H100 node cost per month?",
        "which vendor has the quickest delivery on H200 servers right now",
        "we were charged twice on last month's invoice for our GPU cloud account, how do we get a refund?",
        # Writing tasks: the engine answers from the graph, it does not translate or draft.
        "translate our runbook into French please",
        # Mobile apps, relational databases, certificates: neighbours of a cluster, not its stack.
        "our android app crashes on launch after upgrading the kotlin gradle plugin",
        "our sql query joining three tables got slow after the table grew, should I add an index on the foreign key column",
        "the lets encrypt certificate for our dashboard domain never renews, the acme order stays invalid",
        # A JVM's heap is no GPU's memory, however much "out of memory" the question says.
        "how do I raise the JVM heap for our Spring Boot service running on kubernetes?",
        # Nor is a laptop's sound: its configs and adapters are no cluster's.
        "my bluetooth headphones crackle every few seconds since the last pipewire update, default configs",
        # Nor is a game's crash, however much it says "crash", "loading" and "GPU".
        "my modded skyrim crashes to desktop whenever I load a save, any fix?",
        # Nor is statistics: an L2 penalty is no layer.
        "should I use an L1 or L2 penalty for my ridge regression on survey data?",
    ):
        _assert_declined_as_outside(semantic_engine, question)


def test_reports_from_software_far_from_the_stack_are_declined(semantic_engine: Engine) -> None:
    """Issue trackers are full of reports that say "memory", "GPU", "crash" and "driver" about a
    browser, a game, a JavaScript build or a cache server: words the graph uses, so the nearest
    statements are offered as the closest it knows unless the area itself is listed as outside."""
    for question in (
        "Since updating the extension my browser crawls once I have twenty tabs open, and it eats"
        " several GB of memory. Disabling hardware acceleration didn't help.",
        "After a few minutes of play the game crashes to desktop with a rendering error; I think my"
        " graphics card overheats. Latest driver installed.",
        "Our Redis instance started evicting most keys once it reached its memory limit, and"
        " responses became very slow.",
        "npm run build fails in CI with FATAL ERROR: Reached heap limit Allocation failed -"
        " JavaScript heap out of memory",
        "my vim key mappings stopped working after I updated my dotfiles and a plugin manager, any idea?",
        # Version control, home networking and a phone app: "commit", "DNS", "out of memory".
        "how do I squash my last three commits into one before pushing the branch?",
        "name lookups on the home router got slow every night, should I change the DNS server?",
        "the Android app runs out of memory and crashes when the photo gallery opens",
        # A firm answer too (CUDA OOM by its words) when the area is nearer than any statement.
        "the VR game leaks GPU memory every time a new level is loaded until it crashes",
    ):
        _assert_declined_as_outside(semantic_engine, question)


def test_a_report_from_a_neighbouring_area_is_told_which_area(semantic_engine: Engine) -> None:
    """A laptop that stays black after resume, a media player's green picture, a screen
    recorder's GPU encoder or smart plugs dropping off their network use words the stack uses
    ("screen", "hardware decoding", "GPU", "network"); each is declined as the area it belongs
    to."""
    for question, area in (
        ("after resuming from suspend the laptop screen stays black until I close the lid again", "laptops"),
        (
            "the media player shows a green picture for some videos when hardware decoding is on",
            "video playback",
        ),
        # A GPU encoder and a network of devices, each outside the stack.
        ("OBS fails to start recording with an NVENC encoder error on my RTX card", "OBS"),
        ("my Zigbee smart plugs drop off the Home Assistant network after a day or two", "smart home"),
    ):
        _assert_declined_as_outside(semantic_engine, question, area)


def test_a_report_near_no_statement_of_the_graph_is_declined(semantic_engine: Engine) -> None:
    """A report from an application far from the stack says a word or two the graph uses ("cell",
    "column", "view") and no area listed as outside is nearer: it is still declined, because no
    statement of the graph comes near it in meaning."""
    from stackgraph.graph.answering import reports

    for question in (
        "After sorting the table by the second column, a cell that holds a formula still points at the old row.",
        "Sorting the list view by date puts yesterday's entries after last week's, and the column"
        " header arrow points the wrong way.",
    ):
        assert reports.far_from_the_graph(semantic_engine, question), question
        assert not semantic_engine.ask(question).answered, question
    assert not reports.far_from_the_graph(semantic_engine, "multi-node training is slower than single node")


def test_a_question_in_another_script_is_never_judged_far_from_the_graph(semantic_engine: Engine) -> None:
    """The encoder reads English: a question mostly in Chinese has low cosines to everything,
    whatever it asks, so its distance says nothing about its topic."""
    from stackgraph.graph.answering import reports

    question = "如何在多台机器上部署一个大模型？每台机器有八张卡"
    assert max(semantic_engine.passages.semantic(question)) < reports.FAR_FROM_GRAPH
    assert not reports.far_from_the_graph(semantic_engine, question)


def test_an_answer_offered_only_as_the_closest_is_declined_short_of_the_area(
    semantic_engine: Engine,
) -> None:
    """An answer asserted is withdrawn when the question is nearer an uncovered area than any
    statement; one the engine only offers as "the closest it knows" is withdrawn even when the
    area is a little less near (``HEDGED_OUTSIDE_MARGIN`` is below zero)."""
    from stackgraph.graph.answering import reports

    question = "should I buy NVIDIA stock now?"
    cosines = semantic_engine.passages.semantic(question)
    topic, cosine = semantic_engine.linker.semantic_index().outside(question)
    # The case in between: a little less near the area than the nearest statement.
    assert max(cosines) + reports.HEDGED_OUTSIDE_MARGIN <= cosine < max(cosines) + reports.OUTSIDE_MARGIN
    assert reports.outside_the_graph(semantic_engine, question) is None
    assert reports.outside_the_graph(semantic_engine, question, reports.HEDGED_OUTSIDE_MARGIN) == topic
    assert reports.HEDGED_OUTSIDE_MARGIN < reports.OUTSIDE_MARGIN


def test_a_hedged_answer_is_withdrawn_by_the_hedged_margin(semantic_engine: Engine, monkeypatch) -> None:
    # A hedged answer's question naming something surely (PyTorch) is weighed with
    # HEDGED_OUTSIDE_MARGIN: set just past this question's own gap to its nearest outside area it
    # stays, set just short of it, it goes.
    from stackgraph.graph.answering import reports

    question = "throughput wobbles every few hundred steps on the big PyTorch run"
    assert semantic_engine.ask(question).answer.startswith(reports.HEDGE)
    gap = semantic_engine.linker.semantic_index().outside(question)[1] - max(
        semantic_engine.passages.semantic(question)
    )
    monkeypatch.setattr(reports, "HEDGED_OUTSIDE_MARGIN", gap - 0.001)
    assert not semantic_engine.ask(question).answered
    monkeypatch.setattr(reports, "HEDGED_OUTSIDE_MARGIN", gap + 0.001)
    assert semantic_engine.ask(question).answered


def test_a_hedge_naming_nothing_surely_is_held_to_the_nameless_margin(
    semantic_engine: Engine, monkeypatch
) -> None:
    """A guess at a question that names nothing of the graph surely rests on meaning alone, so an
    outside area within ``NAMELESS_HEDGE_OUTSIDE_MARGIN`` of the graph's nearest statement
    withdraws it, where a guess at a named thing needs the area to be as near as that statement.
    Set just past the question's own gap, the margin withdraws it; set short of it, it stays."""
    from stackgraph.graph.answering import reports

    question = "our search cluster lost its master node overnight and now the cluster health shows red"
    gap = semantic_engine.linker.semantic_index().outside(question)[1] - max(
        semantic_engine.passages.semantic(question)
    )
    assert gap < reports.HEDGED_OUTSIDE_MARGIN
    assert reports.NAMELESS_HEDGE_OUTSIDE_MARGIN < reports.HEDGED_OUTSIDE_MARGIN
    monkeypatch.setattr(reports, "NAMELESS_HEDGE_OUTSIDE_MARGIN", gap + 0.01)
    kept = semantic_engine.ask(question)
    assert kept.answered and kept.answer.startswith(reports.HEDGE)
    monkeypatch.setattr(reports, "NAMELESS_HEDGE_OUTSIDE_MARGIN", gap - 0.01)
    assert not semantic_engine.ask(question).answered


def test_a_hedge_whose_best_passage_means_nothing_like_the_question_is_withdrawn(
    semantic_engine: Engine, monkeypatch
) -> None:
    # HEDGE_SEMANTIC: the same hedged question loses its hedge once its best passage's cosine
    # falls below the floor, whatever words it shares (another answerer may still speak).
    from stackgraph.graph.answering import reports

    question = "throughput wobbles every few hundred steps on the big job"
    assert semantic_engine.ask(question).answer.startswith(reports.HEDGE)
    monkeypatch.setattr(reports, "HEDGE_SEMANTIC", 0.99)
    assert not semantic_engine.ask(question).answer.startswith(reports.HEDGE)


def test_a_report_one_of_whose_sentences_is_about_an_outside_area_gets_no_closest_guess(
    semantic_engine: Engine,
) -> None:
    """A long report blends its sentences' meanings: said whole, a certificate renewal stuck behind
    an ingress is as near the graph's pending pods as anything, and only the closest statements
    would be offered. Its first sentence alone is plainly about certificates."""
    for question in (
        "Our ingress certificate renewal stays pending forever since we moved from one ingress"
        " controller to another. The cert-manager issuer was updated to the new class. Every other"
        " ingress renewed fine, only the one in front of the inference service is stuck.",
        "Jinja template error: system role not supported when chatting through the web UI with"
        " sglang serving the model. I am trying to upload a document in the chat portal and ask a"
        " question about it. The model server logs show the template rejects the system message.",
    ):
        _assert_declined_as_outside(semantic_engine, question)
    # A report about the stack, sentence by sentence, is still answered.
    report = (
        "NCCL all-reduce hangs after a few steps on 16 nodes. A single node runs fine for hours."
        " Nothing in the logs before the timeout."
    )
    assert semantic_engine.ask(report).answered
    # Nor is one that says plainly in one sentence what of the stack it is about, whatever its
    # other sentence on scaling a server on Kubernetes is near.
    report = (
        "need fractional GPU sharing for the embedding server inside kubernetes. Right now the"
        " embedding service is not running in Kubernetes, which is a problem since we cannot scale"
        " those servers easily."
    )
    assert semantic_engine.ask(report).answered


def test_questions_near_the_boundary_but_inside_it_are_still_answered(semantic_engine: Engine) -> None:
    for question in (
        "the model loads slowly from the shared filesystem on every restart",
        "should we fine-tune with LoRA or do full fine-tuning, and which layer owns it?",
        "our LLM responses get cut off mid-sentence behind the gateway",
        "tool calls from our agent should be checked against the user's permissions, where does that go?",
        "can you summarise the nine-layer model for me?",
    ):
        assert semantic_engine.ask(question).answered, question


def test_the_nearest_outside_topic_is_read_from_the_ontology(semantic_engine: Engine) -> None:
    from stackgraph.graph.lexical import outside_topics

    topic, cosine = semantic_engine.linker.semantic_index().outside("which learning rate should I use?")
    assert topic in outside_topics() and "learning rate" in topic
    assert 0.0 < cosine <= 1.0
    # A cloud provider's own services (buckets, IAM) are an area of their own, not Terraform's.
    topic, _ = semantic_engine.linker.semantic_index().outside("the S3 bucket policy denies our IAM role")
    assert "IAM" in topic


def test_running_a_component_the_graph_names_is_still_an_area_it_does_not_cover(
    semantic_engine: Engine,
) -> None:
    """Kafka carries the graph's CDC delta sync, but operating Kafka (consumer lag, partitions)
    is an area of its own: declined as that area, while Kafka's part in a migration is answered."""
    declined = semantic_engine.ask(
        "kafka consumer lag keeps growing on our orders topic, how do I scale consumers?"
    )
    assert not declined.answered and "message brokers" in declined.answer, declined.answer
    assert "Kafka" in semantic_engine.ask("which tools does the CDC delta sync of a migration use?").answer
    # So is an ordinary website's routing on Kubernetes, while the AI gateway's timeouts are not.
    website = semantic_engine.ask("my kubernetes ingress returns 404 for the frontend app after deploy")
    assert not website.answered and "ingress" in website.answer, website.answer
    assert semantic_engine.ask("HTTP 504 from the gateway in the middle of a long answer").answered
    # Running the orchestrator or the monitoring stack themselves, against their part in the stack.
    for outside in (
        "the airflow scheduler UI is slow and DAG runs are queued for hours",
        "prometheus alertmanager sends duplicate slack notifications",
    ):
        assert not semantic_engine.ask(outside).answered, outside
    assert semantic_engine.ask(
        "our airflow rag ingestion pipeline failed overnight, the bot answers from stale docs"
    ).answered
    assert semantic_engine.ask("how do we get GPU metrics into prometheus?").answered


def test_an_answer_that_says_every_word_asked_is_not_measured_against_outside_areas(monkeypatch) -> None:
    # "where does UALink fit?" is answered by name: judging it against the neighbouring areas
    # would cost a cold process the model's load and encode for nothing.
    from stackgraph.graph.answering import reports

    engine = Engine.load(semantic=True)
    measured: list[str] = []
    real = reports.outside_the_graph
    monkeypatch.setattr(
        reports, "outside_the_graph", lambda e, q, *margin: measured.append(q) or real(e, q, *margin)
    )
    assert engine.ask("where does UALink fit?").answered
    assert measured == []
    engine.ask("pip keeps failing to build the wheel for our attention kernel package, gcc error code 1")
    assert len(measured) == 1


def test_pasted_code_leaves_the_meaning_of_a_report_to_its_sentences(semantic_engine: Engine) -> None:
    """A log pasted between a report's sentences shares words with everything; what the report
    means is in its sentences, so the encoder reads those (and a text that is all code, whole)."""
    index = semantic_engine.linker.semantic_index()
    report = "all-reduce hangs after a few steps on 16 nodes, a single node is fine"
    log = "```\n[rank3] NCCL INFO Channel 00/02 : 0[0] -> 1[1] via P2P/IPC\nW1204 12:00:01 process_group.cpp:42] timeout\n```"
    assert (index.vector(f"{report}\n{log}\nany idea?") == index.vector(f"{report}\n \nany idea?")).all()
    assert (index.vector(log) != index.vector(report)).any()  # all code: encoded as it stands


def test_a_long_question_is_encoded_while_it_is_parsed(semantic_engine: Engine, monkeypatch) -> None:
    """A report's encode starts on the encoder thread before parsing; the ranker then takes that
    vector instead of encoding again, and the answer is the one encoding in turn gives."""
    report = "the all-reduce stalls after a few steps once we go past one node, on a single box it is fine"
    semantic_engine.ask("my first token takes ages to arrive")  # the model is loaded by now
    linker = semantic_engine.linker
    index = linker.semantic_index()
    with monkeypatch.context() as patch:
        patch.setattr(linker, "prefetch_meaning", lambda text: None)
        linker._semantic_cache.clear()
        in_turn = semantic_engine.ask(report).to_dict()
    index._last = index._pending = None

    started: list[str] = []
    real_start = index.embedder.start_query
    monkeypatch.setattr(index.embedder, "start_query", lambda text: started.append(text) or real_start(text))

    def no_encode_here(text: str):
        raise AssertionError(f"encoded on the asking thread: {text!r}")

    monkeypatch.setattr(index.embedder, "encode_query", no_encode_here)
    linker._semantic_cache.clear()
    ahead = semantic_engine.ask(report).to_dict()
    assert started == [report]
    assert ahead == in_turn


def test_a_short_question_is_not_encoded_ahead(semantic_engine: Engine, monkeypatch) -> None:
    """Questions of a few words mostly name what they ask about and need no vector at all."""
    semantic_engine.ask("my first token takes ages to arrive")
    index = semantic_engine.linker.semantic_index()
    started: list[str] = []
    monkeypatch.setattr(index.embedder, "start_query", started.append)
    semantic_engine.linker._semantic_cache.clear()
    semantic_engine.ask("what is NVLink?")
    assert started == []


def test_a_setting_asked_for_leads_over_the_engine_named_in_passing(semantic_engine: Engine) -> None:
    """Asked which setting helps, a report naming its engine in passing gets the engine's knob,
    not the engine's own statements, which match the report by the engine's name alone."""
    answer = semantic_engine.ask(
        "when someone pastes a very long document into the prompt, the streaming replies of all the "
        "other users on our vllm node stutter. which engine setting helps with that?"
    )
    lead = answer.answer.removeprefix("The closest the graph knows: ")
    assert lead.startswith("enable_chunked_prefill:"), answer.answer
    # Asked for in the sentence that asks, or in a question of one sentence; not a report's
    # passing mention of its configs.
    assert Question.parse(semantic_engine, "which engine flag for that?").asks_for_setting
    assert Question.parse(semantic_engine, "We run vLLM. Which setting caps the batch?").asks_for_setting
    report = "I used the default configs of the trainer. Why is two nodes slower than one?"
    assert not Question.parse(semantic_engine, report).asks_for_setting


def test_a_question_saying_mostly_words_the_graph_never_uses_is_no_surer_than_a_hedge(
    semantic_engine: Engine,
) -> None:
    """Named in passing, a tool the graph knows does not make a question about page styling one it
    answers: saying more foreign words than known ones, it meets the neighbouring areas by the
    margin a hedged answer meets them by."""
    styling = semantic_engine.ask(
        "how do i put our company logo and brand colours on the grafana login page?"
    )
    assert not styling.answered and "web front-end" in styling.answer, styling.answer
    assert semantic_engine.ask("what does grafana show on its dashboards?").answered


def test_a_described_problem_is_the_one_both_words_and_meaning_favour(semantic_engine: Engine) -> None:
    """A report described but not named goes to the problem its words and its meaning agree on:
    "CUDA error: uncorrectable ECC error" is nearest in meaning to CUDA OOM (both a CUDA error),
    but its words are the uncorrected ECC errors' cause."""
    report = (
        "RuntimeError: CUDA error: uncorrectable ECC error encountered ### System Info PyTorch "
        "version: 2.0.1 CUDA used to build PyTorch: 11.8 OS: Ubuntu 20.04.6 LTS Nvidia driver "
        "Version: 520.61.05 GPU models and configuration: NVIDIA A100 80GB PCIe ### Error logs "
        "Training Epoch: 0: 0%| | 0/388 Traceback (most recent call last): loss = "
        "model(**batch).loss RuntimeError: CUDA error: uncorrectable ECC error encountered"
    )
    answer = semantic_engine.ask(report)
    assert answer.answer.startswith("Uncorrected ECC errors"), answer.answer
    # One stray shared word is no overlap: clocks sagging with "zero errors" is a slow node.
    slow = semantic_engine.ask(
        "gpus run fine for the first hour then clocks sag and step time creeps up, zero errors anywhere"
    )
    assert "ECC" not in slow.answer.split(".")[0], slow.answer


def test_a_statement_saying_every_word_of_a_short_question_may_stand_alone(semantic_engine: Engine) -> None:
    """Terse sentences sit apart in meaning from a question in other words: GGUF's "a
    quantization format: shrinks 16-bit weights" says every word the graph uses of "what formats
    could we use to shrink a 70B model?", and answers it. A question sharing those words by chance
    is still far in meaning from it, and declined."""
    shrink = semantic_engine.ask("what formats could we use to shrink a 70B model?")
    assert shrink.answered and "GGUF" in shrink.answer.split(":")[0], shrink.answer
    assert not semantic_engine.ask("how do I format and shrink a disk partition?").answered


def test_a_problem_report_gets_the_checks_of_the_problem_its_answer_leads_with(
    semantic_engine: Engine,
) -> None:
    """The 2am reader's next step is a command to run: a report answered by the closest statements
    about a problem gets that problem's own places to look when the answer gives none, cited as the
    graph states them. A question that reports no problem gets none added."""
    report = semantic_engine.ask(
        "slow training with torchrun on 2 nodes of 8 A100: 2.3 steps per second, where a single node "
        "gives 2.9, same global batch size. GPU utilization is almost 100% in both cases but power is "
        "lower on two nodes. Any help appreciated."
    )
    assert "To check Node genuinely slow but not erroring: nvidia-smi" in report.answer, report.answer
    assert all(f.basis and f.source for f in report.facts)
    advice = semantic_engine.ask(
        "i put 'stop after 10 tool calls' in my agent's system prompt, is that enough?"
    )
    assert "To check" not in advice.answer, advice.answer


def test_a_question_naming_only_ordinary_words_is_no_surer_than_a_hedge(semantic_engine: Engine) -> None:
    """The triage's causes are named "resources" and "config", words any report says: a question
    whose only names are such words (an Android build's "duplicate value for resource") meets the
    neighbouring areas by the margin a hedged answer does, and is declined there. Asked about the
    cause itself, it is still answered."""
    build = semantic_engine.ask(
        "Build fails with duplicate value for resource errors. ./gradlew assembleDebug fails with AAPT: "
        "error: duplicate value for resource 'attr/layout_scrollFlags' with config ''. No build "
        "instructions in the repo."
    )
    assert not build.answered and "mobile app development" in build.answer, build.answer
    owner = semantic_engine.ask("the new config broke everything, which layer owns a bad config?")
    assert owner.answered and "L5 Kubernetes & Containers" in owner.answer, owner.answer


def test_reports_about_annotation_tools_dataset_formats_and_output_parsers_are_declined(
    semantic_engine: Engine,
) -> None:
    """Labelling tools, instruction datasets' record formats, an app framework's output parser and
    a team notebook server's login page sit beside the stack (GPUs, training, agents, clusters are
    named in passing) and no statement of the graph covers them."""
    for question, area in (
        (
            "after exporting my labelled video frames as YOLO txt files every box file is empty,"
            " though the project shows the bounding boxes fine",
            "annotation",
        ),
        (
            "my SFT run on 4 GPUs crashes with KeyError 'output' because my ShareGPT style records"
            " use different column names than the template expects",
            "instruction-tuning datasets",
        ),
        (
            "the langchain chain fails with OutputParserException: could not parse LLM output as"
            " JSON, though the reply looks fine",
            "output parsers",
        ),
        (
            "users of our JupyterHub should pick a GPU or CPU profile when their notebook server"
            " spawns, how do I offer that choice on the login page?",
            "JupyterHub",
        ),
    ):
        _assert_declined_as_outside(semantic_engine, question, area)


def test_asked_for_a_setting_the_knob_that_mitigates_the_reported_cause_leads(
    semantic_engine: Engine,
) -> None:
    """A report whose best-matching statement is a likely cause ("latency increased is likely
    caused by batching") and that asks for an engine flag is answered by the setting that
    mitigates that cause, its own statement first."""
    for report in (
        "token latency spikes for everybody on our vllm deployment whenever one giant prompt comes"
        " in; the other streams pause. is there an engine flag for this?",
        "latency increased a lot on vllm since users started sending long documents, everyone"
        " else's tokens stall meanwhile. which flag helps?",
    ):
        answer = semantic_engine.ask(report)
        assert answer.answered
        assert answer.answer.startswith("enable_chunked_prefill"), answer.answer
        assert any(f.predicate.endswith("#mitigates") for f in answer.facts)


def test_a_quick_check_on_a_fabric_is_its_diagnostic(semantic_engine: Engine) -> None:
    """ "whats a quick check on the IB side?" asks for InfiniBand's check, which is ibstat."""
    answer = semantic_engine.ask("whats a quick check on the IB side?")
    assert answer.answered
    assert "ibstat" in answer.answer[:80], answer.answer  # the check leads


def test_experiment_tracker_client_errors_are_declined_and_its_placement_is_answered(
    semantic_engine: Engine,
) -> None:
    """A wandb login failing on its API key or TensorBoard charts missing from the UI sit beside
    the stack (a fine-tuning script, a GPU node); where experiment tracking sits in the stack is
    the seed's own question and stays answered, as does a GPU report read off a W&B dashboard."""
    for question in (
        "wandb login says my API key is invalid on the training server though I copied it from"
        " the settings page, runs never show up",
        "TensorBoard shows the graph tab but no scalars or images for my fine-tuning run",
    ):
        _assert_declined_as_outside(semantic_engine, question)
    placed = semantic_engine.ask(
        "where do experiment tracking and a model registry sit in the nine-layer model?"
    )
    assert placed.answered and "L1 Application" in placed.answer, placed.answer
    report = semantic_engine.ask(
        "our W&B dashboards show GPU utilization dropping every epoch, what should I check?"
    )
    assert report.answered, report.answer


def test_log_shipping_and_facility_cooling_are_declined_while_rack_power_is_answered(
    semantic_engine: Engine,
) -> None:
    """Forwarding container logs to a logging vendor and specifying a liquid-cooling loop sit
    beside the stack (a pod, a dense rack): the graph says neither. What a dense rack draws, and
    a GPU slowing down as it runs hot, are its own statements and stay answered."""
    for question, area in (
        (
            "what's the best way to ship container logs from our GPU nodes to New Relic with custom tags?",
            "observability vendors",
        ),
        (
            "which supply water temperature and litres per minute does a direct-to-chip cold plate"
            " loop need per rack?",
            "liquid cooling",
        ),
    ):
        _assert_declined_as_outside(semantic_engine, question, area)
    power = semantic_engine.ask(
        "how much power does a dense accelerator rack draw compared to a normal rack?"
    )
    assert power.answered and "kW" in power.answer, power.answer
    hot = semantic_engine.ask(
        "our GPUs get slower the longer the job runs, they run very hot. which metric shows it?"
    )
    assert hot.answered and "thermal" in hot.answer.lower(), hot.answer


def test_nan_loss_and_port_forwarding_are_declined_while_training_stalls_are_answered(
    semantic_engine: Engine,
) -> None:
    """A loss turning NaN is the model's numerics, and a dropped `kubectl port-forward` is a
    workstation's tunnel to a service: neither is a statement of the graph. A training job that
    hangs or slows down is, and stays answered."""
    for question, area in (
        ("after about 2k steps my fine-tune's loss becomes nan in fp16, any idea why?", "NaN"),
        (
            "kubectl port-forward to our notebook service drops every few minutes with 'lost connection"
            " to pod', how do I keep it up?",
            "port-forward",
        ),
    ):
        _assert_declined_as_outside(semantic_engine, question, area)
    for report in (
        "our distributed training job hangs after a few hundred steps on 8 nodes",
        "training throughput suddenly dropped by half on the cluster this week",
    ):
        assert semantic_engine.ask(report).answered, report
