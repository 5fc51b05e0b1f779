"""What a pydantic-ai agent needs to run in a thread: its deps, and the capabilities
that make it durable and write what it does into the thread.

`thread_capabilities()` goes on every agent a thread runs:
- `ThreadEvents`: in workflow code, each model response and each tool result becomes
  AG-UI events and transcript messages of the thread (through the `ThreadSink` the
  thread installs for the run); in the model activity, the model streams its deltas to
  the thread (`agents.streaming`).
- `TemporalDurability`: model requests and tool calls run as activities.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Final, Protocol

from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.durable_exec.temporal import TemporalDurability
from pydantic_ai.messages import ModelMessage, ModelResponse
from pydantic_ai.models import Model, ModelRequestContext
from pydantic_ai.tools import RunContext, ToolDefinition
from temporalio import activity
from temporalio.common import RetryPolicy
from temporalio.workflow import ActivityConfig

from ag_ui_temporal.agents.streaming import StreamingModel
from ag_ui_temporal.workflows.contract import TOOL_MAX_ATTEMPTS, TOOL_TIMEOUT

MODEL_TIMEOUT = timedelta(minutes=5)
"""One attempt of a model request (a long answer streams for a while)."""
MODEL_ATTEMPTS = 4

IN_WORKFLOW: Final[dict[str, Any]] = {"temporal": False}
"""Tool metadata: the (async, deterministic) tool runs in workflow code and starts its
own activities, as the demo's tools do (`demo.assistant.tool_activity`)."""


@dataclass
class ThreadDeps:
    """The agent's `deps` in a thread (they cross into every activity: keep them small)."""

    thread_id: str
    principal: str | None = None
    """Who sent the run (None when an expiry acts between runs)."""
    tool_max_attempts: int = TOOL_MAX_ATTEMPTS


class ThreadSink(Protocol):
    """What the thread does with an agent run's steps (implemented in workflow code)."""

    def tools_offered(self, tool_defs: list[ToolDefinition]) -> None: ...

    def model_request_started(self, messages: list[ModelMessage]) -> None: ...

    def model_responded(self, response: ModelResponse) -> None: ...


_sink: ContextVar[ThreadSink | None] = ContextVar("agui_thread_sink", default=None)


@contextmanager
def writing_to(sink: ThreadSink) -> Iterator[None]:
    """Route the hooks of agent runs started in this block (in this task) to `sink`."""
    token = _sink.set(sink)
    try:
        yield
    finally:
        _sink.reset(token)


class ThreadEvents(AbstractCapability[Any]):
    """Writes an agent run into its thread; outside a thread it does nothing."""

    def get_wrapper_model(self, model: Model) -> Model | None:
        # only inside the model-request activity of a workflow: that is where tokens arrive
        if activity.in_activity() and activity.info().workflow_id is not None:
            return StreamingModel(model)
        return None

    async def prepare_tools(
        self, ctx: RunContext[Any], tool_defs: list[ToolDefinition]
    ) -> list[ToolDefinition]:
        if (sink := _sink.get()) is not None:
            sink.tools_offered(tool_defs)
        return tool_defs

    async def before_model_request(
        self, ctx: RunContext[Any], request_context: ModelRequestContext
    ) -> ModelRequestContext:
        if (sink := _sink.get()) is not None:
            sink.model_request_started(request_context.messages)
        return request_context

    async def after_model_request(
        self,
        ctx: RunContext[Any],
        *,
        request_context: ModelRequestContext,
        response: ModelResponse,
    ) -> ModelResponse:
        if (sink := _sink.get()) is not None:
            sink.model_responded(response)
        return response


def thread_capabilities(
    *,
    model_timeout: timedelta = MODEL_TIMEOUT,
    model_attempts: int = MODEL_ATTEMPTS,
    tool_timeout: timedelta = TOOL_TIMEOUT,
    tool_attempts: int = TOOL_MAX_ATTEMPTS,
) -> list[AbstractCapability[Any]]:
    """The capabilities every agent served in a thread carries (see the module's docstring).
    `tool_timeout` and `tool_attempts` bound each of the agent's tool activities, by default
    as `TOOL_TIMEOUT` and `TOOL_MAX_ATTEMPTS`'s default say; they are fixed when the agent is
    built (a tool that reads `ctx.deps.tool_max_attempts` follows the deployment's setting)."""
    return [
        ThreadEvents(),
        TemporalDurability(
            activity_config=ActivityConfig(
                start_to_close_timeout=tool_timeout,
                retry_policy=RetryPolicy(maximum_attempts=tool_attempts),
            ),
            model_activity_config=ActivityConfig(
                start_to_close_timeout=model_timeout,
                retry_policy=RetryPolicy(maximum_attempts=model_attempts),
            ),
        ),
    ]


ASK_KEY: Final = "agui"
"""The key of `ask_person()`'s entry in a tool's metadata."""
ELICITATION_KEY: Final = "elicitation"
"""`ApprovalRequired.metadata[ASK_KEY][ELICITATION_KEY]`: an MCP server's question
(`agents.mcp_servers`)."""
ANSWERS_KEY: Final = "mcpAnswers"
"""`DeferredToolResults.metadata[call id][ANSWERS_KEY]`: the person's answers, in order."""


def ask_person(
    message: str | None = None,
    *,
    what: str | None = None,
    fills_args: bool = False,
    confirm: bool = False,
    reject_payload: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Tool metadata: how the thread asks a person about a call of this tool.

    `message` is the interrupt's message, `what` how the agent names the call in a
    sentence ("the email to {to}"); `{name}` fields in both are filled from the call's
    arguments. With `fills_args` the person supplies the arguments (an `input_required`
    form with the tool's parameters as its schema, expiring after the thread's
    `input_expires_in_seconds`) instead of approving the model's; with `confirm` the person
    answers yes or no (a `confirmation` interrupt, payload `true`/`false`), as before a
    risky step whose arguments need no review.

    `reject_payload`: the JSON Schema of what a rejection carries (TanStack's
    `approvalSchema: {reject: ...}`; a rejection is then `{"approved": false, "payload":
    {...}}`, the payload required). Its `reason` or `note` (or the payload itself, a
    string) reaches the model: "you rejected it: <note>"."""
    options: dict[str, Any] = {
        "message": message,
        "what": what,
        "fillsArgs": fills_args,
        "confirm": confirm,
    }
    if reject_payload is not None:  # only when given: other tools' metadata stays as it was
        options["rejectPayload"] = reject_payload
    return {ASK_KEY: options}
