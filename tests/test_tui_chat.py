"""The chat log, copying by keyboard, the help screen, tab keys and themes (Pilot)."""

from __future__ import annotations

import pytest
from textual.widgets import (
    Input,
    Static,
)
from tui_support import (  # noqa: F401  (data_dir: the autouse fixture that isolates history)
    SIZE,
    a_member,
    ask,
    data_dir,
    settle,
)

from stackgraph.graph.engine import Engine
from stackgraph.tui import keys
from stackgraph.tui.answer import AnswerView, strip_prefixes
from stackgraph.tui.app import StackgraphApp

# ---------------------------------------------------------------------------------- issue 14: the chat log


def _fully_visible(view, log) -> bool:
    return log.region.y <= view.region.y and view.region.bottom <= log.region.bottom


QUESTIONS = (
    "where does NVLink fit?",
    "what is it?",
    "which layer owns CUDA OOM?",
    "where does JAX fit?",
    "what is a flurbo?",
)


async def test_the_newest_answer_is_shown_whole_after_five_questions_and_a_resize(engine: Engine) -> None:
    app = StackgraphApp(engine=engine)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        for question in QUESTIONS:
            await ask(pilot, question)
        log = app.query_one("#ask-log")
        newest = list(app.query(AnswerView))[-1]
        assert newest.question == QUESTIONS[-1] and newest.answer is not None
        assert log.max_scroll_y > 0  # the conversation no longer fits: the test means something
        assert _fully_visible(newest, log)
        assert _fully_visible(newest.query_one(".suggestions"), log)  # "did you mean" not hidden
        await pilot.resize_terminal(100, 30)
        await settle(pilot)
        assert _fully_visible(newest, log)
        assert log.scroll_y == log.max_scroll_y

        # PageUp/PageDown from the question box scroll the log, and the box keeps focus.
        await pilot.press("pageup")
        await pilot.pause()
        assert log.scroll_y < log.max_scroll_y
        assert app.focused is app.query_one("#ask-input")
        await pilot.press("pagedown", "pagedown", "pagedown")
        await pilot.pause()
        assert log.scroll_y == log.max_scroll_y


async def test_a_follow_up_is_marked_with_what_it_is_about(engine: Engine) -> None:
    member = a_member(engine)
    app = StackgraphApp(engine=engine)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        first = await ask(pilot, f"where does {member.label} fit?")
        assert first.about is None and not first.query(".about")
        follow = await ask(pilot, "what is it?")
        assert follow.about == member.iri
        assert member.display in str(follow.query_one(".about", Static).content)


async def test_y_copies_the_focused_answer_and_s_its_sparql(engine: Engine) -> None:
    member = a_member(engine)
    app = StackgraphApp(engine=engine)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        first = await ask(pilot, f"where does {member.label} fit?")
        await ask(pilot, "what is a flurbo?")
        await pilot.press("shift+tab")  # the newest answer takes focus
        assert isinstance(app.focused, AnswerView) and app.focused.question == "what is a flurbo?"
        await pilot.press("up")  # the answer above
        assert app.focused is first
        await pilot.press("y")
        assert first.answer is not None and first.answer.answer in app.clipboard
        assert any("Copied" in n.message for n in app._notifications)
        await pilot.press("s")
        assert app.clipboard == "\n\n".join(strip_prefixes(q) for q in first.answer.sparql)
        await pilot.press("down", "down")  # past the newest: back to the question box
        assert app.focused is app.query_one("#ask-input")
        await pilot.press("ctrl+y")  # from the box: the newest answer
        newest = list(app.query(AnswerView))[-1].answer
        assert newest is not None and newest.answer in app.clipboard


async def test_help_lists_the_keys_of_the_current_tab_first_and_closes(engine: Engine) -> None:
    app = StackgraphApp(engine=engine)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("f5")
        await settle(pilot)
        await pilot.press("question_mark")  # outside a text box, ? is the help key
        await pilot.pause()
        from stackgraph.tui.help import HelpScreen

        assert isinstance(app.screen, HelpScreen)
        groups = [str(s.content) for s in app.screen.query(".help-group").results(Static)]
        assert groups[0].startswith("Triage")
        for binding in keys.TRIAGE:
            assert keys.HELP[binding.id] in groups[0]
        assert "Cursor word left" not in "".join(groups)  # Textual's generic editing keys stay out
        await pilot.press("escape")
        assert not isinstance(app.screen, HelpScreen)
        # In the question box "?" is typed, F1 still opens help.
        await pilot.press("f2")
        await pilot.press(*"why?")
        assert app.query_one("#ask-input", Input).value == "why?"
        await pilot.press("f1")
        assert isinstance(app.screen, HelpScreen)
        assert str(app.screen.query(".help-group").first(Static).content).startswith("Ask")
        await pilot.press("f1")
        assert not isinstance(app.screen, HelpScreen)


async def test_tab_labels_show_their_keys_and_the_footer_shows_quit(engine: Engine) -> None:
    app = StackgraphApp(engine=engine)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        for pane, title, key in keys.TABS:
            label = str(app.query_one(f"#--content-tab-{pane}").label)
            assert title in label and key.upper() in label
        footer = " ".join(str(k.render()) for k in app.query("FooterKey"))
        assert "Quit" in footer


# ---------------------------------------------------------------------------------- issue 14: themes


def _contrast(style) -> float:
    """WCAG contrast ratio between a rich Style's foreground and background."""

    def luminance(color) -> float:
        r, g, b = (c / 255 for c in color.get_truecolor())
        lin = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in (r, g, b)]
        return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]

    a, b = sorted((luminance(style.color), luminance(style.bgcolor)), reverse=True)
    return (a + 0.05) / (b + 0.05)


@pytest.mark.parametrize("theme", ["textual-dark", "textual-light"])
async def test_title_is_readable_and_declined_answers_look_different(engine: Engine, theme: str) -> None:
    member = a_member(engine)
    app = StackgraphApp(engine=engine)
    async with app.run_test(size=SIZE) as pilot:
        app.theme = theme
        await pilot.pause()
        answered = await ask(pilot, f"where does {member.label} fit?")
        declined = await ask(pilot, "what is a flurbo?")
        await pilot.press("f3")  # neither answer focused: their resting colours
        await pilot.pause()
        assert _contrast(app.query_one("#status-title").rich_style) >= 4.5
        assert declined.has_class("-declined") and not answered.has_class("-declined")
        assert declined.styles.border_left[1] != answered.styles.border_left[1]
