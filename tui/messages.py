"""Messages the panes send to the app to move the user between tabs.

A pane never reaches into another pane: it posts one of these, and the app switches tabs and hands
the request to the right pane. That keeps each pane testable on its own.
"""

from __future__ import annotations

from textual.message import Message


class OpenEntity(Message):
    """Show the entity page of ``iri`` (pushing it on the page history)."""

    def __init__(self, iri: str) -> None:
        self.iri = iri
        super().__init__()


class OpenSparql(Message):
    """Put ``query`` in the SPARQL editor and, with ``run``, run it."""

    def __init__(self, query: str, run: bool = True) -> None:
        self.query = query
        self.run = run
        super().__init__()


class AskQuestion(Message):
    """Ask ``question`` in the chat, as if typed."""

    def __init__(self, question: str) -> None:
        self.question = question
        super().__init__()


class ExportEntity(Message):
    """Open the Export tab on the neighbourhood of ``iri``."""

    def __init__(self, iri: str) -> None:
        self.iri = iri
        super().__init__()
