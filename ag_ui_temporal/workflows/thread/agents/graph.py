"""A registered LangGraph graph, run in a thread (the workflow side).

Each thread run that gives the graph something to do is one graph invocation, in workflow
code: nodes marked `execute_in: "activity"` run as activities (`temporalio-langgraph`'s
plugin), the others here. The graph's checkpoint lives in the thread's state between runs
(`_graph_checkpoint`), so the graph remembers the conversation and a paused graph waits
across continue-as-new and worker restarts. What nodes add to the `messages` channel is
written into the thread as it comes (`RunWriter`, as for a pydantic-ai agent: a chat model's
tokens streamed from the node's activity, then its whole message).

A node's `interrupt(value)` ends the run with an AG-UI interrupt per LangGraph interrupt
(all of one super-step in one batch: the thread's rules then want one resume for all); once
all are settled, the graph resumes with `Command(resume={interrupt id: answer})`, the answer
being the payload, or `{UNANSWERED: status}` for one cancelled or expired.

An `@entrypoint` (LangGraph's functional API) runs the same way, its tasks as activities: it
gets the new user message as `[HumanMessage]` and its own `previous`, and what its tasks
return that is a message is written as it comes, then the messages of its value (those no
task wrote in this turn: `WRITTEN`).
"""

from __future__ import annotations

import asyncio
import json
from datetime import datetime, timedelta
from typing import Any, Final

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
    from langgraph.errors import GraphRecursionError, InvalidUpdateError
    from langgraph.graph import StateGraph
    from langgraph.pregel import Pregel
    from langgraph.types import Command, Interrupt
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart

    from ag_ui_temporal.agents.decisions import UNANSWERED
    from ag_ui_temporal.agents.graph_nodes import as_messages
    from ag_ui_temporal.agents.graphs import (
        InterruptDefaults,
        duration_seconds,
        workflow_checkpoint_ids,
    )
    from ag_ui_temporal.agents.registry import RegisteredGraph, registered_graph
    from ag_ui_temporal.workflows.contract import (
        TOOL_CALL_METADATA_KEY,
        AgentNotServed,
        InterruptStatus,
        WireDict,
        tool_approval_schema,
    )
    from ag_ui_temporal.workflows.contract.tools import WHY_NOT
    from ag_ui_temporal.workflows.thread.interrupts import InterruptRecord

from ag_ui_temporal.workflows._interrupt import InvalidInterrupt
from ag_ui_temporal.workflows.thread.agents._graph_checkpoint import (
    CheckpointTooLarge,
    carry,
    newest,
    restored,
)
from ag_ui_temporal.workflows.thread.agents._llm_writer import RunWriter
from ag_ui_temporal.workflows.thread.agents.base import FrameworkAgent, why_not
from ag_ui_temporal.workflows.thread.agents.llm import AgentFailed
from ag_ui_temporal.workflows.thread.turn import Turn

KEY: Final = "langgraph"
"""`InterruptRecord.data` key: the LangGraph interrupt's id (what its answer resumes)."""
WRITTEN: Final = "written"
"""`ThreadState.agent_data` key of an `@entrypoint`'s thread: the messages written in this turn
(their LangChain ids), so that its value does not write again what its tasks wrote."""


