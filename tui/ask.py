"""The Ask tab: a chat with the engine, one Conversation per session so follow-ups work.

Questions are answered one at a time, in order, in a thread worker (the UI never waits on the
engine). Questions typed before the graph has loaded wait in the same queue and are answered as
soon as it is ready. The log is anchored to its end, so the newest answer is the one on screen
after every answer and every resize; a follow-up is marked with what it was about.
"""

from __future__ import annotations

import threading
from collections import deque
from typing import TYPE_CHECKING

from textual import on, work
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.widgets import Input, Static

from stackgraph.graph.conversation import Conversation
from stackgraph.tui import keys
from stackgraph.tui.answer import AnswerView, plain_answer, strip_prefixes
from stackgraph.tui.clipboard import copy
from stackgraph.tui.history_input import HistoryInput
from stackgraph.tui.messages import AskQuestion, OpenEntity, OpenSparql
from stackgraph.tui.threads import deliver

if TYPE_CHECKING:
    from stackgraph.graph.engine import Engine
    from stackgraph.graph.model import Answer
    from stackgraph.tui.history import History

WELCOME = """\
[b]Ask about the AI infrastructure stack.[/b] For example:
  [i]which layer owns CUDA OOM?[/i]    [i]where does NVLink fit?[/i]    [i]how do I test it?[/i]
[dim]enter asks · ↑/↓ history · shift+tab selects an answer (y copies) · F1 keys[/dim]"""


class ChatLog(VerticalScroll):
    """The scrolling log, anchored to the bottom so the newest exchange is the one on screen.

    Textual's anchor keeps the log at its end as answers mount and as the terminal is resized,
    until the user scrolls up; scrolling back to the end anchors it again.
    """

    can_focus = False

    def on_mount(self) -> None:
        self.anchor()

    def reveal(self, view: AnswerView) -> None:
        """Show ``view`` whole, or from its top when it is taller than the log.

        Runs after the refresh that lays the new widgets out: before that, their height is not
        known and a scroll to the end stops short of them.
        """
        if view.outer_size.height > self.scrollable_content_region.height:
            self.release_anchor()
            self.scroll_to_widget(view, animate=False, top=True)
        else:
            self.anchor()


