"""A registered OpenAI Agents SDK agent, run in a thread (the workflow side).

Each thread run that gives the agent something to do is one `Runner.run`, in workflow code:
Temporal's runner (`temporalio-openai-agents`, installed by the worker's plugin) makes each
model call an activity, whose deltas stream into the thread (`agents.openai_agents`). Run
hooks write what happens as it happens (`RunWriter`, as for a pydantic-ai agent): each model
response, each tool's result.

The conversation lives in the thread's state between runs as the SDK's input items (`ITEMS`),
within a budget. A run that stops with `result.interruptions` keeps its `RunState` (`PAUSED`,
its JSON) and asks about each `ToolApprovalItem` with a `tool_call` interrupt bound to its
call id; once all of them are settled (one resume answers the batch), each call is approved
or rejected on the state, a rejection's note (or why nobody answered) as its message, and
the run goes on from the state. The SDK runs an approved call with the model's arguments, so
no approval takes `editedArgs`.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any, Final

from temporalio import workflow
from temporalio.exceptions import FailureError

with workflow.unsafe.imports_passed_through():
    from agents import Agent as SdkAgent
    from agents import ModelResponse as SdkResponse
    from agents import RunHooks, Runner, RunResult, RunState, ToolApprovalItem
    from agents.exceptions import AgentsException
    from agents.run import get_default_agent_runner
    from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
    from temporalio.openai_agents import AgentsWorkflowError

    from ag_ui_temporal.agents.registry import RegisteredOpenAIAgent, registered_openai_agent
    from ag_ui_temporal.workflows.contract import (
        THREAD_WINDOW_BYTES,
        AgentNotServed,
        InterruptStatus,
        json_size,
    )
    from ag_ui_temporal.workflows.contract.tools import WHY_NOT, approval
    from ag_ui_temporal.workflows.thread.interrupts import InterruptRecord

from ag_ui_temporal.workflows.thread.agents._llm_writer import RunWriter
from ag_ui_temporal.workflows.thread.agents.base import FrameworkAgent, ask_approval, not_paused
from ag_ui_temporal.workflows.thread.agents.llm import AgentFailed
from ag_ui_temporal.workflows.thread.turn import Turn

KEY: Final = "openai"
"""`InterruptRecord.data` key: the call id of the `ToolApprovalItem` it asks about."""
ITEMS: Final = "openai:items"
"""`ThreadState.agent_data` key: the conversation, as the SDK's input items."""
PAUSED: Final = "openai:paused"
"""`ThreadState.agent_data` key: the JSON of the `RunState` that waits for the answers."""
STATE_BYTES: Final = THREAD_WINDOW_BYTES
"""The most a paused run's state may take (its JSON): over it, the run does not pause, and
the calls it would ask about do not run (`base.not_paused`)."""
ITEMS_BYTES: Final = STATE_BYTES // 4
"""The most the carried conversation may take (its JSON): the oldest turns are dropped beyond
it. A quarter of a paused state's budget: the state holds the conversation it began with, and
beside it what the run made (its items, the model's raw responses)."""


