"""Turning whatever goes wrong inside a tool into a message an agent can act on.

Nothing a tool does may crash the server or hand the agent a stack trace: an unknown entity names
its closest matches, a bad argument says which and why, a missing engine part says so, and
anything else is logged to stderr with its traceback and reported in one line.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from fastmcp.exceptions import ToolError
from fastmcp.exceptions import ValidationError as FastMCPValidationError
from fastmcp.server.middleware import Middleware
from fastmcp.tools.base import ToolResult
from mcp_types import TextContent
from pydantic import ValidationError as PydanticValidationError

from stackgraph.graph.model import UnknownEntity
from stackgraph.server.runtime import EngineUnavailable

log = logging.getLogger("stackgraph.server")


class UserError(ToolError):
    """A tool error caused by the call (unknown name, bad argument): logged at DEBUG, not ERROR.

    ``data`` (the argument at fault, the closest names) also reaches the agent as the error
    result's structured content, next to the message, for clients that read JSON."""

    def __init__(self, message: str, data: dict[str, Any] | None = None) -> None:
        super().__init__(message, log_level=logging.DEBUG)
        self.data = data


def did_you_mean(argument: str | None, suggestions: Any) -> dict[str, Any]:
    """The structured part of an error naming the closest entities (EntityRefs)."""
    return {"argument": argument, "suggestions": [s.to_dict() for s in list(suggestions)[:5]]}


def unknown_entity_error(error: UnknownEntity, argument: str | None = None) -> UserError:
    return UserError(unknown_entity_message(error, argument), did_you_mean(argument, error.suggestions))


def unknown_entity_message(error: UnknownEntity, argument: str | None = None) -> str:
    where = f" (argument '{argument}')" if argument else ""
    text = f"unknown entity {error.name!r}{where}: nothing in the graph has that name."
    if error.suggestions:
        names = "; ".join(f"{s.display} ({s.type}, <{s.iri}>)" for s in error.suggestions[:5])
        text += f" Closest matches: {names}. Call again with one of these names"
        text += " (or use `search` to look around)."
    else:
        text += " Use `search` with a few words to find the entity's name."
    return text


@contextmanager
def tool_errors(tool: str, argument: str | None = None) -> Iterator[None]:
    """Convert exceptions raised by the engine into ToolErrors with a useful message."""
    try:
        yield
    except ToolError:
        raise
    except UnknownEntity as error:
        raise unknown_entity_error(error, argument) from None
    except EngineUnavailable as error:
        raise ToolError(str(error)) from None
    except (NotImplementedError, ImportError, ModuleNotFoundError) as error:
        log.error("%s: engine part missing: %s", tool, error)
        raise ToolError(f"{tool} is not available in this build of stackgraph ({error})") from None
    except ValueError as error:
        raise UserError(f"bad argument: {' '.join(str(error).split())}") from None
    except Exception as error:
        log.exception("%s failed", tool)
        raise ToolError(
            f"{tool} failed: {type(error).__name__}: {' '.join(str(error).split())[:300]}"
        ) from None


def _describe_input(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def argument_error_message(error: PydanticValidationError) -> str:
    parts = []
    for item in error.errors():
        loc = ".".join(str(p) for p in item.get("loc", ()) if p not in ("call",)) or "arguments"
        msg = item.get("msg", "invalid")
        if item.get("type") == "missing_argument" or msg.startswith("Missing"):
            parts.append(f"'{loc}' is required")
        elif item.get("type") == "unexpected_keyword_argument":
            parts.append(f"'{loc}' is not an argument of this tool")
        else:
            parts.append(f"'{loc}': {msg} (got {_describe_input(item.get('input'))})")
    return "bad argument " + "; ".join(parts)


class ArgumentErrors(Middleware):
    """Rewrites pydantic's multi-line argument validation errors as one line per argument, and
    returns errors that carry data (did-you-mean names) with that data as structured content."""

    async def on_call_tool(self, context, call_next):  # type: ignore[no-untyped-def]
        try:
            return await call_next(context)
        except UserError as error:
            if error.data is None:
                raise
            message = str(error)
            return ToolResult(
                content=[TextContent(type="text", text=message)],
                structured_content={"error": message, **error.data},
                is_error=True,
            )
        except FastMCPValidationError as error:
            cause = error.__cause__
            if isinstance(cause, PydanticValidationError):
                raise UserError(argument_error_message(cause)) from None
            raise UserError(f"bad argument: {' '.join(str(error).split())[:300]}") from None
