"""A question parsed once: the value linking and every answerer read instead of the raw string.

Before, each step normalized, tokenized and re-linked the text on its own (the passage ranker,
the competition between answers, linking, the follow-up rules), and they could disagree. A
``Question`` holds, computed once per question:

- ``text``: the sanitized question as the user wrote it (what answers echo);
- ``normalized``: the folded form names are matched in (``catalog.normalize``);
- ``terms``: its content-word stems (``lexical.terms``), what word overlap and coverage use;
- ``mentions``: the entities it names, with word spans and how each matched (exact, code, fuzzy);
- ``layer_refs``: the layer references it writes, each with its model ("nine L8", "the
  operational map's L2"), from ``layer_refs``;
- ``model_hint``: the layer model the question names as a whole, if any;
- ``intent``: the intent guessed from the wording, with how clearly it was said.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from stackgraph.graph.answering import intents
from stackgraph.graph.catalog import normalize
from stackgraph.graph.layer_refs import LayerRef, find_layer_refs
from stackgraph.graph.lexical import terms

if TYPE_CHECKING:
    from stackgraph.graph.engine import Engine
    from stackgraph.graph.linking import Mention


@dataclass(frozen=True)
class Question:
    text: str
    normalized: str
    terms: tuple[str, ...]
    mentions: tuple[Mention, ...]
    layer_refs: tuple[LayerRef, ...]
    model_hint: str | None
    intent: intents.IntentGuess

    @classmethod
    def parse(cls, engine: Engine, text: str, intent: str | None = None) -> Question:
        """Parse sanitized ``text``; ``intent`` (a caller that already knows it) skips guessing."""
        guess = intents.IntentGuess(intent, 1.0) if intent else intents.detect(text)
        prefer = "Workload" if guess.intent == intents.STRESS else None
        return cls(
            text=text,
            normalized=normalize(text),
            terms=tuple(terms(text)),
            mentions=tuple(engine.linker.mentions(text, prefer=prefer)),
            layer_refs=tuple(find_layer_refs(text)),
            model_hint=engine.linker.model_hint(text),
            intent=guess,
        )

    @property
    def named(self) -> list[str]:
        """The IRIs the question names, in the order it names them."""
        return [m.iri for m in self.mentions]

    @property
    def residual_terms(self) -> tuple[str, ...]:
        """The terms outside the words that name an entity: what the question says *about* the
        things it names ("equipment", "need" of "what equipment do I need to use RoCE?")."""
        naming = {t for m in self.mentions for t in terms(m.surface)}
        return tuple(t for t in self.terms if t not in naming)

    def with_intent(self, guess: intents.IntentGuess) -> Question:
        """The same question read with another intent (a follow-up taking its predecessor's)."""
        from dataclasses import replace

        return replace(self, intent=guess)
