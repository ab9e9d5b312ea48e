"""Conversation state: what earlier turns were about, so follow-ups can say "it" and "that layer".

A conversation remembers the entities each answer was about (most recent first) and the layers it
named. It holds no graph data, only IRIs, so it is cheap to keep many (the MCP server keeps one per
conversation id).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field

from stackgraph.graph.model import Answer

#: Words that make a question lean on an earlier turn.
_FOLLOW_UP = re.compile(
    r"\b(it|its|it's|that|this|they|them|their|those|these|there|same|else|too|also|one|instead)\b|^\s*(and|what about|how about|so)\b"
    # "why isn't reading the code enough then?": a closing "then" carries on from the last turn.
    r"|\bthen\s*[?.!]*\s*$",
    re.IGNORECASE,
)
#: "that layer", or a word for a place in the stack ("the counterpart in that spot", "in the
#: same slot"): the layer the conversation placed something in.
_LAYER_REFERENCE = re.compile(r"\b(that|this|the same|same)\s+(?:layer|spot|slot)\b", re.IGNORECASE)
#: Words asking for what sits beside the last subject ("what else lives alongside it there?").
_SIBLINGS = re.compile(r"\b(else|others?|alongside|besides|beside|there|same)\b", re.IGNORECASE)


#: A numbered item in an answer: "1) Heavy-weight pre-staging", "2. Was it ranked too low".
_ITEM_MARK = re.compile(r"(?:^|(?<=[\s(,;:]))(\d{1,2})[).]\s+")
#: A question's reference to one numbered item of the last answer: "step 2", "phase #3", "the
#: second one", "the last step".
_ITEM_BY_NUMBER = re.compile(
    r"\b(?:step|phase|stage|item|point|number|no\.|#)\s*#?(\d{1,2})\b", re.IGNORECASE
)
_ITEM_BY_ORDINAL = re.compile(
    r"\bthe\s+(first|second|third|fourth|fifth|sixth|last)\s+(?:step|phase|stage|item|point|one)\b",
    re.IGNORECASE,
)
_ORDINALS = {"first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "last": -1}
#: Where a numbered item's text ends, when no next number does: the end of its sentence.
_ITEM_END = re.compile(r"(?<=[.?!])\s+(?=[A-Z])|\n")


def numbered_items(text: str) -> list[str]:
    """The items of the first numbered list in ``text`` (markers 1, 2, 3... in order), each up to
    the next marker or the end of its sentence; empty when there is no list of two or more."""
    marks = [m for m in _ITEM_MARK.finditer(text)]
    run: list[re.Match[str]] = []
    for mark in marks:
        if int(mark.group(1)) == len(run) + 1:
            run.append(mark)
        elif run and len(run) >= 2:
            break
    if len(run) < 2:
        return []
    items = []
    for n, mark in enumerate(run):
        end = run[n + 1].start() if n + 1 < len(run) else len(text)
        body = text[mark.end() : end]
        stop = _ITEM_END.search(body)
        body = body[: stop.start()] if stop else body
        items.append(body.strip().rstrip(",;.").removesuffix(" and").strip())
    return items


#: A list run into a sentence after a colon: "the order is almost always: was the document
#: retrieved; was it ranked too low; was it present in context and still ignored."
_RUN_IN_LIST = re.compile(r":\s+([^.:]+?;[^.:]+?;[^.:]+?)(?:\.(?:\s|$)|$)")
#: Items at least a run-in list holds, so that a stray semicolon makes none.
RUN_IN_ITEMS = 3


def listed_items(text: str) -> list[str]:
    """The items of the first numbered list in ``text``, else of the first run-in list (after a
    colon, separated by semicolons, three or more): what "step 2" or "the first one" can mean."""
    numbered = numbered_items(text)
    if numbered:
        return numbered
    found = _RUN_IN_LIST.search(text)
    if not found:
        return []
    items = [part.strip().removeprefix("and ").strip() for part in found.group(1).split(";")]
    return items if len(items) >= RUN_IN_ITEMS and all(items) else []


@dataclass
class Turn:
    question: str
    intent: str
    focus: str | None  # the IRI the answer was mainly about
    layers: tuple[str, ...]  # the layer IRIs it named
    #: The engine declined it: it was about something the graph lacks.
    declined: bool = False
    #: What the answer said: a follow-up's answer does not say it again.
    answer: str = ""
    #: What its question named surely, in order: "where do they land?" after a turn naming two
    #: interconnects asks about both.
    named: tuple[str, ...] = ()


@dataclass
class Conversation:
    """The turns so far; ``remember`` is called by the engine after each answer."""

    turns: list[Turn] = field(default_factory=list)
    max_turns: int = 20

    def remember(
        self,
        answer: Answer,
        named: Sequence[str] = (),
        sure: Sequence[str] = (),
        checks: Collection[str] = (),
    ) -> None:
        """Record a turn. A declined one is kept too, about the first thing its question named
        (``named``), if any: after "what is PFC?" and "how do I bake sourdough bread?" (declined,
        naming nothing), "how long does it take?" is about the bread, not PFC; after "who
        invented the GPU?" (declined), "what layer is it in?" is about the GPU. Input that was no
        question at all (``answer.error``) is no turn. ``sure``: what the question named surely.
        ``checks``: which of the answer's entities are checks (commands, tools, metrics)."""
        if answer.error:
            return
        if not answer.answered:
            self.turns.append(
                Turn(
                    answer.question,
                    answer.intent,
                    next(iter(named), None),
                    (),
                    declined=True,
                    named=tuple(sure),
                )
            )
        else:
            focus = next((e.iri for e in answer.entities if not e.code), None)
            if focus is None and answer.context and self.focus is not None:
                # Answered about the subject before in layers alone ("so it's not one of the nine
                # layers?" after Kubernetes): the conversation is still about that subject, and
                # "why doesn't NCCL care about it?" next asks about Kubernetes, not a layer.
                focus = self.focus
            elif focus is None and answer.entities:
                focus = answer.entities[0].iri
            lead = answer.facts[0].subject if answer.facts else None
            subjects = {e.iri for e in answer.entities if not e.code and e.iri not in checks}
            if answer.context and lead and lead != focus and lead in subjects:
                # Answered in the context of the subject before, a turn whose statements lead with
                # another thing moved on to it: after "the storage chokes every 30 minutes" and
                # "write bursts from every node at once", answered by checkpointing, "why then?"
                # asks about checkpointing. A check the answer leads with (the trace, the
                # retrieval logs) is how to look at the subject, not a new one.
                focus = lead
            layers = tuple(e.iri for e in answer.entities if e.code)
            self.turns.append(
                Turn(answer.question, answer.intent, focus, layers, answer=answer.answer, named=tuple(sure))
            )
        del self.turns[: -self.max_turns]

    @property
    def focus(self) -> str | None:
        """The entity the last turn that had one was about; a declined turn ends the search with
        what it named, or nothing."""
        return next((t.focus for t in reversed(self.turns) if t.focus or t.declined), None)

    @property
    def last_layer(self) -> str | None:
        """The layer most recently named (for "that layer"); none after a declined turn."""
        for turn in reversed(self.turns):
            if turn.declined:
                return None
            if turn.layers:
                return turn.layers[0]
        return None

    def spell_out_item(self, question: str) -> str:
        """``question`` with a reference to an item of the last answer's list followed by that
        item: "how is step 2 actually done?" after "1) pre-staging, 2) CDC-based vector delta
        sync (Airflow/Kafka), 3) ..." asks about the delta sync, which its own words never name."""
        if not self.turns or not self.turns[-1].answer:
            return question
        found = _ITEM_BY_NUMBER.search(question)
        if found:
            number = int(found.group(1))
        else:
            found = _ITEM_BY_ORDINAL.search(question)
            if not found:
                return question
            number = _ORDINALS[found.group(1).lower()]
        items = listed_items(self.turns[-1].answer)
        if not items or number == 0 or number > len(items):
            return question
        item = items[number - 1] if number > 0 else items[-1]
        return f"{question[: found.end()]} ({item}){question[found.end() :]}"

    @staticmethod
    def leans_on_context(question: str) -> bool:
        return bool(_FOLLOW_UP.search(question))

    @staticmethod
    def refers_to_layer(question: str, label: str | None = None) -> bool:
        """Whether the question points at a layer: "that layer", or the last layer by the head
        noun of its ``label`` ("that path" after the Storage Data Path, "that fabric" after the
        Network Fabric)."""
        if _LAYER_REFERENCE.search(question):
            return True
        head = label.split()[-1].lower() if label else ""
        return head.isalpha() and bool(
            re.search(rf"\b(?:that|this|the same|same)\s+{re.escape(head)}\b", question, re.IGNORECASE)
        )

    @staticmethod
    def asks_for_siblings(question: str) -> bool:
        """Whether a listing question asks what sits beside the last subject, in its layer."""
        return bool(_SIBLINGS.search(question))
