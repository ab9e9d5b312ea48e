"""Small helpers that turn graph values into sentences a person would write."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from stackgraph.graph.catalog import Catalog

#: The longest answer text any surface gets (the evaluation contract says 1,200).
MAX_ANSWER_CHARS = 1200

#: A fenced block of pasted code, logs or config ("```" to "```", or to the end of an unclosed one).
FENCED_BLOCK = re.compile(r"```.*?(?:```|\Z)", re.DOTALL)
#: Where one sentence ends and the next begins (a version like "4.2.2" has no space after its dots).
SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s+|\n+")

_MODEL_SHORT = {
    "https://w3id.org/stackgraph/id/nine-layer-model": "nine-layer model",
    "https://w3id.org/stackgraph/id/eight-layer-map": "eight-layer operational map",
}


def model_name(model_iri: str | None) -> str:
    return _MODEL_SHORT.get(model_iri or "", "layer model")


def layer_phrase(catalog: Catalog, iri: str, with_model: bool = False) -> str:
    """ "L8 Node Interconnect", optionally "(nine-layer model)" after it."""
    rec = catalog.get(iri)
    if rec is None:
        return catalog.label(iri)
    text = f"{rec.code} {rec.label}" if rec.code else rec.label
    if with_model and rec.model:
        text += f" ({model_name(rec.model)})"
    return text


def join(items: Sequence[str], word: str = "and") -> str:
    items = [i for i in items if i]
    if not items:
        return ""
    if len(items) == 1:
        return items[0]
    return ", ".join(items[:-1]) + f" {word} " + items[-1]


def prose(text: str) -> str:
    """The text less its fenced blocks: what a report means is in its sentences, while the logs,
    configs and stack traces pasted between them share words with everything and, once the
    encoder truncates, would crowd those sentences out. A text that is all code stays whole."""
    stripped = FENCED_BLOCK.sub(" ", text)
    return stripped if stripped.strip(" .?!:;,\n") else text


def first_sentences(text: str, limit: int = 400) -> str:
    """The leading sentences of a text that fit in ``limit`` characters (at least one, cut)."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    sentences = re.split(r"(?<=[.!?])\s+", text)
    out = ""
    for sentence in sentences:
        if len(out) + len(sentence) + 1 > limit:
            break
        out = f"{out} {sentence}".strip()
    return out or text[: limit - 1].rstrip() + "…"


def sentence(text: str) -> str:
    """End a clause with a full stop. Case is left alone: labels such as "cuBLAS" start sentences."""
    text = text.strip()
    if not text or text[-1] in ".!?:":
        return text
    if text[-1] == ")" and (text.startswith("(") or text[-2:-1] in (".", "!", "?")):
        return text  # a whole sentence in brackets, or one ending inside them
    return text + "."


_BOUNDARY = re.compile(r"\. |\n")


def clip(text: str, limit: int = MAX_ANSWER_CHARS) -> str:
    """Cut a composed answer to the limit at a sentence or line boundary."""
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    # The last boundary outside parentheses: "To check InfiniBand: ibstat (Port state and rate
    # per HCA. A port negotiated ...)" is not cut after "HCA.", which would leave "(" open.
    boundaries = [m.start() for m in _BOUNDARY.finditer(cut) if m.start() > limit * 0.6]
    balanced = [b for b in boundaries if cut[: b + 1].count("(") <= cut[: b + 1].count(")")]
    if balanced or boundaries:
        return cut[: (balanced or boundaries)[-1] + 1].rstrip()
    return cut.rstrip() + "…"


def agree(subject: str, singular: str, plural: str) -> str:
    """The verb form for a label: "Vector databases fit", "NVLink fits", "NCCL tests fit"."""
    last = subject.split()[-1] if subject.split() else ""
    looks_plural = (
        len(last) > 3
        and last.endswith("s")
        and not last.endswith(("ss", "us", "is"))
        and not any(ch.isupper() for ch in last[1:])  # a name such as MLOps or LLMOps
    )
    return plural if looks_plural else singular


def without_leading_label(text: str, label: str) -> str:
    """A text less its first sentence when that sentence only restates the label."""
    first, _, rest = text.partition(". ")
    if rest and first.strip().rstrip(".").lower() == label.strip().rstrip(".").lower():
        return rest
    return text


#: Sentences shorter than this are kept even when found in the answer: too short to be a repeat.
UNSAID_MIN = 24
#: Leading characters of a statement compared to tell whether it was said already.
SAME_PREFIX = 60


def _opening(text: str) -> str:
    return " ".join(text.lower().split())[:SAME_PREFIX]


def said_already(text: str, said: str) -> bool:
    """Whether ``said`` already contains the statement ``text`` (its opening, case and spacing
    aside)."""
    return _opening(text) in " ".join(said.lower().split())


def same_opening(a: str, b: str) -> bool:
    """Whether two statements open alike (case and spacing aside): the same sentence."""
    return _opening(a) == _opening(b)


def unsaid(text: str, said: str) -> str:
    """``text`` without its sentences that ``said`` already contains: a definition often repeats
    a note the answer has just given ("The product surface. An agent is a loop: ...")."""
    kept = [
        s
        for s in re.split(r"(?<=[.!?])\s+", text.strip())
        if s and (len(s) < UNSAID_MIN or not said_already(s, said))
    ]
    return " ".join(kept)


def one_line(command: str) -> str:
    """A command as one line: shell continuations joined, runs of blanks folded."""
    return " ".join(command.replace("\\\n", "").split())
