"""The streaming scenario's agent: a `FunctionModel` that emits text deltas on a schedule,
each carrying its emit time, so the bench client can tell how long a delta took from the
model (in the worker's model activity) to the SSE client (another process, same clock).

Registered on import: the bench names this module in `AGENT_MODULES` for the worker and
the gateway. The prompt says what to emit: `stream 40 every 50` is 40 deltas, one every
50 ms, each `[index@time_ns]` (wall clock, `time.time_ns()`).
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import AsyncIterator

from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelRequest, UserPromptPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCalls, FunctionModel

from ag_ui_temporal.agents import ThreadDeps, register, registered, thread_capabilities

NAME = "bench-stream"
PROMPT = re.compile(r"stream (\d+) every (\d+)")
DELTA = re.compile(r"\[(\d+)@(\d+)\]")
"""One emitted delta in the text: `[index@emit time_ns]`."""


def prompt(count: int, every_ms: int) -> str:
    return f"stream {count} every {every_ms}"


def _schedule(messages: list[ModelMessage]) -> tuple[int, int]:
    last = messages[-1]
    text = ""
    if isinstance(last, ModelRequest):
        text = " ".join(str(p.content) for p in last.parts if isinstance(p, UserPromptPart))
    found = PROMPT.search(text)
    return (int(found[1]), int(found[2])) if found else (1, 0)


async def _emit(
    messages: list[ModelMessage], info: AgentInfo
) -> AsyncIterator[str | DeltaToolCalls]:
    count, every_ms = _schedule(messages)
    start = time.monotonic()
    for index in range(count):
        # on an absolute schedule: the time spent publishing does not push the next delta
        wait = start + index * every_ms / 1000 - time.monotonic()
        if wait > 0:
            await asyncio.sleep(wait)
        yield f"[{index}@{time.time_ns()}]"


def build() -> Agent[ThreadDeps, str]:
    return Agent(
        FunctionModel(stream_function=_emit),
        name=NAME,
        deps_type=ThreadDeps,
        capabilities=thread_capabilities(),
    )


if registered(NAME) is None:
    register(build(), description="Bench: text deltas on a schedule, stamped with their time.")
