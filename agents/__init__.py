"""pydantic-ai agents in threads: build one with `thread_capabilities()`, `register` it.

This package is host-side code shared with the workflow sandbox: the agents, their
capabilities and the registry are the worker's own objects in every workflow.
"""

from agents.delegation import delegate, delegated_agents
from agents.mcp_servers import ThreadMCPToolset, mcp_server
from agents.registry import Registered, all_registered, register, registered
from agents.thread import IN_WORKFLOW, ThreadDeps, ThreadEvents, thread_capabilities

__all__ = [
    "IN_WORKFLOW",
    "Registered",
    "ThreadDeps",
    "ThreadEvents",
    "ThreadMCPToolset",
    "all_registered",
    "delegate",
    "delegated_agents",
    "mcp_server",
    "register",
    "registered",
    "thread_capabilities",
]
