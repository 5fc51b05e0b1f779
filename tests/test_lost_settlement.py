"""A settlement lost on its way still reaches its producer: a thread worker from before (its
codec deflated every large payload) sends a producer on a plain client a settlement its
worker cannot read and drops; once the thread workers run today's code, the producer's
deadline comes and it reads the thread's record (`agui_confirm_settled`) instead of calling
the question expired. So what the thread showed as answered is what the producer ends with.

Under time skipping: the one-day deadline passes in seconds.
"""

from __future__ import annotations

import uuid
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from pathlib import Path
from typing import Self

import httpx
import pytest
from pydantic_ai.durable_exec.temporal import PydanticAIPayloadConverter
from temporalio.api.history.v1 import HistoryEvent
from temporalio.client import Client
from temporalio.converter import DataConverter, SerializationContext
from temporalio.testing import WorkflowEnvironment

from ag_ui_temporal.payloads import ZLIB, Compression
from ag_ui_temporal.settings import Settings
from ag_ui_temporal.worker import build_worker
from ag_ui_temporal.workflows.contract import (
    CONFIRM_SETTLED_ACTIVITY,
    INTERRUPT_SETTLED_SIGNAL,
    thread_workflow_id,
)
from tests.agui import finished, resolve, run
from tests.conftest import SKIPPING, serve_gateway, skip_when_quiet
from tests.plain_producer import build_plain_worker, digest, large_answer, plain_client
from tests.test_plain_producer import (
    activity_results,
    encodings,
    heard,
    owner_history,
    signaled,
    start,
)
from tests.test_producers import delivered, hydrate, until

ANSWER_CHARS = 8 << 10


class DeflatingEverything(Compression):
    """The codec before contexts: every large payload deflated, whoever reads it."""

    def with_context(self, context: SerializationContext) -> Self:
        return self


@pytest.fixture(scope="module")
def lost_settings(data_dir: Path) -> Settings:
    return Settings(data_dir=data_dir / "lost", task_queue="lost-threads", **SKIPPING)


def dropped(events: list[HistoryEvent]) -> bool:
    """The settlement is in the owner's history, deflated, and a workflow task of the owner's
    worker went past it without confirming anything (it dropped the signal)."""
    signals = [
        e.event_id
        for e in events
        if e.HasField("workflow_execution_signaled_event_attributes")
        and e.workflow_execution_signaled_event_attributes.signal_name == INTERRUPT_SETTLED_SIGNAL
    ]
    completed = [
        e.event_id for e in events if e.HasField("workflow_task_completed_event_attributes")
    ]
    return bool(signals) and max(completed, default=0) > signals[0]


async def test_an_answer_whose_settlement_was_lost_reaches_the_producer_at_its_deadline(
    skipping_env: WorkflowEnvironment,
    lost_settings: Settings,
    executor: ThreadPoolExecutor,
    thread_id: str,
):
    target = skipping_env.client.service_client.config.target_host
    namespace = skipping_env.client.namespace
    before = await Client.connect(
        target,
        namespace=namespace,
        data_converter=DataConverter(
            payload_converter_class=PydanticAIPayloadConverter,
            payload_codec=DeflatingEverything(deflate=True),
        ),
    )
    plain = await plain_client(target, namespace)
    owners, owner = f"lost-owners-{uuid.uuid4().hex[:8]}", f"owner-{thread_id}"
    answer = large_answer(ANSWER_CHARS)
    async with (
        build_plain_worker(plain, owners),
        serve_gateway(lost_settings, skipping_env.client) as url,
        httpx.AsyncClient(base_url=url, timeout=30) as http,
    ):
        # no cache: the next worker must find the thread on its queue, not the sticky one of
        # a worker that is gone (the time-skipping server sends queries there until it times out)
        uncached = lost_settings.model_copy(update={"worker_max_cached_workflows": 0})
        async with build_worker(before, uncached, executor):
            order = await start(plain, lost_settings, owners, thread_id, owner)
            await until(skipping_env.client, thread_id, delivered(1))
            shown = await hydrate(http, thread_id, **{"X-Principal": owner})
            [question] = shown["interrupts"]["pending"]
            done = await run(http, thread_id, agent="inbox", principal=owner,
                             resume=[resolve(question, answer)])  # fmt: skip
            assert finished(done)["outcome"] == {"type": "success"}  # answered, says the thread
            events = await owner_history(plain, order.id, dropped)
            assert encodings(signaled(events, INTERRUPT_SETTLED_SIGNAL)) == [ZLIB]
            assert activity_results(events, CONFIRM_SETTLED_ACTIVITY) == []  # never heard
        async with build_worker(skipping_env.client, lost_settings, executor):  # today's code
            quiet = [skipping_env.client.get_workflow_handle(thread_workflow_id(thread_id)),
                     plain.get_workflow_handle(order.id)]  # fmt: skip
            await skip_when_quiet(
                skipping_env, timedelta(days=1, minutes=1), *quiet
            )  # its deadline
            outcome = await heard(order)
    assert (outcome.status, outcome.speed) == ("resolved", "express")
    assert (outcome.notes_chars, outcome.digest) == (ANSWER_CHARS, digest(answer))
    events = await owner_history(plain, order.id, lambda events: True)
    [record] = activity_results(events, CONFIRM_SETTLED_ACTIVITY)
    assert record.metadata["encoding"] == b"json/plain"
