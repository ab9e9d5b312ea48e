"""User data files (``--data``): read with Oxigraph's own parsers straight into the store.

Why not rdflib's parsers: rdflib parses into Python objects and adds them one triple at a time
(3.6 s for 115k triples); Oxigraph's bulk loader reads a 1.1M-triple file into its store in about
4 s without a Python object per triple. Why it is safe:

- **Nothing from the network or the disk beyond the file named.** Oxigraph's JSON-LD parser has no
  document loader, so a remote or ``file:`` ``@context`` is refused (the message says to inline it);
  an RDF/XML document type declaration may only declare small internal entities that refer to no
  other entity (:func:`check_xml_entities`), so an entity-expansion bomb is refused before parsing.
- **A bad file leaves nothing behind.** Files are loaded into a store made for this load only;
  on any error the whole store is dropped.
- **Named graphs are not dropped.** TriG and N-Quads graphs are merged into the default graph, the
  one every query reads (a note on stderr says so).
- **User facts cite user sources.** A ``dct:source`` of a user subject that is a section of a
  built-in seed document is refused (:func:`foreign_citations`): the seeds say what they say.
"""

from __future__ import annotations

import mmap
import re
import sys
from collections.abc import Iterable
from pathlib import Path

import pyoxigraph as ox

from stackgraph.graph.store import DataFileError, _locate

#: File suffix -> Oxigraph format. Anything else is refused with the list of these.
FORMATS: dict[str, ox.RdfFormat] = {
    ".ttl": ox.RdfFormat.TURTLE,
    ".turtle": ox.RdfFormat.TURTLE,
    ".nt": ox.RdfFormat.N_TRIPLES,
    ".ntriples": ox.RdfFormat.N_TRIPLES,
    ".nq": ox.RdfFormat.N_QUADS,
    ".nquads": ox.RdfFormat.N_QUADS,
    ".trig": ox.RdfFormat.TRIG,
    ".rdf": ox.RdfFormat.RDF_XML,
    ".xml": ox.RdfFormat.RDF_XML,
    ".owl": ox.RdfFormat.RDF_XML,
    ".rdfs": ox.RdfFormat.RDF_XML,
    ".jsonld": ox.RdfFormat.JSON_LD,
    ".json": ox.RdfFormat.JSON_LD,
    ".n3": ox.RdfFormat.N3,
}
#: rdflib's name for each format, for re-reading a bad file to find its line (error path only).
_RDFLIB_NAMES = {
    ox.RdfFormat.TURTLE: "turtle",
    ox.RdfFormat.N_TRIPLES: "nt",
    ox.RdfFormat.N_QUADS: "nquads",
    ox.RdfFormat.TRIG: "trig",
    ox.RdfFormat.RDF_XML: "xml",
    ox.RdfFormat.N3: "n3",
}

#: RDF/XML internal entities: at most this many, each at most this long, expanding to at most
#: ``MAX_ENTITY_EXPANSION`` characters in all. Real files use a handful of namespace entities.
MAX_ENTITIES = 64
MAX_ENTITY_LENGTH = 1024
MAX_ENTITY_EXPANSION = 1_000_000

_DOCTYPE = re.compile(rb"<!DOCTYPE\s[^\[>]*(\[(?P<subset>.*?)\])?\s*>", re.DOTALL)
_ENTITY = re.compile(rb"<!ENTITY\s+(?P<param>%\s+)?(?P<name>[^\s]+)\s+(?P<rest>.*?)>", re.DOTALL)
_QUOTED = re.compile(rb"""^\s*("[^"]*"|'[^']*')\s*$""", re.DOTALL)
_REFERENCE = re.compile(rb"&([A-Za-z_][\w.-]*);")
_PROLOGUE_BYTES = 1 << 20


def rdf_format(path: Path) -> ox.RdfFormat:
    fmt = FORMATS.get(path.suffix.lower())
    if fmt is None:
        known = ", ".join(sorted(FORMATS))
        raise DataFileError(
            path, f"unknown RDF format for extension {path.suffix or '(none)'!r} (use {known})"
        )
    return fmt


