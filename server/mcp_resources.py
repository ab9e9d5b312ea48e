"""MCP resources and prompts: the ontology, the layer lists, one page per entity and per layer,
and three prompts that start an agent on the common jobs (triage, placing a technology, explaining
a layer) with what the graph already knows about the argument.
"""

from __future__ import annotations

import json
import logging
from importlib import resources as package_resources
from typing import TYPE_CHECKING, Annotated, Any

from fastmcp.exceptions import PromptError, ResourceError
from mcp import MCPError
from mcp_types import INVALID_PARAMS
from pydantic import Field

from stackgraph.graph.model import MAX_NAME_CHARS, UnknownEntity
from stackgraph.graph.store import KG
from stackgraph.server.bounds import MAX_RESULT_CHARS
from stackgraph.server.errors import unknown_entity_message
from stackgraph.server.runtime import EngineUnavailable, Runtime

if TYPE_CHECKING:
    from fastmcp import FastMCP

log = logging.getLogger("stackgraph.server")

ONTOLOGY_URI = "stackgraph://ontology.ttl"
LAYERS_URI = "stackgraph://layers/{model}"
ENTITY_TEMPLATE = "stackgraph://entity/{id}"
LAYER_TEMPLATE = "stackgraph://layer/{model}/{code}"
MODELS = ("nine", "eight")


#: A resource's JSON stays under the bound every tool result keeps (see ``bounds``).
MAX_RESOURCE_CHARS = MAX_RESULT_CHARS


