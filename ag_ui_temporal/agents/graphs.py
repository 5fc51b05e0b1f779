"""LangGraph graphs in threads: `register_graph` serves a `StateGraph` (or an `@entrypoint`)
at `/agents/{name}`.

A registered graph runs in the thread workflow (`workflows.thread.agents.graph`), its nodes
marked `execute_in: "activity"` as activities through Temporal's `LangGraphPlugin`
(`temporalio-langgraph`), one plugin per graph, built once per process: the plugin wraps the
graph's nodes in place, so it cannot be built twice over the same graph, and every worker of
the process (tests build several) shares it.

What a node asks with LangGraph's `interrupt(value)` becomes an AG-UI interrupt. `value` may
be a string (the message) or a dict with the interrupt's fields (`reason`, `message`,
`responseSchema`, `expiresAt` or `expiresIn`, `metadata`); `interrupt(...,
response_schema=...)` is its schema too, and `register_graph`'s defaults fill the rest.
`ask_tool_call` asks about a model's tool call (a `tool_call` interrupt bound to its id).
The answer comes back as `Command(resume=...)`: the payload as the person sent it, or, for an
interrupt that was cancelled or expired, `{UNANSWERED: "cancelled" | "expired"}`
(`not_answered` reads it).

This module is host code shared with the workflow sandbox (`ag_ui_temporal.agents`); it needs
the `langgraph` extra (`pip install 'ag-ui-temporal[langgraph]'`).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Final, Literal

import langgraph.checkpoint.base as _checkpoint_base
import langgraph.pregel._checkpoint as _pregel_checkpoint
from langchain_core.messages import ToolCall
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph._internal._runnable import RunnableCallable
from langgraph.checkpoint.base.id import UUID as UUID6
from langgraph.checkpoint.base.id import uuid6 as _host_uuid6
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.func import _TaskFunction
from langgraph.graph import StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.pregel import Pregel
from langgraph.types import interrupt
from temporalio.common import RetryPolicy
from temporalio.langgraph import LangGraphPlugin
from temporalio.plugin import SimplePlugin
from temporalio.worker import WorkflowRunner
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner

from ag_ui_temporal.agents.decisions import UNANSWERED as UNANSWERED
from ag_ui_temporal.agents.decisions import ToolDecision as ToolDecision
from ag_ui_temporal.agents.decisions import not_answered as not_answered
from ag_ui_temporal.agents.decisions import tool_decision
from ag_ui_temporal.agents.graph_nodes import GraphNodes, as_messages
from ag_ui_temporal.agents.registry import (
    GraphTool,
    RegisteredGraph,
    add_graph,
    all_registered_graphs,
)
from ag_ui_temporal.durations import parse_duration
from ag_ui_temporal.workflows.contract.standing import checked_offer
from ag_ui_temporal.workflows.contract.tools import filled

PRELOADED: Final = (InMemorySaver,)
"""What a thread's graph needs that registering did not load: loaded here, on the host, not by
the first workflow task that runs a graph (within its deadlock timeout)."""
NODE_TIMEOUT = timedelta(minutes=5)
"""One attempt of a node's activity (a node that calls a model streams for a while)."""
NODE_ATTEMPTS = 4

OnExpiry = Literal["resume", "end"]


@dataclass(frozen=True)
class InterruptDefaults:
    """What an interrupt gets when its `interrupt(value)` does not say."""

    reason: str = "input_required"
    message: str = "The agent needs your input."
    response_schema: dict[str, Any] | None = None
    expires_in: timedelta | None = None
    """None: the interrupt never expires (unless its value says `expiresAt`/`expiresIn`)."""


@dataclass(frozen=True)
class _Options:
    defaults: InterruptDefaults = field(default_factory=InterruptDefaults)
    on_expiry: OnExpiry = "resume"


