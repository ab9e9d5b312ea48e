"""The docs site's entity pages: one per layer, workload and symptom.

A layer page answers what sits in the layer, what it assumes, how it fails, which symptoms and
causes it owns, which commands diagnose it and which workloads lean on it; a workload page gives
its stress on every layer (reconstructed levels marked); a symptom page gives its causes, where to
look and its triage tree walked out in full. Each fact cites its source by number.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from rdflib.namespace import SKOS

from stackgraph.graph.export import dot, mdtext, mermaid, view
from stackgraph.graph.export.docdata import Qualified
from stackgraph.graph.export.docsite import Page, Site
from stackgraph.graph.export.subgraph import extract
from stackgraph.graph.store import SG

#: Entities in a page's diagram; the page's tables list everything.
DIAGRAM_MAX_NODES = 30
#: The relations a layer page's diagram follows (the page's subject matter).
LAYER_DIAGRAM_PREDICATES = (
    "sg:fitsIn",
    "sg:ownedBy",
    "sg:diagnosedBy",
    "sg:stresses",
    "skos:exactMatch",
    "skos:closeMatch",
    "skos:broadMatch",
    "skos:narrowMatch",
    "skos:relatedMatch",
)
WORKLOAD_DIAGRAM_PREDICATES = ("sg:stresses",)
#: SKOS mapping -> how the crosswalk reads it, from the subject's side.
MAPPINGS = {
    str(SKOS.exactMatch): "same as",
    str(SKOS.closeMatch): "nearly the same as",
    str(SKOS.narrowMatch): "broader than",
    str(SKOS.broadMatch): "narrower than",
    str(SKOS.relatedMatch): "overlaps",
}
INVERSE_MAPPING = {
    str(SKOS.exactMatch): str(SKOS.exactMatch),
    str(SKOS.closeMatch): str(SKOS.closeMatch),
    str(SKOS.narrowMatch): str(SKOS.broadMatch),
    str(SKOS.broadMatch): str(SKOS.narrowMatch),
    str(SKOS.relatedMatch): str(SKOS.relatedMatch),
}
RECONSTRUCTED_MARK = "†"


def diagram(engine: Any, page: Page, iris: list[str], predicates: tuple[str, ...], title: str) -> None:
    """Add a Mermaid diagram of the subgraph around ``iris`` (and its DOT twin for HTML)."""
    present = [p for p in predicates if _known_predicate(engine, p)]
    sub = extract(
        engine, iris, depth=1, predicates=present or None, max_nodes=DIAGRAM_MAX_NODES, relations_only=True
    )
    picture = view.build(sub, engine.catalog, title=title)
    if len(picture.nodes) < 2:
        return
    page.add("## Diagram\n")
    page.diagram(mermaid.to_mermaid(picture), dot.to_dot(picture))


def _known_predicate(engine: Any, name: str) -> bool:
    from stackgraph.graph.export.subgraph import resolve_predicates
    from stackgraph.graph.export.vocab import vocab_for

    try:
        resolve_predicates(vocab_for(engine.catalog), [name])
    except ValueError:
        return False
    return True


def header(site: Site, page: Page, iri: str) -> None:
    """Title, kind, other names and definition of the page's entity."""
    catalog = site.catalog
    rec = catalog.get(iri)
    page.add(f"# {mdtext.md(catalog.display(iri))}\n")
    bits = [f"*{mdtext.md(catalog.most_specific_type(rec))}*"] if rec else []
    if rec and rec.alt_labels:
        bits.append(
            "also called " + ", ".join(mdtext.md(a) for a in sorted(rec.alt_labels, key=str.casefold))
        )
    bits.append(mdtext.link("index", site_root(page.path) + "index.md"))
    bits.append(mdtext.link("glossary", site_root(page.path) + "glossary.md"))
    page.add(" · ".join(bits) + "\n")
    if rec and rec.definition:
        page.add(f"{mdtext.para(rec.definition)} {page.cite(site.data.sources(iri))}\n")
    else:
        page.cite(site.data.sources(iri))
    data_links(page, iri)


