"""Keeping tool results small: pages, cursors and the central size cap.

Agents reject tool output past a few tens of thousands of characters, so every tool builds its
result through a ``Bounds``: each list becomes a page (``items``, ``total``, ``offset``, ``limit``,
``truncated``, ``cursor``) and ``finish`` trims the largest pages until the whole result fits
``MAX_STRUCTURED_CHARS``, saying so in ``notice``. A cursor is opaque to the agent; inside it
holds the tool, a key of the call's arguments and the next offset of every list, so one cursor
continues every list of a result and cannot be replayed against a different call.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from fastmcp.tools.base import ToolResult
from mcp_types import TextContent
from pydantic import BaseModel

from stackgraph.server.errors import UserError

#: The documented bound: one whole result (text content plus structured content) stays under this
#: many characters, whichever of the two a client passes on to its model (README, "MCP").
MAX_RESULT_CHARS = 20_000
#: The JSON of a result's structured content stays under this many characters ...
MAX_STRUCTURED_CHARS = 9_000
#: ... its one-paragraph summary under this many ...
MAX_SUMMARY_CHARS = 1_800
#: ... and its text content (the summary, then the same record as JSON) under this many.
MAX_TEXT_CHARS = MAX_RESULT_CHARS - MAX_STRUCTURED_CHARS
#: The line before the record in the text content; the record is JSON, on the next line.
RECORD_MARK = "Structured content (JSON):"
#: With ``raw_field``, the line before that field's text, given as is after the record.
RAW_MARK = "{field} (as is, {size} characters):"
#: Strings longer than this are cut when trimming pages alone cannot make a result fit.
_STRING_STEPS = (4_000, 2_000, 1_000, 400, 200)


@dataclass
class Page:
    """A window of a list while a result is being built (rendered by ``Bounds.finish``)."""

    field: str
    items: list[Any]
    #: None when unknown (a SPARQL result cut at its row cap): then ``more`` says whether items follow.
    total: int | None
    offset: int
    limit: int
    more: bool | None = None
    #: True when the list goes on past what the server will ever page through (a SPARQL result
    #: at its row cap): the page says ``truncated`` but has no cursor, and the tool says why.
    capped: bool = False

    @property
    def next_offset(self) -> int | None:
        end = self.offset + len(self.items)
        if self.total is None:
            return end if (self.more or len(self.items) < self.original) else None
        return end if end < self.total else None

    def __post_init__(self) -> None:
        self.original = len(self.items)


def call_key(parts: Sequence[Any]) -> str:
    """The key of one call's arguments, held in its cursors (a cursor continues only that call)."""
    return hashlib.sha256(json.dumps(list(parts), default=str).encode()).hexdigest()[:12]


def encode_cursor(tool: str, key: str, offsets: dict[str, int]) -> str:
    raw = json.dumps({"t": tool, "k": key, "o": offsets}, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str) -> dict[str, Any]:
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        data = json.loads(base64.urlsafe_b64decode(padded.encode()))
        if not (isinstance(data, dict) and isinstance(data.get("o"), dict)):
            raise ValueError
        if not all(isinstance(v, int) and v >= 0 for v in data["o"].values()):
            raise ValueError
        return data
    except (ValueError, binascii.Error, UnicodeDecodeError):
        raise UserError(
            "bad argument 'cursor': not a cursor this server issued; omit it to start over"
        ) from None