def register_graph(
    graph: StateGraph[Any, Any, Any, Any] | Pregel[Any, Any, Any, Any],
    *,
    name: str,
    description: str = "",
    approve_with_edits: bool = True,
    defaults: InterruptDefaults | None = None,
    on_expiry: OnExpiry = "resume",
    activity_options: dict[str, Any] | None = None,
    tasks: Sequence[Any] = (),
    task_options: dict[str, dict[str, Any]] | None = None,
    approval_tools: Sequence[BaseTool] = (),
    standing_approvals: timedelta | None = None,
    replace: bool = False,
) -> StateGraph[Any, Any, Any, Any] | Pregel[Any, Any, Any, Any]:
    """Serve `graph` in threads under `name` (`POST /agents/{name}`): a `StateGraph` (or a
    graph compiled from one), or an `@entrypoint` of LangGraph's functional API.

    Each node's metadata says where it runs, as `LangGraphPlugin` requires: `{"execute_in":
    "activity"}` (anything that does I/O: models, tools) or `"workflow"` (deterministic code),
    with any `workflow.execute_activity` option beside it. `activity_options` are the
    defaults of every activity node (5 minutes per attempt, 4 attempts unless given).

    The graph's state holds the conversation in a `messages` channel (`MessagesState`): each
    user message is added to it, and what nodes add to it (AI messages, their tool calls,
    tool messages) is written into the thread as AG-UI events. A compiled graph is taken by
    its builder (the thread compiles it with its own checkpointer).

    `defaults`: the reason, message, schema and expiry of an interrupt whose value does not
    say. `on_expiry`: `"resume"` resumes the graph with `{UNANSWERED: "expired"}` as the
    answer; `"end"` ends its turn with a sentence instead (the graph is not resumed).
    `approve_with_edits`: what `GET /agents/{name}/capabilities` promises; with False,
    `ask_tool_call` offers no `editedArgs`. `approval_tools`: the tools its nodes ask about
    with `ask_tool_call(..., tool=...)`, for `GET /agents/{name}/tools.ts` (and `ag-ui-temporal
    tools`) to write their TanStack AI definitions: a graph's nodes do not say.
    `standing_approvals`: the longest standing decision an `ask_tool_call` approval offers
    (`agents.register`; None: none).

    An `@entrypoint` (an `async def`) runs in the workflow; `tasks` are the `@task`s it calls,
    each an activity `<module>.<function>` unless `task_options[function name]` says
    `{"execute_in": "workflow"}` (with any `workflow.execute_activity` option beside it, over
    `activity_options`). It gets the new user message as `[HumanMessage]` and, as `previous`,
    what it saved last time (`entrypoint.final(value=..., save=...)`); what its tasks return
    that is a message, then the messages of the value it returns, are written into the thread
    (`workflows.thread.agents.graph`)."""
    builder: Any = graph.builder if isinstance(graph, CompiledStateGraph) else graph
    functional = isinstance(builder, Pregel) and not isinstance(builder, CompiledStateGraph)
    if not isinstance(builder, StateGraph) and not functional:
        raise ValueError(
            f"graph {name!r}: register a StateGraph (or a graph compiled from one) or an "
            "@entrypoint"
        )
    if tasks and not functional:
        raise ValueError(f"graph {name!r}: `tasks` are an @entrypoint's; a StateGraph has nodes")
    options = {
        "start_to_close_timeout": NODE_TIMEOUT,
        "retry_policy": RetryPolicy(maximum_attempts=NODE_ATTEMPTS),
        **(activity_options or {}),
    }
    known = all_registered_graphs().get(name)
    if known is not None and known.graph is builder:
        return known.graph  # type: ignore[no-any-return] # imported again: the plugin wrapped it
    if functional:
        plugin = _entrypoint_plugin(name, builder, tasks, task_options or {}, options)
    else:
        _inline_branches(builder)
        plugin = LangGraphPlugin(graphs={name: builder}, default_activity_options=options)
    add_graph(
        RegisteredGraph(
            name=name,
            graph=builder,
            plugin=plugin,
            activities=frozenset(a.__temporal_activity_definition.name for a in plugin.activities),
            description=description,
            approve_with_edits=approve_with_edits,
            options=_Options(defaults or InterruptDefaults(), on_expiry),
            approval_tools=tuple(
                GraphTool(tool.name, tool.description, tool_parameters(tool))
                for tool in approval_tools
            ),
            standing_approvals=checked_offer(standing_approvals),
        ),
        replace=replace,
    )
    return graph if isinstance(graph, StateGraph) else builder


