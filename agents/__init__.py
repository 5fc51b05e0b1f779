"""pydantic-ai agents in threads: build one with `thread_capabilities()`, `register` it.

This package is host-side code shared with the workflow sandbox: the agents, their
capabilities and the registry are the worker's own objects in every workflow.
"""

from agents.registry import Registered, all_registered, register, registered
from agents.thread import IN_WORKFLOW, ThreadDeps, ThreadEvents, thread_capabilities

__all__ = [
    "IN_WORKFLOW",
    "Registered",
    "ThreadDeps",
    "ThreadEvents",
    "all_registered",
    "register",
    "registered",
    "thread_capabilities",
]
