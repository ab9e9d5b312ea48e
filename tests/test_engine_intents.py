"""One test (at least) per intent, on the built-in graph: the answer says what the seeds say."""

from __future__ import annotations

import pytest

from stackgraph.graph.answering import intents
from stackgraph.graph.answering.question import Question
from stackgraph.graph.conversation import Conversation
from stackgraph.graph.engine import Engine
from stackgraph.graph.model import UnknownEntity

NINE = "000_fa8781ee52850678.txt"
OPS = "002_45016591b2ef1932.txt"
GLOSSARY = "004_55fa503474d771b7.txt"


def ask(engine: Engine, question: str):
    answer = engine.ask(question)
    assert answer.answered, f"declined {question!r}: {answer.answer}"
    assert len(answer.answer) <= 1200
    return answer


def test_where_fits_names_layer_by_code_and_name(engine: Engine) -> None:
    answer = ask(engine, "where does UALink fit?")
    assert answer.intent == "where_fits"
    assert "L8 Node Interconnect" in answer.answer
    assert "scale-up interconnect" in answer.answer
    assert any(e.iri.endswith("/ualink") for e in answer.entities)
    assert any(s.document == NINE for s in answer.sources)
    assert answer.sparql and all("SELECT" in q for q in answer.sparql)
    assert any(f.predicate.endswith("#fitsIn") for f in answer.facts)


def test_where_fits_control_plane_member(engine: Engine) -> None:
    assert "Control Plane" in ask(engine, "Which layer does Kueue belong to?").answer


def test_a_practice_is_placed_by_the_layers_it_applies_to(engine: Engine) -> None:
    """A practice has no placement of its own; the layer it applies to is where it sits: asked
    which layer should own the eval suite, the answer is L6 of the operational map, said as
    stated in the sources."""
    answer = ask(engine, "which layer should own our eval suite?")
    assert answer.intent == "where_fits" and "applies to L6 AI Engineering & LLMOps" in answer.answer, (
        answer.answer
    )
    fact = next(f for f in answer.facts if f.predicate.endswith("#appliesTo"))
    assert fact.basis == "stated" and fact.source is not None
    # Asked of the other model, where the graph does not say it applies, it places nothing.
    other = ask(engine, "in the nine-layer model, which layer should own our eval suite?")
    assert "applies to L6 AI Engineering" not in other.answer, other.answer


def test_owner_of_symptom_gives_cause_and_where_to_look(engine: Engine) -> None:
    answer = ask(engine, "which layer owns CUDA OOM?")
    assert answer.intent == "owner_of_symptom"
    assert "KV cache" in answer.answer
    assert "gpu_memory_utilization" in answer.answer
    assert any(s.document == GLOSSARY for s in answer.sources)


def test_triage_branch_selected_by_question_words(engine: Engine) -> None:
    answer = ask(engine, "Throughput dropped and GPUs are underutilised; collectives are slow")
    assert "L2" in answer.answer
    assert "fabric" in answer.answer.lower()


def test_diagnose_technology(engine: Engine) -> None:
    answer = ask(engine, "how do I check NVLink links?")
    assert answer.intent == "diagnose"
    assert "nvidia-smi topo -m" in answer.answer


def test_a_check_of_which_things_are_linked_is_no_question_of_how_they_relate(engine: Engine) -> None:
    """ "how do I check which GPU pairs are linked over NVLink?" asks for a check; "how is NVLink
    related to NVSwitch?" for the path between two things. The check is headed by what it checks."""
    check = ask(engine, "on our H100 nodes, how do I check which GPU pairs are really linked over NVLink?")
    assert check.intent == "diagnose"
    assert check.answer.startswith("To check NVLink: Run `nvidia-smi topo -m`"), check.answer
    assert intents.detect("how is NVLink related to NVSwitch?").intent == intents.PATH


def test_a_check_comes_from_what_the_question_names_surely_not_a_common_word(engine: Engine) -> None:
    """ "resources" names "insufficient resources" only weakly: beside Terraform, named surely,
    its pod checks are no answer; the graph's check of what a Terraform apply would destroy is."""
    answer = ask(
        engine,
        "terraform apply wants to destroy 12 resources, how do I see exactly which ones before approving?",
    )
    assert "destroy or replace" in answer.answer and "jq" in answer.answer, answer.answer
    assert "kubectl" not in answer.answer


def test_a_later_step_of_a_flow_comes_after_the_steps_that_feed_it(engine: Engine) -> None:
    """The jq filter reads plan.json: it is told after `terraform plan -out=tfplan` and
    `terraform show -json`, which make that file, in the flow's order, each step's link a fact."""
    answer = ask(engine, "how do I list what terraform will destroy?")
    assert answer.intent == "diagnose"
    text = answer.answer
    steps = [text.find("terraform plan -out=tfplan"), text.find("terraform show -json"), text.find("jq -r")]
    assert -1 not in steps and steps == sorted(steps), text
    nexts = {(f.subject_label, f.object_label) for f in answer.facts if f.predicate.endswith("#next")}
    assert ("terraform plan -out=tfplan", "terraform show -json tfplan > plan.json") in nexts


def test_what_is_doing_something_asks_for_the_doer_not_a_definition(engine: Engine) -> None:
    """After a CrashLoopBackOff report, "what's doing the killing?" is no question about a thing
    named "doing": the turn asks what kills the pod, which the graph answers (the liveness probe)."""
    conversation = Conversation()
    engine.ask("our inference pod with the weights baked into the image goes CrashLoopBackOff", conversation)
    answer = engine.ask("what's doing the killing?", conversation)
    assert answer.answered and "liveness" in answer.answer.lower(), answer.answer


def test_diagnose_described_task(engine: Engine) -> None:
    answer = ask(engine, "How can I see why the last container exited?")
    assert "kubectl logs" in answer.answer


def test_define_expands_acronym(engine: Engine) -> None:
    answer = ask(engine, "What is TTFT?")
    assert answer.intent == "define"
    assert "Time To First Token" in answer.answer


def test_why_design_choice(engine: Engine) -> None:
    answer = ask(engine, "Why is orchestration a control plane and not a layer?")
    assert answer.intent == "why"
    assert "NCCL never calls Kubernetes" in answer.answer


@pytest.mark.parametrize(
    ("question", "reason"),
    [
        (
            "why doesn't the nine-layer model make slurm one of the stacked layers? it's clearly critical",
            "NCCL never calls Kubernetes",
        ),
        (
            "why does the nine-layer model draw storage as its own column next to the layers?",
            "decide whether GPUs wait",
        ),
    ],
)
def test_a_why_asked_of_a_layer_model_about_what_it_names_gets_the_models_design_choice(
    engine: Engine, question: str, reason: str
) -> None:
    """The design choice of the named model that bears on the named thing (Slurm sits in the
    control plane, which the choice "orchestration is a control plane" applies to) gives the
    reason, though statements of where it sits match more of the question's words."""
    answer = ask(engine, question)
    assert answer.intent == "why"
    assert reason in answer.answer, answer.answer


def test_a_why_asked_of_a_layer_is_answered_by_the_choice_that_gives_the_reason(engine: Engine) -> None:
    """ "why is parallelism its own layer?" names L3, to which a practice (keep tensor-parallel
    groups in one NVLink domain) applies as much as the design choice: the one stating a reason
    answers a why."""
    answer = ask(engine, "why is parallelism its own layer?")
    assert answer.answer.startswith("Parallelism is a design layer"), answer.answer


