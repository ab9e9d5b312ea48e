"""``stackgraph validate`` and ``stackgraph stats``: is the graph well-formed, and what is in it."""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import TYPE_CHECKING

from stackgraph.cli.common import EXIT_NOT_FOUND, EXIT_OK, add_graph_options, error, open_graph

if TYPE_CHECKING:
    from stackgraph.graph.stats import GraphStats
    from stackgraph.graph.store import LoadedGraph
    from stackgraph.graph.validate import ValidationReport

VALIDATE_EXAMPLES = """examples:
  stackgraph validate                    check the built-in graph against ontology/shapes.ttl
  stackgraph validate my-facts.ttl       check your own facts together with the built-in graph
  stackgraph validate --json my-facts.ttl
exit status: 0 conforms, 1 violations found, 2 a file could not be read
"""

STATS_EXAMPLES = """examples:
  stackgraph stats
  stackgraph stats --json --data my-facts.ttl
"""


def register(subparsers: argparse._SubParsersAction) -> None:
    validate = subparsers.add_parser(
        "validate",
        help="check the graph (and your files) against the SHACL shapes",
        description="Validate the built-in graph, plus any FILEs and --data files, against the SHACL shapes.",
        epilog=VALIDATE_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    validate.add_argument(
        "files", nargs="*", metavar="FILE", help="RDF files to check with the built-in graph"
    )
    validate.add_argument("--shapes", metavar="FILE", help="SHACL shapes to use instead of the packaged ones")
    validate.add_argument("--json", action="store_true", help="print one JSON object")
    add_graph_options(validate)
    validate.set_defaults(run=run_validate)

    stats = subparsers.add_parser(
        "stats",
        help="count what is in the graph",
        description="Count entities by class, triples, sources and sections, and how each placement or stress is known.",
        epilog=STATS_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    stats.add_argument("--json", action="store_true", help="print one JSON object")
    add_graph_options(stats)
    stats.set_defaults(run=run_stats)


def _open(args: argparse.Namespace, check_data: bool = True) -> tuple[LoadedGraph, float]:
    """The graph and how long loading it took. Raises DataFileError for an unreadable file."""
    started = time.perf_counter()
    loaded = open_graph(args, check_data=check_data)
    return loaded, time.perf_counter() - started


# ---------------------------------------------------------------- validate


def run_validate(args: argparse.Namespace) -> int:
    from pathlib import Path

    from stackgraph.graph.store import DataFileError, parse_file
    from stackgraph.graph.validate import validate_auto

    args.data = [*(args.data or []), *args.files]
    shapes = Path(args.shapes) if args.shapes else None
    try:
        if shapes is not None:
            parse_file(shapes)  # a broken shapes file is reported like a data file: FILE:LINE: reason
        loaded, _seconds = _open(args, check_data=False)
        report = validate_auto(loaded.graph, shapes, progress=_progress("checking the shapes"))
    except DataFileError as problem:
        return error(str(problem))
    except (OSError, ValueError, SyntaxError) as problem:  # an unreadable --shapes file, a store down
        return error(str(problem))
    if args.json:
        body = report.to_dict() | {"triples": len(loaded.graph), "data_files": loaded.data_files}
        print(json.dumps(body, ensure_ascii=False, indent=2))
    else:
        sys.stdout.write(render_report(report, loaded))
    return EXIT_OK if report.conforms else EXIT_NOT_FOUND


def _progress(what: str):
    """Progress of a long validation on stderr (graph/userstore.py's reporter)."""
    from stackgraph.graph.userstore import progress_reporter

    return progress_reporter(what)


def _what(loaded: LoadedGraph) -> str:
    if loaded.store_url:
        return f"the store at {loaded.store_url}"
    files = loaded.data_files
    if not files:
        return "the built-in graph"
    return "the built-in graph with " + ", ".join(files)


def render_report(report: ValidationReport, loaded: LoadedGraph) -> str:
    """Violations grouped by the node they are about, each with its message and shape."""
    if report.conforms:
        return f"OK: {_what(loaded)} conforms to the shapes ({len(loaded.graph):,} triples, {report.seconds:.1f} s).\n"
    lines: list[str] = []
    by_focus: dict[str, list] = {}
    for violation in report.violations:
        by_focus.setdefault(violation.focus, []).append(violation)
    for focus in sorted(by_focus):
        group = by_focus[focus]
        label = group[0].focus_label
        lines.append(f"{focus}  ({label})" if label else focus)
        for violation in group:
            where = ""
            if violation.path and violation.value:
                where = f" [{violation.path} {violation.value}]"
            elif violation.path:
                where = f" [{violation.path}]"
            severity = "" if violation.severity == "Violation" else f"{violation.severity}: "
            lines.append(f"  - {severity}{violation.message}{where}  (shape: {violation.shape})")
    count = len(report.violations)
    nodes = len(by_focus)
    lines.append("")
    lines.append(
        f"{count} violation{'s' if count != 1 else ''} on {nodes} node{'s' if nodes != 1 else ''}: "
        f"{_what(loaded)} does not conform to the shapes."
    )
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- stats


def run_stats(args: argparse.Namespace) -> int:
    from stackgraph.graph.stats import graph_stats
    from stackgraph.graph.store import DataFileError

    try:
        loaded, seconds = _open(args)
        stats = graph_stats(loaded.graph)
    except DataFileError as problem:
        return error(str(problem))
    except (OSError, ValueError) as problem:
        return error(str(problem))
    if args.json:
        body = stats.to_dict() | {"load_seconds": round(seconds, 3), "data_files": loaded.data_files}
        print(json.dumps(body, ensure_ascii=False, indent=2))
    else:
        sys.stdout.write(render_stats(stats, seconds, loaded))
    return EXIT_OK


def render_stats(stats: GraphStats, seconds: float, loaded: LoadedGraph) -> str:
    basis = " · ".join(f"{name} {count:,}" for name, count in stats.basis.items())
    lines = [
        f"triples          {stats.triples:,}",
        f"entities         {stats.entities:,}",
        f"sources          {stats.sources:,} documents, {stats.sections:,} sections",
        f"qualified facts  {stats.placements:,} placements, {stats.stresses:,} stresses, "
        f"{stats.statements:,} statements",
        f"basis            {basis}",
        f"loaded in        {seconds:.2f} s ({_what(loaded)})",
        "",
        "entities by class",
    ]
    width = max((len(c.label) for c in stats.classes), default=0)
    lines += [f"  {c.label:<{width}}  {c.count:>6,}" for c in stats.classes]
    return "\n".join(lines) + "\n"
