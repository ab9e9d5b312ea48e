"""Graphviz DOT of a subgraph, and SVG or PNG rendered from it by the system's ``dot``.

The DOT text is written here rather than through the ``graphviz`` package's builder so that its
order is ours (sorted, hence stable); the package is used only to run ``dot``. Labels are DOT
quoted strings with backslashes and quotes escaped, so Graphviz's own escapes (``\\N``, ``\\l``)
can never be triggered by a label.
"""

from __future__ import annotations

import textwrap

from stackgraph.graph.catalog import local_name
from stackgraph.graph.export.errors import ExportError, RendererMissing
from stackgraph.graph.export.view import FAMILY_BY_KEY, MAX_EDGE_LABEL, Diagram, NodeView, shorten

FONT = "Helvetica"


def wrap(text: str, width: int) -> list[str]:
    return textwrap.wrap(" ".join(text.split()), width) or [""]


MISSING_DOT = (
    "Graphviz `dot` was not found on PATH; install Graphviz to export svg or png "
    "(Debian/Ubuntu: apt-get install graphviz, macOS: brew install graphviz), "
    "or export --format dot or mermaid instead"
)


def quote(text: str) -> str:
    """A DOT double-quoted string holding ``text`` literally (on one line)."""
    flat = " ".join(str(text).split())
    return '"' + flat.replace("\\", "\\\\").replace('"', '\\"') + '"'


def quote_lines(lines: list[str]) -> str:
    """A DOT string of several lines (``\\n`` between them), each escaped as ``quote`` does."""
    return '"' + "\\n".join(quote(line)[1:-1] for line in lines) + '"'


def _node(node: NodeView) -> str:
    family = FAMILY_BY_KEY[node.family]
    width = ", penwidth=3" if node.seed else ""
    return (
        f"  {quote(local_name(node.iri))} [label={quote(node.label)}, shape={family.dot_shape}, "
        f'fillcolor="{family.fill}", color="{family.stroke}"{width}, tooltip={quote(node.iri)}];'
    )


def to_dot(diagram: Diagram, legend: bool = True) -> str:
    lines = [
        "digraph stackgraph {",
        f"  graph [rankdir=LR, fontname={quote(FONT)}, fontsize=11, label={quote(diagram.title)}, labelloc=t, "
        "nodesep=0.3, ranksep=0.6];",
        f"  node [fontname={quote(FONT)}, fontsize=10, style=filled, penwidth=1];",
        f'  edge [fontname={quote(FONT)}, fontsize=9, color="#4b5563", fontcolor="#374151"];',
    ]
    by_iri = {n.iri: n for n in diagram.nodes}
    clustered = {iri for cluster in diagram.clusters for iri in cluster.members}
    for cluster in diagram.clusters:  # a layer's box holds the layer and what is placed in it
        lines.append(f"  subgraph {quote('cluster_' + local_name(cluster.layer))} {{")
        lines.append(
            f'    label={quote(cluster.label)}; style="rounded,filled"; fillcolor="#f8fafc"; color="#94a3b8";'
        )
        lines.extend("  " + _node(by_iri[iri]) for iri in cluster.members)
        lines.append("  }")
    lines.extend(_node(node) for node in diagram.nodes if node.iri not in clustered)
    for edge in diagram.edges:
        short = shorten(edge.label, MAX_EDGE_LABEL)
        lines.append(
            f"  {quote(local_name(edge.source))} -> {quote(local_name(edge.target))} [label={quote(short)}, "
            f"tooltip={quote(edge.label)}];"
        )
    if legend and (diagram.families or diagram.note):
        lines.append("  subgraph cluster_legend {")
        # rank=same stacks the entries in one column (across the flow), so the legend adds height, not width.
        lines.append('    label="Legend"; style=dashed; color="#9ca3af"; fontsize=10; rank=same;')
        for family in diagram.families:
            name = quote(f"legend:{family.key}")
            lines.append(
                f"    {name} [label={quote(family.label)}, shape={family.dot_shape}, "
                f'fillcolor="{family.fill}", color="{family.stroke}"];'
            )
        if diagram.note:
            lines.append(
                f'    "legend:note" [label={quote_lines(wrap("… " + diagram.note, 40))}, shape=note, '
                'fillcolor="#f9fafb", color="#9ca3af", style="filled,dashed"];'
            )
        lines.append("  }")
    lines.append("}")
    return "\n".join(lines) + "\n"


def render(dot_text: str, fmt: str) -> bytes:
    """``dot_text`` rendered by Graphviz to ``fmt`` ("svg" or "png").

    Raises RendererMissing when ``dot`` is not installed, ExportError when it fails.
    """
    import graphviz

    try:
        return graphviz.Source(dot_text).pipe(format=fmt, quiet=True)
    except graphviz.ExecutableNotFound:
        raise RendererMissing(MISSING_DOT) from None
    except graphviz.CalledProcessError as error:
        detail = (error.stderr or b"").decode("utf-8", "replace").strip().splitlines()
        raise ExportError(f"Graphviz dot failed: {detail[0] if detail else error}") from None


def to_svg(diagram: Diagram, legend: bool = True) -> str:
    return render(to_dot(diagram, legend), "svg").decode("utf-8")


def to_png(diagram: Diagram, legend: bool = True) -> bytes:
    return render(to_dot(diagram, legend), "png")
