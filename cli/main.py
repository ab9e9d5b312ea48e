"""The ``stackgraph`` command: one entry point, one module per group of subcommands.

Each module in this package exposes ``register(subparsers)``, which adds its subcommands and sets
``run`` (a function taking the parsed arguments and returning an exit code). Modules import their
heavy dependencies inside ``run`` so that ``stackgraph ask`` does not pay for Textual or fastmcp.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

# Before anything imports numpy: one BLAS thread. The embedding search's matrix products are small,
# and OpenBLAS's worker threads are what made a fork wait forever under load (issue 10).
for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")

#: The modules that contribute subcommands, in the order ``--help`` lists them.
COMMAND_MODULES = ("ask", "describe", "inspect", "sparql", "export", "serve", "tui")

EPILOG = """examples:
  stackgraph ask "which layer owns CUDA OOM?"
  stackgraph ask --json "where does UALink fit?"
  stackgraph describe NVLink
  stackgraph sparql 'SELECT ?l ?code WHERE { ?l a sg:Layer ; sg:code ?code } LIMIT 5'
  stackgraph export NVLink --format mermaid
  stackgraph            (opens the terminal app)
"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="stackgraph",
        description="Ask which layer of the AI infrastructure stack owns what, from a knowledge graph.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(f"stackgraph.cli.{name}")
        except ModuleNotFoundError as error:
            if error.name != f"stackgraph.cli.{name}":
                raise
            continue  # a surface not built yet
        module.register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        if "tui" in parser._subparsers._group_actions[0].choices:  # type: ignore[union-attr]
            args = parser.parse_args(["tui"])
        else:
            parser.print_help()
            return 0
    try:
        return int(args.run(args) or 0)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