def _entrypoint_plugin(
    name: str,
    entry: Pregel[Any, Any, Any, Any],
    tasks: Sequence[Any],
    task_options: dict[str, dict[str, Any]],
    options: dict[str, Any],
) -> LangGraphPlugin:
    """The plugin of an `@entrypoint`: its `tasks` wrapped as activities (or workflow code),
    each task's result made LangChain messages again in the workflow (the activity's JSON makes
    them dicts, which the entrypoint's code would not expect of a chat model's reply)."""
    bodies = [node.bound for node in entry.nodes.values()]
    if not all(isinstance(b, RunnableCallable) and b.func is None for b in bodies):
        raise ValueError(
            f"graph {name!r}: the @entrypoint must be an `async def` (it runs in workflow code, "
            "which has no threads to run a synchronous one in): `await` its tasks"
        )
    for each in tasks:
        if not isinstance(each, _TaskFunction):
            raise ValueError(f"graph {name!r}: {each!r} is no @task")
        if getattr(each.func, _WRAPPED, False):
            raise ValueError(
                f"graph {name!r}: task {each.func.__name__!r} serves another entrypoint"
            )
    per_task = {
        each.func.__name__: {"execute_in": "activity", **task_options.get(each.func.__name__, {})}
        for each in tasks
    }
    plugin = LangGraphPlugin(
        entrypoints={name: entry},
        tasks=list(tasks),
        activity_options=per_task,
        default_activity_options=options,
    )
    for each in tasks:
        each.func = _messages_back(each.func)
    return plugin


_WRAPPED: Final = "__agui_entrypoint_task__"


