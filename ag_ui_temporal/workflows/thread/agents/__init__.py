"""Agents that can run in a thread, by name: the built-in ones, then those registered on the
worker: pydantic-ai agents (`agents.register`), LangGraph graphs, OpenAI Agents SDK and Google ADK
agents."""

from typing import Any

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from ag_ui_temporal.agents.registry import (
        Registered,
        RegisteredAdkAgent,
        RegisteredGraph,
        RegisteredOpenAIAgent,
        served,
        workflow_agent_class,
    )
    from ag_ui_temporal.workflows.contract import INBOX_AGENT, AgentNotServed

from ag_ui_temporal.workflows.thread.agents.base import Agent
from ag_ui_temporal.workflows.thread.agents.inbox import InboxAgent
from ag_ui_temporal.workflows.thread.agents.llm import AgentFailed, LlmAgent

BUILT_IN: dict[str, type[Agent]] = {INBOX_AGENT: InboxAgent}
"""The library's own agents; every other one is registered (`agents.register`)."""
HOSTS: dict[type[Any], str] = {
    RegisteredGraph: "ag_ui_temporal.workflows.thread.agents.graph:GraphAgent",
    RegisteredOpenAIAgent: "ag_ui_temporal.workflows.thread.agents.openai_agent:OpenAIAgent",
    RegisteredAdkAgent: "ag_ui_temporal.workflows.thread.agents.adk_agent:AdkAgent",
}
"""Each framework's host, by its registration's type: imported only by a thread that runs
one (the `langgraph`, `openai-agents` and `google-adk` extras are optional, and a worker
without such an agent has none of them)."""


def agent_for(name: str) -> Agent:
    """The thread's agent. A name this worker does not serve (an agent the gateway has, on a
    worker not yet rolled out) fails the workflow task with `AgentNotServed`: Temporal retries
    it until a worker that has the agent takes it, and the gateway's stuck-thread watch, which
    knows the failure by that type, waits for it instead of dropping the run."""
    if name in BUILT_IN:
        return BUILT_IN[name]()
    entry = served(name)
    if entry is None:
        raise AgentNotServed(f"no agent {name!r} on this worker")
    if not isinstance(entry, Registered):
        host: Agent = workflow_agent_class(HOSTS[type(entry)])(name)
        return host
    if entry.workflow_agent:
        agent: type[Agent] = workflow_agent_class(entry.workflow_agent)
        return agent()
    return LlmAgent(name)


__all__ = ["BUILT_IN", "Agent", "AgentFailed", "InboxAgent", "agent_for"]