class GraphAgent(FrameworkAgent[Interrupt]):
    key = KEY

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self._compiled: Pregel[Any, Any, Any, Any] | None = None

    @property
    def entry(self) -> RegisteredGraph:
        entry = registered_graph(self.name)
        if entry is None:  # a worker without the graph: the task retries until one has it
            raise AgentNotServed(f"no LangGraph graph {self.name!r} is registered on this worker")
        return entry

    @property
    def functional(self) -> bool:
        """An `@entrypoint` (a `Pregel`), not a `StateGraph`."""
        return not isinstance(self.entry.graph, StateGraph)

    async def on_user_message(self, turn: Turn, text: str) -> None:
        message = HumanMessage(content=text, id=turn.messages[-1].get("id"))
        if self.functional:
            turn.log.state.agent_data[WRITTEN] = []  # a new turn
            asked = await self._invoke(turn, [message])
        else:
            asked = await self._invoke(turn, {"messages": [message]})
        self._ask(turn, asked)

    async def _resume(self, turn: Turn, group: list[InterruptRecord]) -> list[Interrupt]:
        if turn.run_id is None and self.entry.options.on_expiry == "end":
            _end_unanswered(turn, group)
            return []
        return await self._invoke(turn, Command(resume={r.data[KEY]: _answer(r) for r in group}))

    async def _expire(self, turn: Turn, asked: list[Interrupt]) -> list[Interrupt]:
        expired = {question.id: {UNANSWERED: InterruptStatus.EXPIRED.value} for question in asked}
        return await self._invoke(turn, Command(resume=expired))

    def _compiled_graph(self, graph: StateGraph[Any, Any, Any, Any]) -> Pregel[Any, Any, Any, Any]:
        """The `StateGraph` compiled once for this workflow instance (~1 ms each time): each run
        takes a copy with the thread's restored checkpointer."""
        if self._compiled is None:
            self._compiled = graph.compile(name=self.name)
        return self._compiled

    async def _invoke(self, turn: Turn, graph_input: Any) -> list[Interrupt]:
        """Run the graph from its carried checkpoint; write what it says; keep where it stopped.
        Returns the interrupts it waits on."""
        state = turn.log.state
        saver = restored(state.agent_data, state.thread_id)
        graph = self.entry.graph
        functional = self.functional
        app = (graph if functional else self._compiled_graph(graph)).copy(
            update={"checkpointer": saver}
        )
        written: list[str] = list(state.agent_data.get(WRITTEN) or [])
        config: Any = {"configurable": {"thread_id": state.thread_id}}
        writer = self.writer = RunWriter(turn)
        try:
            writer.model_request_started([])  # what a node's model streams goes here
            with workflow_checkpoint_ids(workflow.now(), newest(state.agent_data)):
                async for update in app.astream(graph_input, config, stream_mode="updates"):
                    if functional:
                        _write_functional(writer, update, set(graph.nodes), written)
                    else:
                        _write(writer, update)
            snapshot = await app.aget_state(config)
            state.agent_data = carry(saver, state.thread_id)
            if functional:
                state.agent_data[WRITTEN] = written
        except (GraphRecursionError, InvalidUpdateError, CheckpointTooLarge) as err:
            raise AgentFailed(f"the graph failed: {err}"[:300]) from err
        except (Exception, asyncio.CancelledError):
            if turn.stop_requested:  # stopped (`cancel_run`): what it showed stays, marked;
                writer.stop()  # the checkpoint stays where the graph was before the run
            raise
        finally:
            self.writer = None
        return list(snapshot.interrupts)

    def _ask(self, turn: Turn, asked: list[Interrupt]) -> None:
        try:
            for question in asked:
                _ask_one(turn, question, self.entry)
        except InvalidInterrupt as err:  # a value no AG-UI interrupt can carry
            raise AgentFailed(f"the graph cannot ask this: {err}") from err


def _ask_one(turn: Turn, question: Interrupt, entry: RegisteredGraph) -> None:
    value = question.value
    defaults: InterruptDefaults = entry.options.defaults
    fields: WireDict = value if isinstance(value, dict) else {}
    message = fields.get("message") if fields else value if isinstance(value, str) else None
    data: WireDict = {KEY: question.id}
    if fields.get("reason") == "tool_call" and fields.get("toolCallId"):
        tool, args = str(fields.get("tool")), fields.get("args") or {}
        edits = bool(fields.get("edits", True)) and entry.approve_with_edits
        parameters = fields.get("parameters") or {"type": "object"}
        turn.ask(
            reason="tool_call",
            message=str(message or f"Approve {tool}?"),
            response_schema=tool_approval_schema(
                parameters if edits else None, None, entry.standing_approvals
            ),
            tool_call_id=str(fields["toolCallId"]),
            expires_in=_expires_in(fields, defaults),
            data={**data, "toolCallId": fields["toolCallId"], "what": f"the call to {tool}"},
            metadata={TOOL_CALL_METADATA_KEY: {"name": tool, "arguments": args}},
        )
        return
    schema = fields.get("responseSchema") or question.response_schema or defaults.response_schema
    turn.ask(
        reason=str(fields.get("reason") or defaults.reason),
        message=str(message or defaults.message),
        response_schema=schema if isinstance(schema, dict) else None,
        tool_call_id=fields.get("toolCallId"),
        expires_in=_expires_in(fields, defaults),
        data=data,
        metadata=fields.get("metadata"),
    )