class AskPane(Vertical):
    """The chat: a scrolling log of AnswerViews above the question box."""

    BINDINGS = keys.ASK

    def __init__(self, history: History, **kwargs) -> None:
        super().__init__(**kwargs)
        self.history = history
        self.engine: Engine | None = None
        self.conversation = Conversation()
        self._queue: deque[tuple[str, AnswerView, Conversation]] = deque()
        self._lock = threading.Lock()
        self._draining = False

    def compose(self) -> ComposeResult:
        with ChatLog(id="ask-log"):
            yield Static(WELCOME, id="ask-welcome")
        yield HistoryInput(
            self.history,
            "questions",
            placeholder="Ask a question and press enter",
            id="ask-input",
        )

    def focus_default(self) -> None:
        self.query_one("#ask-input", HistoryInput).focus()

    def engine_ready(self, engine: Engine) -> None:
        self.engine = engine
        for _question, view, _conversation in list(self._queue):
            view.set_waiting("Thinking…")
        self._start()

    # ------------------------------------------------------------------ asking

    @on(Input.Submitted, "#ask-input")
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        question = event.value.strip()
        if not question:
            return
        box = self.query_one("#ask-input", HistoryInput)
        box.value = ""
        box.remember(question)
        self.ask(question)

    def ask(self, question: str) -> AnswerView:
        """Add ``question`` to the chat; it is answered when its turn (and the engine) comes."""
        waiting = "Thinking…" if self.engine is not None else "Queued: the graph is still loading…"
        view = AnswerView(question, waiting, about=self._follow_up_of(question))
        log = self.query_one("#ask-log", ChatLog)
        log.mount(view)
        with self._lock:
            self._queue.append((question, view, self.conversation))
        self._start()
        log.anchor()
        return view

    def _follow_up_of(self, question: str) -> str | None:
        """The IRI a follow-up leans on (the conversation's focus), or None for a fresh question.

        Only a guess until the answer comes: ``AnswerView.show_answer`` keeps the mark only when
        the answer is about that entity (or reads the engine's own ``Answer.context`` if it has one).
        """
        if self.conversation.focus and Conversation.leans_on_context(question):
            return self.conversation.focus
        return None

    def _start(self) -> None:
        with self._lock:
            if self.engine is None or self._draining or not self._queue:
                return
            self._draining = True
        self._drain()

    @work(thread=True, group="ask")
    def _drain(self) -> None:
        """Answer queued questions in order until none is left."""
        engine = self.engine
        assert engine is not None
        while True:
            with self._lock:
                if not self._queue:
                    self._draining = False
                    return
                question, view, conversation = self._queue.popleft()
            try:
                answer = engine.ask(question, conversation)
            except Exception as problem:  # an engine bug must cost one answer, not the app
                deliver(self.app, view.show_error, f"{type(problem).__name__}: {problem}")
                continue
            deliver(self.app, self._answered, view, answer)

    def _answered(self, view: AnswerView, answer: Answer) -> None:
        view.show_answer(answer)
        log = self.query_one("#ask-log", ChatLog)
        log.call_after_refresh(log.reveal, view)

    @on(AskQuestion)
    def _ask_suggestion(self, message: AskQuestion) -> None:
        message.stop()
        self.query_one("#ask-input", HistoryInput).remember(message.question)
        self.ask(message.question)
        self.focus_default()

    # ------------------------------------------------------------------ actions

    def _target(self, wanted) -> Answer | None:
        """The answer an action applies to: the one holding focus, else the newest that fits."""
        focused = self.screen.focused
        if focused is not None:
            for node in focused.ancestors_with_self:
                if isinstance(node, AnswerView) and node.answer is not None and wanted(node.answer):
                    return node.answer
        for view in reversed(list(self.query(AnswerView))):
            if view.answer is not None and wanted(view.answer):
                return view.answer
        return None

    def action_open_sparql(self) -> None:
        answer = self._target(lambda a: bool(a.sparql))
        if answer is None:
            self.notify("No answer with SPARQL yet: ask a question first.", severity="warning")
            return
        self.post_message(OpenSparql(strip_prefixes(answer.sparql[0])))

    def action_open_entity(self) -> None:
        answer = self._target(lambda a: bool(a.entities))
        if answer is None:
            self.notify("No answer about an entity yet.", severity="warning")
            return
        focus = next((e for e in answer.entities if not e.code), answer.entities[0])
        self.post_message(OpenEntity(focus.iri))

    def action_new_conversation(self) -> None:
        self.conversation = Conversation()
        log = self.query_one("#ask-log", ChatLog)
        log.mount(Static("[dim]── new conversation: earlier turns are forgotten ──[/dim]", classes="divider"))
        log.anchor()
        self.focus_default()

    def action_focus_answer(self) -> None:
        """Move focus from the question box to the newest answer (whose keys then copy it)."""
        views = [v for v in self.query(AnswerView) if v.answer is not None]
        if not views:
            self.notify("No answer yet: ask a question first.", severity="warning")
            return
        views[-1].focus()
        views[-1].scroll_visible(animate=False)

    def action_focus_sibling(self, step: int) -> None:
        """The answer keys' up/down, from the palette: select the newest answer."""
        self.action_focus_answer()

    def action_copy_answer(self) -> None:
        answer = self._target(lambda a: True)
        if answer is None:
            self.notify("No answer to copy yet.", severity="warning")
            return
        copy(self.app, plain_answer(answer), "the answer")

    def action_copy_sparql(self) -> None:
        answer = self._target(lambda a: bool(a.sparql))
        if answer is None:
            self.notify("No answer with SPARQL yet.", severity="warning")
            return
        copy(self.app, "\n\n".join(strip_prefixes(q) for q in answer.sparql), "the answer's SPARQL")

    def action_scroll_log(self, pages: int) -> None:
        """PageUp/PageDown from the question box scroll the chat, not the box."""
        log = self.query_one("#ask-log", ChatLog)
        if pages < 0:
            log.scroll_page_up(animate=False)
        else:
            log.scroll_page_down(animate=False)

    def action_history_previous(self) -> None:
        self.query_one("#ask-input", HistoryInput).action_history_previous()

    def action_history_next(self) -> None:
        self.query_one("#ask-input", HistoryInput).action_history_next()
