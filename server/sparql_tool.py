"""The MCP ``sparql`` tool's bridge to the guard (``stackgraph.graph.sparql.run_query``).

The guard vets the query on its algebra (no updates, SERVICE, LOAD or FROM), applies the timeout
and caps the rows; this module only turns its ``QueryResult`` into JSON rows and its errors into
one-line tool errors, so the MCP tool refuses exactly what the CLI and the HTTP endpoint refuse.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from stackgraph.server.errors import UserError

if TYPE_CHECKING:
    from stackgraph.graph.engine import Engine


def _term(term: Any) -> str | None:
    return None if term is None else str(term)


def run_sparql(engine: Engine, query: str, max_rows: int, timeout_s: float) -> dict[str, Any]:
    """Run ``query`` with at most ``max_rows`` rows; returns kind, variables, boolean, rows,
    total (None when the cap cut the result) and elapsed_ms."""
    from stackgraph.graph import sparql

    try:
        result = sparql.run_query(engine.graph, query, timeout_s=timeout_s, max_rows=max_rows)
    except sparql.QueryError as error:
        kind = type(error).__name__
        prefix = {"ParseError": "bad argument 'query'", "Refused": "refused"}.get(kind, "query failed")
        raise UserError(f"{prefix}: {error}") from None
    if result.graph is not None:
        variables = ["subject", "predicate", "object"]
        rows = [{"subject": str(s), "predicate": str(p), "object": str(o)} for s, p, o in result.graph]
        rows.sort(key=lambda r: (r["subject"], r["predicate"], r["object"]))
    else:
        variables = list(result.vars)
        rows = [
            {name: _term(value) for name, value in zip(variables, row, strict=False)} for row in result.rows
        ]
    return {
        "kind": result.kind,
        "variables": variables,
        "boolean": result.boolean,
        "rows": rows,
        "total": None if result.truncated else len(rows),
        "elapsed_ms": round(result.elapsed_ms, 2),
    }