def _end_unanswered(turn: Turn, group: list[InterruptRecord]) -> None:
    """`on_expiry="end"`: the graph is not resumed. Each call it asked about gets the reason as
    its result, and the thread says why it did not go on; the graph stays where it stopped,
    and the next user message starts it anew (LangGraph drops the tasks that waited)."""
    writer = RunWriter(turn)
    for record in group:
        if "toolCallId" in record.data:
            writer.report_result(str(record.data["toolCallId"]), why_not(record))
    turn.say(f"I did not go on: {WHY_NOT[InterruptStatus.EXPIRED]}.")


def _expires_in(fields: WireDict, defaults: InterruptDefaults) -> timedelta | None:
    """`expiresAt` (an ISO instant), `expiresIn` (seconds or `2d`), else the default."""
    if isinstance(at := fields.get("expiresAt"), str):
        try:
            instant = datetime.fromisoformat(at)
        except ValueError as err:
            raise InvalidInterrupt(f"expiresAt {at[:64]!r} is no ISO 8601 instant") from err
        if instant.tzinfo is None:
            raise InvalidInterrupt(f"expiresAt {at[:64]!r} has no timezone")
        return max(instant - workflow.now(), timedelta(0))
    if (seconds := duration_seconds(fields.get("expiresIn"))) is not None:
        return timedelta(seconds=seconds)
    return defaults.expires_in


def _answer(record: InterruptRecord) -> Any:
    """What `interrupt()` returns in the resumed node: the payload, or who did not answer."""
    if record.status == InterruptStatus.RESOLVED and record.resolution is not None:
        return record.resolution.payload
    return {UNANSWERED: record.status.value}


def _write(writer: RunWriter, update: Any) -> None:
    """What one node added to the `messages` channel, into the thread: an AI message (its
    text and tool calls, completing what its model streamed) or a tool's result."""
    if not isinstance(update, dict):
        return
    for node, written in update.items():
        if node.startswith("__") or not isinstance(written, dict):
            continue  # `__interrupt__`: asked once the run stops
        added = as_messages(written.get("messages"))
        for message in added if isinstance(added, list) else [added]:
            _write_message(writer, message)


def _write_message(writer: RunWriter, message: Any) -> None:
    if isinstance(message, AIMessage):
        writer.model_responded(_response(message))
        writer.model_request_started([])
    elif isinstance(message, ToolMessage):
        content = message.content
        text = content if isinstance(content, str) else json.dumps(content)
        error = text if message.status == "error" else None
        writer.report_result(message.tool_call_id, text, error)


def _write_functional(
    writer: RunWriter, update: Any, entrypoints: set[str], written: list[str]
) -> None:
    """What an `@entrypoint`'s task returned, or the value the entrypoint returned, into the
    thread: its AI and tool messages (a message, a list of them, `{"messages": [...]}`; the
    entrypoint's may be a string: its reply), each once in a turn."""
    if not isinstance(update, dict):
        return
    for name, value in update.items():
        if name.startswith("__"):
            continue  # `__interrupt__`: asked once the run stops
        for message in _messages_of(value, reply=name in entrypoints):
            key = _key(message)
            if key not in written:
                written.append(key)
                _write_message(writer, message)


def _messages_of(value: Any, *, reply: bool) -> list[BaseMessage]:
    value = as_messages(value)
    if isinstance(value, dict):
        value = value.get("messages")
    if reply and isinstance(value, str) and value:
        return [AIMessage(content=value)]
    items = value if isinstance(value, list) else [value]
    return [m for m in items if isinstance(m, AIMessage | ToolMessage)]


def _key(message: BaseMessage) -> str:
    """A message's identity within a turn: its id; a tool result's call; else what it says."""
    if message.id:
        return str(message.id)
    if isinstance(message, ToolMessage):
        return f"tool:{message.tool_call_id}"
    calls = message.tool_calls if isinstance(message, AIMessage) else []
    return json.dumps([message.type, message.content, calls], sort_keys=True, default=str)


def _response(message: AIMessage) -> ModelResponse:
    """An AI message as the writer takes a model's response: its text first (part 0), then its
    tool calls (parts 1, 2, ...), in the order the node's streamed deltas number them."""
    calls = [
        ToolCallPart(tool_name=call["name"], args=call["args"], tool_call_id=str(call["id"]))
        for call in message.tool_calls
    ]
    return ModelResponse(parts=[TextPart(content=str(message.text)), *calls])
