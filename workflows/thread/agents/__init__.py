"""Agents that can run in a thread, by name: the built-in ones, then the pydantic-ai
agents registered on the worker (`agents.register`)."""

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from ag_ui_temporal.agents.registry import registered, workflow_agent_class
    from ag_ui_temporal.workflows.contract import INBOX_AGENT

from ag_ui_temporal.workflows.thread.agents.base import Agent
from ag_ui_temporal.workflows.thread.agents.inbox import InboxAgent
from ag_ui_temporal.workflows.thread.agents.llm import AgentFailed, LlmAgent

BUILT_IN: dict[str, type[Agent]] = {INBOX_AGENT: InboxAgent}
"""The library's own agents; every other one is registered (`agents.register`)."""


def agent_for(name: str) -> Agent:
    """The thread's agent; a name nobody serves fails the workflow task (it retries until
    a worker that has the agent picks it up)."""
    if name in BUILT_IN:
        return BUILT_IN[name]()
    entry = registered(name)
    if entry is None:
        raise RuntimeError(f"no agent {name!r} on this worker")
    if entry.workflow_agent:
        agent: type[Agent] = workflow_agent_class(entry.workflow_agent)
        return agent()
    return LlmAgent(name)


__all__ = ["BUILT_IN", "Agent", "AgentFailed", "InboxAgent", "agent_for"]
