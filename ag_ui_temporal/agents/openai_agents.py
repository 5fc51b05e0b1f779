"""OpenAI Agents SDK agents in threads: `register_openai_agent` serves an `agents.Agent` at
`/agents/{name}`.

A registered agent runs in the thread workflow (`workflows.thread.agents.openai`) through
Temporal's own integration (`temporalio-openai-agents`): `Runner.run` there is its runner,
which makes each model call an activity (`invoke_model_activity`). A `function_tool` runs in
the workflow (so its body must be deterministic: no I/O), an `activity_as_tool` as an
activity. A tool with `needs_approval` (a bool or a callable) pauses the run: each
`ToolApprovalItem` of `result.interruptions` is a `tool_call` interrupt bound to its call id;
the answers approve or reject the calls on the paused `RunState`, and the run goes on from it.

The model activity streams: `ThreadModels` wraps the worker's model provider so that each
model call is made as a stream, its text and tool-call deltas published to the thread while
they come (`agents.streaming`, as for a pydantic-ai agent), and the whole response returned.

This module is host code shared with the workflow sandbox (`ag_ui_temporal.agents`); it needs
the `openai-agents` extra (`pip install 'ag-ui-temporal[openai-agents]'`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, Final

from agents import Agent, Model, ModelProvider, ModelResponse, RunConfig, Usage
from agents.models.openai_provider import OpenAIProvider
from openai import AsyncOpenAI
from openai.types.responses import (
    ResponseCompletedEvent,
    ResponseFunctionCallArgumentsDeltaEvent,
    ResponseFunctionToolCall,
    ResponseOutputItemAddedEvent,
    ResponseTextDeltaEvent,
)
from temporalio import activity
from temporalio.common import RetryPolicy
from temporalio.openai_agents import ModelActivityParameters, OpenAIAgentsPlugin

from ag_ui_temporal.agents.registry import (
    RegisteredOpenAIAgent,
    add_openai_agent,
    all_registered_openai_agents,
)
from ag_ui_temporal.agents.streaming import StreamDelta, check_tool_calls, thread_topic
from ag_ui_temporal.workflows.contract.standing import checked_offer

MODEL_TIMEOUT: Final = timedelta(minutes=5)
"""One attempt of a model call's activity (a long answer streams for a while)."""
MODEL_ATTEMPTS: Final = 4


@dataclass(frozen=True)
class OpenAIAgentOptions:
    """How a registered agent runs and asks (`register_openai_agent`)."""

    run_config: RunConfig = field(default_factory=RunConfig)
    max_turns: int = 10
    approval_expires_in: timedelta | None = None
    reject_payload: dict[str, Any] | None = None
    approval_messages: Mapping[str, str] = field(default_factory=dict)


def register_openai_agent(
    agent: Agent[Any],
    *,
    name: str | None = None,
    description: str = "",
    run_config: RunConfig | None = None,
    max_turns: int = 10,
    approval_expires_in: timedelta | None = None,
    reject_payload: dict[str, Any] | None = None,
    approval_messages: Mapping[str, str] | None = None,
    model_provider: ModelProvider | None = None,
    standing_approvals: timedelta | None = None,
    replace: bool = False,
) -> Agent[Any]:
    """Serve `agent` in threads under `name` (default: `agent.name`), `POST /agents/{name}`.

    Its `model` must be a model name (Temporal's runner calls models by name, in an activity):
    `model_provider` makes the models of that name (and of its handoffs' names) on the worker;
    without one, OpenAI's own provider does (`OPENAI_API_KEY`). `run_config` and `max_turns`
    are what each `Runner.run` of a thread gets.

    A tool with `needs_approval` asks a person before it runs: a `tool_call` interrupt, which
    expires after `approval_expires_in` (None: never). The SDK has no way to run an approved
    call with other arguments, so its approvals take no `editedArgs` (the capabilities say
    `approveWithEdits: false`). `reject_payload`: the JSON Schema of what a rejection carries
    (a rejection must then carry it, as TanStack's envelope says); its note (a string, or an
    object's `reason` or `note`) is the rejection message the model reads.
    `approval_messages`: by tool name, the question each approval asks ("Send an email to
    {to}?": its `{name}` fields from the call's arguments); "Approve <tool>?" otherwise.
    `standing_approvals`: the longest standing decision an approval offers (`agents.register`;
    None: none)."""
    served = name or agent.name
    if not served:
        raise ValueError("an agent served in threads needs a name")
    if not isinstance(agent.model, str | None):
        raise ValueError(
            f"agent {served!r}: give the model by name (Agent(model='gpt-5-mini')); Temporal's "
            "runner makes it in the model activity, where `model_provider` builds it"
        )
    options = OpenAIAgentOptions(
        run_config or RunConfig(),
        max_turns,
        approval_expires_in,
        reject_payload,
        dict(approval_messages or {}),
    )
    add_openai_agent(
        RegisteredOpenAIAgent(
            served,
            agent,
            description,
            options,
            model_provider,
            standing_approvals=checked_offer(standing_approvals),
        ),
        replace=replace,
    )
    return agent


