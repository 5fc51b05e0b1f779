"""Record thread histories for the replay test: `python -m tests.workflows.record_histories`.

Run it when a new workflow shape should be protected, never to "fix" a failing
replay test: a failing replay means the change would break parked threads
(use `workflow.patched` instead). Each scenario leaves its thread where the
file name says, e.g. paused on an open interrupt.
"""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from pathlib import Path

import httpx
from temporalio.client import Client
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.testing import WorkflowEnvironment

from settings import Settings
from tests.agui import cancel, interrupts, resolve, run
from tests.conftest import bundled_binary, serve_gateway
from worker import build_worker
from workflows.contract import thread_workflow_id

HISTORIES = Path(__file__).parent / "histories"
Scenario = Callable[[httpx.AsyncClient, WorkflowEnvironment, str], Awaitable[None]]


async def email_paused(http: httpx.AsyncClient, env: WorkflowEnvironment, thread: str) -> None:
    await run(http, thread, text="Send an email to ada@example.com saying hi")


async def email_edited_and_sent(
    http: httpx.AsyncClient, env: WorkflowEnvironment, thread: str
) -> None:
    [pending] = interrupts(
        await run(http, thread, text="Send an email to ada@example.com saying hi")
    )
    edited = {"to": "grace@example.com", "subject": "Hi", "body": "hello"}
    await run(http, thread, resume=[resolve(pending, {"approved": True, "editedArgs": edited})])
    await run(http, thread, resume=[resolve(pending, {"approved": True, "editedArgs": edited})])


async def parallel_mixed(http: httpx.AsyncClient, env: WorkflowEnvironment, thread: str) -> None:
    text = "Send emails to ada@example.com, bob@example.com and cy@example.com"
    ada, bob, cy = interrupts(await run(http, thread, text=text))
    await run(http, thread, resume=[resolve(ada, {"approved": True})])  # refused: partial
    await run(
        http,
        thread,
        resume=[resolve(ada, {"approved": True}), cancel(bob), resolve(cy, {"approved": False})],
    )


async def form_expired_then_cancelled(
    http: httpx.AsyncClient, env: WorkflowEnvironment, thread: str
) -> None:
    [form] = interrupts(await run(http, thread, text="File the quarterly report"))
    await env.sleep(timedelta(days=3))
    await run(http, thread, resume=[resolve(form, {"quarter": "Q1", "year": 2026, "revenue": 1})])
    await run(http, thread, resume=[cancel(form)])
    await run(http, thread, text="File the quarterly report")


SCENARIOS: dict[str, Scenario] = {
    "email_paused": email_paused,
    "email_edited_and_sent": email_edited_and_sent,
    "parallel_mixed": parallel_mixed,
    "form_expired_then_cancelled": form_expired_then_cancelled,
}


async def record(client: Client, env: WorkflowEnvironment, http: httpx.AsyncClient) -> None:
    HISTORIES.mkdir(exist_ok=True)
    for name, scenario in SCENARIOS.items():
        await scenario(http, env, f"history-{name}")
        history = await client.get_workflow_handle(
            thread_workflow_id(f"history-{name}")
        ).fetch_history()
        (HISTORIES / f"{name}.json").write_text(history.to_json())
        print("recorded", name)


async def main() -> None:
    env = await WorkflowEnvironment.start_time_skipping(
        test_server_existing_path=bundled_binary("temporal-test-server"),
        data_converter=pydantic_data_converter,
    )
    settings = Settings(
        data_dir=Path(tempfile.mkdtemp()), task_queue="record-histories", index_runs=False
    )
    with ThreadPoolExecutor() as executor:
        async with (
            env,
            build_worker(env.client, settings, executor),
            serve_gateway(settings, env.client) as url,
            httpx.AsyncClient(base_url=url, timeout=30) as http,
        ):
            await record(env.client, env, http)


if __name__ == "__main__":
    asyncio.run(main())