#: Where "query this" links point: the endpoint ``stackgraph serve`` runs by default.
SPARQL_ENDPOINT = "http://127.0.0.1:8000/sparql"


def query_link(iri: str) -> str:
    """A link that asks the local endpoint to DESCRIBE the entity."""
    return f"{SPARQL_ENDPOINT}?query={quote(f'DESCRIBE <{iri}>', safe='')}"


def data_links(page: Page, iri: str) -> None:
    """The "get the data" line: the entity as Turtle (a file beside the page, written by
    docturtle) and a live query on the local endpoint."""
    ttl = page.path.rsplit("/", 1)[-1][: -len(".md")] + ".ttl"
    page.add(
        f"**Data:** {mdtext.link('Turtle', ttl)} · {mdtext.link('query this', query_link(iri))} "
        f"(with `stackgraph serve` running) · IRI {mdtext.code(iri)}\n"
    )


def site_root(path: str) -> str:
    return "../" * path.count("/")


def bullet_texts(page: Page, texts: list[str], refs) -> str:
    cite = page.cite(refs)
    return "".join(f"- {mdtext.md(text)} {cite}\n" for text in texts)


def entity_list(site: Site, page: Page, iris: list[str], with_definition: bool = True) -> str:
    lines = []
    for iri in iris:
        rec = site.catalog.get(iri)
        line = f"- {site.link(iri, page.path)}"
        if with_definition and rec and rec.definition:
            line += f" — {mdtext.md(view.shorten(rec.definition, 200))}"
        lines.append(f"{line} {page.cite(site.data.sources(iri))}".rstrip())
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------- layers


def layer_page(engine: Any, site: Site, iri: str) -> Page:
    data, catalog = site.data, site.catalog
    page = Page(path=site.pages[iri], title=catalog.display(iri))
    header(site, page, iri)
    rec = catalog.get(iri)
    own = data.sources(iri)
    facts = []
    if rec and rec.model:
        facts.append(f"**Model:** {site.link(rec.model, page.path)}")
    for plane in data.links(iri, SG.inPlane):
        facts.append(f"**Plane:** {site.link(plane, page.path)}")
    for where in data.texts(iri, SG.runsIn):
        facts.append(f"**Runs in:** {mdtext.md(where)}")
    if facts:
        page.add(" · ".join(facts) + f" {page.cite(own)}\n")
    for detail in data.texts(iri, SG.runsInDetail):
        page.add(f"**What runs there:** {mdtext.md(detail)} {page.cite(own)}\n")
    responsibilities = data.texts(iri, SG.responsibility)
    if responsibilities:
        page.add("**Responsible for:**\n\n" + bullet_texts(page, responsibilities, own))

    placements = merged(data.qualified_for(layer=iri, kind="placement"))
    placed = {q.subject for q in placements}
    unqualified = [s for s in data.linked_from(iri, SG.fitsIn) if s not in placed]
    page.add("## What it holds\n")
    if placements or unqualified:
        rows = [_placement_row(site, page, q) for q in placements]
        rows += [
            [site.link(s, page.path), mdtext.md(_kind(site, s)), "", "", page.cite(data.sources(s))]
            for s in unqualified
        ]
        page.add(mdtext.table(["Entity", "Type", "Role", "Basis", "Sources"], rows))
    else:
        page.add("The graph places nothing in this layer.\n")

    assumptions = data.texts(iri, SG.assumption)
    page.add("## What it assumes\n")
    page.add(
        bullet_texts(page, assumptions, own)
        if assumptions
        else "The graph records no assumption for this layer.\n"
    )
    failures = data.texts(iri, SG.failureMode)
    page.add("## How it fails\n")
    page.add(
        bullet_texts(page, failures, own)
        if failures
        else "The graph records no failure mode for this layer.\n"
    )

    owned = data.linked_from(iri, SG.ownedBy)
    symptoms = [s for s in owned if catalog.is_a(s, SG.Symptom)]
    causes = [s for s in owned if catalog.is_a(s, SG.Cause)]
    triage = [s for s in owned + data.linked_from(iri, SG.leadsTo) if s in site.triage_owner]
    others = [s for s in owned if s not in symptoms and s not in causes and s not in triage]
    page.add("## Symptoms it owns\n")
    page.add(
        entity_list(site, page, symptoms) if symptoms else "No symptom in the graph is owned by this layer.\n"
    )
    if causes:
        page.add("### Causes it owns\n")
        page.add(entity_list(site, page, causes))
    if others:
        page.add("### Also owned here\n")
        page.add(entity_list(site, page, others))
    if triage:
        page.add("### Triage answers that lead here\n")
        lines = []
        for node in dict.fromkeys(triage):
            symptom = site.triage_owner[node]
            answer = data.first_text(node, SG.answer)
            text = (
                f"{catalog.label(node)} ({answer})"
                if answer and answer not in catalog.label(node)
                else catalog.label(node)
            )
            lines.append(
                f"- {site.link(node, page.path, text)}, in the triage of {site.link(symptom, page.path)} {page.cite(data.sources(node))}"
            )
        page.add("\n".join(lines) + "\n")

    diagnostics = data.links(iri, SG.diagnosedBy)
    page.add("## Commands that diagnose it\n")
    if diagnostics:
        page.add(diagnostic_table(site, page, diagnostics))
    else:
        page.add("The graph lists no diagnostic for this layer.\n")

    stresses = data.qualified_for(layer=iri, kind="stress")
    if stresses:
        page.add("## Workloads that stress it\n")
        rows = [
            [
                site.link(q.subject, page.path),
                _level_text(site, q),
                _basis_text(site, q),
                page.cite(q.sources),
            ]
            for q in sorted(
                stresses,
                key=lambda q: (-site.data.vocab.value_rank.get(q.level or "", 0), catalog.label(q.subject)),
            )
        ]
        page.add(mdtext.table(["Workload", "Level", "Basis", "Sources"], rows))
        _reconstructed_note(site, page, stresses)

    mappings = crosswalk_of(site, iri)
    if mappings:
        page.add("## In the other layer model\n")
        page.add(
            "".join(
                f"- {mdtext.md(rel)} {site.link(other, page.path)} {page.cite(own)}\n"
                for rel, other in mappings
            )
        )
    diagram(engine, page, [iri], LAYER_DIAGRAM_PREDICATES, title=catalog.display(iri))
    return page