class OpenAIAgent(FrameworkAgent[ToolApprovalItem]):
    key = KEY

    @property
    def entry(self) -> RegisteredOpenAIAgent:
        entry = registered_openai_agent(self.name)
        if entry is None:  # a worker without the agent: the task retries until one has it
            raise AgentNotServed(f"no OpenAI agent {self.name!r} is registered on this worker")
        return entry

    async def on_user_message(self, turn: Turn, text: str) -> None:
        data = turn.log.state.agent_data
        data.pop(PAUSED, None)  # a run that was never resumed: its calls did not happen
        items = [*(data.get(ITEMS) or []), {"role": "user", "content": text}]
        self._ask(turn, await self._run(turn, items))

    async def _resume(self, turn: Turn, group: list[InterruptRecord]) -> list[ToolApprovalItem]:
        paused = turn.log.state.agent_data.get(PAUSED)
        if paused is None:
            return []  # a user message started anew meanwhile
        state: RunState[Any] = await RunState.from_json(self._durable_agent(), paused)
        decided = {str(record.data[KEY]): _decision(record) for record in group}
        for item in state.get_interruptions():
            why_not = decided.get(_call_id(item), WHY_NOT[InterruptStatus.CANCELLED])
            if why_not is None:
                state.approve(item)
            else:
                state.reject(item, rejection_message=why_not)
        return await self._run(turn, state)

    async def _expire(self, turn: Turn, asked: list[ToolApprovalItem]) -> list[ToolApprovalItem]:
        state = await RunState.from_json(self._durable_agent(), turn.log.state.agent_data[PAUSED])
        for item in state.get_interruptions():
            state.reject(item, rejection_message=WHY_NOT[InterruptStatus.EXPIRED])
        return await self._run(turn, state)

    def _durable_agent(self) -> SdkAgent[Any]:
        """The agent as Temporal's runner runs it, its models made activities. A paused run's
        state is rebuilt on it: the SDK goes on with the state's own agent, and the runner of
        temporalio-openai-agents 1.1 converts only the agent `Runner.run` is given (the state's
        would call its model in the workflow). Its conversion is not public: this calls it."""
        runner = get_default_agent_runner()
        prepare = getattr(runner, "_prepare_workflow_run", None)
        if prepare is None:
            raise AgentNotServed("the worker runs no OpenAIAgentsPlugin (temporalio-openai-agents)")
        agent: SdkAgent[Any] = prepare(
            self.entry.agent, {"run_config": self.entry.options.run_config}
        )
        return agent

    async def _run(
        self, turn: Turn, run_input: list[Any] | RunState[Any]
    ) -> list[ToolApprovalItem]:
        """One `Runner.run`, written into the thread as it goes; where it ended is kept.
        Returns the calls it paused to ask a person about."""
        entry = self.entry
        options = entry.options
        writer = self.writer = RunWriter(turn, self.stale)
        try:
            result = await Runner.run(
                entry.agent,
                run_input,
                hooks=_Writing(writer),
                run_config=options.run_config,
                max_turns=options.max_turns,
            )
        except (Exception, asyncio.CancelledError) as err:
            if turn.stop_requested:  # stopped (`cancel_run`): what it showed stays, marked
                writer.stop()
            if isinstance(err, AgentsWorkflowError):  # never out: it fails the whole thread
                if isinstance(err.__cause__, FailureError):
                    # an activity that failed for good (the thread's `RUN_ERROR` for it), or
                    # one a stop cancelled (the stop's own end)
                    raise err.__cause__ from None
                raise AgentFailed(f"the agent failed: {err}"[:300]) from err
            if isinstance(err, AgentsException) and not turn.stop_requested:
                raise AgentFailed(f"the agent failed: {err}"[:300]) from err
            raise
        finally:
            self.writer = None
        for item in result.new_items:  # results no model request read (the run's last tools)
            if item.type == "tool_call_output_item":
                writer.report_result(_output_call_id(item.raw_item), _text(item.output))
        if result.interruptions:
            paused = result.to_state().to_json()
            if json_size(paused) <= STATE_BYTES:
                turn.log.state.agent_data[PAUSED] = paused
                return list(result.interruptions)
            _not_paused(turn, writer, result)  # what the run did stands: it only stops here
            return []
        _carry(turn, result.to_input_list())
        return []

    def _ask(self, turn: Turn, asked: list[ToolApprovalItem]) -> None:
        for item in asked:
            call_id = _call_id(item)
            ask_approval(turn, self.entry, KEY, call_id, call_id, str(item.name), _args(item))


