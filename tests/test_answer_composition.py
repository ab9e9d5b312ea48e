"""How the passage answerer composes and decides (issue 11): what comes first, what is said.

Questions are built here from the graph's own statements, never taken from an evaluation set:
each test checks a mechanism (a report's problem words lead the answer; a technology named in
passing comes after), not the answer to one question.
"""

from __future__ import annotations

import re

from stackgraph.graph.answering import reports
from stackgraph.graph.answering.context import Context
from stackgraph.graph.answering.passages import Hit, Passage
from stackgraph.graph.answering.question import Question
from stackgraph.graph.conversation import Conversation
from stackgraph.graph.engine import Engine
from stackgraph.graph.lexical import terms
from stackgraph.graph.model import Answer

SKOS_DEFINITION = "http://www.w3.org/2004/02/skos/core#definition"
SKOS_RELATED = "http://www.w3.org/2004/02/skos/core#related"


def _context(engine: Engine, question: str) -> Context:
    parsed = Question.parse(engine, question)
    return Context(engine, question, parsed.intent.intent, parsed.intent.strength, [], None, parsed=parsed)


def _definitions(engine: Engine) -> dict[str, Passage]:
    return {p.subject: p for p in engine.passages.passages if p.predicate == SKOS_DEFINITION}


def _report_naming(engine: Engine) -> tuple[str, Passage, Passage]:
    """A report naming one entity in passing and describing another entity's statement: the
    named entity's definition shares none of the described statement's words."""
    definitions = _definitions(engine)
    statements = [p for p in engine.passages.passages if not p.relation and p.predicate != SKOS_DEFINITION]
    for named_iri, definition in sorted(definitions.items()):
        label = engine.catalog.display(named_iri)
        if len(terms(label)) != 1:
            continue
        for statement in statements[:400]:
            words = " ".join(statement.object.split()[:8])
            problem = set(terms(words))
            if statement.subject == named_iri or len(problem) < 3 or problem & set(terms(definition.text)):
                continue
            question = f"{words} with {label}"
            parsed = Question.parse(engine, question)
            if [m.iri for m in parsed.mentions] == [named_iri]:
                return question, definition, statement
    raise AssertionError("the graph has no entity to name in passing")


def test_problem_terms_are_the_words_besides_the_names(engine: Engine) -> None:
    question, definition, _statement = _report_naming(engine)
    ctx = _context(engine, question)
    label_terms = set(terms(engine.catalog.display(definition.subject)))
    problem = reports.problem_terms(ctx)
    assert problem
    assert not problem & label_terms
    assert problem <= set(ctx.parsed.terms)


def test_a_named_entitys_definition_is_in_passing_a_described_statement_is_not(engine: Engine) -> None:
    question, definition, statement = _report_naming(engine)
    ctx = _context(engine, question)
    assert reports.in_passing(ctx, Hit(definition, 0.9, 0.9, 0.0))
    assert not reports.in_passing(ctx, Hit(statement, 0.5, 0.5, 0.0))


def test_the_passage_on_the_problem_leads_the_named_entitys_definition(engine: Engine) -> None:
    """Ranked first by the name's prior, the definition still comes after the statement that
    speaks to the report's problem; the order among the rest is kept."""
    question, definition, statement = _report_naming(engine)
    ctx = _context(engine, question)
    first, second = Hit(definition, 0.9, 0.9, 0.0), Hit(statement, 0.5, 0.5, 0.0)
    assert reports.lead_with_problem(ctx, [first, second]) == [second, first]
    assert reports.lead_with_problem(ctx, [second, first]) == [second, first]