def _messages_back(func: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
    async def task(*args: Any, **kwargs: Any) -> Any:
        return as_messages(await func(*args, **kwargs))

    functools.update_wrapper(task, func)
    setattr(task, _WRAPPED, True)
    return task


def _inline_branches(builder: StateGraph[Any, Any, Any, Any]) -> None:
    """A synchronous edge function (`add_conditional_edges`) runs in workflow code, where
    LangGraph would hand it to a thread pool (`run_in_executor`), which a workflow has none of:
    it is called inline instead, as a workflow-side node is (it decides; it does no I/O)."""
    for branches in builder.branches.values():
        for branch in branches.values():
            path = branch.path
            if isinstance(path, RunnableCallable) and path.func is not None:
                path.afunc = _inline(path.func)


def _inline(func: Callable[..., Any]) -> Callable[..., Awaitable[Any]]:
    async def inline(*args: Any, **kwargs: Any) -> Any:
        return func(*args, **kwargs)

    return inline


LANGGRAPH_MODULES: Final = ("langchain", "langchain_core", "langgraph", "langsmith", "numpy")
"""Passed through the sandbox, as `LangGraphPlugin` passes them: the graphs' own objects (the
registry's) run in every thread, and LangGraph's modules are the worker's."""


class GraphsPlugin(SimplePlugin):
    """What a worker needs to run the registered graphs in threads: their nodes' activities
    (each graph's `LangGraphPlugin` made them), LangGraph's sandbox passthroughs, and the
    interceptor of those activities (`graph_nodes.GraphNodes`: messages, tokens).

    `LangGraphPlugin` itself is not added to the worker: its workflow interceptor only keeps
    each run's graphs for `temporalio.langgraph.graph(name)`, which the thread does not call
    (it compiles the registered graph), and in 0.1.0 it asks `workflow.info()` in a `finally`
    that also runs when a cached workflow is evicted, outside the workflow's loop, which
    raises there (for every thread and chain on the worker: threads never complete)."""

    def __init__(self) -> None:
        activities = [
            a for entry in all_registered_graphs().values() for a in entry.plugin.activities
        ]
        super().__init__(
            "ag_ui_temporal.GraphsPlugin",
            activities=activities,
            workflow_runner=_passthrough,
            interceptors=[GraphNodes()],
        )


def _passthrough(runner: WorkflowRunner | None) -> WorkflowRunner:
    if not isinstance(runner, SandboxedWorkflowRunner):
        return runner or SandboxedWorkflowRunner()
    restrictions = runner.restrictions.with_passthrough_modules(*LANGGRAPH_MODULES)
    return dataclasses.replace(runner, restrictions=restrictions)


def ask_tool_call(
    call: ToolCall | dict[str, Any],
    *,
    message: str | None = None,
    tool: BaseTool | None = None,
    expires_in: timedelta | str | None = None,
    edits: bool = True,
) -> ToolDecision:
    """In a node: ask a person about a model's tool call (`AIMessage.tool_calls[i]`).

    The run ends with a `tool_call` interrupt bound to the call's id (TanStack's
    `tool-approval`), whose message is `message` (`{arg}` fields filled from the call's
    arguments; "Approve <tool>?" by default) and whose `editedArgs` follow `tool`'s schema (any
    object without one; none with `edits=False`). It runs as LangGraph's `interrupt()`, so the
    node runs again from its start once the person answers: ask before acting."""
    args = dict(call.get("args") or {})
    value: dict[str, Any] = {
        "reason": "tool_call",
        "toolCallId": call["id"],
        "tool": call["name"],
        "args": args,
        "message": filled(message, args) or f"Approve {call['name']}?",
        "edits": edits,
    }
    if tool is not None:
        value["parameters"] = tool_parameters(tool)
    if expires_in is not None:
        value["expiresIn"] = _seconds(expires_in)
    return tool_decision(interrupt(value), args)


def tool_parameters(tool: BaseTool) -> dict[str, Any]:
    """The JSON Schema of `tool`'s arguments, as `ask_tool_call` announces it for edits."""
    parameters: dict[str, Any] = convert_to_openai_tool(tool)["function"]["parameters"]
    return parameters


class _Clock:
    """Checkpoint ids of one graph invocation in a workflow: uuid6 (they must sort in the order
    LangGraph makes them: its savers take the greatest as the latest), from the workflow's
    clock and a count, never from the host's clock and randomness."""

    def __init__(self, now: datetime, after: str | None) -> None:
        ticks = int(now.timestamp() * 10_000_000) + _UUID_EPOCH
        self.last = max(ticks, UUID6(after).time + 1 if after else 0) - 1

    def next_id(self, clock_seq: int | None) -> UUID6:
        self.last += 1
        fields = (self.last >> 12) << 80 | (self.last & 0x0FFF) << 64
        return UUID6(int=fields | ((clock_seq or 0) & 0x3FFF) << 48, version=6)


_UUID_EPOCH: Final = 0x01B21DD213814000
"""100-ns intervals from the UUID epoch (1582-10-15) to the Unix epoch (as uuid6 counts)."""
_clock: ContextVar[_Clock | None] = ContextVar("agui_graph_clock", default=None)


@contextmanager
def workflow_checkpoint_ids(now: datetime, after: str | None) -> Iterator[None]:
    """While a thread invokes a graph: LangGraph's checkpoint ids come from `_Clock`.

    LangGraph makes them with `uuid6()`: the host's clock and random bits. Task ids, and with
    them the ids of interrupts, derive from them, and an interrupt raised in a node's activity
    keeps the id of the run that recorded it: a replay (a worker restart, a cache eviction)
    would make other ids, and the resume, keyed by id, would reach no interrupt. `after`: the
    newest id the graph already has (the carried checkpoint's)."""
    token = _clock.set(_Clock(now, after))
    try:
        yield
    finally:
        _clock.reset(token)


def _uuid6(node: int | None = None, clock_seq: int | None = None) -> UUID6:
    clock = _clock.get()
    return _host_uuid6(node, clock_seq) if clock is None else clock.next_id(clock_seq)


# Where LangGraph makes checkpoint ids (each module imported the function by name). Outside a
# thread's invocation (`_clock` unset) they are made as LangGraph makes them.
for _module in (_pregel_checkpoint, _checkpoint_base):
    setattr(_module, "uuid6", _uuid6)  # noqa: B010 (not a name the modules export)


def _seconds(value: timedelta | str) -> float:
    if (seconds := duration_seconds(value)) is None:
        raise ValueError(f"expires_in {value!r}: write a timedelta or `30s`, `5m`, `2h`, `2d`")
    return seconds


def duration_seconds(value: Any) -> float | None:
    """A duration as seconds: a number, a `timedelta`, or `30s`, `5m`, `2h`, `2d`; else None."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    parsed = parse_duration(value)
    return parsed.total_seconds() if isinstance(parsed, timedelta) else None
