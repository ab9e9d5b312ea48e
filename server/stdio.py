"""Serving MCP over stdio on a private duplicate of the real stdout.

``fastmcp``'s own ``run_stdio_async`` claims file descriptor 1 only once the server runs, which
leaves a window (imports, the engine loading on its thread) in which a stray print would land in
the protocol stream. ``stackgraph mcp`` instead redirects fd 1 to stderr before importing anything
heavy and hands the original stdout to this function, which runs the server on it.
"""

from __future__ import annotations

import io
import os
from typing import TYPE_CHECKING

import anyio
from mcp.server.stdio import stdio_server

if TYPE_CHECKING:
    from fastmcp import FastMCP


async def serve_stdio(server: FastMCP, wire_fd: int) -> None:
    """Run ``server`` reading stdin and writing the protocol to ``wire_fd`` until stdin closes."""
    from fastmcp.server.context import reset_transport, set_transport

    wire = io.TextIOWrapper(os.fdopen(wire_fd, "wb", buffering=0), encoding="utf-8", write_through=True)
    token = set_transport("stdio")
    try:
        # What fastmcp's run_stdio_async does, on our stream (private names, pinned fastmcp).
        async with (
            server._lifespan_manager(),
            stdio_server(stdout=anyio.wrap_file(wire)) as (read_stream, write_stream),
        ):
            low_level = server._mcp_server
            await low_level.run(read_stream, write_stream, low_level.create_initialization_options())
    finally:
        reset_transport(token)
