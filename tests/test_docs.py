"""The generated docs site: every internal link resolves (Markdown and HTML), every page cites its
sources, the HTML needs no network, diagrams parse, reruns are stable and clean up after themselves.

Runs on the small fixture graph (where the content is known) and on the built-in graph (where the
links must hold whatever the data)."""

from __future__ import annotations

import html
import json
import re
import shutil
from pathlib import Path
from urllib.parse import unquote

import pytest
from mermaid_check import parse_files
from test_export import fixture_engine

from stackgraph.cli.main import main
from stackgraph.graph.engine import Engine
from stackgraph.graph.export.docentity import SPARQL_ENDPOINT
from stackgraph.graph.export.docsite import MANIFEST, write_docs

MD_LINK = re.compile(r"(?<!!)\[(?:[^\]\\]|\\.)*\]\(([^)\s]+)\)")
HTML_REF = re.compile(r"""\b(href|src)="([^"]*)\"""")
ANCHOR_ID = re.compile(r"""\bid="([^"]+)\"""")
#: A numbered citation: "[title § section](source page) (`file`)"; the file name only beside the title.
SOURCE_LINE = re.compile(r"^\d+\. \[.+ § .+\]\(([^)\s]+)\) \(`[^`]+\.txt`\)$", re.MULTILINE)
#: Pages about the site rather than the graph: they cite nothing, and say so by having no Sources.
UNSOURCED = re.compile(r"^(sources/.*|search\.md|vocabulary\.md)$")


@pytest.fixture(scope="module")
def fixture_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("fixture-site")
    write_docs(fixture_engine(), out, fmt="html")
    return out


@pytest.fixture(scope="module")
def builtin_site(engine: Engine, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("builtin-site")
    write_docs(engine, out, fmt="html")
    return out


def _ids(path: Path, cache: dict[Path, set[str]]) -> set[str]:
    if path not in cache:
        cache[path] = {html.unescape(i) for i in ANCHOR_ID.findall(path.read_text(encoding="utf-8"))}
    return cache[path]


def broken_links(root: Path) -> list[str]:
    """Every internal link (Markdown links in .md, href/src in .html) that does not resolve to an
    existing file and, when it has a fragment, to an element with that id."""
    problems: list[str] = []
    ids: dict[Path, set[str]] = {}
    pages = sorted(root.rglob("*.md")) + sorted(root.rglob("*.html"))
    assert pages, f"no pages in {root}"
    for page in pages:
        text = page.read_text(encoding="utf-8")
        targets = MD_LINK.findall(text) if page.suffix == ".md" else [t for _, t in HTML_REF.findall(text)]
        for target in targets:
            target = html.unescape(target)
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):
                continue  # external: checked separately for the HTML
            path_part, _, fragment = target.partition("#")
            resolved = (page.parent / unquote(path_part)).resolve() if path_part else page
            if not resolved.is_file():
                problems.append(f"{page.relative_to(root)}: {target} (no such file)")
            elif fragment and unquote(fragment) not in _ids(resolved, ids):
                problems.append(f"{page.relative_to(root)}: {target} (no id {fragment!r})")
    return problems


def _pages(root: Path) -> list[Path]:
    return sorted(root.rglob("*.md"))


@pytest.mark.parametrize("site", ["fixture_site", "builtin_site"])
def test_every_internal_link_resolves(site: str, request: pytest.FixtureRequest) -> None:
    root: Path = request.getfixturevalue(site)
    links = sum(len(MD_LINK.findall(p.read_text(encoding="utf-8"))) for p in _pages(root))
    assert links > 20
    assert broken_links(root) == []


