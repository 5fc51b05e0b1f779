"""Google ADK agents in threads: `register_adk_agent` serves an ADK agent at `/agents/{name}`.

A registered agent runs in the thread workflow (`workflows.thread.agents.adk_agent`): its
`Runner.run_async` is workflow code, under Temporal's integration (`temporalio-google-adk`,
whose `GoogleAdkPlugin` makes ADK's clock, ids and randomness the workflow's, and passes ADK
through the sandbox). Each model call is an activity (`adk_model`): `register_adk_agent` puts a
`ThreadModel` in place of each model name in the agent's tree, and the activity makes the
named model from ADK's `LLMRegistry` on the worker, streaming its text into the thread while
it comes (`agents.streaming`, as for a pydantic-ai agent). A `FunctionTool` runs in the
workflow (its body must be deterministic: no I/O); `activity_as_tool` of the integration makes
an activity a tool.

A tool with `require_confirmation` pauses the run (ADK's `adk_request_confirmation`): a
`tool_call` interrupt bound to the call's id. ADK's `request_input` tool (`adk_request_input`)
is an `input_required` interrupt with the schema the agent gave. The answers go back as the
integration's `hitl_confirmation_response` / `hitl_input_response` parts.

This module is host code shared with the workflow sandbox (`ag_ui_temporal.agents`); it needs
the `google-adk` extra (`pip install 'ag-ui-temporal[google-adk]'`).
"""

from __future__ import annotations

import asyncio
import logging
import warnings
from collections.abc import AsyncGenerator, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, Final

from google.adk.agents import BaseAgent, LlmAgent
from google.adk.models import BaseLlm, LLMRegistry
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from pydantic import TypeAdapter
from temporalio import activity, workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, CancelledError
from temporalio.google_adk import GoogleAdkPlugin
from temporalio.worker import ReplayerConfig, WorkerConfig

from ag_ui_temporal.agents.registry import RegisteredAdkAgent, add_adk_agent
from ag_ui_temporal.agents.streaming import StreamDelta, thread_topic
from ag_ui_temporal.workflows.contract.standing import checked_offer

log = logging.getLogger(__name__)

MODEL_TIMEOUT: Final = timedelta(minutes=5)
"""One attempt of a model call's activity (a long answer streams for a while)."""
MODEL_ATTEMPTS: Final = 4
MODEL_ACTIVITY: Final = "ag_ui_temporal.adk_model"


@dataclass(frozen=True)
class AdkAgentOptions:
    """How a registered agent runs and asks (`register_adk_agent`)."""

    max_llm_calls: int = 20
    approval_expires_in: timedelta | None = None
    input_expires_in: timedelta | None = None
    reject_payload: dict[str, Any] | None = None
    approval_messages: Mapping[str, str] = field(default_factory=dict)


def register_adk_agent(
    agent: BaseAgent,
    *,
    name: str | None = None,
    description: str = "",
    max_llm_calls: int = 20,
    approval_expires_in: timedelta | None = None,
    input_expires_in: timedelta | None = None,
    reject_payload: dict[str, Any] | None = None,
    approval_messages: Mapping[str, str] | None = None,
    standing_approvals: timedelta | None = None,
    replace: bool = False,
) -> BaseAgent:
    """Serve `agent` (an `LlmAgent`, or any ADK agent over them) in threads under `name`
    (default: `agent.name`), `POST /agents/{name}`. Returns the agent as threads run it: a copy
    whose models are `ThreadModel`s.

    Each `LlmAgent` of its tree names its model (`LlmAgent(model="gemini-2.5-flash")`, or no
    model to inherit its parent's): the model activity makes it on the worker from ADK's
    `LLMRegistry` (Gemini's key from the worker's environment; a model class of your own once
    `LLMRegistry.register`ed there). `max_llm_calls` bounds the model calls of one run.

    A tool with `require_confirmation` asks a person before it runs: a `tool_call` interrupt,
    which expires after `approval_expires_in` (None: never). ADK runs an approved call with
    the model's arguments, so its approvals take no `editedArgs` (`approveWithEdits: false`).
    `reject_payload`: the JSON Schema of what a rejection carries; its note (a string, or an
    object's `reason` or `note`) is the error the model reads for the call. `approval_messages`:
    by tool name, the question each approval asks ("Send an email to {to}?"). `request_input`
    asks for input (`input_required`, expiring after `input_expires_in`).
    `standing_approvals`: the longest standing decision an approval offers (`agents.register`;
    None: none)."""
    served = name or agent.name
    if not served:
        raise ValueError("an agent served in threads needs a name")
    threaded = _threaded(agent, served)
    options = AdkAgentOptions(
        max_llm_calls,
        approval_expires_in,
        input_expires_in,
        reject_payload,
        dict(approval_messages or {}),
    )
    add_adk_agent(
        RegisteredAdkAgent(
            served,
            threaded,
            description,
            options,
            standing_approvals=checked_offer(standing_approvals),
        ),
        replace=replace,
    )
    return threaded


