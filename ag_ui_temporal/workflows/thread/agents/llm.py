"""A registered pydantic-ai agent, run in a thread (the workflow side).

Each thread run that gives the agent something to do is one pydantic-ai agent run with
the transcript as its message history: model requests and tool calls are activities
(`TemporalDurability`), and `RunWriter` writes what happens into the thread as it
happens. A run that ends with deferred tool calls asks a person about each of them:
an approval is a `tool_call` interrupt, a call whose arguments a person supplies or one
executed outside the agent (`CallDeferred`) an `input_required` interrupt, and a call
of a client's own tool (`RunAgentInput.tools`) ends the run for the client to run it
(once a person approved it, for one that needs approval: `_client_tools`).
The answers come back, all of one run's together, as `DeferredToolResults`, and the
same agent run continues from them.
"""

from __future__ import annotations

import asyncio
from typing import Any

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from pydantic_ai import Agent as PydanticAgent
    from pydantic_ai import AgentRunResult, DeferredToolRequests, DeferredToolResults
    from pydantic_ai.exceptions import AgentRunError, UserError
    from pydantic_ai.messages import ModelMessage, repair_messages
    from pydantic_ai.tools import ToolDefinition
    from pydantic_ai.toolsets import FunctionToolset
    from temporalio.contrib.workflow_streams import PublishInput

    from ag_ui_temporal.agents import ThreadDeps, registered
    from ag_ui_temporal.agents.history import model_history, through_calls
    from ag_ui_temporal.agents.thread import writing_to
    from ag_ui_temporal.workflows.contract import AgentNotServed, WireDict
    from ag_ui_temporal.workflows.thread.interrupts import InterruptRecord

from ag_ui_temporal.workflows._interrupt import InvalidInterrupt
from ag_ui_temporal.workflows.thread.agents import _asking, _client_tools, _subagents
from ag_ui_temporal.workflows.thread.agents._llm_writer import RunWriter
from ag_ui_temporal.workflows.thread.agents.base import batch
from ag_ui_temporal.workflows.thread.turn import Turn


class AgentFailed(Exception):
    """The agent could not go on (a bad tool definition, a usage limit, a model that
    keeps answering nonsense): the run ends with `RUN_ERROR`, the thread lives on."""