def _json(data: Any, more: str = "the `describe` tool pages through all of it") -> str:
    """``data`` as JSON within ``MAX_RESOURCE_CHARS``: the longest lists are cut (halved, then
    halved again) until it fits, and ``truncated`` says which lists were cut, from how many
    items, and where to read the rest (``more``)."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    if len(text) <= MAX_RESOURCE_CHARS:
        return text
    data = dict(data)
    cut: dict[str, int] = {}
    data["truncated"] = {"lists": cut, "rest": more}
    while len(text) > MAX_RESOURCE_CHARS:
        lists = [(path, value) for path, value in _lists(data) if len(value) > 1]
        if not lists:
            data = {k: data[k] for k in ("entity", "model", "truncated") if k in data}
            data["truncated"]["rest"] = f"this page is too large to return; {more}"
            return json.dumps(data, ensure_ascii=False, separators=(",", ":"))
        path, longest = max(lists, key=lambda item: len(json.dumps(item[1], ensure_ascii=False)))
        cut.setdefault(path, len(longest))
        del longest[max(1, len(longest) // 2) :]
        text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return text


def _lists(value: Any, path: str = "") -> list[tuple[str, list[Any]]]:
    """Every list inside ``value`` (copied, so cutting it leaves the caller's data alone)."""
    found: list[tuple[str, list[Any]]] = []
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "truncated":
                continue
            if isinstance(item, list):
                value[key] = item = list(item)
                found.append((f"{path}{key}", item))
            found += _lists(item, f"{path}{key}.")
    return found


def _not_found(uri: str, message: str, suggestions: tuple[Any, ...] = ()) -> MCPError:
    """The error for a resource URI that names nothing: invalid params (-32602), not an internal
    error, with the closest entities in ``data`` for clients that read it."""
    data: dict[str, Any] = {"uri": uri}
    if suggestions:
        data["suggestions"] = [{"iri": s.iri, "label": s.label, "type": s.type} for s in suggestions[:5]]
    return MCPError(code=INVALID_PARAMS, message=message, data=data)


def register_resources(mcp: FastMCP, runtime: Runtime) -> None:
    """The ontology as Turtle, the layers of each model, and templates per entity and per layer."""

    def engine():
        try:
            return runtime.engine()
        except EngineUnavailable as error:
            raise ResourceError(str(error)) from None

    @mcp.resource(
        ONTOLOGY_URI,
        name="ontology",
        title="stackgraph ontology (Turtle)",
        description="The vocabulary every fact uses: classes (Layer, Technology, Symptom, Command, ...) and "
        "properties (fitsIn, ownedBy, diagnosedBy, ...), in Turtle.",
        mime_type="text/turtle",
    )
    def ontology() -> str:
        return (package_resources.files("stackgraph.ontology") / "vocabulary.ttl").read_text(encoding="utf-8")

    def layers_json(model: str) -> str:
        infos = engine().layers(model)
        return _json(
            {
                "model": model,
                "layers": [
                    {
                        "layer": i.layer.to_dict(),
                        "position": i.position,
                        "runs_in": i.runs_in,
                        "members": [m.label for m in i.members],
                        "uri": LAYER_TEMPLATE.format(model=model, code=i.layer.code or ""),
                    }
                    for i in infos
                ],
            }
        )

    def layers_reader(model: str):
        def read() -> str:
            return layers_json(model)

        read.__name__ = f"layers_{model}"
        return read

    for model, title in (("nine", "nine-layer co-design model"), ("eight", "eight-layer operational map")):
        mcp.resource(
            LAYERS_URI.format(model=model),
            name=f"layers-{model}",
            title=f"Layers of the {title}",
            description=f"The layers of the {title} in order, with their members' names (JSON).",
            mime_type="application/json",
        )(layers_reader(model))

    @mcp.resource(
        ENTITY_TEMPLATE,
        name="entity",
        title="An entity's page",
        description="Everything the graph says about one entity (JSON). `id` is the local name of its IRI "
        "(stackgraph://entity/nvlink for kg:nvlink) or any name the `describe` tool accepts.",
        mime_type="application/json",
    )
    def entity(id: str) -> str:
        iri = str(KG[id])
        eng = engine()
        try:
            return _json(eng.describe(iri if iri in eng.catalog else id).to_dict())
        except UnknownEntity as error:
            uri = ENTITY_TEMPLATE.format(id=id)
            raise _not_found(uri, unknown_entity_message(error), error.suggestions) from None

    @mcp.resource(
        LAYER_TEMPLATE,
        name="layer",
        title="A layer's page",
        description='One layer of one model (JSON): model is "nine" or "eight", code is "L1".."L9", "S" or "CP".',
        mime_type="application/json",
    )
    def layer(model: str, code: str) -> str:
        uri = LAYER_TEMPLATE.format(model=model, code=code)
        if model not in MODELS:
            raise _not_found(uri, f"unknown model {model!r}: use one of {', '.join(MODELS)}")
        eng = engine()
        info = next((i for i in eng.layers(model) if (i.layer.code or "").lower() == code.lower()), None)
        if info is None:
            codes = ", ".join(i.layer.code or "?" for i in eng.layers(model))
            raise _not_found(uri, f"no layer {code!r} in the {model} model; its codes are {codes}")
        page = eng.describe(info.layer.iri).to_dict()
        page["members"] = [m.to_dict() for m in info.members]
        page["position"], page["runs_in"] = info.position, info.runs_in
        return _json(page, "the `describe` tool pages through its edges, `sparql` lists all members")


def _known_as(runtime: Runtime, name: str) -> str:
    """One sentence on how the graph knows ``name`` (or its closest matches), for a prompt."""
    try:
        ref = runtime.engine().resolve(name)
    except UnknownEntity as error:
        if error.suggestions:
            return (
                f"stackgraph has no entity named {name!r}; the closest are "
                + ", ".join(s.display for s in error.suggestions[:5])
                + "."
            )
        return f"stackgraph has no entity named {name!r}; use `search` to find the right name."
    except Exception as error:  # a prompt must render even when the engine cannot help
        log.warning("prompt context unavailable: %s", error)
        return ""
    return f"stackgraph knows {name!r} as {ref.display} ({ref.type}, <{ref.iri}>)."


#: A symptom is a sentence or two, like an ``ask`` question; a name is capped as everywhere else.
MAX_SYMPTOM_CHARS = 2000


def _bounded(value: str, limit: int, argument: str) -> str:
    """The argument, or a one-line PromptError when it is empty or too long.

    Checked here rather than with pydantic constraints: fastmcp reports a failed conversion with the
    whole value and a traceback in the log, and a 100 KB argument must cost one short line.
    """
    if not value.strip():
        raise PromptError(f"bad argument {argument!r}: it is empty", log_level=logging.DEBUG)
    if len(value) > limit:
        raise PromptError(
            f"bad argument {argument!r}: {len(value):,} characters; the limit is {limit:,}",
            log_level=logging.DEBUG,
        )
    return value


def register_prompts(mcp: FastMCP, runtime: Runtime) -> None:
    """Prompts for the three jobs agents come to stackgraph for."""

    @mcp.prompt(name="triage_incident", title="Triage an incident")
    def triage_incident(
        symptom: Annotated[
            str, Field(description='What is going wrong, e.g. "NCCL timeout during all-reduce".')
        ],
    ) -> str:
        """Triage an incident from its symptom: find the owning layer, walk the decision tree, list checks."""
        symptom = _bounded(symptom, MAX_SYMPTOM_CHARS, "symptom")
        return "\n".join(
            [
                f"We have an incident. Symptom: {symptom}",
                _known_as(runtime, symptom),
                "Using the stackgraph tools:",
                "1. Call `owner_of_symptom` with the symptom to find which layer (and team) owns it.",
                "2. Call `triage` with the symptom and answers=[]; answer each question from what we know "
                "(ask me when you cannot tell), appending one option per call, until `done`.",
                "3. Call `diagnose` for the commands to run, and say what each one would show.",
                "Finish with: owning layer, most likely cause, the next three checks, and the seed sections cited.",
            ]
        )

    @mcp.prompt(name="place_technology", title="Place a technology in the stack")
    def place_technology(
        name: Annotated[
            str, Field(description='A technology or product, e.g. "UALink", "Triton", "Lustre".')
        ],
    ) -> str:
        """Place a technology in both layer models and explain its neighbours and alternatives."""
        name = _bounded(name, MAX_NAME_CHARS, "name")
        return "\n".join(
            [
                f"Where does {name} fit in the AI infrastructure stack?",
                _known_as(runtime, name),
                "Using the stackgraph tools: call `where_fits`, then `describe` it (detail=summary) and "
                "`neighbors` (depth 1) to see what it works with. Answer with the layer in each model "
                "(nine-layer and eight-layer), its role, how sure the graph is (stated, reconstructed or "
                "inferred), related technologies, and the seed sections cited.",
            ]
        )

    @mcp.prompt(name="explain_layer", title="Explain a layer")
    def explain_layer(
        layer: Annotated[
            str, Field(description='A layer code or name, e.g. "L8", "eight L5", "Node Interconnect".')
        ],
    ) -> str:
        """Explain one layer: what it does, what runs in it, what fails there and how to check it."""
        layer = _bounded(layer, MAX_NAME_CHARS, "layer")
        return "\n".join(
            [
                f"Explain the layer {layer} of the AI infrastructure stack.",
                _known_as(runtime, layer),
                "Using the stackgraph tools: `describe` the layer (detail=full), `list_layers` for its place "
                "in its model, and `ask` about its failure modes and diagnostic commands. Explain what the "
                "layer is responsible for, the main technologies in it, the symptoms it owns and how to "
                "check them, citing the seed sections.",
            ]
        )
