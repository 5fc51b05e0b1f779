"""Agents that can run in a thread, by name: the built-in ones, then the pydantic-ai
agents registered on the worker (`agents.register`)."""

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from ag_ui_temporal.agents import registered

from ag_ui_temporal.workflows.thread.agents.assistant import AssistantAgent
from ag_ui_temporal.workflows.thread.agents.base import Agent
from ag_ui_temporal.workflows.thread.agents.inbox import InboxAgent
from ag_ui_temporal.workflows.thread.agents.llm import AgentFailed, LlmAgent

BUILT_IN: dict[str, type[Agent]] = {"assistant": AssistantAgent, "inbox": InboxAgent}


def agent_for(name: str) -> Agent:
    """The thread's agent; a name nobody serves fails the workflow task (it retries until
    a worker that has the agent picks it up)."""
    if name in BUILT_IN:
        return BUILT_IN[name]()
    if registered(name) is None:
        raise RuntimeError(f"no agent {name!r} on this worker")
    return LlmAgent(name)


__all__ = ["BUILT_IN", "Agent", "AgentFailed", "AssistantAgent", "InboxAgent", "agent_for"]
