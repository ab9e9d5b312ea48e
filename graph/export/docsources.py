"""Sources in the docs site: one page per seed document, and citations that link to it by title.

Every citation on every page is drawn by :meth:`SourceIndex.citation`, the one helper that knows how
a source reads: the document's title (``dct:title``, else its ``rdfs:label``, else the file name),
the section, and a link to the section's anchor on the document's page. A document page lists its
sections in order, each with the entities that cite it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from stackgraph.graph.catalog import PREFIX_DECL
from stackgraph.graph.export import mdtext
from stackgraph.graph.export.docpaths import relative, slug
from stackgraph.graph.export.docsite import Page
from stackgraph.graph.export.vocab import vocab_for
from stackgraph.graph.model import SourceRef

FOLDER = "sources"

_DOCUMENT_QUERY = (
    PREFIX_DECL
    + """
SELECT ?doc ?file ?title ?label WHERE {
  ?doc sg:fileName ?file .
  OPTIONAL { ?doc dct:title ?title }
  OPTIONAL { ?doc rdfs:label ?label }
}
"""
)


@dataclass(frozen=True)
class Document:
    iri: str
    file: str
    title: str


@dataclass
class SourceIndex:
    """Seed documents by file name, and where each section is cited."""

    documents: dict[str, Document] = field(default_factory=dict)
    #: section IRI -> entities that cite it.
    cited_by: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))

    @classmethod
    def load(cls, graph, entity_sources: dict[str, Sequence[SourceRef]]) -> SourceIndex:
        index = cls()
        for row in graph.query(_DOCUMENT_QUERY):
            file = str(row.file)
            title = str(row.title or row.label or file)
            current = index.documents.get(file)
            if current is None or (row.title is not None and current.title == file):
                index.documents[file] = Document(iri=str(row.doc), file=file, title=title)
        for iri, refs in sorted(entity_sources.items()):
            for ref in refs:
                index.cited_by[ref.iri].append(iri)
        return index

    def document(self, ref: SourceRef) -> Document:
        return self.documents.get(ref.document) or Document(iri="", file=ref.document, title=ref.document)

    def page_path(self, ref: SourceRef) -> str:
        return f"{FOLDER}/{slug(self.document(ref).iri or ref.document)}.md"

    def anchor(self, ref: SourceRef) -> str:
        return "s-" + slug(ref.iri).lower()

    def citation(self, ref: SourceRef, from_path: str) -> str:
        """ "[The Nine-Layer Model § Where other technologies fit](../sources/doc-000.md#s-...)"."""
        text = f"{self.document(ref).title} § {ref.section}"
        return mdtext.link(text, relative(f"{self.page_path(ref)}#{self.anchor(ref)}", from_path))

    def numbered(self, refs: Sequence[SourceRef], from_path: str) -> str:
        """A page's "Sources" list: numbered (tables cite [1], [2]), each a titled link."""
        if not refs:
            return "No source is recorded in the graph for what this page shows.\n"
        return "".join(
            f"{i}. {self.citation(ref, from_path)} ({mdtext.code(ref.document)})\n"
            for i, ref in enumerate(refs, start=1)
        )


def source_pages(index: SourceIndex, site_link, catalog) -> list:
    """One page per seed document: title, file, and each section with the entities citing it.

    ``site_link(iri, from_path)`` links an entity (Site.link); ``catalog`` orders sections' names.
    """
    sections: dict[str, list[SourceRef]] = defaultdict(list)
    vocab = vocab_for(catalog)
    for ref in sorted(vocab.sections.values(), key=vocab.source_key):
        sections[ref.document].append(ref)
    pages = []
    for file, document in sorted(index.documents.items()):
        probe = SourceRef(document=file, section="", iri=document.iri)
        page = Page(path=index.page_path(probe), title=document.title)
        page.add(f"# {mdtext.md(document.title)}\n")
        page.add(
            f"Seed document {mdtext.code(file)} · IRI {mdtext.code(document.iri)} · {mdtext.link('all sources', 'index.md')}\n"
        )
        for ref in sections.get(file, []):
            cited = index.cited_by.get(ref.iri, [])
            page.add(f'<a id="{index.anchor(ref)}"></a>\n\n## {mdtext.md(ref.section)}\n')
            if cited:
                names = ", ".join(
                    site_link(iri, page.path)
                    for iri in sorted(set(cited), key=lambda i: catalog.label(i).casefold())
                )
                page.add(f"Cited by {len(set(cited))}: {names}\n")
            else:
                page.add("No entity cites this section directly.\n")
        page.show_sources = False
        pages.append(page)
    overview = Page(path=f"{FOLDER}/index.md", title="Sources", show_sources=False)
    overview.add("# Sources\n")
    overview.add("The seed documents every fact in the graph cites, with their sections.\n")
    for file, document in sorted(index.documents.items(), key=lambda kv: kv[1].title.casefold()):
        probe = SourceRef(document=file, section="", iri=document.iri)
        count = len(sections.get(file, []))
        overview.add(
            f"- {mdtext.link(document.title, index.page_path(probe).rsplit('/', 1)[-1])} ({mdtext.code(file)}, {count} sections)\n"
        )
    pages.append(overview)
    return pages


__all__ = ["FOLDER", "Document", "SourceIndex", "source_pages"]
