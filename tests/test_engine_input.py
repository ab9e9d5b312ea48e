"""Bad input, batches, follow-ups and the engine's independence from every surface."""

from __future__ import annotations

import json
import subprocess
import sys

from stackgraph.graph.conversation import Conversation, Turn, listed_items, numbered_items
from stackgraph.graph.engine import Engine
from stackgraph.graph.store import KG


def test_bad_input_is_declined_with_one_line_error(engine: Engine) -> None:
    for bad, reason in (
        ("", "empty"),
        ("   \t ", "empty"),
        ("x" * 100_000, "limit"),
        ("\x00\x01\x02", "empty"),
        ("?!", "no words"),
        # Words in a script the engine does not read are words, not none.
        ("多文档的时候不知道命中了哪些内容", "no words in English"),
        (b"\xff\xfe where", "UTF-8"),
        (42, "text"),
    ):
        answer = engine.ask(bad)  # type: ignore[arg-type]
        assert not answer.answered
        assert answer.error and reason in answer.error and "\n" not in answer.error


def test_control_characters_inside_a_real_question_are_ignored(engine: Engine) -> None:
    answer = engine.ask("where does\x07 UALink\x1b fit?")
    assert answer.answered and "L8" in answer.answer


def test_follow_ups_resolve_against_earlier_turns(engine: Engine) -> None:
    chat = Conversation()
    assert engine.ask("where does NCCL fit?", chat).answered
    test = engine.ask("and how do I test it?", chat)
    assert "nccl-tests" in test.answer.lower() or "nccl tests" in test.answer.lower()
    chat = Conversation()
    engine.ask("What is MIG?", chat)
    assert "L9" in engine.ask("which layer is it in?", chat).answer
    chat = Conversation()
    engine.ask("where does libfabric fit?", chat)
    assert "GPUDirect RDMA" in engine.ask("what else is in that layer?", chat).answer
    chat = Conversation()
    engine.ask("Which layer owns CUDA OOM?", chat)
    assert (
        "gpu_memory_utilization" in engine.ask("what should I look at?", chat).answer
    )  # no pronoun, still a follow-up
    assert not engine.ask("what is a flurbo?", chat).answered  # an unknown name is not the last subject


def _cli(args: list[str], stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "stackgraph.cli", *args], input=stdin, capture_output=True, timeout=120
    )


def test_cli_batch_survives_bad_lines() -> None:
    lines = b"where does UALink fit?\n\n" + b"y" * 100_000 + b"\n\xff\xfe\xfd\nwhat is TTFT?\n"
    done = _cli(["ask", "--json", "--no-semantic", "-"], lines)
    assert done.returncode == 0, done.stderr
    answers = [json.loads(line) for line in done.stdout.decode().splitlines()]
    assert [a["answered"] for a in answers] == [True, False, False, False, True]
    assert all(a["error"] for a in answers[1:4])
    assert b"Traceback" not in done.stderr


def test_cli_chat_and_contract_fields() -> None:
    done = _cli(
        ["ask", "--json", "--chat", "--no-semantic", "-"], b"where does NCCL fit?\nand how do I test it?\n"
    )
    first, second = (json.loads(line) for line in done.stdout.decode().splitlines())
    for field in (
        "question",
        "answered",
        "answer",
        "intent",
        "confidence",
        "entities",
        "facts",
        "sources",
        "sparql",
        "path",
        "suggestions",
    ):
        assert field in first
    assert "nccl" in second["answer"].lower()


def test_cli_single_question_exit_codes() -> None:
    assert _cli(["ask", "--no-semantic", "where does UALink fit?"]).returncode == 0
    declined = _cli(["ask", "--no-semantic", "what is the capital of France?"])
    assert declined.returncode == 1
    assert b"don't know" in declined.stdout


