"""The ``stackgraph serve`` ASGI app: MCP over streamable HTTP at ``/mcp`` and SPARQL at ``/sparql``.

One process, one engine, two protocols. Every HTTP request passes the same guard first:

- **Origin** (the MCP spec's DNS-rebinding defence): a request carrying an ``Origin`` header is
  refused with 403 unless the origin is a loopback one (``http://localhost:3000``), the server's
  own origin, or listed in ``STACKGRAPH_ALLOWED_ORIGINS`` (comma-separated, ``*`` for any).
- **Host**: while bound to a loopback address, a ``Host`` header naming anything but a loopback
  name is refused with 421 (a rebinding attacker's page names its own host).
- **Token**: with ``STACKGRAPH_TOKEN`` set, every request needs ``Authorization: Bearer <token>``
  (compared in constant time) or gets 401.
- **CORS** (server/cors.py) wraps all three: a preflight from an allowed origin is answered before
  the token check, and every answer to an allowed origin carries the CORS headers.

``check_bind`` refuses a non-loopback address without a token before anything listens.
"""

from __future__ import annotations

import hmac
import json
import logging
import os
from collections.abc import Callable, Sequence
from ipaddress import ip_address
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.types import ASGIApp, Receive, Scope, Send

from stackgraph.server.cors import Cors

if TYPE_CHECKING:
    from fastmcp import FastMCP

log = logging.getLogger("stackgraph.server")

TOKEN_ENV = "STACKGRAPH_TOKEN"
ORIGINS_ENV = "STACKGRAPH_ALLOWED_ORIGINS"
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000
#: Seconds an MCP session may stay idle before the server ends it (environment
#: STACKGRAPH_MCP_SESSION_IDLE_S); a client that comes back after that starts a new session.
MCP_SESSION_IDLE_S: float = float(os.environ.get("STACKGRAPH_MCP_SESSION_IDLE_S", "600"))


class BindRefused(ValueError):
    """Listening on this address would expose the graph without a token; ``str()`` says what to do."""


def is_loopback(host: str) -> bool:
    """True for localhost, 127.0.0.0/8 and ::1 (with or without brackets or a port)."""
    host = _hostname(host)
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ip_address(host).is_loopback
    except ValueError:
        return False


def _hostname(value: str) -> str:
    value = value.strip().lower()
    if value.startswith("["):
        return value[1 : value.find("]")] if "]" in value else value
    if value.count(":") == 1:  # host:port (an IPv6 address has several colons)
        return value.rsplit(":", 1)[0]
    return value


def token_from_env(environ: dict[str, str] | None = None) -> str | None:
    token = (environ if environ is not None else os.environ).get(TOKEN_ENV, "").strip()
    return token or None


def origins_from_env(environ: dict[str, str] | None = None) -> tuple[str, ...]:
    raw = (environ if environ is not None else os.environ).get(ORIGINS_ENV, "")
    return tuple(_normalize_origin(o) for o in raw.split(",") if o.strip())


def check_bind(host: str, token: str | None) -> None:
    """Refuse to listen beyond this machine without a token."""
    if not is_loopback(host) and not token:
        raise BindRefused(
            f"refusing to listen on {host} without {TOKEN_ENV}: anyone who can reach that address could use "
            f"the server. Set {TOKEN_ENV}=<a long random secret> (clients send 'Authorization: Bearer <secret>') "
            f"or bind {DEFAULT_HOST}."
        )


def _normalize_origin(origin: str) -> str:
    origin = origin.strip().rstrip("/").lower()
    if origin == "*":
        return origin
    try:
        parts = urlsplit(origin)
        port = parts.port
    except ValueError:
        return origin
    if not parts.scheme or not parts.hostname:
        return origin
    default = {"http": 80, "https": 443}.get(parts.scheme)
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    return f"{parts.scheme}://{host}" + (f":{port}" if port and port != default else "")


