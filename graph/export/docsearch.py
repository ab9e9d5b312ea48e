"""The docs site's offline search: an index of every page and a search page that reads it.

``search-index.json`` is the index for tools; ``search-index.js`` is the same data assigned to
``window.STACKGRAPH_SEARCH``, because a page opened from disk (``file://``) may not ``fetch`` a JSON
file but may load a script. ``search.js`` (templates/) ranks entries by title, other names, kind
and definition, all in the browser.
"""

from __future__ import annotations

import json
from importlib import resources

from stackgraph.graph.export import view
from stackgraph.graph.export.docsite import Page, Site

PATH = "search.md"
INDEX_JSON = "search-index.json"
INDEX_JS = "search-index.js"
SCRIPT = "search.js"


def search_page() -> Page:
    page = Page(path=PATH, title="Search", show_sources=False)
    page.add("# Search\n")
    page.add(
        "Search every page of the site by name, other names, kind and definition. The search runs in "
        "the browser from a local index (works offline); in the Markdown version, use the "
        "[glossary](glossary.md).\n"
    )
    page.add(
        '<input id="search-q" type="search" placeholder="NVLink, CUDA OOM, PFC ..." autofocus '
        'aria-label="Search the docs">\n\n<ol id="search-results"></ol>\n\n'
        f'<script src="{INDEX_JS}"></script>\n<script src="{SCRIPT}"></script>\n'
    )
    return page


def entries(site: Site, pages: list[Page], html: bool) -> list[dict[str, object]]:
    """One entry per page: title, kind, URL from the site root, other names, short definition."""
    out = []
    for page in pages:
        if page.path == PATH:
            continue
        url = page.path[: -len(".md")] + ".html" if html else page.path
        entry: dict[str, object] = {"t": page.title, "u": url}
        rec = site.catalog.get(page.iri) if page.iri else None
        if rec is not None:
            entry["k"] = site.catalog.most_specific_type(rec)
            names = sorted({*rec.alt_labels, *([rec.code] if rec.code else [])} - {page.title})
            if names:
                entry["a"] = names
            if rec.definition:
                entry["d"] = view.shorten(rec.definition, 160)
        else:
            entry["k"] = "page"
        out.append(entry)
    return sorted(out, key=lambda e: (str(e["t"]).casefold(), str(e["u"])))


def index_files(site: Site, pages: list[Page], html: bool) -> dict[str, bytes]:
    data = entries(site, pages, html)
    text = json.dumps(data, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    files = {
        INDEX_JSON: (text + "\n").encode("utf-8"),
        INDEX_JS: f"window.STACKGRAPH_SEARCH = {text};\n".encode(),
    }
    files[SCRIPT] = resources.files("stackgraph.graph.export").joinpath(f"templates/{SCRIPT}").read_bytes()
    return files


__all__ = ["INDEX_JS", "INDEX_JSON", "PATH", "SCRIPT", "entries", "index_files", "search_page"]