class ThreadModels(ModelProvider):
    """The model provider of the thread workers' model activity: each registered agent's
    `model_provider` for its models (OpenAI's own for a name none of them makes), each model
    streamed into the thread (`_Streamed`)."""

    def __init__(self) -> None:
        self._default: ModelProvider | None = None

    def get_model(self, model_name: str | None) -> Model:
        return _Streamed(self._provider(model_name).get_model(model_name))

    def _provider(self, model_name: str | None) -> ModelProvider:
        for entry in all_registered_openai_agents().values():
            if entry.model_provider is not None and _names_model(entry.agent, model_name):
                provider: ModelProvider = entry.model_provider
                return provider
        if self._default is None:  # made at the first call: a worker starts without a key
            self._default = OpenAIProvider(openai_client=AsyncOpenAI(max_retries=0))
        return self._default


def _names_model(agent: Agent[Any], model_name: str | None, seen: set[int] | None = None) -> bool:
    """Whether `agent` or an agent it hands off to runs on `model_name`."""
    seen = set() if seen is None else seen
    if id(agent) in seen:
        return False
    seen.add(id(agent))
    if agent.model == model_name:
        return True
    return any(
        isinstance(handoff, Agent) and _names_model(handoff, model_name, seen)
        for handoff in agent.handoffs
    )


class _Streamed(Model):
    """A model whose response is streamed to the thread from inside the model activity: text
    is part 0, the response's tool calls parts 1, 2, ... in the order they begin (how the
    thread's writer numbers an agent's response). A model that cannot stream answers whole."""

    def __init__(self, wrapped: Model) -> None:
        self.wrapped = wrapped

    async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
        if not activity.in_activity():
            return await self.wrapped.get_response(*args, **kwargs)
        try:  # a model that cannot stream says so when asked, or at its first event
            async with thread_topic() as publish:
                return await _collect(self.wrapped.stream_response(*args, **kwargs), publish)
        except NotImplementedError:
            return await self.wrapped.get_response(*args, **kwargs)

    def stream_response(self, *args: Any, **kwargs: Any) -> Any:
        return self.wrapped.stream_response(*args, **kwargs)


async def _collect(
    stream: AsyncIterator[Any], publish: Callable[[StreamDelta], None]
) -> ModelResponse:
    """The response a stream of Responses events completes, each delta published on the way."""
    calls: dict[int, int] = {}  # output index -> part
    async for event in stream:
        if isinstance(event, ResponseTextDeltaEvent) and event.delta:
            publish(StreamDelta(part=0, kind="text", delta=event.delta))
        elif isinstance(event, ResponseOutputItemAddedEvent) and isinstance(
            item := event.item, ResponseFunctionToolCall
        ):
            part = calls[event.output_index] = 1 + len(calls)
            check_tool_calls(len(calls))
            publish(
                StreamDelta(
                    part=part,
                    kind="tool",
                    delta=item.arguments or "",
                    tool_call_id=item.call_id,
                    tool_name=item.name,
                )
            )
        elif isinstance(event, ResponseFunctionCallArgumentsDeltaEvent) and event.delta:
            if (called := calls.get(event.output_index)) is not None:
                publish(StreamDelta(part=called, kind="tool", delta=event.delta))
        elif isinstance(event, ResponseCompletedEvent):
            done = event.response
            check_tool_calls(sum(item.type == "function_call" for item in done.output))
            usage = done.usage
            return ModelResponse(
                output=done.output,
                usage=Usage(
                    requests=1,
                    input_tokens=usage.input_tokens if usage else 0,
                    output_tokens=usage.output_tokens if usage else 0,
                    total_tokens=usage.total_tokens if usage else 0,
                ),
                response_id=done.id,
            )
    raise RuntimeError("the model's stream ended without its response")


def openai_agents_plugin() -> OpenAIAgentsPlugin:
    """Temporal's `OpenAIAgentsPlugin` as a thread worker runs it (`worker_plugin`): its model
    activities on `ThreadModels`, its runner while the worker runs, its sandbox passthroughs
    and tracing interceptor.

    Without its data converter: the thread workers' (pydantic JSON, as the integration's is,
    with the codec threads need) reads and writes the model activity's input and result, and
    the plugin would refuse any converter but its own."""
    params = ModelActivityParameters(
        start_to_close_timeout=MODEL_TIMEOUT,
        retry_policy=RetryPolicy(maximum_attempts=MODEL_ATTEMPTS),
    )
    plugin = OpenAIAgentsPlugin(model_params=params, model_provider=ThreadModels())
    plugin.data_converter = None
    return plugin


__all__ = [
    "OpenAIAgentOptions",
    "ThreadModels",
    "openai_agents_plugin",
    "register_openai_agent",
]
