"""Server-sent events as TanStack's durable-stream client reads them.

Frames are `id: <offset>` *then* `data: <one-line JSON>`: TanStack's parser
gives an `id:` line to the `data:` that follows it (FastAPI's encoder writes
the id after the data, which shifts every id by one event there), so the
gateway writes its own frames. Quiet streams get `: ping` comments so proxies
keep them open; a client that leaves closes the source at once. The chunk that
ends in the run's terminal event also ends the response (one write, not two).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, AsyncIterator

from fastapi.sse import EventSourceResponse
from starlette.types import Send

from ag_ui_temporal.gateway.streaming.thread_log import TERMINAL, Batch, Offset
from ag_ui_temporal.workflows.contract import json_line

KEEPALIVE = b": ping\n\n"


def encode(item: Offset) -> bytes:
    data = json_line(item.event)  # one line, whatever the event's strings hold
    head = "" if item.offset is None else f"id: {item.offset}\n"
    return f"{head}data: {data}\n\n".encode()


async def with_keepalive(source: AsyncGenerator[Batch, None], every: float) -> AsyncIterator[bytes]:
    """Encode `source` a batch a chunk, with a keepalive comment whenever it is quiet for
    `every` seconds."""
    pending: asyncio.Future[Batch] | None = None
    try:
        while True:
            pending = pending or asyncio.ensure_future(anext(source))
            done, _ = await asyncio.wait([pending], timeout=every)
            if not done:
                yield KEEPALIVE
                continue
            try:
                batch = pending.result()
            except StopAsyncIteration:
                return
            pending = None
            if batch:
                chunk = b"".join(encode(item) for item in batch)
                yield LastChunk(chunk) if batch[-1].event.get("type") in TERMINAL else chunk
    finally:
        if pending is not None:
            pending.cancel()
            with contextlib.suppress(asyncio.CancelledError, StopAsyncIteration):
                await pending
        await source.aclose()


class LastChunk(bytes):
    """The stream's last chunk: it ends with the run's terminal event."""


class SseResponse(EventSourceResponse):
    """Sends a `LastChunk` together with the end of the response: the chunked body's
    terminator rides in the same write, instead of another pass down the middleware and
    another socket write (and wake-up of the client) per stream."""

    async def stream_response(self, send: Send) -> None:
        start = {"type": "http.response.start", "status": self.status_code}
        await send({**start, "headers": self.raw_headers})
        last = b""
        async for chunk in self.body_iterator:
            # The last chunk goes once the source has ended (logged the run, let go of it):
            # ending the response ends the request, and with it this task. No ping after it.
            if isinstance(chunk, LastChunk):
                last = chunk
            if last:
                continue
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
        await send({"type": "http.response.body", "body": last, "more_body": False})


def event_stream(source: AsyncGenerator[Batch, None], keepalive: float) -> SseResponse:
    return SseResponse(
        with_keepalive(source, keepalive),
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )
