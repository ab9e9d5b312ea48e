"""``stackgraph mcp`` (MCP over stdio) and ``stackgraph serve`` (MCP over HTTP at /mcp plus SPARQL
at /sparql).

Both start answering at once: the graph and the embedding model load on a background thread while
the MCP handshake proceeds. Over stdio, stdout belongs to the protocol: before anything heavy is
imported, file descriptor 1 is pointed at stderr and the protocol gets a private duplicate of the
real stdout, so no import, warning or progress bar can corrupt the stream.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys

from stackgraph.cli.common import EXIT_USAGE, add_graph_options, error

MCP_EPILOG = """example agent configuration (Claude Desktop, Cursor, ...):
  {"mcpServers": {"stackgraph": {"command": "stackgraph", "args": ["mcp"]}}}
"""
SERVE_EPILOG = """examples:
  stackgraph serve                                  # http://127.0.0.1:8000/mcp and /sparql
  STACKGRAPH_TOKEN=secret stackgraph serve --host 0.0.0.0 --port 8080
environment:
  STACKGRAPH_TOKEN            require 'Authorization: Bearer <token>' on every request
                              (mandatory when --host is not a loopback address)
  STACKGRAPH_ALLOWED_ORIGINS  comma-separated browser origins allowed besides localhost
  STACKGRAPH_REQUEST_READ_TIMEOUT_S   seconds a client has to send a whole request (default 10)
  STACKGRAPH_MAX_CONNECTIONS          open connections beyond this are closed (default 2048)
  STACKGRAPH_MCP_SESSION_IDLE_S       idle MCP sessions are ended after this (default 600)
  STACKGRAPH_SPARQL_WORKERS           SPARQL worker processes (default: one per core, at most 4)
"""

#: fastmcp settings that would otherwise print a banner or look for updates on start.
_FASTMCP_QUIET = {
    "FASTMCP_SHOW_SERVER_BANNER": "false",
    "FASTMCP_CHECK_FOR_UPDATES": "off",
    "FASTMCP_ENABLE_RICH_LOGGING": "false",
    "FASTMCP_LOG_LEVEL": "WARNING",
}


def register(subparsers: argparse._SubParsersAction) -> None:
    mcp = subparsers.add_parser(
        "mcp",
        help="serve the MCP tools over stdio (what agent configurations launch)",
        description="Serve stackgraph's MCP tools, resources and prompts over stdio.",
        epilog=MCP_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_graph_options(mcp)
    _add_server_options(mcp)
    mcp.set_defaults(run=run_mcp)

    serve = subparsers.add_parser(
        "serve",
        help="serve MCP over HTTP at /mcp and the SPARQL endpoint at /sparql",
        description="Serve MCP (streamable HTTP) at /mcp and a SPARQL 1.1 endpoint at /sparql.",
        epilog=SERVE_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_graph_options(serve)
    serve.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=8000, help="port to bind (default 8000)")
    serve.add_argument("--access-log", action="store_true", help="log every request (to stderr)")
    serve.add_argument(
        "--stateless",
        action="store_true",
        help="serve MCP without sessions (plain JSON, one request per call)",
    )
    _add_server_options(serve)
    serve.set_defaults(run=run_serve)


def _add_server_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--no-semantic",
        action="store_true",
        help="link names lexically only (do not load the embedding model)",
    )
    parser.add_argument("--log-level", default="INFO", choices=["DEBUG", "INFO", "WARNING", "ERROR"])


def _quiet_environment(log_level: str) -> None:
    for key, value in _FASTMCP_QUIET.items():
        os.environ.setdefault(key, value)
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    logging.basicConfig(
        stream=sys.stderr,
        level=getattr(logging, log_level),
        format="stackgraph %(levelname)s %(name)s: %(message)s",
    )


def _engine_factory(args: argparse.Namespace):
    data, store, semantic = list(args.data or []), args.store, not args.no_semantic

    def factory():
        from stackgraph.graph.engine import Engine

        return Engine.load(data, store, semantic=semantic)

    return factory


def _check_data_files(args: argparse.Namespace) -> int | None:
    missing = [path for path in args.data or [] if not os.path.isfile(path)]
    if missing:
        return error(f"no such data file: {missing[0]}")
    return None


def run_mcp(args: argparse.Namespace) -> int:
    # Claim stdout for the protocol first: fd 1 now reaches stderr for everyone else.
    wire_fd = os.dup(1)
    os.dup2(2, 1)
    _quiet_environment(args.log_level)
    if (code := _check_data_files(args)) is not None:
        return code

    import anyio

    from stackgraph.server.mcp_server import build_server
    from stackgraph.server.stdio import serve_stdio

    server = build_server(_engine_factory(args), semantic=not args.no_semantic)
    anyio.run(serve_stdio, server, wire_fd)
    return 0


def run_serve(args: argparse.Namespace) -> int:
    _quiet_environment(args.log_level)
    from stackgraph.server.http import (
        BindRefused,
        check_bind,
        origins_from_env,
        token_from_env,
        uvicorn_log_config,
    )

    token = token_from_env()
    try:
        check_bind(args.host, token)
    except BindRefused as refused:
        return error(str(refused), EXIT_USAGE)
    if (code := _check_data_files(args)) is not None:
        return code
    if not 0 < args.port < 65536:
        return error(f"--port must be between 1 and 65535, not {args.port}")

    from stackgraph.graph import worker_pool

    worker_pool.start()  # SPARQL workers come from a forkserver started now, before any thread

    import uvicorn

    from stackgraph.server import limits
    from stackgraph.server.http import create_app
    from stackgraph.server.mcp_server import build_server

    # The app imports the SPARQL endpoint; the engine starts loading only once that is done.
    server = build_server(_engine_factory(args), semantic=not args.no_semantic, start=False)
    app = create_app(
        server, host=args.host, token=token, allowed_origins=origins_from_env(), stateless=args.stateless
    )
    limits.raise_file_limit()
    auth = "token required" if token else "no token (loopback only)"
    print(f"stackgraph: serving http://{args.host}:{args.port}/mcp and /sparql ({auth})", file=sys.stderr)
    try:
        uvicorn.run(
            app,
            host=args.host,
            port=args.port,
            log_config=uvicorn_log_config(args.log_level),
            access_log=args.access_log,
            lifespan="on",
            **limits.uvicorn_options(),
        )
    except OSError as failure:
        return error(f"cannot listen on {args.host}:{args.port}: {failure}", 1)
    return 0