class Bounds:
    """Builds one tool result: pages its lists, issues its cursor, caps its size."""

    def __init__(self, tool: str, key_parts: Sequence[Any], cursor: str | None, limit: int) -> None:
        self.tool = tool
        self.key = call_key([tool, *key_parts])
        self.limit = limit
        self.continuing = cursor is not None
        self.offsets: dict[str, int] = {}
        #: Continuations that are not pages (an export's next character); set by the tool.
        self.extra_offsets: dict[str, int] = {}
        if cursor is not None:
            data = decode_cursor(cursor)
            if data.get("t") != tool or data.get("k") != self.key:
                raise UserError(
                    f"bad argument 'cursor': it belongs to a different call; pass it to {data.get('t')!r} "
                    "with the same arguments as the call that returned it, or omit it to start over"
                )
            self.offsets = dict(data["o"])

    @classmethod
    def for_key(cls, tool: str, key: str, cursor: str | None, limit: int) -> Bounds:
        """Bounds whose key is given (a cached answer's token) rather than derived from arguments."""
        bounds = cls(tool, (), None, limit)
        bounds.key = key
        if cursor is not None:
            data = decode_cursor(cursor)
            if data.get("t") != tool or data.get("k") != key:
                raise UserError(
                    "bad argument 'cursor': it belongs to a different call; omit it to start over"
                )
            bounds.continuing = True
            bounds.offsets = dict(data["o"])
        return bounds

    def offset(self, field: str, total: int) -> int:
        """Where ``field`` starts on this page: 0 on a first call; past the end when a continued
        cursor says that list was already complete."""
        if not self.continuing:
            return 0
        return min(self.offsets.get(field, total), total)

    def page(
        self,
        field: str,
        items: Sequence[Any],
        convert: Callable[[Any], Any] = lambda x: x,
        limit: int | None = None,
    ) -> Page:
        """A page of a list the tool holds in full."""
        limit = limit or self.limit
        start = self.offset(field, len(items))
        window = [convert(item) for item in items[start : start + limit]]
        return Page(field, window, len(items), start, limit)

    def window(
        self,
        field: str,
        window: Sequence[Any],
        total: int | None,
        offset: int,
        limit: int | None = None,
        more: bool | None = None,
    ) -> Page:
        """A page of a list the engine already paged (search, neighbors, SPARQL rows)."""
        return Page(field, list(window), total, offset, limit or self.limit, more)

    def finish(
        self,
        data: dict[str, Any],
        model: type[BaseModel],
        render: Callable[[dict[str, Any]], str],
        raw_field: str | None = None,
    ) -> ToolResult:
        """Trim to size, render pages and cursor, validate against ``model``, add the text.

        The text content is a faithful copy of the structured content, for clients that pass
        only ``content`` to their model: a short summary (``render``), then the record as one
        line of JSON, so that the cursor, every name and every value are in both. ``raw_field``
        (an export's chunk) is left out of that JSON and given after it as is, so a diagram or
        Turtle chunk can be read and parsed straight from the text. A result that cannot be
        trimmed to size (hundreds of long SPARQL variables) is refused with a UserError."""
        pages = [value for value in _walk(data) if isinstance(value, Page)]
        notice = data.pop("notice", None)
        trimmed = False

        def build() -> dict[str, Any]:
            cursor = self._cursor(pages)
            note = notice
            if trimmed:
                note = (notice + " " if notice else "") + (
                    f"Trimmed to stay under {MAX_STRUCTURED_CHARS:,} characters; pass `cursor` for the rest."
                )
            structured = _render(data, cursor)
            capped = any(p.capped for p in pages)
            structured.update(truncated=cursor is not None or capped, cursor=cursor, notice=note)
            return model.model_validate(structured).model_dump(mode="json")

        def fits() -> bool:
            return len(json.dumps(build())) <= MAX_STRUCTURED_CHARS

        structured = build()
        while len(json.dumps(structured)) > MAX_STRUCTURED_CHARS:
            trimmed = True
            candidates = [p for p in pages if len(p.items) > 1]
            if not candidates:
                break
            biggest = max(candidates, key=lambda p: len(json.dumps(p.items, default=str)))
            full = list(biggest.items)
            low, high = 1, len(full) - 1  # the largest count that fits, by bisection ...
            guess = _fitting_prefix(full, len(json.dumps(structured)) - MAX_STRUCTURED_CHARS)
            if 1 <= guess < len(full):  # ... near the estimate from the items' own sizes
                biggest.items = full[:guess]
                low, high = (guess, min(high, guess + 8)) if fits() else (1, guess - 1)
            while low < high:
                middle = (low + high + 1) // 2
                biggest.items = full[:middle]
                if fits():
                    low = middle
                else:
                    high = middle - 1
            biggest.items = full[:low]
            structured = build()
        for step in _STRING_STEPS:
            if len(json.dumps(structured)) <= MAX_STRUCTURED_CHARS:
                break
            trimmed = True
            data = _cut_strings(data, step)
            structured = build()
        size = len(json.dumps(structured))
        if size > MAX_STRUCTURED_CHARS:
            raise UserError(
                f"the result would be {size:,} characters even trimmed to one item per list, over the "
                f"{MAX_STRUCTURED_CHARS:,} this server returns; ask for less (fewer or shorter SPARQL "
                "variables, a narrower query, a smaller limit)"
            )
        text = text_content(structured, render, raw_field)
        return ToolResult(content=[TextContent(type="text", text=text)], structured_content=structured)

    def _cursor(self, pages: list[Page]) -> str | None:
        offsets = {p.field: p.next_offset for p in pages if p.next_offset is not None}
        offsets.update(self.extra_offsets)
        return encode_cursor(self.tool, self.key, offsets) if offsets else None  # type: ignore[arg-type]