def test_the_link_checker_catches_broken_links(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text(
        '<a id="x"></a>\n[ok](#x) [gone](b.md) [bad](a.md#nope)\n', encoding="utf-8"
    )
    assert broken_links(tmp_path) == ["a.md: b.md (no such file)", "a.md: a.md#nope (no id 'nope')"]


@pytest.mark.parametrize("site", ["fixture_site", "builtin_site"])
def test_every_page_cites_sources(site: str, request: pytest.FixtureRequest) -> None:
    root: Path = request.getfixturevalue(site)
    for page in _pages(root):
        text = page.read_text(encoding="utf-8")
        sources = text.split("\n## Sources\n", 1)
        if UNSOURCED.match(page.relative_to(root).as_posix()):
            assert len(sources) == 1, f"{page.name} is about the site, not the graph"
            continue
        assert len(sources) == 2, f"{page.name} has no Sources section"
        assert SOURCE_LINE.search(sources[1]), f"{page.name} cites no document and section"


@pytest.mark.parametrize("site", ["fixture_site", "builtin_site"])
def test_html_twin_for_every_page_needs_no_network(site: str, request: pytest.FixtureRequest) -> None:
    root: Path = request.getfixturevalue(site)
    for page in _pages(root):
        twin = page.with_suffix(".html")
        assert twin.is_file(), f"no HTML for {page.name}"
        text = twin.read_text(encoding="utf-8")
        assert text.startswith("<!doctype html>")
        if twin.name != "search.html":  # the search page runs two local scripts; no other page has any
            assert "<script" not in text
        external = [
            t
            for attr, t in HTML_REF.findall(text)
            if (attr == "src" and re.match(r"^[a-z]+:|^//", t))
            or (
                re.match(r"^(https?:)?//", t) and not t.startswith(SPARQL_ENDPOINT + "?")
            )  # "query this": loopback
        ]
        assert external == [], f"{twin.name} loads {external}"
        assert ".md" not in "".join(t for _, t in HTML_REF.findall(text)), f"{twin.name} links to Markdown"
    assert (root / "style.css").is_file()


def test_site_content(fixture_site: Path) -> None:
    pages = {p.relative_to(fixture_site).as_posix() for p in _pages(fixture_site)}
    assert {"technologies/nvlink.md", "vocabulary.md", "search.md", "sources/index.md"} <= pages
    assert pages >= {
        "index.md",
        "glossary.md",
        "layers/nine-L7.md",
        "layers/nine-L8.md",
        "layers/nine-S.md",
        "layers/nine-CP.md",
        "layers/ops-L1.md",
        "layers/ops-L2.md",
        "workloads/wl-pre-training.md",
        "symptoms/sym-nccl-timeout.md",
    }
    index = (fixture_site / "index.md").read_text(encoding="utf-8")
    assert "## The Nine-Layer Model" in index and "## The Eight-Layer Operational Map" in index
    assert (
        "| [L2 GPUs / Networking](layers/ops-L2.md) | broader than | [L8 Node Interconnect](layers/nine-L8.md) |"
        in index
    )
    assert "■■■†" in index  # the stack matrix marks reconstructed cells
    layer = (fixture_site / "layers" / "nine-L8.md").read_text(encoding="utf-8")
    assert "| [NVLink](../technologies/nvlink.md) | technology | scale-up interconnect | stated |" in layer
    assert "`nvidia-smi topo -m`" in layer and "```mermaid" in layer
    ops = (fixture_site / "layers" / "ops-L2.md").read_text(encoding="utf-8")
    assert "The fabric below is lossless &lt;when PFC is on&gt;" not in ops  # escaped once, not twice
    assert '- The fabric below is lossless &lt;when PFC is on> &amp; "tuned".' in ops
    assert "- Links flap \\| GPUs fall off the bus." in ops
    assert "[NCCL timeout](../symptoms/sym-nccl-timeout.md)" in ops
    workload = (fixture_site / "workloads" / "wl-pre-training.md").read_text(encoding="utf-8")
    assert "| [L8 Node Interconnect](../layers/nine-L8.md) | critical ■■■ | reconstructed † |" in workload
    assert "| [L7 Network Fabric](../layers/nine-L7.md) | critical ■■■ | stated |" in workload
    symptom = (fixture_site / "symptoms" / "sym-nccl-timeout.md").read_text(encoding="utf-8")
    assert "1. **Does one rank time out, or all of them?** — trace first" in symptom
    assert re.search(r"^      1\. \*\*Are the ports Active\?\*\*", symptom, re.MULTILINE)  # nested next step
    assert "`ibstat \\| grep -i state`" in symptom
    glossary = (fixture_site / "glossary.md").read_text(encoding="utf-8")
    labels = re.findall(r"^### (.+)$", glossary, re.MULTILINE)
    assert labels == sorted(
        labels, key=lambda label: re.sub(r"\\(.)", r"\1", html.unescape(label)).casefold()
    )
    assert "NCCL timeout: one rank or all?" not in labels  # triage steps live on symptom pages


def test_html_diagrams(fixture_site: Path) -> None:
    layer = (fixture_site / "layers" / "nine-L8.html").read_text(encoding="utf-8")
    if shutil.which("dot"):
        assert '<figure class="diagram"><svg' in layer and "<summary>Mermaid source</summary>" in layer
    else:
        assert '<pre class="mermaid">' in layer
    assert 'href="../technologies/nvlink.html"' in layer


def test_docs_diagrams_parse(fixture_site: Path) -> None:
    pages = [p for p in _pages(fixture_site) if "```mermaid" in p.read_text(encoding="utf-8")]
    assert len(pages) >= 5
    result = parse_files(pages)
    assert result.returncode == 0, result.stdout + result.stderr


def test_rerun_is_stable_and_removes_stale_pages(tmp_path: Path) -> None:
    engine = fixture_engine()
    write_docs(engine, tmp_path)
    first = {p: p.read_bytes() for p in sorted(tmp_path.rglob("*")) if p.is_file()}
    stale = tmp_path / "symptoms" / "sym-gone.md"
    stale.write_text("old page", encoding="utf-8")
    manifest = json.loads((tmp_path / MANIFEST).read_text(encoding="utf-8"))
    (tmp_path / MANIFEST).write_text(json.dumps([*manifest, "symptoms/sym-gone.md"]), encoding="utf-8")
    mine = tmp_path / "notes.md"  # not ours: must survive
    mine.write_text("keep me", encoding="utf-8")
    report = write_docs(engine, tmp_path)
    assert report.removed == ("symptoms/sym-gone.md",) and not stale.exists() and mine.exists()
    second = {p: p.read_bytes() for p in sorted(tmp_path.rglob("*")) if p.is_file() and p != mine}
    assert second == first


def test_docs_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["docs", str(tmp_path / "site")]) == 0
    assert "pages (Markdown) to" in capsys.readouterr().err
    assert (tmp_path / "site" / "index.md").is_file() and not (tmp_path / "site" / "index.html").exists()