def check_xml_entities(path: Path) -> None:
    """Refuse an RDF/XML file whose document type declaration could expand without bound.

    Allowed: internal general entities with a literal value that mentions no other entity (the
    ``<!ENTITY rdf "http://...#">`` idiom). Refused: external (SYSTEM/PUBLIC) and parameter
    entities, nested references, and more than ``MAX_ENTITY_EXPANSION`` characters of expansion
    (entity length times the references to it in the file).
    """
    with path.open("rb") as handle:
        head = handle.read(_PROLOGUE_BYTES)
    doctype = _DOCTYPE.search(head)
    if doctype is None:
        if b"<!ENTITY" in head:
            raise DataFileError(path, "refused: entity declarations outside a readable DOCTYPE")
        return
    entities: dict[bytes, int] = {}
    for match in _ENTITY.finditer(doctype.group("subset") or b""):
        name = match.group("name").decode("utf-8", "replace")
        if match.group("param"):
            raise DataFileError(
                path, f"refused: parameter entity %{name} (only plain internal entities are read)"
            )
        value = _QUOTED.match(match.group("rest"))
        if value is None:
            raise DataFileError(
                path, f"refused: external entity &{name}; (the file may not name other files)"
            )
        text = value.group(1)[1:-1]
        if _REFERENCE.search(text) or b"%" in text:
            raise DataFileError(path, f"refused: entity &{name}; refers to another entity (expansion bomb)")
        if len(text) > MAX_ENTITY_LENGTH:
            raise DataFileError(
                path, f"refused: entity &{name}; is longer than {MAX_ENTITY_LENGTH} characters"
            )
        entities[match.group("name")] = len(text)
    if len(entities) > MAX_ENTITIES:
        raise DataFileError(path, f"refused: {len(entities)} entity declarations (at most {MAX_ENTITIES})")
    if not entities:
        return
    expansion = 0
    with path.open("rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as body:
        for reference in _REFERENCE.finditer(body, doctype.end()):
            expansion += entities.get(reference.group(1), 0)
            if expansion > MAX_ENTITY_EXPANSION:
                raise DataFileError(
                    path, f"refused: entities expand to more than {MAX_ENTITY_EXPANSION:,} characters"
                )


def _reason(path: Path, fmt: ox.RdfFormat, error: Exception) -> DataFileError:
    if "LoadDocumentCallback" in str(error):  # Oxigraph's JSON-LD parser has no loader: good
        return DataFileError(
            path,
            "refused: a JSON-LD @context that is not inline (remote and file contexts are never fetched)",
        )
    return _locate(path, _RDFLIB_NAMES.get(fmt, "json-ld"), error)


def load_file(store: ox.Store, path: Path, progress: bool = False) -> int:
    """Bulk-load one user file into ``store``'s default graph; return the named graphs it merged.

    Raises DataFileError (one line: file, line, reason) for a missing, hostile or malformed file;
    the store may then hold part of the file, so callers drop it.
    """
    path = Path(path)
    if not path.is_file():
        raise DataFileError(path, "no such file")
    fmt = rdf_format(path)
    if fmt == ox.RdfFormat.RDF_XML:
        check_xml_entities(path)
    if progress:
        size = path.stat().st_size
        print(f"stackgraph: loading {path} ({size / 1e6:,.1f} MB)", file=sys.stderr, flush=True)
    before = set(store.named_graphs())
    try:
        store.bulk_load(path=str(path), format=fmt, base_iri=path.resolve().as_uri())
    except (SyntaxError, ValueError, OSError) as error:
        raise _reason(path, fmt, error) from None
    merged = [g for g in store.named_graphs() if g not in before]
    for graph in merged:  # TriG / N-Quads: every query reads the default graph
        store.update(f"ADD {graph} TO DEFAULT ; DROP GRAPH {graph}")
    if merged:
        print(
            f"stackgraph: note: {path}: {len(merged)} named graph(s) merged into the default graph",
            file=sys.stderr,
        )
    return len(merged)


_SEED_SECTIONS = """
PREFIX dct: <http://purl.org/dc/terms/>
SELECT ?section WHERE { ?section dct:isPartOf ?doc }
"""
_CITATIONS = """
PREFIX dct: <http://purl.org/dc/terms/>
SELECT ?s ?section WHERE { VALUES ?section { %s } ?s dct:source ?section }
"""


def seed_sections(store: ox.Store) -> list[ox.NamedNode]:
    """The sections of the built-in seed documents (call before any user file is loaded)."""
    return [row["section"] for row in store.query(_SEED_SECTIONS) if isinstance(row["section"], ox.NamedNode)]


def subjects(store: ox.Store) -> set[ox.NamedNode | ox.BlankNode]:
    """Every subject in the store (before user files: the built-in graph's own subjects)."""
    return {quad.subject for quad in store.quads_for_pattern(None, None, None, ox.DefaultGraph())}


def foreign_citations(
    store: ox.Store, sections: Iterable[ox.NamedNode], builtin_subjects: set
) -> list[tuple[ox.NamedNode | ox.BlankNode, ox.NamedNode]]:
    """(user subject, built-in section) pairs: user facts that cite a built-in seed document."""
    values = " ".join(str(s) for s in sections)
    if not values:
        return []
    return [
        (row["s"], row["section"])
        for row in store.query(_CITATIONS % values)
        if row["s"] not in builtin_subjects
    ]


def file_mentioning(paths: list[Path], node: ox.NamedNode | ox.BlankNode) -> Path:
    """The first file with ``node`` as a subject (error path: which file to blame); else the first."""
    if isinstance(node, ox.NamedNode):
        for path in paths:
            try:
                fmt = rdf_format(path)
                for quad in ox.parse(path=str(path), format=fmt, base_iri=path.resolve().as_uri()):
                    if quad.subject == node:
                        return path
            except (SyntaxError, ValueError, OSError, DataFileError):
                continue
    return paths[0]


__all__ = [
    "FORMATS",
    "check_xml_entities",
    "file_mentioning",
    "foreign_citations",
    "load_file",
    "rdf_format",
    "seed_sections",
    "subjects",
]
