"""Which triage tree applies to a symptom as someone describes it ("first tokens are slow").

Only a few symptoms have a decision tree of their own; the others are described in the seeds as
related to one that has ("Latency increased" is related to slow first-token delivery) or share
its causes and checks. ``choose_tree`` reads the text as a symptom (its name, or the closest
symptom by words or meaning), then picks, in this order: the symptom's own tree; the tree of a
symptom the graph relates to it (skos:related/broader/narrower, either direction); the tree
whose nodes share most causes, checks and related entities with it (layers left out: every tree
touches several). It says which rule applied and what the two share, so a caller can show why.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from rdflib.namespace import SKOS

from stackgraph.graph.answering.evidence import fetch
from stackgraph.graph.model import EntityRef, UnknownEntity
from stackgraph.graph.store import SG

if TYPE_CHECKING:
    from stackgraph.graph.engine import Engine

#: How close (0-1) the best symptom found by searching must be for free text to count as it.
MIN_SYMPTOM_SCORE = 0.6
#: Links between symptoms that make one's tree apply to the other.
_RELATED = (SKOS.related, SKOS.broader, SKOS.narrower)
#: What two symptoms (or a symptom and a tree's branches) can share that says they are alike.
_SHARED = (SG.likelyCause, SG.suggestsCause, SG.diagnosedBy, SG.whereToLook, SKOS.related)


@dataclass(frozen=True)
class TreeChoice:
    """The symptom a text names and the triage tree that applies to it."""

    symptom: EntityRef
    """The symptom the text was read as."""
    tree_of: EntityRef | None
    """The symptom whose tree applies (``symptom`` itself when it has one); None when none does."""
    rule: str
    """"own", "related", "shared" or "none"."""
    shared: tuple[EntityRef, ...] = ()
    """For "shared": the causes, checks and entities both have."""


def _tree(engine: Engine, iri: str) -> str | None:
    trees = fetch(engine, iri).iris(SG.triage)
    return trees[0] if trees else None


def _with_trees(engine: Engine) -> list[str]:
    return [iri for iri in engine.entities_of("Symptom") if _tree(engine, iri)]


def tree_nodes(engine: Engine, tree: str) -> list[str]:
    """The tree's steps and branches, first step first."""
    seen, todo = [], [tree]
    while todo:
        node = todo.pop(0)
        if node in seen:
            continue
        seen.append(node)
        facts = fetch(engine, node)
        todo += facts.iris(SG.branch) + facts.iris(SG.nextStep)
    return seen


def _features(engine: Engine, iris: list[str]) -> set[str]:
    found: set[str] = set()
    for iri in iris:
        facts = fetch(engine, iri)
        for prop in _SHARED:
            found.update(facts.iris(prop))
    return found - set(engine.entities_of("Layer"))


def read_symptom(engine: Engine, text: str) -> EntityRef:
    """The symptom ``text`` names: by name when it is one, else the closest symptom by words or
    meaning when close enough. Raises UnknownEntity with the closest symptoms otherwise."""
    try:
        ref = engine.resolve(text)
    except UnknownEntity:
        ref = None
    if ref is not None and (ref.type == "symptom" or _tree(engine, ref.iri)):
        return ref
    if ref is not None and ref.code:  # a layer is never read as a symptom that resembles its name
        raise UnknownEntity(text, ())
    found, _ = engine.search(text, type="symptom", limit=5)
    if found and (found[0].score or 0.0) >= MIN_SYMPTOM_SCORE:
        return found[0]
    raise UnknownEntity(text, tuple(found))


def choose_tree(engine: Engine, text: str) -> TreeChoice:
    """The symptom ``text`` names and the tree that applies to it (see the module docstring)."""
    symptom = read_symptom(engine, text)
    if _tree(engine, symptom.iri):
        return TreeChoice(symptom, symptom, "own")
    candidates = [iri for iri in _with_trees(engine) if iri != symptom.iri]
    facts = fetch(engine, symptom.iri)
    linked = {iri for prop in _RELATED for iri in facts.iris(prop) + facts.incoming(prop)}
    related = sorted((iri for iri in candidates if iri in linked), key=engine.catalog.label)
    if related:
        return TreeChoice(symptom, engine.catalog.ref(related[0]), "related")
    mine = _features(engine, [symptom.iri])
    best: tuple[int, str, set[str]] | None = None
    seen_trees: set[str] = set()
    for iri in sorted(candidates, key=engine.catalog.label):
        tree = _tree(engine, iri)
        if tree in seen_trees:  # two symptoms can share one tree: count it once
            continue
        seen_trees.add(tree)  # type: ignore[arg-type]
        common = mine & _features(engine, [iri, *tree_nodes(engine, tree)])  # type: ignore[list-item]
        if common and (best is None or len(common) > best[0]):
            best = (len(common), iri, common)
    if best is None:
        return TreeChoice(symptom, None, "none")
    shared = tuple(engine.catalog.ref(i) for i in sorted(best[2], key=engine.catalog.label))
    return TreeChoice(symptom, engine.catalog.ref(best[1]), "shared", shared)
