"""stackgraph as an MCP server: ``build_server(engine_factory)`` returns the FastMCP server that
both ``stackgraph mcp`` (stdio) and ``stackgraph serve`` (streamable HTTP at /mcp) run.

The engine is created once per process, on a background thread, so that ``initialize`` and the
list requests answer at once; tools wait for it (see ``runtime``). Tools live in ``mcp_tools``,
resources and prompts in ``mcp_resources``, paging and the size cap in ``bounds``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from fastmcp import FastMCP

from stackgraph.server.errors import ArgumentErrors
from stackgraph.server.mcp_resources import register_prompts, register_resources
from stackgraph.server.mcp_tools import register_tools
from stackgraph.server.runtime import Runtime
from stackgraph.server.schemas import RESULT_CONVENTIONS

if TYPE_CHECKING:
    from stackgraph.graph.engine import Engine

INSTRUCTIONS = (
    """\
stackgraph answers questions about the AI infrastructure stack (GPUs, interconnects, storage,
Kubernetes, inference servers, ...) from a knowledge graph built from four seed documents, with
sources. Two layer models: the nine-layer co-design model ("nine", L1-L9 plus S and CP) and the
eight-layer operational map ("eight", L1-L8).
Incident triage: owner_of_symptom -> triage (one answer per call) -> diagnose.
Placing a technology: where_fits, then describe / neighbors. Anything else: ask (pass back the
conversation_id it returns for follow-ups). Names unknown? search. SPARQL: call schema first.
Layers can be named as you would write them ("eight L5", "the operational map's L2") or with the
`model` argument. All tools are read-only; no result is over 20,000 characters.
"""
    + RESULT_CONVENTIONS
)


def build_server(
    engine_factory: Callable[[], Engine], *, semantic: bool = True, start: bool = True
) -> FastMCP:
    """The stackgraph MCP server over the engine ``engine_factory`` builds (called once, in the
    background; ``semantic`` also loads the embedding model there). The server's runtime (engine,
    conversations) is available as ``server.stackgraph_runtime``."""
    runtime = Runtime(engine_factory, semantic=semantic)
    mcp = FastMCP(
        "stackgraph",
        instructions=INSTRUCTIONS,
        version=_version(),
        middleware=[ArgumentErrors()],
        mask_error_details=False,
        on_duplicate="error",
        # Output schemas share their definitions (`$defs`) instead of inlining them into every
        # use: inlined, the four answer tools alone repeat the same schema ~40,000 characters.
        dereference_schemas=False,
    )
    register_tools(mcp, runtime)
    register_resources(mcp, runtime)
    register_prompts(mcp, runtime)
    mcp.stackgraph_runtime = runtime  # type: ignore[attr-defined]
    if start:
        runtime.start()
    return mcp


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("stackgraph")
    except PackageNotFoundError:
        return "0"
