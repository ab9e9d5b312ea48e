"""The help screen (``?`` or F1): the app's own keys, the current tab's first, Posting-style.

It reads the bindings in ``keys.py``, the same data the footer and the palette use, so a key added
there is documented here at once. Generic editing keys of Textual's inputs are left out: they are
the same in every terminal app and would bury the ones that are stackgraph's.
"""

from __future__ import annotations

from dataclasses import replace

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static

from stackgraph.tui import keys


def group_content(app, group: keys.KeyGroup) -> Content:
    """One group as aligned "key  description" lines under its title."""
    rows: list[tuple[str, str]] = []
    for binding in group.bindings:
        key = " / ".join(app.get_key_display(replace(binding, key=k.strip())) for k in binding.key.split(","))
        text = keys.HELP.get(binding.id or "", binding.description)
        if rows and rows[-1][1] == text and len(key) == 1:  # 1, 2, … 9 doing the same: one row
            first = rows[-1][0].split("-")[0]
            rows[-1] = (f"{first}-{key}", text)
        else:
            rows.append((key, text))
    width = max((len(key) for key, _ in rows), default=0)
    lines = [Content.styled(group.title, "bold $accent")]
    lines += [Content.assemble((key.ljust(width), "bold"), "  ", text) for key, text in rows]
    return Content("\n").join(lines)


def ordered_groups(tab: str | None) -> list[keys.KeyGroup]:
    """The groups of the tab on screen first, then the app-wide keys, then the other tabs."""
    mine = [g for g in keys.GROUPS if g.pane == tab and tab is not None]
    app_wide = [g for g in keys.GROUPS if g.pane is None]
    rest = [g for g in keys.GROUPS if g not in mine and g not in app_wide]
    return mine + app_wide + rest


class HelpScreen(ModalScreen[None]):
    """Every key of the app, grouped by screen; escape, q, ? or F1 closes it."""

    BINDINGS = [
        Binding("escape,q,f1,question_mark", "dismiss", "Close", id="stackgraph.help.close"),
    ]
    DEFAULT_CSS = """
    HelpScreen {
        align: center middle;
    }
    #help-box {
        width: 90;
        max-width: 95%;
        height: 90%;
        border: round $accent;
        background: $surface;
        padding: 0 1;
    }
    #help-title {
        height: auto;
        margin: 0 0 1 0;
    }
    #help-groups > Static {
        height: auto;
        margin: 0 0 1 0;
    }
    """

    def __init__(self, tab: str | None) -> None:
        super().__init__()
        self.tab = tab

    def compose(self) -> ComposeResult:
        with Vertical(id="help-box"):
            yield Static(
                Content.assemble(
                    ("stackgraph keys", "bold"),
                    ("  ·  escape closes · ctrl+p searches every action · tab moves focus", "dim"),
                ),
                id="help-title",
            )
            with VerticalScroll(id="help-groups"):
                for group in ordered_groups(self.tab):
                    yield Static(group_content(self.app, group), classes="help-group")
