"""``stackgraph describe NAME``: everything the graph says about one entity."""

from __future__ import annotations

import argparse
import json
import sys

from stackgraph.cli.common import EXIT_NOT_FOUND, EXIT_OK, add_graph_options, error, open_graph


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "describe",
        help="show one entity: types, layer, definition, edges, sources",
        description="Show an entity by label, alternative label, layer code or IRI.",
        epilog='examples:\n  stackgraph describe NVLink\n  stackgraph describe L5 --model eight\n  stackgraph describe "CUDA OOM" --json',
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("name", nargs="+", help="label, alternative label, layer code or IRI")
    parser.add_argument("--model", choices=["nine", "eight"], help="which layer model a bare code (L5) means")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    add_graph_options(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from stackgraph.graph.describe import describe
    from stackgraph.graph.engine import Engine
    from stackgraph.graph.model import UnknownEntity
    from stackgraph.graph.store import DataFileError

    try:
        engine = Engine(open_graph(args), semantic=False)
    except (DataFileError, OSError, ValueError) as problem:
        return error(str(problem))
    name = " ".join(args.name)
    try:
        ref = engine.resolve(name, model=args.model)
    except UnknownEntity as unknown:
        return error(str(unknown), EXIT_NOT_FOUND)
    page = describe(engine, ref.iri)
    if args.json:
        print(json.dumps(page.to_dict(), ensure_ascii=False, indent=2))
        return EXIT_OK
    sys.stdout.write(render(page) + "\n")
    return EXIT_OK


#: Bases an edge is marked with: the graph's reading rather than the seed's words.
READINGS = ("inferred", "reconstructed")


def render(page) -> str:
    entity = page.entity
    lines = [entity.display, f"  IRI:   {entity.iri}", f"  Types: {', '.join(page.types)}"]
    if entity.model:
        lines.append(f"  Model: {entity.model}")
    if page.alt_labels:
        lines.append(f"  Also:  {', '.join(page.alt_labels)}")
    for placement in page.placements:
        role = f" as {placement.role}" if placement.role else ""
        lines.append(
            f"  Layer: {placement.layer.display} ({placement.layer.model}){role} [{placement.basis}]"
        )
    if page.definition:
        lines += ["", "  " + page.definition]
    for note in page.notes:
        lines.append("  Note: " + note)
    if page.outgoing:
        lines += ["", "Edges:"]
        for edge in page.outgoing:
            value = edge.value if isinstance(edge.value, str) else edge.value.display
            qualifier = f" [{edge.qualifier}]" if edge.qualifier else ""
            basis = f" ({edge.basis})" if edge.basis in READINGS else ""
            lines.append(f"  {edge.predicate_label}: {value}{qualifier}{basis}")
    if page.incoming:
        lines += ["", "Incoming:"]
        for edge in page.incoming[:60]:
            qualifier = f" ({edge.qualifier})" if edge.qualifier else ""
            basis = f" ({edge.basis})" if edge.basis in READINGS else ""
            lines.append(f"  {edge.value.display} —{edge.predicate_label}{qualifier}→{basis}")
        if len(page.incoming) > 60:
            lines.append(f"  … and {len(page.incoming) - 60} more")
    if page.sources:
        lines += ["", "Sources:"]
        lines += [f"  {s.display}" for s in page.sources]
    return "\n".join(lines)