def _kind(site: Site, iri: str) -> str:
    rec = site.catalog.get(iri)
    return site.catalog.most_specific_type(rec) if rec else ""


def merged(placements: list[Qualified]) -> list[Qualified]:
    """One row per (entity, role, level, basis): the same placement stated by several sources
    (UALink in L8, from two documents) is one row citing them all, not two identical rows."""
    import dataclasses

    rows: dict[tuple, Qualified] = {}
    for q in placements:
        key = (q.subject, q.kind, q.layer, q.role, q.level, q.basis)
        if key in rows:
            sources = tuple(dict.fromkeys(rows[key].sources + q.sources))
            rows[key] = dataclasses.replace(rows[key], sources=sources)
        else:
            rows[key] = q
    return list(rows.values())


def _placement_row(site: Site, page: Page, q: Qualified) -> list[str]:
    basis = site.data.vocab.value_label(q.basis) if q.basis else ""
    return [
        site.link(q.subject, page.path),
        mdtext.md(_kind(site, q.subject)),
        mdtext.md(q.role or ""),
        mdtext.md(basis),
        page.cite(q.sources or site.data.sources(q.subject)),
    ]


def diagnostic_table(site: Site, page: Page, iris: list[str]) -> str:
    rows = []
    for iri in iris:
        command = " ; ".join(site.data.texts(iri, SG.commandText))
        shows = " ".join(site.data.texts(iri, SG.shows))
        rows.append(
            [
                site.link(iri, page.path),
                mdtext.code(command) if command else "",
                mdtext.md(view.shorten(shows, 240)) if shows else "",
                page.cite(site.data.sources(iri)),
            ]
        )
    return mdtext.table(*mdtext.without_empty_columns(["Diagnostic", "Command", "Shows", "Sources"], rows))


