"""Short summaries of tool results: the first lines of each result's text content.

Each function takes the structured content a tool is about to return (already paged and trimmed)
and says the gist in a few lines. The text content goes on with the cursor and the whole record
as JSON (``bounds.text_content``), so a summary may leave things out but must not mislead.
"""

from __future__ import annotations

from typing import Any


def _ref(ref: dict[str, Any]) -> str:
    return f"{ref['code']} {ref['label']}" if ref.get("code") else ref["label"]


def _refs(page: dict[str, Any] | None, limit: int = 8) -> str:
    if not page:
        return ""
    names = [_ref(r) for r in page["items"][:limit]]
    more = page["total"] - len(names)
    return ", ".join(names) + (f" (+{more} more)" if more > 0 else "")


def _sources(page: dict[str, Any] | None, limit: int = 3) -> str:
    if not page or not page["items"]:
        return ""
    return "Sources: " + "; ".join(
        s.get("display") or f"{s.get('title') or s['document']} § {s['section']}"
        for s in page["items"][:limit]
    )


def answer(data: dict[str, Any]) -> str:
    lines = [data["answer"] or "(no answer)"]
    if data.get("error"):
        lines.append(f"Error: {data['error']}")
    if not data["answered"] and data["suggestions"]["items"]:
        lines.append("Closest matches: " + _refs(data["suggestions"], 5))
    if data["entities"]["items"]:
        lines.append("About: " + _refs(data["entities"]))
    if data["path"]["items"]:
        lines.append("Path: " + path_text(data["path"]["items"]))
    if src := _sources(data["sources"]):
        lines.append(src)
    if data.get("conversation_id"):
        lines.append(f"(conversation {data['conversation_id']})")
    return "\n".join(lines)


def search(data: dict[str, Any]) -> str:
    page = data["results"]
    if not page["items"]:
        return f"No entity matches {data['text']!r}."
    lines = [f"{page['total']} match(es) for {data['text']!r}:"]
    for i, ref in enumerate(page["items"], start=page["offset"] + 1):
        lines.append(f"{i}. {_ref(ref)} ({ref['type']}) <{ref['iri']}>")
    return "\n".join(lines)


def describe(data: dict[str, Any]) -> str:
    entity = data["entity"]
    head = f"{_ref(entity)} ({entity['type']})"
    lines = [head + (f": {data['definition']}" if data.get("definition") else "")]
    if data["alt_labels"]["items"]:
        lines.append("Also called: " + ", ".join(data["alt_labels"]["items"]))
    for placement in data["placements"]["items"]:
        role = f" as {placement['role']}" if placement.get("role") else ""
        lines.append(f"Fits {_ref(placement['layer'])}{role} ({placement['basis']})")
    for name in ("outgoing", "incoming"):
        page = data.get(name)
        if page and page["items"]:
            arrow = "→" if name == "outgoing" else "←"
            edges = [f"{e['predicate_label']} {arrow} {_value(e['value'])}" for e in page["items"][:10]]
            more = page["total"] - len(edges)
            lines.append(f"{name.title()}: " + "; ".join(edges) + (f" (+{more} more)" if more > 0 else ""))
    if src := _sources(data.get("sources")):
        lines.append(src)
    return "\n".join(lines)


def _value(value: dict[str, Any] | str) -> str:
    return _ref(value) if isinstance(value, dict) else value


def triage(data: dict[str, Any]) -> str:
    read_as = data.get("read_as")
    lines = [
        (f"Read {_ref(read_as)}; " if read_as and read_as["iri"] != data["symptom"]["iri"] else "")
        + f"Triage of {_ref(data['symptom'])}"
        + (f" after: {' → '.join(data['taken'])}" if data["taken"] else "")
    ]
    if data["done"]:
        if data.get("conclusion"):
            lines.append(f"Conclusion: {data['conclusion']}")
        if data.get("action"):
            lines.append(f"Action: {data['action']}")
        if data["layers"]["items"]:
            lines.append("Owning layer(s): " + _refs(data["layers"]))
        if data["causes"]["items"]:
            lines.append("Likely causes: " + _refs(data["causes"]))
        if data["diagnostics"]["items"]:
            lines.append("Check: " + "; ".join(data["diagnostics"]["items"][:6]))
    else:
        lines.append(f"Next question: {data['question']}")
        lines.append("Answer with one of: " + " | ".join(data["options"]["items"]))
    if src := _sources(data["sources"]):
        lines.append(src)
    return "\n".join(lines)