def test_list_members_of_layer(engine: Engine) -> None:
    answer = ask(engine, "What is in L6?")
    for name in ("libfabric", "GPUDirect RDMA"):
        assert name in answer.answer


@pytest.mark.parametrize("cls", ["LayerModel", "Workload", "DesignChoice", "Tool", "Metric"])
def test_listing_a_class_lists_its_members_whatever_its_words_describe(engine: Engine, cls: str) -> None:
    label = engine.class_label(f"https://w3id.org/stackgraph/ns#{cls}")
    members = engine.entities_of(cls)
    for question in (f"list the {label}s", f"what {label}s are there?"):
        answer = ask(engine, question)
        assert answer.answer.startswith(f"The graph has {len(members)} {label}s"), (question, answer.answer)


def test_the_layers_of_a_model_named_with_the_class_name_are_that_models_layers(engine: Engine) -> None:
    answer = ask(engine, "list the layers of the nine layer model")
    assert "L1 Application" in answer.answer and "L9 Accelerator & Memory" in answer.answer


def test_layer_code_qualified_by_model(engine: Engine) -> None:
    assert engine.resolve("L5").label == "Communication Libraries"
    assert "Kubernetes" in engine.resolve("L5", model="eight").label
    answer = ask(engine, "What does L5 of the eight-layer map assume?")
    assert "GPU that is allocated is a GPU that works" in answer.answer


def test_compare(engine: Engine) -> None:
    answer = ask(engine, "compare NVLink and InfiniBand")
    assert answer.intent == "compare"
    assert "L8 Node Interconnect" in answer.answer and "L7 Network Fabric" in answer.answer


def test_what_is_different_between_two_things_compares_them(engine: Engine) -> None:
    """ "what's different between X and Y" asks for a comparison, not a definition of "different"
    (read so, a name the graph lacks beside it declined the question)."""
    from stackgraph.graph.answering.intents import COMPARE, detect

    assert detect("what's different between RoCE and InfiniBand?").intent == COMPARE
    answer = ask(engine, "what's different between nv_peer_mem and nvidia_peermem?")
    assert answer.answered and "nvidia-peermem" in answer.answer, answer.answer


def test_a_declined_question_says_each_unknown_name_once(engine: Engine) -> None:
    """A pasted log repeats its words; the names the graph lacks are said once each, the first few."""
    from stackgraph.graph.answering import UNKNOWN_SHOWN, declined

    answer = declined(engine, "zorp INFO", unknown=("zorp", "INFO", "info", "INFO", "zorp"))
    assert answer.answer.startswith("I don't know zorp INFO:"), answer.answer
    many = tuple(f"name{i}" for i in range(UNKNOWN_SHOWN + 3))
    said = declined(engine, "names", unknown=many).answer
    assert f"name{UNKNOWN_SHOWN - 1}:" in said and f"name{UNKNOWN_SHOWN}" not in said


def test_vs_between_two_measurements_compares_no_things() -> None:
    from stackgraph.graph.answering.intents import COMPARE, detect

    assert detect("NVLink vs InfiniBand for tensor parallel?").intent == COMPARE
    assert detect("fp8 vs. fp16 KV cache").intent == COMPARE
    # Two numbers set side by side are a measurement against an expectation, not a comparison.
    assert detect("our all-reduce bus bandwidth is 90 GB/s vs ~190 expected").intent != COMPARE
    assert detect("step time 30 ms vs 120 ms on the second rack").intent != COMPARE
    # Nor is a "vs" saying which of two a problem is: the check asked for tells them apart.
    assert detect("where do i look to confirm it's a driver vs cuda version thing?").intent != COMPARE
    assert detect("NCCL vs RCCL: which one has fewer problems?").intent == COMPARE


def test_what_things_pointed_at_are_called_asks_for_their_names(semantic_engine: Engine) -> None:
    """ "what are those planes called?" after the model's three planes asks for them by name, as
    "what are the planes of the nine-layer model?" does; not for the model's definition again."""
    from stackgraph.graph.answering.intents import LIST, detect
    from stackgraph.graph.conversation import Conversation

    assert detect("what are those planes called?").intent == LIST
    assert detect("what are its layers named").intent == LIST
    conversation = Conversation()
    semantic_engine.ask("the nine-layer model arranges its layers in three planes", conversation)
    names = semantic_engine.ask("what are those planes called?", conversation)
    assert "Workload plane" in names.answer and "Software runtime" in names.answer, names.answer


def test_two_things_benchmarked_against_each_other_are_compared(engine: Engine) -> None:
    from stackgraph.graph.answering.intents import COMPARE, detect

    assert detect("we're benchmarking SGLang against vLLM for a new chat product").intent == COMPARE
    assert detect("weighing RoCE against InfiniBand for the new hall").intent == COMPARE
    # Measured against a target is no comparison of two things.
    assert detect("we benchmark every release before rollout").intent != COMPARE
    answer = engine.ask("we're benchmarking SGLang against vLLM for a new chat product")
    assert "SGLang" in answer.answer and "vLLM" in answer.answer and "L2" in answer.answer, answer.answer


@pytest.mark.parametrize(
    ("question", "asks"),
    [
        ("where does NCCL fit?", True),
        ("so where do I put Milvus?", True),
        ("Milvus is slow. Where does that come from?", True),
        ("which layer owns CUDA OOM?", True),
        # Inside a report "where" is a relative word, not a question about the stack.
        ("the agent enters a loop where it calls the same tool forever", False),
        ("pods restart on the nodes where the driver was upgraded", False),
        # Where the problem lies is what is wrong, not where what the report names sits.
        ("the RAG bot's answers got worse. where's the problem?", False),
        ("NCCL is slow. Where is the bottleneck?", False),
    ],
)
def test_where_asks_for_a_layer_only_as_a_question_word(question: str, asks: bool) -> None:
    from stackgraph.graph.answering.intents import asks_for_layer

    assert asks_for_layer(question) is asks


@pytest.mark.parametrize(
    ("question", "intent"),
    [
        ("tl;dr what's InfiniBand", "define"),
        ("quick q: what is MIG", "define"),
        ("ok so what is NCCL", "define"),
        ("what exactly is a KV cache?", "define"),
        ("remind me what PFC stands for", "define"),
        ("where's the KV cache live", "where_fits"),
        ("where's NCCL fit in?", "where_fits"),
        ("who's responsible for CUDA OOM, the app or the platform?", "owner_of_symptom"),
        ("any tool to test IB bandwidth?", "diagnose"),
        ("whats the diff between nvlink and nvswitch", "compare"),
        ("where dose nvlink fit", "where_fits"),  # a slip in the asking word
    ],
)
def test_chatter_before_the_asking_words_keeps_the_intent(engine: Engine, question: str, intent: str) -> None:
    answer = ask(engine, question)
    assert answer.intent == intent, answer.answer


@pytest.mark.parametrize(
    ("question", "defines"),
    [
        ("what does NCCL do?", True),
        ("what do NVLink and NVSwitch do?", True),
        ("what does RDMA stand for?", True),
        ("what is a DPU?", True),
        # "what do <someone> <verb>" asks for a thing done or used, not what the someone is.
        ("what do people normally use for a one-off bulk embedding job?", False),
        ("what do I need to run RoCE?", False),
        # "what's doing the killing" asks what acts; a gerund naming a thing is still defined.
        ("what's probably doing the killing then", False),
        ("what is chunking in RAG?", True),
        ("what's batching?", True),
    ],
)
def test_what_do_asks_for_a_definition_only_of_what_something_does(question: str, defines: bool) -> None:
    from stackgraph.graph.answering import intents

    assert (intents.detect(question).intent == intents.DEFINE) is defines


