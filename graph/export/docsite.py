"""``write_docs()``: a browsable docs set generated from the graph, in Markdown and optionally HTML.

Layout (all links relative, so the folder can be committed, served or opened from disk)::

    index.md              both layer models (stack maps and tables), the crosswalk, the stack
                          matrix, and the lists of workloads and symptoms
    glossary.md           every entity, alphabetical, with its definition and sources
    layers/<id>.md        one per layer of either model
    workloads/<id>.md     one per workload
    symptoms/<id>.md      one per symptom
    style.css             (with --format html) the stylesheet of the .html twin of every page

Every page ends with the sources it cites (document title and section). The files written
are listed in ``.stackgraph-docs.json``; the next run deletes those it no longer writes (an entity
removed from the graph loses its page) and never touches anything else in the folder.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from stackgraph.graph.catalog import Catalog
from stackgraph.graph.export import docdata, mdtext
from stackgraph.graph.export.docpaths import anchor_for, relative, slug
from stackgraph.graph.model import SourceRef
from stackgraph.graph.store import SG

MANIFEST = ".stackgraph-docs.json"
FORMATS = ("markdown", "html")
#: Folder of each kind of page, and the class whose instances get one.
PAGE_KINDS = (("layers", SG.Layer), ("workloads", SG.Workload), ("symptoms", SG.Symptom))
#: Entities that appear inside other pages rather than in the glossary (triage trees).
NOT_IN_GLOSSARY = (SG.TriageStep, SG.TriageBranch)


@dataclass
class Page:
    """One page being written: its path (relative to the site root), title and body."""

    path: str
    title: str
    parts: list[str] = field(default_factory=list)
    #: Mermaid text -> DOT text of the same picture, for the HTML version.
    diagrams: dict[str, str] = field(default_factory=dict)
    citations: list[SourceRef] = field(default_factory=list)
    #: The entity the page is about, if any (its Turtle file and search entry come from it).
    iri: str | None = None
    #: Whether the page ends with a "Sources" list (source pages themselves do not).
    show_sources: bool = True
    #: How the "Sources" list is written (set by build_pages: titled links to the source pages).
    render_sources: Callable[[list[SourceRef], str], str] | None = None

    def add(self, text: str) -> None:
        self.parts.append(text.rstrip("\n") + "\n")

    def cite(self, refs) -> str:
        """ "[1] [2]": numbers of these sources on this page (numbered in order of first use)."""
        numbers = []
        for ref in refs:
            if ref not in self.citations:
                self.citations.append(ref)
            numbers.append(self.citations.index(ref) + 1)
        return " ".join(f"[{n}]" for n in sorted(set(numbers)))

    def diagram(self, mermaid_text: str, dot_text: str | None) -> None:
        self.add(mdtext.mermaid_block(mermaid_text))
        if dot_text:
            self.diagrams[mermaid_text.rstrip()] = dot_text

    def markdown(self) -> str:
        body = "\n".join(self.parts)
        if not self.show_sources:
            return body
        listed = (
            self.render_sources(self.citations, self.path)
            if self.render_sources
            else mdtext.numbered_sources(self.citations)
        )
        return f"{body}\n## Sources\n\n{listed}"


class Site:
    """Paths and links: which entity has which page, and how one page links to another."""

    def __init__(self, data: docdata.SiteData) -> None:
        self.data = data
        self.catalog: Catalog = data.catalog
        self.pages: dict[str, str] = {}
        for folder, cls in PAGE_KINDS:
            for iri in data.of_type(cls):
                self.pages.setdefault(iri, f"{folder}/{slug(iri)}.md")
        #: Folder -> title of every other kind's index ("technologies" -> "Technologies").
        self.kinds: dict[str, str] = {}
        for iri in data.ordered(list(self.catalog.records)):
            if iri in self.pages or any(self.catalog.is_a(iri, cls) for cls in NOT_IN_GLOSSARY):
                continue
            kind = self.catalog.most_specific_type(self.catalog.get(iri))
            folder = kind_folder(kind)
            self.kinds.setdefault(folder, plural(kind).capitalize())
            self.pages[iri] = f"{folder}/{slug(iri)}.md"
        for folder, _ in PAGE_KINDS:
            if any(path.startswith(folder + "/") for path in self.pages.values()):
                self.kinds.setdefault(folder, folder.capitalize())
        self.anchors: dict[str, str] = {}
        used: set[str] = set()
        for iri in sorted(self.catalog.records):
            if any(self.catalog.is_a(iri, cls) for cls in NOT_IN_GLOSSARY):
                continue
            anchor = base = anchor_for(iri)
            n = 2
            while anchor in used:
                anchor, n = f"{base}-{n}", n + 1
            used.add(anchor)
            self.anchors[iri] = anchor

        #: Triage step or branch -> the symptom whose page walks its tree.
        self.triage_owner: dict[str, str] = {}
        for symptom in data.of_type(SG.Symptom):
            stack = list(data.links(symptom, SG.triage))
            while stack:
                node = stack.pop()
                if node in self.triage_owner:
                    continue
                self.triage_owner[node] = symptom
                stack += data.links(node, SG.branch) + data.links(node, SG.nextStep)

    def href(self, iri: str, from_path: str) -> str | None:
        """A relative link from page ``from_path`` to the entity's page or glossary entry (for a
        triage step or branch, the page of the symptom whose tree it belongs to)."""
        target = self.pages.get(iri) or self.pages.get(self.triage_owner.get(iri, ""))
        if target is None:
            anchor = self.anchors.get(iri)
            if anchor is None:
                return None
            target = f"glossary.md#{anchor}"
        return relative(target, from_path)

    def link(self, iri: str, from_path: str, text: str | None = None) -> str:
        text = text if text is not None else self.catalog.display(iri)
        href = self.href(iri, from_path)
        return mdtext.link(text, href) if href else mdtext.md(text)


def plural(kind: str) -> str:
    """ "technology" -> "technologies", "configuration parameter" -> "configuration parameters"."""
    head, _, last = kind.rpartition(" ")
    if last.endswith("y") and last[-2:-1] not in "aeiou":
        last = last[:-1] + "ies"
    elif last.endswith(("s", "x", "ch", "sh")):
        last += "es"
    else:
        last += "s"
    return f"{head} {last}".strip()


def kind_folder(kind: str) -> str:
    """The folder of a kind's pages: its plural, slugged ("configuration-parameters")."""
    return re.sub(r"[^a-z0-9]+", "-", plural(kind).lower()).strip("-") or "entities"


