"""pydantic-ai agents in threads: build one with `thread_capabilities()`, `register` it.

This package is host-side code shared with the workflow sandbox: the agents, their
capabilities and the registry are the worker's own objects in every workflow.

`mcp_server` and `ThreadMCPToolset` are imported when first named: the MCP client stack
(fastmcp) takes most of a second to import, which the gateway and the CLI never pay. A
worker imports it when it starts (`worker.PRELOADED_MODULES`: pydantic-ai's workflow code
asks for it), never inside a workflow task.
"""

from typing import TYPE_CHECKING, Any

from ag_ui_temporal.agents.delegation import delegate, delegated_agents
from ag_ui_temporal.agents.registry import (
    ActivityFactory,
    Registered,
    WorkerResources,
    all_registered,
    register,
    register_activities,
    registered,
    registered_activities,
)
from ag_ui_temporal.agents.thread import IN_WORKFLOW, ThreadDeps, ThreadEvents, thread_capabilities

if TYPE_CHECKING:
    from ag_ui_temporal.agents.mcp_servers import ThreadMCPToolset, mcp_server


def __getattr__(name: str) -> Any:
    if name in ("mcp_server", "ThreadMCPToolset"):
        from ag_ui_temporal.agents import mcp_servers

        return getattr(mcp_servers, name)
    raise AttributeError(f"module 'agents' has no attribute {name!r}")


__all__ = [
    "IN_WORKFLOW",
    "ActivityFactory",
    "Registered",
    "ThreadDeps",
    "ThreadEvents",
    "ThreadMCPToolset",
    "WorkerResources",
    "all_registered",
    "delegate",
    "delegated_agents",
    "mcp_server",
    "register",
    "register_activities",
    "registered",
    "registered_activities",
    "thread_capabilities",
]
