"""``stackgraph tui`` (and plain ``stackgraph``): the terminal app.

Textual is imported inside ``run`` only, so the other subcommands never pay for it. The app paints
first and loads the graph in the background, so a bad ``--data`` file is reported when the load
fails: the app closes and prints the one-line error (exit code 2 for a bad file, 1 otherwise).
"""

from __future__ import annotations

import argparse

from stackgraph.cli.common import add_graph_options, error

EPILOG = """keys: F1 or ? all keys · F2-F7 tabs (Ask, Browse, Entity, Triage, SPARQL, Export) ·
      ctrl+p command palette · ctrl+g go to an entity · ctrl+q quit

Question and query history live in the user data directory (STACKGRAPH_DATA_DIR overrides it).

examples:
  stackgraph
  stackgraph tui --data our-clusters.ttl
  stackgraph tui --no-semantic
"""


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "tui",
        help="open the terminal app (what plain `stackgraph` does)",
        description="Ask, browse, triage, query and export the graph in a terminal app.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--no-semantic", action="store_true", help="match names only; never load the embedding model"
    )
    add_graph_options(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    for path in getattr(args, "data", []) or []:
        if not Path(path).is_file():  # cheap to check before the app takes over the terminal
            return error(f"{path}: no such file")
    from stackgraph.graph import worker_pool
    from stackgraph.tui.app import StackgraphApp

    worker_pool.start()  # while the streams are still the terminal's: the forkserver inherits stderr

    app = StackgraphApp(data=args.data or (), store_url=args.store, semantic=not args.no_semantic)
    app.run()
    return app.return_code or 0