class Guard:
    """ASGI middleware applying the Origin, Host and token checks to every HTTP request."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        token: str | None,
        allowed_origins: Sequence[str] = (),
        loopback_bind: bool = True,
    ) -> None:
        self.app = app
        self.token = token.encode() if token else None
        self.allowed_origins = tuple(_normalize_origin(o) for o in allowed_origins)
        self.loopback_bind = loopback_bind

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        host = headers.get("host", "")
        if self.loopback_bind and host and not is_loopback(host):
            await _refuse(
                scope,
                receive,
                send,
                421,
                "misdirected request: this server answers only to loopback host names",
            )
            return
        origin = headers.get("origin")
        if origin is not None and not self._origin_allowed(origin, scope, host):
            await _refuse(
                scope, receive, send, 403, f"forbidden: origin {origin!r} is not allowed (see {ORIGINS_ENV})"
            )
            return
        if self.token is not None and not self._authorized(headers.get("authorization", "")):
            await _refuse(
                scope,
                receive,
                send,
                401,
                "unauthorized: send 'Authorization: Bearer <token>' with the server's STACKGRAPH_TOKEN",
                {"www-authenticate": 'Bearer realm="stackgraph"'},
            )
            return
        await self.app(scope, receive, send)

    def _origin_allowed(self, origin: str, scope: Scope, host: str) -> bool:
        normalized = _normalize_origin(origin)
        if "*" in self.allowed_origins or normalized in self.allowed_origins:
            return True
        parts = urlsplit(normalized) if normalized != "null" else None
        if parts is None or not parts.hostname:
            return False
        if is_loopback(parts.hostname):
            return True
        own = _normalize_origin(f"{scope.get('scheme', 'http')}://{host}") if host else None
        return normalized == own

    def _authorized(self, header: str) -> bool:
        scheme, _, credentials = header.strip().partition(" ")
        if scheme.lower() != "bearer" or self.token is None:
            return False
        return hmac.compare_digest(credentials.strip().encode(), self.token)


async def _refuse(
    scope: Scope,
    receive: Receive,
    send: Send,
    status: int,
    message: str,
    headers: dict[str, str] | None = None,
) -> None:
    body = json.dumps({"error": message, "status": status})
    await Response(body, status_code=status, media_type="application/json", headers=headers)(
        scope, receive, send
    )


def _sparql_routes(get_graph: Callable[[], Any]) -> list[BaseRoute]:
    """The endpoint's routes (they carry their own /sparql paths: a Mount would redirect a bare
    /sparql, which POST clients do not follow)."""
    from stackgraph.server.runtime import IMPORT_LOCK

    try:
        with IMPORT_LOCK:
            from stackgraph.server.sparql_endpoint import sparql_routes
    except ImportError as error:
        if "sparql_endpoint" not in str(error):
            raise
        log.warning("SPARQL endpoint not available in this build; /sparql is not served")
        return []
    return sparql_routes(get_graph)


def create_app(
    server: FastMCP,
    *,
    host: str = DEFAULT_HOST,
    token: str | None = None,
    allowed_origins: Sequence[str] = (),
    stateless: bool = False,
) -> Starlette:
    """The ASGI app serving ``server`` at /mcp and the SPARQL endpoint at /sparql, behind the guard.

    ``host`` is the address the app will be bound to (it decides whether Host headers are checked);
    call ``check_bind`` first. ``stateless`` serves MCP without sessions (a new transport per request).
    """
    runtime = server.stackgraph_runtime  # type: ignore[attr-defined]
    mcp_app = server.http_app(
        path="/mcp",
        host_origin_protection=False,  # the Guard below covers /mcp and /sparql alike
        stateless_http=stateless,
        # Plain JSON answers to POSTs: half the CPU of an SSE stream per call, and no tool of ours
        # streams progress. Server-to-client messages still have the GET stream.
        json_response=True,
        # Sessions idle this long are closed (each holds ~37 KB; the SDK's default is 30 minutes).
        session_idle_timeout=MCP_SESSION_IDLE_S,
    )

    async def health(request: Request) -> JSONResponse:
        return JSONResponse({"status": "ok", "graph_loaded": runtime.ready})

    routes: list[BaseRoute] = [Route("/healthz", health, methods=["GET"])]
    routes += _sparql_routes(lambda: runtime.engine().graph)
    routes.append(Mount("/", app=mcp_app))
    app = Starlette(routes=routes, lifespan=mcp_app.lifespan)
    app.add_middleware(
        Guard,
        token=token,
        allowed_origins=tuple(allowed_origins),
        loopback_bind=is_loopback(host),  # type: ignore[arg-type]
    )
    # Added last, so it wraps the guard: preflights are answered before the token check (see cors.py).
    app.add_middleware(Cors, allowed_origins=tuple(_normalize_origin(o) for o in allowed_origins))  # type: ignore[arg-type]
    runtime.start()
    return app


def uvicorn_log_config(level: str = "INFO") -> dict[str, Any]:
    """uvicorn's logging, all of it on stderr (its default sends access lines to stdout)."""
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
        "handlers": {
            "stderr": {"class": "logging.StreamHandler", "formatter": "plain", "stream": "ext://sys.stderr"}
        },
        "loggers": {
            "uvicorn": {"handlers": ["stderr"], "level": level, "propagate": False},
            "uvicorn.error": {"level": level},
            "uvicorn.access": {"handlers": ["stderr"], "level": level, "propagate": False},
        },
    }
