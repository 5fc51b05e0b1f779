"""A paused run survives its worker and gateway: both restart, the resume still works."""

from __future__ import annotations

import uuid
from concurrent.futures import ThreadPoolExecutor
from contextlib import AsyncExitStack
from datetime import timedelta
from pathlib import Path

import httpx
from pydantic import SecretStr
from temporalio.client import Client

from ag_ui_temporal.settings import Settings
from ag_ui_temporal.worker import build_worker
from tests.agui import frames, interrupts, resolve, run, run_body, texts
from tests.conftest import serve_gateway
from tests.effects import EffectLog


async def start_stack(
    stack: AsyncExitStack, client: Client, settings: Settings, executor
) -> httpx.AsyncClient:
    """A worker and a gateway of their own, torn down when `stack` closes."""
    await stack.enter_async_context(build_worker(client, settings, executor))
    url = await stack.enter_async_context(serve_gateway(settings, client))
    return await stack.enter_async_context(httpx.AsyncClient(base_url=url, timeout=30))


async def test_resume_after_worker_and_gateway_restart(
    client: Client,
    data_dir: Path,
    executor: ThreadPoolExecutor,
    thread_id: str,
    own_store: SecretStr,
):
    settings = Settings(
        data_dir=data_dir / "restarts",
        task_queue=f"restart-{uuid.uuid4().hex}",
        database_url=own_store,
    )
    async with AsyncExitStack() as first:
        http = await start_stack(first, client, settings, executor)
        pending = interrupts(
            await run(http, thread_id, text="Send emails to ada@example.com and bob@example.com")
        )

    # Both processes are gone; the new worker has an empty cache and replays the history.
    async with AsyncExitStack() as second:
        http = await start_stack(second, client, settings, executor)
        done = await run(http, thread_id, resume=[resolve(i, {"approved": True}) for i in pending])
        again = await run(http, thread_id, resume=[resolve(i, {"approved": True}) for i in pending])

    assert "Sent the email to ada@example.com" in texts(done)
    assert "Sent the email to bob@example.com" in texts(done)
    assert texts(again) == texts(done)
    keys = [effect["key"] for effect in EffectLog(settings.store_url).effects("sendEmail")]
    assert sorted(keys) == sorted(i["toolCallId"] for i in pending)


async def test_a_resume_waits_for_a_worker(
    client: Client,
    data_dir: Path,
    executor: ThreadPoolExecutor,
    thread_id: str,
    own_store: SecretStr,
):
    """Sent while no worker runs, a resume is not refused: its stream stays open (pings)
    until a worker takes the run, then ends as usual, the tool run once."""
    settings = Settings(
        data_dir=data_dir / "no-worker",
        task_queue=f"no-worker-{uuid.uuid4().hex}",
        sse_keepalive=timedelta(milliseconds=50),
        database_url=own_store,
    )
    async with AsyncExitStack() as gateway:
        url = await gateway.enter_async_context(serve_gateway(settings, client))
        http = await gateway.enter_async_context(httpx.AsyncClient(base_url=url, timeout=30))
        async with build_worker(client, settings, executor):
            [pending] = interrupts(
                await run(http, thread_id, text="Send an email to ada@example.com saying hi")
            )
        body = run_body(thread_id, resume=[resolve(pending, {"approved": True})])
        async with http.stream("POST", "/agents/assistant", json=body) as response:
            stream = frames(response)
            first = await anext(stream)
            assert first.comment == "ping" and first.data is None  # nothing refused, waiting
            async with build_worker(client, settings, executor):
                rest = [frame.data async for frame in stream if frame.data is not None]
    assert (rest[0]["type"], rest[-1]["type"]) == ("RUN_STARTED", "RUN_FINISHED")
    assert "Sent the email to ada@example.com" in texts(rest)
    keys = [effect["key"] for effect in EffectLog(settings.store_url).effects("sendEmail")]
    assert keys == [pending["toolCallId"]]