def test_the_verb_of_what_does_x_verb_is_no_word_of_its_subject(engine: Engine) -> None:
    """ "What does gang scheduling guarantee?" asks a definition of gang scheduling: "guarantee" is
    the verb it asks with, not a word of an unknown subject. A subject phrase that ends at "do"
    is read whole, so "the kubernetes of cooking" is still something the graph lacks."""
    assert engine.ask("what does gang scheduling actually guarantee for multi-node jobs?").answered
    assert not engine.ask("what does the kubernetes of cooking guarantee?").answered
    assert not engine.ask("what does the kubernetes of cooking do?").answered


def test_what_people_use_for_a_task_is_answered_not_declined_as_an_unknown_name(
    semantic_engine: Engine,
) -> None:
    answer = semantic_engine.ask(
        "what do people normally use for a one-off bulk embedding job over millions of documents?"
    )
    assert answer.answered and "Spark" in answer.answer, answer.answer


@pytest.mark.parametrize(
    ("question", "compares"),
    [
        ("how does NCCL compare to RCCL?", True),
        ("compare InfiniBand with RoCE", True),
        ("can you compare MIG and time-slicing", True),
        # "compare to" after a measurement reports it: a problem, not two things set side by side.
        ("distributed training speed slow down compare to one node", False),
        ("throughput is low compare with the single GPU run", False),
        # A "vs" inside parentheses is an aside on what is asked, not two things set side by side.
        ("is there a way to see which transport NCCL picked (IB vs sockets)?", False),
        ("NCCL vs RCCL (for AMD)?", True),
        ("how is Kueue different from Volcano?", True),
        ("how are RoCE and InfiniBand different than each other?", True),
    ],
)
def test_compare_asks_only_as_a_request(question: str, compares: bool) -> None:
    from stackgraph.graph.answering import intents

    assert (intents.detect(question).intent == intents.COMPARE) is compares


@pytest.mark.parametrize(
    ("question", "asks"),
    [
        ("what does L5 assume about the layer below?", True),
        ("what's the assumption baked into L2 there?", True),
        ("what does the orchestration layer take for granted about the GPUs?", True),
        # The asker's own supposition asks nothing about a layer.
        ("let's assume I followed the time-slicing docs. how do I pick the T4 over the A100?", False),
        ("we are assuming that UCX picks the nearest NIC, is that right?", False),
        ("I assumed the network was fine because ibstat says Active", False),
    ],
)
def test_an_assumption_is_asked_of_a_layer_not_made_by_the_asker(question: str, asks: bool) -> None:
    from stackgraph.graph.answering import intents

    assert intents.asks_for_assumption(question) is asks
    assert (intents.detect(question).intent == intents.ASSUME) is asks


@pytest.mark.parametrize(
    ("question", "lists"),
    [
        ("list the serving engines the stack mentions", True),
        ("can you list everything in L7?", True),
        ("is vLLM in the layer list?", True),
        # Another list a report quotes by its name is no request to enumerate.
        ("the pods get GPUs from a different NUMA node than the core list from the cpu manager", False),
        ("openstack compute service list shows every node enabled but nothing schedules", False),
    ],
)
def test_list_asks_only_as_a_request(question: str, lists: bool) -> None:
    from stackgraph.graph.answering import intents

    assert (intents.detect(question).intent == intents.LIST) is lists


@pytest.mark.parametrize(
    ("question", "advises"),
    [
        ("should we replicate the live VRAM state to the standby rack?", True),
        ("what hard limits should an agent loop have", True),
        (
            "Expected: the upload should finish. Is it wiser to pre-stage weights on NVMe, or should we pull them?",
            True,
        ),
        # A report's expectation asks for no practice: "it should not time out. Actual: 504s".
        ("Expected behaviour: a long generation should not time out. Actual: a 504 after 60 s.", False),
        ("both runs should give the same answers. with the new version retrieval got worse.", False),
    ],
)
def test_should_asks_for_a_practice_only_in_an_asking_sentence(question: str, advises: bool) -> None:
    """ "should" asks for advice in a question ("should we ...?", "what limits should it have");
    in a report's statement of what it expected, it says what went wrong."""
    from stackgraph.graph.answering import intents

    assert (intents.detect(question).intent == intents.PRACTICE) is advises


@pytest.mark.parametrize(
    ("question", "layers"),
    [
        (
            "nine-layer model vs operational map: what is L5 in each?",
            ("Kubernetes & Containers", "Communication Libraries"),
        ),
        (
            "is L3 the same thing in the nine-layer model and the eight-layer map, or different? compare them",
            ("Cloud & OpenStack", "Parallelism Strategy"),
        ),
    ],
)
def test_a_bare_layer_code_asked_of_both_models_is_that_layer_in_each(
    engine: Engine, question: str, layers: tuple[str, ...]
) -> None:
    """A code with no model beside it, in a question naming both models, is the code in each."""
    answer = engine.ask(question)
    assert answer.intent == "compare"
    assert all(layer in answer.answer for layer in layers), answer.answer


def test_the_layers_of_one_k8s_role_are_listed_from_that_column(engine: Engine) -> None:
    """ "which layers run on the host?" asks for the layers whose K8S-ROLE is host, each a fact."""
    from stackgraph.graph.answering.evidence import fetch
    from stackgraph.graph.store import SG

    for question, value in (
        ("which layers run on the host?", "host"),
        ("what layers run inside containers", "in-container"),
    ):
        answer = engine.ask(question)
        expected = {
            r.iri: r.label for r in engine.catalog.layers() if fetch(engine, r.iri).text(SG.runsIn) == value
        }
        assert expected and all(label in answer.answer for label in expected.values()), answer.answer
        runs = {f.subject for f in answer.facts if f.predicate == str(SG.runsIn) and f.object == value}
        assert runs == set(expected), answer.facts


def test_ordinary_words_inside_a_code_identifier_name_nothing(engine: Engine) -> None:
    """A tool or function name in a report ("check_resources") is its own name: its ordinary
    words do not name the graph's entities; a name of the graph inside one still does."""
    surfaces = [
        m.surface for m in engine.linker.mentions("the agent calls `list_integration_resources` again")
    ]
    assert surfaces == ["agent"]
    names = [engine.catalog.display(m.iri) for m in engine.linker.mentions("we grep the nccl_debug output")]
    assert names == ["NCCL"]


def test_a_file_name_names_the_kind_its_extension_names(engine: Engine) -> None:
    """ "pytorch_model.bin" is a .bin file (Pickle), "model-00001.safetensors" a safetensors one:
    the extension says what the file is, the words of its own name do not."""
    for text, expected in (
        ("the repo only ships a pytorch_model.bin", ["Pickle"]),
        ("we convert weights_final.pkl first", ["Pickle"]),
        ("it loads model-00001.safetensors fine", ["safetensors"]),
    ):
        names = [engine.catalog.label(m.iri) for m in engine.linker.mentions(text)]
        assert names == expected, (text, names)
    # An extension the graph has no name for leaves the file to its parts, as before.
    names = [engine.catalog.label(m.iri) for m in engine.linker.mentions("edit nccl_settings.yaml")]
    assert names == ["NCCL"], names


