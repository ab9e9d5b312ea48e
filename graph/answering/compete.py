"""Candidates compete: each answer is scored by how much of the question its evidence covers.

Several answerers can say something about one question: the intent's own answerer (a definition,
a placement, a symptom's owner) and the passage answerer (the graph's statements that best match
the whole question). The one whose text accounts for more of the question's content words,
weighted by how rare each word is in the graph, wins; the intent's own answer keeps a head start,
since its wording cues were matched on purpose.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from stackgraph.graph.lexical import terms

if TYPE_CHECKING:
    from stackgraph.graph.engine import Engine
    from stackgraph.graph.model import Answer

#: The intent of a definition answer (``intents.DEFINE``; not imported, to keep this module a leaf).
DEFINE = "define"
#: The intent of a comparison (``intents.COMPARE``).
COMPARE = "compare"
#: The intent of a placement answer (``intents.FIT``).
FIT = "where_fits"
#: The intent of an answer read off the stack matrix (``intents.STRESS``).
STRESS = "workload_stress"
#: The class of symptoms (``SG.Symptom``).
SYMPTOM = "https://w3id.org/stackgraph/ns#Symptom"
#: Words a thing's name needs for a symptom named after it to be a failure of it (``_a_failure_of``).
FAILED_NAME_WORDS = 2
#: How a hedged answer opens (``reports.HEDGE``; spelled out to keep this a leaf).
HEDGED = "The closest the graph knows:"
#: How much more of the question the passage answer must cover to replace the intent's answer.
MARGIN = 0.1
#: Or how many times as much, by at least ``SMALL_MARGIN``: a long report's words are mostly
#: covered by neither answer, and a lead measured against what the first covers shows there.
CLEAR_LEAD = 1.25
SMALL_MARGIN = 0.05
#: Terms from which a question is long enough for that: a report (answering's ``REPORT_TERMS``).
LONG_QUESTION_TERMS = 9


def coverage(
    engine: Engine,
    question: str | Sequence[str],
    text: str,
    known_only: bool = True,
    named: Iterable[str] = (),
) -> float:
    """Share (by rarity weight) of the question's content words that ``text`` contains.

    ``question`` is the text or, better, its terms already parsed (``Question.terms``). ``named``
    are question terms the text accounts for without repeating them: the words with which the
    question named what the text is about ("GPU topology" for ``nvidia-smi topo -m``).

    ``known_only`` leaves out words the graph never uses ("tricky", "wondering"): no answer can
    cover them, so they only blur a comparison. Counted (as rare words), they show how much of the
    question lies outside the graph ("train my dog to sit").
    """
    wanted = set(terms(question) if isinstance(question, str) else question)
    if known_only:
        wanted = {t for t in wanted if t in engine.lexical.idf}
    if not wanted:
        return 0.0
    have = set(terms(text)) | set(named)
    weight = engine.lexical.weight
    return math.fsum(weight(t) for t in wanted & have) / math.fsum(weight(t) for t in wanted)


def better(
    engine: Engine,
    question: str | Sequence[str],
    first: Answer,
    challenger: Answer | None,
    described: bool = False,
    asked_to_define: bool = False,
    naming: Mapping[str, Iterable[str]] | None = None,
    asks_fix: bool = False,
    asks_setting: bool = False,
    asks_check: bool = False,
    reports_change: bool = False,
) -> Answer:
    """The answer of the two that covers more of the question (``first`` wins ties and margins).

    ``described``: the first answer is about an entity found by what the question describes (by
    meaning or word overlap), not one it names; it then loses ties too. ``asked_to_define``: the
    question asks what its subject is and nothing more ("what is it?"). ``naming`` maps each entity
    the question names to the terms that named it: an answer about that entity says those words
    by being about it, whatever its text calls it. ``asks_fix``: the question asks for a fix ("how
    to prevent it?"); an answer naming one is not replaced by one naming none, however many more
    of the report's words that one repeats. ``asks_setting``: the question asks for a setting
    ("which engine setting decides that?"); an answer leading with one beats one naming none.
    ``asks_check``: the question asks how to see or verify something ("how do I check GPU usage
    per pod?"); an answer naming the check of something the question names is not replaced by one
    naming none. ``reports_change``: the question reports a measurement changing ("TTFT went from 0.5s
    to 6s"); a symptom whose own check the question names is what it read, not what it asks."""
    if challenger is None or not challenger.answered:
        return first
    if not first.answered:
        return challenger
    if asks_fix and names_fix(first) and not names_fix(challenger):
        return first
    if asks_setting and leads_with_setting(challenger) and not names_setting(first):
        return challenger
    if asks_check and not described and names_check(first) and not names_check(challenger):
        return first
    mine_about, theirs_about = subject(first), subject(challenger)
    # The more specific answer keeps its place (a triage branch against its symptom's passage),
    # unless it is only a fallback definition of something named in passing: "Milvus is a vector
    # database" answers no question about tuning vector databases.
    if (
        not (described and first.intent == DEFINE)
        and mine_about
        and theirs_about
        and mine_about != theirs_about
        and any(narrower(engine, e.iri, theirs_about) for e in first.entities[:3] if not e.code)
    ):
        return first  # the intent's answer is about a part of what the passage is about
    if mine_about and theirs_about and _a_failure_of(engine, mine_about, theirs_about):
        # "stuck calling the same tool until the recursion limit" is answered by the agent loop
        # that does not terminate, and what fixes it, not by what an agent loop is, however many
        # more of the report's words the loop's definition repeats.
        return first
    if (
        reports_change
        and naming
        and mine_about
        and theirs_about != mine_about
        and theirs_about not in engine.problems
        and _checks_named(engine, mine_about, naming)
    ):
        # "TTFT went from 0.5s to 6s after the upgrade" reads the check of slow first tokens: the
        # problem it reports is the answer, not what TTFT is, however many more of the report's
        # words a statement about the metric repeats.
        return first
    if mine_about and theirs_about and _reads_its_instrument(engine, question, mine_about, theirs_about):
        return first  # "the trace puts it all in the generation span": what the trace found, answered
    if (
        first.intent == FIT
        and naming
        and {iri for iri, named in naming.items() if named} <= {e.iri for e in first.entities}
        and (challenger.answer.startswith(HEDGED) or not _named_terms(challenger, naming))
        # A placement given to a report of a problem ("... only 28 of 32 workers running. which
        # layer owns this?") is where something it names in passing sits; a problem it describes
        # is what it asks about.
        and not (described and theirs_about in engine.problems)
    ):
        # Only the closest statements, offered as such, or statements about none of what the
        # question names, against the placement of all of it: "does the nine-layer model need new
        # layers for TPUs with XLA?" is answered by where TPU and XLA sit, not by how UALink maps
        # onto an existing layer; "k8s: where's it go in the 9-layer model vs the 8-layer map?" by
        # where Kubernetes sits, not by another layer's crosswalk.
        return first
    if (
        asked_to_define
        and first.intent == DEFINE
        and not described
        and naming
        and mine_about in naming
        and theirs_about != mine_about
    ):
        # "What does the device plugin actually do?" asks what the thing it names is and nothing
        # more: a statement about something else that shares a stray word is no better answer.
        return first
    compared = {e.iri for e in first.entities}
    if (
        first.intent == COMPARE
        and naming
        and challenger.entities
        and challenger.entities[0].iri not in naming
        and challenger.entities[0].iri not in compared
        and len(compared & set(naming)) >= 2
    ):
        # A comparison of two things the question names, against an answer about a third: "L2 in
        # each, nine-layer vs ops map?" is answered by both L2s, not by the crosswalk of ops L7.
        # A passage about where both sides meet (the L1 section on training's reads and
        # checkpointing's writes) is no third thing: it competes.
        return first
    if first.intent == STRESS and naming and len(compared & set(naming)) >= 2:
        # "How much does RAG stress the fabric?" names the cell of the stack matrix it asks for
        # (a workload and a layer): read off the matrix, it is the answer, whatever a definition
        # of the workload repeats of the question's words.
        return first
    theirs = coverage(engine, question, challenger.answer, named=_named_terms(challenger, naming))
    mine = coverage(engine, question, first.answer, named=_named_terms(first, naming))
    if (
        first.intent == DEFINE
        and not asked_to_define
        and mine_about
        and mine_about == theirs_about
        and theirs >= mine
    ):
        # A definition nobody asked for ("what is it?" asks for one) is the fallback when nothing
        # answers the property asked about; a passage answer about the same entity that covers
        # as much of the question says a statement matched to the whole question (and the
        # definition beside it), so it answers more.
        return challenger
    if theirs >= mine and described:
        # The first answer's subject was found by what the question describes, as the passage
        # answer's was, which matched the whole question against every statement: a tie goes to
        # the one matched on the question's words and meaning at once.
        return challenger
    # On a long report every answer covers a small share of its words, so a clear lead is a
    # share of what the first covers, not only a fixed margin: 0.14 against 0.05 is one.
    wanted = set(terms(question) if isinstance(question, str) else question)
    clearly_more = (
        len(wanted) >= LONG_QUESTION_TERMS and theirs >= CLEAR_LEAD * mine and theirs - mine >= SMALL_MARGIN
    )
    return challenger if theirs > mine + MARGIN or clearly_more else first


#: The edge from a fix to the problem it fixes (``SG.mitigates``; spelled out to keep this a leaf).
MITIGATES = "https://w3id.org/stackgraph/ns#mitigates"


#: The type label of a configuration parameter as answers show it (``sg:ConfigurationParameter``).
SETTING = "configuration parameter"


def leads_with_setting(answer: Answer) -> bool:
    """Whether the answer is first about a configuration parameter (``max_model_len``)."""
    return bool(answer.entities) and answer.entities[0].type == SETTING


def names_setting(answer: Answer) -> bool:
    return any(e.type == SETTING for e in answer.entities)


#: The edges from what is checked to its check (``SG.diagnosedBy``, ``SG.whereToLook``).
CHECKED_BY = (
    "https://w3id.org/stackgraph/ns#diagnosedBy",
    "https://w3id.org/stackgraph/ns#whereToLook",
)


def rests_on(answer: Answer, *predicates: object) -> bool:
    """Whether the answer rests on a fact of one of these predicates (IRIs or their strings)."""
    wanted = {str(p) for p in predicates}
    return any(f.predicate in wanted for f in answer.facts)


def names_check(answer: Answer) -> bool:
    """Whether the answer rests on a check of something (a ``diagnosedBy`` or ``whereToLook`` fact)."""
    return rests_on(answer, *CHECKED_BY)


def names_fix(answer: Answer) -> bool:
    """Whether the answer rests on a fix of a problem (an ``sg:mitigates`` fact)."""
    return rests_on(answer, MITIGATES)


def _named_terms(answer: Answer, naming: Mapping[str, Iterable[str]] | None) -> set[str]:
    """The question's terms that named one of the entities the answer is about."""
    if not naming:
        return set()
    return {t for e in answer.entities if e.iri in naming for t in naming[e.iri]}


#: Edges from a broader entity to the narrower ones it contains: a symptom to its triage step, a
#: step to its branches and further steps, a concept to its narrower concepts.
_CONTAINS = (
    "https://w3id.org/stackgraph/ns#triage",
    "https://w3id.org/stackgraph/ns#branch",
    "https://w3id.org/stackgraph/ns#nextStep",
    "http://www.w3.org/2004/02/skos/core#narrower",
)


def narrower(engine: Engine, narrow: str, broad: str, depth: int = 3) -> bool:
    """Whether ``narrow`` lies inside ``broad`` (a branch of its triage, a narrower concept): the
    answer about it is the more specific one, and a passage about ``broad`` must not replace it
    for matching a few more of the question's words."""
    from stackgraph.graph.answering.evidence import fetch

    frontier = [broad]
    for _ in range(depth):
        found = [t for iri in frontier for p in _CONTAINS for t in fetch(engine, iri).iris(p)]
        if narrow in found:
            return True
        frontier = found
    broader = fetch(engine, narrow).iris("http://www.w3.org/2004/02/skos/core#broader")
    return broad in broader


#: Edges from a problem (or a triage step) to what shows it: the checks a report may have read.
_SHOWN_BY = ("https://w3id.org/stackgraph/ns#whereToLook", "https://w3id.org/stackgraph/ns#diagnosedBy")
#: Edges from a practice to the check it applies.
_APPLIES_CHECK = ("https://w3id.org/stackgraph/ns#uses",)


def _reads_its_instrument(engine: Engine, question: str | Sequence[str], problem: str, other: str) -> bool:
    """Whether ``other`` is a check of ``problem`` (or of the symptom and triage step above it), or
    a practice applying one, that the question says it has read: "the trace puts nearly all of it
    in the generation span" reports what the trace found, and the answer is the problem the
    finding points to, not the advice to take a trace."""
    from stackgraph.graph.answering.evidence import fetch

    # Only a triage branch the finding selects: a symptom's own check may be just what is asked
    # next ("nova-compute says enabled, so is it fine?" is read in the check's columns), and a
    # branch that is the check's absence ("no trace available") is no finding of it.
    branch = "https://w3id.org/stackgraph/ns#TriageBranch"
    if not engine.catalog.is_a(problem, branch) or problem in engine.absences:
        return False
    above, frontier = {problem}, [problem]
    for _ in range(3):
        frontier = [s for iri in frontier for p in _CONTAINS for s in fetch(engine, iri).incoming(p)]
        above.update(frontier)
    checks = {c for iri in above for p in _SHOWN_BY for c in fetch(engine, iri).iris(p)}
    applied = {c for p in _APPLIES_CHECK for c in fetch(engine, other).iris(p)}
    if other not in checks and not applied & checks:
        return False
    said = set(terms(question)) if isinstance(question, str) else set(question)
    read = [c for c in ({other} | applied) & checks if engine.catalog.get(c)]
    return any(set(terms(engine.catalog.label(c))) & said for c in read)


def subject(answer: Answer) -> str | None:
    """The entity an answer is mainly about: its first entity that is not a layer."""
    return next((e.iri for e in answer.entities if not e.code), None)


def _checks_named(engine: Engine, problem: str, naming: Mapping[str, Iterable[str]]) -> bool:
    """Whether ``problem`` is a symptom one of whose checks (where to look, what diagnoses it) the
    question names."""
    from stackgraph.graph.answering.evidence import fetch

    if not engine.catalog.is_a(problem, SYMPTOM):
        return False
    checks = {c for p in _SHOWN_BY for c in fetch(engine, problem).iris(p)}
    return any(iri in checks for iri, words in naming.items() if words)


def _a_failure_of(engine: Engine, problem: str, thing: str) -> bool:
    """Whether ``problem`` is a symptom whose name holds a name of ``thing`` (of two words or more),
    itself no problem: "Agent loop does not terminate" is a failure of the agent loop, the more
    specific answer to a report of it. A cause named after a thing ("Liveness probe misconfigured
    for slow startup") is not: a question about probes is often about the thing itself, and a
    one-word name ("RAG") is in too many problems' names to say which failure is meant."""
    if not engine.catalog.is_a(problem, SYMPTOM) or thing in engine.problems:
        return False
    rec = engine.catalog.get(thing)
    if rec is None:
        return False
    said = f" {' '.join(terms(engine.catalog.display(problem)))} "
    return any(
        len(words := terms(name)) >= FAILED_NAME_WORDS and f" {' '.join(words)} " in said
        for name in engine.catalog.all_labels(rec)
    )
