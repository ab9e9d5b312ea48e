"""Saying "this result was cut at the row cap" inside the result body, where each format allows it.

A header (``Stackgraph-Truncated``) is easy to miss: a client that saves the body sees a complete
looking table. So a truncated result also carries the news in the body, using only what each
standard format already has, so every conforming parser still reads it:

- SPARQL results JSON and XML: a ``link`` in the head (SPARQL 1.1 Query Results JSON section 3.1,
  XML section 2.2), pointing at the limits node of the service description.
- Turtle, N-Triples: a ``#`` comment line first; RDF/XML: an XML comment after the declaration.
- CSV, TSV and JSON-LD have no place for metadata: the header is all they get.
"""

from __future__ import annotations

import json

#: Fragment of the service description node that states the limits (see ``service_description``).
LIMITS_FRAGMENT = "limits"


def limits_iri(endpoint: str) -> str:
    """The IRI a truncated result links to: the limits node of this endpoint's service description."""
    return f"{endpoint}#{LIMITS_FRAGMENT}"


def notice(max_rows: int) -> str:
    """The one-line warning, the same in every format."""
    return (
        f"stackgraph: result truncated at {max_rows} rows; more exist. "
        "Raise the limit parameter (see the service description) or narrow the query."
    )


def mark_truncated(body: str, fmt: str, *, endpoint: str, max_rows: int) -> str:
    """``body`` (already serialized in ``fmt``) with the truncation notice added where ``fmt`` allows."""
    link = limits_iri(endpoint)
    if fmt == "json":
        data = json.loads(body)
        data.setdefault("head", {}).setdefault("link", []).append(link)
        return json.dumps(data, ensure_ascii=False)
    if fmt == "xml" and "sparql-results" in body[:400]:
        element = f'<link href="{_xml_attr(link)}"/>'
        if "</head>" in body:
            return body.replace("</head>", element + "</head>", 1)
        return body.replace("<head/>", f"<head>{element}</head>", 1)
    if fmt == "xml":  # RDF/XML
        comment = f"<!-- {notice(max_rows)} {link} -->"
        if body.startswith("<?xml"):
            end = body.index("?>") + 2
            return body[:end] + "\n" + comment + body[end:]
        return comment + "\n" + body
    if fmt in ("turtle", "ntriples"):
        return f"# {notice(max_rows)} {link}\n{body}"
    return body


def _xml_attr(value: str) -> str:
    return value.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;")


__all__ = ["LIMITS_FRAGMENT", "limits_iri", "mark_truncated", "notice"]