# ------------------------------------------------------------------ the built-in site as published

MERMAID_BLOCK = re.compile(r"```mermaid\n(.*?)```", re.DOTALL)
MERMAID_NODE = re.compile(r"^\s+(n_\w+)(?:\[|\(|\{|>)", re.MULTILINE)


def test_the_site_has_a_page_per_entity(builtin_site: Path, engine: Engine) -> None:
    from stackgraph.graph.store import SG

    pages = _pages(builtin_site)
    assert len(pages) >= 400, len(pages)
    with_page = {}
    for page in pages:
        ttl = page.with_suffix(".ttl")
        if ttl.is_file():
            with_page[page.stem] = page
    for iri in engine.catalog.records:
        if engine.catalog.is_a(iri, SG.TriageStep) or engine.catalog.is_a(iri, SG.TriageBranch):
            continue
        local = iri.rsplit("/", 1)[-1]
        assert local in with_page, f"no page for {iri}"
        assert f"IRI `{iri}`" in with_page[local].read_text(encoding="utf-8")


def test_entity_turtle_is_what_describe_returns(builtin_site: Path, engine: Engine) -> None:
    import rdflib
    from rdflib.compare import isomorphic

    files = sorted(builtin_site.rglob("*.ttl"))
    assert len(files) >= 400
    for ttl in files[::7]:  # a spread of kinds; DESCRIBE per file is the slow part
        text = ttl.with_suffix(".md").read_text(encoding="utf-8")
        iri = re.search(r"IRI `([^`]+)`", text).group(1)
        mine = rdflib.Graph().parse(ttl, format="turtle")
        described = rdflib.Graph()
        for triple in engine.graph.query(f"DESCRIBE <{iri}>"):
            described.add(triple)
        assert isomorphic(mine, described), ttl.name


def test_no_diagram_draws_more_than_25_nodes(builtin_site: Path) -> None:
    counted = 0
    for page in _pages(builtin_site):
        for block in MERMAID_BLOCK.findall(page.read_text(encoding="utf-8")):
            nodes = set(MERMAID_NODE.findall(block))
            assert len(nodes) <= 25, f"{page.relative_to(builtin_site)}: {len(nodes)} nodes"
            counted += 1
    assert counted >= 300