def crosswalk_of(site: Site, iri: str) -> list[tuple[str, str]]:
    """(relation, other layer or entity) for every SKOS mapping of ``iri``, stated either way."""
    found: set[tuple[str, str]] = set()
    for predicate in MAPPINGS:
        for other in site.data.links(iri, predicate):
            found.add((predicate, other))
        for other in site.data.linked_from(iri, predicate):
            found.add((INVERSE_MAPPING[predicate], other))
    catalog = site.catalog
    rows = [(MAPPINGS[p], other) for p, other in found if other != iri]
    return sorted(
        rows,
        key=lambda r: (
            catalog.get(r[1]).model or "" if catalog.get(r[1]) else "",
            site.data.position(r[1]),
            r[0],
            r[1],
        ),
    )


# ---------------------------------------------------------------------------------- workloads


def _level_text(site: Site, q: Qualified) -> str:
    vocab = site.data.vocab
    if not q.level:
        return ""
    symbol = vocab.value_symbol.get(q.level)
    label = vocab.value_label(q.level)
    return mdtext.md(f"{label} {symbol}" if symbol else label)


def _basis_text(site: Site, q: Qualified) -> str:
    if not q.basis:
        return ""
    label = site.data.vocab.value_label(q.basis)
    if q.basis == str(SG.reconstructed):
        return f"{mdtext.md(label)} {RECONSTRUCTED_MARK}"
    return mdtext.md(label)


def _reconstructed_note(site: Site, page: Page, stresses: list[Qualified]) -> None:
    if any(q.basis == str(SG.reconstructed) for q in stresses):
        definition = (
            site.data.first_text(str(SG.reconstructed), SKOS.definition) or "the source's layout was lost"
        )
        page.add(f"{RECONSTRUCTED_MARK} *reconstructed:* {mdtext.md(definition)}\n")


def workload_page(engine: Any, site: Site, iri: str) -> Page:
    data, catalog = site.data, site.catalog
    page = Page(path=site.pages[iri], title=catalog.display(iri))
    header(site, page, iri)
    stresses = data.qualified_for(subject=iri, kind="stress")
    page.add("## Stress across the layers\n")
    if stresses:
        by_model: dict[str, list[Qualified]] = {}
        for q in stresses:
            rec = catalog.get(q.layer)
            by_model.setdefault(rec.model if rec and rec.model else "", []).append(q)
        for model in sorted(by_model, key=lambda m: (m == "", catalog.label(m) if m else "")):
            if model:
                page.add(f"### {site.link(model, page.path)}\n")
            rows = [
                [
                    site.link(q.layer, page.path),
                    _level_text(site, q),
                    _basis_text(site, q),
                    page.cite(q.sources),
                ]
                for q in by_model[model]
            ]
            page.add(mdtext.table(["Layer", "Level", "Basis", "Sources"], rows))
        _reconstructed_note(site, page, stresses)
    else:
        page.add("The graph records no stress levels for this workload.\n")
    shortcut = [layer for layer in data.links(iri, SG.stresses) if layer not in {q.layer for q in stresses}]
    if shortcut:
        page.add(
            "**Also stresses:** "
            + ", ".join(site.link(x, page.path) for x in shortcut)
            + f" {page.cite(data.sources(iri))}\n"
        )
    for row in data.texts(iri, SG.matrixRow):
        page.add(
            f"**Row of the stack matrix as printed:** {mdtext.code(row)} {page.cite(data.sources(iri))}\n"
        )
    for note in data.texts(iri, SG.note):
        page.add(f"> {mdtext.md(note)} {page.cite(data.sources(iri))}\n")
    diagram(engine, page, [iri], WORKLOAD_DIAGRAM_PREDICATES, title=catalog.display(iri))
    return page


# ---------------------------------------------------------------------------------- symptoms


