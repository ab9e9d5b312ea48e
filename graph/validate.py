"""Check a graph against the SHACL shapes in ``ontology/shapes.ttl``.

pyshacl does the checking; this module decides how it is called and turns its report graph into
plain frozen values (``Violation``) that every surface can print or serialise.

How pyshacl is called, and why (measured on a 7.6k-triple graph, 2-core machine):

- **In place, on the Oxigraph store, no inference.** SHACL's ``sh:targetClass`` and ``sh:class``
  already follow ``rdfs:subClassOf`` in the data graph, and the built-in graph contains the
  vocabulary, so subclass instances (an ``sg:Command`` for ``sg:Diagnostic``, an
  ``sg:ControlPlane`` for ``sg:Layer``) are found without RDFS inference. Inference would be
  harmful besides: ``rdfs:range`` would *type* every object of ``sg:layer`` as an ``sg:Layer`` and
  hide the misspelt IRIs the shapes exist to catch.
- **The vocabulary is mixed in ourselves, only when missing.** Passing it as pyshacl's
  ``ont_graph`` makes pyshacl clone the data graph into rdflib's in-memory store, where the same
  validation took 42 s instead of 3.5 s. When the graph already holds every subclass axiom of
  ``vocabulary.ttl`` (always, for graphs from ``store.load_graph``) nothing is copied; otherwise
  the graph and the vocabulary are copied into a scratch Oxigraph graph first.
- **``len()`` is counted once.** pyshacl evaluates ``datagraph or shapes_graph`` for every result
  it builds (including the failing branches of a passing ``sh:or``); ``bool()`` of an rdflib Graph
  calls ``len()``, which oxrdflib answers with a full COUNT query (~10 ms). Validation never
  changes the graph, so a view over the same store caches the count: 18 s became 3.5 s.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import rdflib
from rdflib.namespace import RDF, RDFS, SH

from stackgraph.graph.store import builtin_files, new_graph, shapes_file

SHAPES_NS = "https://w3id.org/stackgraph/shapes#"


@dataclass(frozen=True)
class Violation:
    """One problem found in the graph, ready to print."""

    #: The node with the problem: a prefixed name (``kg:nine-L1``), or for a blank node the triple
    #: that owns it (``kg:ualink sg:placement [sg:layer kg:nine-L8]``).
    focus: str
    #: The focus node's rdfs:label (its owner's, for a blank node), when it has one.
    focus_label: str | None
    #: The property the problem is about (``sg:code``), when the shape names one.
    path: str | None
    #: The offending value (a misspelt IRI, a bad level), when there is one.
    value: str | None
    #: What is wrong, in plain words (the shape's sh:message).
    message: str
    #: The sh:name of the shape or SPARQL constraint that found it ("layer code").
    shape: str
    #: The named node shape it belongs to (``sgsh:LayerShape``).
    shape_id: str
    #: "Violation", "Warning" or "Info".
    severity: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class ValidationReport:
    conforms: bool
    violations: tuple[Violation, ...]
    #: Wall time of the pyshacl run, for reporting (not part of equality).
    seconds: float = field(default=0.0, compare=False)

    def to_dict(self) -> dict[str, Any]:
        return {
            "conforms": self.conforms,
            "violations": [v.to_dict() for v in self.violations],
            "seconds": round(self.seconds, 3),
        }


class _CountedOnce(rdflib.Graph):
    """A view over another graph's store whose ``len()`` is computed once (see module docstring)."""

    _size: int | None = None

    def __len__(self) -> int:
        if self._size is None:
            self._size = super().__len__()
        return self._size


def _vocabulary() -> rdflib.Graph:
    vocabulary = rdflib.Graph()
    vocabulary.parse(str(builtin_files()[0]), format="turtle")
    return vocabulary


def _local_copy_needed(graph: rdflib.Graph) -> bool:
    """A remote store answers each of pyshacl's thousands of small lookups with an HTTP round trip."""
    from rdflib.plugins.stores.sparqlstore import SPARQLStore

    return isinstance(graph.store, SPARQLStore)


