"""Graphviz DOT of a subgraph, and SVG or PNG rendered from it by the system's ``dot``.

The DOT text is written here rather than through the ``graphviz`` package's builder so that its
order is ours (sorted, hence stable); the package is used only to run ``dot``. Labels are DOT
quoted strings with backslashes and quotes escaped, so Graphviz's own escapes (``\\N``, ``\\l``)
can never be triggered by a label.
"""

from __future__ import annotations

import html
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


def _html(text: str) -> str:
    return html.escape(" ".join(str(text).split()), quote=True)


def legend_table(diagram: Diagram) -> str:
    """The legend as one node holding an HTML-like table: one coloured row per family drawn, then
    the "and N more" note. One node, so it adds one column to the layout, never a chain of nodes
    (and no rank constraints, which Graphviz cannot always combine with clusters)."""
    rows = ['<TR><TD COLSPAN="1" BORDER="0"><B>Legend</B></TD></TR>']
    for family in diagram.families:
        rows.append(
            f'<TR><TD BGCOLOR="{family.fill}" COLOR="{family.stroke}">{_html(family.label)}</TD></TR>'
        )
    if diagram.note:
        note = "<BR/>".join(_html(line) for line in wrap("… " + diagram.note, 40))
        rows.append(f'<TR><TD BORDER="0" ALIGN="LEFT" BALIGN="LEFT">{note}</TD></TR>')
    return '<TABLE BORDER="0" CELLBORDER="1" CELLSPACING="2" CELLPADDING="4">' + "".join(rows) + "</TABLE>"


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
        lines.append(f'  "legend" [shape=plain, label=<{legend_table(diagram)}>];')
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


def render_svgs(dot_texts: list[str], workers: int = 2) -> list[str | None]:
    """Many graphs drawn as SVG, ``workers`` ``dot`` processes at a time; a graph Graphviz fails
    on comes back as None. (One ``dot`` fed many graphs would be faster, but Graphviz 2.x/12.x
    can crash part-way through such a stream, so every graph gets its own process.)

    Raises RendererMissing when ``dot`` is not installed.
    """
    from concurrent.futures import ThreadPoolExecutor

    def one(text: str) -> str | None:
        try:
            return render(text, "svg").decode("utf-8")
        except RendererMissing:
            raise
        except ExportError:
            return None

    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        return list(pool.map(one, dot_texts))


def to_svg(diagram: Diagram, legend: bool = True) -> str:
    return render(to_dot(diagram, legend), "svg").decode("utf-8")


def to_png(diagram: Diagram, legend: bool = True) -> bytes:
    return render(to_dot(diagram, legend), "png")
