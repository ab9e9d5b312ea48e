"""``stackgraph sparql`` (query the graph directly) and ``stackgraph push`` (fill a remote store).

Exit codes of ``sparql``: 0 answered (an ASK that says false included), 1 the store failed (remote
store down, out of memory), 2 the query is not SPARQL (one line with line and column), is refused
by the guard (updates, SERVICE, FROM, LOAD), or the options are wrong, 3 the query timed out.
``push``: 0 pushed, 1 the remote store failed, 2 bad input.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from stackgraph.cli.common import EXIT_NOT_FOUND, EXIT_OK, add_graph_options, error, open_graph

EXIT_TIMEOUT = 3

# Spelled out here so that ``stackgraph --help`` does not import rdflib; a test keeps them equal
# to stackgraph.graph.sparql.SELECT_FORMATS + GRAPH_FORMATS.
FORMATS = ("table", "json", "csv", "tsv", "xml", "turtle", "ntriples", "jsonld")

SPARQL_EPILOG = """The ontology's prefixes are predeclared: sg: kg: rdf: rdfs: owl: xsd: skos: dct: prov: sh:

formats: table (the default), json, csv, tsv, xml for SELECT/ASK;
         turtle (the default), ntriples, jsonld, xml (RDF/XML), table for CONSTRUCT/DESCRIBE

examples:
  stackgraph sparql 'SELECT ?l ?code WHERE { ?l a sg:Layer ; sg:code ?code } ORDER BY ?code'
  stackgraph sparql --format csv -f layers.rq > layers.csv
  echo 'DESCRIBE kg:nvlink' | stackgraph sparql -f - --format turtle
  stackgraph sparql --store http://127.0.0.1:7878/query 'ASK { kg:nvlink ?p ?o }'

exit codes: 0 answered, 1 the store failed, 2 syntax error / refused / bad option, 3 timed out
"""

PUSH_EPILOG = """examples:
  oxigraph serve --location ./db --bind 127.0.0.1:7878 &
  stackgraph push http://127.0.0.1:7878/update
  stackgraph push http://127.0.0.1:7878/update --data our-clusters.ttl --clear
  stackgraph ask --store http://127.0.0.1:7878/query "which layer owns CUDA OOM?"

  Virtuoso (after granting SPARQL_UPDATE), into a named graph:
  stackgraph push http://127.0.0.1:8890/sparql --graph https://w3id.org/stackgraph/graph
  stackgraph ask --store 'http://127.0.0.1:8890/sparql?default-graph-uri=https://w3id.org/stackgraph/graph' ...