def _with_vocabulary(graph: rdflib.Graph) -> rdflib.Graph:
    """``graph`` itself when it is local and holds the vocabulary's class hierarchy, else a local copy that does."""
    vocabulary = _vocabulary()
    axioms = list(vocabulary.triples((None, RDFS.subClassOf, None)))
    if not _local_copy_needed(graph) and all(axiom in graph for axiom in axioms):
        return graph
    combined = new_graph()
    combined += graph
    combined += vocabulary
    return combined


def _load_shapes(shapes: Path | None) -> rdflib.Graph:
    shapes_graph = rdflib.Graph()
    shapes_graph.parse(str(shapes or shapes_file()), format="turtle")
    shapes_graph.bind("sgsh", SHAPES_NS)
    return shapes_graph


def validate(graph: rdflib.Graph, shapes: Path | None = None) -> ValidationReport:
    """Validate ``graph`` against ``shapes`` (default: the packaged ``shapes.ttl``).

    The graph is not modified. Violations come back sorted by shape, then focus node.
    """
    import pyshacl  # 0.4 s of imports that only validation needs

    data = _with_vocabulary(graph)
    view = _CountedOnce(
        store=data.store, identifier=data.identifier, namespace_manager=data.namespace_manager
    )
    shapes_graph = _load_shapes(shapes)
    started = time.perf_counter()
    conforms, results, _text = pyshacl.validate(
        view, shacl_graph=shapes_graph, inference="none", advanced=False, allow_warnings=False
    )
    seconds = time.perf_counter() - started
    violations = tuple(sorted(_violations(results, data, shapes_graph), key=_order))
    return ValidationReport(conforms=bool(conforms), violations=violations, seconds=seconds)


#: Graphs larger than this are validated with the SPARQL translation of the shapes
#: (graph/shapecheck.py): pyshacl took 150 s on a 1M-triple file.
PYSHACL_MAX_TRIPLES = 100_000


def validate_auto(
    graph: rdflib.Graph, shapes: Path | None = None, progress: Callable[[int, int], None] | None = None
) -> ValidationReport:
    """pyshacl for graphs it handles in seconds; the shapes as SPARQL (with progress) for large ones."""
    from stackgraph.graph.shapecheck import Unsupported, load_checks

    if len(graph) > PYSHACL_MAX_TRIPLES:
        try:
            checks = load_checks(shapes)
        except Unsupported:
            pass  # a custom shapes file with features the translation lacks: pyshacl, slowly
        else:
            return validate_sparql(graph, checks, progress)
    return validate(graph, shapes)


def validate_sparql(
    graph: rdflib.Graph, checks: list, progress: Callable[[int, int], None] | None = None
) -> ValidationReport:
    """Validate with compiled checks (shapecheck.compile_shapes); same report as :func:`validate`."""
    from stackgraph.graph.shapecheck import run_checks

    started = time.perf_counter()
    findings = run_checks(graph, checks, progress=progress)
    violations = tuple(sorted(violations_from_findings(findings, graph), key=_order))
    return ValidationReport(
        conforms=not any(v.severity == "Violation" for v in violations),
        violations=violations,
        seconds=time.perf_counter() - started,
    )


def violations_from_findings(findings: list, graph: rdflib.Graph) -> list[Violation]:
    """shapecheck.Finding rows as Violations, described like pyshacl's results."""
    found = []
    for finding in findings:
        check = finding.check
        value = finding.value if finding.value != finding.focus else None
        message = check.message
        for name, node in finding.bindings:
            message = message.replace(f"{{?{name}}}", _name(node, graph)).replace(
                f"{{${name}}}", _name(node, graph)
            )
        found.append(
            Violation(
                focus=_describe(finding.focus, graph),
                focus_label=_label_of(finding.focus, graph),
                path=_name(path, graph)
                if (path := check.path or dict(finding.bindings).get("path"))
                else None,
                value=_name(value, graph) if value is not None else None,
                message=message or "does not conform",
                shape=check.name,
                shape_id=_name(check.shape_id, _shapes_names()),
                severity=check.severity,
            )
        )
    return found


