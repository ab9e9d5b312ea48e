"""One exchange of the chat: the question, the answer as Markdown, and how it was reached.

The answer names its layers on a line of its own; under it a collapsed "How I answered" shows the
facts, sources and SPARQL the engine used. A declined answer lists the entities the engine thinks
were meant as choices: picking one asks about it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import Collapsible, Markdown, OptionList, Static
from textual.widgets.option_list import Option

from stackgraph.tui import keys
from stackgraph.tui.clipboard import copy
from stackgraph.tui.messages import AskQuestion

if TYPE_CHECKING:
    from stackgraph.graph.model import Answer, Fact

#: Facts shown under "How I answered"; the rest are counted, not listed.
MAX_FACTS = 12
MAX_SOURCES = 8


def strip_prefixes(query: str) -> str:
    """The query without its leading PREFIX lines: every surface predeclares the same ones."""
    lines = query.strip("\n").split("\n")
    while lines and lines[0].lstrip().upper().startswith("PREFIX"):
        lines.pop(0)
    return "\n".join(lines)


def layers_line(answer: Answer) -> str:
    """ "**Layer** L8 Node Interconnect · L2 GPUs / Networking", or "" when no layer is named."""
    layers = [e for e in answer.entities if e.code]
    if not layers:
        return ""
    noun = "Layer" if len(layers) == 1 else "Layers"
    return f"**{noun}** " + " · ".join(e.display for e in layers)


def answer_markdown(answer: Answer) -> str:
    parts = [answer.answer]
    line = layers_line(answer) if answer.answered else ""
    if line:
        parts.insert(0, line)
    if not answer.answered and answer.suggestions and not answer.error:
        parts.append("*Did you mean one of these? Pick one to ask about it.*")
    return "\n\n".join(parts)


def _provenance(fact: Fact) -> str:
    """ " *(inferred · Glossary § 5. Model Serving & Inference)*": a fact's basis, when it is not
    stated, and the section it rests on, in the short form the side panel has room for."""
    parts = [fact.basis] if fact.basis != "stated" else []
    if fact.source:
        parts.append(fact.source.short_display)
    return f" *({' · '.join(parts)})*" if parts else ""


def details_markdown(answer: Answer) -> str:
    """The evidence: intent, facts, sources and SPARQL, in that order."""
    out = [f"**Intent** `{answer.intent}` · confidence {answer.confidence:.2f}"]
    if answer.facts:
        out.append("**Facts**")
        out.append("\n".join(f"- {fact.text}{_provenance(fact)}" for fact in answer.facts[:MAX_FACTS]))
        if len(answer.facts) > MAX_FACTS:
            out.append(f"*…and {len(answer.facts) - MAX_FACTS} more.*")
    if answer.sources:
        out.append("**Sources**")
        out.append("\n".join(f"- {s.display}" for s in answer.sources[:MAX_SOURCES]))
    if answer.sparql:
        out.append("**SPARQL** (ctrl+o opens it in the SPARQL tab)")
        out.extend(f"```sparql\n{strip_prefixes(query)}\n```" for query in answer.sparql)
    return "\n\n".join(out)


def context_of(answer: Answer, guess: str | None) -> str | None:
    """The IRI a follow-up answer was about, or None when the answer stands on its own.

    The engine's own ``Answer.context`` wins when it exists (a ref, an IRI or a label); otherwise
    the pane's guess (the conversation's focus when the question leaned on it) is kept only if the
    answer is about that entity.
    """
    context = getattr(answer, "context", None)
    if context:
        iri = getattr(context, "iri", None)
        if iri or "://" in str(context):
            return iri or str(context)
        # The engine names the subject by its display label ("PFC"): the answer's entity of that name.
        named = str(context).casefold()
        for entity in answer.entities:
            if named in (entity.display.casefold(), entity.label.casefold()):
                return entity.iri
        return guess or str(context)
    if guess and any(e.iri == guess for e in answer.entities):
        return guess
    return None


def plain_answer(answer: Answer) -> str:
    """What ``y`` copies: the answer's text and its layers, without the Markdown emphasis."""
    line = layers_line(answer).replace("**", "") if answer.answered else ""
    return "\n\n".join(part for part in (line, answer.answer) if part)