@dataclass(frozen=True)
class DocsReport:
    """What write_docs wrote."""

    outdir: str
    pages: tuple[str, ...]
    html: bool
    #: Whether HTML diagrams are inline SVG (Graphviz found) or Mermaid source blocks.
    svg: bool
    removed: tuple[str, ...] = ()

    @property
    def summary(self) -> str:
        kind = "Markdown and HTML" if self.html else "Markdown"
        text = f"wrote {len(self.pages)} pages ({kind}) to {self.outdir}"
        if self.html and not self.svg:
            text += "; Graphviz `dot` not found, so HTML pages show diagrams as Mermaid source"
        if self.removed:
            text += f"; removed {len(self.removed)} stale files"
        return text


def build_pages(engine: Any) -> list[Page]:
    """Every page of the site, built in memory (nothing written)."""
    return build_site(engine)[1]


def build_site(engine: Any) -> tuple[Site, list[Page]]:
    """The site's links and every page of it, built in memory (nothing written)."""
    from stackgraph.graph.export import docentity, docindex, docpages, docsearch, docsources, docvocab

    data = docdata.load(engine.catalog)
    site = Site(data)
    builders: list[Callable[[], Page]] = [
        lambda: docindex.index_page(engine, site),
        lambda: docindex.glossary_page(site),
    ]
    pages = [build() for build in builders]
    for iri, path in sorted(site.pages.items(), key=lambda item: item[1]):
        if path.startswith("layers/"):
            page = docpages.layer_page(engine, site, iri)
        elif path.startswith("workloads/"):
            page = docpages.workload_page(engine, site, iri)
        elif path.startswith("symptoms/"):
            page = docpages.symptom_page(site, iri)
        else:
            page = docentity.entity_page(engine, site, iri)
        page.iri = iri
        pages.append(page)
    for folder, title in sorted(site.kinds.items()):
        members = [iri for iri, path in site.pages.items() if path.startswith(folder + "/")]
        pages.append(docentity.kind_index_page(site, folder, title, data.ordered(members)))
    pages.append(docvocab.vocabulary_page(site))
    sources = docsources.SourceIndex.load(
        engine.catalog.graph, {iri: data.sources(iri) for iri in site.pages}
    )
    pages.extend(docsources.source_pages(sources, site.link, engine.catalog))
    pages.append(docsearch.search_page())
    for page in pages:
        page.render_sources = sources.numbered
    return site, pages


def write_docs(engine: Any, outdir: str | Path, fmt: str = "markdown") -> DocsReport:
    """Write the docs site for the engine's graph into ``outdir`` (created when missing).

    ``fmt`` "html" also writes an .html twin of every page and style.css: static files that need
    no network (diagrams are inline SVG drawn by Graphviz when ``dot`` is installed, else their
    Mermaid source). Raises ValueError for an unknown format, OSError when the folder is not
    writable.
    """
    if fmt not in FORMATS:
        raise ValueError(f"unknown docs format {fmt!r}; use one of {', '.join(FORMATS)}")
    root = Path(outdir)
    root.mkdir(parents=True, exist_ok=True)
    from stackgraph.graph.export import docsearch, docturtle

    site, pages = build_site(engine)
    written: dict[str, bytes] = {page.path: page.markdown().encode("utf-8") for page in pages}
    written.update(docturtle.turtle_files(engine.catalog.graph, [(p.iri, p.path) for p in pages if p.iri]))
    written.update(docsearch.index_files(site, pages, html=fmt == "html"))
    svg = False
    if fmt == "html":
        from stackgraph.graph.export import dochtml

        html_files, svg = dochtml.render_site(pages, site)
        written.update(html_files)
    previous = _read_manifest(root)
    for rel, content in sorted(written.items()):
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if not target.exists() or target.read_bytes() != content:
            target.write_bytes(content)
    removed = []
    for rel in sorted(set(previous) - set(written)):
        stale = root / rel
        if stale.is_file() and root.resolve() in stale.resolve().parents:
            stale.unlink()
            removed.append(rel)
    (root / MANIFEST).write_text(json.dumps(sorted(written), indent=1) + "\n", encoding="utf-8")
    return DocsReport(
        outdir=str(root),
        pages=tuple(page.path for page in pages),
        html=fmt == "html",
        svg=svg,
        removed=tuple(removed),
    )


def _read_manifest(root: Path) -> list[str]:
    try:
        listed = json.loads((root / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    return [
        p for p in listed if isinstance(p, str) and not p.startswith(("/", "..")) and ".." not in p.split("/")
    ]