class _Writing(RunHooks[Any]):
    """The SDK's run hooks, writing each step into the thread as it happens."""

    def __init__(self, writer: RunWriter) -> None:
        self.writer = writer

    async def on_llm_start(
        self, context: Any, agent: SdkAgent[Any], system_prompt: str | None, input_items: Any
    ) -> None:
        users = [i for i, item in enumerate(input_items) if _field(item, "role") == "user"]
        for item in input_items[users[-1] if users else 0 :]:  # this turn's calls' results
            if _field(item, "type") == "function_call_output":
                self.writer.report_result(_output_call_id(item), _text(_field(item, "output")))
        self.writer.model_request_started([])

    async def on_llm_end(self, context: Any, agent: SdkAgent[Any], response: SdkResponse) -> None:
        self.writer.model_responded(_as_response(response))

    async def on_tool_end(self, context: Any, agent: SdkAgent[Any], tool: Any, result: Any) -> None:
        if isinstance(call_id := getattr(context, "tool_call_id", None), str):
            self.writer.report_result(call_id, _text(result))


def _as_response(response: SdkResponse) -> ModelResponse:
    """A response as the writer takes one: its text first (part 0), then its function calls
    (parts 1, 2, ...), as the model activity numbered the deltas it streamed."""
    text = "".join(
        getattr(content, "text", "")
        for item in response.output
        if isinstance(item, ResponseOutputMessage)
        for content in item.content
    )
    calls = [
        ToolCallPart(tool_name=item.name, args=item.arguments, tool_call_id=item.call_id)
        for item in response.output
        if isinstance(item, ResponseFunctionToolCall)
    ]
    return ModelResponse(parts=[TextPart(content=text), *calls])


def _decision(record: InterruptRecord) -> str | None:
    """None: approved; else the rejection message the model reads."""
    resolution = record.resolution
    if record.status == InterruptStatus.RESOLVED and resolution is not None:
        decided = approval(resolution.payload)
        if decided is not None:
            return None if decided.approved else decided.why_not
    return WHY_NOT[record.status]


def _not_paused(turn: Turn, writer: RunWriter, result: RunResult) -> None:
    """A run that paused over its state's budget (`base.not_paused`): the conversation goes
    on without the calls it would ask about."""
    pending = {_call_id(item): str(item.name) for item in result.interruptions}
    not_paused(turn, writer, pending)
    _carry(
        turn, [item for item in result.to_input_list() if _field(item, "call_id") not in pending]
    )


def _carry(turn: Turn, items: list[Any]) -> None:
    """Keep the conversation for the next turn, within its budget (no paused run waits)."""
    carried = within_budget(items)
    if items and not carried:
        thread = turn.log.state.thread_id
        workflow.logger.warning(
            "thread %s: a turn over %s bytes is not carried on", thread, ITEMS_BYTES
        )
    data = turn.log.state.agent_data
    data.pop(PAUSED, None)
    data[ITEMS] = carried


def within_budget(items: list[Any], budget: int = ITEMS_BYTES) -> list[Any]:
    """The conversation, its oldest turns dropped (from a user message on) until it fits; a
    last turn over it alone is dropped too (the run it was already happened: only what the
    next turn remembers of it is lost)."""
    items = [_plain(item) for item in items]
    while json_size(items) > budget:
        users = [i for i, item in enumerate(items) if i and _field(item, "role") == "user"]
        if not users:
            return []
        items = items[users[0] :]
    return items


def _plain(item: Any) -> Any:
    """An input item as JSON data (the SDK gives some as its pydantic models)."""
    dump = getattr(item, "model_dump", None)
    return dump(exclude_unset=True, mode="json") if dump is not None else item


def _call_id(item: ToolApprovalItem) -> str:
    return str(_field(item.raw_item, "call_id") or _field(item.raw_item, "id"))


def _args(item: ToolApprovalItem) -> dict[str, Any]:
    arguments = _field(item.raw_item, "arguments")
    try:
        args = json.loads(arguments) if isinstance(arguments, str) else arguments
    except ValueError:
        return {}
    return args if isinstance(args, dict) else {}


def _output_call_id(raw: Any) -> str:
    return str(_field(raw, "call_id"))


def _field(item: Any, name: str) -> Any:
    return item.get(name) if isinstance(item, dict) else getattr(item, name, None)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, default=str)