def _threaded(agent: BaseAgent, served: str) -> BaseAgent:
    """`agent`'s tree with a `ThreadModel` for each model name (a copy: the caller's agent
    stays as it was)."""
    update: dict[str, Any] = {}
    if isinstance(agent, LlmAgent):
        if isinstance(agent.model, str):
            if agent.model:
                update["model"] = ThreadModel(model=agent.model)
        elif not isinstance(agent.model, ThreadModel):
            raise ValueError(
                f"agent {served!r}: give {agent.name!r} its model by name "
                "(LlmAgent(model='gemini-2.5-flash')); the model activity makes it on the worker"
            )
    update["sub_agents"] = [_threaded(sub, served) for sub in agent.sub_agents]
    copy = agent.model_copy(update=update)
    for sub in copy.sub_agents:
        sub.parent_agent = copy
    return copy


class ThreadModel(BaseLlm):
    """A model called in the model activity (`adk_model`), by its name: what `LlmAgent`s of a
    registered agent run on in the workflow. Outside a workflow (an ADK run of its own, a
    test) it is the named model itself."""

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        if not workflow.in_workflow():
            async for response in LLMRegistry.new_llm(self.model).generate_content_async(
                llm_request, stream=stream
            ):
                yield response
            return
        llm_request.model = self.model
        try:
            responses = await workflow.execute_activity(
                MODEL_ACTIVITY,
                _sendable(llm_request),
                result_type=list[LlmResponse],
                start_to_close_timeout=MODEL_TIMEOUT,
                retry_policy=RetryPolicy(maximum_attempts=MODEL_ATTEMPTS),
                summary=llm_request.model,
            )
        except ActivityError as err:
            raise_if_cancelled(err)
            raise
        for response in responses:
            yield response


def raise_if_cancelled(err: BaseException) -> None:
    """`asyncio.CancelledError` for an activity cancelled because the task awaiting it was.

    Temporal raises a cancelled activity's `ActivityError` (an `Exception`), where ADK expects
    a cancelled task to raise `CancelledError`: it takes the error for the node's own, and
    waits for a consumer that is gone to read the error's event, so a stopped run never ends.
    """
    task = asyncio.current_task()
    if isinstance(err.__cause__, CancelledError) and task is not None and task.cancelling():
        raise asyncio.CancelledError from err


def _sendable(request: LlmRequest) -> LlmRequest:
    """The request as an activity's input: an agent's `output_schema`, which ADK puts in it as
    a Python type (a pydantic model), as its JSON Schema (what the model is sent anyway)."""
    schema = request.config.response_schema
    if not isinstance(schema, type):
        return request
    config = request.config.model_copy(
        update={"response_schema": TypeAdapter(schema).json_schema()}
    )
    return request.model_copy(update={"config": config})


@activity.defn(name=MODEL_ACTIVITY)
async def adk_model(request: LlmRequest) -> list[LlmResponse]:
    """One model call, the named model made here (`LLMRegistry`): streamed, its text published
    to the thread as part 0 while it comes, its whole responses returned (the partial ones
    only streamed)."""
    if not request.model:
        raise ValueError("the model request names no model")
    llm = LLMRegistry.new_llm(request.model)
    whole: list[LlmResponse] = []
    async with thread_topic() as publish:
        async for response in llm.generate_content_async(request, stream=True):
            if not response.partial:
                whole.append(response)
                continue
            parts = response.content.parts if response.content else None
            text = "".join(part.text or "" for part in parts or () if not part.thought)
            if text:
                publish(StreamDelta(part=0, kind="text", delta=text))
    return whole


class _ThreadAdkPlugin(GoogleAdkPlugin):
    """Temporal's `GoogleAdkPlugin` as a thread worker runs it (`adk_plugin`)."""

    def configure_worker(self, config: WorkerConfig) -> WorkerConfig:
        with _otel_warnings_logged():
            return super().configure_worker(config)

    def configure_replayer(self, config: ReplayerConfig) -> ReplayerConfig:
        with _otel_warnings_logged():
            return super().configure_replayer(config)


@contextmanager
def _otel_warnings_logged() -> Iterator[None]:
    """The plugin warns (`warnings.warn`) when tracing is on (`OTEL_ENABLED`: the process's
    tracer provider is the SDK's), since ADK's spans from workflow code are sent again on each
    replay. True, and the operator's to weigh: it goes to the worker's log, once per worker,
    rather than as a Python warning (which a test run makes an error)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield
    for warning in caught:
        log.warning("Google ADK: %s", warning.message)


def adk_plugin() -> GoogleAdkPlugin:
    """Temporal's `GoogleAdkPlugin` as a thread worker runs it (`worker_plugin`): ADK's clock,
    ids and randomness made the workflow's while the worker runs, its sandbox passthroughs,
    and the model activity that streams into the thread in place of its own (`register_adk_agent`
    gives every agent a `ThreadModel`).

    Without its data converter: the thread workers' writes ADK's values as it does (pydantic
    JSON of the fields set), with the codec threads need."""
    plugin = _ThreadAdkPlugin()
    plugin.data_converter = None
    plugin.activities = [adk_model]
    return plugin


__all__ = [
    "AdkAgentOptions",
    "ThreadModel",
    "adk_model",
    "adk_plugin",
    "raise_if_cancelled",
    "register_adk_agent",
]