def _report_like_questions(engine: Engine, count: int = 40) -> list[str]:
    """Questions in a report's words: a few words from each of two unrelated statements, so
    that some match one passage well and some only loosely (the hedged answers)."""
    statements = [p for p in engine.passages.passages if not p.relation and len(p.object.split()) >= 8]
    step = max(1, len(statements) // count)
    picked = statements[::step][:count]
    questions = []
    for n, passage in enumerate(picked):
        other = picked[(n + len(picked) // 2) % len(picked)]
        questions.append(
            f"why does {' '.join(passage.object.split()[2:5])} and {' '.join(other.object.split()[3:6])} happen"
        )
    return questions


def _outside_questions(engine: Engine, count: int = 6) -> list[str]:
    """Questions in ordinary English words the graph never uses."""
    unused = sorted(
        w for w in engine.common_words if len(w) > 5 and not set(terms(w)) & set(engine.lexical.idf)
    )
    assert len(unused) > 4 * count
    return [
        f"how do I {' '.join(unused[(4 * k + n) * 97 % len(unused)] for n in range(4))}" for k in range(count)
    ]


def test_answered_means_statements_offered_asserted_or_hedged(semantic_engine: Engine) -> None:
    """The contract of ``answered``: a hedged answer ("The closest the graph knows: ...") is
    answered, rests on facts with sources and carries at most the hedged confidence; a declined
    one offers no statement (no facts), only suggestions, at confidence 0."""
    engine = semantic_engine  # with meaning in the fused score, loose matches fall below assertion
    hedged = declined = 0
    for question in _report_like_questions(engine) + _outside_questions(engine):
        answer = engine.ask(question)
        opens_hedged = answer.answer.removeprefix(f"About {answer.context}: ").startswith(reports.HEDGE)
        if opens_hedged:
            hedged += 1
            assert answer.answered, question
            assert answer.confidence <= reports.HEDGED_CONFIDENCE, question
            assert answer.facts and all(f.basis and f.source for f in answer.facts), question
        if not answer.answered:
            declined += 1
            assert answer.confidence == 0.0, question
            assert not answer.facts, question
            assert reports.HEDGE not in answer.answer, question
    assert hedged and declined  # both kinds were met, so both halves of the contract were checked


def test_where_the_asker_stands_is_no_part_of_what_they_ask(engine: Engine) -> None:
    """ "on a node", "in our cluster": a passage that happens to say "NUMA node" or "Ray Cluster"
    answers no more of the question for it, so the check or the placement asked for stands. A
    count is part of the problem and stays ("on 16 nodes")."""
    from stackgraph.graph.answering.question import _without_setting

    assert "node" not in _without_setting("how do I check nvlink on a node")
    assert "cluster" not in _without_setting("where does it fit across our whole cluster?")
    assert _without_setting("NCCL hangs on 16 nodes") == "NCCL hangs on 16 nodes"
    assert _without_setting("fine on one node") == "fine on one node"

    check = engine.ask("how do I check nvlink on a node").answer
    assert check.startswith("To check NVLink: Run `nvidia-smi topo -m`"), check
    placement = engine.ask("where does NVLink fit in our cluster?").answer
    assert placement.startswith("NVLink fits in L8 Node Interconnect"), placement


def test_the_words_that_ask_need_no_answer_of_their_own(engine: Engine) -> None:
    """ "how do I see ...", "which command ...": the intent's cue says what kind of answer is
    wanted; a passage saying "see the earlier chapters" covers no more of the question for it."""
    for question in ("how do I see the GPU topology?", "how do I see the GPU topology of a node?"):
        answer = engine.ask(question).answer
        assert "nvidia-smi topo -m" in answer.split(".")[0], (question, answer)


def test_an_answer_about_a_named_thing_says_the_words_that_named_it(engine: Engine) -> None:
    """The question named ``nvidia-smi topo -m`` by its alias "GPU topology": an answer about that
    command accounts for those words though its text says "topo"."""
    from stackgraph.graph.answering import compete

    parsed = Question.parse(engine, "how do I see the GPU topology?")
    naming = parsed.naming
    command = next(iri for iri in naming if iri.endswith("cmd-nvidia-smi-topo-m"))
    text = "Run `nvidia-smi topo -m`: Shows GPU-to-GPU link types."
    plain = compete.coverage(engine, ["gpu", "topolog"], text)
    named = compete.coverage(engine, ["gpu", "topolog"], text, named=naming[command])
    assert plain < 1.0 and named == 1.0


def test_an_editorial_note_is_shown_but_never_matched(engine: Engine) -> None:
    """How the graph reads a seed's typo ("the seed's typography printed ...") is said on the
    command's page, but it is no statement about the stack for a question to match."""
    from stackgraph.graph.describe import describe

    assert [p for p in engine.passages.passages if "typography" in p.text] == []
    command = next(iri for iri in engine.catalog.records if iri.endswith("/cmd-nvidia-smi-query-ecc"))
    assert any("typography" in n for n in describe(engine, command).notes)


def test_a_problem_without_checks_borrows_those_of_what_its_cause_is_related_to(engine: Engine) -> None:
    """The throughput triage's "data loading starved" branch points at storage throughput and names
    no check; storage throughput is related to the disk I/O that `iostat -x` shows. The answer says
    so, and every edge of that path is among its facts; the symptom the branch belongs to is
    broader, not beside it."""
    from stackgraph.graph.answering.symptoms import _problems_beside

    branch = next(
        iri
        for iri in engine.catalog.records
        if iri.endswith("/triage-throughput-dropped-data-loading-starved")
    )
    beside = [problem for problem, _ in _problems_beside(_context(engine, "x"), branch)]
    assert any(p.endswith("/cause-disk-io-cant-keep-up") for p in beside)
    assert not any(p.endswith("/sym-throughput-dropped") for p in beside)

    answer = engine.ask("data loading starved, GPUs sit idle")
    assert "`iostat -x`" in answer.answer, answer.answer
    said = {(f.subject, f.predicate, f.object) for f in answer.facts}
    assert any(p.endswith("#related") and o.endswith("/cause-disk-io-cant-keep-up") for _, p, o in said)


def test_a_comparison_spells_out_each_acronym(engine: Engine) -> None:
    """Whoever asks how two things differ is often new to both: each acronym is spelled out once,
    a versioned one ("RoCE v2") included."""
    answer = engine.ask("what is the difference between RoCE and InfiniBand?").answer
    assert "RoCE v2 (RDMA over Converged Ethernet) sits in" in answer, answer


def test_no_sentence_is_said_twice(engine: Engine) -> None:
    """A statement the answer gave already, for this entity or another (a definition said beside
    a cause, a glossary row that names its siblings), is not said again: each problem of the graph
    reported in a few plain frames gets an answer whose long sentences are all different."""
    problems = sorted(engine.problems)
    assert len(problems) > 20
    for iri in problems:
        label = engine.catalog.display(iri)
        for question in (f"{label} on our cluster, what should I check?", f"why {label}?"):
            text = engine.ask(question).answer
            said = [s.lower() for s in re.split(r"(?<=[.!?])\s+", text) if len(s) >= 40]
            assert len(said) == len(set(said)), (question, text)


def test_a_statement_said_for_another_entity_keeps_its_own_subject(engine: Engine) -> None:
    """The glossary's BGP row says what ECMP does; when the answer has said it there, ECMP's own
    definition is not repeated, and ECMP still counts as a subject: where it fits is said."""
    answer = engine.ask("how does ECMP spread big flows between racks?")
    assert answer.answer.count("splits large flows") == 1, answer.answer
    assert "ECMP fits in" in answer.answer or (
        answer.answer.startswith("ECMP") and "It fits in L7 Network Fabric" in answer.answer
    ), answer.answer


def test_an_answer_cut_to_length_keeps_only_the_facts_it_still_says(engine: Engine) -> None:
    """Answers are cut to 1,200 characters at a sentence; the checks named only in the sentences
    cut away are no longer among its facts, while the steps of an inference that no sentence
    names stay."""
    from stackgraph.graph.answering.context import said_facts
    from stackgraph.graph.model import Fact

    def fact(subject: str, obj: str) -> Fact:
        return Fact("s", "p", "o", subject, "where to look", obj)

    composed = "Slow collectives: one degraded link sets the pace. Where to look: `ibstat`."
    shown = "Slow collectives: one degraded link sets the pace."
    facts = [
        fact("Slow collectives", "ibstat"),
        fact("ibstat", "ibstat"),
        fact("Slow collectives", "one degraded link"),
        fact("Fabric", "Topology"),
    ]
    kept = said_facts(composed, shown, facts)
    assert [f.object_label for f in kept] == ["one degraded link", "Topology"]
    assert said_facts(shown, shown, facts) == facts


def test_the_checks_among_an_answers_facts_are_the_checks_it_names(engine: Engine) -> None:
    """Every problem of the graph, reported in plain frames: each check an answer lists among its
    facts (where to look, diagnosed by) is named in its text, however long the answer was before
    it was cut to length."""
    from stackgraph.graph.answering.symptoms import one_line

    checks = ("whereToLook", "diagnosedBy")
    for iri in sorted(engine.problems):
        label = engine.catalog.display(iri)
        for question in (f"{label} on our cluster, what should I check?", f"why {label}?"):
            answer = engine.ask(question)
            text = answer.answer.lower()
            # A command is named by its label or by the command line itself.
            lines = {
                f.subject: one_line(f.object_label)
                for f in answer.facts
                if f.predicate.endswith("commandText")
            }
            for f in answer.facts:
                if f.predicate.endswith(checks):
                    names = {f.object_label, lines.get(f.object, f.object_label)}
                    assert any(n.lower() in text for n in names), (question, f.object_label, answer.answer)


def _checked_technologies(engine: Engine) -> dict[str, list[str]]:
    """Each technology the graph has checks for, with its checks as the answer says them."""
    from stackgraph.graph.answering.evidence import fetch
    from stackgraph.graph.answering.text import one_line
    from stackgraph.graph.store import SG

    found = {}
    for iri in engine.entities_of("Technology"):
        checks = fetch(engine, iri).iris(SG.diagnosedBy)
        if checks and iri not in engine.problems:
            found[iri] = [
                one_line(fetch(engine, c).text(SG.commandText) or engine.catalog.label(c)) for c in checks
            ]
    assert len(found) >= 5, "the graph should hold checks for several technologies"
    return found


def test_a_report_of_trouble_with_a_technology_is_told_how_to_check_it(semantic_engine: Engine) -> None:
    """However little of the report a statement matches ("everything on it is stuck since the
    reboot"), the technology it names is checkable: the answer gives the check, with the facts
    and sources behind it, rather than declining or leaving the reader without a command."""
    for iri, runs in _checked_technologies(semantic_engine).items():
        label = semantic_engine.catalog.display(iri)
        answer = semantic_engine.ask(f"since the reboot everything on {label} is stuck")
        assert answer.answered, (label, answer.answer)
        assert any(run in answer.answer for run in runs), (label, runs, answer.answer)
        checks = [f for f in answer.facts if f.predicate.endswith("#diagnosedBy")]
        assert all(f.basis and f.sources for f in checks), label


def test_a_check_the_answer_gives_already_is_not_repeated(engine: Engine) -> None:
    for iri, runs in _checked_technologies(engine).items():
        label = engine.catalog.display(iri)
        answer = engine.ask(f"our {label} keeps failing, how do I check it?")
        for run in runs:
            assert answer.answer.count(f"`{run}") <= 1, (label, answer.answer)


def test_only_a_report_gets_the_checks_of_what_it_names(engine: Engine) -> None:
    """A question asking what something is or where it fits is not told how to check it."""
    for iri in _checked_technologies(engine):
        label = engine.catalog.display(iri)
        for question in (f"what is {label}?", f"which layer does {label} sit in?"):
            assert "To check" not in engine.ask(question).answer, question


def test_two_named_technologies_with_the_same_checks_share_one_sentence(engine: Engine) -> None:
    checked = _checked_technologies(engine)
    pairs = [(a, b) for a in checked for b in checked if a < b and checked[a] == checked[b]]
    assert pairs, "the graph should hold two technologies checked the same way"
    for a, b in pairs:
        names = engine.catalog.display(a), engine.catalog.display(b)
        answer = engine.ask(
            f"we scaled our job over {names[0]} with {names[1]} to twice the nodes and step time got worse"
        )
        told = [s for s in re.split(r"(?<=\.) ", answer.answer) if s.startswith("To check")]
        assert len(told) <= 1, (names, answer.answer)


def test_every_answer_to_every_question_we_hold_fits_the_length_limit(
    single_turn_answers: dict[str, Answer],
) -> None:
    """An invariant over every single-turn question of our sets: the checks take room from the
    body and the note on what is inferred is said again of what is left, so no answer, however
    long the report, runs past the limit (a longer recomputed note once did, by 50-100 chars)."""
    from stackgraph.graph.answering.text import MAX_ANSWER_CHARS

    assert len(single_turn_answers) > 400
    too_long = [
        (question[:60], n)
        for question, answer in single_turn_answers.items()
        if (n := len(answer.answer)) > MAX_ANSWER_CHARS
    ]
    assert not too_long


def _tuned(engine: Engine) -> dict[str, list[str]]:
    """Each entity that configuration settings apply to, with those settings (read by SPARQL)."""
    rows = engine.graph.query(
        "PREFIX sg: <https://w3id.org/stackgraph/ns#> "
        "SELECT ?e ?p WHERE { ?p a sg:ConfigurationParameter ; sg:appliesTo ?e }"
    )
    found: dict[str, list[str]] = {}
    for row in rows:
        found.setdefault(str(row.e), []).append(str(row.p))
    return found


def test_where_a_tuned_thing_fits_says_the_settings_that_apply_to_it(engine: Engine) -> None:
    tuned = _tuned(engine)
    assert len(tuned) >= 5
    for iri, settings in tuned.items():
        name = engine.catalog.label(iri)
        answer = engine.ask(f"which layer does {name} fit in?", intent="fit")
        assert answer.answered, answer.answer
        assert f"Settings for {name}:" in answer.answer, answer.answer
        assert all(engine.catalog.label(s) in answer.answer for s in settings), answer.answer
        applied = {(f.subject, f.object) for f in answer.facts if f.predicate.endswith("appliesTo")}
        assert applied >= {(s, iri) for s in settings}
        assert all(f.basis and f.sources for f in answer.facts)


def test_a_cause_in_the_layer_of_what_a_report_names_comes_first(engine: Engine) -> None:
    """Every cause of a symptom is tried with a named technology placed in its owner layer: that
    cause ranks first among the symptom's causes, whatever its sentences share with the report."""
    from stackgraph.graph.answering import link
    from stackgraph.graph.answering.evidence import fetch
    from stackgraph.graph.answering.symptoms import _by_match
    from stackgraph.graph.store import SG

    symptom = "https://w3id.org/stackgraph/id/sym-throughput-dropped"
    causes = fetch(engine, symptom).iris(SG.likelyCause)
    tried = 0
    for cause in causes:
        owners = set(fetch(engine, cause).iris(SG.ownedBy))
        others = [c for c in causes if c != cause and owners & set(fetch(engine, c).iris(SG.ownedBy))]
        placed = [
            iri
            for iri in engine.entities_of("Technology")
            if owners & set(fetch(engine, iri).iris(SG.fitsIn))
            and len(engine.catalog.label(iri).split()) == 1
        ]
        if others or not placed:
            continue  # the layer does not tell this cause from another
        name = engine.catalog.label(sorted(placed)[0])
        question = f"GPUs idle on our {name} nodes"
        parsed = Question.parse(engine, question)
        ctx = Context(engine, question, None, 0.0, link(engine, parsed), None, parsed=parsed)
        assert _by_match(ctx, causes)[0][0] == cause, (question, cause)
        tried += 1
    assert tried >= 2


def test_the_likely_causes_beside_an_answer_lead_with_the_one_the_question_describes(engine: Engine) -> None:
    """Told where a problem sits beside another answer, its likely causes come with the one the
    question describes first, wherever the graph lists it: a question in the words of a cause's
    own definition gets that cause named first, not only the first three the graph holds."""
    from stackgraph.graph.answering import link, reports
    from stackgraph.graph.answering.evidence import fetch
    from stackgraph.graph.store import SG

    tried = first = late = 0
    for symptom in engine.entities_of("Symptom"):
        causes = fetch(engine, symptom).iris(SG.likelyCause)
        if len(causes) < 3:
            continue
        for n, cause in enumerate(causes):
            rec = engine.catalog.get(cause)
            if rec is None or not rec.definition:
                continue
            parsed = Question.parse(engine, rec.definition)
            ctx = Context(engine, rec.definition, None, 0.0, link(engine, parsed), None, parsed=parsed)
            said = reports._whereabouts(ctx, symptom, "")
            listed = said.split("Likely cause", 1)[1].split(":", 1)[1] if "Likely cause" in said else ""
            tried += 1
            if listed.strip().startswith(engine.catalog.display(cause)):
                first += 1
                late += n >= 3
    assert tried >= 10
    assert first >= 0.75 * tried, (first, tried)
    assert late >= 2  # causes the graph lists fourth or later, named first all the same


def test_a_step_of_a_path_is_checked_where_it_runs_over(engine: Engine) -> None:
    """A step of the data path has no check of its own; what it runs over (named after "over" in
    its label) does, and the checks of the step's endpoints (the GPU's nvidia-smi) do not say
    whether that hop is in use."""
    from stackgraph.graph.answering import symptoms
    from stackgraph.graph.answering.context import Candidate
    from stackgraph.graph.store import KG

    ctx = _context(engine, "how do I check it is actually in use?")
    steps = {
        str(KG["datapath-gpudirect-storage"]): str(KG["gpudirect-storage"]),
        str(KG["datapath-nvlink-intra-node"]): str(KG["nvlink"]),
    }
    for step, medium in steps.items():
        assert symptoms._medium_checked(ctx, step) == medium
    step = str(KG["datapath-gpudirect-storage"])
    ctx.candidates = [Candidate(step, 0.95, "conversation")]
    answer = symptoms.diagnose(ctx)
    assert answer is not None and "gdscheck" in answer.answer, answer


def test_a_thing_asked_of_across_nodes_that_the_graph_keeps_inside_one_gets_the_wider_one(
    engine: Engine,
) -> None:
    """Tensor parallelism is intra-node in the graph; asked of across machines, the answer adds
    the setting the graph gives for the span between nodes. Asked of inside one node, nothing is
    added."""
    from stackgraph.graph.answering import scope

    across = engine.ask("we want to run tensor parallelism spanning two machines, 8 GPUs each. how?")
    assert "pipeline_parallel_size" in across.answer, across.answer
    assert "NVLink domain" in across.answer, across.answer
    assert scope._ASKED_ACROSS.search("tensor_parallel_size larger than the 8 gpus in one node")
    assert scope._ASKED_ACROSS.search("can we run it across two of those nodes?")
    assert not scope._ASKED_ACROSS.search("tensor parallelism on one node with 8 GPUs")
    inside = engine.ask("how does tensor parallelism work on one node with 8 GPUs?")
    assert "Across nodes," not in inside.answer, inside.answer


def test_a_later_sentence_alone_leaning_a_shade_outside_does_not_decline_a_report() -> None:
    """Each measured sentence: (nearest outside area, how much nearer it is than the graph). The
    opening sentence leaning outside, or two sentences, or one clearly, decline; one later
    sentence a shade nearer an area ("I run mixtral model and using api/generate") does not."""
    shade = reports.SENTENCE_OUTSIDE_MARGIN + 0.01
    clear = reports.LATER_SENTENCE_OUTSIDE_MARGIN + 0.01
    assert reports.leans_outside([("games", shade), None, None]) == "games"
    assert reports.leans_outside([None, ("games", shade), ("games", shade)]) == "games"
    assert reports.leans_outside([None, ("exporting", clear), None]) == "exporting"
    assert reports.leans_outside([None, ("exporting", shade), None]) is None
    assert reports.leans_outside([("games", -0.2), ("exporting", 0.0), None]) is None


def test_an_answer_is_not_cut_inside_parentheses_when_a_boundary_outside_them_will_do() -> None:
    """A check's reading in parentheses holds sentences of its own ("(Port state and rate per
    HCA. A port ...)"); cutting after the first would leave the parenthesis open."""
    from stackgraph.graph.answering.text import clip

    text = (
        "Slow collectives: one degraded link sets the pace. Slow collectives is owned by L2. To check"
        " it: ibstat (Port state. A port negotiated below its rated speed is a common cause) or NCCL"
        " tests. More after."
    )
    cut = clip(text, 125)
    assert cut == "Slow collectives: one degraded link sets the pace. Slow collectives is owned by L2.", cut
    assert clip("One sentence. Two sentences here.", 100) == "One sentence. Two sentences here."


def test_an_answer_telling_a_later_step_of_a_flow_tells_the_steps_before_it(engine: Engine) -> None:
    """A report answered by what the jq filter over the JSON plan shows gets the steps that make
    that plan (`terraform plan -out=tfplan`, then `terraform show -json`), each link a fact; an
    answer that gives them already does not repeat them."""
    report = engine.ask(
        "every time our pipeline runs terraform apply, the database instance gets destroyed and created again"
    )
    text = report.answer
    assert (
        "jq" in text and "The steps before the jq filter: run `terraform plan -out=tfplan`, then" in text
    ), text
    assert any(f.predicate.endswith("#next") and f.basis and f.source for f in report.facts)
    listed = engine.ask("how do I list what terraform will destroy?").answer
    assert listed.count("terraform plan -out=tfplan") == 1, listed


def test_a_later_step_asked_as_a_follow_up_is_told_with_the_steps_before_it(engine: Engine) -> None:
    """The same flow asked of in a conversation: the jq filter the follow-up is answered with
    reads the JSON plan, so the steps that make it are told too."""
    conversation = Conversation()
    engine.ask(
        "need to change the gpu node pool module in our terraform, nervous it'll replace half the nodes",
        conversation,
    )
    answer = engine.ask(
        "how do i get a list of everything that would be destroyed or replaced before i apply?", conversation
    )
    assert answer.context is not None, answer.answer
    assert "The steps before the jq filter: run `terraform plan -out=tfplan`, then" in answer.answer, (
        answer.answer
    )


def test_a_cause_answered_as_a_problem_says_what_it_is(engine: Engine) -> None:
    """A cause has no causes of its own to explain it: its owner and fix come with its
    definition (probes tuned for a web service kill a pod before it is ready), as a fact."""
    answer = engine.ask("which layer owns a liveness probe misconfigured for slow startup?")
    assert answer.answer.startswith("Liveness probe misconfigured for slow startup is owned by L5"), (
        answer.answer
    )
    assert "Liveness probes tuned for a web service will kill the pod" in answer.answer, answer.answer
    assert any(
        f.predicate.endswith("definition") and f.subject.endswith("liveness-probe-misconfigured")
        for f in answer.facts
    )


def test_cutting_an_answer_for_its_checks_keeps_the_problems_cause() -> None:
    """A long answer cut to make room for checks loses its tail, where a problem's owner and
    likely cause are said: those two sentences stay, the passages before them give way."""
    from stackgraph.graph.answering.reports import _clip_keeping_causes

    passages = " ".join(f"Passage {n} says something long about the stack and its parts." for n in range(8))
    owned = "Slow node is owned by L8 Node Interconnect in the nine-layer model."
    cause = "Likely cause: PCIe bottleneck or thermal throttling."
    body = f"{passages} {owned} {cause}"
    limit = len(body) - 100
    kept = _clip_keeping_causes(body, limit)
    assert len(kept) <= limit
    assert kept.endswith(f"{owned} {cause}")
    assert "Passage 0" in kept and "Passage 7" not in kept
    # A cause said without the problem it belongs to is cut like any sentence.
    alone = f"{passages} {cause}"
    assert cause not in _clip_keeping_causes(alone, len(alone) - 60)


def test_a_follow_up_asking_how_to_check_gets_the_checks_its_long_answer_had_no_room_for(
    semantic_engine: Engine,
) -> None:
    """After a slow model load, "how do we verify it is the disk, which tools" is answered about
    storage-bound slowness, its cause and the storage layer at length; the checks asked for came
    last and were cut. They are said, the body cut to make room."""
    conversation = Conversation()
    semantic_engine.ask(
        "weights load on our new serving nodes takes ~8 min for a 120GB checkpoint, the previous nodes"
        " did it in 2",
        conversation,
    )
    answer = semantic_engine.ask("how do we verify it is the disk, which tools", conversation)
    assert answer.answered and "Storage-bound slowness" in answer.answer, answer.answer
    assert "iostat -x" in answer.answer, answer.answer
    assert any(f.object.endswith("iostat") or "iostat" in f.object for f in answer.facts), answer.facts


def test_a_cause_whose_own_check_came_back_fine_is_ruled_out_and_the_problem_goes_on(
    semantic_engine: Engine,
) -> None:
    """After slow collectives, "ran nvidia-smi topo -m already, all NV18, so the nvlink side is
    fine" reports the check of GPU traffic crossing the CPU root complex as clean: that cause is
    ruled out, not answered, and what comes next on the IB side is the fabric's own check."""
    conversation = Conversation()
    semantic_engine.ask("our collectives got slow since the fabric maintenance on tuesday", conversation)
    found = semantic_engine.ask(
        "ran nvidia-smi topo -m already, all NV18, so the nvlink side is fine", conversation
    )
    assert found.answered and not found.answer.startswith("GPU traffic crosses"), found.answer
    assert conversation.focus is not None and "root-complex" not in conversation.focus, conversation.focus
    assert "What fixes GPU traffic crosses the CPU root complex" not in found.answer, found.answer
    following = semantic_engine.ask("ok what next on the IB side", conversation)
    assert following.answered and "ibstat" in following.answer, following.answer


def test_a_setting_asked_of_a_technique_in_a_follow_up_is_the_setting_that_applies_to_it(
    semantic_engine: Engine,
) -> None:
    """ "is there a flag for that?" after an answer about chunked prefill asks for the setting
    that turns the technique on: enable_chunked_prefill, with what it does and the edge that
    ties it to the technique, not the knobs of an unrelated problem."""
    conversation = Conversation()
    first = semantic_engine.ask("what does chunked prefill do in a serving engine?", conversation)
    assert (
        first.answered and conversation.focus is not None and conversation.focus.endswith("chunked-prefill")
    )
    answer = semantic_engine.ask("ok, is there a flag for that?", conversation)
    assert answer.answered and "enable_chunked_prefill: Splits long prompt prefill" in answer.answer, (
        answer.answer
    )
    assert any(
        f.predicate.endswith("appliesTo") and f.object.endswith("chunked-prefill") for f in answer.facts
    )


def test_a_cause_that_a_named_fix_addresses_joins_a_branchs_causes_with_its_symptom(engine: Engine) -> None:
    """A triage branch suggests fewer causes than the symptoms it opens or is related to have. A
    report naming something that fixes one of those other causes ("stuck in Pending, our
    coscheduling plugin...") is told that cause too, with the symptom that holds it as the fact's
    subject (the branch does not suggest it)."""
    from stackgraph.graph.answering import link
    from stackgraph.graph.answering.evidence import fetch
    from stackgraph.graph.answering.symptoms import _symptoms_of, explain_problem
    from stackgraph.graph.store import SG

    tried = 0
    for branch in engine.entities_of("TriageBranch"):
        own = set(fetch(engine, branch).iris(SG.suggestsCause))
        related = [r for r in fetch(engine, branch).iris(SKOS_RELATED) if r in engine.problems]
        for symptom in dict.fromkeys(_symptoms_of(engine, branch) + related):
            for cause in fetch(engine, symptom).iris(SG.likelyCause):
                fixes = [f for f in fetch(engine, cause).incoming(SG.mitigates) if f not in engine.problems]
                if cause in own or not fixes:
                    continue
                question = (
                    f"{engine.catalog.label(branch)}, although we set up {engine.catalog.label(fixes[0])}"
                )
                parsed = Question.parse(engine, question)
                ctx = Context(engine, question, None, 0.0, link(engine, parsed), None, parsed=parsed)
                said = explain_problem(ctx, branch)
                listed = re.split(r"Likely causes?: ", said, maxsplit=1)[-1].split(".")[0]
                assert engine.catalog.display(cause) in listed, (question, said)
                held = {(f.subject, f.predicate, f.object) for f in ctx.evidence.facts}
                assert (symptom, str(SG.likelyCause), cause) in held, question
                tried += 1
    assert tried >= 1


def test_a_turn_asking_what_to_check_while_a_problem_is_under_way_gets_its_checks(
    semantic_engine: Engine,
) -> None:
    """ "we have plenty of free hypervisors though, what should I check?" after NoValidHost
    shares no word with the answer and names nothing the graph holds: alone it is declined. It
    asks what to check while a problem is under way, so the problem's checks are the answer,
    said to be about it."""
    conversation = Conversation()
    semantic_engine.ask("openstack server create fails with NoValidHost", conversation)
    answer = semantic_engine.ask(
        "we have plenty of free hypervisors though, what should I check?", conversation
    )
    assert answer.answered and answer.context == "NoValidHost", answer.answer
    assert "openstack compute service list" in answer.answer, answer.answer


def test_a_why_asked_of_the_conversations_subject_is_answered_by_what_it_is(semantic_engine: Engine) -> None:
    """ "why do they care about that?" after trust_remote_code shares only "they" with a practice
    ("most incidents are not model problems ... they are capacity ..."): that practice neither
    applies to nor fixes the subject, so the subject's own definition answers (a supply-chain
    security consideration)."""
    conversation = Conversation()
    semantic_engine.ask(
        "the platform review flagged that our serving pods enable trust_remote_code", conversation
    )
    answer = semantic_engine.ask("why do they care about that?", conversation)
    assert answer.answered and "supply-chain" in answer.answer, answer.answer
    assert "not model problems" not in answer.answer, answer.answer


def test_a_verdict_asked_of_a_finding_reads_the_finding_as_a_report(semantic_engine: Engine) -> None:
    """ "is that bad?" right after a turn reporting what a check showed asks what to make of the
    finding: the two turns are read as one report (SYS crosses the CPU root complex, far slower
    than NVLink), not as a question about the problem the check diagnoses."""
    conversation = Conversation()
    semantic_engine.ask("nvidia-smi topo -m on node 3 says SYS between GPU2 and GPU6", conversation)
    answer = semantic_engine.ask("is that bad?", conversation)
    assert answer.answered and "CPU root complex, which is far slower" in answer.answer, answer.answer


def test_a_follow_up_answered_in_layers_alone_keeps_the_conversation_on_its_subject(
    semantic_engine: Engine,
) -> None:
    """ "so it isn't one of the nine layers then?" after Kubernetes is answered about Kubernetes in
    layers alone (no entity of the answer is anything but a layer): the conversation is still
    about Kubernetes, so "why doesn't NCCL talk to it once the pod runs?" asks about Kubernetes
    (NCCL never calls it), not for the members of a layer."""
    conversation = Conversation()
    semantic_engine.ask("where does Kubernetes fit in the nine-layer model?", conversation)
    layers_only = semantic_engine.ask("so it isn't one of the nine layers then?", conversation)
    assert layers_only.context == "Kubernetes" and all(e.code for e in layers_only.entities), layers_only
    assert conversation.focus is not None and conversation.focus.endswith("/kubernetes"), conversation.focus
    answer = semantic_engine.ask("why doesn't NCCL talk to it once the pod runs?", conversation)
    assert answer.answered and "never calls Kubernetes" in answer.answer, answer.answer


def test_what_a_report_goes_on_to_say_of_its_hosts_carries_the_report_on(engine: Engine) -> None:
    """ "but there are free GPUs on the hypervisors" after NoValidHost says more of the
    report: a hypervisor is the compute host the seed's scheduler found none of (the report-word
    table pairs them), not a subject from outside the graph. The two turns are one report, about
    NoValidHost."""
    conversation = Conversation()
    engine.ask("nova refuses to boot our gpu flavor, NoValidHost every time", conversation)
    answer = engine.ask("but there are free GPUs on the hypervisors", conversation)
    assert answer.answered and answer.context == "NoValidHost", answer.answer
