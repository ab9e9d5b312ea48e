"""File names, anchors and relative links of the docs site (shared by every docs module)."""

from __future__ import annotations

import posixpath
import re

_ANCHOR_UNSAFE = re.compile(r"[^a-z0-9-]+")


def slug(iri: str) -> str:
    """The file name of an entity's page: its IRI's local name (kg:nine-L8 -> nine-L8)."""
    local = iri.rsplit("/", 1)[-1].rsplit("#", 1)[-1]
    return re.sub(r"[^A-Za-z0-9._-]+", "-", local).strip("-.") or "entity"


def anchor_for(iri: str) -> str:
    return _ANCHOR_UNSAFE.sub("-", slug(iri).lower()).strip("-") or "entity"


def relative(target: str, from_path: str) -> str:
    """``target`` (a path from the site root, maybe with #fragment) as a link from ``from_path``."""
    path, _, fragment = target.partition("#")
    start = posixpath.dirname(from_path) or "."
    rel = posixpath.relpath(path, start)
    return f"{rel}#{fragment}" if fragment else rel


def site_root(path: str) -> str:
    """The relative link from ``path`` to the site root ("", "../")."""
    return "../" * path.count("/")


__all__ = ["anchor_for", "relative", "site_root", "slug"]
