"""The SSE writer: the chunk with a run's terminal event ends the response in the same ASGI
message (one socket write), and only once its source has ended (the run is logged by then)."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any

from ag_ui_temporal.gateway.streaming.sse import event_stream
from ag_ui_temporal.gateway.streaming.thread_log import Batch, Offset


async def sent_by(source: AsyncGenerator[Batch, None]) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        raise AssertionError("the writer reads nothing while the source has more to give")

    async def send(message: Any) -> None:
        messages.append(message)

    scope = {"type": "http", "asgi": {"spec_version": "2.4"}}  # no disconnect listener
    await event_stream(source, keepalive=60)(scope, receive, send)
    return messages


async def test_the_terminal_chunk_ends_the_response_after_its_source() -> None:
    after_the_end: list[str] = []

    async def run() -> AsyncGenerator[Batch, None]:
        yield [Offset({"type": "RUN_STARTED"}, 0)]
        yield [Offset({"type": "STATE_SNAPSHOT"}, 1), Offset({"type": "RUN_FINISHED"}, 2)]
        after_the_end.append("logged")  # what observed_run does once the client has it all

    messages = await sent_by(run())
    assert [m["type"] for m in messages] == ["http.response.start", *["http.response.body"] * 2]
    first, last = messages[1], messages[2]
    assert first["more_body"] and first["body"].startswith(b"id: 0\ndata: ")
    assert not last["more_body"] and last["body"].endswith(b'"type":"RUN_FINISHED"}\n\n')
    assert after_the_end == ["logged"]


async def test_a_stream_without_a_terminal_event_ends_with_an_empty_chunk() -> None:
    async def cut_short() -> AsyncGenerator[Batch, None]:
        yield [Offset({"type": "RUN_STARTED"}, 0)]

    messages = await sent_by(cut_short())
    assert [(m.get("body"), m.get("more_body")) for m in messages[1:]] == [
        (b'id: 0\ndata: {"type":"RUN_STARTED"}\n\n', True),
        (b"", False),
    ]