def symptom_page(site: Site, iri: str) -> Page:
    data, catalog = site.data, site.catalog
    page = Page(path=site.pages[iri], title=catalog.display(iri))
    header(site, page, iri)
    own = data.sources(iri)
    owners = data.links(iri, SG.ownedBy)
    page.add("## Where the fix is\n")
    if owners:
        page.add("Owned by " + ", ".join(site.link(x, page.path) for x in owners) + f". {page.cite(own)}\n")
    else:
        page.add("The graph names no owning layer; follow the triage path below.\n")

    causes = data.links(iri, SG.likelyCause)
    page.add("## Likely causes\n")
    if causes:
        rows = []
        for cause in causes:
            rec = catalog.get(cause)
            rows.append(
                [
                    site.link(cause, page.path),
                    ", ".join(site.link(x, page.path) for x in data.links(cause, SG.ownedBy)),
                    mdtext.md(view.shorten(rec.definition, 240)) if rec and rec.definition else "",
                    page.cite(data.sources(cause)),
                ]
            )
        page.add(mdtext.table(["Cause", "Owned by", "What it is", "Sources"], rows))
    else:
        page.add("The graph names no likely cause.\n")

    look = data.links(iri, SG.whereToLook)
    page.add("## Where to look\n")
    page.add(diagnostic_table(site, page, look) if look else "The graph names nowhere specific to look.\n")
    diagnosed = [d for d in data.links(iri, SG.diagnosedBy) if d not in look]
    if diagnosed:
        page.add("### Also diagnosed by\n" if look else "### Diagnosed by\n")
        page.add(diagnostic_table(site, page, diagnosed))

    steps = data.links(iri, SG.triage)
    page.add("## Triage path\n")
    if steps:
        lines: list[str] = []
        for step in steps:
            _triage_step(site, page, step, 0, lines, set())
        page.add("\n".join(lines) + "\n")
    else:
        page.add("The graph has no triage tree for this symptom.\n")

    related = data.links(iri, SKOS.related)
    if related:
        page.add("## Related\n")
        page.add(entity_list(site, page, related, with_definition=False))
    for note in data.texts(iri, SG.note):
        page.add(f"> {mdtext.md(note)} {page.cite(own)}\n")
    return page


def _triage_step(site: Site, page: Page, step: str, level: int, lines: list[str], seen: set[str]) -> None:
    """A triage step as a numbered item, its branches nested under it, recursively."""
    data = site.data
    indent = "   " * level
    if step in seen:
        lines.append(f"{indent}1. (back to: {mdtext.md(site.catalog.label(step))})")
        return
    seen.add(step)
    question = data.first_text(step, SG.question) or site.catalog.label(step)
    line = f"{indent}1. **{mdtext.md(question)}**"
    for action in data.texts(step, SG.action):
        line += f" — {mdtext.md(action)}"
    lines.append(f"{line} {page.cite(data.sources(step))}".rstrip())
    inner = indent + "   "
    layers = data.links(step, SG.leadsTo)
    if layers:
        lines.append(f"{inner}- look at: " + ", ".join(site.link(x, page.path) for x in layers))
    look = data.links(step, SG.whereToLook)
    if look:
        lines.append(f"{inner}- evidence: " + ", ".join(site.link(x, page.path) for x in look))
    for branch in data.links(step, SG.branch):
        answer = data.first_text(branch, SG.answer) or site.catalog.label(branch)
        text = f"{inner}- *if* **{mdtext.md(answer)}**"
        conclusion = data.first_text(branch, SG.conclusion)
        if conclusion:
            text += f": {mdtext.md(conclusion)}"
        layers = data.links(branch, SG.leadsTo)
        if layers:
            text += " → " + ", ".join(site.link(x, page.path) for x in layers)
        causes = data.links(branch, SG.suggestsCause)
        if causes:
            text += "; likely cause: " + ", ".join(site.link(x, page.path) for x in causes)
        for action in data.texts(branch, SG.action):
            text += f"; {mdtext.md(action)}"
        lines.append(f"{text} {page.cite(data.sources(branch))}".rstrip())
        for following in data.links(branch, SG.nextStep):
            _triage_step(site, page, following, level + 2, lines, seen)
