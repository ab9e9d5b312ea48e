"""``stackgraph export`` (a subgraph in a file format) and ``stackgraph docs`` (a docs site).

Exit codes: 0 written; 1 a name matches no entity (the closest ones are named), Graphviz is
missing for svg/png, or the store failed; 2 bad options, a refused or malformed --sparql query,
or a binary format headed for a terminal; 3 the --sparql query timed out.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path

from stackgraph.cli.common import EXIT_NOT_FOUND, EXIT_OK, add_graph_options, error, open_graph

EXIT_TIMEOUT = 3

# Spelled out so that ``stackgraph --help`` imports no rdflib; tests keep them equal to api.FORMATS.
FORMATS = ("turtle", "ntriples", "jsonld", "graphml", "mermaid", "dot", "svg", "png", "markdown")
DEFAULT_DEPTH = 1
DEFAULT_MAX_NODES = 50

EXPORT_EPILOG = """formats: turtle (default), ntriples, jsonld, graphml, mermaid, dot, svg, png, markdown;
without --format, the extension of -o FILE decides (.ttl .nt .jsonld .graphml .mmd .dot .svg .png .md);
-o DIR/ writes DIR/<entity>.<ext>. A misspelt NAME exports the closest entity, with a note saying so.
svg and png need Graphviz `dot` (apt-get install graphviz).

examples:
  stackgraph export NVLink --format mermaid
  stackgraph export NVLink UALink --depth 2 -o interconnect.svg
  stackgraph export kg:nine-L8 --predicates sg:fitsIn,sg:ownedBy --format markdown -o l8.md
  stackgraph export --sparql 'CONSTRUCT { ?t sg:fitsIn kg:nine-L8 } WHERE { ?t sg:fitsIn kg:nine-L8 }' --format dot
"""

DOCS_EPILOG = """examples:
  stackgraph docs site/
  stackgraph docs site/ --format html      (Markdown plus static HTML, no network needed to view)
