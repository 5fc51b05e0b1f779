"""Server-sent events as TanStack's durable-stream client reads them.

Frames are `id: <offset>` *then* `data: <one-line JSON>`: TanStack's parser
gives an `id:` line to the `data:` that follows it (FastAPI's encoder writes
the id after the data, which shifts every id by one event there), so the
gateway writes its own frames. Quiet streams get `: ping` comments so proxies
keep them open; a client that leaves closes the source at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncGenerator, AsyncIterator

from fastapi.sse import EventSourceResponse

from gateway.streaming.thread_log import Batch, Offset

KEEPALIVE = b": ping\n\n"


def encode(item: Offset) -> bytes:
    data = json.dumps(item.event, separators=(",", ":"), ensure_ascii=False)
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
                yield b"".join(encode(item) for item in batch)
    finally:
        if pending is not None:
            pending.cancel()
            with contextlib.suppress(asyncio.CancelledError, StopAsyncIteration):
                await pending
        await source.aclose()


def event_stream(source: AsyncGenerator[Batch, None], keepalive: float) -> EventSourceResponse:
    return EventSourceResponse(
        with_keepalive(source, keepalive),
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )
