"""`paced`: a test agent whose model writes its reply a word at a time, slower than the
100 ms delta batches, so a client sees the text grow while the run is still going.

Served by a worker and gateway of its own (`paced_stack`): an agent must be registered
before the worker that runs it is built.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager

from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelRequest, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCalls, FunctionModel
from temporalio.client import Client

from ag_ui_temporal.agents import ThreadDeps, register, registered, thread_capabilities
from ag_ui_temporal.settings import Settings
from ag_ui_temporal.worker import build_worker
from tests.conftest import serve_gateway

PACED = "paced"
WORDS = ["Streaming ", "text ", "arrives ", "in ", "several ", "pieces ", "here."]
REPLY = "".join(WORDS)
PAUSE = 0.15
"""Seconds between words: more than one batch interval, so the words land in several."""
SLOW_PAUSE = 1.0
"""Seconds between words of a reply asked for "slowly": long enough to stop it mid-way."""


async def _stream(
    messages: list[ModelMessage], info: AgentInfo
) -> AsyncIterator[str | DeltaToolCalls]:
    last = messages[-1]
    if isinstance(last, ModelRequest) and any(isinstance(p, ToolReturnPart) for p in last.parts):
        results = [p.content for p in last.parts if isinstance(p, ToolReturnPart)]
        yield f"Got {json.dumps(results)}."
        return
    slowly = isinstance(last, ModelRequest) and "slowly" in str(
        getattr(last.parts[-1], "content", "")
    )
    for word in WORDS:
        yield word
        await asyncio.sleep(SLOW_PAUSE if slowly else PAUSE)


def register_paced() -> None:
    if registered(PACED) is None:
        agent = Agent(
            FunctionModel(stream_function=_stream),
            name=PACED,
            deps_type=ThreadDeps,
            capabilities=thread_capabilities(),
        )
        register(agent, description="Writes its reply a word at a time (tests).")


@asynccontextmanager
async def paced_stack(
    client: Client, settings: Settings, executor: ThreadPoolExecutor
) -> AsyncIterator[str]:
    """A worker that serves `paced` (and the assistant) and a gateway; yields its URL."""
    register_paced()
    name = f"paced-{uuid.uuid4().hex[:8]}"
    own = settings.model_copy(update={"task_queue": name, "data_dir": settings.data_dir / name})
    async with build_worker(client, own, executor), serve_gateway(own, client) as url:
        yield url
