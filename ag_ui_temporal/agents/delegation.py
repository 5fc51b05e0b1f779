"""An agent that hands a task to another agent, whose questions become the thread's.

`delegate(inner, name=..., description=...)` is a tool for an outer agent: it runs
`inner` (in workflow code, so the inner agent's model requests and tools are activities
of its own `TemporalDurability`) and returns the inner agent's answer. When the inner
run ends asking a person (its own deferred tool calls), the tool raises
`ApprovalRequired` carrying the inner run (`SUBAGENT_KEY`): the thread asks about each
inner call as it asks about the outer agent's (`workflows.thread.agents._subagents`), every
interrupt marked with the inner run's `subagentRunId`. Once all are answered, the outer
call is approved with the inner run's history and answers as its `tool_call_metadata`,
and this tool, run again, resumes the inner run from them (or asks again).

The inner agent's text is not written into the thread: the user sees the delegating call,
the inner agent's questions (asked by it, by name) and the answer the outer agent gives.
The worker serves the inner agent's activities (`delegated_agents()`).
"""

from __future__ import annotations

import json
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final

from pydantic import TypeAdapter
from pydantic_ai import (
    Agent,
    AgentRunResult,
    ApprovalRequired,
    DeferredToolRequests,
    DeferredToolResults,
)
from pydantic_ai.durable_exec.temporal import TemporalDurability
from pydantic_ai.messages import ModelMessage, ModelMessagesTypeAdapter, ModelResponse
from pydantic_ai.tools import RunContext, Tool, ToolDefinition
from pydantic_core import to_jsonable_python

from ag_ui_temporal.agents.thread import IN_WORKFLOW, ThreadDeps, writing_to

SUBAGENT_KEY: Final = "agui:subagent"
"""Where the inner run travels: in `ApprovalRequired.metadata` (out) and in the approved
call's `tool_call_metadata` (back)."""

_RESULTS: Final = TypeAdapter(DeferredToolResults)
_DELEGATED: dict[str, Agent[ThreadDeps, Any]] = {}
_HANDED_TO: weakref.WeakKeyDictionary[Callable[..., Any], Agent[ThreadDeps, Any]] = (
    weakref.WeakKeyDictionary()
)
"""The agent each `delegate` tool's function hands over to (`delegated_to`)."""


@dataclass
class InnerRun:
    """An inner run that ended asking a person (what `ApprovalRequired.metadata` carries)."""

    agent: str
    run_id: str
    """The inner run's id: every interrupt about it carries it as `subagentRunId`."""
    history: str
    """The inner run's messages, JSON (`ModelMessagesTypeAdapter`)."""
    requests: DeferredToolRequests
    tools: dict[str, ToolDefinition] = field(default_factory=dict)
    """The inner agent's tool definitions: how to ask about each call."""


@dataclass
class _ToolsOnly:
    """The inner run's `ThreadSink`: it keeps the tool definitions and writes nothing, so
    the inner agent's words never appear in the thread as the outer agent's."""

    tools: dict[str, ToolDefinition] = field(default_factory=dict)

    def tools_offered(self, tool_defs: list[ToolDefinition]) -> None:
        self.tools.update({tool.name: tool for tool in tool_defs})

    def model_request_started(self, messages: list[ModelMessage]) -> None:
        """Nothing: the inner run is not the thread's."""

    def model_responded(self, response: ModelResponse) -> None:
        """Nothing: the inner run is not the thread's."""


def delegate(inner: Agent[ThreadDeps, Any], *, name: str, description: str) -> Tool[ThreadDeps]:
    """A tool `name` that hands its `request` to `inner` and returns what `inner` answers.

    `inner` needs a name (its activities are named after it) and `TemporalDurability`
    (build it with `thread_capabilities()`); the worker serves it as it serves registered
    agents, whether or not it is registered for threads of its own. Several tools may
    delegate to one agent; two agents of one name cannot both be delegated to."""
    if not inner.name:
        raise ValueError("a delegated agent needs a name: Agent(..., name='orders')")
    found: list[object] = []
    inner.root_capability.apply(
        lambda leaf: found.append(leaf) if isinstance(leaf, TemporalDurability) else None
    )
    if not found:
        raise ValueError(
            f"agent {inner.name!r} lacks TemporalDurability: "
            "build it with Agent(..., capabilities=thread_capabilities())"
        )
    if _DELEGATED.setdefault(inner.name, inner) is not inner:  # its activities bear its name
        raise ValueError(f"another agent named {inner.name!r} is delegated to already")

    async def hand_over(ctx: RunContext[ThreadDeps], request: str) -> str:
        return await _run_inner(inner, ctx, request)

    _HANDED_TO[hand_over] = inner
    return Tool(hand_over, name=name, description=description, takes_ctx=True, metadata=IN_WORKFLOW)


def delegated_to(tool: Tool[Any]) -> Agent[ThreadDeps, Any] | None:
    """The agent a `delegate` tool hands over to (whose questions the thread asks), else None."""
    return _HANDED_TO.get(tool.function)


def delegated_agents() -> list[Agent[ThreadDeps, Any]]:
    """Every agent a `delegate` tool runs (the worker serves their activities)."""
    return list(_DELEGATED.values())


async def _run_inner(
    inner: Agent[ThreadDeps, Any], ctx: RunContext[ThreadDeps], request: str
) -> str:
    resumed = _resumed(ctx)
    sink = _ToolsOnly()
    result: AgentRunResult[Any]
    with writing_to(sink):
        if resumed is None:
            result = await inner.run(
                request, deps=ctx.deps, output_type=[str, DeferredToolRequests]
            )
            run_id = result.run_id
        else:
            result = await inner.run(
                None,
                message_history=ModelMessagesTypeAdapter.validate_json(resumed["history"]),
                deferred_tool_results=_RESULTS.validate_python(resumed["results"]),
                deps=ctx.deps,
                output_type=[str, DeferredToolRequests],
            )
            run_id = str(resumed["runId"])
    output = result.output
    if isinstance(output, DeferredToolRequests):
        history = ModelMessagesTypeAdapter.dump_json(result.all_messages()).decode()
        asked = InnerRun(str(inner.name), run_id, history, output, sink.tools)
        raise ApprovalRequired(metadata={SUBAGENT_KEY: asked})
    return output if isinstance(output, str) else json.dumps(to_jsonable_python(output))


def _resumed(ctx: RunContext[ThreadDeps]) -> dict[str, Any] | None:
    """The inner run to resume: what the thread sent back with its approval."""
    metadata = ctx.tool_call_metadata if ctx.tool_call_approved else None
    resumed = metadata.get(SUBAGENT_KEY) if isinstance(metadata, dict) else None
    return resumed if isinstance(resumed, dict) else None


def resumption(
    agent: str, run_id: str, history: str, results: DeferredToolResults
) -> dict[str, Any]:
    """The approved outer call's metadata: the inner run and the person's answers."""
    state = {"agent": agent, "runId": run_id, "history": history}
    return {SUBAGENT_KEY: {**state, "results": to_jsonable_python(results)}}
