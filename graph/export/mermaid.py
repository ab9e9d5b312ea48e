"""Mermaid flowcharts of a subgraph, for Markdown pages that GitHub and GitLab render.

Every label is written as a Mermaid string ("...") in which the characters Mermaid or the HTML it
renders to would read as syntax are replaced by Mermaid's entity codes: ``#quot;`` for a double
quote, ``#35;`` for ``#`` itself, ``#lt;``/``#gt;``/``#amp;`` for the HTML specials, and numeric
codes for ``|`` and the backtick (which would start a Markdown string). Node ids are derived from
the IRI's local name, made of letters, digits and underscores and prefixed with ``n_`` so that no
id can be a Mermaid keyword (``end``, ``graph``, ``subgraph``, ``style``, ``class``).
"""

from __future__ import annotations

import hashlib
import re

from stackgraph.graph.export.view import FAMILY_BY_KEY, MAX_EDGE_LABEL, Diagram, Family, shorten

_ENTITIES = {
    "#": "#35;",
    '"': "#quot;",
    "<": "#lt;",
    ">": "#gt;",
    "&": "#amp;",
    "|": "#124;",
    "`": "#96;",
    "\\": "#92;",
}
_SPECIAL = re.compile("|".join(re.escape(c) for c in _ENTITIES))
_ID_UNSAFE = re.compile(r"[^A-Za-z0-9_]+")


def escape(text: str) -> str:
    """A label as the inside of a Mermaid "..." string: one line, specials as entity codes."""
    return _SPECIAL.sub(lambda m: _ENTITIES[m.group(0)], " ".join(str(text).split()))


def quoted(text: str) -> str:
    return f'"{escape(text)}"'


def node_ids(iris: list[str]) -> dict[str, str]:
    """Safe, stable, unique Mermaid ids: ``n_nvlink`` for kg:nvlink; clashes get a hash suffix."""
    ids: dict[str, str] = {}
    used: set[str] = set()
    for iri in sorted(iris):
        local = iri.rsplit("/", 1)[-1].rsplit("#", 1)[-1]
        base = "n_" + (_ID_UNSAFE.sub("_", local).strip("_") or "node")
        candidate = base
        if candidate in used:
            candidate = f"{base}_{hashlib.sha1(iri.encode()).hexdigest()[:8]}"
        used.add(candidate)
        ids[iri] = candidate
    return ids


def _shape(family: Family, text: str) -> str:
    opening, closing = family.mermaid
    return f"{opening}{quoted(text)}{closing}"


def _class_defs(families: list[Family]) -> list[str]:
    return [f"  classDef {f.key} fill:{f.fill},stroke:{f.stroke},color:#111827" for f in families]


def to_mermaid(diagram: Diagram, legend: bool = True) -> str:
    """A ``flowchart LR`` of the diagram: each layer a box around what is placed in it, nodes shaped
    and coloured by family, seeds in bold outline, labelled edges, and a legend subgraph (with the
    "and N more" note when the caps left entities out)."""
    ids = node_ids([n.iri for n in diagram.nodes])
    lines = [f"%% stackgraph: {escape(diagram.title)}", "flowchart LR"]
    by_iri = {n.iri: n for n in diagram.nodes}
    clustered = {iri for cluster in diagram.clusters for iri in cluster.members}
    for cluster in diagram.clusters:  # a layer's box holds the layer and what is placed in it
        lines.append(f"  subgraph c_{ids[cluster.layer]}[{quoted(cluster.label)}]")
        for iri in cluster.members:
            node = by_iri[iri]
            lines.append(f"    {ids[iri]}{_shape(FAMILY_BY_KEY[node.family], node.label)}")
        lines.append("  end")
    for node in diagram.nodes:
        if node.iri not in clustered:
            lines.append(f"  {ids[node.iri]}{_shape(FAMILY_BY_KEY[node.family], node.label)}")
    for edge in diagram.edges:
        lines.append(
            f"  {ids[edge.source]} -->|{quoted(shorten(edge.label, MAX_EDGE_LABEL))}| {ids[edge.target]}"
        )
    if legend and (diagram.families or diagram.note):
        lines.append('  subgraph legend["Legend"]')
        lines.append("    direction TB")
        for family in diagram.families:
            lines.append(f"    legend_{family.key}{_shape(family, family.label)}")
        if diagram.note:
            lines.append(f"    legend_note[{quoted('… ' + diagram.note)}]")
        lines.append("  end")
    lines.extend(_class_defs(list(diagram.families)))
    lines.append("  classDef note fill:#f9fafb,stroke:#9ca3af,stroke-dasharray:4 3,color:#374151")
    by_family: dict[str, list[str]] = {}
    for node in diagram.nodes:
        by_family.setdefault(node.family, []).append(ids[node.iri])
    for family in diagram.families:
        members = by_family.get(family.key, [])
        if legend:
            members = [*members, f"legend_{family.key}"]
        if members:
            lines.append(f"  class {','.join(members)} {family.key}")
    if legend and diagram.note:
        lines.append("  class legend_note note")
    for cluster in diagram.clusters:
        lines.append(f"  style c_{ids[cluster.layer]} fill:#f8fafc,stroke:#94a3b8")
    for node in diagram.nodes:
        if node.seed:
            lines.append(f"  style {ids[node.iri]} stroke-width:3px")
    return "\n".join(lines) + "\n"