def path_text(edges: list[dict[str, Any]]) -> str:
    if not edges:
        return ""
    parts = [_ref(edges[0]["source"])]
    for edge in edges:
        parts.append(f"—{edge['predicate_label']}→ {_ref(edge['target'])}")
    return " ".join(parts)


def related(data: dict[str, Any]) -> str:
    if not data["connected"]:
        return f"No path between {_ref(data['a'])} and {_ref(data['b'])} within the hop limit."
    return f"{data['hops']} hop(s): " + path_text(data["path"]["items"])


def neighbors(data: dict[str, Any]) -> str:
    page = data["edges"]
    lines = [f"{page['total']} edge(s) within {data['depth']} hop(s) of {_ref(data['entity'])}:"]
    for edge in page["items"][:40]:
        lines.append(f"- {_ref(edge['source'])} —{edge['predicate_label']}→ {_ref(edge['target'])}")
    return "\n".join(lines)


def layers(data: dict[str, Any]) -> str:
    lines = []
    for info in data["layers"]["items"]:
        layer = info["layer"]
        model = f"[{layer['model']}] " if layer.get("model") and data["model"] is None else ""
        runs = f" (runs in {info['runs_in']})" if info.get("runs_in") else ""
        names = ", ".join(_ref(m) for m in info["members"])
        more = info["members_total"] - len(info["members"])
        names += f" (+{more} more: describe the layer for all)" if more > 0 else ""
        lines.append(f"{model}{_ref(layer)}{runs}: {info['members_total']} member(s): {names}")
    return "\n".join(lines) or "No layers."


def sparql(data: dict[str, Any]) -> str:
    if data["kind"] == "ask":
        return f"ASK → {data['boolean']}"
    page = data["rows"]
    shown = len(page["items"])
    first, last = page["offset"] + 1, page["offset"] + shown
    if page["total"] is not None:
        head = f"{page['total']} row(s)" + (f", rows {first}-{last} here" if page["total"] > shown else "")
    else:
        head = f"rows {first}-{last} here; more follow (total unknown)" if page["truncated"] else ""
        head = head or f"rows {first}-{last}, the last this server returns"
    lines = [head]
    columns = data["variables"] or (sorted(page["items"][0]) if page["items"] else [])
    if columns:
        lines.append(" | ".join(columns))
        for row in page["items"][:10]:
            lines.append(" | ".join(_binding(row.get(c)) for c in columns))
    return "\n".join(lines)


def _binding(value: Any) -> str:
    """A SPARQL binding ({type, value, ...}, or a CONSTRUCT triple's plain string) in a table cell."""
    if isinstance(value, dict):
        return str(value.get("value", ""))
    return "" if value is None else str(value)


def export(data: dict[str, Any]) -> str:
    end = data["offset"] + len(data["content"])
    head = f"{data['format']} export of {_ref(data['entity'])}, depth {data['depth']}"
    head += f" (characters {data['offset']}-{end} of {data['total_chars']})"
    return head


def schema(data: dict[str, Any]) -> str:
    classes = ", ".join(f"{c['name']} ({c['instances']})" for c in data["classes"]["items"][:12])
    properties = ", ".join(f"{p['name']} ({p['uses']})" for p in data["properties"]["items"][:12])
    return (
        f"{data['classes']['total']} classes, most instances first: {classes}\n"
        f"{data['properties']['total']} properties, most used first: {properties}\n"
        f"{len(data['examples'])} example queries follow in the record; run them with `sparql`."
    )
