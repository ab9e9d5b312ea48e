"""What the MCP tools tell an agent when a call did not go as asked: a shortcut that answered
another kind of question, a triage text that names no symptom, a tree walked for a related
symptom, a search type that does not exist. Each says what happened and what to call instead,
naming the closest entities of the kind that was asked for.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from stackgraph.graph.model import UnknownEntity
from stackgraph.server.errors import UserError

if TYPE_CHECKING:
    from stackgraph.graph.engine import Engine
    from stackgraph.graph.model import Answer, EntityRef
    from stackgraph.graph.triage_tree import TreeChoice

#: The kind of entity each shortcut tool is about (a class label ``Engine.search`` accepts);
#: each tool's argument is named after it.
SHORTCUT_KINDS = {"where_fits": "technology", "owner_of_symptom": "symptom", "diagnose": "symptom"}


def closest_of_kind(engine: Engine, text: str, kind: str, limit: int = 5) -> list[EntityRef]:
    """The entities of ``kind`` whose names (or meaning) come nearest ``text``."""
    found, _ = engine.search(text, type=kind, limit=limit)
    return found


def plural(kind: str) -> str:
    return kind[:-1] + "ies" if kind.endswith("y") else kind + "s"


def check_type(engine: Engine, type_name: str) -> None:
    """Refuse a ``search`` type no entity has, listing the types there are."""
    from stackgraph.server.mcp_schema import class_names, is_class_name

    if not is_class_name(engine, type_name):
        raise UserError(
            f"bad argument 'type': there is no type {type_name!r}; the types are: "
            + ", ".join(class_names(engine)),
            {"argument": "type", "valid": class_names(engine)},
        )


def tree_notice(choice: TreeChoice) -> str | None:
    """What an agent must know when the tree walked is not the symptom's own."""
    name = choice.symptom.display
    if choice.rule == "related":
        return f"{name} has no triage tree; this is the tree of the related symptom {choice.tree_of.display}."
    if choice.rule == "shared":
        common = ", ".join(ref.display for ref in choice.shared[:5])
        return (
            f"{name} has no triage tree; this is the tree of {choice.tree_of.display}, which shares "
            f"the most causes and checks with it ({common})."
        )
    if choice.rule == "none":
        return f"No triage tree applies to {name}; here are its owners, causes and checks."
    return None


def not_a_symptom(engine: Engine, text: str, error: UnknownEntity) -> str:
    """The error for a `triage` text that names no symptom: what it is, and the closest symptoms."""
    try:
        ref = engine.resolve(text)
        what = f"{text!r} is the {ref.type} {ref.display}, not a symptom."
    except UnknownEntity:
        what = f"no symptom matches {text!r}."
    names = "; ".join(f"{s.display}" for s in error.suggestions[:5])
    hint = f" Closest symptoms: {names}. Call again with one of these." if names else ""
    return f"bad argument 'symptom': {what}{hint} Or use `search` with type 'symptom'."


def answered_else_notice(tool: str, kind: str, subject: str, answer: Answer, closest: list[EntityRef]) -> str:
    """The notice of a shortcut whose question the engine read as another kind ("NVLink" is no
    symptom): which answer this is instead, and the closest entities of the kind asked for."""
    about = next((e for e in answer.entities if e.type != "layer"), None)
    read_as = f" ({about.display} is a {about.type})" if about else ""
    names = "; ".join(s.display for s in closest)
    notice = f"{tool} found no {kind} named {subject!r}; this is the {answer.intent} answer instead{read_as}."
    if names:
        notice += f" Closest {plural(kind)}: {names} (in `suggestions`); call again with one."
    return notice
