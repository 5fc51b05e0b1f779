"""`expiresAt` is a durable timer in the workflow, tested under time skipping.

A 2-day deadline passes in seconds: the time-skipping test server jumps its
clock whenever everything waits on a timer.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import httpx
import pytest
from temporalio.testing import WorkflowEnvironment

from ag_ui_temporal.settings import Settings
from ag_ui_temporal.worker import build_worker
from ag_ui_temporal.workflows.contract import InterruptStatus
from tests.agui import cancel, error, interrupts, resolve, run, texts, thread_state
from tests.conftest import serve_gateway

QUARTERLY = {"quarter": "Q2", "year": 2026, "revenue": 5}


@pytest.fixture(scope="module")
async def skipping_http(
    skipping_env: WorkflowEnvironment, data_dir, executor: ThreadPoolExecutor
) -> AsyncIterator[httpx.AsyncClient]:
    settings = Settings(
        data_dir=data_dir / "skipping", task_queue="time-skipping", index_runs=False
    )
    async with (
        build_worker(skipping_env.client, settings, executor),
        serve_gateway(settings, skipping_env.client) as url,
        httpx.AsyncClient(base_url=url, timeout=30) as http,
    ):
        yield http


async def test_form_expires_after_two_days(
    skipping_env: WorkflowEnvironment, skipping_http: httpx.AsyncClient, thread_id: str
):
    [form] = interrupts(await run(skipping_http, thread_id, text="File the quarterly report"))
    await skipping_env.sleep(timedelta(days=2, minutes=1))

    state = await thread_state(skipping_env.client, thread_id)
    assert [i.status for i in state.interrupts] == [InterruptStatus.EXPIRED]
    assert "nobody answered before it expired" in state.messages[-1]["content"]
    # the call gets its result (the reason), for the model to read on the next run
    tool = state.messages[-2]
    assert (tool["role"], tool["toolCallId"]) == ("tool", form["toolCallId"])
    assert tool["content"] == "nobody answered before it expired"

    late = error(await run(skipping_http, thread_id, resume=[resolve(form, QUARTERLY)]))
    assert late["code"] == "INTERRUPT_EXPIRED"
    [item] = late["metadata"]["tanstack"]["interruptErrors"]
    assert (item["code"], item["retryable"]) == ("expired", False)
    assert await thread_state(skipping_env.client, thread_id) == state

    acknowledged = await run(skipping_http, thread_id, resume=[cancel(form)])
    assert acknowledged[-1]["outcome"] == {"type": "success"}
    after = await run(skipping_http, thread_id, text="What can you do?")
    assert "quarterly report" in texts(after)


async def test_answer_before_expiry_wins(
    skipping_env: WorkflowEnvironment, skipping_http: httpx.AsyncClient, thread_id: str
):
    [form] = interrupts(await run(skipping_http, thread_id, text="File the quarterly report"))
    await skipping_env.sleep(timedelta(days=1))
    done = await run(skipping_http, thread_id, resume=[resolve(form, QUARTERLY)])
    assert "Filed the Q2 2026 quarterly report" in texts(done)
    await skipping_env.sleep(timedelta(days=3))
    state = await thread_state(skipping_env.client, thread_id)
    assert [i.status for i in state.interrupts] == [InterruptStatus.RESOLVED]