def test_a_definition_says_what_the_graph_gives_as_its_alternative(engine: Engine) -> None:
    """safetensors is stated as the alternative to Pickle; asked what Pickle is, the answer says
    so from Pickle's end (what to use instead), as a fact of the graph."""
    answer = engine.ask("what is a pickle file?")
    assert answer.answered and "Pickle has an alternative in safetensors" in answer.answer, answer.answer
    assert any(f.predicate.endswith("alternativeTo") and f.object.endswith("pickle") for f in answer.facts)


def test_crosswalk(engine: Engine) -> None:
    answer = ask(
        engine,
        "Which layers of the nine-layer model correspond to the Kubernetes layer of the operational map?",
    )
    assert answer.intent == "crosswalk"
    assert "CP Control Plane" in answer.answer


def test_related_returns_a_path(engine: Engine) -> None:
    answer = ask(engine, "How is GPUDirect Storage related to NVMe-oF?")
    assert answer.intent == "related"
    assert answer.path
    assert answer.path[0].source.iri != answer.path[-1].target.iri


def test_workload_stress(engine: Engine) -> None:
    answer = ask(engine, "Which layers does pre-training stress?")
    assert answer.intent == "workload_stress"
    assert "critical" in answer.answer


def test_which_workload_stresses_a_layer_reads_the_stack_matrix_by_its_column(engine: Engine) -> None:
    """Asked for the workloads that stress a layer, the answer lists them by level, highest first,
    each level's stress a fact from the stack matrix: "workload" names none of them."""
    answer = ask(engine, "which workload stresses the network fabric the most?")
    assert answer.answer.startswith("The workloads that stress L7 Network Fabric"), answer.answer
    assert answer.answer.index("critical:") < answer.answer.index("high:")
    assert "Pre-training" in answer.answer.split("high:")[0]
    assert sum(f.predicate.endswith("#stress") for f in answer.facts) >= 4
    # A workload it names is still read by its row.
    assert ask(engine, "Which layers does pre-training stress?").answer.startswith("Pre-training stresses")
    # A layer named by a word of its name ("storage") is the column asked for, too.
    storage = ask(engine, "which workload stresses storage the most?")
    assert storage.answer.startswith("The workloads that stress S Storage Data Path"), storage.answer


@pytest.mark.parametrize(
    ("text", "defines"),
    [
        ("define gang scheduling", True),
        ("can you define the control plane?", True),
        ("how would you define L4?", True),
        ("we will define these in config.yaml or the proxy UI", False),
        ("the guardrails we define per route block prompt injection", False),
    ],
)
def test_define_asks_for_a_definition_only_as_a_request(text: str, defines: bool) -> None:
    assert (intents.detect(text).intent == intents.DEFINE) is defines


def test_a_workload_and_a_layer_named_together_are_answered_by_their_cell(engine: Engine) -> None:
    """ "How much does RAG stress the network fabric?" asks for one cell of the stack matrix: the
    answer says that cell first, as a stress fact, then the row it sits in; a definition of RAG
    that repeats more of the question's words ("how much ... matters") does not replace it."""
    answer = ask(engine, "how much does RAG stress the network fabric layer?")
    assert answer.intent == "workload_stress"
    assert answer.answer.startswith("RAG stresses L7 Network Fabric at low."), answer.answer
    assert any(f.predicate.endswith("#stress") and f.object.endswith("nine-L7") for f in answer.facts)


def test_how_the_matrix_rows_were_read_is_never_said_as_an_answer(engine: Engine) -> None:
    """The arithmetic behind each reconstructed row ("Row: 32 squares, no dots ...") is kept for
    audit (sg:matrixReading), not said: a report that shares a number with it gets none of it."""
    answer = ask(engine, "scaled pretraining from 16 to 32 nodes, step time got worse not better")
    assert "squares" not in answer.answer, answer.answer
    assert "squares" not in ask(engine, "Which layers does pre-training stress?").answer


def test_the_same_layer_code_in_both_models_is_compared_whatever_names_the_models(engine: Engine) -> None:
    """ "L6 in the nine-layer model vs L6 in the eight-layer ops map" compares two layers; the
    models are named to say whose layer each code is, so an answer about both layers says all
    the question names ("ops map" included) and no passage replaces it."""
    answer = ask(engine, "L6 in the nine-layer model vs L6 in the eight-layer ops map: same layer?")
    assert answer.intent == "compare"
    assert "Transport" in answer.answer and "AI Engineering & LLMOps" in answer.answer, answer.answer


def test_a_placement_asked_in_the_other_model_goes_across_the_crosswalk(engine: Engine) -> None:
    """FP8 is placed in the nine-layer model only; asked where it falls in the operational map, the
    answer follows the crosswalk (nine-layer L9 lies inside ops L2), said once and marked as
    inferred. Asked with no model, nothing is added."""
    answer = ask(engine, "which layer of the eight-layer ops map cares about FP8 and FP4 support?")
    assert "L9 Accelerator & Memory lies inside L2 GPUs & Networking" in answer.answer, answer.answer
    assert answer.answer.count("By the crosswalk") == 1
    assert any(f.predicate.endswith("#broadMatch") for f in answer.facts)
    assert "crosswalk" not in ask(engine, "where does FP8 fit?").answer


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("how does L1 of the ops map fail?", "L1 Compute & Storage fails by"),
        ("how does ops L1 fail?", "L1 Compute & Storage fails by"),
        ("what goes wrong at L5 of the ops map?", "L5 Kubernetes & Containers (eight-layer operational map)"),
    ],
)
def test_how_a_layer_of_a_named_model_fails(engine: Engine, question: str, expected: str) -> None:
    """The words naming the model ("ops map") only say whose L1 it is: matched against the
    statements they find every crosswalk line ("ops L7 ..."), not how L1 fails."""
    answer = ask(engine, question)
    assert answer.answer.startswith(expected), answer.answer


def test_triage_walk(engine: Engine) -> None:
    start = engine.triage("workload will not start")
    assert not start.done and start.question and len(start.options) == 3
    done = engine.triage("workload will not start", [start.options[0]])
    assert done.done
    assert any("Kubernetes" in layer.label for layer in done.layers)


@pytest.mark.parametrize(
    "question",
    [
        "what's the order to look at things when latency goes up?",
        "what's the order to check stuff when our p99 latency increased?",
    ],
)
def test_the_order_to_check_things_is_the_triage_tree_of_the_symptom_described(
    semantic_engine: Engine, question: str
) -> None:
    """Asked in what order to check, the answer is the tree of the symptom the words describe,
    found from its first step when that is nearest, with its branches: not a statement on
    triage in general."""
    from stackgraph.graph.answering import intents

    assert intents.detect(question).intent == intents.TRIAGE
    answer = semantic_engine.ask(question)
    assert answer.answer.startswith("Triage for Latency increased:"), answer.answer
    assert "retrieval →" in answer.answer


def test_a_decision_tree_asked_between_suspects_is_triage_not_a_comparison() -> None:
    """ "Decision tree ... storage vs fabric vs scheduling" names the branches of a tree it asks
    for; "vs" there sets no two things side by side."""
    from stackgraph.graph.answering import intents

    question = "gpus idle, jobs slow. give me the decision tree: storage vs network vs the scheduler?"
    assert intents.detect(question).intent == intents.TRIAGE
    assert intents.detect("storage vs network: which matters more for training?").intent == intents.COMPARE


