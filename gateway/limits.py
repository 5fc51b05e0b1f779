"""Limits with clear answers, before any stream starts.

`BodyLimit` answers `413` to a request body over `MAX_BODY_BYTES`, whether it
announces its length or comes chunked (it is counted while read, never read
past the limit). `input_problem` checks a parsed `RunAgentInput` against the
other limits (counts, sizes, string lengths, nesting, reserved metadata keys);
the AG-UI route answers `422` with its message. Both bodies are FastAPI's
`{"detail": ...}`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from ag_ui.core import RunAgentInput
from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from settings import Settings
from workflows.contract import reserved_metadata_keys

BODYLESS = frozenset({"GET", "HEAD", "OPTIONS"})


class BodyLimit:
    """Pure ASGI: read the body up to `max_bytes`, then hand it to the app; 413 beyond."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] in BODYLESS:
            await self.app(scope, receive, send)
            return
        length = Headers(scope=scope).get("content-length", "")
        if length.isdigit() and int(length) > self.max_bytes:
            await self._too_large(scope, receive, send)  # refused without reading a byte
            return
        body = await self._read(receive)
        if body is None:
            await self._too_large(scope, receive, send)
            return
        await self.app(scope, _replay(body, receive), send)

    async def _read(self, receive: Receive) -> bytes | None:
        """The whole body, or None as soon as it grows past the limit."""
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return b"".join(chunks)  # the client left; the app sees the disconnect
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_bytes:
                return None
            chunks.append(chunk)
            if not message.get("more_body", False):
                return b"".join(chunks)

    async def _too_large(self, scope: Scope, receive: Receive, send: Send) -> None:
        detail = f"request body over {self.max_bytes} bytes (MAX_BODY_BYTES)"
        # No `Connection: close`: the server discards (never buffers) the rest of the body,
        # so the client reads this answer instead of a connection reset mid-upload.
        await JSONResponse({"detail": detail}, status_code=413)(scope, receive, send)


def _replay(body: bytes, receive: Receive) -> Receive:
    """A `receive` that yields the buffered body once, then the client's own messages
    (so a streaming response still hears the disconnect)."""
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


# -- the parsed input -------------------------------------------------------------


def input_problem(body: RunAgentInput, settings: Settings) -> str | None:
    """What in `body` is over a limit (naming the limit), or None."""
    for problem in _problems(body, settings):
        return problem
    return None


def _problems(body: RunAgentInput, s: Settings) -> Iterator[str]:
    resume = body.resume or []
    if len(body.messages) > s.max_messages:
        yield f"{len(body.messages)} messages; at most {s.max_messages} (MAX_MESSAGES)"
    if len(resume) > s.max_resume_entries:
        yield f"{len(resume)} resume entries; at most {s.max_resume_entries} (MAX_RESUME_ENTRIES)"
    for i, entry in enumerate(resume):
        for key in reserved_metadata_keys(entry.metadata):
            yield f"resume[{i}].metadata: key {key[:64]!r} is reserved (the ag-ui namespace)"
    yield from _id_problems(body, s)
    yield from _size_problems(body, s)
    yield from _shape_problems(body.model_dump(mode="json", by_alias=True), s)


def _id_problems(body: RunAgentInput, s: Settings) -> Iterator[str]:
    ids = {"threadId": body.thread_id, "runId": body.run_id, "parentRunId": body.parent_run_id}
    ids |= {f"messages[{i}].id": m.id for i, m in enumerate(body.messages)}
    ids |= {f"resume[{i}].interruptId": e.interrupt_id for i, e in enumerate(body.resume or [])}
    for where, value in ids.items():
        if value is not None and len(value) > s.max_id_length:
            yield f"{where}: longer than {s.max_id_length} characters (MAX_ID_LENGTH)"


def _size_problems(body: RunAgentInput, s: Settings) -> Iterator[str]:
    """Free-form JSON the workflow stores: each piece bounded on its own."""
    sized = {"state": body.state, "forwardedProps": body.forwarded_props}
    for i, entry in enumerate(body.resume or []):
        sized |= {f"resume[{i}].payload": entry.payload, f"resume[{i}].metadata": entry.metadata}
    for where, value in sized.items():
        if value is not None and _json_size(value) > s.max_payload_bytes:
            yield f"{where}: over {s.max_payload_bytes} bytes of JSON (MAX_PAYLOAD_BYTES)"


def _json_size(value: Any) -> int:
    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode())


def _shape_problems(value: Any, s: Settings) -> Iterator[str]:
    """Strings and keys too long, or nesting too deep, anywhere (iterative: no recursion)."""
    stack: list[tuple[str, Any, int]] = [("", value, 0)]
    while stack:
        where, item, depth = stack.pop()
        if isinstance(item, str) and len(item) > s.max_string_length:
            yield f"{where}: a string over {s.max_string_length} characters (MAX_STRING_LENGTH)"
        if not isinstance(item, dict | list):
            continue
        if depth >= s.max_json_depth:
            yield f"{where}: nested deeper than {s.max_json_depth} levels (MAX_JSON_DEPTH)"
            continue
        children = item.items() if isinstance(item, dict) else enumerate(item)
        for key, child in children:
            if isinstance(key, str) and len(key) > s.max_string_length:
                yield f"{where}: a key over {s.max_string_length} characters (MAX_STRING_LENGTH)"
            path = f"{where}.{key[:64]}" if isinstance(key, str) else f"{where}[{key}]"
            stack.append((path.lstrip("."), child, depth + 1))