def text_content(
    structured: dict[str, Any], render: Callable[[dict[str, Any]], str], raw_field: str | None = None
) -> str:
    """The text content of a result: summary, cursor, then the record itself (see ``finish``)."""
    summary = render(structured).strip() or "(empty result)"
    if len(summary) > MAX_SUMMARY_CHARS:
        summary = summary[: MAX_SUMMARY_CHARS - 40].rstrip() + " … (summary cut; the record is complete)"
    lines = [summary]
    if structured.get("cursor"):
        lines.append(f"More follows: call again with the same arguments and cursor={structured['cursor']}")
    if structured.get("notice"):
        lines.append(f"Notice: {structured['notice']}")
    record = {k: v for k, v in structured.items() if k != raw_field}
    lines += [RECORD_MARK, json.dumps(record, ensure_ascii=False, separators=(",", ":"))]
    if raw_field is not None:
        raw = structured.get(raw_field) or ""
        lines += [RAW_MARK.format(field=raw_field, size=len(raw)), raw]
    return "\n".join(lines)


def parse_text_content(text: str) -> tuple[str, dict[str, Any], str | None]:
    """Summary, record and raw field of a text content made by ``text_content`` (for clients and
    tests that want the record back from the text alone)."""
    head, _, rest = text.partition("\n" + RECORD_MARK + "\n")
    record_line, _, raw_part = rest.partition("\n")
    record = json.loads(record_line)
    raw = raw_part.partition("\n")[2] if raw_part else None
    return head, record, raw


def _fitting_prefix(items: list[Any], overflow: int) -> int:
    """How many leading ``items`` remain once the trailing ones that make up ``overflow``
    characters of JSON are dropped (an estimate: it ignores separators)."""
    count, dropped = len(items), 0
    while count > 1 and dropped < overflow:
        count -= 1
        dropped += len(json.dumps(items[count], default=str)) + 2
    return count


def _walk(value: Any):
    yield value
    if isinstance(value, dict):
        for item in value.values():
            yield from _walk(item)
    elif isinstance(value, list):
        for item in value:
            yield from _walk(item)


def _render(value: Any, cursor: str | None) -> Any:
    if isinstance(value, Page):
        more = value.next_offset is not None
        return {
            "items": _render(value.items, cursor),
            "total": value.total,
            "offset": value.offset,
            "limit": value.limit,
            "truncated": more or value.capped,
            "cursor": cursor if more else None,
        }
    if isinstance(value, dict):
        return {k: _render(v, cursor) for k, v in value.items()}
    if isinstance(value, list):
        return [_render(v, cursor) for v in value]
    return value


def _cut_strings(value: Any, limit: int) -> Any:
    if isinstance(value, str) and len(value) > limit:
        return value[:limit] + "… [cut]"
    if isinstance(value, Page):
        value.items = [_cut_strings(v, limit) for v in value.items]
        return value
    if isinstance(value, dict):
        return {k: _cut_strings(v, limit) for k, v in value.items()}
    if isinstance(value, list):
        return [_cut_strings(v, limit) for v in value]
    return value