class LlmAgent:
    def __init__(self, name: str) -> None:
        self.name = name
        self.writer: RunWriter | None = None
        self.stale: set[str] = set()  # stopped requests' model activities (`RunWriter.stale`)

    @property
    def agent(self) -> PydanticAgent[ThreadDeps, Any]:
        entry = registered(self.name)
        if entry is None:  # a worker without the agent: the task retries until one has it
            raise AgentNotServed(f"no pydantic-ai agent {self.name!r} is registered on this worker")
        return entry.agent

    def on_stream(self, batch: PublishInput) -> None:
        if self.writer is not None:
            self.writer.receive(batch)

    async def on_user_message(self, turn: Turn, text: str) -> None:
        # calls a failed run left without results are closed out, or the model may not go on
        history = repair_messages(model_history(turn.messages[:-1]))
        await self._run(turn, history, prompt=text)

    async def on_client_results(self, turn: Turn) -> None:
        """The client ran its tools and sent their results: the agent goes on from them, once
        the client answered every call a person approved for it (a result that came with the
        approval, of another client tool, waits for them)."""
        if _client_tools.awaiting_client(turn.log.state):
            return
        await self._run(turn, model_history(turn.messages))

    async def on_settled(self, turn: Turn, settled: list[InterruptRecord]) -> None:
        group = batch(turn, settled, "llm")
        if group is None:
            return  # the run asked about several calls: go on once all are settled
        if turn.run_id is None:  # the last of them expired between runs: no client is here
            _asking.close_out(turn, group)
            return
        deferred = _subagents.deferred_results(group)
        if self._ends_on_refusal(deferred):
            _asking.close_out(turn, group, deferred)  # no model request: nothing ran
            return
        calls = {str(record.data["toolCallId"]) for record in group}
        history = model_history(through_calls(turn.messages, calls))
        tools = _client_tools.approved_calls(turn.client_tools, group)
        await self._run(turn, history, deferred=deferred, client_tools=tools)

    def _ends_on_refusal(self, deferred: DeferredToolResults) -> bool:
        entry = registered(self.name)
        return bool(
            entry is not None and entry.refusals_end_the_turn and _asking.all_refused(deferred)
        )

    def _takes_edits(self) -> bool:
        """Whether this agent's approvals offer `editedArgs` (`register(approve_with_edits=)`,
        what its capabilities promise)."""
        entry = registered(self.name)
        return entry is None or entry.approve_with_edits

    def on_run_end(
        self, turn: Turn, *, posted: int, settled: int, waiting: list[InterruptRecord]
    ) -> None:
        """The agent said what it had to while it ran."""

    async def _run(
        self,
        turn: Turn,
        history: list[ModelMessage],
        prompt: str | None = None,
        deferred: DeferredToolResults | None = None,
        client_tools: list[WireDict] | None = None,
    ) -> None:
        agent = self.agent
        own = _own_tools(agent)
        offered = turn.client_tools if client_tools is None else client_tools
        approve = self._client_approvals(offered, own)
        writer = self.writer = RunWriter(turn, self.stale)
        deps = ThreadDeps(
            thread_id=turn.log.state.thread_id,
            principal=turn.principal,
            tool_max_attempts=turn.config.tool_max_attempts,
        )
        try:
            with writing_to(writer):
                result: AgentRunResult[Any] = await agent.run(
                    prompt,
                    message_history=history,
                    deferred_tool_results=deferred,
                    output_type=_with_deferred(agent.output_type),
                    deps=deps,
                    toolsets=_client_tools.toolsets(offered, own, approve),
                )
        except (UserError, AgentRunError) as err:
            raise AgentFailed(f"the agent failed: {err}"[:300]) from err
        except (Exception, asyncio.CancelledError):
            if turn.stop_requested:  # stopped (`cancel_run`): what it showed stays, marked
                writer.stop(deferred)
            raise
        finally:
            self.writer = None
        writer.report_results(result.new_messages())
        output = result.output
        if isinstance(output, DeferredToolRequests):
            self._ask(turn, writer.tool_defs, output, approve)
        elif not isinstance(output, str):
            turn.say(_asking.as_text(output))

    def _client_approvals(self, tools: list[WireDict], own: set[str]) -> set[str]:
        """The client tools of this run that a person approves before the client runs them."""
        entry = registered(self.name)
        named = entry.approve_client_tools if entry is not None else frozenset()
        return _client_tools.needing_approval(tools, named) - own

    def _ask(
        self,
        turn: Turn,
        tools: dict[str, ToolDefinition],
        asked: DeferredToolRequests,
        approve: set[str],
    ) -> None:
        """Ask about each deferred call. `approve`: the client tools approved first; their
        approvals are asked like any tool's, their approved calls handed to the client."""
        client_tools = {name for name, tool in tools.items() if tool.kind == "external"} | approve
        edits = self._takes_edits() if asked.approvals else True
        entry = registered(self.name)
        standing = entry.standing_approvals if entry is not None else None
        try:
            for call in asked.approvals:
                if inner := _subagents.delegated(asked.metadata.get(call.tool_call_id)):
                    # a sub-agent asks: its questions, under this agent's promise on edits
                    _subagents.ask_inner(turn, call, inner, edits=edits)
                    continue
                _asking.ask_approval(
                    turn,
                    tools.get(call.tool_name),
                    call,
                    asked.metadata,
                    edits=edits,
                    client=call.tool_name in approve,
                    standing=standing,
                )
            for call in asked.calls:
                if call.tool_name in client_tools:  # the client runs its own tools
                    _asking.hand_to_client(
                        turn, call, _client_tools.handed_args(call, asked.metadata)
                    )
                else:
                    _asking.ask_result(turn, tools.get(call.tool_name), call, asked.metadata)
        except InvalidInterrupt as err:  # a tool whose schema cannot be asked for, say
            raise AgentFailed(f"the agent cannot ask this: {err}") from err


def _with_deferred(output_type: Any) -> list[Any]:
    """The agent's output types, and `DeferredToolRequests`: a run may end asking a person."""
    types = list(output_type) if isinstance(output_type, list | tuple) else [output_type]
    return types if DeferredToolRequests in types else [*types, DeferredToolRequests]


def _own_tools(agent: PydanticAgent[ThreadDeps, Any]) -> set[str]:
    """The names of the agent's function tools."""
    names: set[str] = set()
    for toolset in agent.toolsets:
        toolset.apply(lambda t: names.update(t.tools) if isinstance(t, FunctionToolset) else None)
    return names