def test_the_order_asked_from_a_later_step_of_a_tree_is_the_whole_order(semantic_engine: Engine) -> None:
    """The RAG tree's later questions hang off the branch before them (``sg:nextStep``): asked
    for the order to debug a bad RAG answer, whose words are nearest its last branch, the answer
    walks up to the whole order, not that one branch's owner."""
    answer = semantic_engine.ask("what's the order to debug a bad answer from our RAG app?")
    assert not answer.answer.startswith("Bad RAG answer: present in context"), answer.answer
    assert "retrieved at all" in answer.answer, answer.answer


def test_a_finding_after_a_triage_tree_is_its_branch(semantic_engine: Engine) -> None:
    """ "And if ...?" after a tree asks which branch the finding lands on, not for the tree again."""
    from stackgraph.graph.conversation import Conversation

    conversation = Conversation()
    tree = semantic_engine.ask(
        "what's the order to check things when our RAG app gives a bad answer?", conversation
    )
    assert tree.intent == "triage", tree.answer
    branch = semantic_engine.ask(
        "and if the right doc was in the context but the model ignored it?", conversation
    )
    assert "present in context and still ignored" in branch.answer and "Triage for" not in branch.answer, (
        branch.answer
    )


def test_declines_outside_the_graph(engine: Engine) -> None:
    answer = engine.ask("what is the capital of France?")
    assert not answer.answered
    assert answer.suggestions
    assert "don't know" in answer.answer


def test_same_question_same_answer(engine: Engine) -> None:
    first = engine.ask("where does NCCL fit?").to_dict()
    assert engine.ask("where does NCCL fit?").to_dict() == first


def test_resolve_unknown_gives_closest(engine: Engine) -> None:
    with pytest.raises(UnknownEntity) as raised:
        engine.resolve("Golden Gate Bridge")
    assert raised.value.suggestions
    assert engine.resolve("NVLnik").label == "NVLink"  # a close misspelling still resolves


def test_fuzzy_spelling(engine: Engine) -> None:
    assert "L5" in ask(engine, "where does NCLL fit").answer


def test_a_run_of_words_ending_in_a_stopword_is_no_misspelling_of_a_name(engine: Engine) -> None:
    # "accelerate our" is 88% alike to "accelerator" once the space is gone, but "our" is no part
    # of a name: a run of words slips into a name only with words of its own.
    mentions = engine.linker.mentions("vllm really accelerate our deploy work")
    assert not any(m.how == "fuzzy" and "our" in m.surface.split() for m in mentions), mentions
    assert any(m.how == "fuzzy" for m in engine.linker.mentions("what is kv cahce"))


def test_the_plural_of_an_english_word_is_no_misspelling_of_a_name(engine: Engine) -> None:
    # "docs" is one letter from "doca" (MOFED/DOCA), but it is the plural of "doc".
    mentions = engine.linker.mentions("I have read all the k8s docs twice")
    assert not any(m.how == "fuzzy" and m.surface == "docs" for m in mentions), mentions


def test_other_words_spelt_right_are_no_misspelling_of_a_name(engine: Engine) -> None:
    """ "control panel" is a panel, each word in the dictionary and one of them two letters from
    "plane": no slip for the control plane. Inflections and spellings of a name's own words still
    name it ("job stalls", "low utilization")."""

    def fuzzy(text: str) -> set[str]:
        return {engine.catalog.display(m.iri) for m in engine.linker.mentions(text) if m.how == "fuzzy"}

    assert not any("Control Plane" in name for name in fuzzy("i changed a setting in the control panel"))
    assert fuzzy("our job stalls every night")
    assert fuzzy("we see low utilization on every node")


def test_a_near_miss_of_a_name_with_digits_is_not_taken_for_it(engine: Engine) -> None:
    """Names with digits are identifiers (H100 and H200, gpu-000005 and gpu-000006): one digit
    off names another thing, so it is no misspelling, while a letter typo still is (NCLL)."""
    import re

    linker = engine.linker
    form = next(f for f in sorted(linker.forms) if re.fullmatch(r"[a-z]+\d+", f) and len(f) >= 4)
    digit = form[-1]
    other = form[:-1] + ("1" if digit != "1" else "2")
    assert other not in linker.forms
    mentions = linker.mentions(f"where does {other} fit")
    assert not any(m.how == "fuzzy" and m.surface == other for m in mentions)
    assert any(m.how == "fuzzy" for m in linker.mentions("where does NCLL fit"))


def test_a_word_that_differs_from_a_name_in_its_first_letter_is_no_misspelling_of_it(
    engine: Engine,
) -> None:
    """A slip of the keys keeps the first letter: "nccll" is NCCL with a letter too many, while
    "xnccl" (a letter before it) and "mvlink" (another first letter) are other words, one edit
    away as they are."""
    linker = engine.linker

    def fuzzy(text: str) -> set[str]:
        return {engine.catalog.display(m.iri) for m in linker.mentions(text) if m.how == "fuzzy"}

    assert "NCCL" in fuzzy("where does nccll fit")  # a letter too many at the end
    assert "NCCL" not in fuzzy("where does xnccl fit")  # a letter before the first is another word
    assert "NVLink" not in fuzzy("where does mvlink fit")


def test_a_changed_letter_in_a_short_word_is_a_typo_only_beside_the_key_meant(engine: Engine) -> None:
    """One letter in four is a big share of a short word: "nvml" (NVIDIA's management library) is
    no NVMe and "gpt2" no GPTQ, while a neighbouring key or a doubled letter moved is still a slip
    ("nvne", "NCLL"). Longer words keep every one-edit spelling ("kernals")."""
    from stackgraph.graph.linking import _slip_of_the_keys

    assert _slip_of_the_keys("ncll", "nccl")  # the doubled letter moved
    assert _slip_of_the_keys("nvne", "nvme")  # n is beside m
    assert not _slip_of_the_keys("nvml", "nvme")
    assert not _slip_of_the_keys("gpt2", "gptq")  # a digit is a version, not a slip
    assert _slip_of_the_keys("kernals", "kernels")  # long enough for any one edit
    assert _slip_of_the_keys("nvmee", "nvme")  # a letter added is always a slip

    def fuzzy(text: str) -> set[str]:
        return {m.surface for m in engine.linker.mentions(text) if m.how == "fuzzy"}

    assert "nvml" not in fuzzy("nvml reports the wrong clocks on one node")
    assert "ncll" in fuzzy("where does ncll fit")


def test_a_unit_after_a_slash_has_no_singular(engine: Engine) -> None:
    """ "tokens/s" is a rate, not the plural of "tokens/": no such form, so the word "tokens" in
    a question is no close spelling of tokens per second."""
    from stackgraph.graph.linking import _plural_forms

    assert _plural_forms("tokens/s") == set()
    assert _plural_forms("gpus") == {"gpu"}
    assert "tokens/" not in engine.linker.forms
    mentions = engine.linker.mentions("why does the model stop after 512 tokens")
    assert all(m.surface != "tokens" for m in mentions)


def test_a_contraction_is_no_word_of_the_question(engine: Engine) -> None:
    """ "isn't" splits into "isn" and "t": neither is what the question is about, so it must not
    match a statement that happens to say "isn't" ("replicating live GPU state isn't practical")."""
    from stackgraph.graph.lexical import terms

    assert terms("why isn't it ready? we don't know, we've tried") == ["readi", "know", "tri"]
    answer = ask(engine, "why isn't Kubernetes one of the nine layers?")
    assert answer.answer.startswith("Orchestration is a control plane, not a layer"), answer.answer


