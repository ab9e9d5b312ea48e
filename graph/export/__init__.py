"""Exports of the graph: subgraphs in RDF, GraphML, Mermaid, DOT, SVG/PNG and Markdown, and a
browsable docs site. Surfaces call :func:`export` and :func:`write_docs`; nothing here imports a
surface (Textual, fastmcp, HTTP)."""

from __future__ import annotations

from typing import Any

# ``subgraph()`` lives in stackgraph.graph.export.subgraph (a module of the same name, so it is not
# re-exported here: the package attribute ``subgraph`` is that module).
__all__ = ["FORMATS", "ExportError", "RendererMissing", "export", "write_docs"]


def __getattr__(name: str) -> Any:
    # Lazy, so that importing one exporter module does not load them all.
    if name in ("export", "FORMATS"):
        from stackgraph.graph.export import api

        return getattr(api, name)
    if name == "write_docs":
        from stackgraph.graph.export.docsite import write_docs

        return write_docs
    if name in ("ExportError", "RendererMissing"):
        from stackgraph.graph.export import errors

        return getattr(errors, name)
    raise AttributeError(name)
