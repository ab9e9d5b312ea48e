"""CORS for browser clients (YASGUI, Comunica in a browser, the query page served elsewhere).

Starlette's ``CORSMiddleware`` does the protocol; this module only decides its settings from the
same origin rules the guard applies (server/http.py), so the two never disagree:

- allowed: loopback origins on any port, and those in ``STACKGRAPH_ALLOWED_ORIGINS`` (``*`` for any);
- a preflight (``OPTIONS`` with ``Access-Control-Request-Method``) is answered here, *before* the
  token check: browsers never send credentials on a preflight, so requiring the token there would
  make every cross-origin call fail. The preflight reveals nothing; the request that follows still
  needs the token;
- the ``Stackgraph-*`` headers (truncation, row cap, elapsed time) are exposed to scripts, as are
  MCP's session headers.

The middleware must wrap the guard (be added after it), so that refusals carry CORS headers too and
a browser script can read why it was refused.
"""

from __future__ import annotations

from collections.abc import Sequence

from starlette.middleware.cors import CORSMiddleware
from starlette.types import ASGIApp

#: Loopback origins on any port: http(s)://localhost, *.localhost, 127.x.x.x, [::1].
LOOPBACK_ORIGIN_REGEX = r"https?://(localhost|[a-z0-9.-]+\.localhost|127(\.\d{1,3}){3}|\[::1\])(:\d{1,5})?"
ALLOW_METHODS = ("GET", "POST", "DELETE", "OPTIONS")
ALLOW_HEADERS = (
    "Authorization",
    "Content-Type",
    "Accept",
    "Mcp-Session-Id",
    "Mcp-Protocol-Version",
    "Last-Event-ID",
)
EXPOSE_HEADERS = (
    "Stackgraph-Truncated",
    "Stackgraph-Max-Rows",
    "Stackgraph-Elapsed-Ms",
    "Mcp-Session-Id",
    "WWW-Authenticate",
    "Allow",
)
MAX_AGE_S = 600


class Cors(CORSMiddleware):
    """``CORSMiddleware`` configured from the server's allowed origins (already normalized)."""

    def __init__(self, app: ASGIApp, *, allowed_origins: Sequence[str] = ()) -> None:
        super().__init__(
            app,
            allow_origins=tuple(allowed_origins),
            allow_origin_regex=LOOPBACK_ORIGIN_REGEX,
            allow_methods=ALLOW_METHODS,
            allow_headers=ALLOW_HEADERS,
            expose_headers=EXPOSE_HEADERS,
            max_age=MAX_AGE_S,
        )


__all__ = ["ALLOW_HEADERS", "EXPOSE_HEADERS", "Cors"]
