"""ag-ui-temporal: durable AG-UI interrupts on Temporal. Everything a user touches is here,
in the layers the package installs in (docs/operations.md#installing):

- `__all__`: what every install imports, the core (`pip install ag-ui-temporal`: Temporal,
  pydantic, the AG-UI types), so `from ag_ui_temporal import *` works on any install:
  - Producers: your own workflow pauses in a chat thread (`ask_in_thread`,
    `offer_in_thread`, `post_to_thread`); `AgUiTemporalPlugin` on your client or worker
    (docs/producers.md).
  - Approval chains: `ChainDefinition`, `ChainStep`, `ChainInput` and `start_chain`.
  - Tools as activities: `ToolCallInput`, `ToolCallOutput` (docs/tools.md).
  - The protocol's types a client of the gateway or a producer reads.
- With the `server` extra (the thread workers, gateway and store, whose agents run on
  pydantic-ai), the door also gives pydantic-ai agents served in threads
  (`thread_capabilities`, `register`, `ask_person`, `delegate`, `mcp_server`;
  docs/agents.md), the activities their tools run (`register_activities`, `WorkerResources`),
  `ThreadWorkerPlugin` that serves your agents and activities on a worker of your own, and
  the `Outbox` that makes an effect happen once per key. Without the extra, each of them
  says what to install.
- LangGraph graphs (`register_graph`, `ask_tool_call`, ...) have a door of their own,
  `ag_ui_temporal.langgraph`, with the `langgraph` extra.

Each name is imported when first used: the workflow sandbox loads this package for every
workflow it starts, and a producer's workflow needs none of the agents' stack.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    # The server extra's names, exported with `as` (they are not in `__all__`).
    from ag_ui_temporal.agents import IN_WORKFLOW as IN_WORKFLOW
    from ag_ui_temporal.agents import ThreadDeps as ThreadDeps
    from ag_ui_temporal.agents import ThreadEvents as ThreadEvents
    from ag_ui_temporal.agents import ThreadMCPToolset as ThreadMCPToolset
    from ag_ui_temporal.agents import WorkerResources as WorkerResources
    from ag_ui_temporal.agents import delegate as delegate
    from ag_ui_temporal.agents import mcp_server as mcp_server
    from ag_ui_temporal.agents import register as register
    from ag_ui_temporal.agents import register_activities as register_activities
    from ag_ui_temporal.agents import registered as registered
    from ag_ui_temporal.agents import thread_capabilities as thread_capabilities
    from ag_ui_temporal.agents.models import resolve_model as resolve_model
    from ag_ui_temporal.agents.thread import ask_person as ask_person
    from ag_ui_temporal.plugin import AgUiTemporalPlugin
    from ag_ui_temporal.store import Outbox as Outbox
    from ag_ui_temporal.worker_plugin import ThreadWorkerPlugin as ThreadWorkerPlugin
    from ag_ui_temporal.workflows.chains.definitions import ChainDefinition, ChainInput, ChainStep
    from ag_ui_temporal.workflows.chains.starting import start_chain
    from ag_ui_temporal.workflows.contract import (
        TASK_QUEUE,
        DecisionVia,
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
_CONTRACT = "ag_ui_temporal.workflows.contract"
_PRODUCERS = "ag_ui_temporal.workflows.producers"
_WHERE = {
    "AgUiTemporalPlugin": "ag_ui_temporal.plugin",
    "ChainDefinition": "ag_ui_temporal.workflows.chains.definitions",
    "ChainInput": "ag_ui_temporal.workflows.chains.definitions",
    "ChainStep": "ag_ui_temporal.workflows.chains.definitions",
    "ChainView": "ag_ui_temporal.workflows.contract.chains",
    "DecisionVia": _CONTRACT,
    "ErrorCode": _CONTRACT,
    "INVALID_OFFER": _PRODUCERS,
    "INVALID_REASON": _PRODUCERS,
    "INVALID_RESPONSE_SCHEMA": _PRODUCERS,
    "IN_WORKFLOW": _AGENTS,
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
    "ToolCallInput": "ag_ui_temporal.workflows.thread.tool_calls",
    "ToolCallOutput": "ag_ui_temporal.workflows.thread.tool_calls",
    "WorkerResources": _AGENTS,
    "ask_in_thread": _PRODUCERS,
    "ask_person": "ag_ui_temporal.agents.thread",
    "delegate": _AGENTS,
    "inbox_thread": "ag_ui_temporal.workflows.contract.chains",
    "mcp_server": _AGENTS,
    "offer_in_thread": _PRODUCERS,
    "post_to_thread": _PRODUCERS,
    "register": _AGENTS,
    "register_activities": _AGENTS,
    "registered": _AGENTS,
    "resolve_model": "ag_ui_temporal.agents.models",
    "start_chain": "ag_ui_temporal.workflows.chains.starting",
    "thread_capabilities": _AGENTS,
    "thread_workflow_id": _CONTRACT,
}
"""The module each public name comes from (tests/test_public_api.py checks that it agrees
with the imports above, which are what type checkers and editors read)."""

EXTRAS = {
    _AGENTS: "server",
    "ag_ui_temporal.agents.models": "server",
    "ag_ui_temporal.agents.thread": "server",
    "ag_ui_temporal.store": "server",
    "ag_ui_temporal.worker_plugin": "server",
}
"""The modules behind names that need an extra installed (`pip install 'ag-ui-temporal[...]'`):
their names are the door's, not `__all__`'s."""

MOVED = dict.fromkeys(
    ("InterruptDefaults", "ToolDecision", "ask_tool_call", "not_answered", "register_graph"),
    "ag_ui_temporal.langgraph",
)
"""Names whose door is a module of their own: importing one from here says where it is."""

DOORS = {"ag_ui_temporal.langgraph": "langgraph"}
"""The extra each of those doors needs."""


def _needs(extra: str) -> str:
    return f"the {extra} extra: pip install 'ag-ui-temporal[{extra}]'"


def __getattr__(name: str) -> Any:
    if name in MOVED:
        door = MOVED[name]
        raise ImportError(f"ag_ui_temporal.{name} is in {door}, with {_needs(DOORS[door])}")
    if name not in _WHERE:
        raise AttributeError(f"module 'ag_ui_temporal' has no attribute {name!r}")
    try:
        module = importlib.import_module(_WHERE[name])
    except ModuleNotFoundError as err:
        extra = EXTRAS.get(_WHERE[name])
        if extra is None or (err.name or "").startswith("ag_ui_temporal"):
            raise
        raise ImportError(f"ag_ui_temporal.{name} needs {_needs(extra)}") from err
    value = getattr(module, name)
    globals()[name] = value  # the next lookup finds it without calling here
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_WHERE})


__all__ = [  # the core: every name here imports on a plain install
    "INVALID_OFFER",
    "INVALID_REASON",
    "INVALID_RESPONSE_SCHEMA",
    "TASK_QUEUE",
    "AgUiTemporalPlugin",
    "ChainDefinition",
    "ChainInput",
    "ChainStep",
    "ChainView",
    "DecisionVia",
    "ErrorCode",
    "InterruptOutcome",
    "InterruptStatus",
    "InterruptView",
    "SettledStatus",
    "ThreadInterrupt",
    "ToolCallInput",
    "ToolCallOutput",
    "ask_in_thread",
    "inbox_thread",
    "offer_in_thread",
    "post_to_thread",
    "start_chain",
    "thread_workflow_id",
]
