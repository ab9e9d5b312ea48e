"""What every subcommand shares: the graph options, opening the graph, and reporting errors."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from stackgraph.graph.store import LoadedGraph

#: Exit codes: 0 success, 1 "not found / not answered / invalid", 2 bad input or usage.
EXIT_OK, EXIT_NOT_FOUND, EXIT_USAGE = 0, 1, 2


def add_graph_options(parser: argparse.ArgumentParser) -> None:
    """``--data FILE`` (repeatable) and ``--store URL``: which graph the command works on."""
    parser.add_argument(
        "--data",
        action="append",
        default=[],
        metavar="FILE",
        help="add your own facts from an RDF file (any format rdflib reads); repeatable",
    )
    parser.add_argument(
        "--store",
        metavar="URL",
        default=None,
        help="use a remote SPARQL 1.1 endpoint instead of the embedded store",
    )


def keep_loaded() -> None:
    """Take what is loaded now (the graph's catalog: a million objects at 100k entities) out of
    the cyclic garbage collector's walks, for a process that keeps one engine until it exits.

    Each full collection walks every tracked object, and the imports and tables of a first question
    trigger several: at 100k entities they cost 0.9 s of a 4 s start. The objects are kept for the
    process's life anyway, so nothing is lost (``gc.freeze``); not done inside Engine, because
    a process that makes many engines (the tests) would keep every one.
    """
    import gc

    gc.freeze()


def error(message: str, code: int = EXIT_USAGE) -> int:
    """Print a one-line error to stderr and return the exit code to use."""
    first_line = " ".join(str(message).split())
    print(f"stackgraph: error: {first_line}", file=sys.stderr)
    return code


def open_graph(
    args: argparse.Namespace, check_data: bool = True, background_checks: bool = False
) -> LoadedGraph:
    """Load the graph the arguments name. Raises DataFileError (callers turn it into one line).

    ``check_data`` refuses --data files that break the shapes; ``stackgraph validate`` turns it
    off because reporting every violation is its whole job. ``background_checks`` is for callers
    that hand the result straight to an Engine, which waits for the checks (graph/store.py).
    """
    from stackgraph.graph.store import load_graph

    return load_graph(
        getattr(args, "data", []) or [],
        getattr(args, "store", None),
        check_data=check_data,
        background_checks=background_checks,
    )
