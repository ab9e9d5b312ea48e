"""The errors an export can end in; ``str()`` of each is a one-line message for the user."""

from __future__ import annotations


class ExportError(ValueError):
    """The export cannot be made as asked (unknown format or predicate, bad query, bad limit)."""


class RendererMissing(ExportError):
    """A renderer the format needs (Graphviz ``dot``) is not installed."""
