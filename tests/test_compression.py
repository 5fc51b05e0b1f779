"""Payload compression (`payloads.Compression`): large payloads to and from threads
are stored deflated, small ones, those from before and those for workflows not ours as they
are, and a crafted one cannot inflate without bound. (A producer on a plain client reading
what a thread sends it: tests/test_plain_producer.py.)"""

from __future__ import annotations

import json
import os
import uuid
import zlib

import httpx
import pytest
from temporalio.api.common.v1 import Payload, WorkflowExecution
from temporalio.api.query.v1 import WorkflowQuery
from temporalio.api.workflowservice.v1 import QueryWorkflowRequest
from temporalio.client import Client
from temporalio.converter import (
    ActivitySerializationContext,
    NexusSerializationContext,
    SerializationContext,
    WorkflowSerializationContext,
)

from ag_ui_temporal.payloads import CODEC, ZLIB, Compression
from ag_ui_temporal.temporal_client import DATA_CONVERTER
from ag_ui_temporal.workflows.contract import THREAD_QUERY, thread_workflow_id
from tests.agui import interrupts, resolve, run, texts

EMAIL = "Send an email to ada@example.com saying hi"
THREAD = thread_workflow_id("t-1")


def workflow_context(workflow_id: str) -> WorkflowSerializationContext:
    return WorkflowSerializationContext(namespace="default", workflow_id=workflow_id)


def activity_context(workflow_id: str | None) -> ActivitySerializationContext:
    return ActivitySerializationContext(
        namespace="default",
        activity_id="1",
        activity_type="agui_confirm_settled",
        activity_task_queue="ag-ui-temporal",
        workflow_id=workflow_id,
        workflow_type=None,
        is_local=False,
    )


def thread_codec() -> Compression:
    return CODEC.with_context(workflow_context(THREAD))


def json_payload(value: object) -> Payload:
    return Payload(metadata={"encoding": b"json/plain"}, data=json.dumps(value).encode())


async def test_large_payloads_are_deflated_and_come_back_the_same():
    codec = thread_codec()
    large = json_payload({"messages": [{"role": "user", "content": "hello " * 40}] * 20})
    small = json_payload({"approved": True})
    encoded = await codec.encode([large, small])
    assert encoded[0].metadata["encoding"] == ZLIB
    assert encoded[0].ByteSize() < large.ByteSize() / 3
    assert encoded[1] == small  # not worth it
    assert await codec.decode(encoded) == [large, small]
    assert await codec.decode([large]) == [large]  # written before compression: as it is


async def test_incompressible_payloads_stay_as_they_are():
    noise = Payload(metadata={"encoding": b"binary/plain"}, data=os.urandom(4096))
    assert await thread_codec().encode([noise]) == [noise]  # nothing to gain


@pytest.mark.parametrize(
    "context",
    [
        workflow_context("order-42"),  # a signal or update to a producer, its workflow task
        workflow_context("expense-1"),  # an approval chain: its id is no reserved prefix
        workflow_context("agui-threadish"),
        activity_context("order-42"),  # a producer's activity: its input and its result
        activity_context(None),  # an activity no workflow started
        NexusSerializationContext(endpoint="e", service="s", operation="o"),
    ],
)
async def test_payloads_for_workflows_not_ours_are_left_as_they_are(
    context: SerializationContext,
):
    large = json_payload({"payload": "answer " * 1000})
    assert await CODEC.with_context(context).encode([large]) == [large]
    assert await CODEC.encode([large]) == [large]  # no context: never deflated
    # what a thread sent deflated still decodes, whatever the context
    [deflated] = await thread_codec().encode([large])
    assert await CODEC.with_context(context).decode([deflated]) == [large]