"""


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "export",
        help="export the subgraph around entities (RDF, GraphML, Mermaid, DOT, SVG/PNG, Markdown)",
        description="Export the entities within --depth hops of NAME (a label, alternative label, layer "
        "code or IRI; quote names with spaces), or the graph a SPARQL CONSTRUCT builds.",
        epilog=EXPORT_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("names", nargs="*", metavar="NAME", help="entities to export around")
    parser.add_argument(
        "--depth", type=int, default=DEFAULT_DEPTH, metavar="N", help="hops to follow (default 1, at most 4)"
    )
    parser.add_argument(
        "--predicates",
        "--predicate",
        action="append",
        metavar="P[,P...]",
        help="follow only these predicates (sg:fitsIn, an IRI or a label such as 'owned by'); "
        "repeat the option or separate predicates with commas",
    )
    parser.add_argument("--format", choices=FORMATS, help="output format (default turtle)")
    parser.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of standard output")
    parser.add_argument(
        "--sparql", metavar="QUERY", help="export what this CONSTRUCT or DESCRIBE query builds"
    )
    parser.add_argument(
        "--max-nodes",
        type=int,
        default=DEFAULT_MAX_NODES,
        metavar="N",
        help=f"cap on entities; the rest are listed as left out (default {DEFAULT_MAX_NODES})",
    )
    add_graph_options(parser)
    parser.set_defaults(run=run_export)

    docs = subparsers.add_parser(
        "docs",
        help="write a browsable docs site (Markdown, optionally HTML) from the graph",
        description="Write an index with both layer models and the crosswalk, a page per layer, workload "
        "and symptom, and a glossary, all citing their sources.",
        epilog=DOCS_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    docs.add_argument("outdir", metavar="OUTDIR", help="directory to write into (created if missing)")
    docs.add_argument(
        "--format", choices=("markdown", "html"), default="markdown", help="html also writes .html pages"
    )
    add_graph_options(docs)
    docs.set_defaults(run=run_docs)


def _engine(args: argparse.Namespace):
    from stackgraph.graph.engine import Engine

    return Engine(open_graph(args), semantic=False)


def run_export(args: argparse.Namespace) -> int:
    from stackgraph.graph.export import api
    from stackgraph.graph.export.errors import ExportError, RendererMissing
    from stackgraph.graph.model import UnknownEntity
    from stackgraph.graph.sparql import QueryError, Timeout
    from stackgraph.graph.store import DataFileError

    if bool(args.names) == bool(args.sparql):
        return error("give one or more NAMEs or --sparql QUERY (not both)")
    into_dir = bool(args.output) and (args.output.endswith(("/", os.sep)) or Path(args.output).is_dir())
    fmt = args.format or (api.format_for_path(args.output) if args.output and not into_dir else None)
    if fmt is None and args.output and not into_dir and Path(args.output).suffix:
        return error(
            f"cannot tell the format of {args.output} from {Path(args.output).suffix!r}; "
            f"add --format ({', '.join(FORMATS)}) or use one of their extensions"
        )
    fmt = fmt or "turtle"
    if fmt in api.BINARY_FORMATS and not args.output and sys.stdout.isatty():
        return error(f"{fmt} is binary: write it to a file with -o FILE (or pipe it)")
    predicates = [p for item in args.predicates or () for p in item.split(",") if p.strip()] or None
    try:
        engine = _engine(args)
        sub = api.collect(
            engine,
            args.names,
            args.depth,
            predicates,
            args.sparql,
            args.max_nodes,
            relations_only=fmt in api.DIAGRAM_FORMATS,
        )
        content = api.render(sub, engine.catalog, fmt)
    except UnknownEntity as unknown:
        return error(str(unknown), EXIT_NOT_FOUND)
    except RendererMissing as missing:
        return error(str(missing), EXIT_NOT_FOUND)
    except Timeout as slow:
        return error(str(slow), EXIT_TIMEOUT)
    except (ExportError, QueryError, DataFileError) as problem:
        return error(str(problem))
    for given, taken in sub.origin.get("corrected", ()):
        print(
            f"stackgraph: note: no entity is named {given!r}; exporting {taken}, the closest", file=sys.stderr
        )
    data = content if isinstance(content, bytes) else content.encode("utf-8")
    if args.output:
        target = Path(args.output)
        if into_dir:
            target = target / (_file_stem(sub, args.names) + api.EXTENSIONS[fmt])
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        except OSError as exc:
            return error(f"{target}: {exc.strerror or exc}")
        print(f"stackgraph: wrote {target} ({len(sub.nodes)} entities, {fmt})", file=sys.stderr)
    else:
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
    if sub.origin.get("truncated"):
        print("stackgraph: warning: the --sparql result was cut at the SPARQL row cap", file=sys.stderr)
    if sub.omitted:
        print(
            f"stackgraph: warning: {len(sub.omitted)} more entities left out by the cap of {sub.max_nodes}; "
            "--max-nodes raises it",
            file=sys.stderr,
        )
    return EXIT_OK


def _file_stem(sub: object, names: list[str]) -> str:
    """A file name for ``-o DIR/``: the first seed's local name (``nvlink``), else ``export``."""
    seeds = getattr(sub, "seeds", ())
    stem = seeds[0].rstrip("/#").rsplit("/", 1)[-1].rsplit("#", 1)[-1] if seeds else ""
    stem = re.sub(r"[^A-Za-z0-9._-]+", "-", stem).strip("-.")
    return stem or "export"


def run_docs(args: argparse.Namespace) -> int:
    from stackgraph.graph.export.docsite import write_docs
    from stackgraph.graph.store import DataFileError

    if not args.outdir.strip():  # Path("") is the current directory: never write there by accident
        return error("OUTDIR is empty: name the directory to write the site into, e.g. site/")
    try:
        engine = _engine(args)
        report = write_docs(engine, args.outdir, fmt=args.format)
    except DataFileError as problem:
        return error(str(problem))
    except OSError as exc:
        return error(f"{args.outdir}: {exc.strerror or exc}")
    print(f"stackgraph: {report.summary}", file=sys.stderr)
    return EXIT_OK


__all__ = ["EXIT_TIMEOUT", "FORMATS", "register", "run_docs", "run_export"]
