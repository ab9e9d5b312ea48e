"""The SHACL shapes as SPARQL: validation that scales to a million triples of user data.

pyshacl walks the graph node by node through rdflib's per-triple API; on a 1.1M-triple inventory
that takes minutes. The shapes in ``ontology/shapes.ttl`` use a small part of SHACL (class,
subjects-of and objects-of targets; property shapes with a plain IRI path and ``sh:minCount``,
``sh:maxCount``, ``sh:class``, ``sh:datatype``, ``sh:minLength``, ``sh:pattern``, ``sh:or``;
``sh:or`` of property shapes on node shapes; SPARQL-based constraints), and each of those is one
SPARQL query over the whole store: Oxigraph answers each in milliseconds to a second.

The shapes stay the one source of truth: this module *compiles* them, it does not restate them.
A shape that uses anything else raises :class:`Unsupported`, and callers fall back to pyshacl, so
a custom ``--shapes`` file is never checked half-way. tests/test_shapecheck.py runs both checkers
on the same broken graphs and requires the same findings.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import rdflib
from rdflib.namespace import RDF, SH

from stackgraph.graph.store import oxigraph_of, shapes_file

#: Constraint parameters this compiler understands on a property shape (anything else: Unsupported).
_VALUE_PARAMS = {SH.datatype, SH["class"], SH.minLength, SH.pattern, SH["or"], SH.flags}
_PROPERTY_PARAMS = _VALUE_PARAMS | {SH.path, SH.minCount, SH.maxCount, SH.name, SH.message, SH.severity}
_IGNORED = {RDF.type, SH.name, SH.message, SH.severity, SH.description, RDF.first, RDF.rest}
_NODE_PARAMS = {SH.targetClass, SH.targetSubjectsOf, SH.targetObjectsOf, SH.property, SH["or"], SH.sparql}

#: Progress callback: (checks done, checks in all).
Progress = Callable[[int, int], None]


class Unsupported(ValueError):
    """The shapes use a SHACL feature this compiler does not translate."""


@dataclass(frozen=True)
class Check:
    """One constraint as a query whose rows (?this, optional ?value) are the violations."""

    #: The named shape reported (a named property shape itself, else its node shape).
    shape_id: rdflib.term.Node
    #: The sh:name of the property shape or SPARQL constraint ("layer code").
    name: str
    message: str
    path: rdflib.URIRef | None
    severity: str
    query: str
    #: For SPARQL constraints: the focus nodes, selected apart and intersected in Python. Joined
    #: into the constraint's own query, Oxigraph evaluates the pair as a nested loop (14 s at 10k).
    focus_query: str | None = None
    #: An ASK true whenever ``query`` could have a row: the same violation looked for without the
    #: focus nodes (any subject). Conforming data answers false and the check ends there; joining
    #: 100k focus nodes is most of a check's cost (the 78 checks: 21 s -> 8 s at 1.1M triples).
    precheck: str | None = None
    #: For ``sh:minCount 1``: the focus sub-select, and the path that must have a value. Such
    #: checks of one focus run as one query (the focus computed once for all: 6.9 s -> 4.1 s).
    focus: str | None = None
    required: rdflib.URIRef | None = None


@dataclass(frozen=True)
class Finding:
    """A violation as the store returns it (terms, not yet described for people)."""

    check: Check
    focus: rdflib.term.Node
    value: rdflib.term.Node | None
    #: Every variable of the row, for messages that quote one ("{?code}").
    bindings: tuple[tuple[str, rdflib.term.Node], ...] = ()


def _iri(node: rdflib.term.Node) -> str:
    if not isinstance(node, rdflib.URIRef):
        raise Unsupported(f"expected an IRI, got {node!r}")
    return f"<{node}>"


def _list(shapes: rdflib.Graph, head: rdflib.term.Node) -> list[rdflib.term.Node]:
    return list(rdflib.collection.Collection(shapes, head))


def _value_condition(
    shapes: rdflib.Graph, shape: rdflib.term.Node, var: str, skip: frozenset | set = frozenset()
) -> str | None:
    """A SPARQL expression true when ``var`` satisfies the value constraints of ``shape``."""
    parts: list[str] = []
    for param, arg in shapes.predicate_objects(shape):
        if param in skip:
            continue
        if param == SH.datatype:
            parts.append(f"(isLITERAL({var}) && DATATYPE({var}) = {_iri(arg)})")
        elif param == SH["class"]:
            parts.append(f"EXISTS {{ {var} <{RDF.type}>/<{rdflib.RDFS.subClassOf}>* {_iri(arg)} }}")
        elif param == SH.minLength:
            parts.append(f"(!isBLANK({var}) && STRLEN(STR({var})) >= {int(arg)})")
        elif param == SH.pattern:
            flags = shapes.value(shape, SH.flags)
            extra = f", {rdflib.Literal(str(flags)).n3()}" if flags is not None else ""
            parts.append(f"(!isBLANK({var}) && REGEX(STR({var}), {rdflib.Literal(str(arg)).n3()}{extra}))")
        elif param == SH["or"]:
            alternatives = [_value_condition(shapes, alt, var) or "true" for alt in _list(shapes, arg)]
            parts.append("(" + " || ".join(alternatives) + ")")
        elif param in _IGNORED or param in _PROPERTY_PARAMS:
            continue
        else:
            raise Unsupported(f"value constraint {param}")
    return " && ".join(parts) if parts else None


def _targets(shapes: rdflib.Graph, node_shape: rdflib.term.Node) -> str | None:
    """The focus nodes of a node shape as a sub-select binding ?this (None: the shape targets nothing)."""
    patterns = [
        f"{{ ?this <{RDF.type}>/<{rdflib.RDFS.subClassOf}>* {_iri(c)} }}"
        for c in shapes.objects(node_shape, SH.targetClass)
    ]
    patterns += [f"{{ ?this {_iri(p)} ?_t }}" for p in shapes.objects(node_shape, SH.targetSubjectsOf)]
    patterns += [f"{{ ?_t {_iri(p)} ?this }}" for p in shapes.objects(node_shape, SH.targetObjectsOf)]
    if not patterns:
        return None
    return "{ SELECT DISTINCT ?this WHERE { " + " UNION ".join(patterns) + " } }"


def _property_checks(
    shapes: rdflib.Graph, node_shape: rdflib.term.Node, prop: rdflib.term.Node, focus: str
) -> Iterator[Check]:
    unknown = set(shapes.predicates(prop)) - _PROPERTY_PARAMS - _IGNORED
    if unknown:
        raise Unsupported(f"property shape parameters {sorted(map(str, unknown))}")
    path = shapes.value(prop, SH.path)
    if not isinstance(path, rdflib.URIRef):
        raise Unsupported("property paths other than a single IRI")
    shape_id = prop if isinstance(prop, rdflib.URIRef) else node_shape

    def check(query: str, precheck: str | None = None, required: bool = False) -> Check:
        return Check(
            shape_id=shape_id,
            name=str(shapes.value(prop, SH.name) or shape_id),
            message=str(shapes.value(prop, SH.message) or "does not conform"),
            path=path,
            severity=_severity(shapes, prop),
            query=query,
            precheck=precheck,
            focus=focus if required else None,
            required=path if required else None,
        )

    p = _iri(path)
    for low in shapes.objects(prop, SH.minCount):
        if int(low) == 1:
            yield check(
                f"SELECT ?this WHERE {{ {focus} FILTER NOT EXISTS {{ ?this {p} ?_v }} }}", required=True
            )
        else:
            yield check(
                f"SELECT ?this WHERE {{ {focus} OPTIONAL {{ ?this {p} ?_v }} }} "
                f"GROUP BY ?this HAVING (COUNT(DISTINCT ?_v) < {int(low)})"
            )
    for high in shapes.objects(prop, SH.maxCount):
        # Any subject with two values at all? (a self-join; GROUP BY over 100k nodes is slower)
        twice = (
            f"ASK {{ ?this {p} ?_v , ?_w FILTER(!sameTerm(?_v, ?_w)) }}"
            if int(high) >= 1
            else f"ASK {{ ?this {p} ?_v }}"
        )
        yield check(
            f"SELECT ?this WHERE {{ {focus} ?this {p} ?_v }} GROUP BY ?this HAVING (COUNT(DISTINCT ?_v) > {int(high)})",
            twice,
        )
    # sh:class as MINUS: Oxigraph then computes the class's instances once and anti-joins, where a
    # FILTER EXISTS walks the subclass path again for every value (1.9 s against 0.2 s at 1M triples).
    for cls in shapes.objects(prop, SH["class"]):
        instances = f"?value <{RDF.type}>/<{rdflib.RDFS.subClassOf}>* {_iri(cls)}"
        yield check(
            f"SELECT DISTINCT ?this ?value WHERE {{ {focus} ?this {p} ?value MINUS {{ {instances} }} }}",
            f"ASK {{ ?this {p} ?value MINUS {{ {instances} }} }}",
        )
    condition = _value_condition(shapes, prop, "?value", skip={SH["class"]})
    if condition:
        yield check(
            f"SELECT DISTINCT ?this ?value WHERE {{ {focus} ?this {p} ?value FILTER(!({condition})) }}",
            f"ASK {{ ?this {p} ?value FILTER(!({condition})) }}",
        )


def _severity(shapes: rdflib.Graph, shape: rdflib.term.Node) -> str:
    severity = shapes.value(shape, SH.severity)
    return str(severity).rsplit("#", 1)[-1] if severity is not None else "Violation"


_WHERE = re.compile(r"\bWHERE\s*\{", re.IGNORECASE)
_NOT_EXISTS = re.compile(r"FILTER\s+NOT\s+EXISTS\s*\{(?P<body>[^{}]*)\}", re.IGNORECASE)
_VARIABLE = re.compile(r"[?$](\w+)")
_NOT_PLAIN = re.compile(r"\b(FILTER|OPTIONAL|BIND|VALUES|UNION|GRAPH|SERVICE)\b", re.IGNORECASE)


def _minus_for_not_exists(text: str) -> str:
    """``FILTER NOT EXISTS { BGP }`` as ``MINUS { BGP }`` where the two mean the same.

    Oxigraph evaluates a NOT EXISTS over two or more patterns as a nested loop (9.6 s against
    0.08 s at 120k triples). For a plain basic graph pattern that shares a variable with the rest
    of the query, and an outer pattern that binds all its variables (true of every constraint in
    shapes.ttl), MINUS removes exactly the rows NOT EXISTS filters out. SHACL forbids MINUS in the
    shapes themselves (pre-binding), so the rewrite lives here, where ?this is joined, not pre-bound.
    """

    def rewrite(match: re.Match[str]) -> str:
        body = match.group("body")
        outside = text[: match.start()] + text[match.end() :]
        shared = set(_VARIABLE.findall(body)) & set(_VARIABLE.findall(outside))
        if _NOT_PLAIN.search(body) or not shared:
            return match.group(0)
        return f"MINUS {{{body}}}"

    return _NOT_EXISTS.sub(rewrite, text)


def _sparql_check(
    shapes: rdflib.Graph, node_shape: rdflib.term.Node, constraint: rdflib.term.Node, focus: str
) -> Check:
    select = shapes.value(constraint, SH.select)
    if select is None:
        raise Unsupported("SPARQL constraints other than sh:select")
    prefixes = ""
    for ontology in shapes.objects(constraint, SH.prefixes):
        for declaration in shapes.objects(ontology, SH.declare):
            prefix = shapes.value(declaration, SH.prefix)
            namespace = shapes.value(declaration, SH.namespace)
            prefixes += f"PREFIX {prefix}: <{namespace}>\n"
    text = _minus_for_not_exists(str(select).replace("$this", "?this"))
    if _WHERE.search(text) is None:
        raise Unsupported("a SPARQL constraint without WHERE { ... }")
    return Check(
        shape_id=node_shape,
        name=str(shapes.value(constraint, SH.name) or shapes.value(node_shape, SH.name) or node_shape),
        message=str(shapes.value(constraint, SH.message) or shapes.value(node_shape, SH.message) or ""),
        path=None,
        severity=_severity(shapes, constraint),
        query=prefixes + text,
        focus_query=f"SELECT ?this WHERE {{ {focus} }}",
    )


def _or_check(
    shapes: rdflib.Graph, node_shape: rdflib.term.Node, head: rdflib.term.Node, focus: str
) -> Check:
    alternatives = []
    for alt in _list(shapes, head):
        path = shapes.value(alt, SH.path)
        if path is not None:
            if (
                set(shapes.predicates(alt)) - {SH.path, SH.minCount}
                or int(shapes.value(alt, SH.minCount) or 0) != 1
            ):
                raise Unsupported("sh:or of property shapes other than 'path, minCount 1'")
            alternatives.append(f"EXISTS {{ ?this {_iri(path)} ?_x }}")
        else:
            alternatives.append(_value_condition(shapes, alt, "?this") or "true")
    return Check(
        shape_id=node_shape,
        name=str(shapes.value(node_shape, SH.name) or node_shape),
        message=str(shapes.value(node_shape, SH.message) or "does not conform"),
        path=None,
        severity=_severity(shapes, node_shape),
        query=f"SELECT ?this WHERE {{ {focus} FILTER(!({' || '.join(alternatives)})) }}",
    )


def compile_shapes(shapes: rdflib.Graph) -> list[Check]:
    """Every constraint of every targeted node shape as a query. Raises Unsupported."""
    checks: list[Check] = []
    node_shapes = sorted(set(shapes.subjects(RDF.type, SH.NodeShape)), key=str)
    for node_shape in node_shapes:
        focus = _targets(shapes, node_shape)
        if focus is None:
            continue
        unknown = set(shapes.predicates(node_shape)) - _NODE_PARAMS - _IGNORED
        if unknown:
            raise Unsupported(f"node shape parameters {sorted(map(str, unknown))}")
        for prop in sorted(shapes.objects(node_shape, SH.property), key=str):
            checks.extend(_property_checks(shapes, node_shape, prop, focus))
        for head in shapes.objects(node_shape, SH["or"]):
            checks.append(_or_check(shapes, node_shape, head, focus))
        for constraint in shapes.objects(node_shape, SH.sparql):
            checks.append(_sparql_check(shapes, node_shape, constraint, focus))
    return checks


def load_checks(shapes: Path | None = None) -> list[Check]:
    graph = rdflib.Graph()
    graph.parse(str(shapes or shapes_file()), format="turtle")
    return compile_shapes(graph)


#: Checks run on this many threads: Oxigraph releases the GIL while it evaluates a query, so two
#: threads halve a 1.1M-triple check on two cores (14.4 s -> 7.9 s).
CHECK_THREADS = max(1, min(2, os.cpu_count() or 1))


def _key(term: rdflib.term.Node) -> tuple[str, str]:
    """A focus node as (kind, text), the same for an rdflib term and the Oxigraph term it came from."""
    kind = (
        "iri" if isinstance(term, rdflib.URIRef) else "blank" if isinstance(term, rdflib.BNode) else "literal"
    )
    return kind, str(term)


def _focus_keys(graph: rdflib.Graph, query: str) -> set[tuple[str, str]]:
    """The ?this column of ``query`` as keys. On the embedded store straight from pyoxigraph: turning
    300k focus nodes of a 1.1M-triple inventory into rdflib terms took 3-4 s; the keys take 0.5 s."""
    view = oxigraph_of(graph)
    if view is not None:
        import pyoxigraph as ox

        kinds = {ox.NamedNode: "iri", ox.BlankNode: "blank"}
        return {
            (kinds.get(type(term), "literal"), term.value)
            for solution in view.store.query(query, **view.query_options)
            if (term := solution["this"]) is not None
        }
    return {_key(row.this) for row in graph.query(query)}


def _ask(graph: rdflib.Graph, query: str) -> bool:
    """An ASK on ``graph``; on the embedded store straight from pyoxigraph (no rdflib result)."""
    view = oxigraph_of(graph)
    if view is not None:
        return bool(view.store.query(query, **view.query_options))
    return bool(graph.query(query).askAnswer)


def _units(checks: list[Check]) -> list[list[int]]:
    """The checks (by index) as units of work: the ``required`` checks of one focus together."""
    units: list[list[int]] = []
    grouped: dict[str, list[int]] = {}
    for index, check in enumerate(checks):
        if check.required is None or check.focus is None:
            units.append([index])
        elif check.focus in grouped:
            grouped[check.focus].append(index)
        else:
            grouped[check.focus] = [index]
            units.append(grouped[check.focus])
    return units


def _required_query(checks: list[Check]) -> str:
    """One query for the ``required`` checks of one focus: rows (?this, ?k) with ?k the check's
    position in ``checks``."""
    values = " ".join(f"({k} {_iri(c.required)})" for k, c in enumerate(checks))  # type: ignore[arg-type]
    return (
        f"SELECT ?this ?k WHERE {{ {checks[0].focus} VALUES (?k ?_p) {{ {values} }} "
        "FILTER NOT EXISTS { ?this ?_p ?_v } }"
    )


def run_checks(
    graph: rdflib.Graph, checks: list[Check], progress: Progress | None = None, stop_after: int | None = None
) -> list[Finding]:
    """Run every check on ``graph`` (findings in check order); ``stop_after`` findings ends early."""
    focus_sets: dict[str, set[tuple[str, str]]] = {}
    focus_lock = threading.Lock()

    def focus(query: str) -> set[tuple[str, str]]:
        # Read only when a SPARQL constraint has rows (conforming data: never), once per query.
        with focus_lock:
            if query not in focus_sets:
                focus_sets[query] = _focus_keys(graph, query)
            return focus_sets[query]

    def one(check: Check) -> list[Finding]:
        if check.precheck is not None and not _ask(graph, check.precheck):
            return []
        found = []
        wanted = None
        for row in graph.query(check.query):
            if check.focus_query is not None:
                wanted = wanted if wanted is not None else focus(check.focus_query)
                if _key(row.this) not in wanted:
                    continue
            bound = tuple((name, row[name]) for name in row.labels if row[name] is not None)
            value = row["value"] if "value" in row.labels else None
            found.append(Finding(check=check, focus=row.this, value=value, bindings=bound))
        return found

    def unit(indexes: list[int]) -> dict[int, list[Finding]]:
        if len(indexes) == 1:
            return {indexes[0]: one(checks[indexes[0]])}
        members = [checks[i] for i in indexes]
        found: dict[int, list[Finding]] = {i: [] for i in indexes}
        for row in graph.query(_required_query(members)):
            check = members[int(row.k)]
            found[indexes[int(row.k)]].append(
                Finding(check=check, focus=row.this, value=None, bindings=(("this", row.this),))
            )
        return found

    results: dict[int, list[Finding]] = {}
    done = count = 0
    with ThreadPoolExecutor(max_workers=CHECK_THREADS) as pool:
        for found in pool.map(unit, _units(checks)):
            for index, rows in found.items():
                results[index] = rows
                count += len(rows)
                done += 1
                if progress is not None:
                    progress(done, len(checks))
            if stop_after is not None and count >= stop_after:
                pool.shutdown(wait=False, cancel_futures=True)  # the checks not yet started are dropped
                break
    return [finding for index in sorted(results) for finding in results[index]]


__all__ = ["Check", "Finding", "Unsupported", "compile_shapes", "load_checks", "run_checks"]