def test_a_name_written_in_capitals_is_an_acronym_not_a_common_word(engine: Engine) -> None:
    from stackgraph.graph.answering import link
    from stackgraph.graph.answering.question import Question

    shouted = link(engine, Question.parse(engine, "any tool to test IB bandwidth?"))
    assert shouted and shouted[0].iri.endswith("/infiniband") and shouted[0].score >= 0.8
    quiet = link(engine, Question.parse(engine, "any tool to test ib bandwidth?"))
    assert not quiet or quiet[0].score < 0.8


def test_a_long_report_asking_where_to_look_is_told_the_likely_cause_too(engine: Engine) -> None:
    """A report of a named symptom at length ("... where do I look?") is answered as a report (its
    owner, likely cause and where to look), not with the checks alone, which leave the 2am reader
    with commands but no idea what they look for; a short "how do I check X?" keeps its checks."""
    from stackgraph.graph.answering import _refine_intent, link
    from stackgraph.graph.answering.context import Context
    from stackgraph.graph.answering.question import Question

    def refined(question: str) -> str | None:
        parsed = Question.parse(engine, question)
        ctx = Context(engine, question, parsed.intent.intent, 1.0, link(engine, parsed), None, parsed=parsed)
        assert ctx.candidates and ctx.candidates[0].iri in engine.problems
        return _refine_intent(ctx, parsed.intent.intent)

    long = "the Pending pods of our big training job never start, the app logs are empty, quota looks fine, where do I look?"
    assert refined(long) == "owner_of_symptom"
    assert refined("how do I check a Pending pod?") == "diagnose"


@pytest.mark.parametrize(
    ("question", "elliptical"),
    [
        ("and batch inference?", True),
        ("what about AMD?", True),
        ("and what about the eight-layer map?", True),
        ("also for ROCm?", True),
        # Its own asking word: its own shape, not the last question's.
        ("and who drives that partitioning on k8s", False),
        ("and why does that matter?", False),
        ("which layer owns it?", False),
    ],
)
def test_a_follow_up_reuses_the_last_questions_shape_only_when_it_asks_nothing_itself(
    question: str, elliptical: bool
) -> None:
    from stackgraph.graph.answering import intents

    assert intents.is_elliptical(question) is elliptical


@pytest.mark.parametrize(
    "question",
    [
        "VMs stay in BUILD and get no host: ```$ openstack hypervisor list (empty)``` what now?",
        "our jobs hang and `srun --list-nodes` shows half the nodes drained",
    ],
)
def test_pasted_code_cues_no_intent(engine: Engine, question: str) -> None:
    # The "list" of a pasted command asks for no listing: the report around it is the question.
    from stackgraph.graph.answering import intents

    assert Question.parse(engine, question).intent.intent != intents.LIST
    assert Question.parse(engine, "list the layers of the nine-layer model").intent.intent == intents.LIST
    assert (
        Question.parse(engine, "what does `openstack volume service list` show?").intent.intent
        != intents.LIST
    )


@pytest.mark.parametrize(
    ("question", "intent"),
    [
        # An issue template's heading asks for no definition: the report under it is the question.
        ("[Bug]: pods stuck Pending. ### Describe the bug: after the upgrade no pod schedules", None),
        ("describe the issue: NCCL hangs on 16 nodes", None),
        ("describe what NVLink does", "define"),
        ("explain the KV cache", "define"),
        # A pasted command's verb asks nothing: the report around it is the question.
        ("pod still pending. [root@node k8s]# kubectl describe pod tf-notebook Name: tf-notebook", None),
        ("I ran kubectl describe node and the GPU count is 0", None),
        ("ok, can you explain what NVLink is?", "define"),
        ("hi, explain the KV cache to me", "define"),
        ("NCCL hangs on 16 nodes. Please explain PFC.", "define"),
        # A quoted question inside a report is what the user asked their bot, not us.
        ('I uploaded a PDF and asked the bot "What is Dynamo?" and it says it does not know', None),
        ('what is "NVLink"?', "define"),
        # A feature request template's other headings ask no definition either.
        (
            "[FEATURE] faster loads. Is your feature request related to a problem? Please describe: it is slow",
            None,
        ),
        (
            "Describe the solution you'd like: use NVMe-oF. Describe alternatives you've considered: none",
            None,
        ),
    ],
)
def test_an_issue_templates_heading_is_no_definition_request(
    engine: Engine, question: str, intent: str | None
) -> None:
    from stackgraph.graph.answering import intents

    got = Question.parse(engine, question).intent.intent
    if intent is None:
        assert got != intents.DEFINE
    else:
        assert got == intent


@pytest.mark.parametrize(
    ("question", "compares"),
    [
        ("NVLink vs. PCIe for tensor parallel?", True),
        ("RoCE versus InfiniBand", True),
        # "vs" between numbers sets measurements or error codes side by side, not two things,
        # with or without its dot: "Check failed: error == cudaSuccess (35 vs. 0)".
        ("Check failed: error == cudaSuccess (35 vs. 0) driver version is insufficient", False),
        ("all-reduce reaches 90 GB/s vs 190 expected", False),
    ],
)
def test_vs_compares_things_not_numbers(question: str, compares: bool) -> None:
    from stackgraph.graph.answering import intents

    assert (intents.detect(question).intent == intents.COMPARE) is compares


#: Every layer with a crosswalk edge to a layer of the other model, with both models' names.
CROSSWALKED = """
PREFIX sg: <https://w3id.org/stackgraph/ns#>
PREFIX skos: <http://www.w3.org/2004/02/skos/core#>
PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>
SELECT DISTINCT ?code ?model ?other WHERE {
  ?layer sg:code ?code ; sg:inModel/rdfs:label ?model ;
         skos:broadMatch|skos:closeMatch|skos:exactMatch|skos:narrowMatch|skos:relatedMatch ?match .
  ?match sg:inModel/rdfs:label ?other .
  FILTER(STRSTARTS(?code, "L"))
}
"""


def test_a_layer_asked_of_in_the_other_model_is_a_crosswalk(engine: Engine) -> None:
    """ "which layer of the eight-layer map does nine-layer L9 correspond to?", and the same asked
    as a follow-up ("is it the same number in the 8-layer map?"): what it corresponds to there."""
    rows = list(engine.graph.query(CROSSWALKED))
    assert rows
    for row in rows:
        answer = ask(engine, f"which layer of the {row.other} does {row.model} {row.code} correspond to?")
        assert answer.intent == "crosswalk" and "corresponds to" in answer.answer, answer.answer
    conversation = Conversation()
    engine.ask("what is L9 in the nine-layer model?", conversation)
    follow = engine.ask("is it the same number in the 8-layer ops map?", conversation)
    assert "corresponds to L2 GPUs & Networking" in follow.answer, follow.answer


def test_a_layers_assumption_asked_of_a_tool_is_that_of_the_layer_it_checks(semantic_engine: Engine) -> None:
    """ "what does its layer assume?" about nvidia-smi, in the eight-layer map: the layer that
    owns what it checks (L2), not whichever layer's words the question happens to share."""
    conversation = Conversation()
    semantic_engine.ask("what is nvidia-smi for?", conversation)
    answer = semantic_engine.ask("and in the 8-layer map, what does its layer assume?", conversation)
    assert "L2 GPUs & Networking (eight-layer operational map): L2 assumes" in answer.answer, answer.answer


