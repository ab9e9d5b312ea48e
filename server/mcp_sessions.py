"""Whose conversation is it: the one place that scopes `ask`'s conversation ids.

A conversation id must never let one client continue another's conversation. MCP gives three
kinds of connection, and each gets the scope it can support:

- A handshake-era HTTP session (``Mcp-Session-Id``): ids the agent chooses ("incident-42") are
  scoped to that session, so two sessions can both use "incident-42".
- stdio (and the in-memory client): the process, or the server object, serves one client, so
  ids it chooses are scoped to that connection's process.
- A stateless request (the 2026-07-28 protocol, which the official SDK client speaks by
  default): there is no session to scope by, so, as the protocol's working group recommends,
  the server issues the handle. Every `ask` result carries a ``conversation_id``; an id the
  server issued (``c_`` + 16 random URL-safe characters, a bearer capability) continues that
  conversation from any connection, and a name the agent made up is refused there with a
  message saying how to start one.

Session expiry and size limits belong to the runtime's conversation store; this module only
decides the key.
"""

from __future__ import annotations

import re
import secrets
from typing import Any

from stackgraph.server.errors import UserError

#: Ids this server issues; an agent-chosen id matching it but never issued is just unknown.
ISSUED = re.compile(r"^c_[A-Za-z0-9_-]{16}$")
#: The scope of ids on connections without HTTP (stdio, in-memory): one client per process.
LOCAL_SCOPE = "local"
#: The scope of issued ids: valid everywhere, because they cannot be guessed.
ISSUED_SCOPE = "issued"


def issue_id() -> str:
    """A new conversation id (URL-safe, unguessable)."""
    return "c_" + secrets.token_urlsafe(12)


def connection_scope(ctx: Any) -> str | None:
    """The session the current request belongs to: its ``Mcp-Session-Id`` over HTTP,
    ``LOCAL_SCOPE`` without HTTP, None for a stateless HTTP request."""
    request_context = getattr(ctx, "request_context", None) if ctx is not None else None
    if request_context is None:
        return LOCAL_SCOPE
    connection = getattr(request_context.session, "_connection", None)
    session_id = getattr(connection, "session_id", None)
    request = request_context.request
    if session_id is None and request is not None:
        session_id = request.headers.get("mcp-session-id")
    if session_id:
        return f"session:{session_id}"
    return None if request is not None else LOCAL_SCOPE


def conversation_key(ctx: Any, conversation_id: str | None, known: set[str] | Any) -> tuple[str, str]:
    """(key in the runtime's conversation store, id to return to the agent) for this call.

    ``conversation_id`` None starts a conversation under a new issued id. ``known`` answers
    whether a key already exists (``in``), so that an issued-looking id that was never issued or
    has expired is reported rather than silently started afresh."""
    if conversation_id is None:
        new = issue_id()
        return f"{ISSUED_SCOPE}\x1f{new}", new
    if ISSUED.match(conversation_id):
        key = f"{ISSUED_SCOPE}\x1f{conversation_id}"
        if key not in known:
            raise UserError(
                f"bad argument 'conversation_id': {conversation_id!r} is not a conversation this server "
                "knows (or it has expired); omit conversation_id to start a new one"
            )
        return key, conversation_id
    scope = connection_scope(ctx)
    if scope is None:
        raise UserError(
            f"bad argument 'conversation_id': this connection has no MCP session, so {conversation_id!r} "
            "cannot be told apart from another client's; omit conversation_id and pass back the "
            "conversation_id the result returns"
        )
    return f"{scope}\x1f{conversation_id}", conversation_id