class AnswerView(Vertical, can_focus=True):
    """A question and, once the engine has spoken, its answer.

    The answer's widgets are mounted when the answer arrives, not updated in place: a Markdown
    updated before it has finished mounting would be reset to its initial text. The view takes
    focus (shift+tab from the question box, up/down between answers) so ``y`` and ``s`` copy it.
    """

    BINDINGS = keys.ANSWER

    def __init__(self, question: str, waiting: str = "Thinking…", about: str | None = None, **kwargs) -> None:
        super().__init__(**kwargs)
        self.question = question
        #: The conversation's focus when the question was asked, if it leaned on an earlier turn.
        self.about_guess = about
        #: What the answer followed up on (an IRI), once known.
        self.about: str | None = None
        self._waiting = waiting
        #: The engine's answer, once it has arrived.
        self.answer: Answer | None = None
        self._error: str | None = None
        self._ready = False

    def on_mount(self) -> None:
        # An answer can arrive before this view has composed its children; draw it now.
        self._ready = True
        if self._error is not None:
            self.show_error(self._error)
        elif self.answer is not None:
            self.show_answer(self.answer)

    def compose(self) -> ComposeResult:
        yield Static(Content.assemble(("› ", "bold $accent"), (self.question, "bold")), classes="question")
        yield Static(Content.styled(self._waiting, "italic $text-muted"), classes="waiting")

    def set_waiting(self, text: str) -> None:
        self._waiting = text
        for waiting in self.query(".waiting").results(Static):
            waiting.update(Content.styled(text, "italic $text-muted"))

    def _replace_waiting(self, *widgets) -> None:
        self.query(".waiting").remove()
        self.mount_all(widgets)

    def show_answer(self, answer: Answer) -> None:
        self.answer = answer
        if not self._ready:
            return
        self.set_class(not answer.answered, "-declined")
        widgets: list = []
        self.about = context_of(answer, self.about_guess)
        if self.about:
            label = next((e.display for e in answer.entities if e.iri == self.about), None)
            if label is None and hasattr(self.app, "engine") and self.app.engine is not None:
                catalog = self.app.engine.catalog
                label = catalog.ref(self.about).display if self.about in catalog else self.about
            widgets.append(
                Static(
                    Content.styled(f"↳ follow-up about {label or self.about}", "italic $text-muted"),
                    classes="about",
                )
            )
        widgets.append(Markdown(answer_markdown(answer), classes="answer", open_links=False))
        if not answer.answered and answer.suggestions and not answer.error:
            widgets.append(
                OptionList(
                    *(
                        Option(Content.assemble((s.display, "bold"), "  ", (s.type, "dim")), id=s.iri)
                        for s in answer.suggestions
                    ),
                    classes="suggestions",
                )
            )
        if answer.answered or answer.facts or answer.sparql:
            details = Markdown(details_markdown(answer), classes="details-text", open_links=False)
            widgets.append(Collapsible(details, title="How I answered", collapsed=True, classes="details"))
        self._replace_waiting(*widgets)

    def show_error(self, message: str) -> None:
        self._error = message
        if not self._ready:
            return
        self.add_class("-failed")
        self._replace_waiting(
            Markdown(f"**Something went wrong:** {message}", classes="answer", open_links=False)
        )

    # ------------------------------------------------------------------ keys on a focused answer

    def action_copy_answer(self) -> None:
        if self.answer is not None:
            copy(self.app, plain_answer(self.answer), "the answer")

    def action_copy_sparql(self) -> None:
        if self.answer is not None:
            copy(self.app, "\n\n".join(strip_prefixes(q) for q in self.answer.sparql), "the answer's SPARQL")

    def action_focus_sibling(self, step: int) -> None:
        """Up/down move between answers; past the newest, back to the question box."""
        views = list(self.screen.query(AnswerView))
        index = views.index(self) + step
        if 0 <= index < len(views):
            views[index].focus()
            views[index].scroll_visible(animate=False)
        elif index >= len(views):
            self.screen.query_one("#ask-input").focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if self.answer is None:
            return
        chosen = next((s for s in self.answer.suggestions if s.iri == event.option.id), None)
        if chosen is not None:
            self.post_message(AskQuestion(f"What is {chosen.display}?"))