@pytest.mark.parametrize(
    ("question", "role"),
    [
        ("what K8S-ROLE does L5 have?", "in-container"),
        ("what's the k8s role of L7 in the stack map?", "host"),
    ],
)
def test_the_k8s_role_column_named_outright_is_the_layers_value(
    engine: Engine, question: str, role: str
) -> None:
    """ "K8S-ROLE" is a column of the stack map, not Kubernetes: asked of a layer, it is where that
    layer's code runs."""
    answer = ask(engine, question)
    assert f"(K8S-ROLE {role})" in answer.answer and not answer.answer.startswith("Kubernetes"), answer.answer


@pytest.mark.parametrize(
    "question",
    [
        "in the eight-layer map, what does the kubernetes layer take for granted about the GPUs it schedules?",
        "8-layer map: what does L2 presume about the fabric between nodes?",
    ],
)
def test_taking_for_granted_asks_for_a_layers_assumption(engine: Engine, question: str) -> None:
    """ "take for granted" and "presume" ask what a layer assumes of the one below; its failure mode
    matching more of the words is another property."""
    answer = ask(engine, question)
    assert " assumes " in answer.answer and " fails by" not in answer.answer.split(".")[0], answer.answer


@pytest.mark.parametrize(
    ("text", "define"),
    [
        ("what is NCCL used for?", True),
        ("give me the definition of MIG", True),
        # A report's noun phrases ask no definition.
        ("the MCP server exposes every tool regardless of the service definition using @restrict", False),
        (
            "allocate GPU memory as a function of max_model_len, excluding the memory used for model weights",
            False,
        ),
    ],
)
def test_definition_words_in_a_report_ask_no_definition(text: str, define: bool) -> None:
    from stackgraph.graph.answering.intents import DEFINE, detect

    assert (detect(text).intent == DEFINE) is define


def test_the_asking_sentence_of_a_report_that_trails_off_is_its_last(engine: Engine) -> None:
    """A report ending in "..." or "?!" still has a last sentence: the names written earlier in it
    ("Current Behavior", a customer's department) are no names it asks about."""
    from stackgraph.graph.answering.question import Question

    report = (
        "### Current Behavior The MCP server exposes all tools to every user. ### Expected Behavior "
        "Sales and Procurement users should see only their own tools. What is the right pattern here ..."
    )
    assert Question.parse(engine, report).unknown_names == ()


def test_an_issue_titles_tags_do_not_hide_what_it_asks() -> None:
    """ "[Question]: Why does ...?" asks why, as the same title without its tag does."""
    from stackgraph.graph.answering.intents import DEFINE, WHY, detect

    assert detect("[Question]: Why does retrieval take 90% of the time?").intent == WHY
    assert detect("[Bug][vLLM] what is gpu_memory_utilization?").intent == DEFINE


def test_asking_which_branches_asks_for_the_triage_tree(semantic_engine: Engine) -> None:
    """ "what branches does it walk through?" after a workload that will not start asks for the
    tree's branches (Pending, CrashLoopBackOff, NoValidHost), not for the symptom's causes."""
    from stackgraph.graph.answering.intents import TRIAGE, detect
    from stackgraph.graph.conversation import Conversation

    assert detect("what branches does it walk through for that?").intent == TRIAGE
    conversation = Conversation()
    semantic_engine.ask("our new inference workload won't start, nothing in the app logs yet", conversation)
    tree = semantic_engine.ask("which branches does the triage go through for that?", conversation)
    assert "Pending" in tree.answer and "CrashLoopBackOff" in tree.answer, tree.answer


def test_a_report_asking_where_the_problem_is_gets_the_problem_not_a_placement(engine: Engine) -> None:
    """ "where's the problem?" after a report that names RAG asks what is wrong with it: the
    symptom the report describes, not where RAG sits."""
    answer = ask(
        engine,
        "no deploys this week but the RAG bot's answers have gotten noticeably worse. where's the problem?",
    )
    assert answer.intent != "where_fits" and not answer.answer.startswith("RAG fits"), answer.answer
    assert "retrieved" in answer.answer or "retrieval" in answer.answer, answer.answer


def test_a_request_for_an_analogy_asks_how_to_tell_the_named_thing() -> None:
    """ "what's the analogy?" asks how PagedAttention should be explained, not about a thing
    called "analogy" the graph lacks."""
    from stackgraph.graph.lexical import relational_words

    assert {"analogy", "english"} <= relational_words()


def test_an_analogy_asked_of_a_named_thing_is_answered_by_it(engine: Engine) -> None:
    answer = ask(engine, "PagedAttention in plain english? what's the analogy?")
    assert answer.answered and "virtual memory" in answer.answer, answer.answer


@pytest.mark.parametrize(
    "question",
    [
        "Is there a top-like terminal dashboard to watch per-GPU memory use and temps?",
        "any utility for monitoring the fabric counters?",
    ],
)
def test_a_tool_asked_for_to_watch_something_asks_for_a_check(question: str) -> None:
    """A dashboard or utility asked for to watch something is a check: the tools that read it."""
    assert intents.detect(question).intent == intents.DIAGNOSE


def test_what_a_thing_pointed_at_is_for_asks_for_its_definition(semantic_engine: Engine) -> None:
    """ "what's it actually for" asks what the thing pointed at is for, in whichever sentence it
    is asked: after "is the nine-layer model just another box diagram?" it is the model."""
    assert intents.detect("is it just another box diagram? what's it actually for").intent == intents.DEFINE
    answer = semantic_engine.ask("honestly is the nine-layer model just another diagram? what is it for?")
    assert answer.answered and answer.answer.startswith("Nine-layer model"), answer.answer


def test_the_diagram_a_question_asks_about_is_how_the_source_draws_it(semantic_engine: Engine) -> None:
    """ "which plugins does the diagram name?" asks what the source's drawing shows, not about a
    thing called "diagram" the graph lacks."""
    conversation = Conversation()
    semantic_engine.ask(
        "in the control-plane diagram of the nine-layer model, the kubelet passes pod networking to the CNI",
        conversation,
    )
    answer = semantic_engine.ask("which plugins does the diagram actually show there?", conversation)
    assert answer.answered and "CNI" in answer.answer, answer.answer


def test_simulations_are_the_hpc_workload(semantic_engine: Engine) -> None:
    """Simulations are what HPC runs: placed as the HPC workload, in L1."""
    answer = semantic_engine.ask("which layer do our weather simulations belong to?")
    assert "HPC" in answer.answer and "L1 Application" in answer.answer, answer.answer


@pytest.mark.parametrize("turn", ["what would we give up for it?", "any downsides?", "so any drawbacks?"])
def test_what_a_thing_costs_is_asked_of_its_definition(semantic_engine: Engine, turn: str) -> None:
    """ "what would we give up for it?" after a setting asks what it costs, which its definition
    says ("trades memory for precision")."""
    assert intents.detect(turn).intent == intents.DEFINE
    conversation = Conversation()
    semantic_engine.ask("thinking about setting kv_cache_dtype to fp8 on our vLLM servers", conversation)
    answer = semantic_engine.ask(turn, conversation)
    assert "precision" in answer.answer and answer.context == "kv_cache_dtype", answer.answer


