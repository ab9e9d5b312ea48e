"""The Triage tab: pick a symptom, answer its tree's questions, end at the owning layers.

Symptoms with a triage tree come first; the others still give their owners, causes and commands
(the engine concludes at once for them). Each step is one ``engine.triage(symptom, answers)``
call in a thread worker, so undo and restart are just a shorter answer list.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

from textual import on, work
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.widgets import Markdown, OptionList, Static
from textual.widgets.option_list import Option

from stackgraph.tui import keys
from stackgraph.tui.clipboard import copy
from stackgraph.tui.messages import OpenEntity
from stackgraph.tui.threads import deliver

if TYPE_CHECKING:
    from stackgraph.graph.engine import Engine
    from stackgraph.graph.model import EntityRef, TriageState

HINT = "[dim]Pick a symptom on the left. Symptoms with a triage tree come first; enter or 1-9 answers a question, u undoes, r restarts.[/dim]"


def _layer_text(layer: EntityRef) -> str:
    return layer.display + (f" ({layer.model})" if layer.model else "")


def conclusion_markdown(state: TriageState) -> str:
    """Where the walk ended: conclusion, owning layers and why, causes, what to do, what to inspect.

    The command lines are not in here: they are rows of their own below, so each can be copied.
    """
    out = [f"**Conclusion** {state.conclusion or ''}"]
    conclusion = state.conclusion or ""
    if state.layers and not all(layer.display in conclusion for layer in state.layers):
        out.append("**Owning layers** " + " · ".join(_layer_text(layer) for layer in state.layers))
    if state.reason:
        out.append(f"**Why** {state.reason}")
    elif state.taken:
        out.append("**Why** the answers above lead there.")
    if state.causes:
        out.append("**Likely causes** " + " · ".join(c.display for c in state.causes))
    if state.action:
        out.append(f"**Do this** {state.action}")
    if state.look_at:
        out.append("**Where to look** " + " · ".join(state.look_at))
    return "\n\n".join(out)


def path_content(state: TriageState) -> Content:
    """The questions answered so far, each with the answer taken."""
    lines = [
        Content.assemble((f"{i}. ", "dim"), question, ("  → ", "dim"), (answer, "bold"))
        for i, (question, answer) in enumerate(zip(state.asked, state.taken, strict=False), 1)
    ]
    return Content("\n").join(lines)


def sources_content(state: TriageState) -> Content:
    if not state.sources:
        return Content("")
    return Content.assemble(("Sources ", "bold"), ("; ".join(s.display for s in state.sources[:6]), "dim"))


class CommandList(OptionList):
    """The conclusion's command lines, one selectable row each: enter, y or ctrl+c copies one."""

    BINDINGS = keys.COMMANDS

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.commands: list[str] = []

    def set_commands(self, commands: list[str]) -> None:
        self.commands = list(commands)
        self.set_options(Option(Content.assemble(("$ ", "dim"), (c, "bold"))) for c in commands)

    def action_copy_command(self) -> None:
        if self.highlighted is not None and self.highlighted < len(self.commands):
            copy(self.app, self.commands[self.highlighted], "the command")

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.action_copy_command()


