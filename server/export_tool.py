"""The MCP ``export_subgraph`` tool's bridge to the exporters (``stackgraph.graph.export``).

Only text formats travel in a tool result; PNG is for the CLI. Export errors (a renderer missing,
a bad depth) become one-line tool errors.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from stackgraph.server.errors import UserError

if TYPE_CHECKING:
    from stackgraph.graph.engine import Engine

#: The formats the tool offers: every text format of the exporters.
TEXT_FORMATS = ("turtle", "ntriples", "jsonld", "graphml", "mermaid", "dot", "svg", "markdown")


def run_export(engine: Engine, iri: str, fmt: str, depth: int) -> str:
    from stackgraph.graph.export import ExportError, export

    try:
        result = export(engine, [iri], fmt, depth)
    except ExportError as error:
        raise UserError(f"export failed: {error}") from None
    if isinstance(result, bytes):
        raise UserError(f"bad argument 'format': {fmt} is binary; use one of {', '.join(TEXT_FORMATS)}")
    return result