def test_a_measurement_that_went_from_one_value_to_another_reports_a_problem(semantic_engine: Engine) -> None:
    """ "first-token latency went from ~400ms to 3s" reports a change, as "went up" does: the
    problem slow first tokens, not how to watch TTFT."""
    assert intents.looks_like_symptom("p95 went from 200ms to 2s overnight")
    answer = semantic_engine.ask("TTFT went from 0.5s to 6s after the upgrade")
    assert answer.answer.startswith("Slow first-token delivery"), answer.answer


def test_the_first_thing_to_check_asks_where_to_look(semantic_engine: Engine) -> None:
    """ "whats the first thing to check then" after a bad RAG answer asks where to look (was the
    right document retrieved?), not who owns the problem."""
    assert intents.detect("ok whats the first thing to check then").intent == intents.DIAGNOSE
    conversation = Conversation()
    semantic_engine.ask(
        "our RAG bot gave a customer a wrong answer, should we move to a larger model?", conversation
    )
    answer = semantic_engine.ask("ok whats the first thing to check then", conversation)
    assert answer.intent == intents.DIAGNOSE and "retrieved" in answer.answer, answer.answer


def test_vs_setting_two_states_side_by_side_compares_no_things(semantic_engine: Engine) -> None:
    """ "what's running in prod vs what's in the repo" sets two states side by side, the drift a
    hand-applied hotfix leaves: GitOps, not a comparison of kubectl and inference."""
    question = (
        "someone hand-patched the inference deployment with kubectl apply during the outage, now nobody"
        " knows what's running in prod vs what's in the repo"
    )
    assert intents.detect(question).intent != intents.COMPARE
    assert intents.detect("vLLM vs TGI for a small team?").intent == intents.COMPARE
    answer = semantic_engine.ask(question)
    assert "Git-driven" in answer.answer, answer.answer


def test_the_usual_suspects_are_the_likely_causes() -> None:
    """ "what are the usual suspects then?" asks for causes; "what are the" alone reads as a listing."""
    from stackgraph.graph.answering.intents import OWNER, detect

    assert detect("what are the usual suspects then").intent == OWNER
    assert detect("so what's the likely culprit?").intent == OWNER
    assert detect("what are the layers of the eight-layer map?").intent != OWNER


def test_asking_whether_one_is_better_than_the_other_compares_them(engine: Engine) -> None:
    """ "Is X more efficient than Y?" weighs two things against each other; a report saying its
    job "is slower than" before asks nothing of the kind."""
    from stackgraph.graph.answering.intents import COMPARE, detect

    for question in (
        "Is RCCL faster than NCCL on the same nodes?",
        "would RoCE v2 be cheaper than InfiniBand for a 64 GPU cluster?",
        "ok. is tensor parallelism more efficient than pipeline parallelism for serving?",
    ):
        assert detect(question).intent == COMPARE, question
    assert detect("our two node job is slower than one node, why?").intent != COMPARE
    answer = engine.ask("Is tensor parallelism more efficient than pipeline parallelism for serving?")
    assert answer.intent == COMPARE and "intra-node" in answer.answer


def test_an_error_the_seeds_never_name_is_answered_as_our_reading(engine: Engine) -> None:
    """CUDA's "system not yet initialized" is no seed's words: the graph reads it as the Fabric
    Manager the glossary installs with the driver, and every fact of that reading says it is
    inferred, so the answer tells the user so rather than passing it off as the seed's."""
    answer = engine.ask("cuda runtime error (802): system not yet initialized on our 8x H100 node")
    assert answer.answered and "Fabric Manager" in answer.answer
    assert "Inferred, not stated in the sources" in answer.answer
    reading = [f for f in answer.facts if "fabric-manager" in f.object or "fabric-manager" in f.subject]
    assert reading and all(f.basis == "inferred" for f in reading)


def test_dockers_error_for_a_gpu_it_cannot_give_names_the_container_toolkit(engine: Engine) -> None:
    """Docker says "could not select device driver" when no runtime can hand the container a GPU:
    users type it for the glossary's container toolkit, the component that exposes one."""
    answer = engine.ask(
        'docker: Error response from daemon: could not select device driver "" with capabilities: [[gpu]]'
    )
    assert answer.answered and "Container Toolkit" in answer.answer, answer.answer


def test_a_branch_of_the_latency_tree_looks_where_the_tree_starts(engine: Engine) -> None:
    """The latency tree says "trace first" before any branch: a report that already points at
    retrieval still gets the trace tools to confirm it, marked as the graph's reading."""
    answer = engine.ask("retrieval takes too long in our RAG app, what causes that?")
    assert answer.answered and ("Langfuse" in answer.answer or "Arize Phoenix" in answer.answer)
    tools = [
        f for f in answer.facts if f.predicate.endswith("whereToLook") and "latency-increased" in f.subject
    ]
    assert tools and all(f.basis == "inferred" for f in tools)


@pytest.mark.parametrize(
    ("report", "said"),
    [
        (
            "ib_mlx5_log.c:143 Transport retry count exceeded on mlx5_0:1/RoCE (synd 0x15 vend 0x81)",
            "Missing/misconfigured RoCE or PFC",
        ),
        ("does RDMA over ethernet need a lossless network?", "PFC"),
    ],
)
def test_what_rdma_users_type_for_dropped_packets_meets_pfc(engine: Engine, report: str, said: str) -> None:
    """The verbs error for retransmissions run out and the "lossless network" RoCE asks for are
    what users type for the packet drops PFC prevents."""
    answer = engine.ask(report)
    assert answer.answered and said in answer.answer, answer.answer


def test_asking_to_see_the_retrieved_chunks_names_the_practice_of_logging_them(engine: Engine) -> None:
    """ "which chunks were retrieved" is what users type for the seed's practice of logging
    retrieved chunk IDs on every request."""
    mentions = engine.linker.mentions("how can I see which chunks were retrieved for an answer?")
    assert any(m.iri.endswith("/practice-log-retrieved-chunk-ids") for m in mentions)


@pytest.mark.parametrize(
    "question",
    [
        "whats a quick check on the IB side?",
        "which checks should we run first on a new node?",
        "likely cause + what do i use to confirm",
        "what would you run to actually prove that?",
        "how can I confirm the GPU is throttling?",
    ],
)
def test_a_check_asked_for_by_name_asks_for_a_check(question: str) -> None:
    assert intents.asks_for_check(question), question


def test_the_check_failed_asks_for_no_check() -> None:
    """A check that is the subject of a report ("the health check failed") asks for none."""
    assert not intents.asks_for_check("the health check failed after the upgrade, what now?")
    assert not intents.asks_for_check("what checkpoint format does vLLM load fastest?")


def test_asked_whether_a_things_layer_runs_on_the_host_the_placement_says_where_it_runs(
    engine: Engine,
) -> None:
    """ "which layer is NCCL in, and does that layer run on the host or in the container?": the
    placement says which side of the host/container line its nine-layer layer is on (K8S-ROLE)."""
    answer = engine.ask("which layer is NCCL in, and does that layer run on the host or in the container?")
    assert "L5 Communication Libraries" in answer.answer
    assert "in-container" in answer.answer, answer.answer
    assert any(f.predicate.endswith("#runsIn") for f in answer.facts)
    plain = engine.ask("where does NCCL fit?")
    assert "in-container" not in plain.answer  # not asked, not said