class TriagePane(Horizontal):
    """Symptom list on the left, the walk on the right."""

    BINDINGS = keys.TRIAGE

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.engine: Engine | None = None
        #: The symptom being triaged and the answers given so far.
        self.symptom: str | None = None
        self.answers: list[str] = []
        #: The state on screen.
        self.state: TriageState | None = None
        self._symptoms: list[str] = []
        self._links: list[str] = []

    def compose(self) -> ComposeResult:
        with Vertical(id="triage-left"):
            yield Static("[b]Symptoms[/b]", id="triage-symptoms-title")
            symptoms = OptionList(id="triage-symptoms")
            symptoms.loading = True
            yield symptoms
        with VerticalScroll(id="triage-right"):
            yield Static(HINT, id="triage-title")
            yield Static("", id="triage-path")
            yield Static("", id="triage-question")
            yield OptionList(id="triage-options")
            yield Markdown("", id="triage-result", open_links=False)
            yield OptionList(id="triage-links")
            yield Static(
                Content.styled("Commands to run (enter or y copies)", "bold"), id="triage-commands-title"
            )
            yield CommandList(id="triage-commands")
            yield Static("", id="triage-sources")

    def focus_default(self) -> None:
        if self.state is not None and not self.state.done:
            self.query_one("#triage-options", OptionList).focus()
        else:
            self.query_one("#triage-symptoms", OptionList).focus()

    def engine_ready(self, engine: Engine) -> None:
        self.engine = engine
        self._list_symptoms()

    # ------------------------------------------------------------------ symptoms

    @work(thread=True, exclusive=True, group="triage-list")
    def _list_symptoms(self) -> None:
        engine = self.engine
        assert engine is not None
        with_tree: list[EntityRef] = []
        without: list[EntityRef] = []
        for iri in engine.entities_of("Symptom"):
            ref = engine.catalog.ref(iri)
            try:
                has_tree = engine.triage(iri).question is not None
            except Exception:  # a broken tree must not hide the symptom
                has_tree = False
            (with_tree if has_tree else without).append(ref)
        key = lambda r: r.label.casefold()  # noqa: E731
        deliver(self.app, self._fill_symptoms, sorted(with_tree, key=key), sorted(without, key=key))

    def _fill_symptoms(self, with_tree: list[EntityRef], without: list[EntityRef]) -> None:
        symptoms = self.query_one("#triage-symptoms", OptionList)
        options: list[Option | None] = []
        self._symptoms = []
        if with_tree:
            options.append(Option(Content.styled("with a triage tree", "bold"), disabled=True))
            self._symptoms.append("")
            for ref in with_tree:
                options.append(Option(Content.assemble("▸ ", ref.display)))
                self._symptoms.append(ref.iri)
        if without:
            options.append(Option(Content.styled("other symptoms", "bold"), disabled=True))
            self._symptoms.append("")
            for ref in without:
                options.append(Option(Content.assemble("  ", ref.display)))
                self._symptoms.append(ref.iri)
        symptoms.set_options(options)
        symptoms.loading = False
        symptoms.highlighted = next((i for i, iri in enumerate(self._symptoms) if iri), None)

    @on(OptionList.OptionSelected, "#triage-symptoms")
    def _symptom_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        iri = self._symptoms[event.option_index]
        if iri:
            self.start(iri)

    # ------------------------------------------------------------------ the walk

    def start(self, symptom: str) -> None:
        """Begin the walk for ``symptom`` (an IRI) from its first question."""
        self.symptom = symptom
        self.answers = []
        self._step()

    @on(OptionList.OptionSelected, "#triage-options")
    def _answered(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if self.state is None or self.state.done:
            return
        self.answers.append(self.state.options[event.option_index])
        self._step()

    @on(OptionList.OptionSelected, "#triage-links")
    def _link_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.post_message(OpenEntity(self._links[event.option_index]))

    def action_pick(self, number: int) -> None:
        """A number key: answer the question with that option, as enter on it would."""
        if self.state is None or self.state.done:
            return
        if not 1 <= number <= len(self.state.options):
            self.notify(f"There is no option {number}: pick 1-{len(self.state.options)}.", severity="warning")
            return
        self.answers.append(self.state.options[number - 1])
        self._step()

    def action_copy_command(self) -> None:
        commands = self.query_one("#triage-commands", CommandList)
        if not commands.display or not commands.commands:
            self.notify("No command to copy: reach a conclusion first.", severity="warning")
            return
        commands.action_copy_command()

    def action_undo(self) -> None:
        if self.symptom and self.answers:
            self.answers.pop()
            self._step()

    def action_restart(self) -> None:
        if self.symptom:
            self.answers = []
            self._step()

    @work(thread=True, exclusive=True, group="triage-step")
    def _step(self) -> None:
        from stackgraph.graph.triage import TriageError

        engine, symptom, answers = self.engine, self.symptom, list(self.answers)
        if engine is None or symptom is None:
            return
        try:
            state = engine.triage(symptom, answers)
        except TriageError as problem:
            deliver(self.app, partial(self.notify, severity="error"), str(problem))
            return
        deliver(self.app, self._draw, state)

    def _draw(self, state: TriageState) -> None:
        self.state = state
        self.query_one("#triage-title", Static).update(Content.styled(state.symptom.display, "bold $accent"))
        self.query_one("#triage-path", Static).update(path_content(state))
        question = self.query_one("#triage-question", Static)
        options = self.query_one("#triage-options", OptionList)
        result = self.query_one("#triage-result", Markdown)
        links = self.query_one("#triage-links", OptionList)
        commands = self.query_one("#triage-commands", CommandList)
        commands_title = self.query_one("#triage-commands-title", Static)
        sources = self.query_one("#triage-sources", Static)
        done = state.done
        question.display = options.display = not done
        result.display = links.display = sources.display = done
        commands.display = commands_title.display = done and bool(state.diagnostics)
        if not done:
            question.update(Content.styled(state.question or "", "bold"))
            options.set_options(Option(f"{i}. {text}") for i, text in enumerate(state.options, 1))
            options.highlighted = 0
            # After the refresh: hiding the focused list moves focus, and that must come first.
            self.call_after_refresh(options.focus)
            return
        result.update(conclusion_markdown(state))
        commands.set_commands(list(state.diagnostics))
        if state.diagnostics:
            commands.highlighted = 0
        sources.update(sources_content(state))
        refs = [*state.layers, *state.causes]
        self._links = [ref.iri for ref in refs]
        links.set_options(
            Option(Content.assemble("→ open ", (ref.display, "bold"), ("  " + ref.type, "dim")))
            for ref in refs
        )
        links.display = bool(refs)
        if refs:
            links.highlighted = 0
            self.call_after_refresh(links.focus)