def test_vocabulary_page_documents_every_term(builtin_site: Path) -> None:
    import rdflib
    from rdflib.namespace import OWL, RDF, RDFS

    from stackgraph.graph.store import SG

    vocab = rdflib.Graph().parse(Path(__file__).parents[1] / "ontology" / "vocabulary.ttl")
    page = (builtin_site / "vocabulary.html").read_text(encoding="utf-8")
    ids = set(ANCHOR_ID.findall(page))
    terms = {
        s
        for kind in (OWL.Class, OWL.ObjectProperty, OWL.DatatypeProperty)
        for s in vocab.subjects(RDF.type, kind)
        if str(s).startswith(str(SG))
    }
    assert len(terms) >= 50
    for term in terms:
        assert str(term).rsplit("#", 1)[1] in ids, term
    for prop, cls in vocab.subject_objects(RDFS.range):
        if str(prop).startswith(str(SG)) and str(cls).startswith(str(SG)):
            after = page.split(f'id="{str(prop).rsplit("#", 1)[1]}"', 1)[1]
            section = after.split("</h3>", 1)[1].split("<h3", 1)[0]
            assert "Range" in section and f'href="vocabulary.html#{str(cls).rsplit("#", 1)[1]}"' in section


def test_citations_link_to_titled_source_pages(builtin_site: Path) -> None:
    nvlink = (builtin_site / "technologies" / "nvlink.md").read_text(encoding="utf-8")
    links = SOURCE_LINE.findall(nvlink.split("\n## Sources\n", 1)[1])
    assert links
    for link in links:
        path, _, anchor = link.partition("#")
        target = (builtin_site / "technologies" / path).resolve()
        title = target.read_text(encoding="utf-8").splitlines()[0].removeprefix("# ")
        assert f"[{title} § " in nvlink and f'<a id="{anchor}"></a>' in target.read_text(encoding="utf-8")


def test_every_html_page_has_the_sidebar(builtin_site: Path) -> None:
    for page in sorted(builtin_site.rglob("*.html")):
        text = page.read_text(encoding="utf-8")
        assert '<nav class="sidebar"' in text and "vocabulary.html" in text and "search.html" in text, page


def test_the_search_page_finds_entities(builtin_site: Path) -> None:
    index = json.loads((builtin_site / "search-index.json").read_text(encoding="utf-8"))
    assert len(index) >= 400
    for entry in index:
        assert (builtin_site / entry["u"]).is_file(), entry
    node_modules = Path(__file__).parent / "js" / "node_modules" / "jsdom"
    if shutil.which("node") is None or not node_modules.is_dir():
        pytest.skip("node and tests/js/node_modules are needed to run the search page")
    import subprocess

    done = subprocess.run(
        ["node", "search_check.mjs", str(builtin_site / "search.html"), "NVLink", "cuda oom", "zzzqqq"],
        cwd=Path(__file__).parent / "js",
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    results = {r["query"]: r["hits"] for r in map(json.loads, done.stdout.splitlines())}
    assert results["NVLink"][0]["t"] == "NVLink"
    assert (builtin_site / results["NVLink"][0]["u"]).is_file()
    assert any("OOM" in hit["t"] for hit in results["cuda oom"])
    assert results["zzzqqq"] == []


def test_no_empty_columns_and_no_repeated_rows(builtin_site: Path) -> None:
    table_row = re.compile(r"^\|.*\|$", re.MULTILINE)
    for page in _pages(builtin_site):
        text = page.read_text(encoding="utf-8")
        for table in re.split(r"\n(?!\|)", text):
            rows = [r for r in table_row.findall(table) if not r.startswith("|---")]
            if len(rows) < 2:
                continue
            cells = [[c.strip() for c in re.split(r"(?<!\\)\|", r)[1:-1]] for r in rows[1:]]
            for i, header in enumerate(re.split(r"(?<!\\)\|", rows[0])[1:-1]):
                assert any(len(row) > i and row[i] for row in cells), (
                    f"{page.name}: empty column {header.strip()}"
                )
            assert len(set(rows[1:])) == len(rows[1:]), f"{page.name}: a row is repeated"
