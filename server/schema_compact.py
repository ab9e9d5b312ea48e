"""Output and input schemas written compactly for ``tools/list``.

Agents read every tool's schemas at the start of every session, and pydantic writes them
long-hand: a title on every property, ``anyOf`` for every optional value, every definition
inlined by fastmcp's default dereferencing. This module writes the same constraints shortly,
with the definitions each schema shares kept once under ``$defs``; the models in ``schemas``
stay the single source of what a result holds.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, create_model

from stackgraph.server.schemas import Bounded, Page

#: What every page carries besides its items (shared by every ``Page_*`` definition): the fields
#: of ``schemas.Page`` itself, so the two cannot drift apart.
PageInfo: type[BaseModel] = create_model(
    "PageInfo",
    **{name: (field.annotation, field) for name, field in Page.model_fields.items() if name != "items"},
)


def output_schema(model: type[BaseModel]) -> dict[str, Any]:
    """``model``'s JSON Schema, written compactly for ``tools/list``.

    Agents read every tool's schema on every session, and pydantic's schema repeats itself:
    a title on every property, ``anyOf`` for every optional scalar, and the same five page fields
    (with their descriptions) in every ``Page_*`` definition. Here the pages share one
    ``PageInfo`` definition (a ``$ref`` beside each page's own ``items``), a definition used
    once is written in place, and the rest in its short form; what validates is unchanged
    (tests validate every result against the schema sent)."""
    # Defaults say what an argument becomes when left out; a result always carries every field, so
    # in an output schema they only cost bytes.
    schema = _without_defaults(_compact(model.model_json_schema()))
    schema.pop("description", None)  # the tool's own description says what it returns
    for name in Bounded.model_fields:  # described once, in the server's instructions
        schema["properties"][name].pop("description", None)
    defs = schema.setdefault("$defs", {})
    for name in COMMON_DEFS & set(defs):
        defs[name] = _undescribed(defs[name])
    pages = [name for name in defs if name.startswith("Page_")]
    if pages:
        info = _undescribed(_compact(PageInfo.model_json_schema()))
        info["properties"] = {"items": {"type": "array"}, **info["properties"]}
        info["required"] = ["items", *info["required"]]
        defs["PageInfo"] = info
        for name in pages:  # a page of X: PageInfo, with items of X
            items = defs[name]["properties"]["items"]["items"]
            # JSON Schema 2020-12 (MCP's dialect) applies $ref beside other keywords: no allOf needed.
            defs[name] = {"$ref": "#/$defs/PageInfo", "properties": {"items": {"items": items}}}
    schema.get("properties", {}).get("truncated", {}).pop("default", None)
    schema = _inline_single_use_pages(_renamed(schema, {name: _short_name(name) for name in defs}))
    for definition in schema["$defs"].values():
        # Every value a definition describes is an object (the server validates each result
        # before sending it); "properties" says so to a reader, and the bytes add up in tools/list.
        if "properties" in definition:
            definition.pop("type", None)
    return schema


def _without_defaults(node: Any, naming: bool = False) -> Any:
    """``node`` without its ``default`` keywords (a property named "default" stays)."""
    if isinstance(node, list):
        return [_without_defaults(item) for item in node]
    if not isinstance(node, dict):
        return node
    return {
        k: _without_defaults(v, k in ("properties", "$defs"))
        for k, v in node.items()
        if naming or k != "default"
    }


def _inline_single_use_pages(schema: dict[str, Any]) -> dict[str, Any]:
    """A page definition used once is written where it is used (its definition and the reference
    cost more than the page itself); pages used more than once stay shared."""
    text = json.dumps(schema)
    defs = schema["$defs"]
    once = {
        name
        for name in defs
        if name.endswith("Page") and name != "PageInfo" and text.count(f'"#/$defs/{name}"') == 1
    }

    def inline(node: Any) -> Any:
        if isinstance(node, list):
            return [inline(item) for item in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref", "")
        name = ref[len("#/$defs/") :] if ref.startswith("#/$defs/") else None
        if name in once:
            rest = {k: v for k, v in node.items() if k != "$ref"}
            return {**inline(defs[name]), **rest}
        return {k: inline(v) for k, v in node.items()}

    out = inline({k: v for k, v in schema.items() if k != "$defs"})
    out["$defs"] = {k: inline(v) for k, v in defs.items() if k not in once}
    return out


def _short_name(name: str) -> str:
    """ "Page_EntityRefOut_" -> "EntityRefPage", "EntityRefOut" -> "EntityRef": shorter refs."""
    if name.startswith("Page_"):
        inner = name[len("Page_") :].strip("_").removesuffix("Out")
        return ("".join(part.title() for part in inner.split("_")) if "_" in inner else inner) + "Page"
    return name.removesuffix("Out")


def _renamed(node: Any, names: dict[str, str]) -> Any:
    if isinstance(node, list):
        return [_renamed(item, names) for item in node]
    if not isinstance(node, dict):
        return node
    out = {}
    for key, value in node.items():
        if key == "$defs":
            out[key] = {names.get(k, k): _renamed(v, names) for k, v in value.items()}
        elif key == "$ref" and isinstance(value, str) and value.startswith("#/$defs/"):
            out[key] = "#/$defs/" + names.get(value[len("#/$defs/") :], value[len("#/$defs/") :])
        else:
            out[key] = _renamed(value, names)
    return out


#: Definitions that recur in most tools' schemas; their fields are described once, in the server's
#: instructions (``RESULT_CONVENTIONS``), rather than again in every tool.
COMMON_DEFS = frozenset({"EntityRefOut", "SourceOut", "FactOut", "PathEdgeOut"})


def _undescribed(node: Any) -> Any:
    """``node`` without its field descriptions (for the definitions described once, above)."""
    if isinstance(node, dict):
        return {k: _undescribed(v) for k, v in node.items() if k != "description" or not isinstance(v, str)}
    if isinstance(node, list):
        return [_undescribed(item) for item in node]
    return node


def compact(schema: dict[str, Any]) -> dict[str, Any]:
    """An input schema without generated titles, with short optional types and enums, and
    without ``default: null`` (an optional argument left out is None anyway)."""
    return _compact(schema)


def _compact(node: Any, naming: bool = False) -> Any:
    """Drop generated titles; write ``anyOf: [{type: X}, {type: null}]`` as ``type: [X, null]``.

    ``naming`` is true for the mappings whose keys are names (``properties``, ``$defs``), where a
    key called "title" is a property, not a title."""
    if isinstance(node, list):
        return [_compact(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {
        k: _compact(v, k in ("properties", "$defs"))
        for k, v in node.items()
        if naming or not (k == "title" or (k == "default" and v is None))
    }
    options = out.get("anyOf")
    simple = isinstance(options, list) and all(
        isinstance(o, dict) and "type" in o and isinstance(o["type"], str) and set(o) <= {"type", "pattern"}
        for o in options
    )
    enums = isinstance(options, list) and len(options) == 2 and {"type": "null"} in options
    choice = next((o for o in options if set(o) == {"enum", "type"}), None) if enums else None
    if choice is not None:  # anyOf [{enum: [...], type: string}, {type: null}] -> enum [..., null]
        out.pop("anyOf")
        out["enum"] = [*choice["enum"], None]
    elif simple and sum("pattern" in o for o in options) <= 1 and "type" not in out:
        out.pop("anyOf")
        out["type"] = [o["type"] for o in options]
        out.update({k: v for o in options for k, v in o.items() if k == "pattern"})
    return out
