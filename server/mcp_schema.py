"""What the MCP ``schema`` tool tells an agent before it writes SPARQL: the graph's classes and
properties with how often each is used, the predeclared prefixes, and example queries that run.

Counts come from the loaded graph (one aggregate query each, computed once per engine), so they
describe the data the ``sparql`` tool queries, not the ontology's intentions. The examples use
OPTIONAL for what not every entity has, the usual trap of a first query that returns nothing.
"""

from __future__ import annotations

import threading
import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from stackgraph.graph.store import PREFIXES

if TYPE_CHECKING:
    from stackgraph.graph.engine import Engine

CLASSES_QUERY = """\
SELECT ?class (SAMPLE(?l) AS ?label) (SAMPLE(?d) AS ?comment) (COUNT(DISTINCT ?e) AS ?instances) WHERE {
  ?class a owl:Class .
  OPTIONAL { ?class rdfs:label ?l }
  OPTIONAL { ?class rdfs:comment ?d }
  OPTIONAL { ?e a ?class }
} GROUP BY ?class ORDER BY DESC(?instances) ?class"""

PROPERTIES_QUERY = """\
SELECT ?property (SAMPLE(?l) AS ?label) (SAMPLE(?dom) AS ?domain) (SAMPLE(?ran) AS ?range)
       (COUNT(*) AS ?uses) WHERE {
  ?s ?property ?o .
  OPTIONAL { ?property rdfs:label ?l }
  OPTIONAL { ?property rdfs:domain ?dom }
  OPTIONAL { ?property rdfs:range ?ran }
} GROUP BY ?property ORDER BY DESC(?uses) ?property"""


@dataclass(frozen=True)
class Example:
    title: str
    query: str


#: Queries an agent can run as they are, or adapt. Each is run by the tests.
EXAMPLES = (
    Example(
        "Symptom -> owning layer in each model, with likely causes where the graph knows them",
        """SELECT ?symptom ?layer ?code ?model ?cause WHERE {
  ?s a sg:Symptom ; rdfs:label ?symptom ; sg:ownedBy ?l .
  ?l rdfs:label ?layer ; sg:code ?code ; sg:inModel/rdfs:label ?model .
  OPTIONAL { ?s sg:likelyCause/rdfs:label ?cause }
} ORDER BY ?symptom ?model ?code LIMIT 50""",
    ),
    Example(
        "Every technology of one layer of one model (eight-layer L5), with its role when stated",
        """SELECT ?technology ?role WHERE {
  ?layer sg:code "L5" ; sg:inModel kg:eight-layer-map .
  ?t sg:fitsIn ?layer ; rdfs:label ?technology .
  OPTIONAL { ?t sg:placement ?p . ?p sg:layer ?layer ; sg:role ?role }
} ORDER BY ?technology""",
    ),
    Example(
        "What to check for each symptom, with the command line when there is one",
        """SELECT ?symptom ?check ?command WHERE {
  ?s a sg:Symptom ; rdfs:label ?symptom ; sg:diagnosedBy ?c .
  ?c rdfs:label ?check .
  OPTIONAL { ?c sg:commandText ?command }
} ORDER BY ?symptom LIMIT 50""",
    ),
    Example(
        "The seed section (and document) a fact about an entity comes from",
        """SELECT ?entity ?section ?document WHERE {
  ?e rdfs:label ?entity ; dct:source ?s .
  ?s rdfs:label ?section .
  OPTIONAL { ?s dct:isPartOf/rdfs:label ?document }
} LIMIT 20""",
    ),
)

_cache: weakref.WeakKeyDictionary[Engine, dict[str, list[dict[str, Any]]]] = weakref.WeakKeyDictionary()
_lock = threading.Lock()


def _prefixed(iri: str) -> str:
    for prefix, namespace in sorted(PREFIXES.items(), key=lambda item: -len(item[1])):
        if iri.startswith(namespace) and prefix:
            return f"{prefix}:{iri[len(namespace) :]}"
    return f"<{iri}>"


def _text(value: Any) -> str | None:
    return None if value is None else " ".join(str(value).split())


def graph_schema(engine: Engine) -> dict[str, list[dict[str, Any]]]:
    """Classes and properties of ``engine``'s graph with their counts, most used first."""
    with _lock:
        if engine in _cache:
            return _cache[engine]
    classes = [
        {
            "name": _prefixed(str(row["class"])),
            "label": _text(row["label"]),
            "comment": _text(row["comment"]),
            "instances": int(row["instances"]),
        }
        for row in engine.graph.query(CLASSES_QUERY, initNs=PREFIXES)
    ]
    properties = [
        {
            "name": _prefixed(str(row["property"])),
            "label": _text(row["label"]),
            "domain": _prefixed(str(row["domain"])) if row["domain"] is not None else None,
            "range": _prefixed(str(row["range"])) if row["range"] is not None else None,
            "uses": int(row["uses"]),
        }
        for row in engine.graph.query(PROPERTIES_QUERY, initNs=PREFIXES)
    ]
    schema = {"classes": classes, "properties": properties}
    with _lock:
        _cache[engine] = schema
    return schema


def class_names(engine: Engine) -> list[str]:
    """The labels of the classes that have instances (the types ``search`` can filter on)."""
    return sorted({c["label"] for c in graph_schema(engine)["classes"] if c["label"] and c["instances"]})


def is_class_name(engine: Engine, name: str) -> bool:
    """Whether ``name`` is a class's label or local name ("design choice", "DesignChoice")."""
    wanted = "".join(name.lower().split())
    for cls in graph_schema(engine)["classes"]:
        forms = {"".join((cls["label"] or "").lower().split()), cls["name"].rsplit(":", 1)[-1].lower()}
        if wanted in forms:
            return True
    return False
