"""A yes/no prompt over the app (overwriting a file asks first): y or enter says yes, n or escape no."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static


class Confirm(ModalScreen[bool]):
    """Ask ``question``; dismisses with True for yes, False for no."""

    BINDINGS = [
        Binding("y", "answer(True)", "Yes", id="stackgraph.confirm.yes"),
        Binding("n,escape", "answer(False)", "No", id="stackgraph.confirm.no"),
    ]
    DEFAULT_CSS = """
    Confirm {
        align: center middle;
    }
    #confirm-box {
        width: 70;
        max-width: 95%;
        height: auto;
        border: thick $warning;
        background: $surface;
        padding: 1 2;
    }
    #confirm-question {
        height: auto;
        margin: 0 0 1 0;
    }
    #confirm-buttons {
        height: auto;
        align: right middle;
    }
    #confirm-buttons Button {
        margin: 0 0 0 2;
    }
    """

    def __init__(self, question: str, yes: str = "Overwrite", no: str = "Cancel") -> None:
        super().__init__()
        self.question = question
        self._yes, self._no = yes, no

    def compose(self) -> ComposeResult:
        with Vertical(id="confirm-box"):
            yield Static(self.question, id="confirm-question", markup=False)
            with Horizontal(id="confirm-buttons"):
                yield Button(f"{self._no} (n)", id="confirm-no", compact=True)
                yield Button(f"{self._yes} (y)", id="confirm-yes", variant="warning", compact=True)

    def on_mount(self) -> None:
        self.query_one("#confirm-no", Button).focus()  # the safe choice has focus

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(event.button.id == "confirm-yes")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)
