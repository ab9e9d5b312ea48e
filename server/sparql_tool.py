"""The MCP ``sparql`` tool's bridge to the guard (``stackgraph.graph.sparql.run_query``).

The guard vets the query on its algebra (no updates, SERVICE, LOAD or FROM), applies the timeout
and caps the rows; this module turns its ``QueryResult`` into typed JSON bindings (the SPARQL 1.1
JSON results shape: ``{type, value, datatype, xml:lang}``, so an IRI, a literal and a blank node
stay apart) and its errors into one-line tool errors, so the MCP tool refuses exactly what the
CLI and the HTTP endpoint refuse.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from rdflib import BNode, Literal, URIRef

from stackgraph.server.errors import UserError

if TYPE_CHECKING:
    from stackgraph.graph.engine import Engine

#: The JSON of a SELECT's variable names may take at most this many characters: every row repeats
#: them as keys, so past it not even one row fits the result's bound.
MAX_VARIABLE_CHARS = 2_000


def binding(term: Any) -> dict[str, str] | None:
    """One RDF term as a SPARQL 1.1 JSON results binding (None when unbound)."""
    if term is None:
        return None
    if isinstance(term, URIRef):
        return {"type": "uri", "value": str(term)}
    if isinstance(term, BNode):
        return {"type": "bnode", "value": str(term)}
    if isinstance(term, Literal):
        out = {"type": "literal", "value": str(term)}
        if term.language:
            out["xml:lang"] = term.language
        elif term.datatype is not None:
            out["datatype"] = str(term.datatype)
        return out
    return {"type": "literal", "value": str(term)}


def max_rows() -> int:
    """The most rows the guard lets any caller page through."""
    from stackgraph.graph.sparql import MAX_ROWS

    return MAX_ROWS


def run_sparql(engine: Engine, query: str, max_rows: int, timeout_s: float) -> dict[str, Any]:
    """Run ``query`` with at most ``max_rows`` rows; returns kind, variables, boolean, rows,
    total (None when the cap cut the result), capped (True when it did) and elapsed_ms."""
    from stackgraph.graph import sparql

    try:
        result = sparql.run_query(engine.graph, query, timeout_s=timeout_s, max_rows=max_rows)
    except sparql.QueryError as error:
        kind = type(error).__name__
        prefix = {"ParseError": "bad argument 'query'", "Refused": "refused"}.get(kind, "query failed")
        raise UserError(f"{prefix}: {error}") from None
    if result.graph is not None:
        variables = ["subject", "predicate", "object"]
        triples = sorted(result.graph, key=lambda t: (str(t[0]), str(t[1]), str(t[2])))
        rows = [dict(zip(variables, map(binding, triple), strict=True)) for triple in triples]
    else:
        variables = list(result.vars)
        if len(json.dumps(variables)) > MAX_VARIABLE_CHARS:
            raise UserError(
                f"bad argument 'query': it selects {len(variables)} variables "
                f"({len(json.dumps(variables)):,} characters of names, repeated in every row); "
                f"at most {MAX_VARIABLE_CHARS:,} characters fit a result: select fewer or shorter variables"
            )
        rows = [
            {name: binding(value) for name, value in zip(variables, row, strict=False) if value is not None}
            for row in result.rows
        ]
    return {
        "kind": result.kind,
        "variables": variables,
        "boolean": result.boolean,
        "rows": rows,
        "total": None if result.truncated else len(rows),
        "capped": result.truncated,
        "elapsed_ms": round(result.elapsed_ms, 2),
    }
