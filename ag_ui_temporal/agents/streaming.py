"""Tokens out of the model activity: the model streams, the thread sees the deltas while
they come, and the activity still returns the whole response.

`StreamingModel` wraps the agent's model inside the model-request activity (and only
there: `ThreadEvents.get_wrapper_model`). It asks the wrapped model for a stream and
publishes each text or tool-argument delta to the thread workflow through
`temporalio.contrib.workflow_streams`, which batches them (one signal per
`BATCH_INTERVAL`, deduplicated by publisher and sequence) so the thread's history grows
per batch, not per token. The topic names the activity and its attempt: the thread
drops what a stale activity sends and does not show a retried attempt's text twice.

A response may make at most `MAX_TOOL_CALLS_PER_RESPONSE` tool calls: the call past it
stops the request with the non-retryable `TOO_MANY_TOOL_CALLS` before it is streamed, which
bounds the activity's result and its stream (the thread refuses a response over its own,
smaller `max_interrupts_per_run` before handling any call).

What is still batched when the response ends is not sent: the activity's result carries
the whole response, which completes what the thread showed. Flushing it would cost a
signal and a workflow task that the result's own task must wait for, on every model
request (a response done within one batch interval sends no signal at all).
"""

from __future__ import annotations

import asyncio
import base64
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from datetime import timedelta
from typing import Literal

from pydantic import BaseModel
from pydantic_ai.messages import (
    ModelMessage,
    ModelResponse,
    ModelResponseStreamEvent,
    PartDeltaEvent,
    PartStartEvent,
    TextPart,
    TextPartDelta,
    ToolCallPart,
    ToolCallPartDelta,
)
from pydantic_ai.models import ModelRequestParameters
from pydantic_ai.models.wrapper import WrapperModel
from pydantic_ai.settings import ModelSettings
from temporalio import activity
from temporalio.api.common.v1 import Payload
from temporalio.contrib.workflow_streams import PublishEntry, WorkflowStreamClient
from temporalio.exceptions import ApplicationError
from temporalio.service import RPCError

from ag_ui_temporal.workflows.contract import MAX_TOOL_CALLS_PER_RESPONSE

log = logging.getLogger(__name__)

BATCH_INTERVAL = timedelta(milliseconds=100)
"""How often the activity sends what the model produced (the library's default is 2 s)."""
TOO_MANY_TOOL_CALLS = "TooManyToolCalls"
"""The `ApplicationError.type` of a model request refused for its tool calls (the thread
answers `LIMIT_EXCEEDED`); defined once for the raising and the handling side."""


class StreamDelta(BaseModel):
    """One piece of a model response, as the activity publishes it to the thread."""

    part: int
    """The response part's index (pydantic-ai's `PartStartEvent.index`)."""
    kind: Literal["text", "tool"]
    delta: str = ""
    """Text, or a piece of a tool call's JSON arguments."""
    tool_call_id: str | None = None
    tool_name: str | None = None


def stream_topic(activity_id: str, attempt: int) -> str:
    return f"{activity_id}#{attempt}"


def parse_topic(topic: str) -> tuple[str, int] | None:
    activity_id, _, attempt = topic.rpartition("#")
    return (activity_id, int(attempt)) if activity_id and attempt.isdigit() else None


def entry_payload(entry: PublishEntry) -> Payload:
    """The item a `WorkflowStreamClient` published (base64 of a serialized `Payload`)."""
    return Payload.FromString(base64.b64decode(entry.data))


def as_delta(event: ModelResponseStreamEvent) -> StreamDelta | None:
    """The part of a pydantic-ai stream event a client shows: text and tool-call arguments."""
    if isinstance(event, PartStartEvent):
        part = event.part
        if isinstance(part, TextPart):
            return StreamDelta(part=event.index, kind="text", delta=part.content)
        if isinstance(part, ToolCallPart):
            args = part.args if isinstance(part.args, str) else ""
            return StreamDelta(
                part=event.index,
                kind="tool",
                delta=args,
                tool_call_id=part.tool_call_id,
                tool_name=part.tool_name,
            )
    if isinstance(event, PartDeltaEvent):
        delta = event.delta
        if isinstance(delta, TextPartDelta):
            return StreamDelta(part=event.index, kind="text", delta=delta.content_delta)
        if isinstance(delta, ToolCallPartDelta) and isinstance(delta.args_delta, str):
            return StreamDelta(part=event.index, kind="tool", delta=delta.args_delta)
    return None  # thinking, built-in tools, dict-shaped args: the final response has them


class StreamingModel(WrapperModel):
    """The wrapped model, streamed into the thread from inside its activity."""

    async def request(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
    ) -> ModelResponse:
        calls = 0
        async with (
            thread_topic() as publish,
            self.wrapped.request_stream(
                messages, model_settings, model_request_parameters
            ) as stream,
        ):
            async for event in stream:
                if isinstance(event, PartStartEvent) and isinstance(event.part, ToolCallPart):
                    calls += 1
                    check_tool_calls(calls)
                delta = as_delta(event)
                if delta is not None and (delta.delta or delta.tool_call_id):
                    publish(delta)
            response = stream.get()
        check_tool_calls(sum(isinstance(part, ToolCallPart) for part in response.parts))
        return response


def check_tool_calls(calls: int) -> None:
    """Refuse a response past `MAX_TOOL_CALLS_PER_RESPONSE` calls (in any model activity)."""
    if calls > MAX_TOOL_CALLS_PER_RESPONSE:
        raise ApplicationError(
            f"the model made more than {MAX_TOOL_CALLS_PER_RESPONSE} tool calls at once",
            type=TOO_MANY_TOOL_CALLS,
            non_retryable=True,
        )


@asynccontextmanager
async def thread_topic() -> AsyncIterator[Callable[[StreamDelta], None]]:
    """In a model activity of a thread: publish a delta to the thread's stream, on the topic of
    this activity's attempt, sent every `BATCH_INTERVAL` while the block runs. What is still
    batched when it ends is not sent: the activity's result carries it (see the module's
    docstring). Every agent kind's model activity streams through it."""
    info = activity.info()
    client = activity.client()
    # pinned to the run that scheduled the activity, not to whatever run has the id now
    thread = client.get_workflow_handle(info.workflow_id or "", run_id=info.workflow_run_id)
    publisher = WorkflowStreamClient(thread, client=client)  # flushed by `send_batches`
    topic = publisher.topic(stream_topic(info.activity_id, info.attempt))
    sending = asyncio.create_task(send_batches(publisher))
    try:
        yield topic.publish
    finally:
        sending.cancel()


async def send_batches(publisher: WorkflowStreamClient) -> None:
    """What the model produced, every `BATCH_INTERVAL`, until cancelled. A batch that cannot
    be sent is tried again with the next (`flush` keeps it); never fails the request, whose
    result carries everything anyway."""
    while True:
        await asyncio.sleep(BATCH_INTERVAL.total_seconds())
        try:
            await publisher.flush()
        except (RPCError, TimeoutError) as err:
            log.warning("model deltas not streamed to the thread: %s", err)