def _shapes_names() -> rdflib.Graph:
    names = rdflib.Graph(bind_namespaces="none")
    names.bind("sgsh", SHAPES_NS)
    return names


def _order(violation: Violation) -> tuple[str, ...]:
    return (violation.shape_id, violation.shape, violation.focus, violation.path or "", violation.value or "")


def _violations(results: rdflib.Graph, data: rdflib.Graph, shapes: rdflib.Graph) -> list[Violation]:
    found = []
    for result in results.subjects(RDF.type, SH.ValidationResult):
        focus = results.value(result, SH.focusNode)
        path = results.value(result, SH.resultPath)
        value = results.value(result, SH.value)
        if value == focus:  # node-level constraints (sh:or) report the focus node as the value
            value = None
        source_shape = results.value(result, SH.sourceShape)
        constraint = results.value(result, SH.sourceConstraint)
        severity = results.value(result, SH.resultSeverity)
        messages = sorted(str(m) for m in results.objects(result, SH.resultMessage))
        found.append(
            Violation(
                focus=_describe(focus, data),
                focus_label=_label_of(focus, data),
                path=_name(path, data) if path is not None else None,
                value=_name(value, data) if value is not None else None,
                message=" ".join(messages) or "does not conform",
                shape=_shape_name(source_shape, constraint, shapes),
                shape_id=_shape_id(source_shape, shapes),
                severity=str(severity).rsplit("#", 1)[-1] if severity is not None else "Violation",
            )
        )
    return found


def _name(node: rdflib.term.Node, graph: rdflib.Graph) -> str:
    if isinstance(node, rdflib.URIRef):
        return node.n3(graph.namespace_manager)
    if isinstance(node, rdflib.Literal):
        return str(node)
    return "[ ]"


def _owner(node: rdflib.term.Node, data: rdflib.Graph) -> tuple[rdflib.term.Node, rdflib.term.Node] | None:
    for subject, predicate in data.subject_predicates(node):
        return subject, predicate
    return None


def _describe(node: rdflib.term.Node | None, data: rdflib.Graph) -> str:
    """A prefixed name; for a blank node (a placement, a stress), the triple that points at it."""
    if node is None:
        return "(unknown)"
    if not isinstance(node, rdflib.BNode):
        return _name(node, data)
    owner = _owner(node, data)
    layer = data.value(node, rdflib.URIRef("https://w3id.org/stackgraph/ns#layer"))
    inside = f"[sg:layer {_name(layer, data)}]" if layer is not None else "[ ]"
    if owner is None:
        return inside
    return f"{_describe(owner[0], data)} {_name(owner[1], data)} {inside}"


def describe_node(node: rdflib.term.Node, data: rdflib.Graph) -> str:
    """A prefixed name; for a blank node, the triple that points at it (as violations are described)."""
    return _describe(node, data)


def _label_of(node: rdflib.term.Node | None, data: rdflib.Graph) -> str | None:
    if node is None:
        return None
    if isinstance(node, rdflib.BNode):
        owner = _owner(node, data)
        return _label_of(owner[0], data) if owner else None
    label = data.value(node, RDFS.label)
    return str(label) if label is not None else None


def _shape_name(
    shape: rdflib.term.Node | None, constraint: rdflib.term.Node | None, shapes: rdflib.Graph
) -> str:
    for node in (constraint, shape):
        if node is not None:
            name = shapes.value(node, SH.name)
            if name is not None:
                return str(name)
    return _shape_id(shape, shapes)


def _shape_id(shape: rdflib.term.Node | None, shapes: rdflib.Graph) -> str:
    """The nearest named shape: the shape itself, or the node shape that holds a blank property shape."""
    seen = 0
    while isinstance(shape, rdflib.BNode) and seen < 10:
        parent = next(iter(shapes.subjects(SH.property, shape)), None)
        if parent is None:
            parent = next(iter(shapes.subjects(SH.node, shape)), None)
        if parent is None:
            break
        shape, seen = parent, seen + 1
    if shape is None:
        return "(unknown shape)"
    return _name(shape, shapes)