"""


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "sparql",
        help="run a read-only SPARQL query against the graph",
        description="Run a read-only SPARQL 1.1 query (SELECT, ASK, CONSTRUCT, DESCRIBE) against the graph.",
        epilog=SPARQL_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("query", nargs="?", help="the query text (or use -f)")
    parser.add_argument("-f", "--file", metavar="FILE", help="read the query from FILE ('-' reads stdin)")
    parser.add_argument(
        "--format", choices=FORMATS, default=None, help="output format (default: table, turtle for graphs)"
    )
    parser.add_argument(
        "--json", action="store_true", help="same as --format json (jsonld for graph results)"
    )
    parser.add_argument("--timeout", type=float, metavar="SECONDS", help="time limit (default 5, at most 30)")
    parser.add_argument("--limit", type=int, metavar="ROWS", help="row cap (default 1000, at most 10000)")
    add_graph_options(parser)
    parser.set_defaults(run=run_sparql)

    push = subparsers.add_parser(
        "push",
        help="load the built-in graph (and --data files) into a remote SPARQL store",
        description="Load the built-in graph, plus any --data files, into a SPARQL 1.1 Update endpoint.",
        epilog=PUSH_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    push.add_argument("url", metavar="UPDATE_URL", help="the store's SPARQL Update endpoint")
    push.add_argument(
        "--data", action="append", default=[], metavar="FILE", help="add an RDF file; repeatable"
    )
    push.add_argument(
        "--graph", metavar="IRI", help="write into this named graph (default: the default graph)"
    )
    push.add_argument(
        "--batch",
        type=int,
        default=None,
        metavar="N",
        help="send INSERT DATA requests of N triples (default: one bulk upload where the server "
        "takes it, as Oxigraph's /store does; else batches of 500)",
    )
    push.add_argument("--clear", action="store_true", help="empty the target graph first")
    push.set_defaults(run=run_push)


def _read_query(args: argparse.Namespace) -> str | None:
    if args.file and args.query:
        return None
    if args.file == "-":
        return sys.stdin.read()
    if args.file:
        with open(args.file, encoding="utf-8") as handle:
            return handle.read()
    return args.query


def run_sparql(args: argparse.Namespace) -> int:
    from stackgraph.graph import worker_pool

    worker_pool.start()  # the workers' forkserver imports rdflib while this process does the same
    from stackgraph.graph import sparql
    from stackgraph.graph.store import DataFileError

    try:
        query = _read_query(args)
    except OSError as exc:
        return error(f"{args.file}: {exc.strerror or exc}")
    if query is None:
        return error("give the query as an argument or with -f FILE, not both (and not neither)")
    try:
        kind = sparql.check_query(query)  # fail fast, before loading the graph
    except sparql.QueryError as exc:
        return error(str(exc))
    graph_result = kind in ("construct", "describe")
    if args.format:
        fmt = args.format
    elif graph_result:
        fmt = "jsonld" if args.json else "turtle"
    else:
        fmt = "json" if args.json else "table"
    allowed = sparql.GRAPH_FORMATS if graph_result else sparql.SELECT_FORMATS
    if fmt not in allowed:
        return error(f"--format {fmt} is not for {kind.upper()} results; use one of {', '.join(allowed)}")
    try:
        loaded = open_graph(args)
    except DataFileError as exc:
        return error(str(exc))
    try:
        result = sparql.run_query(loaded.graph, query, timeout_s=args.timeout, max_rows=args.limit)
    except sparql.Timeout as exc:
        return error(str(exc), EXIT_TIMEOUT)
    except sparql.EvaluationError as exc:
        return error(str(exc), EXIT_NOT_FOUND)
    except sparql.QueryError as exc:
        return error(str(exc))
    text = sparql.format_result(result, fmt)
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
    sys.stdout.flush()
    if result.truncated and fmt != "table":  # the table says so in its footer
        print(
            f"stackgraph: warning: results truncated at {result.max_rows} "
            f"{'triples' if graph_result else 'rows'}; --limit raises the cap (at most {sparql.MAX_ROWS})",
            file=sys.stderr,
        )
    return EXIT_OK


def run_push(args: argparse.Namespace) -> int:
    from stackgraph.graph.push import push
    from stackgraph.graph.remote import RemoteStoreError
    from stackgraph.graph.store import DataFileError, builtin_files, load_graph

    if args.batch is not None and args.batch < 1:
        return error("--batch must be at least 1")
    try:
        loaded = load_graph(args.data)
    except DataFileError as exc:
        return error(str(exc))
    interactive = sys.stderr.isatty()
    started = time.perf_counter()
    last_shown = [0.0]

    def progress(sent: int, total: int) -> None:
        now = time.perf_counter()
        if sent < total and now - last_shown[0] < (0.1 if interactive else 1.0):
            return
        last_shown[0] = now
        end = "" if interactive and sent < total else "\n"
        start = "\r" if interactive else ""
        print(f"{start}pushed {sent:,}/{total:,} triples", end=end, file=sys.stderr, flush=True)

    def notice(text: str) -> None:
        print(f"stackgraph: {text}", file=sys.stderr, flush=True)

    try:
        sources = [*builtin_files(), *[Path(p) for p in args.data]] if args.data else None
        sent = push(loaded.graph, args.url, args.graph, args.clear, args.batch, progress, notice, sources)
    except RemoteStoreError as exc:
        if interactive:
            print(file=sys.stderr)
        return error(str(exc), EXIT_NOT_FOUND)
    target = f"graph <{args.graph}>" if args.graph else "the default graph"
    print(f"pushed {sent:,} triples to {args.url} ({target}) in {time.perf_counter() - started:.1f} s")
    return EXIT_OK


__all__ = ["EXIT_TIMEOUT", "FORMATS", "register", "run_push", "run_sparql"]
