"""ag-ui-temporal: durable AG-UI interrupts on Temporal. Everything a user touches is here.

- Producers: your own workflow pauses in a chat thread (`ask_in_thread`, `offer_in_thread`,
  `post_to_thread`); `AgUiTemporalPlugin` on your client or worker (docs/producers.md).
- Agents: pydantic-ai agents served in threads (`thread_capabilities`, `register`,
  `ask_person`, `delegate`, `mcp_server`; docs/agents.md); LangGraph graphs
  (`register_graph`, `ask_tool_call`, with the `langgraph` extra); the activities their
  tools run (`register_activities`, `WorkerResources`).
- The thread worker: `ThreadWorkerPlugin` on a worker of your own serves your agents and
  activities (docs/agents.md).
- Approval chains: `ChainDefinition`, `ChainStep`, `ChainInput` and `start_chain`.
- Tools as activities: `ToolCallInput`, `ToolCallOutput`, and the `Outbox` that makes an
  effect happen once per key (docs/tools.md).
- The protocol's types a client of the gateway or a producer reads.

Each name is imported when first used: the workflow sandbox loads this package for every
workflow it starts, and a producer's workflow needs none of the agents' stack.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ag_ui_temporal.agents import (
        IN_WORKFLOW,
        ThreadDeps,
        ThreadEvents,
        ThreadMCPToolset,
        WorkerResources,
        delegate,
        mcp_server,
        register,
        register_activities,
        registered,
        thread_capabilities,
    )
    from ag_ui_temporal.agents.graphs import (
        InterruptDefaults,
        ToolDecision,
        ask_tool_call,
        not_answered,
        register_graph,
    )
    from ag_ui_temporal.agents.models import resolve_model
    from ag_ui_temporal.agents.thread import ask_person
    from ag_ui_temporal.plugin import AgUiTemporalPlugin
    from ag_ui_temporal.store import Outbox
    from ag_ui_temporal.worker_plugin import ThreadWorkerPlugin
    from ag_ui_temporal.workflows.chains.definitions import ChainDefinition, ChainInput, ChainStep
    from ag_ui_temporal.workflows.chains.starting import start_chain
    from ag_ui_temporal.workflows.contract import (
        TASK_QUEUE,
        ErrorCode,
        InterruptStatus,
        InterruptView,
        SettledStatus,
        thread_workflow_id,
    )
    from ag_ui_temporal.workflows.contract.chains import ChainView, inbox_thread
    from ag_ui_temporal.workflows.producers import (
        INVALID_OFFER,
        INVALID_REASON,
        INVALID_RESPONSE_SCHEMA,
        InterruptOutcome,
        ThreadInterrupt,
        ask_in_thread,
        offer_in_thread,
        post_to_thread,
    )
    from ag_ui_temporal.workflows.thread.tool_calls import ToolCallInput, ToolCallOutput

_AGENTS = "ag_ui_temporal.agents"
_GRAPHS = "ag_ui_temporal.agents.graphs"
_CONTRACT = "ag_ui_temporal.workflows.contract"
_PRODUCERS = "ag_ui_temporal.workflows.producers"
_WHERE = {
    "AgUiTemporalPlugin": "ag_ui_temporal.plugin",
    "ChainDefinition": "ag_ui_temporal.workflows.chains.definitions",
    "ChainInput": "ag_ui_temporal.workflows.chains.definitions",
    "ChainStep": "ag_ui_temporal.workflows.chains.definitions",
    "ChainView": "ag_ui_temporal.workflows.contract.chains",
    "ErrorCode": _CONTRACT,
    "INVALID_OFFER": _PRODUCERS,
    "INVALID_REASON": _PRODUCERS,
    "INVALID_RESPONSE_SCHEMA": _PRODUCERS,
    "IN_WORKFLOW": _AGENTS,
    "InterruptDefaults": _GRAPHS,
    "InterruptOutcome": _PRODUCERS,
    "InterruptStatus": _CONTRACT,
    "InterruptView": _CONTRACT,
    "Outbox": "ag_ui_temporal.store",
    "SettledStatus": _CONTRACT,
    "TASK_QUEUE": _CONTRACT,
    "ThreadDeps": _AGENTS,
    "ThreadEvents": _AGENTS,
    "ThreadInterrupt": _PRODUCERS,
    "ThreadMCPToolset": _AGENTS,
    "ThreadWorkerPlugin": "ag_ui_temporal.worker_plugin",
    "ToolDecision": _GRAPHS,
    "ToolCallInput": "ag_ui_temporal.workflows.thread.tool_calls",
    "ToolCallOutput": "ag_ui_temporal.workflows.thread.tool_calls",
    "WorkerResources": _AGENTS,
    "ask_in_thread": _PRODUCERS,
    "ask_person": "ag_ui_temporal.agents.thread",
    "ask_tool_call": _GRAPHS,
    "delegate": _AGENTS,
    "inbox_thread": "ag_ui_temporal.workflows.contract.chains",
    "mcp_server": _AGENTS,
    "not_answered": _GRAPHS,
    "offer_in_thread": _PRODUCERS,
    "post_to_thread": _PRODUCERS,
    "register": _AGENTS,
    "register_activities": _AGENTS,
    "register_graph": _GRAPHS,
    "registered": _AGENTS,
    "resolve_model": "ag_ui_temporal.agents.models",
    "start_chain": "ag_ui_temporal.workflows.chains.starting",
    "thread_capabilities": _AGENTS,
    "thread_workflow_id": _CONTRACT,
}
"""The module each public name comes from (tests/test_public_api.py checks that it agrees
with the imports above, which are what type checkers and editors read)."""

EXTRAS = {_GRAPHS: "langgraph"}
"""The modules behind names that need an extra installed (`pip install 'ag-ui-temporal[...]'`)."""


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module 'ag_ui_temporal' has no attribute {name!r}")
    try:
        module = importlib.import_module(_WHERE[name])
    except ModuleNotFoundError as err:
        if (extra := EXTRAS.get(_WHERE[name])) is None:
            raise
        wanted = f"pip install 'ag-ui-temporal[{extra}]'"
        raise ImportError(f"ag_ui_temporal.{name} needs the {extra} extra: {wanted}") from err
    value = getattr(module, name)
    globals()[name] = value  # the next lookup finds it without calling here
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])


__all__ = [
    "INVALID_OFFER",
    "INVALID_REASON",
    "INVALID_RESPONSE_SCHEMA",
    "IN_WORKFLOW",
    "TASK_QUEUE",
    "AgUiTemporalPlugin",
    "ChainDefinition",
    "ChainInput",
    "ChainStep",
    "ChainView",
    "ErrorCode",
    "InterruptDefaults",
    "InterruptOutcome",
    "InterruptStatus",
    "InterruptView",
    "Outbox",
    "SettledStatus",
    "ThreadDeps",
    "ThreadEvents",
    "ThreadInterrupt",
    "ThreadMCPToolset",
    "ThreadWorkerPlugin",
    "ToolCallInput",
    "ToolCallOutput",
    "ToolDecision",
    "WorkerResources",
    "ask_in_thread",
    "ask_person",
    "ask_tool_call",
    "delegate",
    "inbox_thread",
    "mcp_server",
    "not_answered",
    "offer_in_thread",
    "post_to_thread",
    "register",
    "register_activities",
    "register_graph",
    "registered",
    "resolve_model",
    "start_chain",
    "thread_capabilities",
    "thread_workflow_id",
]