def test_engine_imports_no_surface() -> None:
    code = (
        "import sys; from stackgraph.graph.engine import Engine; e = Engine.load(semantic=False); e.ask('where does NCCL fit?');"
        "print(sorted(m for m in ('textual', 'fastmcp', 'starlette', 'uvicorn', 'torch', 'sentence_transformers') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() == "[]", done.stderr


def test_user_data_is_checked_against_the_shapes(tmp_path) -> None:
    import os

    env = {**os.environ, "STACKGRAPH_CACHE_DIR": str(tmp_path)}
    base = [sys.executable, "-m", "stackgraph.cli", "ask", "--no-semantic"]
    bad = subprocess.run(
        [*base, "--data", "tests/data/user_cluster_unsourced.ttl", "where does NVLink fit"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert bad.returncode == 2
    assert (
        bad.stderr.count("\n") == 1
        and "user_cluster_unsourced.ttl" in bad.stderr
        and "dct:source" in bad.stderr
    )
    good = subprocess.run(
        [*base, "--data", "tests/data/user_cluster.ttl", "where does Moonbeam cluster fit?"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert good.returncode == 0, good.stderr
    assert "L8 Node Interconnect" in good.stdout and "our NVLink domain" in good.stdout


def test_a_numbered_list_is_read_item_by_item() -> None:
    listed = "Phases: 1) move the weights first, 2) sync the deltas (Kafka), 3) cut over. Next sentence."
    assert numbered_items(listed) == ["move the weights first", "sync the deltas (Kafka)", "cut over"]
    asked = "In order: 1. Was it retrieved? If not, fix chunking. 2. Was it ranked too low?"
    assert numbered_items(asked) == ["Was it retrieved?", "Was it ranked too low?"]
    assert numbered_items("we waited 2) minutes") == []  # one number is no list


def test_a_run_in_list_is_read_item_by_item() -> None:
    said = "The order is almost always: was it retrieved; was it ranked too low; was it ignored. Then more."
    assert listed_items(said) == ["was it retrieved", "was it ranked too low", "was it ignored"]
    assert listed_items("Note: a; b") == []  # two parts are no list
    assert listed_items("Phases: 1) stage, 2) sync.") == ["stage", "sync"]  # numbered first


def test_a_reference_to_a_numbered_item_is_spelled_out() -> None:
    conversation = Conversation()
    said = "Phases: 1) pre-stage weights, 2) sync deltas, 3) cut over."
    conversation.turns.append(Turn("what are the phases?", "list", None, (), answer=said))
    assert conversation.spell_out_item("how is step 2 done?") == "how is step 2 (sync deltas) done?"
    assert conversation.spell_out_item("and the last one?") == "and the last one (cut over)?"
    assert conversation.spell_out_item("what about phase 7?") == "what about phase 7?"  # no such item
    assert Conversation().spell_out_item("how is step 2 done?") == "how is step 2 done?"  # no turn


#: Every entity whose label names phases or steps: asked for, its answer numbers them.
NUMBERED = """
PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>
SELECT DISTINCT ?label WHERE { ?x rdfs:label ?label . FILTER(REGEX(?label, "phases|steps", "i")) }
"""


def test_a_turn_answered_in_context_by_another_thing_moves_the_conversation_to_it(
    semantic_engine: Engine,
) -> None:
    """ "write bursts from all the ranks at once", after a report about the storage, is answered
    by checkpointing: "which layer is that?" then asks where checkpointing sits, not the subject
    of the first turn. A check an answer leads with moves nothing (see Conversation.remember)."""
    conversation = Conversation()
    semantic_engine.ask(
        "the storage backend of our training cluster chokes every hour on the hour", conversation
    )
    semantic_engine.ask(
        "the metrics show big write bursts from all the ranks at the same moment", conversation
    )
    assert conversation.focus == str(KG["checkpointing"])
    answer = semantic_engine.ask("which layer is that?", conversation)
    assert answer.answer.startswith("checkpointing fits in"), answer.answer


def test_a_follow_up_naming_a_numbered_item_asks_about_that_item(engine: Engine) -> None:
    """ "how is step 2 actually done?" after an answer that numbers phases is about what the second
    one says, which the follow-up's own words never name."""
    asked = 0
    for row in engine.graph.query(NUMBERED):
        conversation = Conversation()
        items = numbered_items(engine.ask(f"what are the {row.label}?", conversation).answer)
        if len(items) < 2:
            continue
        asked += 1
        follow = engine.ask("how is step 2 actually done?", conversation)
        second = items[1].split(" (")[0].lower()
        assert follow.answered and second in follow.answer.lower(), (row.label, follow.answer)
    assert asked


def test_the_first_step_of_a_run_in_list_is_what_a_follow_up_asks_about(semantic_engine: Engine) -> None:
    conversation = Conversation()
    first = semantic_engine.ask(
        "in what order do I check things when a retrieval-augmented system gives a bad answer", conversation
    )
    assert listed_items(first.answer)
    follow = semantic_engine.ask("ok, for the first step, what should we be logging?", conversation)
    assert "chunk IDs" in follow.answer[:300], follow.answer


def test_a_constant_whose_parts_the_graph_knows_is_still_a_name_it_lacks(engine: Engine) -> None:
    """ "NCCL_IB_TIMEOUT" is an environment variable the seeds never name, though "NCCL", "IB"
    and "timeout" are all words of the graph: asked what it is, the engine says it lacks it. A
    setting the graph has ("max_num_seqs") is still defined, and a report naming a constant in
    passing is still answered."""
    asked = engine.ask("what is NCCL_IB_TIMEOUT?")
    assert not asked.answered and "NCCL_IB_TIMEOUT" in asked.answer, asked.answer
    assert engine.ask("what is max_num_seqs?").answered
    report = engine.ask(
        "Training hangs at the first all_reduce on two nodes, NCCL_DEBUG shows NET/Socket instead of IB"
    )
    assert report.answered, report.answer


def test_a_value_asked_of_a_setting_the_graph_lacks_is_declined_by_its_name(engine: Engine) -> None:
    """ "what's the default NCCL_IB_TIMEOUT?" asks a value of a setting the graph does not hold:
    declined, naming it, however much the graph knows of NCCL. A setting it holds is answered, and
    a long report's identifiers (its logs and configs) are its setup, not what it asks."""
    for question in (
        "what's the default NCCL_IB_TIMEOUT on infiniband?",
        "what NCCL_SOCKET_IFNAME value do i set so nccl skips the mgmt nic",
        # A combination of settings to choose asks their values too.
        "which NCCL_MIN_NCHANNELS and NCCL_BUFFSIZE combination is optimal for 1GB all-reduce?",
    ):
        answer = engine.ask(question)
        assert not answer.answered, answer.answer
        assert "no entity by that name" in answer.answer and "NCCL_" in answer.answer
    assert engine.ask("what value should I set gpu_memory_utilization to?").answered
    assert engine.ask("what is the optimal max_num_seqs for a chat workload?").answered
    report = (
        "our vLLM pods OOM under load. we run with gpu_memory_utilization 0.95, max_num_seqs 256 and "
        "NCCL_IB_TIMEOUT at its default value, tensor parallel over two nodes, and every few hours a "
        "replica dies with CUDA out of memory during a long prompt burst"
    )
    assert engine.ask(report).answered
