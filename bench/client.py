"""The bench's AG-UI client: a run POSTed, its SSE read to the terminal event (aiohttp)."""

from __future__ import annotations

import codecs
import json
import time
import uuid
from typing import Any

import aiohttp


async def post_run(
    http: aiohttp.ClientSession,
    url: str,
    body: dict[str, Any],
    timings: list[tuple[str, float]] | None = None,
) -> tuple[list[dict[str, Any]], float]:
    """POST a run, read SSE until RUN_FINISHED/RUN_ERROR; (events, seconds to the terminal).

    The rest of the response is read too (the server ends it right after), so the
    connection goes back to the pool as a browser's would; a response left unread is
    closed, and every run would pay for a new connection on both sides."""
    start = time.perf_counter()
    events: list[dict[str, Any]] = []
    seconds: float | None = None
    async with http.post(url, json=body) as response:
        if response.status != 200:
            raise RuntimeError(f"POST answered {response.status}: {await response.text()}")
        buffer, text = "", codecs.getincrementaldecoder("utf-8")()  # a chunk may split a char
        async for chunk in response.content.iter_any():
            now_ms = time.time() * 1000
            buffer += text.decode(chunk)
            while seconds is None and "\n\n" in buffer:
                frame, buffer = buffer.split("\n\n", 1)
                for line in frame.splitlines():
                    if line.startswith("data: "):
                        event = json.loads(line[6:])
                        events.append(event)
                        if timings is not None and event.get("timestamp"):
                            timings.append((event["type"], now_ms - event["timestamp"]))
                        if event["type"] in ("RUN_FINISHED", "RUN_ERROR"):
                            seconds = time.perf_counter() - start
    if seconds is None:
        raise RuntimeError(f"stream ended without a terminal event: {events[-3:]}")
    return events, seconds


async def status(http: aiohttp.ClientSession, url: str) -> int:
    async with http.get(url) as response:
        code: int = response.status  # aiohttp is not type-checked here (bench extra)
        return code


def new_id(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:12]}"