async def test_payloads_to_and_from_threads_are_deflated():
    large = json_payload({"payload": "answer " * 1000})
    for context in (workflow_context(THREAD), activity_context(THREAD)):
        codec = CODEC.with_context(context)
        [encoded] = await codec.encode([large])
        assert encoded.metadata["encoding"] == ZLIB
        assert codec.with_context(workflow_context("order-42")).deflate is False
    assert CODEC.with_context(workflow_context("order-42")) is CODEC  # nothing to copy


async def test_a_payload_that_inflates_past_the_bound_is_refused():
    bomb = Payload(
        metadata={"encoding": ZLIB}, data=zlib.compress(b"\0" * (Compression.LARGEST + 1))
    )
    with pytest.raises(ValueError, match="inflates past"):
        await CODEC.decode([bomb])


async def test_a_thread_stores_its_large_payloads_deflated(
    http: httpx.AsyncClient, client: Client, thread_id: str
):
    assert client.data_converter.payload_codec is DATA_CONVERTER.payload_codec
    [asked] = interrupts(await run(http, thread_id, text=EMAIL))
    done = await run(http, thread_id, resume=[resolve(asked, {"approved": True})])
    assert "Sent the email to ada@example.com" in texts(done)
    history = await client.get_workflow_handle(thread_workflow_id(thread_id)).fetch_history()
    scheduled = [
        e.activity_task_scheduled_event_attributes.input.payloads[0]
        for e in history.events
        if e.HasField("activity_task_scheduled_event_attributes")
    ]
    assert any(p.metadata["encoding"] == ZLIB for p in scheduled)  # the model requests
    # what the thread answers a query (hydration, joins) is its own payload: deflated too
    answer = await client.workflow_service.query_workflow(
        QueryWorkflowRequest(
            namespace=client.namespace,
            execution=WorkflowExecution(workflow_id=thread_workflow_id(thread_id)),
            query=WorkflowQuery(query_type=THREAD_QUERY),
        )
    )
    assert [p.metadata["encoding"] for p in answer.query_result.payloads] == [ZLIB]


async def test_a_first_run_with_a_long_message_is_stored_deflated(
    http: httpx.AsyncClient, client: Client, thread_id: str
):
    # the first run of a thread is an update-with-start: both carry the thread's context
    text = "Tell me about the weather. " * 100
    run_finished = await run(http, thread_id, text=text)
    assert run_finished[-1]["type"] == "RUN_FINISHED"
    history = await client.get_workflow_handle(thread_workflow_id(thread_id)).fetch_history()
    [request] = [
        e.workflow_execution_update_accepted_event_attributes.accepted_request
        for e in history.events
        if e.HasField("workflow_execution_update_accepted_event_attributes")
    ]
    assert [p.metadata["encoding"] for p in request.input.args.payloads] == [ZLIB]


async def test_our_client_sends_workflows_not_ours_plain_json(client: Client):
    """A start and a signal from our client (the gateway's, a worker's activities') to a
    workflow that is not a thread stay JSON; the same to a thread id are deflated."""
    large = {"notes": "answer " * 1000}
    queue = f"nobody-{uuid.uuid4().hex[:8]}"  # no worker: the workflows only wait
    found: dict[str, list[bytes]] = {}
    for workflow_id in (f"order-{uuid.uuid4().hex[:8]}", thread_workflow_id(uuid.uuid4().hex)):
        handle = await client.start_workflow("Nobody", large, id=workflow_id, task_queue=queue)
        await handle.signal("anything", large)
        history = await handle.fetch_history()
        started = history.events[0].workflow_execution_started_event_attributes
        [signaled] = [
            e.workflow_execution_signaled_event_attributes
            for e in history.events
            if e.HasField("workflow_execution_signaled_event_attributes")
        ]
        payloads = [*started.input.payloads, *signaled.input.payloads]
        found[workflow_id.split("-")[0]] = [p.metadata["encoding"] for p in payloads]
        await handle.terminate()
    assert found == {"order": [b"json/plain"] * 2, "agui": [ZLIB] * 2}
